//! The live state of one board, as the relay shows it: its connection and recording state, the
//! position, the last move, the clocks, open irregularities and the result. Flow: the hub folds
//! every durable event into a [`BoardLive`] ([`BoardLive::apply`]) and hands out
//! [`BoardSnapshot`]s: data only, drawn for a browser by [`super::view`]. No I/O.

use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};

use crate::{
    game::{
        Kind,
        togyz::{self, notation as tnotation},
    },
    lang::Lang,
    sensor::ClockReading,
    tracker::{IrregularityKind, RecordedMove, Side, TrackerEvent},
};

/// FEN of the chess start position (ply 0 of every game).
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// What [`BoardLive::apply`] names an event that came after the final result (not shown).
pub const AFTER_RESULT: &str = "after_result";

/// The events [`BoardLive::apply`] names that spectators are not sent: irregularities and
/// their resolution (the arbiter's, through the admin API), and what came after the result.
pub const NOT_PUBLIC: &[&str] = &["irregularity", "resolved", AFTER_RESULT];

/// Whether the daemon hears the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Connection {
    /// Not opened yet.
    Waiting,
    Connected,
    Lost,
}

/// Whether the board's moves reach the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recording {
    /// The store takes the board's writes.
    Ok,
    /// The store refuses them (a full disk): the board keeps its moves in memory and retries.
    Suspended,
    /// After a gap the record does not reach what the board shows (`thread_lost` is open):
    /// moves wait for the board to fit the record again, or for the arbiter.
    Lost,
}

/// The last move of a board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LastMove {
    pub ply: u32,
    pub san: String,
    pub uci: Option<String>,
    /// Togyz: the move's start and landing locations (0..18), for the drawing to mark; not
    /// sent (the page reads the marks off the drawing).
    #[serde(skip)]
    pub pits: Option<(usize, usize)>,
}

/// Both clocks as the board's clock shows them, by colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LiveClock {
    pub white_ms: u64,
    pub black_ms: u64,
    /// Whose clock runs; `None` when the clock is stopped.
    pub running: Option<Side>,
    pub white_flag: bool,
    pub black_flag: bool,
}

impl LiveClock {
    /// A DGT clock reading by colour (`white_on_left`: White's clock is the left-hand one).
    pub fn from_reading(reading: &ClockReading, white_on_left: bool) -> LiveClock {
        let (white_ms, black_ms, white_flag, black_flag) = if white_on_left {
            let r = reading;
            (r.left_ms, r.right_ms, r.left_flag, r.right_flag)
        } else {
            let r = reading;
            (r.right_ms, r.left_ms, r.right_flag, r.left_flag)
        };
        // The lever high on the right means the right-hand clock runs.
        let right_runs = reading.lever_right_high;
        let running = reading.running.then_some(if right_runs == white_on_left {
            Side::Black
        } else {
            Side::White
        });
        LiveClock {
            white_ms,
            black_ms,
            running,
            white_flag,
            black_flag,
        }
    }
}

/// Article 8.4 marks: the side's last move was made in time trouble.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeTroubleMarks {
    pub white: bool,
    pub black: bool,
}

/// An irregularity the board showed and nothing has resolved yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpenIrregularity {
    pub id: u32,
    pub ply: u32,
    pub kind: IrregularityKind,
    pub detail: String,
    pub article: Option<String>,
}

/// A togyz position's stores and tuz marks, for the live page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TogyzLive {
    pub white_store: u8,
    pub black_store: u8,
    /// White's tuz: its pit number on black's row.
    pub white_tuz: Option<u8>,
    /// Black's tuz: its pit number on white's row.
    pub black_tuz: Option<u8>,
}

/// Why the daemon does not hear a board, typed: the alert's kind and its words come from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lost {
    /// Its port failed or went away; `why`: the system's words.
    Port { why: String },
    /// Its port closed.
    Closed,
    /// Nothing heard from it for `secs` seconds (the watchdog gave up on it).
    Silent { secs: u64 },
    /// Another process holds its port; `why`: the system's words, naming the holder.
    PortBusy { why: String },
    /// The bus port its chain hangs on went away.
    BusGone,
    /// It stopped answering on the bus.
    BusSilent,
    /// The daemon stopped.
    Stopped,
    /// The hall that records it does not hear it (the event node's view).
    HallLost,
}

