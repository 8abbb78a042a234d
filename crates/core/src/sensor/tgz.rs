//! The togyz korgool pit board as its sensors see it (TGZ-1, `shared/protocols/togyz-board.md`).
//!
//! Flow: a board dump replaces all 20 counts and both tuz bytes, a pit update changes one count, a
//! tuz update moves one marker; two keys (one per orientation) are kept up to date per update by
//! XOR-ing out and back in the few locations a change touches, so the tracker compares the board
//! with expected positions without copying it. The keys are those of [`TogyzGame::reading_key`]:
//! korgools lying in a marked tuz pit count as its owner's store. A board turned round (black
//! sitting at white's row) reads rows and stores swapped: board location `i` is game location
//! `i + 9 mod 18`, 18 and 19 swap, and each player's marker is the other's. A total that is not
//! 162 (korgools in a hand) is simply a reading no position has.

use super::Orientation;
use crate::{
    game::{
        GameKind,
        togyz::{
            Board, Side, TogyzGame, TogyzReading,
            kind::{LOCATIONS, STORE, zobrist, zobrist_tuz},
        },
    },
    protocol::tgz::PitDump,
};

const PIT_LOCATIONS: usize = 18;

/// The 20 counts and both tuz bytes as sensed, in board numbering.
#[derive(Clone, Debug, Default)]
pub struct TgzBoardState {
    counts: [u8; LOCATIONS],
    tuz: [u8; 2],
    keys: [u64; 2],
    /// A full dump has been seen since the state was created or reset.
    known: bool,
}

/// A pit board has two rows and no quarter turns: those read as the board lying normally or
/// turned round.
#[inline]
fn regular(o: Orientation) -> Orientation {
    match o {
        Orientation::Normal | Orientation::QuarterLeft => Orientation::Normal,
        Orientation::Rotated | Orientation::QuarterRight => Orientation::Rotated,
    }
}

/// The game location of board location `loc` in orientation `o` (the mapping is its own inverse).
#[inline]
fn game_location(loc: usize, o: Orientation) -> usize {
    match regular(o) {
        Orientation::Rotated if loc < PIT_LOCATIONS => (loc + 9) % PIT_LOCATIONS,
        Orientation::Rotated => loc ^ 1,
        _ => loc,
    }
}

/// The game player whose marker the board reports as `player`'s.
#[inline]
fn game_player(player: Side, o: Orientation) -> Side {
    match regular(o) {
        Orientation::Rotated => player.other(),
        _ => player,
    }
}

fn index(o: Orientation) -> usize {
    match regular(o) {
        Orientation::Rotated => 1,
        _ => 0,
    }
}

const ORIENTATIONS: [Orientation; 2] = [Orientation::Normal, Orientation::Rotated];

impl TgzBoardState {
    /// Replaces every location and both markers from a board dump.
    pub fn apply_dump(&mut self, dump: &PitDump) {
        self.counts = dump.counts;
        self.tuz = dump.tuz;
        for o in ORIENTATIONS {
            self.keys[index(o)] = TogyzGame::reading_key(&self.reading(o));
        }
        self.known = true;
    }

    /// Changes one location's count; returns whether the board changed. Locations above 19 are
    /// ignored.
    pub fn apply_pit(&mut self, location: u8, count: u8) -> bool {
        let loc = usize::from(location);
        if loc >= LOCATIONS || self.counts[loc] == count {
            return false;
        }
        let before = self.touched_keys(|s, o| s.pit_touches(loc, o));
        self.counts[loc] = count;
        let after = self.touched_keys(|s, o| s.pit_touches(loc, o));
        self.keys[0] ^= before[0] ^ after[0];
        self.keys[1] ^= before[1] ^ after[1];
        true
    }

    /// Moves `player`'s tuz marker to the opponent's pit `pit` (0: lifted); returns whether the
    /// board changed. Bytes above 9 are ignored.
    pub fn apply_tuz(&mut self, player: Side, pit: u8) -> bool {
        let i = player.index();
        if pit > 9 || self.tuz[i] == pit {
            return false;
        }
        let old = self.tuz[i];
        // The owner's store and both the old and the new marked pit change their effective counts.
        let touches = |_: &TgzBoardState, o: Orientation| {
            let g = game_player(player, o);
            [Some(STORE + g.index()), tuz_pit(g, old), tuz_pit(g, pit)]
        };
        let before = self.touched_keys(touches);
        self.tuz[i] = pit;
        let after = self.touched_keys(touches);
        for o in ORIENTATIONS {
            let g = game_player(player, o);
            self.keys[index(o)] ^=
                before[index(o)] ^ after[index(o)] ^ zobrist_tuz(g, old) ^ zobrist_tuz(g, pit);
        }
        true
    }

