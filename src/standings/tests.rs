use proptest::prelude::*;

use super::*;

fn field(names: &[&str], rounds: Vec<RoundResults>) -> Field {
    Field {
        players: names.iter().map(|n| Entrant::named(n)).collect(),
        rounds,
    }
}

fn board(white: PlayerIndex, black: PlayerIndex, outcome: BoardOutcome) -> BoardResult {
    BoardResult {
        white,
        black,
        outcome,
    }
}

/// Name, rank, points and each tie-break as text, by rank.
fn table(s: &Standings) -> Vec<(String, u32, String, Vec<String>)> {
    s.rows
        .iter()
        .map(|r| {
            (
                r.entrant.name.clone(),
                r.rank,
                r.points.to_string(),
                r.tiebreaks
                    .iter()
                    .map(|v| v.map_or("-".to_owned(), |v| v.to_string()))
                    .collect(),
            )
        })
        .collect()
}

fn row<'a>(s: &'a Standings, name: &str) -> &'a StandingRow {
    s.rows.iter().find(|r| r.entrant.name == name).unwrap()
}

/// Six players, three rounds, with a forfeit, a pairing-allocated bye and an absence in the
/// last round. Worked by hand (halves in brackets):
/// - scores: A 2.5, B 2 (a bye in round 3), C 1.5, D 2 (a forfeit win), E 0, F 1;
/// - E's score for the others' tie-breaks is ½ (16.3: absent in the last round, a draw);
/// - A: opponents B 2, F 1, D 2: BH 5, Cut-1 4 (F), SB 2·1 + 1·1 + 2·½ = 4, WON 2;
/// - B: A 2.5, C 1.5, and the bye's dummy at B's own 2 (16.4): BH 6, Cut-1 4.5, SB 0 + 1.5 + 2 = 3.5;
/// - C: D 2, B 2, F 1: BH 5, Cut-1 4, SB 1 + 0 + 1 = 2;
/// - D: C 1.5, the forfeit's dummy at D's own 2, A 2.5: BH 6, Cut-1 4.5, SB 0.75 + 2 + 1.25 = 4;
/// - E: F 1 and two voluntary unplayed rounds against dummies at E's own 0: BH 1, Cut-1 1 (a
///   voluntary round's 0 is cut: 16.5), SB 0;
/// - F: E ½ (adjusted), A 2.5, C 1.5: BH 4.5, Cut-1 4, SB 0.5.
///
/// B and D tie on 2, on Cut-1 and on Buchholz; Sonneborn-Berger puts D ahead.
fn six_players() -> Field {
    use BoardOutcome::*;
    field(
        &["A", "B", "C", "D", "E", "F"],
        vec![
            RoundResults {
                boards: vec![
                    board(0, 1, WhiteWins),
                    board(2, 3, Draw),
                    board(4, 5, BlackWins),
                ],
                byes: vec![],
            },
            RoundResults {
                boards: vec![
                    board(5, 0, BlackWins),
                    board(1, 2, WhiteWins),
                    board(3, 4, WhiteForfeitWin),
                ],
                byes: vec![],
            },
            RoundResults {
                boards: vec![board(0, 3, Draw), board(2, 5, WhiteWins)],
                byes: vec![Bye {
                    player: 1,
                    kind: ByeKind::PairingAllocated,
                }],
            },
        ],
    )
}

fn texts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn six_players_by_hand() {
    let s = standings(&six_players(), &TieBreak::DEFAULT).unwrap();
    assert_eq!(
        table(&s),
        vec![
            (
                "A".into(),
                1,
                "2.5".into(),
                texts(&["4", "5", "4", "-", "2"])
            ),
            (
                "D".into(),
                2,
                "2".into(),
                texts(&["4.5", "6", "4", "-", "0"])
            ),
            (
                "B".into(),
                3,
                "2".into(),
                texts(&["4.5", "6", "3.5", "-", "1"])
            ),
            (
                "C".into(),
                4,
                "1.5".into(),
                texts(&["4", "5", "2", "-", "1"])
            ),
            (
                "F".into(),
                5,
                "1".into(),
                texts(&["4", "4.5", "0.5", "-", "1"])
            ),
            ("E".into(), 6, "0".into(), texts(&["1", "1", "0", "-", "0"])),
        ]
    );
    // The crosstable: A met B (rank 3) with white and won, F (5) with black, D (2) with white.
    let a = row(&s, "A");
    let cells: Vec<_> = a
        .rounds
        .iter()
        .map(|c| (c.opponent_rank, c.colour, c.result))
        .collect();
    assert_eq!(
        cells,
        vec![
            (Some(3), Some(Colour::White), CellResult::Win),
            (Some(5), Some(Colour::Black), CellResult::Win),
            (Some(2), Some(Colour::White), CellResult::Draw),
        ]
    );
    let e = row(&s, "E");
    assert_eq!(e.rounds[1].result, CellResult::ForfeitLoss);
    assert_eq!(e.rounds[2].result, CellResult::Absent);
    assert_eq!(
        row(&s, "B").rounds[2].result,
        CellResult::Bye(ByeKind::PairingAllocated)
    );
}