impl Lost {
    /// The kind of the arbiter's alert: `board_unplugged`, `board_silent`, `board_port_busy`.
    pub fn alert_kind(&self) -> &'static str {
        match self {
            Lost::Silent { .. } | Lost::BusSilent => "board_silent",
            Lost::PortBusy { .. } => "board_port_busy",
            _ => "board_unplugged",
        }
    }

    /// In `lang`'s words (the system's own words as they are).
    pub fn words(&self, lang: Lang) -> String {
        match self {
            Lost::Port { why } | Lost::PortBusy { why } => why.clone(),
            Lost::Closed => lang.text("arbiter.lost_closed").to_owned(),
            Lost::Silent { secs } => {
                lang.fill("arbiter.lost_silent", &[("secs", &secs.to_string())])
            }
            Lost::BusGone => lang.text("arbiter.lost_bus_gone").to_owned(),
            Lost::BusSilent => lang.text("arbiter.lost_bus_silent").to_owned(),
            Lost::Stopped => lang.text("arbiter.lost_stopped").to_owned(),
            Lost::HallLost => lang.text("arbiter.lost_by_hall").to_owned(),
        }
    }
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words(Lang::En))
    }
}

/// What the live page and `/api/boards` show of one board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BoardSnapshot {
    pub name: String,
    pub number: Option<u32>,
    /// Which game the board plays.
    pub kind: Kind,
    pub connection: Connection,
    /// Why the daemon does not hear the board, in English (the arbiter's; never public).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_reason: Option<String>,
    /// The same, typed, for the console's words.
    #[serde(skip)]
    pub lost: Option<Lost>,
    /// Whether the store takes the board's record (the arbiter's; none in the public view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<Recording>,
    /// Why recording is suspended (the store's error), while it is (the arbiter's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_error: Option<String>,
    /// FEN of the recorded position (PlayStrategy's FEN for togyz).
    pub fen: String,
    pub side_to_move: Side,
    /// Plies recorded in the current game.
    pub ply: u32,
    pub last_move: Option<LastMove>,
    /// The game's moves in SAN (togyz: `76`, `45X`), by ply.
    pub moves: Vec<String>,
    /// Togyz only: the stores and the tuz marks.
    pub togyz: Option<TogyzLive>,
    pub clock: Option<LiveClock>,
    pub time_trouble: TimeTroubleMarks,
    pub irregularities: Vec<OpenIrregularity>,
    /// The game's result: final after a game end, else proposed (gesture, flag) or none.
    pub result: Option<String>,
    pub result_final: bool,
    pub termination: Option<String>,
    /// Since when the board is not heard (wall-clock ms), while it is lost; not sent.
    #[serde(skip)]
    pub lost_since_ms: Option<u64>,
    /// How often the board was lost since the daemon started; not sent.
    #[serde(skip)]
    pub losses: u32,
    /// The stored game shown, when the hub was told which it may name ([`super::Hub::show_game`]:
    /// the delayed feed, once the game began the delay ago); not sent (views name it).
    #[serde(skip)]
    pub game: Option<i64>,
    /// Whether the board's sensor learns the board itself (a Certabo board's calibration), so
    /// that the console offers to calibrate it; not sent.
    #[serde(skip)]
    pub learns: bool,
}

impl BoardSnapshot {
    /// The board as it waits for its next game, its last one over: the start position, no
    /// moves, no result; what the board and its clock are doing now stays.
    pub fn awaiting_next_game(self) -> BoardSnapshot {
        let fresh = BoardLive::with_kind(&self.name, self.number, self.kind, &[]).snapshot();
        BoardSnapshot {
            connection: self.connection,
            lost_reason: self.lost_reason,
            lost: self.lost,
            recording: self.recording,
            store_error: self.store_error,
            clock: self.clock,
            lost_since_ms: self.lost_since_ms,
            losses: self.losses,
            learns: self.learns,
            ..fresh
        }
    }