    /// The game locations whose effective count a change of board location `loc` can alter in
    /// orientation `o`: itself, and its owner's store if it is a marked tuz pit.
    fn pit_touches(&self, loc: usize, o: Orientation) -> [Option<usize>; 3] {
        let g = game_location(loc, o);
        let tuz = self.game_tuz(o);
        let owner = [Side::White, Side::Black]
            .into_iter()
            .find(|&side| tuz_pit(side, tuz[side.index()]) == Some(g));
        [Some(g), owner.map(|side| STORE + side.index()), None]
    }

    /// For each orientation, the XOR of the key contributions of the game locations `touches`
    /// names (a location named twice counts once).
    fn touched_keys(
        &self,
        touches: impl Fn(&TgzBoardState, Orientation) -> [Option<usize>; 3],
    ) -> [u64; 2] {
        ORIENTATIONS.map(|o| {
            let locs = touches(self, o);
            let effective = self.effective(o);
            let mut k = 0;
            for (i, l) in locs.iter().enumerate() {
                if let Some(l) = *l
                    && !locs[..i].contains(&Some(l))
                {
                    k ^= zobrist(l, effective[l]);
                }
            }
            k
        })
    }

    /// The tuz bytes in game players for orientation `o`.
    fn game_tuz(&self, o: Orientation) -> [u8; 2] {
        match regular(o) {
            Orientation::Rotated => [self.tuz[1], self.tuz[0]],
            _ => self.tuz,
        }
    }

    fn effective(&self, o: Orientation) -> [u16; LOCATIONS] {
        self.reading(o).effective()
    }

    /// Whether a full dump has been applied (updates alone do not make a board known).
    pub fn is_known(&self) -> bool {
        self.known
    }

    /// Forgets the board (after a reconnect, until the next dump).
    pub fn reset(&mut self) {
        *self = TgzBoardState::default();
    }

    /// Raw counts in board numbering.
    pub fn counts(&self) -> &[u8; LOCATIONS] {
        &self.counts
    }

    /// Raw tuz bytes (white's, black's marker as the board names them).
    pub fn tuz(&self) -> [u8; 2] {
        self.tuz
    }

    /// The key of the reading in orientation `o` (equal to `TogyzGame::reading_key` of it).
    #[inline]
    pub fn key(&self, o: Orientation) -> u64 {
        self.keys[index(o)]
    }

    /// The reading in game locations for orientation `o`.
    pub fn reading(&self, o: Orientation) -> TogyzReading {
        let mut counts = [0u8; LOCATIONS];
        for (loc, &n) in self.counts.iter().enumerate() {
            counts[game_location(loc, o)] = n;
        }
        TogyzReading {
            counts,
            tuz: self.game_tuz(o),
        }
    }

    /// The board dump that reproduces this state.
    pub fn to_dump(&self) -> PitDump {
        PitDump {
            counts: self.counts,
            tuz: self.tuz,
        }
    }
}

