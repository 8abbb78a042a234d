//! PGN export (export format, PGN standard section 8): tags, numbered movetext with clock
//! comments, wrapped under 80 columns.
//!
//! Tags, in the shape Lichess broadcasts read (relay notes section 2): the Seven Tag Roster, then
//! `Board`, the players' `WhiteFideId`/`BlackFideId`/`WhiteElo`/`BlackElo` when known, and `Variant`
//! for togyz korgool; a Chess960 game (one with a stored start position) has `Variant
//! "Chess960"`, `SetUp "1"` and `FEN` (its start), as Lichess and LiveChess read it. `Event` and `Site` are the tournament setting the game started under, else
//! `?`; `Date` is the game's or `????.??.??`; `Round` is `r.b` (round and board number) when both
//! are known, `r` with the round alone, else `?`; `Board` is the board's number, else its name.
//! `White`/`Black` are the names set on the game, else the pairing's at (round, board), else
//! `Board n white`/`<board name> white`: never `?`, `unknown` or one character, which Lichess
//! drops. FIDE ids and ratings come from the pairing when its name is the one shown. After each
//! move comes `{ [%clk h:mm:ss] }` with the mover's clock as displayed after the press
//! (whole seconds, rounded down) when it is known; [`ClockFormat`] can make it `hh:mm:ss`, as
//! DGT LiveChess writes it. Irregularities the board showed are comments
//! before the ply they happened before (`{ Irregularity: illegal_move (7.5.1) by white: ... }`),
//! each ending as the arbiter's alerts see it: `; resolved: <how>` once put right on the board,
//! or over all the same (the game ended; play went on past a press without a move, a rotated
//! board or a mis-set clock, which the board never holds open), else `; unresolved`; an illegal
//! move is never in the movetext.
//!
//! Arbiter decisions are `{ Arbiter: ... }` comments: a ruling with its irregularity, a
//! corrected move or a note on a ply after that move, a result and a note on the whole game at the
//! end. The movetext is the live (corrected) record and the result the one set; a forfeit
//! (`+/-`, `-/+`) ends the movetext as `1-0`/`0-1` and a double forfeit (`-/-`) as `*`, the
//! comment saying which. With the history ([`PgnGame::history`]) the retracted moves are
//! comments too (`{ History: ... }`), before the first ply they held. Every PGN the
//! daemon writes goes through [`write_pgn`].

use std::fmt::Write as _;

pub use super::publish::ClockFormat;
use super::publish::{PgnStyle, TimeControlTag, game_identity, utc_date_time};
use crate::{
    arbiter::TimeControl,
    game::Kind,
    store::{Action, Entry, GameRecord, HistoryEntry, PlayerRecord, Recorded, Ruling},
    tracker::Side,
};

/// Lines stay shorter than this (PGN export format: at most 79 characters).
const MAX_LINE: usize = 80;

/// A game to write as PGN: its record, and its retracted moves when an arbiter's export asks
/// for them (`Store::history`).
#[derive(Clone, Copy, Debug)]
pub struct PgnGame<'a> {
    pub record: &'a GameRecord,
    pub history: Option<&'a [HistoryEntry]>,
}

impl<'a> From<&'a GameRecord> for PgnGame<'a> {
    fn from(record: &'a GameRecord) -> PgnGame<'a> {
        PgnGame {
            record,
            history: None,
        }
    }
}

impl<'a> From<&&'a GameRecord> for PgnGame<'a> {
    fn from(record: &&'a GameRecord) -> PgnGame<'a> {
        PgnGame::from(*record)
    }
}

impl<'a> From<(&'a GameRecord, &'a [HistoryEntry])> for PgnGame<'a> {
    fn from((record, history): (&'a GameRecord, &'a [HistoryEntry])) -> PgnGame<'a> {
        PgnGame {
            record,
            history: Some(history),
        }
    }
}

