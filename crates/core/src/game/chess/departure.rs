//! What a chess board that no legal move explains shows (FIDE Article 7), for the tracker.
//!
//! Flow: the differing squares between the position's reading and the sensed one are compared
//! with every legal move (a move part-way done: pieces lifted, a capture half done, a pawn set
//! down before its promotion piece), then with one piece of the side to move relocated (an illegal
//! move: wrong shape, own king left in check, castling not allowed, a pawn left on the last rank
//! at the press); anything else is displaced pieces. Pure: readings in, a [`Departure`] out.

use shakmaty::{Bitboard, Chess, Color, Move, Piece, Position, Role, Square, attacks::attacks};

use super::{ChessGame, ChessReading, code, code_to_piece};
use crate::game::{Departure, GameKind};
use crate::phrase::{Arg, Phrase};

/// How `reading` departs from `pos`; `succ` are the legal moves of `pos`.
pub(super) fn departure(
    pos: &Chess,
    succ: &[(u64, Move)],
    reading: &ChessReading,
    pressed: bool,
) -> Departure {
    let expected = ChessGame::reading(pos);
    let diff: Vec<usize> = (0..64).filter(|&s| expected.0[s] != reading.0[s]).collect();
    if diff.is_empty() {
        return Departure::InProgress;
    }
    let us = pos.turn();
    // Only lifted pieces: a piece in the hand, or one knocked over (only time tells).
    let lifted_only = diff.iter().all(|&s| reading.0[s] == code::EMPTY);
    let missing = || Departure::Missing {
        detail: describe(&expected, reading, &diff),
    };
    if diff.len() <= 4 {
        for (_, m) in succ {
            if part_way(pos, m, &diff, reading, pressed) {
                return if lifted_only && !pressed {
                    missing()
                } else {
                    Departure::InProgress
                };
            }
        }
    }
    // Own pieces in the hand (adjusting, thinking with a piece lifted, or pressing early), and
    // kings lifted (on their way to the centre squares: the result gesture).
    if diff.len() <= 2
        && lifted_only
        && diff.iter().all(|&s| {
            code_to_piece(expected.0[s]).is_some_and(|p| p.color == us || p.role == Role::King)
        })
    {
        return if pressed {
            Departure::InProgress
        } else {
            missing()
        };
    }
    if let Some(detail) = illegal_move(pos, &expected, reading, &diff, pressed) {
        return Departure::IllegalMove { detail };
    }
    Departure::Displaced {
        detail: describe(&expected, reading, &diff),
    }
}

/// The squares a move changes.
fn touched(m: &Move, us: Color) -> ([Square; 4], usize) {
    match *m {
        Move::Normal { from, to, .. } => ([from, to, from, from], 2),
        Move::EnPassant { from, to } => (
            [from, to, Square::from_coords(to.file(), from.rank()), from],
            3,
        ),
        Move::Castle { king, rook } => {
            let side = shakmaty::CastlingSide::from_queen_side(rook < king);
            ([king, rook, side.king_to(us), side.rook_to(us)], 4)
        }
        Move::Put { to, .. } => ([to, to, to, to], 1),
    }
}

/// Whether `reading` is `m` part-way done: every differing square is one `m` touches, and shows
/// either nothing or what `m` puts there (a promoting pawn may stand on its square until the
/// press), or, for a piece sliding (bishop, rook, queen), one square of its way there with the
/// piece resting on it (a capture slid in, its victim lifted first).
fn part_way(pos: &Chess, m: &Move, diff: &[usize], reading: &ChessReading, pressed: bool) -> bool {
    let (squares, n) = touched(m, pos.turn());
    let squares = &squares[..n];
    let mover = super::piece_code(m.role().of(pos.turn()));
    let on_the_way = |s: usize| {
        !pressed
            && matches!(m.role(), Role::Bishop | Role::Rook | Role::Queen)
            && m.from().is_some_and(|from| {
                shakmaty::attacks::between(from, m.to()).contains(Square::new(s as u32))
            })
            && reading.0[s] == mover
    };
    let mut resting = 0;
    for &s in diff {
        if squares.iter().any(|&t| t as usize == s) {
            continue;
        }
        if on_the_way(s) {
            resting += 1;
            continue;
        }
        return false;
    }
    if resting > 1 {
        return false;
    }
    let after = ChessGame::reading(&ChessGame::play(pos, m));
    let pawn = super::piece_code(Role::Pawn.of(pos.turn()));
    diff.iter().all(|&s| {
        let r = reading.0[s];
        r == after.0[s]
            || r == code::EMPTY
            || on_the_way(s)
            || (!pressed && m.is_promotion() && s == m.to() as usize && r == pawn)
    })
}

