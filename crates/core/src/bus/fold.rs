//! One bus board's replies as the single-board frames its pipeline reads.
//!
//! Flow: BUS_BRD_DUMP (64 codes) becomes a BOARD_DUMP, BUS_BWTIME (7 bytes) the same BWTIME,
//! BUS_UPDATE (EEPROM tokens, dgt-notes 1.11) one FIELD_UPDATE per field token in order; a clock
//! token (written on a lever change) asks for the clock, a power-up or watchdog tag or tokens
//! that do not decode put the board in doubt (a dump next). [`DgtBus`] is the pipeline's board
//! kind for a bus board: its raw stream is the bus bytes (`device: dgt-bus` in a capture), its
//! frames these folds, with one more step ([`fold_in_order`]): the clock tokens a board writes at
//! a lever change become a BWTIME press between the field changes around it, built on the last
//! clock it showed. A poll brings a few hundred milliseconds of play at once; read in order, the
//! press falls after the move it completes and before the reply already begun, as on a board on
//! its own port. A BUS_FROM_START reply is the board's memory ([`DgtBus::from_memory`]). Pure.

use super::from_start::ee_moves_from_start;
use crate::{
    Millis,
    arbiter::{LawsSetup, Referee},
    game::{
        GameKind,
        chess::{ChessGame, ChessReading},
    },
    kind::{BoardKind, Link, SerialSettings},
    memory::{self, Continuation, MemoryError, Recording},
    pipeline::{Applied, Board, Dgt, Notice, Split},
    protocol::dgt::{
        BoardDump, BusReply, BwTime, ClockTime, EeTag, EeToken, Frame, Mode, bus_id,
        parse_ee_tokens, status,
    },
    sensor::{
        Orientation, Sensed,
        dgt::{ChessSensor, ClockLayout},
    },
    tracker::TrackerSettings,
};

/// What one reply means for the board's pipeline and for the master.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// Frames for the pipeline, in order.
    pub frames: Vec<Frame>,
    /// A lever was pressed: read the clock.
    pub clock_changed: bool,
    /// Why the board's state is in doubt (a dump next), if it is.
    pub doubt: Option<String>,
    /// The message id of a reply there is nothing to fold from (for a debug line).
    pub not_folded: Option<u8>,
}

/// Folds one good reply (see the module doc).
pub fn fold_reply(reply: &BusReply) -> Folded {
    let mut out = Folded::default();
    match reply.id.0 {
        bus_id::BRD_DUMP => match <[u8; 64]>::try_from(reply.data.as_slice()) {
            Ok(codes) => out.frames.push(Frame::BoardDump(BoardDump(codes))),
            Err(_) => out.doubt = Some(format!("a dump of {} bytes", reply.data.len())),
        },
        bus_id::BWTIME => match <[u8; 7]>::try_from(reply.data.as_slice()) {
            Ok(t) => out.frames.push(Frame::BwTime(BwTime(t))),
            Err(_) => out.doubt = Some(format!("a clock of {} bytes", reply.data.len())),
        },
        bus_id::UPDATE => match parse_ee_tokens(&reply.data) {
            Ok(tokens) => {
                for t in tokens {
                    match t {
                        EeToken::Field { square, piece, .. } => {
                            out.frames.push(Frame::FieldUpdate { square, piece });
                        }
                        EeToken::Clock { .. } => out.clock_changed = true,
                        EeToken::Tag(EeTag::PowerUp | EeTag::Watchdog) => {
                            out.doubt = Some("the board restarted".to_owned());
                        }
                        EeToken::Tag(_) => {}
                    }
                }
            }
            Err(e) => out.doubt = Some(e.to_string()),
        },
        other => out.not_folded = Some(other),
    }
    out
}