/// The one way games become PGN: each of `games` in `style` (the arbiter's:
/// [`PgnStyle::arbiter`]; a public output's: [`Publication::style`](super::publish::Publication::style)),
/// a blank line between games, each ending with a newline. Every export, relay output and push
/// writes its PGN through here.
pub fn write_pgn<'a, G: Into<PgnGame<'a>>>(
    games: impl IntoIterator<Item = G>,
    style: &PgnStyle,
) -> String {
    join(games.into_iter().map(|g| {
        let g = g.into();
        pgn_with(g.record, g.history, style)
    }))
}

fn pgn_with(game: &GameRecord, history: Option<&[HistoryEntry]>, style: &PgnStyle) -> String {
    let clk = style.clk;
    let mut out = String::new();
    let result = pgn_result(&game.result);
    let date = game.date.as_deref().unwrap_or("????.??.??");
    let known = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
    let event = known(&game.event).unwrap_or_else(|| "?".into());
    let site = known(&game.site).unwrap_or_else(|| "?".into());
    let round = match (game.round, game.board_no) {
        (Some(r), Some(b)) => format!("{r}.{b}"),
        (Some(r), None) => r.to_string(),
        (None, _) => "?".into(),
    };
    let board = game
        .board_no
        .map_or_else(|| game.board_name.clone(), |n| n.to_string());
    let white = player(game, true);
    let black = player(game, false);
    for (name, value) in [
        ("Event", event.as_str()),
        ("Site", &site),
        ("Date", date),
        ("Round", &round),
        ("White", &white.name),
        ("Black", &black.name),
        ("Result", result),
        ("Board", &board),
    ] {
        tag(&mut out, name, value);
    }
    for (name, value) in [
        ("WhiteFideId", white.fide),
        ("BlackFideId", black.fide),
        ("WhiteElo", white.elo),
        ("BlackElo", black.elo),
    ] {
        if let Some(v) = value {
            tag(&mut out, name, &v.to_string());
        }
    }
    for (name, value) in [("WhiteTitle", &white.title), ("BlackTitle", &black.title)] {
        if let Some(v) = value {
            tag(&mut out, name, v);
        }
    }
    tag(&mut out, "GameId", &game_identity(game));
    if let Some(tc) = game
        .time_control
        .as_deref()
        .and_then(|t| t.parse::<TimeControl>().ok())
        .and_then(|tc| match style.time_control {
            TimeControlTag::Standard => Some(tc.pgn_tag()),
            TimeControlTag::Lichess => tc.lichess_tag(),
        })
    {
        tag(&mut out, "TimeControl", &tc);
    }
    // A game recorded live has its date; its start is then a real instant.
    if game.date.is_some() {
        let (date, time) = utc_date_time(game.started_at_ms);
        tag(&mut out, "UTCDate", &date);
        tag(&mut out, "UTCTime", &time);
    }
    if let Some((white, black)) = style.clocks_of(game) {
        tag(&mut out, "WhiteClock", &clk.format(white));
        tag(&mut out, "BlackClock", &clk.format(black));
    }
    if game.kind == Kind::Togyz {
        tag(&mut out, "Variant", "Togyz Korgool");
    }
    if let (Kind::Chess, Some(start)) = (game.kind, &game.start_position) {
        tag(&mut out, "Variant", "Chess960");
        tag(&mut out, "SetUp", "1");
        tag(&mut out, "FEN", start);
    }
    out.push('\n');

    let mut comments = history.map(history_comments).unwrap_or_default();
    let mut decisions = Vec::new();
    if style.internal {
        comments.extend(irregularity_comments(game));
        decisions = decision_comments(game);
    }
    let (at_end, on_plies): (Vec<_>, Vec<_>) =
        decisions.into_iter().partition(|(ply, _)| ply.is_none());
    comments.extend(on_plies.into_iter().filter_map(|(p, c)| Some((p?, c))));
    let comments_before = |ply: u32| comments.iter().filter(move |(p, _)| *p == ply);
    let mut lines = Wrapper::new(&mut out);
    // A black move needs its number at the start and after a comment.
    let mut after_comment = true;
    for (_, text) in comments_before(1) {
        lines.comment(text);
    }
    for mv in &game.moves {
        let white_moved = mv.ply % 2 == 1;
        let number = mv.ply.div_ceil(2);
        // The number stays on the line of its move.
        if white_moved {
            lines.token(&format!("{number}. {}", mv.notation));
        } else if after_comment {
            lines.token(&format!("{number}... {}", mv.notation));
        } else {
            lines.token(&mv.notation);
        }
        let clock = if white_moved {
            mv.clock_white_ms
        } else {
            mv.clock_black_ms
        };
        after_comment = clock.is_some();
        if let Some(ms) = clock {
            lines.token(&format!("{{ [%clk {}] }}", clk.format(ms)));
        }
        for (_, text) in comments_before(mv.ply + 1) {
            lines.comment(text);
            after_comment = true;
        }
    }
    for (_, text) in &at_end {
        lines.comment(text);
    }
    lines.token(result);
    lines.finish();
    out
}

