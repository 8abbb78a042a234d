//! A Certabo or Tabutronic Cerno board as the pipeline reads it: every record is the whole
//! board as chip ids, which its [`Calibration`] turns into pieces; the board has no clock and no
//! memory.
//!
//! Flow: [`CertaboBoard`] is the kind's [`Board`]: the [`Certabo`] wire cuts the records, and
//! [`CertaboSensor`] holds the board's calibration beside the vendor-neutral [`ChessSensor`].
//! - Uncalibrated (a new board, or after [`Board::relearn`]), nothing is reported to the
//!   tracker until a record shows the calibration setup: the start position's 32 squares, and
//!   optionally the extra queens on d3 and d6, each chip steady over two records in a row and no
//!   other square holding a steady chip. Its chips are learnt ([`Calibration::from_setup`]) and
//!   handed to the edge ([`Board::learnt`]), which keeps them per board and gives them back to a
//!   new sensor ([`Board::restore`]): a power cycle or a restart needs no second calibration.
//!   Queens put on d3 and d6 once the rest of the setup was learnt (the start position held
//!   for two records first) are learnt when the board shows them beside the start position.
//! - Calibrated, each square reads as its chip's piece, empty for a blank chip, and
//!   [`code::UNKNOWN`] for a chip the calibration does not know: a piece the board cannot
//!   name, which no position shows, so the board fits nothing until it is resolved. A chip
//!   not known that the record before did not show on that square is a stray and reads empty:
//!   real boards report a random id on an empty square now and then, never the same twice in a
//!   row (every empty square of cer2nut's sixteen calibration records), while a chip on a
//!   square is read the same in every record.
//!   After a reset (a board heard again) the first record has none before it: its unknown
//!   chips read as strays.
//! - Records stream continuously: one that changes no square's code is nothing for the
//!   tracker (a record identical to the last one never does, unless it confirms an unknown
//!   chip).
//!
//! The calibration is learnt with the board lying the normal way (White on its ranks 1 and 2,
//! as every driver assumes); the tracker tells which way a calibrated board lies.

use shakmaty::Color;

use super::chess::ChessSensor;
use crate::{
    arbiter::{LawsSetup, Referee},
    game::{
        GameKind,
        chess::{ChessGame, code, piece_code},
    },
    kind::{BoardKind, DataBits, Link, Parity, SerialSettings, StopBits},
    pipeline::{Applied, Board, Learnt, Notice},
    protocol::certabo::{
        BLACK_EXTRA_QUEEN, Calibration, Certabo, ChipId, Frame, LedAck, LedCommand, Record,
        WHITE_EXTRA_QUEEN, board_index, square_at,
    },
    sensor::Sensed,
    tracker::TrackerSettings,
};

/// A Certabo board, or a Tabutronic Cerno (the same records and LED commands).
pub struct CertaboBoard;

/// The board as sensed, and the calibration that reads its chips.
#[derive(Clone, Debug, Default)]
pub struct CertaboSensor {
    chess: ChessSensor,
    calibration: Option<Calibration>,
    /// The record before: a chip not known that it did not show on its square is a stray.
    last: Option<Record>,
    /// A calibration learnt and not yet handed to the edge.
    learnt: Option<Learnt>,
}