/// One piece of the side to move relocated in a way the rules forbid: what and why.
fn illegal_move(
    pos: &Chess,
    expected: &ChessReading,
    reading: &ChessReading,
    diff: &[usize],
    pressed: bool,
) -> Option<Phrase> {
    let us = pos.turn();
    let ours = |code: u8| code_to_piece(code).filter(|p| p.color == us);
    match *diff {
        [a, b] => {
            let (from, to) = if reading.0[a] == code::EMPTY {
                (a, b)
            } else {
                (b, a)
            };
            let moved = ours(expected.0[from])?;
            if reading.0[from] != code::EMPTY {
                return None;
            }
            let placed = ours(reading.0[to])?;
            let target = expected.0[to];
            if code_to_piece(target).is_some_and(|p| p.color == us) {
                return None;
            }
            let (from, to) = (Square::new(from as u32), Square::new(to as u32));
            let last_rank = to.rank() == us.relative_rank(shakmaty::Rank::Eighth);
            let promoted = moved.role == Role::Pawn && placed.role != Role::Pawn;
            if placed.role != moved.role && !(promoted && last_rank) {
                return None;
            }
            let name = format!("{}{}{}", role_letter(moved.role), from, to);
            let legal_shape = shape_allowed(pos, moved, from, to, target != code::EMPTY);
            let why = if moved.role == Role::Pawn && last_rank && !promoted && legal_shape {
                if !pressed {
                    return None;
                }
                "chess.pawn_not_promoted"
            } else if legal_shape {
                "chess.king_in_check"
            } else {
                "chess.wrong_shape"
            };
            Some(
                Phrase::new("chess.illegal_move")
                    .text("move", name)
                    .phrase("why", Phrase::new(why)),
            )
        }
        [_, _, _, _] => {
            // A castling the rules did not allow (king or rook moved before, through or out of
            // check): the king two squares along its rank, the rook next to it on the other side.
            let king = Piece {
                color: us,
                role: Role::King,
            };
            let rook = Piece {
                color: us,
                role: Role::Rook,
            };
            let code = super::piece_code;
            let from = *diff
                .iter()
                .find(|&&s| expected.0[s] == code(king) && reading.0[s] == 0)?;
            let to = *diff.iter().find(|&&s| reading.0[s] == code(king))?;
            let (kf, kt) = (Square::new(from as u32), Square::new(to as u32));
            let rook_from = *diff
                .iter()
                .find(|&&s| expected.0[s] == code(rook) && reading.0[s] == 0)?;
            let rook_to = *diff.iter().find(|&&s| reading.0[s] == code(rook))?;
            let two_files =
                kf.rank() == kt.rank() && (kf.file() as i32 - kt.file() as i32).abs() == 2;
            let beside = Square::new(rook_to as u32).rank() == kf.rank()
                && Square::new(rook_from as u32).rank() == kf.rank();
            (two_files && beside).then(|| {
                Phrase::new("chess.castling_not_allowed").text("move", format!("K{kf}{kt}"))
            })
        }
        _ => None,
    }
}