/// White's or black's player: the game's name, else the pairing's, else the board's.
fn player(game: &GameRecord, white: bool) -> PlayerRecord {
    let side = if white { Side::White } else { Side::Black };
    game.player(side).unwrap_or_else(|| {
        let colour = if white { "white" } else { "black" };
        let name = match game.board_no {
            Some(n) => format!("Board {n} {colour}"),
            None => format!("{} {colour}", game.board_name),
        };
        PlayerRecord {
            name,
            ..PlayerRecord::default()
        }
    })
}

/// The game termination marker for a stored result: forfeits as the PGN result they give.
pub fn pgn_result(result: &str) -> &str {
    match result {
        "+/-" => "1-0",
        "-/+" => "0-1",
        "-/-" => "*",
        r => r,
    }
}

/// `(ply it comes before, or None at the end; comment text)` for each arbiter decision.
fn decision_comments(game: &GameRecord) -> Vec<(Option<u32>, String)> {
    let notation = |ply: u32| {
        game.moves
            .iter()
            .find(|m| m.ply == ply)
            .map(|m| m.notation.clone())
    };
    game.decisions()
        .map(|(d, event_ply)| {
            let mut c = String::from("Arbiter:");
            let mut by_author = true;
            match &d.action {
                Action::SetResult {
                    result,
                    reason,
                    previous_result,
                    ..
                } => {
                    let _ = write!(
                        c,
                        " result {result} ({}), was {previous_result}",
                        reason.as_str()
                    );
                }
                Action::Rule {
                    irregularity,
                    ruling,
                } => {
                    let _ = write!(
                        c,
                        " irregularity {irregularity} ruled: {}",
                        ruling.as_str().replace('_', " ")
                    );
                    match ruling {
                        Ruling::PenaltyApplied { description } => {
                            let _ = write!(c, ": {description}");
                        }
                        Ruling::PositionReinstated { ply } => {
                            let _ = write!(c, " (before ply {ply})");
                        }
                        Ruling::MoveStands | Ruling::NoAction => {}
                    }
                }
                Action::CorrectMove {
                    ply,
                    old_notation,
                    new_notation,
                    ..
                } => {
                    let _ = write!(
                        c,
                        " {} corrected from {old_notation} to {new_notation}",
                        crate::words::moveno::in_words(*ply)
                    );
                    if notation(*ply).as_deref() != Some(new_notation.as_str()) {
                        c.push_str(" (since changed)");
                    }
                }
                Action::Resume {
                    after_ply, moves, ..
                } => {
                    let _ = write!(c, " game resumed after ply {after_ply}");
                    if !moves.is_empty() {
                        let _ = write!(c, " with {} from the scoresheets", moves.join(" "));
                    }
                }
                // Not among the decisions that stand (`GameRecord::decisions`), said anyway.
                Action::Undo { decision, .. } => {
                    let _ = write!(c, " decision {decision} undone");
                }
                Action::Note { .. } => {
                    let _ = write!(c, " {}", d.note.as_deref().unwrap_or_default());
                    let _ = write!(c, " ({})", d.author);
                    by_author = false;
                }
            }
            if by_author {
                let _ = write!(c, "; by {}", d.author);
                if let Some(note) = &d.note {
                    let _ = write!(c, ": {note}");
                }
            }
            (event_ply, c)
        })
        .collect()
}

