//! The event's standings: points, FIDE tie-breaks and the crosstable, from each round's results.
//!
//! Flow: the store gathers a [`Field`] (the players, and per round each board's pairing with its
//! [`BoardOutcome`] and the byes: `Store::standings_field`); [`standings`] folds it into each
//! player's record per round (a [`Cell`]: opponent, colour, [`CellResult`]), scores it (1, ½, 0:
//! chess and togyz korgool alike, Laws 10.1 and the togyz rules' 10.1), ranks by points and then
//! by the configured [`TieBreak`]s in order, and returns a typed [`Standings`] table. Pure: no
//! I/O, no clock; a pending result counts for nothing and is shown as pending.
//!
//! The tie-breaks follow FIDE's Tie-Break Regulations (Handbook C.07, 2023 edition):
//! - Buchholz (8.1): the sum of the opponents' scores; Cut-1 (14.1) drops the least significant
//!   one, or, for a participant with voluntary unplayed rounds, the lowest of those (16.5);
//! - Sonneborn-Berger (9.1): the sum of each opponent's score times the points scored against
//!   them;
//! - direct encounter (6): the points scored in the games between the tied participants, when
//!   all of them met each other;
//! - number of games won over the board (7.2, WON): a forfeit win or a bye is no game won.
//!
//! Unplayed rounds in the opponent-based tie-breaks (16): for the opponents' tie-breaks, a
//! participant's score is adjusted (16.3: requested byes and absences followed only by voluntary
//! unplayed rounds, or in the last round, count as draws; every other unplayed round with the
//! points it gave); for the participant's own tie-breaks each unplayed round is a game against
//! a dummy whose score is the participant's own (16.4).

use std::{cmp::Ordering, fmt, str::FromStr};

use serde::Serialize;

/// A player's place in [`Field::players`].
pub type PlayerIndex = usize;

/// Who takes part, as the standings show them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entrant {
    pub name: String,
    pub rating: Option<u32>,
    pub title: Option<String>,
    pub federation: Option<String>,
    pub fide_id: Option<u32>,
    /// The starting rank of the TRF the pairings came from, if they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rank: Option<u32>,
}

impl Entrant {
    /// A player known by name only.
    pub fn named(name: &str) -> Entrant {
        Entrant {
            name: name.to_owned(),
            rating: None,
            title: None,
            federation: None,
            fide_id: None,
            start_rank: None,
        }
    }
}

/// The result of one board, as the record has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardOutcome {
    WhiteWins,
    Draw,
    BlackWins,
    /// `+/-`: white wins by forfeit.
    WhiteForfeitWin,
    /// `-/+`: black wins by forfeit.
    BlackForfeitWin,
    /// `-/-`: neither came.
    DoubleForfeit,
    /// `*`, no game yet, or a result the arbiter has not settled: counts for nothing.
    Pending,
}

impl BoardOutcome {
    /// The outcome of a stored result (`1-0`, `+/-`, ...); anything else is pending.
    pub fn from_result(result: &str) -> BoardOutcome {
        match result.trim() {
            "1-0" => BoardOutcome::WhiteWins,
            "0-1" => BoardOutcome::BlackWins,
            "1/2-1/2" | "½-½" => BoardOutcome::Draw,
            "+/-" => BoardOutcome::WhiteForfeitWin,
            "-/+" => BoardOutcome::BlackForfeitWin,
            "-/-" => BoardOutcome::DoubleForfeit,
            _ => BoardOutcome::Pending,
        }
    }
}

/// One board of a round: who played white and black, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardResult {
    pub white: PlayerIndex,
    pub black: PlayerIndex,
    pub outcome: BoardOutcome,
}

/// An unplayed round without an opponent (C.07 16.2, TRF-16's codes in brackets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ByeKind {
    /// The pairing left the player out (`U`): a win's points.
    PairingAllocated,
    /// A full-point bye (`F`).
    FullPoint,
    /// A requested half-point bye (`H`).
    HalfPoint,
    /// A requested zero-point bye (`Z`).
    ZeroPoint,
}

