//! The event's results as a FIDE Tournament Report File (TRF-16): what Swiss-Manager, JaVaFo and
//! bbpPairings read to pair the next round, and what a rating report is made of.
//!
//! Flow: [`write_trf`] takes the event's header, the standings' [`Field`] and its
//! [`Standings`] and writes the header lines, then one `001` line per player by starting rank.
//! Pure. Starting ranks ([`start_ranks`]) are the imported TRF's own numbers when they number
//! every player; otherwise by rating (highest first, unrated last) and then by name, as
//! pairing programs number players.
//!
//! The layout is FIDE's "Data Exchange Format, Tournament Report File" (TRF16, agreed by the
//! FIDE Systems of Pairings and Programs Commission; Handbook, in force from 2016), fields at
//! fixed columns, 1-based and counted in characters:
//! ```text
//!   1-3  001          5-8  starting rank     10 sex (m/w)      11-13 title (g m f c wg wm wf wc)
//!  15-47 name         49-52 FIDE rating     54-56 federation   58-68 FIDE number
//!  70-79 birth date   81-84 points (4.5)    86-89 rank
//!  per round r, from column 92 + 10 (r - 1): 4 columns the opponent's starting rank (0000: none),
//!  a blank, the colour (w, b or -), a blank, the result:
//!    1 win, = draw, 0 loss; + forfeit win, - forfeit loss; U pairing-allocated bye,
//!    F full-point bye, H half-point bye, Z zero-point bye (W D L, unrated games, are not written)
//! ```
//! A game not finished yet keeps its opponent and colour with a blank result; a double forfeit
//! is `-` on both sides. Header lines: `012` event, `022` city, `042`/`052` first and last day
//! (`YYYY/MM/DD`), `062` players, `072` rated players, `092` type, `122` time control.

use std::fmt::Write as _;

use crate::standings::{ByeKind, CellResult, Colour, Field, PlayerIndex, Standings, cells};

/// The event's details a TRF header gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrfHeader {
    pub event: String,
    pub site: Option<String>,
    /// `YYYY-MM-DD`, as the event keeps it.
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    pub time_control: Option<String>,
}

/// Each player's starting rank (1-based), by [`Field::players`] index: the TRF's own numbers
/// when the pairings came from one and they number every player 1 to N; else highest rating
/// first, unrated last, then by name.
pub fn start_ranks(field: &Field) -> Vec<u32> {
    let n = field.players.len();
    let own: Vec<u32> = field.players.iter().filter_map(|p| p.start_rank).collect();
    let mut sorted = own.clone();
    sorted.sort_unstable();
    if own.len() == n && sorted.iter().copied().eq(1..=n as u32) {
        return own;
    }
    let mut order: Vec<PlayerIndex> = (0..field.players.len()).collect();
    order.sort_by(|&a, &b| {
        let (pa, pb) = (&field.players[a], &field.players[b]);
        pb.rating
            .unwrap_or(0)
            .cmp(&pa.rating.unwrap_or(0))
            .then_with(|| pa.name.cmp(&pb.name))
            .then_with(|| pa.fide_id.cmp(&pb.fide_id))
    });
    let mut ranks = vec![0; order.len()];
    for (at, p) in order.into_iter().enumerate() {
        ranks[p] = at as u32 + 1;
    }
    ranks
}

/// TRF-16's title code for a title as a pairing file or a config writes it (`GM` → `g`); a
/// code already (`g`, `wm`) is kept, anything else is left out.
pub fn title_code(title: &str) -> Option<&'static str> {
    const CODES: [(&str, &str); 8] = [
        ("GM", "g"),
        ("IM", "m"),
        ("FM", "f"),
        ("CM", "c"),
        ("WGM", "wg"),
        ("WIM", "wm"),
        ("WFM", "wf"),
        ("WCM", "wc"),
    ];
    let t = title.trim();
    CODES
        .iter()
        .find(|(name, code)| t.eq_ignore_ascii_case(name) || t == *code)
        .map(|(_, code)| *code)
}

/// The result letter of a round (see the module); a pending game's is blank.
fn result_code(result: CellResult) -> char {
    match result {
        CellResult::Win => '1',
        CellResult::Draw => '=',
        CellResult::Loss => '0',
        CellResult::ForfeitWin => '+',
        CellResult::ForfeitLoss | CellResult::DoubleForfeit => '-',
        CellResult::Bye(ByeKind::PairingAllocated) => 'U',
        CellResult::Bye(ByeKind::FullPoint) => 'F',
        CellResult::Bye(ByeKind::HalfPoint) => 'H',
        CellResult::Bye(ByeKind::ZeroPoint) | CellResult::Absent => 'Z',
        CellResult::Pending => ' ',
    }
}

