//! `arbiter history` and the console's history in words, in the arbiter's language: one line
//! per event, for the arbiter to read.
//!
//! Flow: [`in_words`] walks a game's history (its events; the moves are the record) in the
//! order recorded and writes each event as
//! `2026-12-02 15:04:12  board 12 (game 7)  move 34 black  result set to 0-1 (resignation,
//! was *) by Chief: "resigned"`: the local time (the stream's own clock for a replayed
//! capture, whose times start at 0), the board and game, the move it happened at (the move
//! a ply is, or the move to be played next), what happened and by whom. Moves the event
//! withdrew follow on an indented line, and a control character stored before they were
//! refused shows escaped (`\u{1b}`). Nothing here reads the store.

use jiff::tz::TimeZone;
use serde_json::Value;

use super::{
    claim_text,
    moveno::{MoveNo, numbered},
    ruling_text,
};
use crate::{
    Millis,
    game::Kind,
    lang::{
        Date, Lang, local_time,
        record::{kind_title, reason_text, termination_text},
    },
    phrase::WALL_CLOCK_MS,
    store::{Action, Audit, GameRecord, HistoryEntry, Recorded, Shown, worded},
    text::escape_controls,
    tracker::Side,
};

/// The machine's local time zone (`TZ`, else `/etc/localtime`); UTC if neither reads.
pub fn local_zone() -> TimeZone {
    crate::lang::local_zone().clone()
}

/// `capture +0:01:23.450`: a moment on a stream's own clock.
fn capture_time(at_ms: Millis) -> String {
    format!(
        "capture +{}.{:03}",
        clock(at_ms / 1000 * 1000),
        at_ms % 1000
    )
}

/// `2026-12-02 15:04:12` in `zone`, or `capture +0:01:23.450` for a stream's own clock.
pub fn when(at_ms: Millis, zone: &TimeZone) -> String {
    local_time(at_ms, zone).map_or_else(
        || capture_time(at_ms),
        |t| t.strftime("%Y-%m-%d %H:%M:%S").to_string(),
    )
}

/// [`when`] with the day in `lang`'s form (`4 декабря 2026 г. 15:04:12`, Persian in its
/// calendar), for a page; a stream's own clock as [`when`] writes it.
pub fn when_in(at_ms: Millis, zone: &TimeZone, lang: Lang) -> String {
    let Some(local) = local_time(at_ms, zone) else {
        return capture_time(at_ms);
    };
    let day = Date::new(
        i32::from(local.year()),
        local.month().unsigned_abs(),
        local.day().unsigned_abs(),
    )
    .map_or_else(|_| local.strftime("%Y-%m-%d").to_string(), |d| lang.date(d));
    format!("{day} {}", local.strftime("%H:%M:%S"))
}

/// `1:02:03`.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The game's history in `lang`, one line per event (and one per event's withdrawn moves).
pub fn in_words(
    game: &GameRecord,
    entries: &[HistoryEntry],
    zone: &TimeZone,
    lang: Lang,
) -> Vec<String> {
    let board = match game.board_no {
        Some(n) => n.to_string(),
        None => format!("{:?}", game.board_name),
    };
    let head = lang.fill(
        "history.board_game",
        &[("board", &board), ("game", &game.id.0.to_string())],
    );
    let words = Words {
        lang,
        kind: game.kind,
    };
    let mut lines = Vec::with_capacity(entries.len());
    for entry in entries {
        let e = &entry.event;
        let at = match &e.what {
            Recorded::Decision(d) => match d.action {
                Action::CorrectMove { ply, .. } | Action::Note { ply: Some(ply) } => ply,
                _ => e.ply.unwrap_or_else(|| plies_at(game, e.at_ms) + 1),
            },
            _ => e.ply.unwrap_or_else(|| plies_at(game, e.at_ms) + 1),
        }
        .max(1);
        let what = words.what(&e.kind, &e.detail, &e.what);
        // An author or a note written before control characters were refused (an old
        // database) shows them escaped: no line can be forged on the arbiter's terminal.
        let what = escape_controls(&what);
        lines.push(format!(
            "{}  {head}  {:<14} {what}",
            when(e.at_ms, zone),
            words.move_words(at)
        ));
        if !entry.retracted.is_empty() {
            let moves: Vec<String> = entry
                .retracted
                .iter()
                .map(|m| numbered(m.ply, &m.notation))
                .collect();
            lines.push(format!(
                "    {}",
                lang.fill("history.withdrawn", &[("moves", &moves.join(" "))])
            ));
        }
    }
    lines
}

