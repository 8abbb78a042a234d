//! Chess over `shakmaty`: the [`GameKind`] the tracker uses for every chessboard.
//!
//! A reading is 64 square codes ([`code`], vendor-neutral) in square order (a1 = 0, h8 = 63). Its key is a Zobrist-style
//! XOR over (square, code); the key of the reading after a move is derived from the move's squares
//! alone, so the successors of a position cost one legal-move generation and no board copies.
//! Chess960 games begin from any of the 960 start positions ([`chess960_starts`]), built with
//! `CastlingMode::Chess960`; their castling is stored in UCI as king-takes-rook (`e1h1`), which
//! is what a position in that mode parses back.

use std::sync::OnceLock;

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, FromSetup, Move, Piece, Position, Role, Setup,
    Square,
    fen::Fen,
    san::{San, SanPlus, Suffix},
    uci::UciMove,
};

mod departure;

use super::{Departure, GameKind, Kind, Outcome, Variant};

/// What a chessboard's sensors can tell stands on a square: boardscribe's own codes, whatever
/// the vendor. Numbered as DGT numbers its pieces, so that a DGT board's codes are read as they
/// come; every other kind of board maps its own into these ([`piece_code`]).
pub mod code {
    pub const EMPTY: u8 = 0;
    pub const WPAWN: u8 = 1;
    pub const WROOK: u8 = 2;
    pub const WKNIGHT: u8 = 3;
    pub const WBISHOP: u8 = 4;
    pub const WKING: u8 = 5;
    pub const WQUEEN: u8 = 6;
    pub const BPAWN: u8 = 7;
    pub const BROOK: u8 = 8;
    pub const BKNIGHT: u8 = 9;
    pub const BBISHOP: u8 = 10;
    pub const BKING: u8 = 11;
    pub const BQUEEN: u8 = 12;
    /// Result tokens a board can sense (DGT's "magic" pieces): draw, White wins, Black wins.
    pub const RESULT_DRAW: u8 = 13;
    pub const RESULT_WHITE_WINS: u8 = 14;
    pub const RESULT_BLACK_WINS: u8 = 15;
    /// A piece the board senses but cannot name (a chip its calibration does not know): no
    /// position shows it, so a reading with one fits nothing until it is resolved.
    pub const UNKNOWN: u8 = 16;
}

/// 64 square codes ([`code`]) indexed by square (a1 = 0 ... h8 = 63).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChessReading(pub [u8; 64]);

impl std::fmt::Debug for ChessReading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Rank 8 first, as a board is drawn; '.' empty, FEN letters, '?' for other codes.
        for rank in (0..8).rev() {
            for file in 0..8 {
                let c = match code_to_piece(self.0[rank * 8 + file]) {
                    Some(p) => p.char(),
                    None if self.0[rank * 8 + file] == 0 => '.',
                    None => '?',
                };
                write!(f, "{c}")?;
            }
            if rank > 0 {
                write!(f, "/")?;
            }
        }
        Ok(())
    }
}

/// Keys for (square, code) pairs; code 0 (empty) contributes nothing.
static ZOBRIST: [[u64; CODES]; 64] = zobrist_table();

/// Square codes with a key: 0 ..= [`code::UNKNOWN`].
const CODES: usize = code::UNKNOWN as usize + 1;

/// The keys of codes 1..16 first, as they always were, then [`code::UNKNOWN`]'s from the same
/// generator, so that adding a code changes no key already given.
const fn zobrist_table() -> [[u64; CODES]; 64] {
    let mut table = [[0u64; CODES]; 64];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut sq = 0;
    while sq < 64 {
        let mut code = 1;
        while code < 16 {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            table[sq][code] = z ^ (z >> 31);
            code += 1;
        }
        sq += 1;
    }
    let mut sq = 0;
    while sq < 64 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        table[sq][code::UNKNOWN as usize] = z ^ (z >> 31);
        sq += 1;
    }
    table
}

/// The key contribution of `code` on square index `sq` (a1 = 0); a code past
/// [`code::UNKNOWN`] is keyed as it.
#[inline]
pub fn zobrist(sq: usize, code: u8) -> u64 {
    ZOBRIST[sq & 63][usize::from(code).min(CODES - 1)]
}

/// The key contribution of `role` of `color` on `sq`: [`zobrist`] of its [`piece_code`], read
/// from a table by colour and role (a successor's key is three or four of these).
#[inline]
fn piece_key(color: Color, role: Role, sq: Square) -> u64 {
    PIECE_KEYS[color as usize][role as usize][sq as usize]
}

/// [`piece_key`]'s table: by colour (shakmaty's order: Black 0, White 1), role (pawn = 1 ...
/// king = 6; 0, no piece, keys as 0 on every square) and square.
static PIECE_KEYS: [[[u64; 64]; 7]; 2] = piece_keys();

const fn piece_keys() -> [[[u64; 64]; 7]; 2] {
    // Codes by shakmaty's role discriminant (pawn = 1 ... king = 6), White's; Black's are 6 more.
    const WHITE: [u8; 7] = [
        code::EMPTY,
        code::WPAWN,
        code::WKNIGHT,
        code::WBISHOP,
        code::WROOK,
        code::WQUEEN,
        code::WKING,
    ];
    let keys = zobrist_table();
    let mut table = [[[0u64; 64]; 7]; 2];
    let mut color = 0;
    while color < 2 {
        let mut role = 1;
        while role < 7 {
            // shakmaty: Color::Black = 0, Color::White = 1.
            let code = if color == 1 {
                WHITE[role]
            } else {
                WHITE[role] + 6
            };
            let mut sq = 0;
            while sq < 64 {
                table[color][role][sq] = keys[sq][code as usize];
                sq += 1;
            }
            role += 1;
        }
        color += 1;
    }
    table
}

