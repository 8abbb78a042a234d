//! The game interface: what the tracker needs to know about a game kind.
//!
//! One game kind (chess on `shakmaty`, togyz korgool on our own rules) implements [`GameKind`]:
//! a position, its legal moves, playing a move, what the sensors should read for a position, and
//! notation. The tracker is written once over this trait. Sensor readings are compared by a 64-bit
//! key first (cheap, incremental) and by value only on a key hit. A [`Variant`] says which start
//! positions a game may begin from (chess: the standard one, or any of the 960 of Chess960).

pub mod chess;
pub mod togyz;

use std::fmt::Debug;

use crate::phrase::Phrase;

/// Plies a game's lists (the tracker's, the referee's) hold before they first grow: most games
/// end within them, so a game's positions are not copied again and again as it goes on.
pub(crate) const PLIES_RESERVED: usize = 128;

/// A game's list of what each position holds, from the start's `first`, with room for
/// [`PLIES_RESERVED`] plies after it.
pub(crate) fn list_from_start<T>(first: T) -> Vec<T> {
    let mut list = Vec::with_capacity(PLIES_RESERVED + 1);
    list.push(first);
    list
}

/// Which game a board plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Chess,
    Togyz,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Chess => "chess",
            Kind::Togyz => "togyz",
        }
    }

    pub fn from_str_opt(s: &str) -> Option<Kind> {
        match s {
            "chess" => Some(Kind::Chess),
            "togyz" => Some(Kind::Togyz),
            _ => None,
        }
    }
}

/// Which start positions the games of an event begin from (`[tournament] variant`,
/// `--variant`). Only chess has variants; a togyz korgool board always plays the one game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// The standard start position.
    #[default]
    Standard,
    /// Any of the 960 start positions of Chess960 (FIDE Laws, Chess960 guidelines), with its
    /// castling rules.
    Chess960,
}

impl Variant {
    /// Every variant, as the config names them.
    pub const ALL: [Variant; 2] = [Variant::Standard, Variant::Chess960];

    /// The config name: `"standard"` or `"chess960"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Chess960 => "chess960",
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A variant name that is none of [`Variant::ALL`].
#[derive(Debug, thiserror::Error)]
#[error("unknown variant {0:?}; valid: standard, chess960")]
pub struct UnknownVariant(pub String);

impl std::str::FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        let name = s.trim().to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.as_str() == name)
            .ok_or_else(|| UnknownVariant(s.to_owned()))
    }
}

/// A finished game's outcome as the rules decide it over the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    WhiteWins,
    BlackWins,
    Draw,
}

impl Outcome {
    pub fn as_pgn(self) -> &'static str {
        match self {
            Outcome::WhiteWins => "1-0",
            Outcome::BlackWins => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }
}

/// How a board that no legal move explains departs from a position (Article 7 for chess).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Departure {
    /// Part-way through a legal move (a piece in the hand, a capture half done): nothing to report.
    InProgress,
    /// One piece of the side to move was moved in a way the rules forbid; an illegal move once
    /// the clock is pressed. `detail` says which and why.
    IllegalMove { detail: Phrase },
    /// Pieces are missing that a move in progress could have lifted (the mover's own, or one he
    /// may capture), so only time tells a piece in the hand from one knocked over (sensors cannot
    /// see a piece lying on its side); `detail` lists them.
    Missing { detail: Phrase },
    /// Pieces stand where no move puts them (knocked, displaced, missing); `detail` lists them.
    Displaced { detail: Phrase },
}

impl Departure {
    /// Whether the board may be a move under way: part-way through a legal move, or pieces
    /// lifted that a move could have lifted (a piece in the hand).
    pub fn is_under_way(&self) -> bool {
        matches!(self, Departure::InProgress | Departure::Missing { .. })
    }
}