#[test]
fn a_forfeit_win_is_no_game_won() {
    // D's round-2 point came by forfeit (C.07 7.2): with games won first, B (one game won)
    // goes ahead of D (none), and the direct encounter cannot part them: they never met.
    let s = standings(&six_players(), &[TieBreak::DirectEncounter, TieBreak::Wins]).unwrap();
    let order: Vec<_> = s
        .rows
        .iter()
        .map(|r| (r.entrant.name.as_str(), r.rank))
        .collect();
    assert_eq!(order[1..3], [("B", 2), ("D", 3)]);
    assert_eq!(row(&s, "B").tiebreaks[0], None);
    assert_eq!(row(&s, "D").tiebreaks[0], None);
}

/// Four players, a round robin's three rounds: P0 and P3 end on 2, P3 having beaten P0 in
/// round 3. Both have Buchholz 4 and two wins; Sonneborn-Berger is P0 2, P3 2.5.
fn round_robin() -> Field {
    use BoardOutcome::*;
    field(
        &["P0", "P1", "P2", "P3"],
        vec![
            RoundResults {
                boards: vec![board(0, 1, WhiteWins), board(2, 3, BlackWins)],
                byes: vec![],
            },
            RoundResults {
                boards: vec![board(0, 2, WhiteWins), board(1, 3, WhiteWins)],
                byes: vec![],
            },
            RoundResults {
                boards: vec![board(0, 3, BlackWins), board(1, 2, Draw)],
                byes: vec![],
            },
        ],
    )
}

#[test]
fn the_direct_encounter_parts_players_who_met() {
    let s = standings(
        &round_robin(),
        &[
            TieBreak::Buchholz,
            TieBreak::Wins,
            TieBreak::DirectEncounter,
        ],
    )
    .unwrap();
    assert_eq!(
        table(&s)[..2],
        [
            ("P3".into(), 1, "2".into(), texts(&["4", "2", "1"])),
            ("P0".into(), 2, "2".into(), texts(&["4", "2", "0"])),
        ]
    );
    // Without tie-breaks they share the first place.
    let s = standings(&round_robin(), &[]).unwrap();
    let top: Vec<_> = s.rows.iter().map(|r| r.rank).collect();
    assert_eq!(top, vec![1, 1, 3, 4]);
    // Sonneborn-Berger alone gives the same order.
    let s = standings(&round_robin(), &[TieBreak::SonnebornBerger]).unwrap();
    assert_eq!(row(&s, "P3").tiebreaks[0], Some(TieBreakValue(10)));
    assert_eq!(row(&s, "P0").tiebreaks[0], Some(TieBreakValue(8)));
}

#[test]
fn a_pending_result_counts_for_nothing() {
    let mut f = six_players();
    f.rounds[2].boards[0].outcome = BoardOutcome::Pending;
    let s = standings(&f, &TieBreak::DEFAULT).unwrap();
    assert_eq!(row(&s, "A").points, Points(4));
    assert_eq!(row(&s, "D").points, Points(3));
    assert_eq!(row(&s, "A").rounds[2].result, CellResult::Pending);
    // A's Buchholz has no round-3 part yet: B 2 + F 1.
    assert_eq!(
        row(&s, "A").tiebreaks[1],
        Some(TieBreakValue::from_halves(6))
    );
}

#[test]
fn a_requested_bye_before_a_played_round_counts_as_scored() {
    use BoardOutcome::*;
    // X takes a zero-point bye in round 1, then plays: for Y's Buchholz X's score is X's own
    // (16.3.1), 1; were the bye X's last round it would count as a draw (16.3.2).
    let f = field(
        &["X", "Y", "Z"],
        vec![
            RoundResults {
                boards: vec![board(1, 2, WhiteWins)],
                byes: vec![Bye {
                    player: 0,
                    kind: ByeKind::ZeroPoint,
                }],
            },
            RoundResults {
                boards: vec![board(0, 1, WhiteWins)],
                byes: vec![Bye {
                    player: 2,
                    kind: ByeKind::PairingAllocated,
                }],
            },
        ],
    );
    let s = standings(&f, &[TieBreak::Buchholz]).unwrap();
    // Y: Z (1) + X (1).
    assert_eq!(
        row(&s, "Y").tiebreaks[0],
        Some(TieBreakValue::from_halves(4))
    );
    let mut last = f.clone();
    last.rounds.swap(0, 1);
    // Now X plays round 1 and is on a zero-point bye in round 2, the last: a draw for Y.
    let s = standings(&last, &[TieBreak::Buchholz]).unwrap();
    assert_eq!(
        row(&s, "Y").tiebreaks[0],
        Some(TieBreakValue::from_halves(2 + 3))
    );
}

