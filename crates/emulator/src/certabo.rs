//! An emulated Certabo board: the same hands as the DGT emulator's, on an RFID board that
//! streams a record of every square's chip id several times a second, and has no clock.
//!
//! Flow: [`certabo_script`] takes a DGT board's script (its clock frames are left out) and
//! follows its square changes with a chip per piece ([`Chips`]): the 32 pieces of the start
//! position each have their own chip, and two extra queens stand on d3 and d6 while the board is
//! calibrated, then go in the box. A piece put down is the one lifted last with its code (the
//! piece moved; for a promotion, a captured piece of the role), else an extra queen, else a chip
//! the calibration never saw ([`UNKNOWN_CHIP`]). The board is then sampled every [`RECORD_MS`]
//! into a record. The script opens with the calibration setup (the start position and the
//! extra queens, the board lying the normal way) for [`CALIBRATION_MS`], then the queens taken
//! off and the board as the game begins (turned round if the DGT script's board is). The
//! handshake is the host's start-up (the LEDs off) and the board's `L`.
//! [`certabo_script_calibrated`] plays a board calibrated before: no setup, straight to the
//! game's board (the pty runner's capture then says the calibration, [`calibration`]). The pty runner plays
//! the result like any other script and answers the LED commands with `L` ([`crate::pty`]).
//! Pure.
//!
//! The record rate is not published: a record is about 1,300 bytes, which 38400 8N1 carries
//! in 0.34 s, and the drivers read records back to back (cer2nut, picochess). We take one every
//! 350 ms (the line's rate); Certabo's own board simulator sends one a second. A record is the
//! board at one instant (a real board scans its squares one after another during the record).

use boardscribe_core::{
    Millis,
    game::chess::code,
    kind::BoardKind,
    protocol::{
        Direction,
        certabo::{
            BLACK_EXTRA_QUEEN, Calibration, ChipId, Frame, LedAck, Record, WHITE_EXTRA_QUEEN,
            board_index,
        },
        dgt,
    },
    sensor::certabo::CertaboBoard as Sensor,
};

use super::{
    BoardScript, EventKind, IrregularityInfo, PlyInfo,
    pty::{Answer, Emulated},
    script::{Event, Payload, Script, ScriptBoard, WireFrame},
    vendor::{from_hands, handshake},
};

/// How often the board sends a record (see the module doc).
pub const RECORD_MS: Millis = 350;

/// How long the calibration setup stands before the game's board.
pub const CALIBRATION_MS: Millis = 1_200;

/// How long the board keeps streaming after the script's last change.
const TAIL_MS: Millis = 2_000;

/// The chip a promotion puts down when no piece of its role is in the box: one the calibration
/// never learnt.
pub const UNKNOWN_CHIP: ChipId = ChipId([7, 7, 86, 1, 1]);

/// A Certabo board, as its script is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CertaboBoard;

impl WireFrame for Frame {
    fn wire_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl ScriptBoard for CertaboBoard {
    type Frame = Frame;
    type Action = ();
    type Ply = PlyInfo;
    /// The squares in board numbering (0 = a8 on a board lying normally), square codes.
    type Dump = [u8; 64];
    /// The kings' centre squares (board indices: white king, black king).
    type Gesture = (u8, u8);
    type Irregularity = IrregularityInfo;
    const DEVICE: &'static str = BoardKind::Certabo.name();
    const SOURCE: &'static str = "boardscribe Certabo emulator script";
}

/// A chess game as the timed traffic of a Certabo board.
pub type CertaboScript = Script<CertaboBoard>;

/// On its pty, the board streams its records and acknowledges LED commands.
impl Emulated for CertaboBoard {
    /// Nothing to answer from: the records are the script's.
    type State = ();
    const NAME: &'static str = "emulated Certabo board";

    fn start_state(_script: &CertaboScript) {}

    /// The board's records (the handshake's host commands are the daemon's to send).
    fn in_body(e: &Event<CertaboBoard>) -> bool {
        e.dir == Direction::FromBoard && matches!(e.payload, Payload::Frame(Frame::Pieces(_)))
    }