/// The square code ([`code`]) of a piece.
#[inline]
pub fn piece_code(p: Piece) -> u8 {
    // Indexed by shakmaty's role discriminant (pawn = 1 ... king = 6).
    const WHITE: [u8; 7] = [
        code::EMPTY,
        code::WPAWN,
        code::WKNIGHT,
        code::WBISHOP,
        code::WROOK,
        code::WQUEEN,
        code::WKING,
    ];
    let white = WHITE[p.role as usize];
    match p.color {
        Color::White => white,
        Color::Black => white + 6,
    }
}

/// The piece a square code stands for; `None` for empty, unknown and the result tokens.
pub fn code_to_piece(code: u8) -> Option<Piece> {
    let (color, base) = match code {
        1..=6 => (Color::White, code),
        7..=12 => (Color::Black, code - 6),
        _ => return None,
    };
    let role = match base {
        1 => Role::Pawn,
        2 => Role::Rook,
        3 => Role::Knight,
        4 => Role::Bishop,
        5 => Role::King,
        _ => Role::Queen,
    };
    Some(Piece { color, role })
}

/// Square index (a1 = 0) of a board index (a8 = 0, the numbering sensor states keep) on a
/// board lying normally.
#[inline]
pub fn square_of_board_index(i: usize) -> usize {
    let file = i % 8;
    let rank = 7 - i / 8;
    rank * 8 + file
}

/// Chess as a [`GameKind`].
pub struct ChessGame;

/// The Chess960 start position numbered `index` (0..960) in Scharnagl's numbering (518 is the
/// standard position), White to move, every rook with its castling right, in
/// `CastlingMode::Chess960`.
pub fn chess960_start(index: u32) -> Option<Chess> {
    if index >= 960 {
        return None;
    }
    let board = Board::chess960(index);
    let setup = Setup {
        castling_rights: board.rooks()
            & (Bitboard::from(shakmaty::Rank::First) | Bitboard::from(shakmaty::Rank::Eighth)),
        board,
        ..Setup::initial()
    };
    Chess::from_setup(setup, CastlingMode::Chess960).ok()
}

/// The 960 start positions of Chess960, by Scharnagl number (built once).
pub fn chess960_starts() -> &'static [Chess] {
    static STARTS: OnceLock<Vec<Chess>> = OnceLock::new();
    STARTS.get_or_init(|| (0..960).filter_map(chess960_start).collect())
}

/// The start of a stored chess game: the standard position, or `start` (a Chess960 start's
/// FEN, as [`GameKind::position_text`] wrote it) in `CastlingMode::Chess960`; `None` if `start`
/// does not read as a position.
pub fn start_of(start: Option<&str>) -> Option<Chess> {
    match start {
        None => Some(Chess::default()),
        Some(text) => ChessGame::parse_start(text),
    }
}

/// The key after `m`, a move by `us`, from a position keyed `parent_key`.
#[inline]
fn key_after(us: Color, parent_key: u64, m: &Move) -> u64 {
    let mut k = parent_key;
    match *m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            k ^= piece_key(us, role, from);
            if let Some(c) = capture {
                k ^= piece_key(!us, c, to);
            }
            k ^= piece_key(us, promotion.unwrap_or(role), to);
        }
        Move::EnPassant { from, to } => {
            let pawn = piece_code(Role::Pawn.of(us));
            let victim_sq = Square::from_coords(to.file(), from.rank());
            k ^= zobrist(from as usize, pawn) ^ zobrist(to as usize, pawn);
            k ^= zobrist(victim_sq as usize, piece_code(Role::Pawn.of(!us)));
        }
        Move::Castle { king, rook } => {
            // The key is an XOR over (square, code): the king and rook leave `king` and `rook`
            // and arrive on `king_to` and `rook_to`, whichever of these coincide (Chess960: a
            // king already on g1, king and rook swapping squares); a pair that cancels is a
            // piece that did not move.
            let side = shakmaty::CastlingSide::from_queen_side(rook < king);
            let king_to = side.king_to(us);
            let rook_to = side.rook_to(us);
            let kc = piece_code(Role::King.of(us));
            let rc = piece_code(Role::Rook.of(us));
            k ^= zobrist(king as usize, kc) ^ zobrist(king_to as usize, kc);
            k ^= zobrist(rook as usize, rc) ^ zobrist(rook_to as usize, rc);
        }
        Move::Put { role, to } => {
            k ^= zobrist(to as usize, piece_code(role.of(us)));
        }
    }
    k
}

/// `uci` as text, as shakmaty writes it (`e2e4`, `e7e8q`), written straight into a string of
/// its size: the record writes one for every move.
fn uci_text(uci: UciMove) -> String {
    match uci {
        UciMove::Normal {
            from,
            to,
            promotion,
        } => {
            let mut s = String::with_capacity(5);
            push_square(&mut s, from);
            push_square(&mut s, to);
            if let Some(role) = promotion {
                s.push(role.char());
            }
            s
        }
        other => other.to_string(),
    }
}

/// `sq` as its file and rank (`e4`).
fn push_square(s: &mut String, sq: Square) {
    s.push(sq.file().char());
    s.push(sq.rank().char());
}

/// The longest FEN [`fen_text`] writes: 71 bytes of placement (8 ranks of at most 8, 7 `/`),
/// ` w `, at most 4 castling rights (two rooks a side), ` `, 2 of en passant, then ` ` and a
/// `u32` counter (10 digits) twice: 103.
const FEN_MAX_LEN: usize = 103;