/// `(ply, comment)` for each event that retracted moves: the moves, before the first ply they held.
fn history_comments(history: &[HistoryEntry]) -> Vec<(u32, String)> {
    history
        .iter()
        .filter_map(|h| {
            let first = h.retracted.first()?.ply;
            let by = match &h.event.what {
                Recorded::Decision(d) => format!("arbiter {}", d.action.as_str()),
                _ => h.event.kind.replace('_', " "),
            };
            let mut c = format!("History: retracted by {by} (event {}):", h.event.id);
            for (i, m) in h.retracted.iter().enumerate() {
                let number = m.ply.div_ceil(2);
                if m.ply % 2 == 1 {
                    let _ = write!(c, " {number}. {}", m.notation);
                } else if i == 0 {
                    let _ = write!(c, " {number}...{}", m.notation);
                } else {
                    let _ = write!(c, " {}", m.notation);
                }
            }
            Some((first, c))
        })
        .collect()
}

/// `(ply it happened before, comment text)` for each irregularity the board showed.
fn irregularity_comments(game: &GameRecord) -> Vec<(u32, String)> {
    game.irregularities()
        .iter()
        .filter_map(|i| match &i.entry {
            Entry::Shown {
                shown, resolution, ..
            } if shown.id.is_some() => Some((i, shown, resolution)),
            _ => None,
        })
        .map(|(i, shown, resolution)| {
            let mut c = format!("Irregularity: {}", i.kind.as_str());
            if let Some(article) = &shown.article {
                c.push_str(&format!(" ({article})"));
            }
            if let Some(player) = shown.player {
                c.push_str(&format!(" by {}", player.as_str()));
            }
            if let Some(detail) = &shown.detail {
                c.push_str(&format!(": {detail}"));
            }
            if let Some(ruling) = &shown.ruling {
                c.push_str(&format!("; {ruling}"));
            }
            // Over as the arbiter's alerts say it: put right on the board (with how, when the
            // board said), else the game ended or play went on past an instant kind, which the
            // board never holds open and so never resolves.
            let over = game.over_unresolved(i.kind, i.ply, shown.ruling.is_some());
            match (resolution, over) {
                (Some(r), _) => match r.how.as_deref() {
                    Some(how) => c.push_str(&format!("; resolved: {how}")),
                    None => c.push_str("; resolved"),
                },
                (None, Some(over)) => c.push_str(&format!("; resolved: {}", over.as_str())),
                (None, None) => c.push_str("; unresolved"),
            }
            (i.ply.unwrap_or(1), c)
        })
        .collect()
}

fn join(texts: impl Iterator<Item = String>) -> String {
    let mut out = String::new();
    for (i, text) in texts.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&text);
    }
    out
}

fn tag(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "[{name} \"");
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // A tag value is one line.
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push_str("\"]\n");
}

/// Joins tokens with spaces, breaking lines before they reach [`MAX_LINE`].
struct Wrapper<'a> {
    out: &'a mut String,
    line: usize,
}