/// Whether `piece` may move from `from` to `to` by its shape on the current occupancy (the own
/// king's safety aside).
fn shape_allowed(pos: &Chess, piece: Piece, from: Square, to: Square, capture: bool) -> bool {
    let occupied: Bitboard = pos.board().occupied();
    if piece.role != Role::Pawn {
        return attacks(from, piece, occupied).contains(to);
    }
    if capture {
        return attacks(from, piece, occupied).contains(to);
    }
    let forward: i32 = if piece.color == Color::White { 1 } else { -1 };
    let (df, dr) = (
        to.file() as i32 - from.file() as i32,
        to.rank() as i32 - from.rank() as i32,
    );
    let start_rank = piece.color.relative_rank(shakmaty::Rank::Second);
    df == 0
        && (dr == forward
            || (dr == 2 * forward
                && from.rank() == start_rank
                && !occupied.contains(Square::from_coords(
                    from.file(),
                    shakmaty::Rank::new((from.rank() as i32 + forward) as u32),
                ))))
}

fn role_letter(role: Role) -> &'static str {
    match role {
        Role::Pawn => "",
        Role::Knight => "N",
        Role::Bishop => "B",
        Role::Rook => "R",
        Role::Queen => "Q",
        Role::King => "K",
    }
}

/// What a square shows, by its piece code: a piece (`piece.white_knight`), `piece.empty`, or
/// a code no piece has.
fn piece_name(code: u8) -> Arg {
    match code_to_piece(code) {
        Some(p) => Arg::Term(format!(
            "piece.{}_{}",
            match p.color {
                Color::White => "white",
                Color::Black => "black",
            },
            format!("{:?}", p.role).to_lowercase()
        )),
        None if code == code::EMPTY => Arg::Term("piece.empty".to_owned()),
        None => Arg::Phrase(Box::new(
            Phrase::new("piece.code").text("code", format!("{code:#04x}")),
        )),
    }
}

/// "g1: white knight → empty, h3: empty → white knight".
fn describe(expected: &ChessReading, reading: &ChessReading, diff: &[usize]) -> Phrase {
    Phrase::of_list(
        diff.iter()
            .map(|&s| {
                Phrase::new("chess.change")
                    .text("square", Square::new(s as u32))
                    .with("was", piece_name(expected.0[s]))
                    .with("now", piece_name(reading.0[s]))
            })
            .collect(),
    )
}

/// A complete set-up on the home ranks that is not the start position: what is wrong.
pub(super) fn wrong_setup(reading: &ChessReading) -> Option<Phrase> {
    let start = ChessGame::reading(&Chess::default());
    if *reading == start {
        return None;
    }
    let mut counts = [0u8; 16];
    for (s, &code) in reading.0.iter().enumerate() {
        if code == code::EMPTY {
            continue;
        }
        let p = code_to_piece(code)?;
        let rank = s / 8;
        let home = match p.color {
            Color::White => rank <= 1,
            Color::Black => rank >= 6,
        };
        if !home {
            return None;
        }
        counts[usize::from(code & 0x0f)] += 1;
    }
    let mut want = [0u8; 16];
    for &code in &start.0 {
        want[usize::from(code & 0x0f)] += 1;
    }
    want[0] = 0;
    counts[0] = 0;
    if counts != want {
        return None;
    }
    let diff: Vec<usize> = (0..64).filter(|&s| start.0[s] != reading.0[s]).collect();
    Some(describe(&start, reading, &diff))
}