/// The clock after the lever change a run of clock tokens records (dgt-notes 1.11: a board writes
/// both clocks when its lever changes): `last` with the lever and the turn lights swapped, running,
/// and each side's time from its token where there is one. `layout` says which payload time is the
/// left-hand clock.
pub fn clock_after_lever(
    last: &BwTime,
    left: Option<ClockTime>,
    right: Option<ClockTime>,
    layout: ClockLayout,
) -> BwTime {
    let mut t = last.0;
    let (left_at, right_at) = match layout {
        ClockLayout::H17 => (3, 0),
        ClockLayout::H13 => (0, 3),
    };
    let bcd = |v: u8| ((v.min(59) / 10) << 4) | (v.min(59) % 10);
    for (time, at) in [(left, left_at), (right, right_at)] {
        if let Some(c) = time {
            t[at] = (t[at] & 0x70) | (c.hours.min(9) & 0x0f);
            t[at + 1] = bcd(c.minutes);
            t[at + 2] = bcd(c.seconds);
        }
    }
    let turns = status::LEFT_TURN | status::RIGHT_TURN;
    let st = t[6];
    let swapped = if st & turns != 0 { st ^ turns } else { st };
    t[6] = (swapped ^ status::LEVER_RIGHT_HIGH) | status::RUNNING;
    BwTime(t)
}

/// One good reply as frames in the order things happened on the board: [`fold_reply`]'s frames,
/// with a BWTIME press (see [`clock_after_lever`]) where an update's clock tokens stand, once a
/// clock is known (`last`). Without one, the tokens only ask for the clock.
pub fn fold_in_order(reply: &BusReply, last: Option<BwTime>, layout: ClockLayout) -> Vec<Frame> {
    let (Some(mut last), bus_id::UPDATE) = (last, reply.id.0) else {
        return fold_reply(reply).frames;
    };
    let Ok(tokens) = parse_ee_tokens(&reply.data) else {
        return fold_reply(reply).frames;
    };
    let mut frames = Vec::new();
    // The clock tokens of one lever change: at most one a side.
    let mut sides: (Option<ClockTime>, Option<ClockTime>) = (None, None);
    let mut press = |sides: &mut (Option<ClockTime>, Option<ClockTime>),
                     frames: &mut Vec<Frame>| {
        if let (None, None) = sides {
            return;
        }
        last = clock_after_lever(&last, sides.0, sides.1, layout);
        frames.push(Frame::BwTime(last));
        *sides = (None, None);
    };
    for t in tokens {
        match t {
            EeToken::Clock { left, time } => {
                let slot = if left { &mut sides.0 } else { &mut sides.1 };
                if slot.is_some() {
                    // The same side again: a second lever change.
                    press(&mut sides, &mut frames);
                }
                if left {
                    sides.0 = Some(time);
                } else {
                    sides.1 = Some(time);
                }
            }
            EeToken::Field { square, piece, .. } => {
                press(&mut sides, &mut frames);
                frames.push(Frame::FieldUpdate { square, piece });
            }
            EeToken::Tag(_) => press(&mut sides, &mut frames),
        }
    }
    press(&mut sides, &mut frames);
    frames
}

/// A bus board's sensed squares, the last clock it showed (what its next lever change is built
/// on), and when it was last read (what its next changes are stamped with).
#[derive(Clone, Debug, Default)]
pub struct BusBoardState {
    board: ChessSensor,
    clock: Option<BwTime>,
    /// When the last update or dump of the board was read.
    polled_at: Option<Millis>,
    /// The latest time a frame of the board was applied at.
    applied_at: Millis,
    /// A clock read whose lever stands otherwise than the last clock applied: a press made
    /// after the board's changes were read, whose clock tokens its next changes bring. It waits
    /// for them (see [`DgtBus::split`]).
    held_clock: Option<BwTime>,
}

impl Sensed<ChessReading> for BusBoardState {
    #[inline]
    fn key(&self, o: Orientation) -> u64 {
        self.board.key(o)
    }

    fn reading(&self, o: Orientation) -> ChessReading {
        self.board.reading(o)
    }

    fn is_known(&self) -> bool {
        self.board.is_known()
    }
}

/// A DGT chessboard on a bus, as a pipeline sees it: bus replies (Mode::Bus frames) folded into
/// the same sensor state, tracker and referee as a board on its own port. A reply with a bad
/// checksum is not folded (the master asks for it again).
pub struct DgtBus;

impl Board for DgtBus {
    type Wire = Mode;
    type Frame = Frame;
    type Game = ChessGame;
    type Sensor = BusBoardState;
    type Judge = Referee;
    const KIND: BoardKind = BoardKind::Dgt;
    const DEVICE: &'static str = "dgt-bus";
    const VENDOR: &'static str = "DGT";
    const LINK: Link = Link::Serial(SerialSettings::DGT);
    const REPORTS_CLOCK: bool = true;