/// A player without a board in a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bye {
    pub player: PlayerIndex,
    pub kind: ByeKind,
}

/// One round as recorded: its boards and its byes. A player in neither is absent (scored as a
/// zero-point bye).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundResults {
    pub boards: Vec<BoardResult>,
    pub byes: Vec<Bye>,
}

/// Everything the standings are made of: the players and each round, round 1 first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Field {
    pub players: Vec<Entrant>,
    pub rounds: Vec<RoundResults>,
}

/// A configured tie-break, by its name in `[tournament] tiebreaks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TieBreak {
    /// C.07 8.1.
    #[serde(rename = "buchholz")]
    Buchholz,
    /// C.07 8.1 with the 14.1 modifier (and 16.5).
    #[serde(rename = "buchholz-cut1")]
    BuchholzCut1,
    /// C.07 9.1.
    #[serde(rename = "sonneborn-berger")]
    SonnebornBerger,
    /// C.07 6.
    #[serde(rename = "direct-encounter")]
    DirectEncounter,
    /// C.07 7.2 (WON): games won over the board.
    #[serde(rename = "wins")]
    Wins,
}

impl TieBreak {
    pub const ALL: [TieBreak; 5] = [
        TieBreak::BuchholzCut1,
        TieBreak::Buchholz,
        TieBreak::SonnebornBerger,
        TieBreak::DirectEncounter,
        TieBreak::Wins,
    ];

    /// The order used when the config names none: FIDE's usual list for a Swiss.
    pub const DEFAULT: [TieBreak; 5] = TieBreak::ALL;

    /// The name the config writes.
    pub fn name(self) -> &'static str {
        match self {
            TieBreak::Buchholz => "buchholz",
            TieBreak::BuchholzCut1 => "buchholz-cut1",
            TieBreak::SonnebornBerger => "sonneborn-berger",
            TieBreak::DirectEncounter => "direct-encounter",
            TieBreak::Wins => "wins",
        }
    }

    /// FIDE's abbreviation (C.07), for a table's heading.
    pub fn abbreviation(self) -> &'static str {
        match self {
            TieBreak::Buchholz => "BH",
            TieBreak::BuchholzCut1 => "BH-C1",
            TieBreak::SonnebornBerger => "SB",
            TieBreak::DirectEncounter => "DE",
            TieBreak::Wins => "WON",
        }
    }
}

impl fmt::Display for TieBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tie-break name the config may not use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TieBreakError {
    #[error(
        "unknown tie-break {0:?} (known: buchholz-cut1, buchholz, sonneborn-berger, direct-encounter, wins)"
    )]
    Unknown(String),
    #[error("tie-break {0} is listed twice")]
    Repeated(TieBreak),
}

impl FromStr for TieBreak {
    type Err = TieBreakError;

    fn from_str(s: &str) -> Result<TieBreak, TieBreakError> {
        let wanted = s.trim().to_ascii_lowercase();
        TieBreak::ALL
            .into_iter()
            .find(|t| t.name() == wanted)
            .ok_or_else(|| TieBreakError::Unknown(s.to_owned()))
    }
}

/// The tie-breaks of a config list, in order; a name unknown or given twice is refused.
pub fn parse_tiebreaks<S: AsRef<str>>(names: &[S]) -> Result<Vec<TieBreak>, TieBreakError> {
    let mut out = Vec::new();
    for name in names {
        let t: TieBreak = name.as_ref().parse()?;
        if out.contains(&t) {
            return Err(TieBreakError::Repeated(t));
        }
        out.push(t);
    }
    Ok(out)
}

/// Points, in halves: exact, and ordered as numbers are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "f64")]
pub struct Points(pub u32);

impl From<Points> for f64 {
    fn from(p: Points) -> f64 {
        f64::from(p.0) / 2.0
    }
}

