//! What the record says about a game in words, typed: the details of irregularities and the
//! rulings the Laws provide, as a key and its arguments (squares, moves and articles as they
//! are, numbers, sides, the pieces, nested phrases and lists), so that each language words them
//! its own way.
//!
//! Flow: the tracker and the referee build a [`Phrase`]; its English (its `Display`, from
//! [`ENGLISH`]) is the `detail` and `ruling` the store keeps as ever, and the phrase itself is
//! kept beside them; a page, a console or a sheet in another language words it again with
//! [`Phrase::words`] through its own [`Words`] (the daemon's language tables, one template per
//! key of [`ENGLISH`], with the same `{blanks}`). Pure: no I/O.

use std::{collections::BTreeMap, fmt};

use serde::{Deserialize, Serialize};

use crate::tracker::Side;

/// A sentence of the record: a key of [`ENGLISH`] and its arguments by blank name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phrase {
    pub key: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, Arg>,
}

/// What fills a blank of a phrase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    /// Written as it is in every language: a square, a move, an article, a clock time.
    Text(String),
    Number(u64),
    /// A player, in the game's own words for its sides.
    Side(Side),
    /// A term of the game by its key in [`ENGLISH`] (`piece.white_knight`, `piece.empty`).
    Term(String),
    /// First, second, … (`ordinal.1`, `ordinal.2`, `ordinal.3`, `ordinal.n`).
    Ordinal(u32),
    Phrase(Box<Phrase>),
    /// Phrases one after the other, with the language's separator between them.
    List(Vec<Phrase>),
    /// A moment, in milliseconds since the Unix epoch: each reader words it in its own time
    /// ([`Words::time`]; English: UTC).
    Time(u64),
}

impl Phrase {
    /// The phrase of `key`, with no arguments yet.
    pub fn new(key: &str) -> Phrase {
        Phrase {
            key: key.to_owned(),
            args: BTreeMap::new(),
        }
    }

    /// With `value` in its blank `name`.
    pub fn with(mut self, name: &str, value: Arg) -> Phrase {
        self.args.insert(name.to_owned(), value);
        self
    }

    pub fn text(self, name: &str, value: impl fmt::Display) -> Phrase {
        self.with(name, Arg::Text(value.to_string()))
    }

    pub fn number(self, name: &str, value: impl Into<u64>) -> Phrase {
        self.with(name, Arg::Number(value.into()))
    }

    pub fn side(self, name: &str, side: impl Into<Side>) -> Phrase {
        self.with(name, Arg::Side(side.into()))
    }

    pub fn term(self, name: &str, key: &str) -> Phrase {
        self.with(name, Arg::Term(key.to_owned()))
    }

    pub fn phrase(self, name: &str, value: Phrase) -> Phrase {
        self.with(name, Arg::Phrase(Box::new(value)))
    }

    pub fn list(self, name: &str, items: Vec<Phrase>) -> Phrase {
        self.with(name, Arg::List(items))
    }

    /// The move `ply` (1-based) belongs to, as people write it: its number in the blank `name`
    /// and the side that made it in `{name}_side` (ply 67: move 34, white).
    pub fn move_of(self, name: &str, ply: u32) -> Phrase {
        self.number(name, ply.div_ceil(2))
            .side(&format!("{name}_side"), Side::of_ply(ply))
    }

    /// The moment `at_ms` (milliseconds since the Unix epoch) in the blank `name`.
    pub fn time(self, name: &str, at_ms: u64) -> Phrase {
        self.with(name, Arg::Time(at_ms))
    }

    /// Whether every key of this phrase, of the phrases within it and of the terms it names is
    /// one [`ENGLISH`] has: a phrase an older version wrote with keys since retired is not
    /// worded again (its record's English stands).
    pub fn is_known(&self) -> bool {
        English.template(&self.key).is_some()
            && self.args.values().all(|arg| match arg {
                Arg::Term(key) => English.template(key).is_some(),
                Arg::Phrase(p) => p.is_known(),
                Arg::List(items) => items.iter().all(Phrase::is_known),
                Arg::Text(_) | Arg::Number(_) | Arg::Side(_) | Arg::Ordinal(_) | Arg::Time(_) => {
                    true
                }
            })
    }

    /// `items` as one phrase (`list`: the items and nothing else).
    pub fn of_list(items: Vec<Phrase>) -> Phrase {
        Phrase::new("list").list("items", items)
    }

