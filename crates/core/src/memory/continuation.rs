//! After a gap: the plies a board's memory holds beyond the record. Flow: the log is read into
//! games ([`super::games_from_log_in`], under the live game's variant and clock side), the latest
//! game that begins with the record is taken (its clocks agreeing best with the record's), and the
//! plies after the record are returned, with those still in the hand apart ([`Continuation`]).

use super::*;

/// The plies board memory holds beyond a record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Continuation {
    /// Completed while the log went on, with the clocks the log holds.
    pub recorded: Vec<RecordedMove>,
    /// On the board when the memory was read, its press not in the log yet (their clocks are
    /// not theirs: a press still to come will stamp them).
    pub in_hand: Vec<RecordedMove>,
}

/// What the live recording knows of the game its board's memory is read for.
#[derive(Clone, Copy, Debug)]
pub struct Recording<'a> {
    pub orientation: Orientation,
    pub variant: Variant,
    /// Which clock is White's, when the live clock readings have settled it.
    pub white_on_left: Option<bool>,
    /// The game's start position as the store keeps it (`None`: the standard one).
    pub start: Option<&'a str>,
    /// The recorded plies, each as its UCI.
    pub record: &'a [String],
    /// The clocks (White's, Black's) each recorded ply's press showed, where one did: a log
    /// read without the clock side is checked against them.
    pub clocks: &'a [Option<(u64, u64)>],
}

/// What board memory holds beyond a record: the plies after `recording.record` of the latest
/// game in the log, played in its orientation, that begins with every recorded ply. The log is
/// read through the same tracker as a live board ([`games_from_log`]), under the recording's
/// variant and clock side, so a ply found here is one the board showed. What the pipeline reading
/// the log noticed goes into `notices`. Pure.
pub fn continuation(
    log: &[u8],
    recording: &Recording,
    notices: &mut Vec<Notice>,
) -> Result<Continuation, MemoryError> {
    let Recording {
        orientation,
        variant,
        white_on_left,
        record,
        clocks,
        ..
    } = *recording;
    let tokens = parse_log(log)?;
    let not_in_memory = MemoryError::NotInMemory {
        plies: record.len(),
    };
    let games = games_from_log_as(&tokens, 0, variant, white_on_left, notices);
    let mut game = latest_with_record(&games, orientation, record)
        .ok_or(not_in_memory)?
        .clone();
    // Which clock is White's, if not given, the log's own readings tell. If the game read so
    // does not give the record's press clocks (its presses taken for the other side's, each a
    // move late: a reading that also fits the log), the log is read again with each side, and
    // the one that gives them is taken.
    // (With no press clock recorded there is nothing to tell them apart: no reading again.)
    let pressed = clocks.iter().any(Option::is_some);
    if white_on_left.is_none() && pressed && clocks_agree(&game, clocks) <= 0 {
        let mut best = 0;
        for side in [true, false] {
            let again = games_from_log_as(&tokens, 0, variant, Some(side), notices);
            if let Some(g) = latest_with_record(&again, orientation, record) {
                let agree = clocks_agree(g, clocks);
                if agree > best {
                    best = agree;
                    game = g.clone();
                }
            }
        }
    }
    let split = game.confirmed.max(record.len());
    Ok(Continuation {
        recorded: game.moves[record.len()..split].to_vec(),
        in_hand: game.moves[split..].to_vec(),
    })
}

/// The latest game of `games` played in `orientation` that begins with every ply of `record`
/// (with nothing recorded yet, only the latest game can be the one).
pub(super) fn latest_with_record<'g>(
    games: &'g [MemoryGame],
    orientation: Orientation,
    record: &[String],
) -> Option<&'g MemoryGame> {
    let begins_with_record = |g: &&MemoryGame| {
        g.orientation == orientation
            && g.moves.len() >= record.len()
            && g.moves
                .iter()
                .zip(record)
                .all(|(m, r)| m.uci.as_deref().unwrap_or(&m.notation) == r)
    };
    if record.is_empty() {
        games.last().filter(begins_with_record)
    } else {
        games.iter().rev().find(begins_with_record)
    }
}

/// How many of the recorded plies' press clocks the game read from the log gives the same way
/// round, less those it gives swapped.
pub(super) fn clocks_agree(game: &MemoryGame, clocks: &[Option<(u64, u64)>]) -> i64 {
    game.moves
        .iter()
        .zip(clocks)
        .filter_map(|(m, c)| Some((m.clock_white_ms?, m.clock_black_ms?, (*c)?)))
        .filter(|(w, b, (rw, rb))| w != b && rw != rb)
        .map(|(w, b, (rw, rb))| {
            if (w, b) == (rw, rb) {
                1
            } else if (w, b) == (rb, rw) {
                -1
            } else {
                0
            }
        })
        .sum()
}

/// The live moves after every move, revision and takeback of one game.
pub(super) fn live_moves(events: &[TrackerEvent]) -> Vec<RecordedMove> {
    let mut moves: Vec<RecordedMove> = Vec::new();
    for e in events {
        match e {
            TrackerEvent::Move(mv) => {
                moves.truncate(mv.ply.saturating_sub(1) as usize);
                moves.push(mv.clone());
            }
            TrackerEvent::Revision { new, .. } => {
                moves.truncate(new.ply.saturating_sub(1) as usize);
                moves.push(new.clone());
            }
            TrackerEvent::Takeback { to_ply, .. } => moves.truncate(*to_ply as usize),
            _ => {}
        }
    }
    moves
}
