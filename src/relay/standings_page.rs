//! The standings as pages: the public `/standings` (in the page's language, as the delay lets
//! spectators see the results) and the table the arbiter's console shows with its TRF link.
//!
//! Flow: the server ranks the event ([`crate::standings`]) from the games its audience may see
//! and hands the [`Standings`] here; [`table_html`] writes the table (rank, player, points, each
//! tie-break by FIDE's abbreviation with its name in the language, then the crosstable: per
//! round the opponent's rank, the colour as ○ or ● and the result), [`public_html`] wraps it in
//! a page. Pure. Names are isolated (`<bdi>`); numbers and crosstable cells run left to right
//! on a right-to-left page.

use std::fmt::Write as _;

use crate::{
    lang::Lang,
    relay::page::{STYLE, language_switch},
    standings::{ByeKind, CellResult, Colour, CrossCell, Standings, TieBreak},
    store::{PlayerRecord, RoundInfo},
    text::escape_html as escape,
};

/// The key of a tie-break's name in the tables' `standings` section.
fn tiebreak_key(t: TieBreak) -> &'static str {
    match t {
        TieBreak::Buchholz => "standings.buchholz",
        TieBreak::BuchholzCut1 => "standings.buchholz_cut1",
        TieBreak::SonnebornBerger => "standings.sonneborn_berger",
        TieBreak::DirectEncounter => "standings.direct_encounter",
        TieBreak::Wins => "standings.wins",
    }
}