/// A complete set-up on the home ranks that is no Chess960 start position: what is wrong (the
/// pawns off their rank, White's back rank against the rules of 960 — bishops on squares of
/// opposite colours, the king between the rooks — or Black's not mirroring it).
pub(super) fn wrong_setup_960(reading: &ChessReading) -> Option<Phrase> {
    let start = ChessGame::reading(&Chess::default());
    // The same pieces as a start position, all on their own two ranks: a set-up.
    let mut counts = [0u8; 16];
    let mut want = [0u8; 16];
    for (s, &code) in reading.0.iter().enumerate() {
        if code == code::EMPTY {
            continue;
        }
        let p = code_to_piece(code)?;
        let home = match p.color {
            Color::White => s / 8 <= 1,
            Color::Black => s / 8 >= 6,
        };
        if !home {
            return None;
        }
        counts[usize::from(code & 0x0f)] += 1;
    }
    for &code in &start.0 {
        want[usize::from(code & 0x0f)] += 1;
    }
    (counts[1..] == want[1..]).then_some(())?;
    let square = |s: usize| Square::new(s as u32);
    let mut wrong = Vec::new();
    for (rank, pawn) in [(1, code::WPAWN), (6, code::BPAWN)] {
        for s in rank * 8..rank * 8 + 8 {
            if reading.0[s] != pawn {
                wrong.push(
                    Phrase::new("chess.pawn_belongs")
                        .text("square", square(s))
                        .with("piece", piece_name(reading.0[s])),
                );
            }
        }
    }
    if wrong.is_empty() {
        let white = &reading.0[..8];
        let of = |code: u8| (0..8).filter(move |&f| white[f] == code);
        let bishops: Vec<usize> = of(code::WBISHOP).collect();
        if bishops.len() == 2 && bishops[0] % 2 == bishops[1] % 2 {
            wrong.push(Phrase::new("chess.bishops_one_colour"));
        }
        let rooks: Vec<usize> = of(code::WROOK).collect();
        let king = of(code::WKING).next();
        if let (Some(k), [a, b]) = (king, rooks.as_slice())
            && !(a < &k && &k < b)
        {
            wrong.push(Phrase::new("chess.king_not_between_rooks"));
        }
        for (f, &own) in white.iter().enumerate() {
            let mirrored = reading.0[56 + f];
            if mirrored != own + 6 {
                wrong.push(
                    Phrase::new("chess.mirror")
                        .text("square", square(56 + f))
                        .with("piece", piece_name(mirrored)),
                );
            }
        }
    }
    (!wrong.is_empty()).then(|| Phrase::new("chess.not_960_start").list("what", wrong))
}