impl fmt::Display for Points {
    /// `3`, `2.5` (TRF and pages write ½ as `.5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0 / 2)?;
        if self.0 % 2 == 1 {
            f.write_str(".5")?;
        }
        Ok(())
    }
}

/// A tie-break's value, in quarters of a point (Sonneborn-Berger multiplies two halves):
/// exact, and ordered as numbers are. A count (games won) is a whole number of points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "f64")]
pub struct TieBreakValue(pub u32);

impl TieBreakValue {
    fn from_halves(halves: u32) -> TieBreakValue {
        TieBreakValue(halves * 2)
    }

    fn count(n: u32) -> TieBreakValue {
        TieBreakValue(n * 4)
    }
}

impl From<TieBreakValue> for f64 {
    fn from(v: TieBreakValue) -> f64 {
        f64::from(v.0) / 4.0
    }
}

impl fmt::Display for TieBreakValue {
    /// `7`, `7.5`, `7.25`, `7.75`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0 / 4)?;
        match self.0 % 4 {
            1 => f.write_str(".25"),
            2 => f.write_str(".5"),
            3 => f.write_str(".75"),
            _ => Ok(()),
        }
    }
}

/// A player's colour on a board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    White,
    Black,
}

/// What a round gave a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellResult {
    Win,
    Draw,
    Loss,
    ForfeitWin,
    ForfeitLoss,
    /// Both forfeited: a forfeit loss for each.
    DoubleForfeit,
    Bye(ByeKind),
    /// No board and no bye recorded: a zero-point bye.
    Absent,
    /// Paired, result not yet known.
    Pending,
}

impl CellResult {
    /// Points for the round, in halves (1, ½, 0; a pending result none).
    pub fn halves(self) -> u32 {
        match self {
            CellResult::Win
            | CellResult::ForfeitWin
            | CellResult::Bye(ByeKind::PairingAllocated | ByeKind::FullPoint) => 2,
            CellResult::Draw | CellResult::Bye(ByeKind::HalfPoint) => 1,
            CellResult::Loss
            | CellResult::ForfeitLoss
            | CellResult::DoubleForfeit
            | CellResult::Bye(ByeKind::ZeroPoint)
            | CellResult::Absent
            | CellResult::Pending => 0,
        }
    }

    /// A game played over the board (C.07 16: everything else is an unplayed round).
    pub fn is_played(self) -> bool {
        matches!(self, CellResult::Win | CellResult::Draw | CellResult::Loss)
    }

    /// An unplayed round (C.07 16.1: any round without a game over the board); a pending
    /// result is neither played nor unplayed yet.
    pub fn is_unplayed(self) -> bool {
        !self.is_played() && self != CellResult::Pending
    }

    /// A voluntary unplayed round (C.07 16.1.2: a requested bye or a forfeit loss); an absence
    /// is taken as a zero-point bye.
    pub fn is_voluntary_unplayed(self) -> bool {
        matches!(
            self,
            CellResult::ForfeitLoss
                | CellResult::DoubleForfeit
                | CellResult::Bye(ByeKind::HalfPoint | ByeKind::ZeroPoint)
                | CellResult::Absent
        )
    }

    /// A requested bye (C.07 16.1.1), an absence included.
    fn is_requested_bye(self) -> bool {
        matches!(
            self,
            CellResult::Bye(ByeKind::HalfPoint | ByeKind::ZeroPoint) | CellResult::Absent
        )
    }
}

/// One player's round: whom they met (none for a bye), with which colour, and the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub opponent: Option<PlayerIndex>,
    pub colour: Option<Colour>,
    pub result: CellResult,
}