    /// What spectators are sent: no irregularities (they are the arbiter's, through the admin
    /// API), nothing of the recorder's state and no reason a board is not heard.
    pub fn public(mut self) -> BoardSnapshot {
        self.irregularities.clear();
        // A lost thread is the arbiter's alert (`thread_lost`), a store refusing writes the
        // arbiter's banner: spectators see the board as it is recorded, not how the recorder
        // stands.
        self.recording = None;
        self.store_error = None;
        // Why the daemon does not hear a board (a port held by a process, its path) is the
        // arbiter's and the operator's; spectators see the board disconnected.
        self.lost_reason = None;
        self.lost = None;
        self.learns = false;
        self
    }
}

/// One recorded ply as the hub keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Ply {
    pub(super) san: String,
    pub(super) uci: Option<String>,
    pub(super) fen: String,
    /// Togyz: the move's start and landing locations (0..18), to mark on the board.
    pub(super) pits: Option<(usize, usize)>,
}

/// One board's live state (the pure fold of its events).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardLive {
    pub(super) name: String,
    pub(super) number: Option<u32>,
    pub(super) kind: Kind,
    pub(super) connection: Connection,
    pub(super) lost_reason: Option<Lost>,
    pub(super) store_error: Option<String>,
    pub(super) plies: Vec<Ply>,
    pub(super) clock: Option<LiveClock>,
    pub(super) time_trouble: TimeTroubleMarks,
    pub(super) irregularities: Vec<OpenIrregularity>,
    /// The irregularities an arbiter's ruling closed, by the ruling's decision: open again if
    /// the ruling is undone.
    pub(super) ruled: Vec<(i64, OpenIrregularity)>,
    pub(super) result: Option<String>,
    pub(super) result_final: bool,
    pub(super) termination: Option<String>,
    /// A Chess960 game's start position, shown before the first move.
    pub(super) start_fen: Option<String>,
    pub(super) lost_since_ms: Option<u64>,
    pub(super) losses: u32,
    /// The stored game shown, if it may be named ([`BoardSnapshot::game`]).
    pub(super) game: Option<i64>,
    /// The latest decision shown (its event id): a decision reaches the hub from the decider
    /// and from [`super::outside`], and is shown once.
    pub(super) last_decision: i64,
    /// Its sensor learns the board itself ([`BoardSnapshot::learns`]).
    pub(super) learns: bool,
}

impl BoardLive {
    /// A chess board with the moves of its open game (empty for a new game).
    pub fn new(name: &str, number: Option<u32>, moves: &[RecordedMove]) -> BoardLive {
        BoardLive::with_kind(name, number, Kind::Chess, moves)
    }

    /// A board of `kind` with the moves of its open game (empty for a new game).
    pub fn with_kind(
        name: &str,
        number: Option<u32>,
        kind: Kind,
        moves: &[RecordedMove],
    ) -> BoardLive {
        let mut board = BoardLive {
            name: name.to_owned(),
            number,
            kind,
            connection: Connection::Waiting,
            lost_reason: None,
            store_error: None,
            plies: Vec::new(),
            clock: None,
            time_trouble: TimeTroubleMarks::default(),
            irregularities: Vec::new(),
            ruled: Vec::new(),
            result: None,
            result_final: false,
            termination: None,
            start_fen: None,
            lost_since_ms: None,
            losses: 0,
            game: None,
            last_decision: 0,
            learns: false,
        };
        for mv in moves {
            board.push_move(mv);
        }
        board
    }

    pub(super) fn fen(&self) -> String {
        match self.plies.last() {
            Some(p) => p.fen.clone(),
            None => match self.kind {
                Kind::Chess => self
                    .start_fen
                    .clone()
                    .unwrap_or_else(|| START_FEN.to_owned()),
                Kind::Togyz => tnotation::to_fen(&togyz::Position::new()),
            },
        }
    }

    pub(super) fn push_move(&mut self, mv: &RecordedMove) {
        self.plies.truncate(mv.ply.saturating_sub(1) as usize);
        let pits = match self.kind {
            Kind::Chess => None,
            Kind::Togyz => togyz_pits(&self.fen(), &mv.notation),
        };
        self.plies.push(Ply {
            san: mv.notation.clone(),
            uci: mv.uci.clone(),
            fen: mv.position.clone(),
            pits,
        });
        match Side::of_ply(mv.ply) {
            Side::White => self.time_trouble.white = mv.time_trouble,
            Side::Black => self.time_trouble.black = mv.time_trouble,
        }
        if let Some(clock) = self.clock.as_mut() {
            clock.white_ms = mv.clock_white_ms.unwrap_or(clock.white_ms);
            clock.black_ms = mv.clock_black_ms.unwrap_or(clock.black_ms);
        }
    }