#[test]
fn tie_break_names_from_the_config() {
    assert_eq!(
        parse_tiebreaks(&["buchholz-cut1", "Sonneborn-Berger", "wins"]).unwrap(),
        vec![
            TieBreak::BuchholzCut1,
            TieBreak::SonnebornBerger,
            TieBreak::Wins
        ]
    );
    assert_eq!(
        parse_tiebreaks(&["median"]),
        Err(TieBreakError::Unknown("median".into()))
    );
    assert_eq!(
        parse_tiebreaks(&["wins", "wins"]),
        Err(TieBreakError::Repeated(TieBreak::Wins))
    );
    for t in TieBreak::ALL {
        assert_eq!(t.name().parse::<TieBreak>(), Ok(t));
    }
}

#[test]
fn a_field_that_names_a_player_twice_is_refused() {
    let f = field(
        &["A", "B"],
        vec![RoundResults {
            boards: vec![board(0, 1, BoardOutcome::Draw)],
            byes: vec![Bye {
                player: 1,
                kind: ByeKind::HalfPoint,
            }],
        }],
    );
    assert_eq!(
        standings(&f, &[]),
        Err(FieldError::TwiceInRound {
            round: 1,
            player: 1
        })
    );
    let f = field(
        &["A"],
        vec![RoundResults {
            boards: vec![board(0, 3, BoardOutcome::Draw)],
            byes: vec![],
        }],
    );
    assert_eq!(
        standings(&f, &[]),
        Err(FieldError::UnknownPlayer {
            round: 1,
            player: 3
        })
    );
}

#[test]
fn values_print_as_points() {
    assert_eq!(Points(5).to_string(), "2.5");
    assert_eq!(Points(4).to_string(), "2");
    assert_eq!(TieBreakValue(29).to_string(), "7.25");
    assert_eq!(TieBreakValue(31).to_string(), "7.75");
    assert_eq!(TieBreakValue(30).to_string(), "7.5");
    assert_eq!(TieBreakValue(28).to_string(), "7");
}

// ------------------------------------------------------------------ properties

const OUTCOMES: [BoardOutcome; 7] = [
    BoardOutcome::WhiteWins,
    BoardOutcome::Draw,
    BoardOutcome::BlackWins,
    BoardOutcome::WhiteForfeitWin,
    BoardOutcome::BlackForfeitWin,
    BoardOutcome::DoubleForfeit,
    BoardOutcome::Pending,
];

/// What a round left over gets: a bye of any kind, or nothing (absent).
const LEFT_OVER: [Option<ByeKind>; 5] = [
    Some(ByeKind::PairingAllocated),
    Some(ByeKind::FullPoint),
    Some(ByeKind::HalfPoint),
    Some(ByeKind::ZeroPoint),
    None,
];

/// A random Swiss-like field: each round the players in a shuffled order, paired two by two,
/// with a random outcome; the rest (and some pairs, to leave players out) on a bye or absent.
fn arb_field() -> impl Strategy<Value = Field> {
    (2usize..10, 1usize..6).prop_flat_map(|(n, rounds)| {
        let round = (
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(0..OUTCOMES.len(), n),
            proptest::collection::vec(0..LEFT_OVER.len(), n),
            0..=n / 2,
        );
        proptest::collection::vec(round, rounds).prop_map(move |rounds| Field {
            players: (0..n)
                .map(|i| Entrant::named(&format!("P{i:02}")))
                .collect(),
            rounds: rounds
                .into_iter()
                .map(|(order, outcomes, left, pairs)| {
                    let boards: Vec<BoardResult> = (0..pairs)
                        .map(|b| board(order[2 * b], order[2 * b + 1], OUTCOMES[outcomes[b]]))
                        .collect();
                    let byes = order[2 * pairs..]
                        .iter()
                        .zip(&left)
                        .filter_map(|(&player, &l)| LEFT_OVER[l].map(|kind| Bye { player, kind }))
                        .collect();
                    RoundResults { boards, byes }
                })
                .collect(),
        })
    })
}

fn arb_tiebreaks() -> impl Strategy<Value = Vec<TieBreak>> {
    Just(TieBreak::ALL.to_vec())
        .prop_shuffle()
        .prop_flat_map(|all| (0..=all.len()).prop_map(move |k| all[..k].to_vec()))
}