/// A crosstable cell as shown: the opponent by rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CrossCell {
    /// The opponent's rank in these standings.
    pub opponent_rank: Option<u32>,
    pub colour: Option<Colour>,
    pub result: CellResult,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StandingRow {
    /// 1-based; players still tied after every tie-break share it.
    pub rank: u32,
    pub player: PlayerIndex,
    pub entrant: Entrant,
    pub points: Points,
    /// In the order of [`Standings::tiebreaks`]; `None` where the tie-break does not apply
    /// (a direct encounter among players who did not all meet, or who are not tied).
    pub tiebreaks: Vec<Option<TieBreakValue>>,
    /// Round 1 first.
    pub rounds: Vec<CrossCell>,
}

/// The table: the tie-breaks it was ranked by, and its rows by rank.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standings {
    pub tiebreaks: Vec<TieBreak>,
    /// How many rounds the table covers.
    pub rounds: u32,
    pub rows: Vec<StandingRow>,
}

/// Why a [`Field`] cannot be scored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("round {round}: player {player} is not in the field")]
    UnknownPlayer { round: u32, player: PlayerIndex },
    #[error("round {round}: player {player} appears twice")]
    TwiceInRound { round: u32, player: PlayerIndex },
    #[error("round {round}: player {player} is paired with themselves")]
    PairedWithSelf { round: u32, player: PlayerIndex },
}

/// Each player's cells, round by round: `cells[player][round - 1]`.
pub fn cells(field: &Field) -> Result<Vec<Vec<Cell>>, FieldError> {
    let n = field.players.len();
    let absent = Cell {
        opponent: None,
        colour: None,
        result: CellResult::Absent,
    };
    let mut out = vec![vec![absent; field.rounds.len()]; n];
    for (r, round) in field.rounds.iter().enumerate() {
        let round_no = r as u32 + 1;
        let mut seen = vec![false; n];
        let mut take = |player: PlayerIndex| -> Result<(), FieldError> {
            match seen.get_mut(player) {
                None => Err(FieldError::UnknownPlayer {
                    round: round_no,
                    player,
                }),
                Some(true) => Err(FieldError::TwiceInRound {
                    round: round_no,
                    player,
                }),
                Some(s) => {
                    *s = true;
                    Ok(())
                }
            }
        };
        for b in &round.boards {
            if b.white == b.black {
                return Err(FieldError::PairedWithSelf {
                    round: round_no,
                    player: b.white,
                });
            }
            take(b.white)?;
            take(b.black)?;
            let (white, black) = match b.outcome {
                BoardOutcome::WhiteWins => (CellResult::Win, CellResult::Loss),
                BoardOutcome::Draw => (CellResult::Draw, CellResult::Draw),
                BoardOutcome::BlackWins => (CellResult::Loss, CellResult::Win),
                BoardOutcome::WhiteForfeitWin => (CellResult::ForfeitWin, CellResult::ForfeitLoss),
                BoardOutcome::BlackForfeitWin => (CellResult::ForfeitLoss, CellResult::ForfeitWin),
                BoardOutcome::DoubleForfeit => {
                    (CellResult::DoubleForfeit, CellResult::DoubleForfeit)
                }
                BoardOutcome::Pending => (CellResult::Pending, CellResult::Pending),
            };
            out[b.white][r] = Cell {
                opponent: Some(b.black),
                colour: Some(Colour::White),
                result: white,
            };
            out[b.black][r] = Cell {
                opponent: Some(b.white),
                colour: Some(Colour::Black),
                result: black,
            };
        }
        for bye in &round.byes {
            take(bye.player)?;
            out[bye.player][r] = Cell {
                opponent: None,
                colour: None,
                result: CellResult::Bye(bye.kind),
            };
        }
    }
    Ok(out)
}

/// A player's score, in halves.
fn score(cells: &[Cell]) -> u32 {
    cells.iter().map(|c| c.result.halves()).sum()
}

/// A player's score as their opponents' tie-breaks see it (C.07 16.3): a requested bye (an
/// absence included) followed only by voluntary unplayed rounds, or in the last round, counts
/// as a draw; every other round with the points it gave.
fn adjusted_score(cells: &[Cell]) -> u32 {
    cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let only_voluntary_after = cells[i + 1..]
                .iter()
                .all(|later| later.result.is_voluntary_unplayed());
            if c.result.is_requested_bye() && only_voluntary_after {
                1
            } else {
                c.result.halves()
            }
        })
        .sum()
}