/// One crosstable cell's text and its words for a title (`3○1`: against number 3 with white,
/// won; `+`/`−` a forfeit; a bye or an absence in words).
fn cell_html(c: &CrossCell, lang: Lang) -> String {
    let result = match c.result {
        CellResult::Win => "1",
        CellResult::Draw => "½",
        CellResult::Loss => "0",
        CellResult::ForfeitWin => "+",
        CellResult::ForfeitLoss | CellResult::DoubleForfeit => "−",
        CellResult::Pending => "…",
        CellResult::Bye(kind) => {
            let points = match kind {
                ByeKind::PairingAllocated | ByeKind::FullPoint => "1",
                ByeKind::HalfPoint => "½",
                ByeKind::ZeroPoint => "0",
            };
            return format!(
                r#"<td class="bye">{} <span dir="ltr">{points}</span></td>"#,
                escape(lang.text("standings.bye"))
            );
        }
        CellResult::Absent => {
            return format!(
                r#"<td class="absent">{}</td>"#,
                escape(lang.text("standings.absent"))
            );
        }
    };
    let colour = match c.colour {
        Some(Colour::White) => "○",
        Some(Colour::Black) => "●",
        None => "",
    };
    let opponent = c.opponent_rank.map(|r| r.to_string()).unwrap_or_default();
    let title = if c.result == CellResult::Pending {
        format!(r#" title="{}""#, escape(lang.text("standings.pending")))
    } else {
        String::new()
    };
    format!(r#"<td dir="ltr"{title}>{opponent}{colour}{result}</td>"#)
}

/// The table: rank, player, points, the tie-breaks, the crosstable.
pub fn table_html(s: &Standings, lang: Lang) -> String {
    if s.rows.is_empty() {
        return format!(
            r#"<p class="none">{}</p>"#,
            escape(lang.text("standings.none"))
        );
    }
    let mut out = format!(
        r#"<table class="standings"><thead><tr><th scope="col">{}</th><th scope="col">{}</th><th scope="col">{}</th>"#,
        escape(lang.text("standings.rank")),
        escape(lang.text("standings.player")),
        escape(lang.text("standings.points")),
    );
    for t in &s.tiebreaks {
        let _ = write!(
            out,
            r#"<th scope="col"><abbr title="{}">{}</abbr></th>"#,
            escape(lang.text(tiebreak_key(*t))),
            t.abbreviation()
        );
    }
    for r in 1..=s.rounds {
        let _ = write!(
            out,
            r#"<th scope="col"><abbr title="{}">{r}</abbr></th>"#,
            escape(&lang.fill("page.round", &[("round", &r.to_string())]))
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in &s.rows {
        let player = PlayerRecord {
            name: row.entrant.name.clone(),
            fide: row.entrant.fide_id,
            elo: row.entrant.rating,
            title: row.entrant.title.clone(),
            fed: row.entrant.federation.clone(),
        };
        let _ = write!(
            out,
            r#"<tr><td dir="ltr">{}</td><th scope="row">{}</th><td dir="ltr">{}</td>"#,
            row.rank,
            player.label_html(),
            row.points
        );
        for v in &row.tiebreaks {
            let _ = write!(
                out,
                r#"<td dir="ltr">{}</td>"#,
                v.map_or("–".to_owned(), |v| v.to_string())
            );
        }
        for c in &row.rounds {
            out.push_str(&cell_html(c, lang));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// The heading: "Standings after round N" (after the last round paired), or "Standings".
pub fn heading(s: &Standings, lang: Lang) -> String {
    if s.rounds == 0 {
        lang.text("standings.title").to_owned()
    } else {
        lang.fill("standings.after_round", &[("round", &s.rounds.to_string())])
    }
}

/// Table styles both pages add.
pub const TABLE_STYLE: &str = "table.standings{border-collapse:collapse;margin:1em;font-variant-numeric:tabular-nums}\
table.standings th,table.standings td{border:1px solid #ccc;padding:.25em .5em;text-align:center}\
table.standings th[scope=row]{text-align:start;font-weight:normal}";

/// The public page: the event's name, the heading, the table and a link back to the boards.
pub fn public_html(s: &Standings, event: Option<&RoundInfo>, lang: Lang) -> String {
    let heading = heading(s, lang);
    let event = event
        .filter(|e| !e.event.trim().is_empty() && e.event != "?")
        .map(|e| format!(r#"<p class="event"><bdi>{}</bdi></p>"#, escape(&e.event)))
        .unwrap_or_default();
    format!(
        r#"<!doctype html>
<html lang="{code}" dir="{dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><style>{STYLE}{TABLE_STYLE}</style></head>
<body data-page="standings"><header><h1>{title}</h1>{event}{langs}</header>
<nav class="board-links"><a href="/">{all}</a> · <a href="/standings.json">JSON</a></nav>
<main class="standings">{table}</main>
</body></html>
"#,
        code = lang.code(),
        dir = lang.dir(),
        title = escape(&heading),
        langs = language_switch("/standings", lang),
        all = escape(lang.text("page.all_boards")),
        table = table_html(s, lang),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standings::{
        BoardOutcome, BoardResult, Bye, Entrant, Field, RoundResults, standings,
    };

    fn two_rounds() -> Standings {
        let mut players: Vec<Entrant> = ["Abenov, Arman", "پژمان گلچین", "Chen, Wei"]
            .iter()
            .map(|n| Entrant::named(n))
            .collect();
        players[0].title = Some("GM".into());
        players[0].rating = Some(2610);
        let field = Field {
            players,
            rounds: vec![
                RoundResults {
                    boards: vec![BoardResult {
                        white: 0,
                        black: 1,
                        outcome: BoardOutcome::WhiteWins,
                    }],
                    byes: vec![Bye {
                        player: 2,
                        kind: ByeKind::PairingAllocated,
                    }],
                },
                RoundResults {
                    boards: vec![BoardResult {
                        white: 2,
                        black: 0,
                        outcome: BoardOutcome::Pending,
                    }],
                    byes: vec![],
                },
            ],
        };
        standings(&field, &TieBreak::DEFAULT).unwrap()
    }

    #[test]
    fn every_language_heads_its_table_and_isolates_names() {
        let s = two_rounds();
        for lang in Lang::ALL {
            let html = public_html(&s, None, lang);
            assert!(html.contains(&format!(r#"dir="{}""#, lang.dir())), "{html}");
            assert!(
                html.contains(&escape(
                    &lang.fill("standings.after_round", &[("round", "2")])
                )),
                "{lang:?}"
            );
            for key in [
                "standings.rank",
                "standings.player",
                "standings.points",
                "standings.bye",
                "standings.absent",
                "standings.pending",
            ] {
                assert!(html.contains(&escape(lang.text(key))), "{lang:?} {key}");
            }
            assert!(html.contains("<bdi>پژمان گلچین</bdi>"), "{html}");
            assert!(html.contains("<bdi>GM</bdi> <bdi>Abenov, Arman</bdi> (2610)"));
        }
        let html = public_html(&s, None, Lang::En);
        // Chen leads on Buchholz (the bye's dummy at his own 1: C.07 16.4); Abenov, second,
        // beat number 3 with white and is playing number 1 with black.
        assert!(html.contains(r#"<td dir="ltr">3○1</td>"#), "{html}");
        assert!(
            html.contains(r#"<td dir="ltr" title="not finished yet">1●…</td>"#),
            "{html}"
        );
        assert!(html.contains(r#"<td class="bye">bye <span dir="ltr">1</span></td>"#));
        assert!(html.contains(r#"<td class="absent">absent</td>"#));
        assert!(html.contains(r#"<abbr title="Sonneborn-Berger">SB</abbr>"#));
    }
}