/// A game kind, as the tracker sees it.
pub trait GameKind: Send + 'static {
    type Position: Clone + Debug + Send;
    type Move: Clone + Debug + PartialEq + Send;
    /// What the sensors read, already oriented (for chess: 64 piece codes, a1 = index 0).
    type Reading: Clone + Debug + PartialEq + Send;

    const KIND: Kind;

    /// The most places of a reading one move changes (chess: four, castling; togyz korgool: a
    /// sowing can reach every location). Bounds the tracker's searches and what counts as a
    /// displaced board rather than a reset.
    const MOVE_SPAN: usize;

    /// How many plies a clock press confirmed the tracker may still revise when a later board
    /// shows they were misread (chess: 2, a hand resting on a neighbouring square; togyz
    /// korgool: 0, a move is irrevocable once a korgool is sown, [KG 1.7], and a hand resting on a
    /// pit must not undo pressed moves).
    const REVISABLE_CONFIRMED_PLIES: usize;

    /// The start position of a game.
    fn start() -> Self::Position;

    /// Every start position a game of `variant` may begin from; the first is the one a game
    /// begun on a wrong set-up is compared with. Default: [`GameKind::start`] alone.
    fn starts(_variant: Variant) -> Vec<Self::Position> {
        vec![Self::start()]
    }

    /// Reads a start position written with [`GameKind::position_text`] (a stored game's start,
    /// to resume it), if the game kind can.
    fn parse_start(_text: &str) -> Option<Self::Position> {
        None
    }

    /// What a correctly set board reads for `pos`.
    fn reading(pos: &Self::Position) -> Self::Reading;

    /// The key of a reading: equal readings have equal keys.
    fn reading_key(reading: &Self::Reading) -> u64;

    /// Every legal move from `pos` (whose reading has key `key`) with the key of the reading it
    /// leads to; `out` is cleared first.
    fn successors(pos: &Self::Position, key: u64, out: &mut Vec<(u64, Self::Move)>);

    /// Plays a legal move (one returned by [`GameKind::successors`]).
    fn play(pos: &Self::Position, mv: &Self::Move) -> Self::Position;

    /// Notation of `mv` played from `pos` (SAN for chess).
    /// `after` is `mv` played from `pos`; `after_has_moves` says whether it has a legal move (the
    /// tracker knows it already; chess needs it for `#`).
    fn notation(
        pos: &Self::Position,
        mv: &Self::Move,
        after: &Self::Position,
        after_has_moves: bool,
    ) -> String;

    /// [`GameKind::notation`], the same text, given `legal`: every legal move from `pos` with
    /// its key, as [`GameKind::successors`] lists them. The tracker has them for every move it
    /// records, so a game may write its notation from them rather than search its moves again
    /// (chess: the moves a SAN tells apart). Default: `notation`.
    fn notation_among(
        pos: &Self::Position,
        mv: &Self::Move,
        legal: &[(u64, Self::Move)],
        after: &Self::Position,
        after_has_moves: bool,
    ) -> String {
        let _ = legal;
        Self::notation(pos, mv, after, after_has_moves)
    }

    /// Machine notation (UCI for chess), where the game has one.
    fn uci(pos: &Self::Position, mv: &Self::Move) -> Option<String>;

    /// Text of a position (FEN for chess).
    fn position_text(pos: &Self::Position) -> String;

    /// Text of what the sensors read, in the form of [`GameKind::position_text`] where the game
    /// has one (a chess FEN's placement; a togyz korgool FEN, white to move), so that a page can
    /// draw it beside a position. Default: its `Debug`.
    fn reading_text(reading: &Self::Reading) -> String {
        format!("{reading:?}")
    }

    /// Parses a move recorded with [`GameKind::uci`] or [`GameKind::notation`] (to resume a game).
    fn parse_move(pos: &Self::Position, text: &str) -> Option<Self::Move>;

    /// The result decided by the position alone, with its termination (`"checkmate"`,
    /// `"stalemate"`), if the game is over.
    /// `has_moves` says whether `pos` has a legal move.
    fn outcome(pos: &Self::Position, has_moves: bool) -> Option<(Outcome, &'static str)>;

    /// A result signalled with the pieces (DGT: both kings on the centre squares), if `reading`
    /// shows one. Never a move.
    fn result_gesture(_reading: &Self::Reading) -> Option<Outcome> {
        None
    }

    /// A result shown with a token placed on the board (DGT: the three "magic" result pieces),
    /// if `reading` holds one. Never a move.
    fn result_token(_reading: &Self::Reading) -> Option<Outcome> {
        None
    }

    /// Whether `shown` differs from `before` only by a result shown on it (the kings moved to
    /// the centre, a result token put down): nothing else was played. The default: at most four
    /// places differ.
    fn shows_only_result(before: &Self::Reading, shown: &Self::Reading) -> bool {
        Self::reading_distance(before, shown) <= 4
    }

    /// Whether `mv` from `pos` could be the first half of a result gesture (a king stepping onto a
    /// centre square), so that it is dropped rather than recorded when the gesture follows.
    fn gesture_may_include(_pos: &Self::Position, _mv: &Self::Move) -> bool {
        false
    }

    /// Whether `then` (from the position `first` was made from) could be `first`'s piece going
    /// on its way: a slide that rested on `first`'s target, a castling begun with its rook.
    /// Used where a move shown whole is revised with the reply under way, on a board whose
    /// readings come so far apart that a move shown whole was made
    /// (`TrackerSettings::move_stood_ms` 0). The default: any move may.
    fn continues(_first: &Self::Move, _then: &Self::Move) -> bool {
        true
    }

    /// Whether `sensed` could show `mv` (from `pos`) already made: a cheap necessary condition
    /// used to prune the search for two plies played before the board settled.
    fn may_show(_pos: &Self::Position, _mv: &Self::Move, _sensed: &Self::Reading) -> bool {
        true
    }

    /// Number of places where two readings differ (used to bound expensive searches).
    fn reading_distance(a: &Self::Reading, b: &Self::Reading) -> usize;

    /// A lower bound on the plies from `pos` to a position that reads `target`: the search
    /// after a gap prunes a line that cannot reach the board in the plies left. The default:
    /// every ply changes at most [`GameKind::MOVE_SPAN`] places.
    fn plies_needed(pos: &Self::Position, target: &Self::Reading) -> usize {
        Self::reading_distance(&Self::reading(pos), target).div_ceil(Self::MOVE_SPAN)
    }

    /// How `reading` departs from `pos` (whose legal moves are `succ`). `pressed`: the clock was
    /// just pressed, so a move left half-done (a pawn on the last rank) is complete.
    fn departure(
        _pos: &Self::Position,
        _succ: &[(u64, Self::Move)],
        _reading: &Self::Reading,
        _pressed: bool,
    ) -> Departure {
        Departure::InProgress
    }

    /// If `reading` is a complete set-up that is not a start position of `variant` (pieces
    /// swapped), what is wrong with it.
    fn wrong_setup(_reading: &Self::Reading, _variant: Variant) -> Option<Phrase> {
        None
    }

    /// If `reading` shows a position no legal game reaches and an arbiter must end (chess: both
    /// kings in check, or a pawn on its last rank; FIDE A.5.4), what it shows.
    fn illegal_position(_reading: &Self::Reading) -> Option<Phrase> {
        None
    }
}