/// One round's part in a player's opponent-based tie-breaks.
#[derive(Clone, Copy, Debug)]
struct Contribution {
    /// The opponent's score for Buchholz, in halves: the adjusted score of a real opponent, the
    /// player's own score for a dummy (16.4).
    opponent_halves: u32,
    /// The points scored that round, in halves.
    scored_halves: u32,
    /// From a voluntary unplayed round (16.5).
    voluntary_unplayed: bool,
}

/// Each counted round's contribution (pending rounds have none yet).
fn contributions(player: PlayerIndex, all: &[Vec<Cell>], adjusted: &[u32]) -> Vec<Contribution> {
    let own = score(&all[player]);
    all[player]
        .iter()
        .filter(|c| c.result != CellResult::Pending)
        .map(|c| {
            let opponent_halves = match (c.result.is_played(), c.opponent) {
                (true, Some(o)) => adjusted[o],
                // C.07 16.4: an unplayed round is a game against a dummy with the player's own score.
                _ => own,
            };
            Contribution {
                opponent_halves,
                scored_halves: c.result.halves(),
                voluntary_unplayed: c.result.is_voluntary_unplayed(),
            }
        })
        .collect()
}

/// Buchholz (8.1), or Buchholz Cut-1 (14.1 with 16.5), in halves.
fn buchholz(contributions: &[Contribution], cut1: bool) -> u32 {
    let total: u32 = contributions.iter().map(|c| c.opponent_halves).sum();
    if !cut1 || contributions.is_empty() {
        return total;
    }
    // 16.5.1: with voluntary unplayed rounds, the lowest of their contributions is cut; else
    // the least significant value (14.1).
    let lowest_voluntary = contributions
        .iter()
        .filter(|c| c.voluntary_unplayed)
        .map(|c| c.opponent_halves)
        .min();
    let cut = lowest_voluntary
        .or_else(|| contributions.iter().map(|c| c.opponent_halves).min())
        .unwrap_or(0);
    total - cut
}

/// Sonneborn-Berger (9.1), in quarters: each opponent's score times the points scored.
fn sonneborn_berger(contributions: &[Contribution]) -> u32 {
    contributions
        .iter()
        .map(|c| c.opponent_halves * c.scored_halves)
        .sum()
}

/// Games won over the board (7.2, WON): a forfeit win or a bye is not a game won.
fn games_won(cells: &[Cell]) -> u32 {
    cells.iter().filter(|c| c.result == CellResult::Win).count() as u32
}

/// Direct encounter (6) within `group`, in halves per member; `None` for all unless every two
/// members met (a forfeit between them counts with the points it gave).
fn direct_encounter(group: &[PlayerIndex], all: &[Vec<Cell>]) -> Vec<Option<u32>> {
    let mut met_all = true;
    let mut scored = vec![0u32; group.len()];
    for (i, &p) in group.iter().enumerate() {
        for &q in group.iter().filter(|&&q| q != p) {
            let games: Vec<&Cell> = all[p]
                .iter()
                .filter(|c| c.opponent == Some(q) && c.result != CellResult::Pending)
                .collect();
            if games.is_empty() {
                met_all = false;
            }
            scored[i] += games.iter().map(|c| c.result.halves()).sum::<u32>();
        }
    }
    if met_all && group.len() > 1 {
        scored.into_iter().map(Some).collect()
    } else {
        vec![None; group.len()]
    }
}