proptest! {
    /// Every point comes from a board or a bye: a decided game gives one between the two, a
    /// double forfeit or a pending game none.
    #[test]
    fn points_come_from_results(f in arb_field(), t in arb_tiebreaks()) {
        let s = standings(&f, &t).unwrap();
        let from_boards: u32 = f.rounds.iter().flat_map(|r| &r.boards).map(|b| match b.outcome {
            BoardOutcome::DoubleForfeit | BoardOutcome::Pending => 0,
            _ => 2,
        }).sum();
        let from_byes: u32 = f.rounds.iter().flat_map(|r| &r.byes)
            .map(|b| CellResult::Bye(b.kind).halves()).sum();
        let total: u32 = s.rows.iter().map(|r| r.points.0).sum();
        prop_assert_eq!(total, from_boards + from_byes);
    }

    /// The table is ordered: points never rise down the table, ranks never fall, a rank is
    /// one more than the rows above it unless tied, and a rank is shared only by equal values.
    #[test]
    fn the_table_is_ordered(f in arb_field(), t in arb_tiebreaks()) {
        let s = standings(&f, &t).unwrap();
        prop_assert_eq!(s.rows.len(), f.players.len());
        for (i, w) in s.rows.windows(2).enumerate() {
            prop_assert!(w[0].points >= w[1].points);
            prop_assert!(w[0].rank <= w[1].rank);
            if w[0].rank == w[1].rank {
                prop_assert_eq!(w[0].points, w[1].points);
                prop_assert_eq!(&w[0].tiebreaks, &w[1].tiebreaks);
            } else {
                prop_assert_eq!(w[1].rank as usize, i + 2);
            }
        }
    }

    /// The crosstable agrees with itself: an opponent's cell names this player's rank, the
    /// other colour and the other side of the result.
    #[test]
    fn the_crosstable_is_symmetric(f in arb_field()) {
        let s = standings(&f, &TieBreak::DEFAULT).unwrap();
        let cells = cells(&f).unwrap();
        for r in &s.rows {
            for (round, c) in r.rounds.iter().enumerate() {
                let Some(o) = cells[r.player][round].opponent else { continue };
                let theirs = s.rows.iter().find(|x| x.player == o).unwrap().rounds[round];
                prop_assert_eq!(theirs.opponent_rank, Some(r.rank));
                prop_assert_ne!(theirs.colour, c.colour);
                prop_assert_eq!(
                    theirs.result.halves() + c.result.halves(),
                    match c.result {
                        CellResult::DoubleForfeit | CellResult::Pending => 0,
                        _ => 2,
                    }
                );
            }
        }
    }

    /// The order of the input's players changes nobody's rank, points or tie-breaks.
    #[test]
    fn the_order_of_players_does_not_matter(f in arb_field(), t in arb_tiebreaks(), seed in any::<u64>()) {
        let n = f.players.len();
        let mut perm: Vec<usize> = (0..n).collect();
        // A rotation and a reversal from the seed: enough to move every index.
        perm.rotate_left(seed as usize % n);
        if seed % 2 == 1 { perm.reverse(); }
        let moved = Field {
            players: perm.iter().map(|&p| f.players[p].clone()).collect(),
            rounds: f.rounds.iter().map(|r| {
                let at = |p: PlayerIndex| perm.iter().position(|&q| q == p).unwrap();
                RoundResults {
                    boards: r.boards.iter().map(|b| board(at(b.white), at(b.black), b.outcome)).collect(),
                    byes: r.byes.iter().map(|b| Bye { player: at(b.player), kind: b.kind }).collect(),
                }
            }).collect(),
        };
        let summary = |s: &Standings| {
            let mut v: Vec<_> = s.rows.iter()
                .map(|r| (r.entrant.name.clone(), r.rank, r.points, r.tiebreaks.clone()))
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        prop_assert_eq!(summary(&standings(&f, &t).unwrap()), summary(&standings(&moved, &t).unwrap()));
    }

    /// Cut-1 never exceeds the full Buchholz, and games won never exceed the points.
    #[test]
    fn cut_and_wins_are_bounded(f in arb_field()) {
        let t = [TieBreak::BuchholzCut1, TieBreak::Buchholz, TieBreak::Wins];
        let s = standings(&f, &t).unwrap();
        for r in &s.rows {
            let (cut, full, won) = (r.tiebreaks[0].unwrap(), r.tiebreaks[1].unwrap(), r.tiebreaks[2].unwrap());
            prop_assert!(cut <= full);
            prop_assert!(won.0 <= r.points.0 * 2);
        }
    }
}
