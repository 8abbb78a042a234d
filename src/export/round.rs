//! A round as a broadcast reads it: one game per board ([`broadcast_games`], the store's rule,
//! which the standings read too), and the round's PGN. The round PGN is each of them through
//! [`write_pgn`](super::pgn::write_pgn): what the relay serves as `/round.pgn`, pushes to Lichess
//! and writes as `games.pgn` in a LiveChess-style folder (`broadcast::folder`). Pure.

pub use crate::store::broadcast_games;