    /// This phrase in `words`: its template with every blank filled, phrases within worded the
    /// same way. A key `words` lacks is worded in English; a blank with no argument is left as
    /// it is.
    pub fn words(&self, words: &impl Words) -> String {
        let mut out = String::new();
        self.write(words, &mut out);
        out
    }

    fn write(&self, words: &impl Words, out: &mut String) {
        let template = words
            .template(&self.key)
            .or_else(|| English.template(&self.key))
            .unwrap_or(&self.key);
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            let Some(len) = after.find('}') else {
                rest = &rest[start..];
                break;
            };
            let name = &after[..len];
            match self.args.get(name) {
                Some(arg) => arg.write(words, out),
                None => {
                    out.push('{');
                    out.push_str(name);
                    out.push('}');
                }
            }
            rest = &after[len + 1..];
        }
        out.push_str(rest);
    }
}

impl Arg {
    fn write(&self, words: &impl Words, out: &mut String) {
        let term = |key: &str| {
            words
                .template(key)
                .or_else(|| English.template(key))
                .unwrap_or(key)
                .to_owned()
        };
        match self {
            Arg::Text(s) => out.push_str(s),
            Arg::Number(n) => out.push_str(&n.to_string()),
            Arg::Side(side) => out.push_str(&words.side(*side)),
            Arg::Term(key) => out.push_str(&term(key)),
            Arg::Ordinal(n) => {
                let key = match n {
                    1 => "ordinal.1",
                    2 => "ordinal.2",
                    3 => "ordinal.3",
                    _ => "ordinal.n",
                };
                out.push_str(&term(key).replace("{n}", &n.to_string()));
            }
            Arg::Phrase(p) => p.write(words, out),
            Arg::List(items) => {
                let separator = term("separator");
                for (i, p) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&separator);
                    }
                    p.write(words, out);
                }
            }
            Arg::Time(at_ms) => out.push_str(&words.time(*at_ms)),
        }
    }
}

/// `at_ms` as a time of day in UTC, `14:03:22 UTC`; a moment before 1973 is no wall-clock time
/// (a capture's clock counting from its start) and reads as the seconds since it, `+12.345 s`.
pub fn utc_time(at_ms: u64) -> String {
    if at_ms < WALL_CLOCK_MS {
        return format!("+{}.{:03} s", at_ms / 1000, at_ms % 1000);
    }
    let secs = (at_ms / 1000) % 86_400;
    format!(
        "{:02}:{:02}:{:02} UTC",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Milliseconds since the epoch below which a moment is taken for a count from a capture's
/// start rather than a wall-clock time (10^11 ms: March 1973).
pub const WALL_CLOCK_MS: u64 = 100_000_000_000;

impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words(&English))
    }
}

/// A language's words for phrases.
pub trait Words {
    /// The template of `key` (`{name}` blanks for its arguments), if the language has it.
    fn template(&self, key: &str) -> Option<&str>;
    /// The name of `side`.
    fn side(&self, side: Side) -> String;
    /// The moment `at_ms` (milliseconds since the Unix epoch) as its readers tell the time.
    /// Default: [`utc_time`].
    fn time(&self, at_ms: u64) -> String {
        utc_time(at_ms)
    }
}

/// English, as the record stores it.
pub struct English;

impl Words for English {
    fn template(&self, key: &str) -> Option<&str> {
        ENGLISH
            .binary_search_by(|(k, _)| k.cmp(&key))
            .ok()
            .map(|i| ENGLISH[i].1)
    }

    fn side(&self, side: Side) -> String {
        side.as_str().to_owned()
    }
}