impl CertaboSensor {
    /// The calibration in use, if any.
    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }

    /// The board's square codes (board numbering).
    pub fn codes(&self) -> &[u8; 64] {
        self.chess.codes()
    }

    /// One record; what it did.
    fn record(&mut self, record: Record) -> Applied {
        // With no record before (a new sensor, a board heard again), every chip not known
        // reads as a stray for this one record.
        let before = self
            .last
            .replace(record)
            .unwrap_or(Record([ChipId::EMPTY; 64]));
        if self.calibration.is_none() {
            match learn(&before, &record) {
                Some(calibration) => {
                    self.learnt = Some(Learnt {
                        what: "calibration",
                        text: calibration.to_text(),
                        how: format!(
                            "{} chips from the start position{}",
                            calibration.len(),
                            extra_queens(&calibration, &record)
                        ),
                    });
                    self.calibration = Some(calibration);
                }
                None => return Applied::Nothing,
            }
        }
        let Some(calibration) = self.calibration.as_ref() else {
            return Applied::Nothing;
        };
        let mut codes = square_codes(calibration, &before, &record);
        if let Some(more) = with_extra_queens(calibration, &codes, &record) {
            codes = square_codes(&more, &before, &record);
            self.learnt = Some(Learnt {
                what: "calibration",
                text: more.to_text(),
                how: format!("{} chips: extra queens placed after", more.len()),
            });
            self.calibration = Some(more);
        }
        if self.chess.report_whole(&codes) {
            Applied::Board
        } else {
            Applied::Nothing
        }
    }
}

/// The board's square codes (board numbering, a8 first) from `record`, the record before it
/// being `before`: a known chip is its piece, a blank one empty, an unknown one
/// [`code::UNKNOWN`] if `before` showed it there too, else a stray (empty).
pub fn square_codes(calibration: &Calibration, before: &Record, record: &Record) -> [u8; 64] {
    std::array::from_fn(|i| {
        let chip = record.0[i];
        match calibration.piece(chip) {
            Some(piece) => piece_code(piece),
            None if chip.is_blank() || before.0[i] != chip => code::EMPTY,
            None => code::UNKNOWN,
        }
    })
}

/// The calibration two records in a row show, if they show the calibration setup: each chip
/// steady, the start position's 32 squares held, nothing steady elsewhere but on d3 and d6.
fn learn(before: &Record, record: &Record) -> Option<Calibration> {
    let start = shakmaty::Board::new();
    let extra = [
        board_index(WHITE_EXTRA_QUEEN),
        board_index(BLACK_EXTRA_QUEEN),
    ];
    let on_start = |i: usize| start.piece_at(square_at(i)).is_some();
    let steady = |i: usize| before.0[i] == record.0[i];
    // The start position's squares still changing (a piece being put down): not yet.
    if (0..64).any(|i| on_start(i) && !steady(i)) {
        return None;
    }
    // A steady chip off the setup's squares: a piece there, so not the setup.
    if (0..64).any(|i| !on_start(i) && !extra.contains(&i) && !record.0[i].is_blank() && steady(i))
    {
        return None;
    }
    // On d3 and d6 a steady chip is an extra queen, any other a stray.
    let setup = Record(std::array::from_fn(|i| {
        if on_start(i) || (extra.contains(&i) && steady(i)) {
            record.0[i]
        } else {
            ChipId::EMPTY
        }
    }));
    Calibration::from_setup(&setup).ok()
}

/// The calibration with the extra queens a calibrated board shows: the start position, and on
/// d3 (d6) an unknown chip, taken for a white (black) queen. None if the board shows anything
/// else, or no such chip.
fn with_extra_queens(
    calibration: &Calibration,
    codes: &[u8; 64],
    record: &Record,
) -> Option<Calibration> {
    let start = ChessGame::reading(&ChessGame::start());
    let mut merged = calibration.clone();
    let mut added = false;
    for (i, &c) in codes.iter().enumerate() {
        let sq = square_at(i);
        let queen = match sq {
            WHITE_EXTRA_QUEEN => Color::White.queen(),
            BLACK_EXTRA_QUEEN => Color::Black.queen(),
            _ if c == start.0[sq.to_usize()] => continue,
            _ => return None,
        };
        match c {
            code::EMPTY => {}
            code::UNKNOWN => {
                merged.learn_chip(record.0[i], queen).ok()?;
                added = true;
            }
            _ => return None,
        }
    }
    added.then_some(merged)
}