/// Both kings in check, or pawns on their last rank (FIDE A.5.4): what the board shows, if so.
pub(super) fn illegal_position(reading: &ChessReading) -> Option<Phrase> {
    let mut board = shakmaty::Board::empty();
    let mut pawns_on_last_rank = Vec::new();
    for (s, &code) in reading.0.iter().enumerate() {
        let Some(p) = code_to_piece(code) else {
            continue;
        };
        let sq = Square::new(s as u32);
        let last = match p.color {
            Color::White => shakmaty::Rank::Eighth,
            Color::Black => shakmaty::Rank::First,
        };
        if p.role == Role::Pawn && sq.rank() == last {
            pawns_on_last_rank.push(
                Phrase::new("chess.piece_on")
                    .with("piece", piece_name(code))
                    .text("square", sq),
            );
        }
        board.set_piece_at(sq, p);
    }
    let in_check = |c: Color| {
        let kings = board.kings() & board.by_color(c);
        kings.count() == 1
            && kings
                .into_iter()
                .all(|k| board.attacks_to(k, !c, board.occupied()).any())
    };
    let mut what = pawns_on_last_rank;
    if in_check(Color::White) && in_check(Color::Black) {
        what.push(Phrase::new("chess.both_kings_in_check"));
    }
    (!what.is_empty()).then(|| Phrase::of_list(what))
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("position")
    }

    #[test]
    fn illegal_positions_are_both_kings_in_check_or_a_pawn_on_its_last_rank() {
        let start = ChessGame::reading(&Chess::default());
        assert_eq!(illegal_position(&start), None);
        // A pawn left on e8 unpromoted.
        let pos = position("4k3/4P3/8/8/8/8/8/4K3 w - - 0 1");
        let mut r = ChessGame::reading(&pos);
        r.0[Square::E7 as usize] = code::EMPTY;
        r.0[Square::D8 as usize] = code::WPAWN;
        assert_eq!(
            illegal_position(&r).map(|p| p.to_string()).as_deref(),
            Some("white pawn on d8")
        );
        // A black pawn on a1.
        let pos = position("4k3/8/8/8/8/8/p7/4K3 b - - 0 1");
        let mut r = ChessGame::reading(&pos);
        r.0[Square::A2 as usize] = code::EMPTY;
        r.0[Square::A1 as usize] = code::BPAWN;
        assert_eq!(
            illegal_position(&r).map(|p| p.to_string()).as_deref(),
            Some("black pawn on a1")
        );
        // Both kings in check (no legal position, so built square by square): a rook on each
        // king's rank.
        let board: shakmaty::Board = "4k2R/8/8/8/8/8/8/r3K3".parse().expect("board");
        let mut r = ChessReading([code::EMPTY; 64]);
        for (sq, p) in board {
            r.0[sq as usize] = super::super::piece_code(p);
        }
        assert_eq!(
            illegal_position(&r).map(|p| p.to_string()).as_deref(),
            Some("both kings in check")
        );
        // One king in check is a legal position.
        let pos = position("4k3/8/8/8/8/8/8/r3K3 w - - 0 1");
        assert_eq!(illegal_position(&ChessGame::reading(&pos)), None);
    }

    fn moved(pos: &Chess, changes: &[(Square, u8)]) -> ChessReading {
        let mut r = ChessGame::reading(pos);
        for &(sq, code) in changes {
            r.0[sq as usize] = code;
        }
        r
    }

    fn classify(pos: &Chess, reading: &ChessReading, pressed: bool) -> Departure {
        let mut succ = Vec::new();
        let key = ChessGame::reading_key(&ChessGame::reading(pos));
        ChessGame::successors(pos, key, &mut succ);
        departure(pos, &succ, reading, pressed)
    }

    #[test]
    fn a_piece_in_the_hand_or_a_capture_half_done_is_in_progress() {
        let pos = position("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
        // The knight lifted: in the hand, or knocked over (only time tells).
        let r = moved(&pos, &[(Square::F3, code::EMPTY)]);
        assert!(matches!(
            classify(&pos, &r, false),
            Departure::Missing { .. }
        ));
        assert_eq!(classify(&pos, &r, true), Departure::InProgress);
        // Nxe5: the victim lifted first, then the knight too.
        let r = moved(&pos, &[(Square::E5, code::EMPTY)]);
        assert!(matches!(
            classify(&pos, &r, false),
            Departure::Missing { .. }
        ));
        let r = moved(
            &pos,
            &[(Square::E5, code::EMPTY), (Square::F3, code::EMPTY)],
        );
        assert!(matches!(
            classify(&pos, &r, false),
            Departure::Missing { .. }
        ));
        // Castling half done: the king on g1, the rook still on h1.
        let pos = position("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        let r = moved(
            &pos,
            &[(Square::E1, code::EMPTY), (Square::G1, code::WKING)],
        );
        assert_eq!(classify(&pos, &r, false), Departure::InProgress);
    }

    #[test]
    fn wrong_shape_and_self_check_are_illegal_moves() {
        let pos = Chess::default();
        // A bishop moved like a rook: c1-c3 (onto an empty square).
        let r = moved(
            &pos,
            &[(Square::C1, code::EMPTY), (Square::C3, code::WBISHOP)],
        );
        match classify(&pos, &r, true) {
            Departure::IllegalMove { detail } => {
                assert!(detail.to_string().starts_with("Bc1c3"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
        // A pinned knight moved: Nc3 pinned by Bb4 to Ke1 after d2-d4? Use a direct pin.
        let pos = position("4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1");
        let r = moved(
            &pos,
            &[(Square::D2, code::EMPTY), (Square::F3, code::WKNIGHT)],
        );
        match classify(&pos, &r, true) {
            Departure::IllegalMove { detail } => {
                assert!(detail.to_string().contains("king in check"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_pawn_left_on_the_last_rank_is_illegal_only_at_the_press() {
        let pos = position("8/4P3/8/8/8/8/k7/4K3 w - - 0 1");
        let r = moved(
            &pos,
            &[(Square::E7, code::EMPTY), (Square::E8, code::WPAWN)],
        );
        assert_eq!(classify(&pos, &r, false), Departure::InProgress);
        match classify(&pos, &r, true) {
            Departure::IllegalMove { detail } => {
                assert!(detail.to_string().contains("7.5.2"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_opponent_piece_knocked_aside_is_displaced() {
        let pos = Chess::default();
        let r = moved(
            &pos,
            &[(Square::G8, code::EMPTY), (Square::H6, code::BKNIGHT)],
        );
        match classify(&pos, &r, false) {
            Departure::Displaced { detail } => {
                assert_eq!(
                    detail.to_string(),
                    "h6: empty → black knight, g8: black knight → empty"
                )
            }
            other => panic!("{other:?}"),
        }
        // A black piece knocked over (missing) while White is to move.
        let r = moved(&pos, &[(Square::C8, code::EMPTY)]);
        assert!(matches!(
            classify(&pos, &r, false),
            Departure::Displaced { .. }
        ));
    }

    #[test]
    fn castling_without_the_right_is_illegal() {
        let pos = position("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1");
        let r = moved(
            &pos,
            &[
                (Square::E1, code::EMPTY),
                (Square::G1, code::WKING),
                (Square::H1, code::EMPTY),
                (Square::F1, code::WROOK),
            ],
        );
        match classify(&pos, &r, true) {
            Departure::IllegalMove { detail } => {
                assert!(detail.to_string().contains("castling"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_chess960_set_up_is_wrong_only_against_its_rules() {
        for pos in super::super::chess960_starts() {
            assert_eq!(wrong_setup_960(&ChessGame::reading(pos)), None);
        }
        let start = ChessGame::reading(&Chess::default());
        // Bishops on one colour (c1 and e1 swapped: the king on c1, a bishop on e1).
        let mut r = start;
        r.0.swap(Square::C1 as usize, Square::D1 as usize);
        r.0.swap(Square::C8 as usize, Square::D8 as usize);
        let detail = wrong_setup_960(&r).unwrap();
        assert!(detail.to_string().contains("one colour"), "{detail}");
        // The king outside its rooks.
        let mut r = start;
        r.0.swap(Square::E1 as usize, Square::H1 as usize);
        r.0.swap(Square::E8 as usize, Square::H8 as usize);
        let detail = wrong_setup_960(&r).unwrap();
        assert!(detail.to_string().contains("between its rooks"), "{detail}");
        // Black not mirroring White.
        let mut r = start;
        r.0.swap(Square::B8 as usize, Square::C8 as usize);
        let detail = wrong_setup_960(&r).unwrap();
        assert!(detail.to_string().contains("b8: black bishop"), "{detail}");
        // A piece missing is no set-up yet.
        r.0[Square::B1 as usize] = code::EMPTY;
        assert_eq!(wrong_setup_960(&r), None);
    }

    #[test]
    fn swapped_pieces_on_the_home_ranks_are_a_wrong_setup() {
        let start = ChessGame::reading(&Chess::default());
        assert_eq!(wrong_setup(&start), None);
        let mut r = start;
        r.0.swap(Square::D1 as usize, Square::E1 as usize);
        assert_eq!(
            wrong_setup(&r).map(|p| p.to_string()).as_deref(),
            Some("d1: white queen → white king, e1: white king → white queen")
        );
        // A piece missing is not a set-up (still being set up).
        let mut r = start;
        r.0[Square::B1 as usize] = code::EMPTY;
        assert_eq!(wrong_setup(&r), None);
        // After 1. e4 a pawn is off the home ranks.
        let mut r = start;
        r.0.swap(Square::E2 as usize, Square::E4 as usize);
        assert_eq!(wrong_setup(&r), None);
    }
}