/// Every key a phrase may have, with its English template, sorted by key (a unit test keeps
/// them so). The terms a phrase's arguments name (`piece.*`, `ordinal.*`, `separator`) are keys
/// too.
pub const ENGLISH: &[(&str, &str)] = &[
    (
        "chess.bishops_one_colour",
        "White's bishops stand on squares of one colour",
    ),
    (
        "chess.board_rotated",
        "the pieces stand along the board's files: h1 is not a light square on White's right \
         (2.1); the game goes on",
    ),
    ("chess.both_kings_in_check", "both kings in check"),
    (
        "chess.castling_not_allowed",
        "{move}: castling is not allowed here",
    ),
    ("chess.change", "{square}: {was} → {now}"),
    ("chess.illegal_move", "{move}: {why}"),
    (
        "chess.king_in_check",
        "it leaves or puts the own king in check",
    ),
    (
        "chess.king_not_between_rooks",
        "White's king does not stand between its rooks",
    ),
    (
        "chess.mirror",
        "{square}: {piece} (Black's pieces mirror White's)",
    ),
    (
        "chess.not_960_start",
        "not a Chess960 start position: {what}",
    ),
    (
        "chess.pawn_belongs",
        "{square}: {piece} (a pawn belongs there)",
    ),
    (
        "chess.pawn_not_promoted",
        "a pawn left on the last rank without promotion (7.5.2)",
    ),
    ("chess.piece_on", "{piece} on {square}"),
    ("chess.wrong_shape", "the piece does not move that way"),
    (
        "claim.declared.fivefold_repetition",
        "fivefold repetition: the arbiter declares the draw",
    ),
    (
        "claim.declared.seventy_five_moves",
        "seventy-five moves: the arbiter declares the draw",
    ),
    (
        "clock.mis_set",
        "the clocks show {left} and {right}; the time control gives {each} each",
    ),
    (
        "clock.press_without_move",
        "the clock was pressed with no move on the board",
    ),
    ("flag.arbiter_decides", "the arbiter decides"),
    ("flag.both", "both flags are down: {what}"),
    (
        "flag.both_article",
        "both flags are down: {what} ({article})",
    ),
    ("flag.drawn", "the game is drawn"),
    ("flag.play_goes_on", "play goes on"),
    (
        "flag.quota_made",
        "{side} had completed {done} moves: the flag fell in period {period}, the {required} moves of the periods before it made (6.4); a clock that did not add that period's time was mis-set (6.10.2)",
    ),
    (
        "flag.quota_short",
        "{side} had completed {done} of the {required} moves required by the end of period {period} (6.4)",
    ),
    (
        "flag.uscf",
        "only a player may call a flag; the director rules on the claim (USCF 13C1)",
    ),
    (
        "flag.uscf_cannot_mate",
        "only a player may call a flag; the director rules on the claim (USCF 13C1); drawn for want of material to win on time unless the opponent has a forced win (USCF 14E), which the director judges",
    ),
    (
        "gap.ambiguous",
        "more than one run of legal moves from it leads to the board",
    ),
    (
        "gap.clock_disagrees",
        "the clock shows presses that the board does not explain (a piece moved and moved \
         back, or a position came again): moves were missed",
    ),
    ("gap.cut_short", "the search for the moves was cut short"),
    (
        "gap.nothing",
        "no run of up to {plies} legal moves from it leads to the board",
    ),
    (
        "gap.nothing_by_presses",
        "no run of legal moves from it as long as the clock's presses since the arbiter's \
         decision allow (at most {plies}) leads to the board",
    ),
    ("laws.add_time", "{seconds} s to be added to {side}'s clock"),
    (
        "laws.applies",
        "{what}: {due} ({ladder}); the arbiter applies it",
    ),
    (
        "laws.arbiter_decides_press",
        "the arbiter decides whether it counts as an illegal move or a distraction",
    ),
    ("laws.arbiter_intervenes", "the arbiter intervenes (A.4c)"),
    (
        "laws.director_applies",
        "{what}: {due} ({ladder}); the director applies it",
    ),
    (
        "laws.drawn_no_mate",
        "the game is drawn: {side} cannot mate by any series of legal moves",
    ),
    (
        "laws.illegal_position_drawn",
        "the game is drawn, for the arbiter to confirm: the illegal position stood after the \
         next completed move",
    ),
    ("laws.loses", "{side} loses the game"),
    (
        "laws.may_claim_draw",
        "{side} may claim a draw before making his next move: he has no mating material",
    ),
    (
        "laws.may_claim_win",
        "{side} may claim the game before making his next move",
    ),
    ("laws.offence", "{ordinal} completed illegal move by {side}"),
    (
        "laws.reinstate",
        "the illegal move was not corrected before the opponent moved: the arbiter reinstates \
         the position before it",
    ),
    (
        "laws.unsupervised_2001_blitz",
        "{what}: the opponent may claim a win before making his own move, a draw if he cannot \
         mate (B.3c); unclaimed, the move stands",
    ),
    (
        "laws.unsupervised_2001_rapid",
        "{what}: only on the opponent's claim before his own move: {due} ({ladder}, A.4c); \
         unclaimed, the move stands",
    ),
    (
        "laws.unsupervised_2014",
        "{what}: an arbiter who sees it declares the game lost if the opponent has not moved, or \
         the opponent claims a win before his next move (A.4.2); unclaimed, the move stands",
    ),
    (
        "laws.unsupervised_2018",
        "{what}: the arbiter who sees it applies {ladder}: {due}, or the opponent claims before \
         his next move (A.4.2); unclaimed, the move stands",
    ),
    (
        "laws.unsupervised_2023",
        "{what}: the arbiter who sees it applies {ladder}: {due}, or the opponent claims before \
         his next move (A.5.2); unclaimed, the move stands",
    ),
    ("list", "{items}"),
    ("ordinal.1", "first"),
    ("ordinal.2", "second"),
    ("ordinal.3", "third"),
    ("ordinal.n", "{n}th"),
    ("piece.black_bishop", "black bishop"),
    ("piece.black_king", "black king"),
    ("piece.black_knight", "black knight"),
    ("piece.black_pawn", "black pawn"),
    ("piece.black_queen", "black queen"),
    ("piece.black_rook", "black rook"),
    ("piece.code", "code {code}"),
    ("piece.empty", "empty"),
    ("piece.white_bishop", "white bishop"),
    ("piece.white_king", "white king"),
    ("piece.white_knight", "white knight"),
    ("piece.white_pawn", "white pawn"),
    ("piece.white_queen", "white queen"),
    ("piece.white_rook", "white rook"),
    ("resolved.board_fits", "the board fits the game again"),
    (
        "resolved.illegal_move_pressed",
        "completed by a clock press: an illegal move",
    ),
    (
        "resolved.moves_found",
        "the moves missed were found: the board fits the game",
    ),
    ("resolved.play_went_on", "position restored; play went on"),
    ("resolved.position_restored", "position restored"),
    (
        "resolved.read_back_move",
        "{how}; move {at} ({at_side}) was read back from the board's memory",
    ),
    (
        "resolved.read_back_moves",
        "{how}; moves {first} ({first_side}) to {last} ({last_side}) were read back from the \
         board's memory",
    ),
    (
        "resolved.record_set",
        "the arbiter set the record to {plies} plies; tracking goes on from it",
    ),
    ("separator", ", "),
    ("then", "{first}; {next}"),
    ("togyz.change", "{place}: {was} → {now}"),
    (
        "togyz.chylymov",
        "possible Chylymov draw position: the position after ply {ply} stands again ({times} times) with no capture in between",
    ),
    ("togyz.count", "{pit}: {count}"),
    ("togyz.counted", "counted {white}:{black}"),
    (
        "togyz.displaced",
        "{changes} (korgools out of place: restore them, KG 4.2–4.3)",
    ),
    (
        "togyz.first_not_put_back",
        "the first korgool not put back into {pit} (KG 1.2)",
    ),
    (
        "togyz.korgools_not_taken",
        "{move}: the {count} korgools of {pit} not taken (KG 1.3)",
    ),
    ("togyz.pit", "{side}'s pit {number}"),
    (
        "togyz.single_goes_on",
        "a single korgool goes on to the next pit (KG 1.2)",
    ),
    (
        "togyz.skipped",
        "{pit} skipped (KG 1.1: one korgool into each pit)",
    ),
    ("togyz.sowing", "sowing from {pit}: {what}"),
    (
        "togyz.sowing_from_empty",
        "sowing from {pit}, which is empty (KG 1.2)",
    ),
    (
        "togyz.sowing_from_opponent",
        "sowing from {pit}, the opponent's pit (KG 1.1: a move starts on one's own side)",
    ),
    (
        "togyz.sowing_from_tuz",
        "sowing from the tuz on {pit}: the korgools in a tuz are its owner's (KG 2.7, 1.1)",
    ),
    ("togyz.store", "{side}'s store"),
    (
        "togyz.taken_not_last",
        "the korgools of {pit} taken: only the pit of the last korgool is taken (KG 1.3)",
    ),
    (
        "togyz.taken_odd",
        "the korgools of {pit} taken: an odd count is not taken (KG 1.4)",
    ),
    (
        "togyz.taken_own_side",
        "the korgools of {pit} taken: no capture on one's own side (KG 1.4)",
    ),
    ("togyz.tuz_marker", "{side}'s tuz marker: {was} → {now}"),
    (
        "togyz.tuz_marker_no_tuz",
        "a tuz marker set where no tuz was won ({changes}; KG 2.1–2.5)",
    ),
    (
        "togyz.tuz_not_taken",
        "{move}: the tuz on {pit} not taken (KG 2.1, 2.6: a tuz may not be refused)",
    ),
    (
        "togyz.two_put",
        "two korgools put into {pit} (KG 1.1: one korgool into each pit)",
    ),
    (
        "togyz.wrong_setup",
        "{pits} (a game starts with 9 korgools in every pit)",
    ),
    ("tracker.after_move", "{move}, move {at} ({at_side})"),
    ("tracker.at_press", "{what} (at a clock press)"),
    ("tracker.at_start", "the start (no move recorded)"),
    (
        "tracker.lost_thread",
        "the board was not heard from {since} to {heard}; the record does not reach the \
         position it showed then: it stops after {last}, and {found}; recording waits for the \
         board to fit the record again, or for the arbiter",
    ),
    (
        "tracker.lost_track",
        "from {since} the board shows a position no run of moves from the record reaches \
         (play faster than the board reports it, or pieces moved about): the record stops \
         after {last}, and {found}; recording waits for the board to fit the record again, or \
         for the arbiter",
    ),
    ("tracker.missing", "{what} (missing: knocked over?)"),
    (
        "tracker.not_completed",
        "{what}; not completed (no clock press)",
    ),
    (
        "tracker.still_on_board",
        "{what}, still on the board after a move by the opponent",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_sorted_and_unique() {
        for pair in ENGLISH.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
    }

    #[test]
    fn a_ply_reads_as_its_move_and_side_and_a_moment_as_a_time() {
        let p = Phrase::new("tracker.after_move")
            .move_of("at", 68)
            .text("move", "Nf6");
        assert_eq!(p.to_string(), "Nf6, move 34 (black)");
        let p = Phrase::new("tracker.after_move")
            .move_of("at", 1)
            .text("move", "e4");
        assert_eq!(p.to_string(), "e4, move 1 (white)");
        // 2026-12-05 00:37:04.250 UTC; a capture's own clock counts from its start.
        assert_eq!(utc_time(1_796_431_024_250), "00:37:04 UTC");
        assert_eq!(utc_time(83_450), "+83.450 s");
    }

    #[test]
    fn a_phrase_with_a_retired_key_anywhere_is_not_known() {
        let known = Phrase::new("resolved.read_back_move")
            .phrase("how", Phrase::new("resolved.position_restored"))
            .move_of("at", 3);
        assert!(known.is_known());
        let retired = Phrase::new("resolved.read_back_move")
            .phrase("how", Phrase::new("resolved.gone_since"))
            .move_of("at", 3);
        assert!(!retired.is_known());
        assert!(!Phrase::new("tracker.after_ply").is_known());
        assert!(!Phrase::of_list(vec![Phrase::new("x")]).is_known());
    }

    #[test]
    fn a_phrase_fills_its_blanks_nested_and_listed() {
        let change = |sq: &str, was: &str| {
            Phrase::new("chess.change")
                .text("square", sq)
                .term("was", was)
                .term("now", "piece.empty")
        };
        let p = Phrase::new("tracker.missing").phrase(
            "what",
            Phrase::of_list(vec![
                change("g1", "piece.white_knight"),
                change("e2", "piece.white_pawn"),
            ]),
        );
        assert_eq!(
            p.to_string(),
            "g1: white knight → empty, e2: white pawn → empty (missing: knocked over?)"
        );
        let o = Phrase::new("laws.offence")
            .with("ordinal", Arg::Ordinal(4))
            .side("side", Side::Black);
        assert_eq!(o.to_string(), "4th completed illegal move by black");
    }

    #[test]
    fn a_phrase_reads_back_from_its_json() {
        let p = Phrase::new("togyz.sowing")
            .phrase(
                "pit",
                Phrase::new("togyz.pit")
                    .side("side", Side::White)
                    .number("number", 4u8),
            )
            .phrase("what", Phrase::new("togyz.single_goes_on"));
        let json = serde_json::to_string(&p).unwrap();
        let back: Phrase = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            back.to_string(),
            "sowing from white's pit 4: a single korgool goes on to the next pit (KG 1.2)"
        );
    }

    /// Another language's words, where it has them; English for the rest.
    struct Shouting;

    impl Words for Shouting {
        fn template(&self, key: &str) -> Option<&str> {
            (key == "laws.loses").then_some("{side} LOSES")
        }
        fn side(&self, side: Side) -> String {
            side.as_str().to_uppercase()
        }
    }

    #[test]
    fn a_language_words_what_it_has_and_english_the_rest() {
        let p = Phrase::new("laws.loses").side("side", Side::White);
        assert_eq!(p.words(&Shouting), "WHITE LOSES");
        let q = Phrase::new("laws.may_claim_win").side("side", Side::Black);
        assert_eq!(
            q.words(&Shouting),
            "BLACK may claim the game before making his next move"
        );
        assert_eq!(Phrase::new("no.such.key").to_string(), "no.such.key");
    }
}