    /// Whether this board is `template` (a board as [`BoardLive::with_kind`] makes it for a
    /// stored game, before its moves: its header, link and result) with a prefix of `moves`
    /// pushed, clocks aside: then pushing the rest of `moves` onto it makes exactly the board
    /// that pushing them all onto `template` makes. Every field is compared (moves are compared
    /// by what they show), so that a field changed by anything else sends the caller back to
    /// building the board whole. `known`: the plies are known to be pushed from `moves`' first
    /// ones (the caller says so, [`super::hub::ShownMark`]), not compared again.
    pub(super) fn extends(
        &mut self,
        template: &BoardLive,
        moves: &[RecordedMove],
        known: bool,
    ) -> bool {
        let n = self.plies.len();
        let numbered = moves
            .iter()
            .enumerate()
            .all(|(i, m)| usize::try_from(m.ply).is_ok_and(|p| p == i + 1));
        if !numbered || n > moves.len() || !template.plies.is_empty() {
            return false;
        }
        let same_moves = known
            || self
                .plies
                .iter()
                .zip(moves)
                .all(|(p, m)| p.san == m.notation && p.uci == m.uci && p.fen == m.position);
        if !same_moves {
            return false;
        }
        // The marks pushing the prefix leaves: each side's last move's.
        let mut marks = TimeTroubleMarks::default();
        for m in &moves[..n] {
            match Side::of_ply(m.ply) {
                Side::White => marks.white = m.time_trouble,
                Side::Black => marks.black = m.time_trouble,
            }
        }
        // The rest compared as they are, the moves and the clock set aside for it.
        let plies = std::mem::take(&mut self.plies);
        let clock = self.clock.take();
        let same = *self
            == BoardLive {
                time_trouble: marks,
                ..template.clone()
            };
        self.plies = plies;
        self.clock = clock;
        same
    }