impl<'a> Wrapper<'a> {
    fn new(out: &'a mut String) -> Wrapper<'a> {
        Wrapper { out, line: 0 }
    }

    fn token(&mut self, token: &str) {
        let width = token.chars().count();
        if self.line > 0 && self.line + 1 + width >= MAX_LINE {
            self.out.push('\n');
            self.line = 0;
        }
        if self.line > 0 {
            self.out.push(' ');
            self.line += 1;
        }
        self.out.push_str(token);
        self.line += width;
    }

    /// `{ text }`, broken at spaces like tokens; braces inside become parentheses.
    fn comment(&mut self, text: &str) {
        self.token("{");
        for word in text.split_whitespace() {
            self.token(&word.replace('{', "(").replace('}', ")"));
        }
        self.token("}");
    }

    fn finish(self) {
        self.out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format_rounds_down_to_seconds() {
        let clk = |ms| ClockFormat::HMmSs.format(ms);
        assert_eq!(clk(0), "0:00:00");
        assert_eq!(clk(59_999), "0:00:59");
        assert_eq!(clk(5_400_000), "1:30:00");
        assert_eq!(clk(36_061_500), "10:01:01");
        let live = |ms| ClockFormat::HhMmSs.format(ms);
        assert_eq!(live(0), "00:00:00");
        assert_eq!(live(7_140_000), "01:59:00");
        assert_eq!(live(36_061_500), "10:01:01");
    }

    #[test]
    fn tag_values_are_escaped() {
        let mut s = String::new();
        tag(&mut s, "White", "A \"B\" \\ C\nD");
        assert_eq!(s, "[White \"A \\\"B\\\" \\\\ C D\"]\n");
    }

    fn game(
        white: Option<&str>,
        pairing: Option<(&str, &str)>,
        board_no: Option<u32>,
    ) -> GameRecord {
        use crate::{
            sensor::Orientation,
            store::{BoardId, GameId, Pairing},
        };
        GameRecord {
            id: GameId(1),
            board: BoardId(1),
            board_name: "hall-b".into(),
            kind: Kind::Chess,
            orientation: Orientation::Normal,
            start_position: None,
            date: None,
            started_at_ms: 0,
            ended_at_ms: None,
            white: white.map(Into::into),
            black: None,
            result: "*".into(),
            termination: None,
            event: Some("  ".into()),
            site: Some("Astana".into()),
            round: Some(5),
            time_control: None,
            board_no,
            pairing: pairing.map(|(w, b)| Pairing {
                board: 3,
                white: w.into(),
                black: b.into(),
                white_fide: Some(13700001),
                black_fide: Some(13700002),
                white_elo: Some(2500),
                black_elo: None,
                ..Pairing::new(3, w, b)
            }),
            moves: Vec::new(),
            events: Vec::new(),
        }
    }

    fn tags(g: &GameRecord) -> Vec<String> {
        write_pgn([g], &PgnStyle::arbiter())
            .lines()
            .take_while(|l| l.starts_with('['))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn players_come_from_the_game_then_the_pairing_then_the_board() {
        let t = tags(&game(None, Some(("Abenov, A", "Bekova, D")), Some(3)));
        assert_eq!(
            t,
            [
                "[Event \"?\"]",
                "[Site \"Astana\"]",
                "[Date \"????.??.??\"]",
                "[Round \"5.3\"]",
                "[White \"Abenov, A\"]",
                "[Black \"Bekova, D\"]",
                "[Result \"*\"]",
                "[Board \"3\"]",
                "[WhiteFideId \"13700001\"]",
                "[BlackFideId \"13700002\"]",
                "[WhiteElo \"2500\"]",
                "[GameId \"r5b3\"]",
            ]
        );
        // A name set on the game wins; the pairing's ids then belong to someone else.
        let t = tags(&game(Some("Chen, L"), Some(("Abenov, A", "?")), Some(3)));
        assert!(t.contains(&"[White \"Chen, L\"]".to_owned()), "{t:?}");
        assert!(t.contains(&"[Black \"Board 3 black\"]".to_owned()), "{t:?}");
        assert!(
            !t.iter()
                .any(|l| l.starts_with("[WhiteFideId") || l.starts_with("[BlackFideId"))
        );
        // Names Lichess drops are never written.
        for bad in ["?", "X", " ", "Unknown"] {
            let t = tags(&game(Some(bad), None, None));
            assert!(
                t.contains(&"[White \"hall-b white\"]".to_owned()),
                "{bad}: {t:?}"
            );
            assert!(t.contains(&"[Round \"5\"]".to_owned()));
            assert!(t.contains(&"[Board \"hall-b\"]".to_owned()));
        }
    }

    #[test]
    fn long_tokens_never_exceed_the_line() {
        let mut s = String::new();
        let mut w = Wrapper::new(&mut s);
        for _ in 0..100 {
            w.token("{ [%clk 1:30:00] }");
            w.token("Nxe5+");
        }
        w.finish();
        assert!(s.lines().all(|l| l.len() < MAX_LINE && !l.starts_with(' ')));
        assert_eq!(s.split_whitespace().count(), 100 * 5);
    }
}
