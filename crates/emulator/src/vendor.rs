//! What every vendor's chessboard script shares: a DGT board's script (its hands, its plies and
//! irregularities) played on another vendor's board keeps everything but its traffic.
//!
//! Flow: a vendor module ([`crate::chesslink`], [`crate::ichessone`], …) writes its handshake
//! with [`handshake`], its body with [`held_states`] (a board that reports its state once it
//! held for the board's debounce or scan) or its own sampling, and wraps its events with
//! [`from_hands`]. Pure.

use boardscribe_core::{
    Millis,
    protocol::{Direction, dgt},
};

use super::{
    BoardScript, EventKind, IrregularityInfo, PlyInfo,
    script::{Event, Payload, Script, ScriptBoard},
};

/// A vendor chessboard as its script is written: the squares in board numbering, the DGT
/// script's plies and irregularities.
pub(crate) trait VendorBoard:
    ScriptBoard<
        Action = (),
        Ply = PlyInfo,
        Dump = [u8; 64],
        Gesture = (u8, u8),
        Irregularity = IrregularityInfo,
    >
{
}

impl<B> VendorBoard for B where
    B: ScriptBoard<
            Action = (),
            Ply = PlyInfo,
            Dump = [u8; 64],
            Gesture = (u8, u8),
            Irregularity = IrregularityInfo,
        >
{
}

/// An event of the handshake at `at_ms`.
pub(crate) fn handshake<B: VendorBoard>(
    at_ms: Millis,
    dir: Direction,
    payload: Payload<B::Frame>,
) -> Event<B> {
    Event {
        at_ms,
        dir,
        payload,
        kind: EventKind::Handshake,
        action: (),
        ply: 0,
    }
}

/// The body of a board that reports its state once it has held for `hold_ms` (a debounce, a
/// scan): the board after each instant's changes of `dgt`'s hands, sent as `frame` of it
/// `hold_ms` later if nothing changed meanwhile, never if something did, and never twice alike.
pub(crate) fn held_states<B: VendorBoard>(
    dgt: &BoardScript,
    hold_ms: Millis,
    frame: impl Fn(&[u8; 64]) -> B::Frame,
) -> Vec<Event<B>> {
    let mut events = Vec::new();
    let mut board = dgt.start_dump.0;
    let mut pending: Option<(Millis, [u8; 64], EventKind, u32)> = None;
    let mut sent = board;
    let mut flush = |pending: &mut Option<(Millis, [u8; 64], EventKind, u32)>,
                     until: Option<Millis>,
                     events: &mut Vec<Event<B>>| {
        if let Some((at, state, kind, ply)) = *pending
            && until.is_none_or(|t| t >= at + hold_ms)
        {
            if state != sent {
                sent = state;
                events.push(Event {
                    at_ms: at + hold_ms,
                    dir: Direction::FromBoard,
                    payload: Payload::Frame(frame(&state)),
                    kind,
                    action: (),
                    ply,
                });
            }
            *pending = None;
        }
    };
    for e in dgt.events.iter().filter(|e| e.kind != EventKind::Handshake) {
        let Payload::Frame(f) = &e.payload else {
            continue;
        };
        match f {
            dgt::Frame::FieldUpdate { square, piece } => {
                if let Some(s) = board.get_mut(usize::from(*square)) {
                    *s = *piece;
                }
            }
            dgt::Frame::BoardDump(d) => board = d.0,
            // No clock, no memory, no identity frames on these boards.
            _ => continue,
        }
        // A change at another instant than the one pending: the pending state is sent if it
        // held long enough, never seen if not.
        if pending.is_some_and(|(at, ..)| at != e.at_ms) {
            flush(&mut pending, Some(e.at_ms), &mut events);
        }
        pending = Some((e.at_ms, board, e.kind, e.ply));
    }
    flush(&mut pending, None, &mut events);
    events
}

/// `events` (in any order) as the script of `dgt`'s hands on a vendor's board: its plies,
/// start, clock, result gesture and irregularities are the DGT script's.
pub(crate) fn from_hands<B: VendorBoard>(
    dgt: &BoardScript,
    mut events: Vec<Event<B>>,
) -> Script<B> {
    events.sort_by_key(|e| e.at_ms);
    Script {
        events,
        plies: dgt.plies.clone(),
        start_dump: dgt.start_dump.0,
        initial_clock: dgt.initial_clock,
        serial: dgt.serial.clone(),
        rotated: dgt.rotated,
        body_start_ms: dgt.body_start_ms,
        result_gesture: dgt.result_gesture,
        irregularities: dgt.irregularities.clone(),
    }
}

/// A short game's hands without a clock at `speed` (Ruy Lopez, exchange variation: captures,
/// recaptures and a castling): what each vendor's script is tested on.
#[cfg(test)]
pub(crate) fn test_hands(speed: f64) -> BoardScript {
    let pgn = "[Event \"t\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6 *\n";
    let games = crate::games_from_pgn(pgn).unwrap_or_default();
    let opts = crate::EmulatorOptions {
        speed,
        clock: false,
        ..crate::EmulatorOptions::default()
    };
    crate::script_pgn(&games[0], &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Checks a board that sends its state once it held `hold_ms` ([`held_states`]), scripted by
/// `script_of` from the test game's hands at blitz, human and slow speed: every ply ends in a
/// frame of its board (`frame` of the board after it) sent at least `hold_ms` after its last
/// hand, times never go back, no two frames in a row after the handshake are alike, and the
/// capture names the board's device.
#[cfg(test)]
pub(crate) fn assert_sends_held_states<B: VendorBoard>(
    script_of: fn(&BoardScript) -> Script<B>,
    hold_ms: Millis,
    frame: impl Fn(&[u8; 64]) -> B::Frame,
) {
    for speed in [0.3, 1.0, 3.0] {
        let dgt = test_hands(speed);
        let script = script_of(&dgt);
        let sent: Vec<(Millis, &B::Frame)> = script
            .events
            .iter()
            .filter(|e| e.kind != EventKind::Handshake)
            .filter_map(|e| match &e.payload {
                Payload::Frame(f) => Some((e.at_ms, f)),
                Payload::Command(_) => None,
            })
            .collect();
        for p in &dgt.plies {
            let after = frame(&p.board_after.0);
            assert!(
                sent.iter()
                    .any(|(t, f)| **f == after && *t >= p.end_ms + hold_ms),
                "ply {} at x{speed}",
                p.ply
            );
        }
        assert!(script.events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert!(sent.windows(2).all(|w| w[0].1 != w[1].1));
        let capture = script.to_capture_text();
        assert!(
            capture.contains(&format!("device: {}", B::DEVICE)),
            "{capture}"
        );
    }
}