    /// Folds a durable tracker event in; returns the SSE event name and its fields. Once the
    /// result is final (a game end, the arbiter's result) what the board does no longer changes
    /// the game shown: its moves and gestures are kept in the store without a game.
    pub fn apply(&mut self, event: &TrackerEvent) -> (&'static str, Value) {
        let extends = matches!(
            event,
            TrackerEvent::Move(_)
                | TrackerEvent::Revision { .. }
                | TrackerEvent::Takeback { .. }
                | TrackerEvent::ResultGesture { .. }
        );
        if self.result_final && extends {
            return (AFTER_RESULT, json!({ "kind": event.kind() }));
        }
        match event {
            TrackerEvent::GameStarted {
                orientation, start, ..
            } => {
                let (name, number, connection) = (self.name.clone(), self.number, self.connection);
                let clock = self.clock;
                let store_error = self.store_error.take();
                let (lost_reason, lost_since_ms, losses) =
                    (self.lost_reason.take(), self.lost_since_ms, self.losses);
                *self = BoardLive::with_kind(&name, number, self.kind, &[]);
                self.connection = connection;
                self.clock = clock;
                self.store_error = store_error;
                (self.lost_reason, self.lost_since_ms, self.losses) =
                    (lost_reason, lost_since_ms, losses);
                self.start_fen = start.clone();
                (
                    "game_started",
                    json!({ "orientation": orientation.as_str() }),
                )
            }
            TrackerEvent::Move(mv) => {
                self.push_move(mv);
                (
                    "move",
                    json!({
                        "ply": mv.ply, "san": mv.notation, "uci": mv.uci, "fen": mv.position,
                        "clock_white_ms": mv.clock_white_ms, "clock_black_ms": mv.clock_black_ms,
                        "time_trouble": mv.time_trouble,
                    }),
                )
            }
            TrackerEvent::Revision { old, new, .. } => {
                self.push_move(new);
                (
                    "revision",
                    json!({
                        "ply": new.ply, "old_san": old.notation, "san": new.notation,
                        "uci": new.uci, "fen": new.position,
                    }),
                )
            }
            TrackerEvent::Takeback {
                from_ply, to_ply, ..
            } => {
                self.plies.truncate(*to_ply as usize);
                (
                    "takeback",
                    json!({ "from_ply": from_ply, "to_ply": to_ply, "fen": self.fen() }),
                )
            }
            TrackerEvent::Irregularity {
                id,
                ply,
                kind,
                player,
                detail,
                article,
                ..
            } => {
                self.irregularities.retain(|i| i.id != *id);
                self.irregularities.push(OpenIrregularity {
                    id: *id,
                    ply: *ply,
                    kind: *kind,
                    detail: detail.clone(),
                    article: article.clone(),
                });
                (
                    "irregularity",
                    json!({
                        "irregularity": id, "ply": ply, "kind": kind.as_str(),
                        "player": player.map(Side::as_str), "detail": detail, "article": article,
                    }),
                )
            }
            TrackerEvent::Resolved { id, ply, how, .. } => {
                self.irregularities.retain(|i| i.id != *id);
                (
                    "resolved",
                    json!({ "irregularity": id, "ply": ply, "how": how }),
                )
            }
            TrackerEvent::ResultGesture {
                after_ply,
                proposed,
                ..
            } => {
                if !self.result_final {
                    self.result = Some(proposed.as_pgn().to_owned());
                }
                (
                    "result",
                    json!({ "after_ply": after_ply, "proposed": proposed.as_pgn() }),
                )
            }
            TrackerEvent::FlagFall {
                after_ply,
                side,
                proposed,
                termination,
                article,
                both,
                note,
                ..
            } => {
                if !self.result_final {
                    self.result = Some(proposed.as_pgn().to_owned());
                    self.termination = Some(termination.clone());
                }
                (
                    "flag_fall",
                    json!({
                        "after_ply": after_ply, "side": side.as_str(), "proposed": proposed.as_pgn(),
                        "termination": termination, "article": article, "both": both, "note": note,
                    }),
                )
            }
            TrackerEvent::Claimable {
                ply,
                claim,
                article,
                ..
            } => (
                "claimable",
                json!({ "ply": ply, "claim": claim, "article": article }),
            ),
            TrackerEvent::Reoriented { orientation, .. } => {
                ("reoriented", json!({ "orientation": orientation.as_str() }))
            }
            TrackerEvent::Recovered {
                since_ms,
                from_ply,
                to_ply,
                source,
                ..
            } => (
                "recovered",
                json!({
                    "from_ply": from_ply, "to_ply": to_ply, "since_ms": since_ms,
                    "source": source, "kind": source.kind().as_str(),
                }),
            ),
            TrackerEvent::GameEnded {
                after_ply,
                outcome,
                termination,
                ..
            } => {
                self.result = Some(outcome.as_pgn().to_owned());
                self.result_final = true;
                self.termination = Some(termination.clone());
                (
                    "game_end",
                    json!({
                        "after_ply": after_ply, "result": outcome.as_pgn(), "termination": termination,
                    }),
                )
            }
        }
    }

    /// The board as shown.
    pub fn snapshot(&self) -> BoardSnapshot {
        let ply = self.plies.len() as u32;
        let last_move = self.plies.last().map(|p| LastMove {
            ply,
            san: p.san.clone(),
            uci: p.uci.clone(),
            pits: p.pits,
        });
        let fen = self.fen();
        let togyz = match self.kind {
            Kind::Chess => None,
            Kind::Togyz => togyz_live(&fen),
        };
        BoardSnapshot {
            name: self.name.clone(),
            number: self.number,
            kind: self.kind,
            connection: self.connection,
            lost_reason: self.lost_reason.as_ref().map(Lost::to_string),
            lost: self.lost_reason.clone(),
            recording: Some(match self.store_error {
                Some(_) => Recording::Suspended,
                None if self
                    .irregularities
                    .iter()
                    .any(|i| i.kind == IrregularityKind::ThreadLost) =>
                {
                    Recording::Lost
                }
                None => Recording::Ok,
            }),
            store_error: self.store_error.clone(),
            side_to_move: Side::of_ply(ply + 1),
            fen,
            ply,
            last_move,
            moves: self.plies.iter().map(|p| p.san.clone()).collect(),
            togyz,
            clock: self.clock,
            time_trouble: self.time_trouble,
            irregularities: self.irregularities.clone(),
            result: self.result.clone(),
            result_final: self.result_final,
            termination: self.termination.clone(),
            lost_since_ms: self.lost_since_ms,
            losses: self.losses,
            game: self.game,
            learns: self.learns,
        }
    }
}