/// A line of fixed columns: text put at 1-based columns, spaces between.
struct Columns(Vec<char>);

impl Columns {
    fn put(&mut self, column: usize, text: &str) {
        for (i, c) in text.chars().enumerate() {
            let at = column - 1 + i;
            if self.0.len() <= at {
                self.0.resize(at + 1, ' ');
            }
            self.0[at] = c;
        }
    }

    fn into_line(self) -> String {
        self.0.into_iter().collect::<String>().trim_end().to_owned()
    }
}

/// `text` cut to `width` characters.
fn fit(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

/// The TRF of the event (see the module), each line ended by a line feed.
pub fn write_trf(header: &TrfHeader, field: &Field, standings: &Standings) -> String {
    let mut out = String::new();
    let mut line = |code: &str, value: &str| {
        let value = crate::text::first_control(value).map_or(value, |_| "");
        if !value.trim().is_empty() {
            let _ = writeln!(out, "{code} {}", value.trim());
        }
    };
    let day = |d: &Option<String>| d.as_deref().map(|d| d.replace('-', "/"));
    line("012", &header.event);
    line("022", header.site.as_deref().unwrap_or_default());
    line("042", &day(&header.start_date).unwrap_or_default());
    line("052", &day(&header.end_date).unwrap_or_default());
    line("062", &field.players.len().to_string());
    let rated = field.players.iter().filter(|p| p.rating.is_some()).count();
    line("072", &rated.to_string());
    line("092", "Individual: Swiss-System");
    line("122", header.time_control.as_deref().unwrap_or_default());

    let ranks = start_ranks(field);
    let rounds = cells(field).unwrap_or_default();
    let mut by_start: Vec<PlayerIndex> = (0..field.players.len()).collect();
    by_start.sort_by_key(|&p| ranks[p]);
    for p in by_start {
        let entrant = &field.players[p];
        let row = standings.rows.iter().find(|r| r.player == p);
        let mut l = Columns(Vec::new());
        l.put(1, "001");
        l.put(5, &format!("{:>4}", ranks[p]));
        if let Some(code) = entrant.title.as_deref().and_then(title_code) {
            l.put(11, &format!("{code:>3}"));
        }
        l.put(15, &fit(&entrant.name, 33));
        if let Some(rating) = entrant.rating.filter(|&r| r <= 9999) {
            l.put(49, &format!("{rating:>4}"));
        }
        if let Some(fed) = &entrant.federation {
            l.put(54, &fit(fed, 3));
        }
        if let Some(id) = entrant.fide_id {
            l.put(58, &format!("{id:>11}"));
        }
        if let Some(row) = row {
            let points = row.points.0;
            l.put(
                81,
                &format!("{:>4}", format!("{}.{}", points / 2, 5 * (points % 2))),
            );
            l.put(86, &format!("{:>4}", row.rank));
        }
        for (r, cell) in rounds.get(p).into_iter().flatten().enumerate() {
            let at = 92 + 10 * r;
            let opponent = cell.opponent.map_or(0, |o| ranks[o]);
            let colour = match cell.colour {
                Some(Colour::White) => 'w',
                Some(Colour::Black) => 'b',
                None => '-',
            };
            l.put(
                at,
                &format!("{opponent:04} {colour} {}", result_code(cell.result)),
            );
        }
        let _ = writeln!(out, "{}", l.into_line());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standings::{
        BoardOutcome, BoardResult, Bye, Entrant, RoundResults, TieBreak, standings,
    };

    fn entrant(name: &str, rating: Option<u32>, title: Option<&str>) -> Entrant {
        Entrant {
            name: name.into(),
            rating,
            title: title.map(Into::into),
            federation: Some("KGZ".into()),
            fide_id: rating.map(|r| 13_000_000 + r),
            start_rank: None,
        }
    }

    /// Characters `from..=to` (1-based) of `line`.
    fn cols(line: &str, from: usize, to: usize) -> String {
        line.chars().skip(from - 1).take(to + 1 - from).collect()
    }

    #[test]
    fn players_are_numbered_by_rating_then_name_and_written_in_columns() {
        let field = Field {
            players: vec![
                entrant("Zhakyp, Aibek", None, None),
                entrant("Asanov, Bakyt", Some(2100), Some("FM")),
                entrant("Abdyraev, Chyngyz", Some(2100), None),
                entrant("Osmonova, Dinara", Some(2350), Some("WGM")),
            ],
            rounds: vec![
                RoundResults {
                    boards: vec![
                        BoardResult {
                            white: 3,
                            black: 2,
                            outcome: BoardOutcome::WhiteWins,
                        },
                        BoardResult {
                            white: 0,
                            black: 1,
                            outcome: BoardOutcome::BlackForfeitWin,
                        },
                    ],
                    byes: vec![],
                },
                RoundResults {
                    boards: vec![BoardResult {
                        white: 1,
                        black: 3,
                        outcome: BoardOutcome::Pending,
                    }],
                    byes: vec![Bye {
                        player: 2,
                        kind: crate::standings::ByeKind::HalfPoint,
                    }],
                },
            ],
        };
        let s = standings(&field, &TieBreak::DEFAULT).unwrap();
        let header = TrfHeader {
            event: "Issyk-Kul Open".into(),
            site: Some("Cholpon-Ata".into()),
            start_date: Some("2026-07-01".into()),
            end_date: None,
            time_control: Some("90+30".into()),
        };
        let trf = write_trf(&header, &field, &s);
        let lines: Vec<&str> = trf.lines().collect();
        assert_eq!(
            lines[..7],
            [
                "012 Issyk-Kul Open",
                "022 Cholpon-Ata",
                "042 2026/07/01",
                "062 4",
                "072 3",
                "092 Individual: Swiss-System",
                "122 90+30"
            ]
        );
        let players: Vec<&str> = lines[7..].to_vec();
        // Osmonova 2350 is 1; Abdyraev and Asanov share 2100 and go by name; Zhakyp is unrated.
        let numbered: Vec<(String, String)> = players
            .iter()
            .map(|l| (cols(l, 5, 8), cols(l, 15, 47).trim_end().to_owned()))
            .collect();
        assert_eq!(
            numbered,
            [
                ("   1".into(), "Osmonova, Dinara".into()),
                ("   2".into(), "Abdyraev, Chyngyz".into()),
                ("   3".into(), "Asanov, Bakyt".into()),
                ("   4".into(), "Zhakyp, Aibek".into()),
            ]
        );
        let osmonova = players[0];
        assert_eq!(cols(osmonova, 1, 3), "001");
        assert_eq!(cols(osmonova, 11, 13), " wg");
        assert_eq!(cols(osmonova, 49, 52), "2350");
        assert_eq!(cols(osmonova, 54, 56), "KGZ");
        assert_eq!(cols(osmonova, 58, 68), "   13002350");
        assert_eq!(cols(osmonova, 81, 84), " 1.0");
        // Tied on 1 with Asanov (a forfeit win) and on Cut-1; Asanov's Buchholz counts the
        // forfeit's dummy at his own 1 (C.07 16.4), Osmonova's the ½ Abdyraev's last-round bye
        // leaves him for her (16.3): Asanov first.
        assert_eq!(cols(osmonova, 86, 89), "   2");
        assert_eq!(cols(players[2], 86, 89), "   1");
        // Round 1: beat number 2 with white; round 2: black against number 3, not finished.
        assert_eq!(cols(osmonova, 92, 99), "0002 w 1");
        assert_eq!(cols(osmonova, 102, 109), "0003 b");
        let abdyraev = players[1];
        assert_eq!(cols(abdyraev, 92, 99), "0001 b 0");
        assert_eq!(cols(abdyraev, 102, 109), "0000 - H");
        assert_eq!(cols(abdyraev, 81, 84), " 0.5");
        let zhakyp = players[3];
        assert_eq!(cols(zhakyp, 49, 52), "    ");
        assert_eq!(cols(zhakyp, 92, 99), "0003 w -");
        assert_eq!(cols(zhakyp, 102, 109), "0000 - Z");
        assert_eq!(cols(players[2], 11, 13), "  f");
        assert_eq!(cols(players[2], 92, 99), "0004 b +");
    }

    #[test]
    fn a_trfs_own_numbers_stand_when_they_number_everyone() {
        let mut field = Field {
            players: vec![
                entrant("Zhakyp, Aibek", None, None),
                entrant("Osmonova, Dinara", Some(2350), None),
                entrant("Asanov, Bakyt", Some(2100), None),
            ],
            rounds: vec![],
        };
        assert_eq!(start_ranks(&field), [3, 1, 2], "by rating, then name");
        for (p, n) in field.players.iter_mut().zip([1, 3, 2]) {
            p.start_rank = Some(n);
        }
        assert_eq!(start_ranks(&field), [1, 3, 2], "the file's");
        field.players[2].start_rank = Some(7);
        assert_eq!(start_ranks(&field), [3, 1, 2], "a gap: numbered anew");
        field.players[2].start_rank = None;
        assert_eq!(start_ranks(&field), [3, 1, 2], "one without: numbered anew");
    }

    #[test]
    fn titles_take_their_codes() {
        assert_eq!(title_code("GM"), Some("g"));
        assert_eq!(title_code("wim"), Some("wm"));
        assert_eq!(title_code("wf"), Some("wf"));
        assert_eq!(title_code("AGM"), None);
    }
}