/// The standings of `field`, ranked by points and then by `tiebreaks` in order.
pub fn standings(field: &Field, tiebreaks: &[TieBreak]) -> Result<Standings, FieldError> {
    let all = cells(field)?;
    let n = field.players.len();
    let scores: Vec<u32> = all.iter().map(|c| score(c)).collect();
    let adjusted: Vec<u32> = all.iter().map(|c| adjusted_score(c)).collect();
    let contribution: Vec<Vec<Contribution>> =
        (0..n).map(|p| contributions(p, &all, &adjusted)).collect();
    // Every tie-break but the direct encounter is the player's own; that one is the group's.
    let mut values: Vec<Vec<Option<TieBreakValue>>> = (0..n)
        .map(|p| {
            tiebreaks
                .iter()
                .map(|t| match t {
                    TieBreak::Buchholz => Some(TieBreakValue::from_halves(buchholz(
                        &contribution[p],
                        false,
                    ))),
                    TieBreak::BuchholzCut1 => {
                        Some(TieBreakValue::from_halves(buchholz(&contribution[p], true)))
                    }
                    TieBreak::SonnebornBerger => {
                        Some(TieBreakValue(sonneborn_berger(&contribution[p])))
                    }
                    TieBreak::Wins => Some(TieBreakValue::count(games_won(&all[p]))),
                    TieBreak::DirectEncounter => None,
                })
                .collect()
        })
        .collect();

    // Groups of players tied so far, best first; each tie-break splits the groups in turn.
    let mut by_points: Vec<PlayerIndex> = (0..n).collect();
    by_points.sort_by_key(|&p| std::cmp::Reverse(scores[p]));
    let mut groups: Vec<Vec<PlayerIndex>> = split_by(&by_points, |p| scores[p]);
    for (t_at, t) in tiebreaks.iter().enumerate() {
        let mut next = Vec::new();
        for group in groups {
            if group.len() < 2 {
                next.push(group);
                continue;
            }
            if *t == TieBreak::DirectEncounter {
                for (&p, v) in group.iter().zip(direct_encounter(&group, &all)) {
                    values[p][t_at] = v.map(TieBreakValue::from_halves);
                }
            }
            let mut sorted = group.clone();
            sorted.sort_by(|&a, &b| values[b][t_at].cmp(&values[a][t_at]));
            next.extend(split_by(&sorted, |p| values[p][t_at]));
        }
        groups = next;
    }

    let mut rank_of = vec![0u32; n];
    let mut order = Vec::with_capacity(n);
    for group in groups {
        let rank = order.len() as u32 + 1;
        let mut group = group;
        // Still tied: shown by name, sharing the rank.
        group.sort_by(|&a, &b| compare_names(&field.players[a], &field.players[b]));
        for p in group {
            rank_of[p] = rank;
            order.push(p);
        }
    }
    let rows = order
        .into_iter()
        .map(|p| StandingRow {
            rank: rank_of[p],
            player: p,
            entrant: field.players[p].clone(),
            points: Points(scores[p]),
            tiebreaks: values[p].clone(),
            rounds: all[p]
                .iter()
                .map(|c| CrossCell {
                    opponent_rank: c.opponent.map(|o| rank_of[o]),
                    colour: c.colour,
                    result: c.result,
                })
                .collect(),
        })
        .collect();
    Ok(Standings {
        tiebreaks: tiebreaks.to_vec(),
        rounds: field.rounds.len() as u32,
        rows,
    })
}

/// `sorted` cut into runs of equal `key`.
fn split_by<K: PartialEq>(
    sorted: &[PlayerIndex],
    key: impl Fn(PlayerIndex) -> K,
) -> Vec<Vec<PlayerIndex>> {
    let mut out: Vec<Vec<PlayerIndex>> = Vec::new();
    for &p in sorted {
        match out.last_mut() {
            Some(run) if run.last().is_some_and(|&q| key(q) == key(p)) => run.push(p),
            _ => out.push(vec![p]),
        }
    }
    out
}

fn compare_names(a: &Entrant, b: &Entrant) -> Ordering {
    a.name.cmp(&b.name)
}

#[cfg(test)]
mod tests;