/// The start and landing locations of togyz move `notation` (`76`, `45X`) played from `fen`.
pub(super) fn togyz_pits(fen: &str, notation: &str) -> Option<(usize, usize)> {
    let pos = tnotation::from_fen(fen, togyz::Rules::KYRGYZ).ok()?;
    let pit = notation.chars().next()?.to_digit(10)?;
    let mv = togyz::Move::new(u8::try_from(pit).ok()?)?;
    let (_, sowing) = pos.play_with_info(mv).ok()?;
    Some((
        togyz::Board::location(sowing.side, mv.pit()),
        usize::from(sowing.landing),
    ))
}

/// The stores and tuz marks of a togyz FEN.
pub(super) fn togyz_live(fen: &str) -> Option<TogyzLive> {
    let pos = tnotation::from_fen(fen, togyz::Rules::KYRGYZ).ok()?;
    let b = pos.board();
    Some(TogyzLive {
        white_store: b.stores[0],
        black_store: b.stores[1],
        white_tuz: b.tuz[0],
        black_tuz: b.tuz[1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board's loss says in English what it always said (the JSON's `lost_reason`), its
    /// alert's kind comes from what happened (not from reading the words), and every language
    /// words it, the system's own words kept as they are.
    #[test]
    fn why_a_board_is_lost_reads_in_every_language_and_names_its_alert() {
        let english = [
            (Lost::Closed, "port closed", "board_unplugged"),
            (Lost::Silent { secs: 12 }, "silent for 12 s", "board_silent"),
            (Lost::BusGone, "the bus port went away", "board_unplugged"),
            (
                Lost::BusSilent,
                "stopped answering on the bus",
                "board_silent",
            ),
            (Lost::Stopped, "the daemon stopped", "board_unplugged"),
            (Lost::HallLost, "the hall lost the board", "board_unplugged"),
            (
                Lost::Port {
                    why: "No such device (os error 19)".into(),
                },
                "No such device (os error 19)",
                "board_unplugged",
            ),
            (
                Lost::PortBusy {
                    why: "held by pid 812 (/usr/sbin/ModemManager)".into(),
                },
                "held by pid 812 (/usr/sbin/ModemManager)",
                "board_port_busy",
            ),
        ];
        for (lost, text, kind) in &english {
            assert_eq!(lost.to_string(), *text);
            assert_eq!(lost.alert_kind(), *kind);
            for lang in Lang::ALL.into_iter().filter(|l| *l != Lang::En) {
                let words = lost.words(lang);
                match lost {
                    Lost::Port { why } | Lost::PortBusy { why } => assert_eq!(&words, why),
                    _ => {
                        assert_ne!(&words, text, "{lang}");
                        assert!(!words.contains('{'), "{lang}: {words}");
                    }
                }
            }
        }
        assert!(Lost::Silent { secs: 12 }.words(Lang::Ru).contains("12"));
    }

    #[test]
    fn spectators_are_not_told_why_a_board_is_lost_or_that_its_thread_is() {
        let mut s = BoardLive::new("b1", Some(1), &[]).snapshot();
        s.connection = Connection::Lost;
        let busy = Lost::PortBusy {
            why: "board not available: /dev/eboard/1; held by pid 812".into(),
        };
        s.lost_reason = Some(busy.to_string());
        s.lost = Some(busy);
        s.recording = Some(Recording::Lost);
        s.store_error = Some("the disk holding /x.db is full".into());
        let arbiter = s.clone();
        let public = s.public();
        assert_eq!(
            public.connection,
            Connection::Lost,
            "the board is still shown lost"
        );
        assert_eq!(public.lost_reason, None);
        assert_eq!(public.lost, None);
        assert_eq!(public.recording, None);
        assert_eq!(arbiter.recording, Some(Recording::Lost));
        let json = serde_json::to_string(&public).unwrap();
        for internal in ["held by", "recording", "lost_reason", "store_error", "disk"] {
            assert!(!json.contains(internal), "{internal}: {json}");
        }
        let json = serde_json::to_string(&arbiter).unwrap();
        assert!(json.contains(r#""recording":"lost""#), "{json}");
    }
}
