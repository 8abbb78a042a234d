//! The record in the arbiter's words, for the command line and the console alike: move numbers
//! as said at the board (`34b` is ply 68: [`moveno`]), and a game's history as lines of local
//! time, board, move, what happened and by whom ([`history`]). Pure: the time zone is an
//! argument.

pub mod history;
pub mod moveno;