/// How many plies of the record stood at `at_ms`: the live moves made by then, when the
/// moves and the event are on the same clock (a live board's: the epoch's); else all of them
/// (a replayed capture's moves are on its own clock).
fn plies_at(game: &GameRecord, at_ms: Millis) -> u32 {
    let same_clock = at_ms >= WALL_CLOCK_MS && game.moves.iter().all(|m| m.at_ms >= WALL_CLOCK_MS);
    let n = if same_clock {
        game.moves.iter().filter(|m| m.at_ms <= at_ms).count()
    } else {
        game.moves.len()
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn text<'a>(detail: &'a Value, key: &str) -> Option<&'a str> {
    detail.get(key).and_then(Value::as_str)
}

fn number(detail: &Value, key: &str) -> Option<u32> {
    detail
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// A stored name in words: `clock_without_move` → `clock without move`.
fn kind_words(kind: &str) -> String {
    kind.replace('_', " ")
}

/// The history's words in one language, for a game of one kind.
struct Words {
    lang: Lang,
    kind: Kind,
}

impl Words {
    /// `move 34 black`: the move a ply is.
    fn move_words(&self, ply: u32) -> String {
        let n = MoveNo::of_ply(ply);
        self.lang.fill(
            "history.move",
            &[("move", &n.number.to_string()), ("side", self.side(n.side))],
        )
    }

    /// A side as the history names it in the game's own words (`white`; togyz korgool's
    /// `ақ` in Kazakh, not chess's `ақтар`), or a player when none is known.
    fn side(&self, side: Option<Side>) -> &'static str {
        self.lang.text(match (side, self.kind) {
            (Some(Side::White), Kind::Chess) => "history.white",
            (Some(Side::Black), Kind::Chess) => "history.black",
            (Some(Side::White), Kind::Togyz) => "history.togyz_white",
            (Some(Side::Black), Kind::Togyz) => "history.togyz_black",
            (None, _) => "remark.a_player",
        })
    }

    /// What an event says, in words.
    fn what(&self, kind: &str, detail: &Value, recorded: &Recorded) -> String {
        let lang = self.lang;
        match recorded {
            Recorded::Decision(d) => {
                let mut out = match &d.action {
                    Action::SetResult {
                        result,
                        reason,
                        previous_result,
                        ..
                    } => lang.fill(
                        "history.result_set",
                        &[
                            ("result", result),
                            ("reason", &reason_text(reason.as_str(), lang)),
                            ("previous", previous_result),
                        ],
                    ),
                    Action::Rule {
                        irregularity,
                        ruling,
                    } => lang.fill(
                        "history.ruled",
                        &[
                            ("irregularity", &irregularity.to_string()),
                            ("ruling", &ruling_text(ruling, self.kind, lang)),
                        ],
                    ),
                    Action::CorrectMove {
                        ply,
                        old_notation,
                        new_notation,
                        retracted,
                        ..
                    } => lang.fill(
                        "history.corrected",
                        &[
                            ("old", &numbered(*ply, old_notation)),
                            ("new", new_notation),
                            ("count", &retracted.to_string()),
                        ],
                    ),
                    Action::Note { .. } => lang.text("history.note").to_owned(),
                    Action::Undo {
                        decision,
                        result,
                        reopened,
                        retracted,
                        restored,
                        ..
                    } => {
                        let mut s =
                            lang.fill("history.undone", &[("decision", &decision.to_string())]);
                        if let Some(result) = result {
                            s.push_str(lang.text("remark.then"));
                            s.push_str(&lang.fill("history.undone_result", &[("result", result)]));
                        }
                        if *reopened {
                            s.push_str(lang.text("remark.then"));
                            s.push_str(lang.text("history.undone_reopened"));
                        }
                        if retracted + restored > 0 {
                            s.push_str(lang.text("remark.then"));
                            s.push_str(&lang.fill(
                                "history.undone_moves",
                                &[
                                    ("withdrawn", &retracted.to_string()),
                                    ("restored", &restored.to_string()),
                                ],
                            ));
                        }
                        s
                    }
                    Action::Resume {
                        after_ply,
                        moves,
                        retracted,
                    } => {
                        let mut s = match after_ply {
                            0 => lang.text("history.resumed_start").to_owned(),
                            p => lang
                                .fill("history.resumed_after", &[("move", &self.move_words(*p))]),
                        };
                        if !moves.is_empty() {
                            s.push(' ');
                            s.push_str(
                                &lang.fill("history.resumed_with", &[("moves", &moves.join(" "))]),
                            );
                        }
                        if *retracted > 0 {
                            s.push(' ');
                            s.push_str(&lang.fill(
                                "history.resumed_withdrawn",
                                &[("count", &retracted.to_string())],
                            ));
                        }
                        s
                    }
                };
                out.push(' ');
                out.push_str(&lang.fill("history.by", &[("author", &d.author)]));
                if let Some(note) = &d.note {
                    out.push_str(&format!(": {note:?}"));
                }
                out
            }
            Recorded::Irregularity(shown) => self.irregularity(kind, detail, shown),
            Recorded::Audit(Audit::Revision { old, new }) => lang.fill(
                "history.revised",
                &[
                    ("old", &numbered(old.ply, &old.notation)),
                    ("new", &new.notation),
                ],
            ),
            Recorded::Audit(Audit::Takeback { from_ply, to_ply }) => match to_ply {
                0 => lang.fill(
                    "history.takeback_start",
                    &[("plies", &from_ply.to_string())],
                ),
                p => lang.fill(
                    "history.takeback",
                    &[
                        ("move", &self.move_words(*p)),
                        ("plies", &from_ply.saturating_sub(*p).to_string()),
                    ],
                ),
            },
            Recorded::Resolved {
                id,
                how,
                how_phrase,
            } => {
                let id = id.map_or_else(|| "?".to_owned(), |i| i.to_string());
                match worded(how_phrase, how, &lang.said(self.kind)) {
                    Some(how) => lang.fill("history.resolved_how", &[("id", &id), ("how", &how)]),
                    None => lang.fill("history.resolved", &[("id", &id)]),
                }
            }
            Recorded::FlagFall(f) => {
                let mut s = lang.fill("history.flag_fell", &[("side", self.side(f.side))]);
                if let Some(p) = &f.proposed {
                    s.push_str(": ");
                    s.push_str(&lang.fill("history.proposed", &[("result", p)]));
                }
                if let Some(a) = &f.article {
                    s.push(' ');
                    s.push_str(&lang.fill("history.article", &[("article", a)]));
                }
                if let Some(n) = worded(&f.note_phrase, &f.note, &lang.said(self.kind)) {
                    s.push_str(&format!("; {n}"));
                }
                s
            }
            Recorded::Claimable {
                claim,
                claim_phrase,
                article,
            } => {
                let claim = claim_text(claim_phrase, claim.as_deref(), self.kind, lang)
                    .unwrap_or_else(|| lang.text("history.a_draw").to_owned());
                let mut s = lang.fill("history.claimable", &[("claim", &claim)]);
                if let Some(a) = article {
                    s.push(' ');
                    s.push_str(&lang.fill("history.article", &[("article", a)]));
                }
                s
            }
            Recorded::ResultGesture { proposed } => lang.fill(
                "history.gesture",
                &[(
                    "result",
                    proposed
                        .as_deref()
                        .unwrap_or_else(|| lang.text("history.a_result")),
                )],
            ),
            Recorded::Other => self.other(kind, detail),
        }
    }

    fn irregularity(&self, kind: &str, detail: &Value, shown: &Shown) -> String {
        let lang = self.lang;
        let kind_name = kind_title(kind, self.kind, lang);
        let mut s = match shown.id {
            Some(id) => lang.fill(
                "history.irregularity",
                &[("id", &id.to_string()), ("kind", &kind_name)],
            ),
            // A gap's recovery has no number.
            None => match (number(detail, "from_ply"), number(detail, "to_ply")) {
                (Some(from), Some(to)) => lang.fill(
                    "history.recovered",
                    &[
                        ("kind", &kind_name),
                        ("from", &from.to_string()),
                        ("to", &to.to_string()),
                    ],
                ),
                _ => kind_name,
            },
        };
        if let Some(side) = shown.player {
            s.push(' ');
            s.push_str(&lang.fill("history.by", &[("author", self.side(Some(side)))]));
        }
        let words = lang.said(self.kind);
        if let Some(d) = shown.detail_in(&words).filter(|d| !d.is_empty()) {
            s.push_str(&format!(": {d}"));
        }
        if let Some(a) = &shown.article {
            s.push(' ');
            s.push_str(&lang.fill("history.article", &[("article", a)]));
        }
        if let Some(r) = shown.ruling_in(&words) {
            s.push_str(&format!("; {r}"));
        }
        s
    }

    /// Events the typed record keeps no value for: a game's start and end, a reorientation;
    /// anything else as stored.
    fn other(&self, kind: &str, detail: &Value) -> String {
        let lang = self.lang;
        match kind {
            "game_started" => match text(detail, "start") {
                Some(fen) => lang.fill("history.game_started_from", &[("fen", fen)]),
                None => lang.text("history.game_started").to_owned(),
            },
            "game_ended" => lang.fill(
                "history.game_ended",
                &[
                    ("result", text(detail, "result").unwrap_or("?")),
                    (
                        "termination",
                        &text(detail, "termination")
                            .map_or("?".to_owned(), |t| termination_text(t, lang)),
                    ),
                ],
            ),
            "reoriented" => lang.fill(
                "history.board_read",
                &[(
                    "orientation",
                    &text(detail, "orientation").map_or("?".to_owned(), kind_words),
                )],
            ),
            _ => format!("{} {detail}", kind_words(kind)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_local_or_the_streams_own() {
        let almaty = TimeZone::get("Asia/Almaty").unwrap_or_else(|_| {
            TimeZone::posix("<+05>-5").expect("a POSIX zone reads without the tzdb")
        });
        // 2026-12-02 10:04:12.345 UTC
        assert_eq!(when(1_796_205_852_345, &almaty), "2026-12-02 15:04:12");
        assert_eq!(
            when(1_796_205_852_345, &TimeZone::UTC),
            "2026-12-02 10:04:12"
        );
        assert_eq!(when(83_450, &TimeZone::UTC), "capture +0:01:23.450");
        assert_eq!(
            when_in(1_796_205_852_345, &almaty, Lang::Ru),
            format!("{} 15:04:12", Lang::Ru.stored_date("2026.12.02"))
        );
        assert_eq!(
            when_in(83_450, &TimeZone::UTC, Lang::Fa),
            "capture +0:01:23.450"
        );
        assert_eq!(clock(3_723_000), "1:02:03");
    }

    #[test]
    fn a_side_is_named_in_its_games_own_words() {
        for lang in Lang::ALL {
            let words = |kind| Words { lang, kind };
            // Chess's sides, lower case as the history runs them into its sentences.
            assert_eq!(
                words(Kind::Chess).side(Some(Side::White)),
                lang.text("history.white")
            );
            // Togyz korgool's: its own words, never chess's where they differ.
            for (side, i) in [(Side::White, 0), (Side::Black, 1)] {
                let togyz = words(Kind::Togyz).side(Some(side));
                assert_eq!(togyz, lang.sides(Kind::Togyz)[i].to_lowercase(), "{lang:?}");
            }
        }
        // Kazakh: ақ and қара, not ақтар and қаралар.
        let kk = Words {
            lang: Lang::Kk,
            kind: Kind::Togyz,
        };
        assert_eq!(kk.move_words(34), "17-жүріс, қара");
    }
}