/// ASCII text of at most `N` bytes, written by index on the stack (no capacity check and no
/// growth a byte, as a `Vec` has), then copied into a `String` of its length.
struct AsciiText<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> AsciiText<N> {
    fn new() -> Self {
        AsciiText {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Appends `byte`; the writers here stay within `N` by construction (an overflow would be
    /// a bug in them, and panics rather than truncate).
    #[inline]
    fn push(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }

    /// `sq` as its file and rank (`e4`), as [`push_square`] writes it into a `String`.
    fn push_square(&mut self, sq: Square) {
        self.push(sq.file().char() as u8);
        self.push(sq.rank().char() as u8);
    }

    /// `n` in decimal, as `n.to_string()` writes it; the counters a FEN ends with are mostly
    /// one or two digits, written without a division loop.
    fn push_number(&mut self, n: u32) {
        if n < 10 {
            self.push(b'0' + n as u8);
        } else if n < 100 {
            self.push(b'0' + (n / 10) as u8);
            self.push(b'0' + (n % 10) as u8);
        } else {
            self.push_number(n / 10);
            self.push(b'0' + (n % 10) as u8);
        }
    }

    fn into_string(self) -> String {
        ascii_string(self.bytes[..self.len].to_vec())
    }
}

/// The FEN of `pos`, as shakmaty's `Fen::from_position(pos, EnPassantMode::Legal)` writes it
/// (castling rights as X-FEN: `KQkq` for the outermost rooks, a file letter for another), built
/// from the board's bitboards as bytes in a buffer on the stack (a character at a time into a
/// `String` or a `Vec` cost more than the rest): the record writes one for every move. Each
/// rank is written from its occupied squares (a run of empty squares is the distance between
/// two of them), not square by square.
fn fen_text(pos: &Chess) -> String {
    let board = pos.board();
    // Each occupied square's piece letter (ASCII).
    let mut letters = [0u8; 64];
    for color in Color::ALL {
        for role in Role::ALL {
            let piece = role.of(color);
            let letter = piece.char() as u8;
            for sq in board.by_piece(piece) {
                letters[sq as usize] = letter;
            }
        }
    }
    let mut b = AsciiText::<FEN_MAX_LEN>::new();
    let occupied = board.occupied().0;
    for (rank, row_letters) in letters.chunks_exact(8).enumerate().rev() {
        let mut row = (occupied >> (rank * 8)) & 0xff;
        // The file after the last piece written.
        let mut file = 0;
        while row != 0 {
            let next = row.trailing_zeros();
            if next > file {
                b.push(b'0' + (next - file) as u8);
            }
            b.push(row_letters[next as usize & 7]);
            file = next + 1;
            row &= row - 1;
        }
        if file < 8 {
            b.push(b'0' + (8 - file) as u8);
        }
        if rank > 0 {
            b.push(b'/');
        }
    }
    b.push(b' ');
    b.push(pos.turn().char() as u8);
    b.push(b' ');
    let rights = pos.castles().castling_rights();
    if rights.is_empty() {
        b.push(b'-');
    }
    for color in Color::ALL {
        let backrank = color.backrank();
        let king = board.king_of(color).filter(|k| k.rank() == backrank);
        let rooks = board.by_piece(color.rook()) & backrank;
        for rook in (rights & backrank).into_iter().rev() {
            let letter = if Some(rook) == rooks.first() && king.is_some_and(|k| rook < k) {
                b'q'
            } else if Some(rook) == rooks.last() && king.is_some_and(|k| k < rook) {
                b'k'
            } else {
                b'a' + rook.file() as u8
            };
            b.push(match color {
                Color::White => letter.to_ascii_uppercase(),
                Color::Black => letter,
            });
        }
    }
    b.push(b' ');
    match pos.legal_ep_square() {
        Some(sq) => b.push_square(sq),
        None => b.push(b'-'),
    }
    b.push(b' ');
    b.push_number(pos.halfmoves());
    b.push(b' ');
    b.push_number(u32::from(pos.fullmoves()));
    b.into_string()
}

/// Bytes written as ASCII, as a string (a byte past ASCII, which the writers here never
/// write, would be replaced rather than panic).
fn ascii_string(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl GameKind for ChessGame {
    type Position = Chess;
    type Move = Move;
    type Reading = ChessReading;

    const KIND: Kind = Kind::Chess;
    const MOVE_SPAN: usize = 4;
    const REVISABLE_CONFIRMED_PLIES: usize = 2;

    fn start() -> Chess {
        Chess::default()
    }

    /// Standard: the start position. Chess960: the 960 start positions by Scharnagl number
    /// (518, the standard one, among them), the first `BBQNNRKR`.
    fn starts(variant: Variant) -> Vec<Chess> {
        match variant {
            Variant::Standard => vec![Chess::default()],
            Variant::Chess960 => chess960_starts().to_vec(),
        }
    }

    /// A FEN in `CastlingMode::Chess960` (X-FEN and Shredder-FEN castling rights alike).
    fn parse_start(text: &str) -> Option<Chess> {
        text.parse::<Fen>()
            .ok()?
            .into_position(CastlingMode::Chess960)
            .ok()
    }

    fn reading(pos: &Chess) -> ChessReading {
        // Piece by piece through the board's bitboards (the tracker reads the expected board
        // of every move it compares): each occupied square is written once.
        let board = pos.board();
        let mut r = [0u8; 64];
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = role.of(color);
                let code = piece_code(piece);
                for sq in board.by_piece(piece) {
                    r[sq as usize] = code;
                }
            }
        }
        ChessReading(r)
    }

    fn reading_key(reading: &ChessReading) -> u64 {
        reading
            .0
            .iter()
            .enumerate()
            .fold(0, |k, (sq, &code)| k ^ zobrist(sq, code))
    }

    fn successors(pos: &Chess, key: u64, out: &mut Vec<(u64, Move)>) {
        out.clear();
        let moves = pos.legal_moves();
        out.reserve_exact(moves.len());
        let us = pos.turn();
        // The mover's and the opponent's piece keys, chosen once for all the moves; written
        // through one extend (one length for the whole list, no capacity check a move).
        let (mine, theirs) = (&PIECE_KEYS[us as usize], &PIECE_KEYS[(!us) as usize]);
        out.extend(moves.iter().map(|m| {
            let k = match *m {
                // As `key_after`, with no branch on the capture: the opponent's role 0 (no
                // piece) keys as 0 on every square.
                Move::Normal {
                    role,
                    from,
                    capture,
                    to,
                    promotion,
                } => {
                    key ^ mine[role as usize][from as usize]
                        ^ mine[promotion.unwrap_or(role) as usize][to as usize]
                        ^ theirs[capture.map_or(0, |c| c as usize)][to as usize]
                }
                _ => key_after(us, key, m),
            };
            (k, *m)
        }));
    }

    fn play(pos: &Chess, mv: &Move) -> Chess {
        let mut next = pos.clone();
        next.play_unchecked(*mv);
        next
    }

    fn notation(pos: &Chess, mv: &Move, after: &Chess, after_has_moves: bool) -> String {
        let suffix = match (after.is_check(), after_has_moves) {
            (true, true) => Some(Suffix::Check),
            (true, false) => Some(Suffix::Checkmate),
            (false, _) => None,
        };
        let mut s = String::with_capacity(8);
        SanPlus {
            san: San::from_move(pos, *mv),
            suffix,
        }
        .append_to_string(&mut s);
        s
    }

    /// shakmaty's SAN (`San::from_move` with its suffix, as [`ChessGame::notation`] writes it),
    /// written here: the pieces of the mover's role that could also reach `mv`'s square are
    /// found in `legal` (the moves shakmaty's `san_candidates` would generate again, among
    /// others it ignores), and the text goes straight into the string.
    fn notation_among(
        pos: &Chess,
        mv: &Move,
        legal: &[(u64, Move)],
        after: &Chess,
        after_has_moves: bool,
    ) -> String {
        let mut s = String::with_capacity(8);
        match *mv {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                if role != Role::Pawn {
                    s.push(role.upper_char());
                    // As `San::disambiguate`: another piece of the role reaching `to` (with the
                    // same promotion, which only pawns have) is told apart by the file, unless
                    // one shares it; then by the rank, unless one shares that too (then both).
                    let (mut ambiguous, mut same_file, mut same_rank) = (false, false, false);
                    for (_, other) in legal {
                        if let Move::Normal {
                            role: r,
                            from: f,
                            to: t,
                            promotion: p,
                            ..
                        } = *other
                            && f != from
                            && r == role
                            && t == to
                            && p == promotion
                        {
                            ambiguous = true;
                            same_rank |= f.rank() == from.rank();
                            same_file |= f.file() == from.file();
                        }
                    }
                    if ambiguous && (!same_file || same_rank) {
                        s.push(from.file().char());
                    }
                    if same_file {
                        s.push(from.rank().char());
                    }
                } else if capture.is_some() {
                    s.push(from.file().char());
                }
                if capture.is_some() {
                    s.push('x');
                }
                push_square(&mut s, to);
                if let Some(promotion) = promotion {
                    s.push('=');
                    s.push(promotion.upper_char());
                }
            }
            Move::EnPassant { from, to } => {
                s.push(from.file().char());
                s.push('x');
                push_square(&mut s, to);
            }
            Move::Castle { king, rook } => {
                s.push_str(if rook.file() < king.file() {
                    "O-O-O"
                } else {
                    "O-O"
                });
            }
            Move::Put { .. } => return ChessGame::notation(pos, mv, after, after_has_moves),
        }
        if after.is_check() {
            s.push(if after_has_moves { '+' } else { '#' });
        }
        s
    }

    /// Castling as the position's mode writes it: `e1g1` in standard chess, king-takes-rook
    /// (`f1g1`, `g1h1`) in Chess960, where the king may not move or land on its rook's square.
    fn uci(pos: &Chess, mv: &Move) -> Option<String> {
        Some(uci_text(UciMove::from_move(*mv, pos.castles().mode())))
    }

    fn position_text(pos: &Chess) -> String {
        fen_text(pos)
    }

    /// The placement field of a FEN (a code that is no piece, an empty square).
    fn reading_text(reading: &ChessReading) -> String {
        let mut board = Board::empty();
        for (i, &code) in reading.0.iter().enumerate() {
            if let Some(piece) = code_to_piece(code) {
                board.set_piece_at(Square::new(i as u32), piece);
            }
        }
        board.to_string()
    }

    fn parse_move(pos: &Chess, text: &str) -> Option<Move> {
        if let Ok(uci) = text.parse::<UciMove>()
            && let Ok(m) = uci.to_move(pos)
        {
            return Some(m);
        }
        text.parse::<SanPlus>().ok()?.san.to_move(pos).ok()
    }

    fn outcome(pos: &Chess, has_moves: bool) -> Option<(Outcome, &'static str)> {
        if has_moves {
            return None;
        }
        Some(if pos.is_check() {
            match pos.turn() {
                Color::White => (Outcome::BlackWins, "checkmate"),
                Color::Black => (Outcome::WhiteWins, "checkmate"),
            }
        } else {
            (Outcome::Draw, "stalemate")
        })
    }

    /// Both kings on d4/e4/d5/e5: both on light squares (d5, e4) is a white win, both on dark
    /// squares (d4, e5) a black win, one of each a draw (the DGT convention; dgt-notes 3, 4).
    fn result_gesture(reading: &ChessReading) -> Option<Outcome> {
        let centre = [Square::D4, Square::E4, Square::D5, Square::E5];
        let find = |code: u8| {
            let mut found = None;
            for (sq, &c) in reading.0.iter().enumerate() {
                if c == code {
                    if found.is_some() {
                        return None;
                    }
                    found = Some(sq);
                }
            }
            found
        };
        let wk = find(code::WKING)?;
        let bk = find(code::BKING)?;
        if !centre.iter().any(|&s| s as usize == wk) || !centre.iter().any(|&s| s as usize == bk) {
            return None;
        }
        let light = |sq: usize| Square::new(sq as u32).is_light();
        Some(match (light(wk), light(bk)) {
            (true, true) => Outcome::WhiteWins,
            (false, false) => Outcome::BlackWins,
            _ => Outcome::Draw,
        })
    }

    /// The DGT result pieces (dgt-notes 1.6): 0x0d draw, 0x0e white wins, 0x0f black wins.
    fn result_token(reading: &ChessReading) -> Option<Outcome> {
        // Every board a board sends asks: one pass with no early exit (which the compiler
        // vectorises) tells the usual answer, no result piece at all.
        let top = reading.0.iter().fold(0, |top, &code| top.max(code));
        if top < code::RESULT_DRAW {
            return None;
        }
        reading.0.iter().find_map(|&code| match code {
            code::RESULT_DRAW => Some(Outcome::Draw),
            code::RESULT_WHITE_WINS => Some(Outcome::WhiteWins),
            code::RESULT_BLACK_WINS => Some(Outcome::BlackWins),
            _ => None,
        })
    }

    /// Only kings moved (at most both, each from a square to another, even onto a square a
    /// piece was taken off to make room), or one result piece was put on an empty square.
    fn shows_only_result(before: &ChessReading, shown: &ChessReading) -> bool {
        let king = |c: u8| c == code::WKING || c == code::BKING;
        let token = |c: u8| {
            matches!(
                c,
                code::RESULT_DRAW | code::RESULT_WHITE_WINS | code::RESULT_BLACK_WINS
            )
        };
        let mut changed = 0;
        for (&a, &b) in before.0.iter().zip(shown.0.iter()) {
            if a == b {
                continue;
            }
            changed += 1;
            let king_moved = king(b) || (b == code::EMPTY && king(a));
            if !(king_moved || (a == code::EMPTY && token(b))) {
                return false;
            }
        }
        changed <= 4
    }

    fn gesture_may_include(_pos: &Chess, mv: &Move) -> bool {
        mv.role() == Role::King
            && matches!(mv, Move::Normal { .. })
            && [Square::D4, Square::E4, Square::D5, Square::E5].contains(&mv.to())
    }

    /// A slide: the same piece from the same square, `first`'s target strictly between that
    /// square and `then`'s on one line (a rook, bishop or queen resting on a square it crosses;
    /// a pawn's double step resting after one). Castling begun with its rook: `first` moved that
    /// rook. A piece that went back, or off the line, did not go on its way: it made a move.
    fn continues(first: &Move, then: &Move) -> bool {
        match (*first, *then) {
            (_, Move::Castle { rook, .. }) => {
                first.from() == Some(rook) && first.role() == Role::Rook
            }
            (
                Move::Normal { role, from, to, .. },
                Move::Normal {
                    role: then_role,
                    from: then_from,
                    to: then_to,
                    ..
                },
            ) => {
                role == then_role
                    && from == then_from
                    && shakmaty::attacks::between(from, then_to).contains(to)
            }
            _ => false,
        }
    }

    /// The square the piece left no longer holds it (castling: the king's square, or the
    /// rook's when the king stays where it is, as it may in Chess960).
    fn may_show(pos: &Chess, mv: &Move, sensed: &ChessReading) -> bool {
        if let Move::Castle { king, rook } = *mv {
            let side = shakmaty::CastlingSide::from_queen_side(rook < king);
            let (sq, role) = if side.king_to(pos.turn()) == king {
                (rook, Role::Rook)
            } else {
                (king, Role::King)
            };
            return sensed.0[sq as usize] != piece_code(role.of(pos.turn()));
        }
        match mv.from() {
            Some(from) => {
                let code = piece_code(mv.role().of(pos.turn()));
                sensed.0[from as usize] != code
            }
            None => true,
        }
    }

    /// The squares whose codes differ, counted eight at a time (the tracker measures every
    /// board it is shown against its belief): in the XOR of two 8-square words, a byte is
    /// nonzero exactly where the squares differ, and each such byte's top bit is set by
    /// `(x & 0x7f..) + 0x7f..` (a carry out of its low seven bits, which cannot reach the next
    /// byte) or by its own top bit. The square-by-square count this replaces is the reference
    /// its property test compares it with.
    fn reading_distance(a: &ChessReading, b: &ChessReading) -> usize {
        const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        let (a_words, _) = a.0.as_chunks::<8>();
        let (b_words, _) = b.0.as_chunks::<8>();
        a_words
            .iter()
            .zip(b_words)
            .map(|(x, y)| {
                let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
                (((diff & LOW7) + LOW7) | diff) & !LOW7
            })
            .map(|top_bits| top_bits.count_ones() as usize)
            .sum()
    }

    /// Per side: the squares where the target has one of its pieces that is not there now (a
    /// move puts one piece on a new square), and the squares it must leave (a move empties one;
    /// a pawn's square may also be emptied by an en passant capture, so pawns are not counted);
    /// a castling move does two of each, once.
    fn plies_needed(pos: &Chess, target: &ChessReading) -> usize {
        let board = pos.board();
        let mut bring = [0usize; 2];
        let mut leave = [0usize; 2];
        for (i, &want) in target.0.iter().enumerate() {
            let sq = Square::new(i as u32);
            let have = board.piece_at(sq);
            let have_code = have.map_or(code::EMPTY, piece_code);
            if have_code == want {
                continue;
            }
            let want_colour = code_to_piece(want).map(|p| p.color);
            if let Some(c) = want_colour {
                bring[c as usize] += 1;
            }
            if let Some(p) = have
                && p.role != Role::Pawn
                && want_colour != Some(!p.color)
            {
                leave[p.color as usize] += 1;
            }
        }
        let moves = |c: Color| {
            let n = bring[c as usize].max(leave[c as usize]);
            // One castling move can do two of each.
            n - usize::from(n >= 2 && pos.castles().has_color(c))
        };
        let (w, b) = (moves(Color::White), moves(Color::Black));
        // The side to move plays plies 1, 3, 5...; the other 2, 4, 6...
        let (first, second) = match pos.turn() {
            Color::White => (w, b),
            Color::Black => (b, w),
        };
        (2 * first).saturating_sub(1).max(2 * second)
    }

    fn departure(
        pos: &Chess,
        succ: &[(u64, Move)],
        reading: &ChessReading,
        pressed: bool,
    ) -> Departure {
        departure::departure(pos, succ, reading, pressed)
    }

    fn wrong_setup(reading: &ChessReading, variant: Variant) -> Option<crate::phrase::Phrase> {
        match variant {
            Variant::Standard => departure::wrong_setup(reading),
            Variant::Chess960 => departure::wrong_setup_960(reading),
        }
    }

    fn illegal_position(reading: &ChessReading) -> Option<crate::phrase::Phrase> {
        departure::illegal_position(reading)
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{EnPassantMode, MoveList};

    use super::*;

    /// The position `fen` gives in `mode`.
    fn position(fen: &str, mode: CastlingMode) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(mode).unwrap()
    }

    fn mv(pos: &Chess, uci: &str) -> Move {
        uci.parse::<shakmaty::uci::UciMove>()
            .ok()
            .and_then(|u| u.to_move(pos).ok())
            .unwrap_or_else(|| panic!("{uci} is not legal"))
    }

    #[test]
    fn a_piece_goes_on_its_way_only_along_its_line_or_into_its_castling() {
        // Capablanca#145 after 39. Kg2: the queen on a6 went to a7, not on its way to a2.
        let fen: shakmaty::fen::Fen = "8/5p1k/q4p1p/4pP2/6R1/2P2QPP/1r3PK1/8 b - - 12 39"
            .parse()
            .unwrap();
        let pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        let (a7, a2, a4) = (mv(&pos, "a6a7"), mv(&pos, "a6a2"), mv(&pos, "a6a4"));
        assert!(!ChessGame::continues(&a7, &a2));
        assert!(ChessGame::continues(&a4, &a2), "a slide resting on a4");
        assert!(!ChessGame::continues(&a2, &a4), "back the way it came");
        let rook = mv(&pos, "b2b1");
        assert!(!ChessGame::continues(&rook, &a2), "another piece");
        // A castling begun with its rook, not with another piece.
        let fen: shakmaty::fen::Fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1".parse().unwrap();
        let pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        let castle = mv(&pos, "e1g1");
        assert!(matches!(castle, Move::Castle { .. }));
        assert!(ChessGame::continues(&mv(&pos, "h1f1"), &castle));
        assert!(!ChessGame::continues(&mv(&pos, "a1d1"), &castle));
    }

    /// The reading names every square's piece as the board has it (empty squares 0), in
    /// positions with every kind of piece on both sides and promoted pieces.
    #[test]
    fn the_reading_is_the_board_square_by_square() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/pppq1ppp/2n2n2/3pp3/1b1PP3/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 8",
            "QQ2k3/1P6/8/8/8/8/q5p1/4K2R b K - 0 1",
            "8/8/8/8/8/8/8/K6k w - - 0 1",
        ] {
            let pos = position(fen, CastlingMode::Standard);
            let reading = ChessGame::reading(&pos);
            for sq in Square::ALL {
                let want = pos.board().piece_at(sq).map_or(code::EMPTY, piece_code);
                assert_eq!(reading.0[sq as usize], want, "{fen} {sq}");
            }
        }
    }

    #[test]
    fn a_pieces_key_is_its_codes_key() {
        for color in Color::ALL {
            for role in Role::ALL {
                for sq in Square::ALL {
                    assert_eq!(
                        piece_key(color, role, sq),
                        zobrist(sq as usize, piece_code(role.of(color)))
                    );
                }
            }
        }
    }

    #[test]
    fn no_piece_keys_as_zero() {
        assert!(PIECE_KEYS.iter().all(|by_role| by_role[0] == [0; 64]));
    }

    #[test]
    fn successor_keys_match_played_readings() {
        // Positions with castling, en passant and promotion available.
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/pppq1ppp/2n2n2/3pp3/1b1PP3/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 8",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
        ] {
            let pos = position(fen, CastlingMode::Standard);
            let mut succ = Vec::new();
            let key = ChessGame::reading_key(&ChessGame::reading(&pos));
            ChessGame::successors(&pos, key, &mut succ);
            assert!(!succ.is_empty());
            for (key, m) in succ {
                let after = ChessGame::play(&pos, &m);
                let expected = ChessGame::reading_key(&ChessGame::reading(&after));
                assert_eq!(key, expected, "{fen} {m:?}");
            }
        }
    }

    /// Every Chess960 start with only kings, rooks and pawns left (every castling legal, the
    /// king or the rook often not moving, or the two swapping squares): each successor's key is
    /// the key of the reading after playing it, and its UCI parses back to it.
    #[test]
    fn chess960_castling_keys_and_uci_round_trip() {
        let starts = chess960_starts();
        assert_eq!(starts.len(), 960);
        let mut castles = 0;
        for (n, start) in starts.iter().enumerate() {
            let mut setup = start.to_setup(EnPassantMode::Legal);
            let keep = setup.board.kings() | setup.board.rooks() | setup.board.pawns();
            for sq in setup.board.occupied() & !keep {
                setup.board.discard_piece_at(sq);
            }
            let pos = Chess::from_setup(setup, CastlingMode::Chess960).unwrap();
            let before = castles;
            for side in [pos.clone(), {
                let mut p = pos.clone();
                p.play_unchecked(Move::Normal {
                    role: Role::Pawn,
                    from: Square::A2,
                    capture: None,
                    to: Square::A3,
                    promotion: None,
                });
                p
            }] {
                let mut succ = Vec::new();
                let key = ChessGame::reading_key(&ChessGame::reading(&side));
                ChessGame::successors(&side, key, &mut succ);
                for (key, m) in succ {
                    let after = ChessGame::play(&side, &m);
                    let expected = ChessGame::reading_key(&ChessGame::reading(&after));
                    assert_eq!(key, expected, "start {n} {m:?}");
                    let uci = ChessGame::uci(&side, &m).unwrap();
                    assert_eq!(ChessGame::parse_move(&side, &uci), Some(m), "{uci}");
                    if m.is_castle() {
                        castles += 1;
                        let san = ChessGame::notation(&side, &m, &after, true);
                        assert!(san.starts_with("O-O"), "{san}");
                    }
                }
            }
            // Each colour castles at least one way (both, unless the other rook stands on the
            // castling rook's square, as in `RKR` on f1-h1).
            assert!(castles - before >= 2, "start {n}");
        }
    }

    #[test]
    fn chess960_starts_are_all_different_and_read_back_from_their_fen() {
        let mut keys: Vec<u64> = chess960_starts()
            .iter()
            .map(|p| ChessGame::reading_key(&ChessGame::reading(p)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 960);
        assert_eq!(
            chess960_starts()[518].board(),
            Chess::default().board(),
            "518 is the standard position"
        );
        for pos in chess960_starts() {
            let text = ChessGame::position_text(pos);
            let back = ChessGame::parse_start(&text).unwrap();
            assert_eq!(back.board(), pos.board());
            assert_eq!(
                back.castles().castling_rights(),
                pos.castles().castling_rights()
            );
        }
        assert_eq!(chess960_start(960), None);
    }

    #[test]
    fn piece_codes_round_trip() {
        for code in 1..=12u8 {
            assert_eq!(piece_code(code_to_piece(code).unwrap()), code);
        }
        assert_eq!(code_to_piece(0), None);
        assert_eq!(code_to_piece(code::RESULT_DRAW), None);
    }

    #[test]
    fn board_index_mapping() {
        assert_eq!(square_of_board_index(0), Square::A8 as usize);
        assert_eq!(square_of_board_index(63), Square::H1 as usize);
        assert_eq!(square_of_board_index(0x34), Square::E2 as usize);
        assert_eq!(square_of_board_index(0x24), Square::E4 as usize);
    }

    #[test]
    fn result_gesture_by_square_colour() {
        let mut r = [0u8; 64];
        r[Square::E4 as usize] = code::WKING;
        r[Square::D5 as usize] = code::BKING;
        assert_eq!(
            ChessGame::result_gesture(&ChessReading(r)),
            Some(Outcome::WhiteWins)
        );
        let mut r = [0u8; 64];
        r[Square::D4 as usize] = code::WKING;
        r[Square::E5 as usize] = code::BKING;
        assert_eq!(
            ChessGame::result_gesture(&ChessReading(r)),
            Some(Outcome::BlackWins)
        );
        let start = ChessGame::reading(&Chess::default());
        assert_eq!(ChessGame::result_gesture(&start), None);
    }

    #[test]
    fn fen_text_writes_counters_castling_files_and_en_passant_as_shakmaty() {
        for fen in [
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 99 120",
            "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 58",
            "4k3/8/8/3pP3/8/8/8/4K3 w - - 10 1000",
            // The longest counters (and the buffer's length: the longest placement, four
            // castling rights, en passant).
            "4k3/8/8/8/8/8/8/4K3 b - - 4294967295 4294967295",
            "rnbqkbnr/pp1ppppp/8/2pP4/8/8/PPP1PPPP/RNBQKBNR w KQkq c6 4294967295 4294967295",
            "r1b1k1nr/1p1p1p1p/p1p1p1p1/n1b1q3/P1P1P1P1/1P1P1P1P/Q1B1N3/R1B1K1NR w KQkq - 100 99999",
        ] {
            let pos = position(fen, CastlingMode::Standard);
            assert_eq!(ChessGame::position_text(&pos), fen);
        }
        // Chess960: rooks on b and g files; the inner rights are named by file.
        let fen = "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w BGbg - 3 7";
        let pos = position(fen, CastlingMode::Chess960);
        assert_eq!(
            ChessGame::position_text(&pos),
            Fen::from_position(&pos, EnPassantMode::Legal).to_string()
        );
    }

    proptest::proptest! {
        /// The record's FEN and UCI are shakmaty's, character for character, in every position
        /// of random games from the standard start and from Chess960 starts (castling rights
        /// lost one by one, en passant legal or not, promotions, long games' counters).
        #[test]
        fn fen_and_uci_are_shakmatys(
            start in 0u32..961,
            picks in proptest::collection::vec(0usize..1000, 0..300),
        ) {
            for (pos, played) in random_game(start, &picks) {
                proptest::prop_assert_eq!(
                    ChessGame::position_text(&pos),
                    Fen::from_position(&pos, EnPassantMode::Legal).to_string()
                );
                if let Some(mv) = played {
                    proptest::prop_assert_eq!(
                        ChessGame::uci(&pos, &mv),
                        Some(UciMove::from_move(mv, pos.castles().mode()).to_string())
                    );
                }
            }
        }

        /// The notation written from the successors is shakmaty's SAN with its suffix
        /// ([`ChessGame::notation`]), for every legal move in every position of random games
        /// from the standard start and from Chess960 starts (pieces told apart by file, rank or
        /// both, promotions with and without capture, en passant, castling either way, check
        /// and mate).
        #[test]
        fn notation_among_the_successors_is_shakmatys(
            start in 0u32..961,
            picks in proptest::collection::vec(0usize..1000, 0..300),
        ) {
            let mut succ = Vec::new();
            for (pos, _) in random_game(start, &picks) {
                let key = ChessGame::reading_key(&ChessGame::reading(&pos));
                ChessGame::successors(&pos, key, &mut succ);
                for (_, m) in &succ {
                    let after = ChessGame::play(&pos, m);
                    let has_moves = !after.legal_moves().is_empty();
                    proptest::prop_assert_eq!(
                        ChessGame::notation_among(&pos, m, &succ, &after, has_moves),
                        ChessGame::notation(&pos, m, &after, has_moves)
                    );
                }
            }
        }

        /// The reading distance is the number of squares whose codes differ, on any two
        /// readings (any byte on any square) and on readings a few squares apart.
        #[test]
        fn reading_distance_counts_the_squares_that_differ(
            a in proptest::array::uniform32(proptest::num::u8::ANY),
            b in proptest::array::uniform32(proptest::num::u8::ANY),
            c in proptest::array::uniform32(proptest::num::u8::ANY),
            changes in proptest::collection::vec((0usize..64, proptest::num::u8::ANY), 0..8),
        ) {
            let mut x = [0u8; 64];
            x[..32].copy_from_slice(&a);
            x[32..].copy_from_slice(&b);
            let mut y = x;
            y[..32].copy_from_slice(&c);
            let mut near = x;
            for (sq, code) in changes {
                near[sq] = code;
            }
            for (x, y) in [(x, y), (x, near), (near, y), (x, x)] {
                let reference = x.iter().zip(&y).filter(|(p, q)| p != q).count();
                proptest::prop_assert_eq!(
                    ChessGame::reading_distance(&ChessReading(x), &ChessReading(y)),
                    reference
                );
            }
        }

        /// The successors are shakmaty's legal moves, in its order, each with the key of the
        /// reading after it is played (the incremental key against the whole board's), in
        /// every position of random games from the standard start and from Chess960 starts
        /// (captures, promotions with and without one, en passant, castling either way).
        #[test]
        fn successors_are_the_legal_moves_with_their_readings_keys(
            start in 0u32..961,
            picks in proptest::collection::vec(0usize..1000, 0..300),
        ) {
            let mut succ = Vec::new();
            for (pos, _) in random_game(start, &picks) {
                let key = ChessGame::reading_key(&ChessGame::reading(&pos));
                ChessGame::successors(&pos, key, &mut succ);
                let moves = pos.legal_moves();
                proptest::prop_assert_eq!(succ.len(), moves.len());
                for ((k, m), legal) in succ.iter().zip(&moves) {
                    proptest::prop_assert_eq!(m, legal);
                    let after = ChessGame::play(&pos, m);
                    proptest::prop_assert_eq!(
                        *k,
                        ChessGame::reading_key(&ChessGame::reading(&after)),
                        "{:?}", m
                    );
                }
            }
        }
    }

    /// The positions of a random game from `start` ([`random_game_start`]), one for each of
    /// `picks` while there are moves, each with the move `pick_move` then plays from it (`None`
    /// at a position with no move, the last).
    fn random_game(start: u32, picks: &[usize]) -> Vec<(Chess, Option<Move>)> {
        let mut pos = random_game_start(start);
        let mut game = Vec::new();
        for &pick in picks {
            let played = pick_move(&pos.legal_moves(), pick).copied();
            game.push((pos.clone(), played));
            let Some(mv) = played else {
                break;
            };
            pos.play_unchecked(mv);
        }
        game
    }

    /// A random game's start: Chess960 start `start` (0 to 959), or the standard one (960).
    fn random_game_start(start: u32) -> Chess {
        if start == 960 {
            Chess::default()
        } else {
            chess960_start(start).unwrap()
        }
    }

    /// The random games' next move: promotions and pawn moves more often than their share, to
    /// reach them; `None` when there is none.
    fn pick_move(moves: &MoveList, pick: usize) -> Option<&Move> {
        if moves.is_empty() {
            return None;
        }
        let pawns: Vec<&Move> = moves.iter().filter(|m| m.role() == Role::Pawn).collect();
        Some(match moves.iter().find(|m| m.is_promotion()) {
            Some(promotion) if pick.is_multiple_of(3) => promotion,
            _ if pick.is_multiple_of(2) && !pawns.is_empty() => pawns[pick / 2 % pawns.len()],
            _ => &moves[pick % moves.len()],
        })
    }
}