    fn wire() -> Mode {
        Mode::Bus
    }

    /// Nothing: the master speaks for the whole bus.
    fn startup() -> Vec<u8> {
        Vec::new()
    }

    fn probe() -> Vec<u8> {
        Vec::new()
    }

    fn settings(laws: &LawsSetup) -> TrackerSettings {
        laws.tracker_settings()
    }

    fn judge(laws: &LawsSetup) -> Referee {
        laws.referee()
    }

    /// One folded frame (see [`DgtBus::split`]). A whole reply given here instead of through
    /// `Pipeline::feed_split` is folded at once: its board changes, and its last clock only.
    fn apply(sensor: &mut BusBoardState, frame: Frame) -> Applied {
        match frame {
            Frame::Bus(reply) if reply.id.0 == bus_id::FROM_START => Applied::Memory(reply.data),
            Frame::Bus(reply) => {
                let mut board = false;
                let mut clock = None;
                let at = sensor.applied_at;
                for (_, f) in DgtBus::split(sensor, ClockLayout::default(), at, Frame::Bus(reply)) {
                    match DgtBus::apply(sensor, f) {
                        Applied::Board => board = true,
                        Applied::Clock(t) => clock = Some(t),
                        Applied::Memory(_) | Applied::Nothing | Applied::Noted(_) => {}
                    }
                }
                match clock {
                    Some(t) => Applied::Clock(t),
                    None if board && sensor.board.is_known() => Applied::Board,
                    None => Applied::Nothing,
                }
            }
            Frame::BwTime(t) => {
                sensor.clock = Some(t);
                Applied::Clock(t)
            }
            other => Dgt::apply(&mut sensor.board, other),
        }
    }

    fn reset(sensor: &mut BusBoardState) {
        sensor.board.reset();
        sensor.clock = None;
        sensor.held_clock = None;
    }

    /// SEND_FROM_START: the log since the game's start tag (see [`super::from_start`]).
    const HAS_MEMORY: bool = true;

    fn from_memory(
        log: &[u8],
        recording: &Recording,
        notices: &mut Vec<Notice>,
    ) -> Result<Continuation, MemoryError> {
        let start = match recording.start {
            Some(text) => ChessGame::parse_start(text)
                .ok_or_else(|| MemoryError::BadStart(text.to_owned()))?,
            None => ChessGame::start(),
        };
        let codes = ChessSensor::codes_showing(&ChessGame::reading(&start), recording.orientation);
        let log = ee_moves_from_start(log, &codes)?;
        memory::continuation(&log, recording, notices)
    }