/// ", the extra queens on d3 and d6" as the record shows them.
fn extra_queens(calibration: &Calibration, record: &Record) -> String {
    let on = |sq| calibration.piece(record.chip(sq)).is_some();
    match (on(WHITE_EXTRA_QUEEN), on(BLACK_EXTRA_QUEEN)) {
        (true, true) => " and the extra queens on d3 and d6".to_owned(),
        (true, false) => " and the extra white queen on d3".to_owned(),
        (false, true) => " and the extra black queen on d6".to_owned(),
        (false, false) => ", no extra queen".to_owned(),
    }
}

impl Sensed<crate::game::chess::ChessReading> for CertaboSensor {
    #[inline]
    fn key(&self, o: super::Orientation) -> u64 {
        self.chess.key(o)
    }

    fn reading(&self, o: super::Orientation) -> crate::game::chess::ChessReading {
        self.chess.reading(o)
    }

    fn is_known(&self) -> bool {
        self.chess.is_known()
    }
}

impl Board for CertaboBoard {
    type Wire = Certabo;
    type Frame = Frame;
    type Game = ChessGame;
    type Sensor = CertaboSensor;
    type Judge = Referee;
    const KIND: BoardKind = BoardKind::Certabo;
    const VENDOR: &'static str = "Certabo / Tabutronic";
    /// 38400 baud, 8N1, through the board's CP210x bridge (see [`crate::protocol::certabo`]).
    const LINK: Link = Link::Serial(SerialSettings {
        baud: 38_400,
        data_bits: DataBits::Eight,
        parity: Parity::None,
        stop_bits: StopBits::One,
    });
    const REPORTS_CLOCK: bool = false;
    const LEARNS: bool = true;

    fn wire() -> Certabo {
        Certabo
    }

    fn apply(sensor: &mut CertaboSensor, frame: Frame) -> Applied {
        match frame {
            Frame::Pieces(record) => sensor.record(record),
            Frame::LedAck(ack) => Applied::Noted(Notice::Identity {
                what: "LEDs",
                value: match ack {
                    LedAck::L => "one colour",
                    LedAck::D => "RGB",
                }
                .to_owned(),
            }),
            // A Sentio senses no piece's identity: not read.
            other => Applied::Noted(Notice::FrameNotUsed(Box::new(other))),
        }
    }

    fn reset(sensor: &mut CertaboSensor) {
        sensor.chess.reset();
        sensor.last = None;
    }

    fn learnt(sensor: &mut CertaboSensor) -> Option<Learnt> {
        sensor.learnt.take()
    }

    fn restore(sensor: &mut CertaboSensor, text: &str) -> Result<(), String> {
        let calibration = Calibration::from_text(text).map_err(|e| e.to_string())?;
        sensor.calibration = Some(calibration);
        sensor.chess.reset();
        Ok(())
    }

    fn relearn(sensor: &mut CertaboSensor) -> bool {
        sensor.calibration = None;
        sensor.learnt = None;
        sensor.chess.reset();
        true
    }

    /// The board streams its records unasked: the LEDs off (which a board answers with the
    /// letter of its LED kind).
    fn startup() -> Vec<u8> {
        LedCommand::OFF.to_bytes().to_vec()
    }

    /// The same: records come anyway, the answer tells the LED kind.
    fn probe() -> Vec<u8> {
        LedCommand::OFF.to_bytes().to_vec()
    }

    /// Whole positions, several a second (a record every 350 ms or so: a quick capture and
    /// recapture can fall between two).
    fn settings(laws: &LawsSetup) -> TrackerSettings {
        TrackerSettings {
            whole_reports: true,
            // A capture and its recapture on one square can fall between two records, after
            // any recorded move (records 350 ms apart show no resting square to revise).
            two_ply_min_distance: 2,
            move_stood_ms: 0,
            ..laws.tracker_settings()
        }
    }

    fn judge(laws: &LawsSetup) -> Referee {
        laws.referee()
    }
}

#[cfg(test)]
mod tests;