    /// A board calibrated before the script (it opens without the calibration setup): its
    /// calibration, as a daemon that kept it gives it back.
    fn capture_extra(script: &CertaboScript) -> Vec<(String, String)> {
        if script.opens_calibrating() {
            return Vec::new();
        }
        vec![(
            boardscribe_core::capture::LEARNT_HEADER.to_owned(),
            calibration().to_text(),
        )]
    }

    /// An LED command (8 bytes, no framing): answered `L` (one-colour LEDs), as cer2nut reads
    /// a Certabo board; the board streams from then on (a real one streams from power-up: the
    /// host's start-up is what starts the script's clock here).
    fn command(buf: &[u8], _state: &mut ()) -> Option<(usize, Answer)> {
        use boardscribe_core::protocol::certabo::LED_COMMAND_LEN;
        if buf.len() < LED_COMMAND_LEN {
            return None;
        }
        let answer = Answer {
            reply: Some(Frame::LedAck(LedAck::L).to_bytes()),
            reports: Some(true),
        };
        Some((LED_COMMAND_LEN, answer))
    }
}

/// The chip of the piece that stands on board index `i` in the calibration setup.
pub fn setup_chip(i: usize) -> ChipId {
    ChipId([3, 0, 86, i as u8, 1])
}

/// The pieces' chips on the board and in the box.
#[derive(Clone, Debug)]
pub struct Chips {
    codes: [u8; 64],
    on: [ChipId; 64],
    /// Off the board (in the hand or the box), with their codes, the last lifted last.
    off: Vec<(u8, ChipId)>,
}

impl Chips {
    /// The calibration setup: the start position and both extra queens, lying normally.
    pub fn calibration_setup() -> Chips {
        let start = shakmaty::Board::new();
        let mut chips = Chips {
            codes: [code::EMPTY; 64],
            on: [ChipId::EMPTY; 64],
            off: Vec::new(),
        };
        for i in 0..64 {
            let sq = boardscribe_core::protocol::certabo::square_at(i);
            let piece = if sq == WHITE_EXTRA_QUEEN {
                Some(shakmaty::Color::White.queen())
            } else if sq == BLACK_EXTRA_QUEEN {
                Some(shakmaty::Color::Black.queen())
            } else {
                start.piece_at(sq)
            };
            if let Some(p) = piece {
                chips.codes[i] = boardscribe_core::game::chess::piece_code(p);
                chips.on[i] = setup_chip(i);
            }
        }
        chips
    }

    /// The record the board sends.
    pub fn record(&self) -> Record {
        Record(self.on)
    }

    /// Square `i` now holds `code` (a DGT field update): the chip of the piece put down.
    pub fn set(&mut self, i: usize, new: u8) {
        let Some(&old) = self.codes.get(i) else {
            return;
        };
        if old == new {
            return;
        }
        if old != code::EMPTY {
            self.off.push((old, self.on[i]));
        }
        let chip = if new == code::EMPTY {
            ChipId::EMPTY
        } else {
            match self.off.iter().rposition(|&(c, _)| c == new) {
                Some(k) => self.off.remove(k).1,
                None => UNKNOWN_CHIP,
            }
        };
        self.codes[i] = new;
        self.on[i] = chip;
    }

    /// The board set to `codes` (a whole dump): each square as [`Chips::set`] does it, the
    /// squares emptied first so that their pieces can be put down elsewhere.
    pub fn set_all(&mut self, codes: &[u8; 64]) {
        for (i, &c) in codes.iter().enumerate() {
            if c != self.codes[i] && self.codes[i] != code::EMPTY {
                self.set(i, code::EMPTY);
            }
        }
        for (i, &c) in codes.iter().enumerate() {
            self.set(i, c);
        }
    }

    /// Whether a piece of `code` is off the board.
    pub fn has_off(&self, code: u8) -> bool {
        self.off.iter().any(|&(c, _)| c == code)
    }