    /// A good reply becomes its frames in order (each field change observed in turn, as from a
    /// board on its own port, with its lever changes between them: [`fold_in_order`]); a bad
    /// one nothing.
    ///
    /// The times: an update brings what happened since the board was last read, so the field
    /// changes before its first press are applied at that earlier read (never before a frame
    /// already applied), the press and what follows it at the read of the update itself. A press
    /// is recorded one sensor scan after it (`scan_ms`), by the tracker's clock, which a bus
    /// board's pipeline advances only when the board is read: the squares a hand was still
    /// setting down when it pressed come in a later update, stamped no later than that update's
    /// own read, before the scan is over.
    ///
    /// A press can also land between the board's changes and its clock's read (the master
    /// reads the clock right after the changes, but the hands do not wait): the clock then shows
    /// the lever changed before the changes bring the press's clock tokens, and reading both
    /// would be two presses, the second one put on the other player. So a clock read whose lever
    /// stands otherwise than the last clock applied is held: if the next changes bring a lever
    /// change it is that press (the clock is read again after it) and the held read is let go;
    /// if they bring none, the held read follows their field changes.
    fn split(
        sensor: &mut BusBoardState,
        layout: ClockLayout,
        at: Millis,
        frame: Frame,
    ) -> Split<Frame> {
        let reply = match frame {
            // The board's log since the game began: read as its memory, whole.
            Frame::Bus(reply) if reply.checksum_ok && reply.id.0 == bus_id::FROM_START => {
                return Split::Itself(at, Frame::Bus(reply));
            }
            Frame::Bus(reply) if reply.checksum_ok => reply,
            Frame::Bus(_) => return Split::Frames(Vec::new()),
            other => {
                sensor.applied_at = sensor.applied_at.max(at);
                return Split::Itself(at, other);
            }
        };
        if reply.id.0 == bus_id::BWTIME
            && let Ok(t) = <[u8; 7]>::try_from(reply.data.as_slice()).map(BwTime)
            && let Some(last) = sensor.clock
            && !last.no_clock()
            && !t.no_clock()
            && last.lever_right_high() != t.lever_right_high()
        {
            sensor.held_clock = Some(t);
            return Split::Frames(Vec::new());
        }
        let read = matches!(reply.id.0, bus_id::UPDATE | bus_id::BRD_DUMP);
        let since = sensor
            .polled_at
            .filter(|_| reply.id.0 == bus_id::UPDATE)
            .map_or(at, |t| t.max(sensor.applied_at).min(at));
        if read {
            sensor.polled_at = Some(at);
        }
        let mut t = since;
        let mut out: Vec<(Millis, Frame)> = fold_in_order(&reply, sensor.clock, layout)
            .into_iter()
            .map(|f| {
                if matches!(f, Frame::BwTime(_)) {
                    t = at;
                }
                (t, f)
            })
            .collect();
        if reply.id.0 == bus_id::UPDATE
            && let Some(held) = sensor.held_clock.take()
            && !out.iter().any(|(_, f)| matches!(f, Frame::BwTime(_)))
        {
            out.push((at, Frame::BwTime(held)));
        }
        sensor.applied_at = sensor.applied_at.max(out.last().map_or(since, |(t, _)| *t));
        Split::Frames(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        arbiter::LawsSetup,
        pipeline::Pipeline,
        protocol::dgt::{MessageId, encode_ee_tokens},
        sensor::dgt::ClockReading,
        tracker::{Tracker, TrackerEvent, TrackerSettings},
    };

    const ADDRESS: u16 = 0x401;

    fn reply(id: u8, data: Vec<u8>) -> Frame {
        Frame::Bus(BusReply {
            id: MessageId(id),
            address: ADDRESS,
            data,
            checksum_ok: true,
        })
    }

    fn update(tokens: &[EeToken]) -> Frame {
        let mut data = Vec::new();
        encode_ee_tokens(tokens, &mut data);
        reply(bus_id::UPDATE, data)
    }

    fn start_codes() -> Vec<u8> {
        // a8..h8, a7..h7, ..., a1..h1 (board numbering, normal orientation).
        let mut d = vec![0u8; 64];
        d[..8].copy_from_slice(&[8, 9, 10, 12, 11, 10, 9, 8]);
        d[8..16].fill(7);
        d[48..56].fill(1);
        d[56..].copy_from_slice(&[2, 3, 4, 6, 5, 4, 3, 2]);
        d
    }

    fn time(minutes: u8, seconds: u8) -> ClockTime {
        ClockTime {
            hours: 0,
            minutes,
            seconds,
        }
    }

    fn field(square: u8, piece: u8) -> EeToken {
        EeToken::Field {
            square,
            piece,
            quick: false,
        }
    }

    /// Both clocks written at a lever change, left first.
    fn lever(left: ClockTime, right: ClockTime) -> [EeToken; 2] {
        [
            EeToken::Clock {
                left: true,
                time: left,
            },
            EeToken::Clock {
                left: false,
                time: right,
            },
        ]
    }

    /// White's clock on the left and running, White to move.
    fn clock_at_start() -> BwTime {
        BwTime::from_parts(
            time(15, 0),
            0,
            time(15, 0),
            0,
            status::LEFT_TURN | status::RUNNING,
        )
    }

    #[test]
    fn a_lever_change_swaps_the_lever_and_turn_and_takes_the_token_times() {
        let last = clock_at_start();
        let after = clock_after_lever(
            &last,
            Some(time(14, 57)),
            Some(time(15, 0)),
            ClockLayout::H17,
        );
        let r = ClockReading::from_bwtime_in(&after, ClockLayout::H17).unwrap();
        assert_eq!((r.left_ms, r.right_ms), (897_000, 900_000));
        assert!(r.running);
        assert_ne!(
            r.lever_right_high,
            ClockReading::from_bwtime(&last).unwrap().lever_right_high
        );
        assert_eq!(after.status() & status::RIGHT_TURN, status::RIGHT_TURN);
        assert_eq!(after.status() & status::LEFT_TURN, 0);
        // Back again: the lever and the turn lights return, the clock keeps running.
        let back = clock_after_lever(&after, None, Some(time(14, 51)), ClockLayout::H17);
        assert_eq!(back.status(), status::LEFT_TURN | status::RUNNING);
        assert_eq!(back.right().to_millis(), 891_000);
        assert_eq!(back.left().to_millis(), 897_000);
        // The older layout has the left-hand time first.
        let h13 = clock_after_lever(&last, Some(time(14, 57)), None, ClockLayout::H13);
        let r = ClockReading::from_bwtime_in(&h13, ClockLayout::H13).unwrap();
        assert_eq!((r.left_ms, r.right_ms), (897_000, 900_000));
    }

    /// What `split` gives for `frame` at `at`, each frame applied as the pipeline does.
    fn split_and_apply(sensor: &mut BusBoardState, at: Millis, frame: Frame) -> Vec<Frame> {
        let frames: Vec<Frame> = DgtBus::split(sensor, ClockLayout::H17, at, frame)
            .into_iter()
            .map(|(_, f)| f)
            .collect();
        for f in &frames {
            DgtBus::apply(sensor, f.clone());
        }
        frames
    }

    fn bwtime(t: BwTime) -> Frame {
        reply(bus_id::BWTIME, t.0.to_vec())
    }

    #[test]
    fn a_clock_read_before_the_changes_bring_its_press_is_held_until_they_do() {
        let start = clock_at_start();
        let pressed = clock_after_lever(
            &start,
            Some(time(14, 57)),
            Some(time(15, 0)),
            ClockLayout::H17,
        );
        let mut sensor = BusBoardState::default();
        split_and_apply(&mut sensor, 0, reply(bus_id::BRD_DUMP, start_codes()));
        assert_eq!(
            split_and_apply(&mut sensor, 10, bwtime(start)),
            [Frame::BwTime(start)]
        );
        // The move's squares, then the clock read after the press: held, not a press yet.
        let squares = [field(0x34, 0), field(0x24, 1)];
        assert_eq!(split_and_apply(&mut sensor, 300, update(&squares)).len(), 2);
        assert_eq!(split_and_apply(&mut sensor, 320, bwtime(pressed)), []);
        // The next changes bring the press's tokens: one press, the held read let go.
        let got = split_and_apply(&mut sensor, 600, update(&lever(time(14, 57), time(15, 0))));
        assert_eq!(got, [Frame::BwTime(pressed)]);
        assert_eq!(sensor.clock, Some(pressed));
        // Read again after the press: the same lever, read as it comes.
        assert_eq!(
            split_and_apply(&mut sensor, 620, bwtime(pressed)),
            [Frame::BwTime(pressed)]
        );

        // A lever change the changes never bring (a log written over): the held read follows
        // the next changes' squares.
        let back = clock_after_lever(&pressed, None, Some(time(14, 51)), ClockLayout::H17);
        assert_eq!(split_and_apply(&mut sensor, 900, bwtime(back)), []);
        let got = split_and_apply(&mut sensor, 1200, update(&[field(0x0c, 0)]));
        assert_eq!(
            got,
            [
                Frame::FieldUpdate {
                    square: 0x0c,
                    piece: 0
                },
                Frame::BwTime(back)
            ]
        );
        assert_eq!(sensor.clock, Some(back));
    }

    #[test]
    fn clock_tokens_become_presses_in_their_place_once_a_clock_is_known() {
        let [l1, r1] = lever(time(14, 57), time(15, 0));
        let [l2, r2] = lever(time(14, 57), time(14, 51));
        let tokens = [
            field(0x34, 0),
            field(0x24, 1),
            l1,
            r1,
            field(0x0c, 0),
            l2,
            r2,
        ];
        let Frame::Bus(r) = update(&tokens) else {
            unreachable!()
        };
        // No clock known: the tokens only ask for the clock.
        let fields = fold_in_order(&r, None, ClockLayout::H17);
        assert_eq!(fields, fold_reply(&r).frames);
        assert_eq!(fields.len(), 3);
        let start = clock_at_start();
        let frames = fold_in_order(&r, Some(start), ClockLayout::H17);
        let first = clock_after_lever(
            &start,
            Some(time(14, 57)),
            Some(time(15, 0)),
            ClockLayout::H17,
        );
        let second = clock_after_lever(
            &first,
            Some(time(14, 57)),
            Some(time(14, 51)),
            ClockLayout::H17,
        );
        assert_eq!(
            frames,
            vec![
                Frame::FieldUpdate {
                    square: 0x34,
                    piece: 0
                },
                Frame::FieldUpdate {
                    square: 0x24,
                    piece: 1
                },
                Frame::BwTime(first),
                Frame::FieldUpdate {
                    square: 0x0c,
                    piece: 0
                },
                Frame::BwTime(second),
            ]
        );
        // The same side twice in a row is two lever changes; a lone token is one.
        let [l3, _] = lever(time(14, 50), time(0, 0));
        let Frame::Bus(r) = update(&[l1, l3]) else {
            unreachable!()
        };
        assert_eq!(fold_in_order(&r, Some(start), ClockLayout::H17).len(), 2);
    }

    fn moves(events: &[TrackerEvent]) -> Vec<(String, u64, Option<u64>)> {
        events
            .iter()
            .filter_map(|e| match e {
                TrackerEvent::Move(m) => {
                    Some((m.uci.clone().unwrap_or_default(), m.at_ms, m.clock_white_ms))
                }
                _ => None,
            })
            .collect()
    }

    /// One poll brings White's move, White's press and Black's reply begun: the press is read in
    /// its place, so White's move is recorded one scan after the poll (not after the tracker's
    /// wait for a press), and the clock read that follows is no second press.
    #[test]
    fn a_poll_holding_a_move_its_press_and_the_reply_begun_records_the_move_at_once() {
        let settings = TrackerSettings::default();
        let scan = settings.scan_ms;
        let mut p = Pipeline::<DgtBus>::new(Tracker::new(settings), LawsSetup::default().referee());
        p.feed_split(0, reply(bus_id::BRD_DUMP, start_codes()));
        let start = clock_at_start();
        p.feed_split(20, reply(bus_id::BWTIME, start.0.to_vec()));
        let [l, r] = lever(time(15, 0), time(15, 0));
        // e2-e4, the press, e7 lifted.
        p.feed_split(
            1000,
            update(&[field(0x34, 0), field(0x24, 1), l, r, field(0x0c, 0)]),
        );
        // The master reads the clock at once: the lever as the tokens left it.
        let read = clock_after_lever(
            &start,
            Some(time(15, 0)),
            Some(time(15, 0)),
            ClockLayout::H17,
        );
        p.feed_split(1020, reply(bus_id::BWTIME, read.0.to_vec()));
        for t in (1100..=1500).step_by(100) {
            p.tick(t);
        }
        let events = p.take_events();
        assert_eq!(
            moves(&events),
            vec![("e2e4".to_owned(), 1000 + scan, Some(900_000))]
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, TrackerEvent::Irregularity { .. })),
            "{events:?}"
        );
        // The next poll holds Black's e7-e5 and press, and White's Nf3 and press: the clock
        // read after it shows the lever where it was, yet both presses are read in order. The
        // second press records the first move at once (as on a board on its own port).
        let [bl, br] = lever(time(14, 58), time(14, 59));
        let [wl, wr] = lever(time(14, 58), time(14, 59));
        p.feed_split(
            1800,
            update(&[
                field(0x1c, 7),
                bl,
                br,
                field(0x3e, 0),
                field(0x2d, 3),
                wl,
                wr,
            ]),
        );
        let [last_l, last_r] = [time(14, 58), time(14, 59)];
        let black_pressed = clock_after_lever(&read, Some(last_l), Some(last_r), ClockLayout::H17);
        let now = clock_after_lever(&black_pressed, Some(last_l), Some(last_r), ClockLayout::H17);
        assert_eq!(now.lever_right_high(), read.lever_right_high());
        p.feed_split(1820, reply(bus_id::BWTIME, now.0.to_vec()));
        for t in (1900..=2200).step_by(100) {
            p.tick(t);
        }
        let later: Vec<_> = moves(&p.take_events())
            .into_iter()
            .map(|m| (m.0, m.1))
            .collect();
        assert_eq!(
            later,
            vec![("e7e5".to_owned(), 1800), ("g1f3".to_owned(), 1800 + scan)]
        );
    }
}