/// Game location of the pit under `owner`'s marker byte `pit`, if it names one.
fn tuz_pit(owner: Side, pit: u8) -> Option<usize> {
    (1..=9)
        .contains(&pit)
        .then(|| Board::location(owner.other(), pit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::togyz::{Move, Position};

    fn start_dump() -> PitDump {
        let mut counts = [9u8; LOCATIONS];
        counts[18] = 0;
        counts[19] = 0;
        PitDump {
            counts,
            tuz: [0, 0],
        }
    }

    fn check_keys(s: &TgzBoardState) {
        for o in ORIENTATIONS {
            assert_eq!(
                s.key(o),
                TogyzGame::reading_key(&s.reading(o)),
                "{o:?} {:?}",
                s.reading(o)
            );
        }
    }

    #[test]
    fn keys_follow_updates_in_both_orientations() {
        let mut s = TgzBoardState::default();
        assert!(!s.is_known());
        s.apply_dump(&start_dump());
        assert!(s.is_known());
        let start = TogyzGame::reading(&Position::new());
        for o in ORIENTATIONS {
            assert_eq!(s.reading(o), start);
            assert_eq!(s.key(o), TogyzGame::reading_key(&start));
        }
        // 76 sown one korgool at a time, then the capture carried to the store.
        assert!(s.apply_pit(6, 0));
        check_keys(&s);
        for (loc, n) in [(6, 1), (8, 10), (7, 10), (9, 10), (10, 10), (11, 10)] {
            assert!(s.apply_pit(loc, n));
            check_keys(&s);
        }
        assert!(!s.apply_pit(11, 10));
        for (loc, n) in [(12, 10), (13, 10), (14, 10), (14, 0), (18, 10)] {
            assert!(s.apply_pit(loc, n));
            check_keys(&s);
        }
        let after = TogyzGame::reading(&Position::new().play(Move::new(7).unwrap()).unwrap());
        assert_eq!(s.reading(Orientation::Normal), after);
        assert_eq!(s.key(Orientation::Normal), TogyzGame::reading_key(&after));
        assert_ne!(s.reading(Orientation::Rotated), after);
        assert!(!s.apply_pit(20, 1));
        assert!(!s.apply_tuz(Side::White, 10));
    }

    #[test]
    fn tuz_markers_and_korgools_left_in_a_tuz() {
        let mut s = TgzBoardState::default();
        s.apply_dump(&start_dump());
        // Korgools in white's pit 5 and black's pit 3, then markers set, moved and lifted; the
        // keys stay those of the readings whatever the order.
        for step in 0..12u8 {
            match step % 4 {
                0 => assert!(s.apply_pit(4, 3 + step)),
                1 => assert!(s.apply_tuz(Side::Black, [5, 4, 0][usize::from(step / 4)])),
                2 => assert!(s.apply_pit(9 + 2, 1 + step)),
                _ => assert!(s.apply_tuz(Side::White, [3, 0, 3][usize::from(step / 4)])),
            }
            check_keys(&s);
            assert!(s.apply_pit(18, step + 20));
            assert!(s.apply_pit(19, step + 40));
            check_keys(&s);
        }
        // Black's marker on white's pit 5 holding 2, black's store 13: as 0 and 15.
        let mut a = TgzBoardState::default();
        a.apply_dump(&start_dump());
        a.apply_tuz(Side::Black, 5);
        a.apply_pit(4, 2);
        a.apply_pit(19, 13);
        let mut b = a.clone();
        b.apply_pit(4, 0);
        b.apply_pit(19, 15);
        assert_eq!(a.key(Orientation::Normal), b.key(Orientation::Normal));
        assert_eq!(
            a.reading(Orientation::Normal),
            b.reading(Orientation::Normal)
        );
        // Turned round, the same marker is white's, on black's pit 5, with white's store.
        let r = a.reading(Orientation::Rotated);
        assert_eq!(r.tuz, [5, 0]);
        assert_eq!((r.counts[9 + 4], r.counts[18]), (2, 13));
        assert_eq!(a.key(Orientation::Rotated), b.key(Orientation::Rotated));
    }

    #[test]
    fn a_board_turned_round_swaps_rows_and_stores() {
        // 76 played on a board whose white row is where black sits: black's row of the board.
        let after = TogyzGame::reading(&Position::new().play(Move::new(7).unwrap()).unwrap());
        let mut counts = [0u8; LOCATIONS];
        counts[..9].copy_from_slice(&after.counts[9..18]);
        counts[9..18].copy_from_slice(&after.counts[..9]);
        counts[18] = after.counts[19];
        counts[19] = after.counts[18];
        let mut s = TgzBoardState::default();
        s.apply_dump(&PitDump {
            counts,
            tuz: [0, 0],
        });
        assert_eq!(s.reading(Orientation::Rotated), after);
        assert_eq!(s.key(Orientation::Rotated), TogyzGame::reading_key(&after));
        assert_eq!(s.to_dump().counts, counts);
        // A hand holding a korgool: total 161, no position reads so.
        s.apply_pit(0, counts[0] - 1);
        assert_eq!(s.reading(Orientation::Rotated).total(), 161);
        assert_ne!(s.reading(Orientation::Rotated), after);
        s.reset();
        assert!(!s.is_known());
    }
}