    /// The square codes.
    pub fn codes(&self) -> &[u8; 64] {
        &self.codes
    }
}

/// The calibration of every emulated board: its setup's 34 chips.
pub fn calibration() -> Calibration {
    Calibration::from_setup(&Chips::calibration_setup().record()).unwrap_or_default()
}

impl CertaboScript {
    /// Whether the board opens with the calibration setup (else it was calibrated before).
    pub fn opens_calibrating(&self) -> bool {
        let d3 = board_index(WHITE_EXTRA_QUEEN);
        self.events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::Frame(Frame::Pieces(r)) => Some(!r.0[d3].is_blank()),
                _ => None,
            })
            .unwrap_or(false)
    }
}

/// `dgt` played on a Certabo board (see the module doc), opening with the calibration setup.
pub fn certabo_script(dgt: &BoardScript) -> CertaboScript {
    script(dgt, true)
}

/// `dgt` played on a Certabo board calibrated before: it opens with the game's board, the
/// extra queens in the box.
pub fn certabo_script_calibrated(dgt: &BoardScript) -> CertaboScript {
    script(dgt, false)
}

fn script(dgt: &BoardScript, calibrating: bool) -> CertaboScript {
    let mut events = Vec::new();
    let t0 = dgt.events.first().map_or(0, |e| e.at_ms);
    use boardscribe_core::pipeline::Board as _;
    events.push(handshake(
        t0,
        Direction::ToBoard,
        Payload::Command(Sensor::startup()),
    ));
    events.push(handshake(
        t0 + 5,
        Direction::FromBoard,
        Payload::Frame(Frame::LedAck(LedAck::L)),
    ));
    let start = dgt.body_start_ms;
    let record = |at_ms: Millis, chips: &Chips, kind: EventKind, ply: u32| Event {
        at_ms,
        dir: Direction::FromBoard,
        payload: Payload::Frame(Frame::Pieces(chips.record())),
        kind,
        action: (),
        ply,
    };
    // The calibration setup, lying normally; then the queens in the box and the board as the
    // game begins (turned round, if it is, as the queens come off).
    let mut chips = Chips::calibration_setup();
    let mut t = start;
    while calibrating && t < start + CALIBRATION_MS {
        events.push(record(t, &chips, EventKind::Handshake, 0));
        t += RECORD_MS;
    }
    chips.set(board_index(WHITE_EXTRA_QUEEN), code::EMPTY);
    chips.set(board_index(BLACK_EXTRA_QUEEN), code::EMPTY);
    if dgt.rotated {
        let mut turned = chips.clone();
        turned.codes = std::array::from_fn(|i| chips.codes[63 - i]);
        turned.on = std::array::from_fn(|i| chips.on[63 - i]);
        chips = turned;
    }
    chips.set_all(&dgt.start_dump.0);
    // The game's changes, shifted after the calibration, sampled every RECORD_MS.
    let changes: Vec<(Millis, &dgt::Frame, EventKind, u32)> = dgt
        .events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .filter_map(|e| match &e.payload {
            Payload::Frame(f @ (dgt::Frame::FieldUpdate { .. } | dgt::Frame::BoardDump(_))) => {
                Some((e.at_ms + CALIBRATION_MS, f, e.kind, e.ply))
            }
            _ => None,
        })
        .collect();
    let end = changes.last().map_or(t, |c| c.0) + TAIL_MS;
    let (mut kind, mut ply) = (EventKind::Move, 0);
    let mut next = 0;
    while t <= end {
        while let Some(&(at, frame, k, p)) = changes.get(next)
            && at <= t
        {
            match frame {
                dgt::Frame::FieldUpdate { square, piece } => {
                    // A DGT board may report a piece put down before the square it came from
                    // (its scan reached the one first): that square is empty already.
                    if *piece != code::EMPTY && !chips.has_off(*piece) {
                        let from = changes[next + 1..]
                            .iter()
                            .take_while(|c| c.3 == p)
                            .find_map(|c| match c.1 {
                                dgt::Frame::FieldUpdate {
                                    square: s,
                                    piece: 0,
                                } if chips.codes()[usize::from(*s)] == *piece => {
                                    Some(usize::from(*s))
                                }
                                _ => None,
                            });
                        if let Some(from) = from {
                            chips.set(from, code::EMPTY);
                        }
                    }
                    chips.set(usize::from(*square), *piece);
                }
                dgt::Frame::BoardDump(d) => chips.set_all(&d.0),
                _ => {}
            }
            (kind, ply) = (k, p);
            next += 1;
        }
        events.push(record(t, &chips, kind, ply));
        t += RECORD_MS;
    }
    from_hands(dgt, events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EmulatorOptions, games_from_pgn, script_pgn};

    fn script(pgn: &str, rotated: bool) -> BoardScript {
        let games = games_from_pgn(pgn).unwrap_or_default();
        let opts = EmulatorOptions {
            clock: false,
            rotated,
            ..EmulatorOptions::default()
        };
        script_pgn(&games[0], &opts).unwrap_or_else(|e| panic!("{e}"))
    }

    fn records(s: &CertaboScript) -> Vec<(Millis, Record)> {
        s.events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::Frame(Frame::Pieces(r)) => Some((e.at_ms, *r)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn records_stream_at_the_rate_and_show_every_plys_board() {
        let pgn = "[Event \"t\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6 *\n";
        for rotated in [false, true] {
            let dgt = script(pgn, rotated);
            let s = certabo_script(&dgt);
            let recs = records(&s);
            assert!(recs.windows(2).all(|w| w[1].0 - w[0].0 == RECORD_MS));
            // Calibration from the first records: 34 chips.
            let cal = Calibration::from_setup(&recs[0].1).unwrap_or_default();
            assert_eq!(cal.len(), 34);
            // Every ply's board that held for a record's time shows in one, read through the
            // calibration (a reply begun sooner comes in the same record as the move).
            let held = |p: &PlyInfo| {
                let next = dgt.plies.iter().find(|q| q.ply == p.ply + 1);
                next.is_none_or(|q| q.start_ms >= p.end_ms + RECORD_MS)
            };
            assert!(dgt.plies.iter().filter(|p| held(p)).count() * 2 > dgt.plies.len());
            for p in dgt.plies.iter().filter(|p| held(p)) {
                let want = p.board_after.0;
                assert!(
                    recs.iter().any(|(_, r)| {
                        cal.reading(r).map(|c| {
                            c.piece()
                                .map_or(code::EMPTY, boardscribe_core::game::chess::piece_code)
                        }) == want
                    }),
                    "ply {} rotated {rotated}",
                    p.ply
                );
            }
            assert!(s.to_capture_text().contains("device: certabo"));
        }
    }

    #[test]
    fn a_promotion_takes_a_captured_piece_then_an_extra_queen_then_an_unknown_chip() {
        let mut chips = Chips::calibration_setup();
        let d3 = board_index(WHITE_EXTRA_QUEEN);
        let d6 = board_index(BLACK_EXTRA_QUEEN);
        chips.set(d3, code::EMPTY);
        chips.set(d6, code::EMPTY);
        // The white queen captured (off the board), a white pawn promoted on a8: the captured
        // queen's chip comes back.
        let d1 = board_index(shakmaty::Square::D1);
        let a8 = board_index(shakmaty::Square::A8);
        chips.set(d1, code::EMPTY);
        chips.set(a8, code::EMPTY);
        chips.set(a8, code::WQUEEN);
        assert_eq!(chips.record().0[a8], setup_chip(d1));
        // Another: the extra queen.
        let b8 = board_index(shakmaty::Square::B8);
        chips.set(b8, code::EMPTY);
        chips.set(b8, code::WQUEEN);
        assert_eq!(chips.record().0[b8], setup_chip(d3));
        // A third: no chip the calibration knows.
        let c8 = board_index(shakmaty::Square::C8);
        chips.set(c8, code::EMPTY);
        chips.set(c8, code::WQUEEN);
        assert_eq!(chips.record().0[c8], UNKNOWN_CHIP);
        // A move takes the piece lifted: the knight's chip goes with it.
        let g1 = board_index(shakmaty::Square::G1);
        let f3 = board_index(shakmaty::Square::F3);
        chips.set(g1, code::EMPTY);
        chips.set(f3, code::WKNIGHT);
        assert_eq!(chips.record().0[f3], setup_chip(g1));
    }
}
