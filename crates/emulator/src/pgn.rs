//! PGN games for the emulator: tags, the main line as legal moves, the result.
//!
//! Flow: `pgn-reader` visits each game; SAN tokens are resolved against the position (from
//! the `FEN` tag if there is one, in Chess960 castling mode under `[Variant "Chess960"]`) and
//! played; variations and comments are skipped.

use std::{io::Cursor, ops::ControlFlow};

use pgn_reader::{KnownOutcome, RawTag, Reader, SanPlus, Visitor};
use shakmaty::{CastlingMode, Chess, Color, Move, fen::Fen};

use super::EmulatorError;
use boardscribe_core::game::Outcome;

/// One game of a PGN file.
#[derive(Clone, Debug)]
pub struct PgnGame {
    /// Tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// The start position (standard, or from the `FEN` tag).
    pub start: Chess,
    /// The main line.
    pub moves: Vec<Move>,
    /// The main line in SAN as written by us (with check marks).
    pub sans: Vec<String>,
    /// From the movetext termination, else the `Result` tag; `None` for `*`.
    pub outcome: Option<Outcome>,
}

impl PgnGame {
    /// The value of a tag, if present.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Movetext {
    tags: Vec<(String, String)>,
    start: Chess,
    pos: Chess,
    moves: Vec<Move>,
    sans: Vec<String>,
    outcome: Option<Outcome>,
    error: Option<String>,
}

struct GameVisitor;

fn outcome_of(o: pgn_reader::Outcome) -> Option<Outcome> {
    match o {
        pgn_reader::Outcome::Known(KnownOutcome::Decisive {
            winner: Color::White,
        }) => Some(Outcome::WhiteWins),
        pgn_reader::Outcome::Known(KnownOutcome::Decisive {
            winner: Color::Black,
        }) => Some(Outcome::BlackWins),
        pgn_reader::Outcome::Known(KnownOutcome::Draw) => Some(Outcome::Draw),
        pgn_reader::Outcome::Unknown => None,
    }
}

/// Whether a PGN `Variant` tag names chess as this reader plays it: standard chess (as some
/// programs write it) or Chess960.
fn is_chess_variant(variant: &str) -> bool {
    let v = variant.trim().to_ascii_lowercase();
    matches!(
        v.as_str(),
        "" | "standard" | "chess" | "normal" | "from position" | "chess960" | "fischerandom"
    )
}

fn outcome_tag(v: &str) -> Option<Outcome> {
    match v.trim() {
        "1-0" => Some(Outcome::WhiteWins),
        "0-1" => Some(Outcome::BlackWins),
        "1/2-1/2" => Some(Outcome::Draw),
        _ => None,
    }
}

impl Visitor for GameVisitor {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<PgnGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        // A game of another kind (togyz korgool's "76 98 …" reads as no chess move at all):
        // refused, not played as an empty chess game.
        if let Some((_, variant)) = tags.iter().find(|(k, _)| k == "Variant")
            && !is_chess_variant(variant)
        {
            return ControlFlow::Break(Err(format!(
                "Variant {variant:?} is not chess: this reader plays chess and Chess960 games \
                 (a togyz korgool record is played by the togyz emulator)"
            )));
        }
        let fen = tags
            .iter()
            .find(|(k, _)| k == "FEN")
            .map(|(_, v)| v.clone());
        // A Chess960 game's castling rights name its rooks (X-FEN, Shredder-FEN).
        let chess960 = tags
            .iter()
            .any(|(k, v)| k == "Variant" && v.trim().eq_ignore_ascii_case("chess960"));
        let mode = CastlingMode::from_chess960(chess960);
        let start = match fen {
            None => Chess::default(),
            Some(f) => {
                let parsed = Fen::from_ascii(f.as_bytes())
                    .map_err(|e| format!("FEN {f:?}: {e}"))
                    .and_then(|fen| {
                        fen.into_position::<Chess>(mode)
                            .map_err(|e| format!("FEN {f:?}: {e}"))
                    });
                match parsed {
                    Ok(p) => p,
                    Err(e) => return ControlFlow::Break(Err(e)),
                }
            }
        };
        let outcome = tags
            .iter()
            .find(|(k, _)| k == "Result")
            .and_then(|(_, v)| outcome_tag(v));
        ControlFlow::Continue(Movetext {
            tags,
            pos: start.clone(),
            start,
            moves: Vec::new(),
            sans: Vec::new(),
            outcome,
            error: None,
        })
    }

    fn san(&mut self, mt: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if mt.error.is_some() {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&mt.pos) {
            Ok(m) => {
                let shown = SanPlus::from_move_and_play_unchecked(&mut mt.pos, m);
                mt.sans.push(shown.to_string());
                mt.moves.push(m);
            }
            Err(e) => {
                mt.error = Some(format!(
                    "illegal move {san_plus} at ply {}: {e}",
                    mt.moves.len() + 1
                ));
            }
        }
        ControlFlow::Continue(())
    }

    fn outcome(
        &mut self,
        mt: &mut Self::Movetext,
        outcome: pgn_reader::Outcome,
    ) -> ControlFlow<Self::Output> {
        if let Some(o) = outcome_of(outcome) {
            mt.outcome = Some(o);
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, mt: Self::Movetext) -> Self::Output {
        match mt.error {
            Some(e) => Err(e),
            None => Ok(PgnGame {
                tags: mt.tags,
                start: mt.start,
                moves: mt.moves,
                sans: mt.sans,
                outcome: mt.outcome,
            }),
        }
    }
}

/// Every game of a PGN text, main lines only.
pub fn games_from_pgn(text: &str) -> Result<Vec<PgnGame>, EmulatorError> {
    let mut reader = Reader::new(Cursor::new(text.as_bytes()));
    let mut games = Vec::new();
    while let Some(read) = reader.read_game(&mut GameVisitor)? {
        let game = read.map_err(|message| EmulatorError::Pgn {
            game: games.len() + 1,
            message,
        })?;
        games.push(game);
    }
    Ok(games)
}
