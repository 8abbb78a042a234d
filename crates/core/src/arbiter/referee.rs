//! The referee: the configured Laws applied to what one board's tracker records.
//!
//! Flow: the pipeline passes every tracker event, with the start position or move it plays,
//! through [`Referee::review`] before it is stored, and every clock reading through
//! [`Referee::clock`]. The referee keeps the game's positions (from the typed start and moves the
//! tracker hands it, a Chess960 start too; a stored game's read back from their text), and so
//! can: mark each move made in Article 8.4 time trouble;
//! give each irregularity its article under the configured edition, and a completed illegal move
//! its place on the player's ladder with the penalty due (7.5.5); end the game on a dead position,
//! fivefold repetition or 75 moves (from 2014); note a threefold or fifty-move draw as claimable;
//! and report a flag fall with the result 6.9 gives (a game end only when the daemon counts as an
//! observer, 6.8). Checkmate and stalemate are the tracker's (it stops recording there). Pure: time
//! comes with the events and readings.

use shakmaty::{Chess, Color, Move, Position};

use super::{
    AutoEnd, BothFlagsDecision, Category, Claimable, Federation, FivefoldRule, GameEnd,
    IrregularityKind, Judge, JudgeNotice, Laws, LawsConfig, Penalty, Repetitions, Supervision,
    TimeControl, TimeTrouble, both_flags, flag_fall_under, illegal_move_penalty,
};
use crate::{
    Millis,
    game::{
        Outcome, Variant,
        chess::{ChessGame, start_of},
        list_from_start,
    },
    phrase::{Arg, Phrase},
    sensor::ClockReading,
    tracker::{Played, RecordedMove, Side, TrackerEvent, TrackerSettings},
};

/// The Laws an event plays under: the edition with its switches, the time control, and the
/// variant (standard chess or Chess960: which start positions begin a game).
#[derive(Clone, Debug, Default)]
pub struct LawsSetup {
    pub cfg: LawsConfig,
    pub time_control: Option<TimeControl>,
    pub variant: Variant,
}

impl LawsSetup {
    /// A referee for one board.
    pub fn referee(&self) -> Referee {
        Referee::new(self.cfg.clone(), self.time_control.clone())
    }

    /// What each clock should show before the first move: the first period's time.
    pub fn start_clock_ms(&self) -> Option<u64> {
        let period = self.time_control.as_ref()?.periods().first()?;
        Some(u64::from(period.base_secs) * 1000)
    }

    /// Tracker settings for a board playing under these Laws (the clock check of 6.10.2, the
    /// variant's start positions).
    pub fn tracker_settings(&self) -> TrackerSettings {
        TrackerSettings {
            expected_clock_ms: self.start_clock_ms(),
            variant: self.variant,
            ..TrackerSettings::default()
        }
    }
}

/// The Laws for one board.
pub struct Referee {
    cfg: LawsConfig,
    tc: Option<TimeControl>,
    category: Category,
    game: Option<Game>,
    notices: Vec<JudgeNotice>,
}

/// What the referee knows of the game in progress.
struct Game {
    /// `positions[i]` is the position after `i` plies.
    positions: Vec<Chess>,
    reps: Repetitions,
    trouble: Option<TimeTrouble>,
    /// Completed illegal moves by White and by Black.
    illegal: [u32; 2],
    claimable: Claimable,
    flags: [bool; 2],
    ended: bool,
    /// A 9.6 draw was noted for the arbiter ([`AutoEnd::May`]).
    nine_six_noted: bool,
}

impl Game {
    /// A game from `start` (a Chess960 start's FEN; `None`, or a start that does not read: the
    /// standard start).
    fn new(
        tc: Option<&TimeControl>,
        cfg: &LawsConfig,
        start: Option<&str>,
        notices: &mut Vec<JudgeNotice>,
    ) -> Game {
        let start = start_of(start).unwrap_or_else(|| {
            notices.push(JudgeNotice::StartUnreadable(start.map(str::to_owned)));
            Chess::default()
        });
        Game::at(tc, cfg, start)
    }

    /// A game from the position `start`.
    fn at(tc: Option<&TimeControl>, cfg: &LawsConfig, start: Chess) -> Game {
        Game {
            reps: Repetitions::new(&start),
            positions: list_from_start(start),
            trouble: tc.map(|tc| TimeTrouble::new(tc, cfg)),
            illegal: [0; 2],
            claimable: Claimable::default(),
            flags: [false; 2],
            ended: false,
            nine_six_noted: false,
        }
    }

    fn position(&self) -> &Chess {
        // Never empty: it starts with the start position and is never cut below it.
        &self.positions[self.positions.len() - 1]
    }

    fn plies(&self) -> usize {
        self.positions.len() - 1
    }

    fn truncate(&mut self, plies: usize) {
        while self.plies() > plies {
            self.positions.pop();
            self.reps.pop();
        }
    }
}

fn color(side: Side) -> Color {
    match side {
        Side::White => Color::White,
        Side::Black => Color::Black,
    }
}

fn side(c: Color) -> Side {
    match c {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

impl Judge for Referee {
    type Game = ChessGame;

    fn take_notices(&mut self) -> Vec<JudgeNotice> {
        std::mem::take(&mut self.notices)
    }

    fn resume(&mut self, start: Option<&str>, moves: &[RecordedMove]) {
        Referee::resume(self, start, moves);
    }

    fn resumed_counts(&mut self, flags_fallen: &[Side], illegal_by: &[Side]) {
        if let Some(g) = self.game.as_mut() {
            for side in flags_fallen {
                g.flags[usize::from(*side == Side::Black)] = true;
            }
            for side in illegal_by {
                g.illegal[color(*side) as usize] += 1;
            }
        }
    }

    fn rebase(&mut self, start: Option<&str>, moves: &[RecordedMove]) {
        let kept = self.game.as_ref().map(|g| (g.illegal, g.flags));
        Referee::resume(self, start, moves);
        if let (Some(g), Some((illegal, flags))) = (self.game.as_mut(), kept) {
            g.illegal = illegal;
            g.flags = flags;
        }
    }

    /// Applies the Laws to the events from index `from` on, in place: annotates moves and
    /// irregularities, and adds game ends and claimable draws after the event that caused them.
    fn review(
        &mut self,
        mut event: TrackerEvent,
        played: Option<Played<ChessGame>>,
        out: &mut Vec<TrackerEvent>,
    ) {
        let caused = self.look_at(&mut event, played);
        out.push(event);
        out.extend(caused);
    }

    /// A clock reading: a flag that has just shown is reported with the result the Laws give.
    /// `white_on_left`: White's clock is the left-hand one.
    fn clock(
        &mut self,
        at: Millis,
        reading: &ClockReading,
        white_on_left: bool,
        out: &mut Vec<TrackerEvent>,
    ) {
        let Some(game) = self.game.as_mut() else {
            return;
        };
        let (white_flag, black_flag) = if white_on_left {
            (reading.left_flag, reading.right_flag)
        } else {
            (reading.right_flag, reading.left_flag)
        };
        let now = [white_flag, black_flag];
        if game.ended || now == game.flags {
            game.flags = now;
            return;
        }
        for (i, &flag) in now.iter().enumerate() {
            if !flag || game.flags[i] {
                continue;
            }
            let flagged = if i == 0 { Color::White } else { Color::Black };
            let ending = flag_fall_under(&self.cfg, game.position(), flagged);
            let both = now[0] && now[1];
            let note = both.then(|| {
                let plies = game.plies() as u32;
                let period = self
                    .tc
                    .as_ref()
                    .map_or(0, |tc| tc.period_of(plies.div_ceil(2).max(1)));
                match self.tc.as_ref() {
                    Some(tc) => {
                        let b = both_flags(&self.cfg, tc, period);
                        let what = Phrase::new(match b.decision {
                            BothFlagsDecision::Continue => "flag.play_goes_on",
                            BothFlagsDecision::Draw => "flag.drawn",
                            BothFlagsDecision::Arbiter => "flag.arbiter_decides",
                        });
                        match b.article {
                            Some(a) => Phrase::new("flag.both_article")
                                .phrase("what", what)
                                .text("article", a),
                            None => Phrase::new("flag.both").phrase("what", what),
                        }
                    }
                    None => {
                        Phrase::new("flag.both").phrase("what", Phrase::new("flag.arbiter_decides"))
                    }
                }
            });
            let quota = self
                .tc
                .as_ref()
                .and_then(|tc| period_quota_note(tc, game.plies() as u32, flagged));
            let federation = (self.cfg.federation == Federation::Uscf).then(|| {
                Phrase::new(if ending.end == GameEnd::TimeForfeitCannotMate {
                    "flag.uscf_cannot_mate"
                } else {
                    "flag.uscf"
                })
            });
            let note = [note, quota, federation]
                .into_iter()
                .flatten()
                .reduce(|first, next| {
                    Phrase::new("then")
                        .phrase("first", first)
                        .phrase("next", next)
                });
            out.push(TrackerEvent::FlagFall {
                at_ms: at,
                after_ply: game.plies() as u32,
                side: side(flagged),
                proposed: ending.outcome,
                termination: ending.termination.to_string(),
                article: (!ending.article.is_empty()).then(|| ending.article.to_string()),
                both,
                note: note.as_ref().map(Phrase::to_string),
                note_phrase: note,
            });
            if self.cfg.daemon_is_observer && !both {
                game.ended = true;
                out.push(TrackerEvent::GameEnded {
                    at_ms: at,
                    after_ply: game.plies() as u32,
                    outcome: ending.outcome,
                    termination: ending.termination.to_string(),
                });
                break;
            }
        }
        game.flags = now;
    }
}

/// The ruling on a completed illegal move in rapid or blitz without full supervision: it stands
/// unless the opponent claims it in time (or, from 2014, the arbiter sees it).
fn unsupervised_illegal_move(laws: Laws, category: Category) -> &'static str {
    match (laws, category) {
        (Laws::Fide2001 | Laws::Fide2009, Category::Blitz) => "laws.unsupervised_2001_blitz",
        (Laws::Fide2001 | Laws::Fide2009, _) => "laws.unsupervised_2001_rapid",
        (Laws::Fide2014, _) => "laws.unsupervised_2014",
        (Laws::Fide2018, _) => "laws.unsupervised_2018",
        (Laws::Fide2023, _) => "laws.unsupervised_2023",
    }
}

/// Article 6.4 at a flag fall, for a time control with move quotas: whether the player whose flag
/// fell had completed the moves of his period. The daemon counts the moves made; the clock counts
/// presses, and a clock that missed one does not add the next period's time (6.10.2).
fn period_quota_note(tc: &TimeControl, plies: u32, flagged: Color) -> Option<Phrase> {
    if tc.periods().iter().all(|p| p.moves.is_none()) {
        return None;
    }
    let done = match flagged {
        Color::White => plies.div_ceil(2),
        Color::Black => plies / 2,
    };
    let who = side(flagged);
    // The period of the move in hand, and the moves every period up to it requires.
    let index = tc.period_of(done + 1);
    let required: u32 = (0..=index).filter_map(|i| tc.period(i).moves).sum();
    let key = match tc.period(index).moves {
        Some(_) => "flag.quota_short",
        None if index > 0 => "flag.quota_made",
        None => return None,
    };
    Some(
        Phrase::new(key)
            .side("side", who)
            .number("done", done)
            .number("required", required)
            .number("period", index as u64 + 1),
    )
}

impl Referee {
    /// A referee applying `cfg`; `tc` is the event's time control, if configured (the rapid and
    /// blitz rules and Article 8.4 need it).
    pub fn new(cfg: LawsConfig, tc: Option<TimeControl>) -> Referee {
        let category = tc
            .as_ref()
            .map_or(Category::Standard, |tc| cfg.category(tc));
        Referee {
            cfg,
            tc,
            category,
            game: None,
            notices: Vec::new(),
        }
    }

    /// Continues a game recorded before (after a restart), from its stored moves played from
    /// `start` (a Chess960 start's FEN; `None`: the standard start).
    pub fn resume(&mut self, start: Option<&str>, moves: &[RecordedMove]) {
        let mut game = Game::new(self.tc.as_ref(), &self.cfg, start, &mut self.notices);
        for m in moves {
            // A stored move is read back from its text.
            let mv = m.to_move::<ChessGame>(game.position());
            if !self.play(&mut game, &mut m.clone(), mv) {
                break;
            }
        }
        self.game = Some(game);
    }

    /// One event, with what it plays: annotated in place; what it causes is returned.
    fn look_at(
        &mut self,
        event: &mut TrackerEvent,
        played: Option<Played<ChessGame>>,
    ) -> Option<TrackerEvent> {
        let (start, mv) = match played {
            Some(Played::Start(pos)) => (Some(pos), None),
            Some(Played::Move(mv)) => (None, Some(mv)),
            None => (None, None),
        };
        if let TrackerEvent::GameStarted { start: text, .. } = event {
            let game = match start {
                Some(pos) => Game::at(self.tc.as_ref(), &self.cfg, pos),
                None => Game::new(
                    self.tc.as_ref(),
                    &self.cfg,
                    text.as_deref(),
                    &mut self.notices,
                ),
            };
            self.game = Some(game);
            return None;
        }
        let mut game = self.game.take()?;
        let extra = match event {
            TrackerEvent::Move(m) => self.after_move(&mut game, m, mv),
            TrackerEvent::Revision { new, .. } => {
                game.truncate(new.ply.saturating_sub(1) as usize);
                self.after_move(&mut game, new, mv)
            }
            TrackerEvent::Takeback { to_ply, .. } => {
                game.truncate(*to_ply as usize);
                game.ended = false;
                None
            }
            TrackerEvent::Irregularity {
                kind,
                player,
                article: art,
                ruling,
                ruling_phrase,
                ..
            } => {
                *ruling_phrase = self.irregularity(&mut game, *kind, *player, art);
                *ruling = ruling_phrase.as_ref().map(Phrase::to_string);
                None
            }
            TrackerEvent::GameEnded { .. } => {
                game.ended = true;
                None
            }
            _ => None,
        };
        self.game = Some(game);
        extra
    }

    /// Plays a recorded move `m`, which is `mv`, on the referee's board; false if it does not
    /// fit (never expected: the tracker only records legal moves).
    fn play(&mut self, game: &mut Game, m: &mut RecordedMove, mv: Option<Move>) -> bool {
        let pos = game.position();
        let Some(mv) = mv.filter(|mv| pos.is_legal(*mv)) else {
            self.notices.push(JudgeNotice::MoveDoesNotFit {
                ply: m.ply,
                mv: m.uci.clone().unwrap_or_else(|| m.notation.clone()),
            });
            return false;
        };
        let mover = pos.turn();
        let mut next = pos.clone();
        next.play_unchecked(mv);
        game.reps.push(&next);
        game.positions.push(next);
        if let Some(trouble) = game.trouble.as_mut() {
            let clock = match mover {
                Color::White => m.clock_white_ms,
                Color::Black => m.clock_black_ms,
            };
            m.time_trouble = trouble.on_move(mover, m.ply.div_ceil(2), clock);
        }
        true
    }

    fn after_move(
        &mut self,
        game: &mut Game,
        m: &mut RecordedMove,
        mv: Option<Move>,
    ) -> Option<TrackerEvent> {
        if game.plies() + 1 != m.ply as usize {
            game.truncate((m.ply as usize).saturating_sub(1).min(game.plies()));
        }
        if !self.play(game, m, mv) || game.ended {
            return None;
        }
        // Mate and stalemate are the tracker's own game ends (it knows the legal moves already);
        // the rest of `automatic_end` is checked here, in its order, counting repetitions once.
        let count = game.reps.count();
        let fivefold = match self.cfg.fivefold {
            FivefoldRule::None => false,
            FivefoldRule::Any => count >= 5,
            FivefoldRule::Consecutive => game.reps.fivefold(FivefoldRule::Consecutive),
        };
        let end = if game.position().is_insufficient_material() {
            Some(GameEnd::DeadPosition)
        } else if fivefold {
            Some(GameEnd::FivefoldRepetition)
        } else if self.cfg.seventy_five_moves && game.reps.seventy_five_moves() {
            Some(GameEnd::SeventyFiveMoves)
        } else {
            None
        };
        let nine_six = matches!(
            end,
            Some(GameEnd::FivefoldRepetition | GameEnd::SeventyFiveMoves)
        );
        if nine_six && self.cfg.auto_end_9_6 != AutoEnd::Must {
            if self.cfg.auto_end_9_6 == AutoEnd::Never || game.nine_six_noted {
                return None;
            }
            // Recorded once, for the arbiter to declare; the game goes on being recorded.
            game.nine_six_noted = true;
            let end = end?;
            let claim = Phrase::new(&format!("claim.declared.{}", end.termination()));
            return Some(TrackerEvent::Claimable {
                at_ms: m.at_ms,
                ply: m.ply + 1,
                claim: claim.to_string(),
                claim_phrase: Some(claim),
                article: self
                    .cfg
                    .game_end_article(end)
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        if let Some(end) = end {
            let ending = self.cfg.ending(Outcome::Draw, end);
            game.ended = true;
            return Some(TrackerEvent::GameEnded {
                at_ms: m.at_ms,
                after_ply: m.ply,
                outcome: ending.outcome,
                termination: ending.termination.to_string(),
            });
        }
        let now = Claimable {
            threefold: count >= 3,
            fifty_moves: game.reps.fifty_moves(),
        };
        let was = std::mem::replace(&mut game.claimable, now);
        let claim = if now.threefold && !was.threefold {
            Some(GameEnd::ThreefoldRepetition)
        } else if now.fifty_moves && !was.fifty_moves {
            Some(GameEnd::FiftyMoves)
        } else {
            None
        }?;
        Some(TrackerEvent::Claimable {
            at_ms: m.at_ms,
            ply: m.ply + 1,
            claim: claim.termination().to_string(),
            claim_phrase: None,
            article: self
                .cfg
                .game_end_article(claim)
                .unwrap_or_default()
                .to_string(),
        })
    }

    fn irregularity(
        &self,
        game: &mut Game,
        kind: IrregularityKind,
        player: Option<Side>,
        art: &mut Option<String>,
    ) -> Option<Phrase> {
        *art = self.cfg.article(kind).map(str::to_string);
        match (kind, player) {
            (IrregularityKind::IllegalMove, Some(player)) => {
                let c = color(player);
                let n = &mut game.illegal[c as usize];
                *n += 1;
                let offence = *n;
                let opponent = !c;
                let opponent_can_mate = self.cfg.can_win(game.position(), opponent);
                let penalty =
                    illegal_move_penalty(&self.cfg, self.category, offence, opponent_can_mate);
                let ladder = self.cfg.illegal_move_penalty_article(self.category);
                let due = match penalty {
                    Penalty::AddTimeToOpponent { ms } => Phrase::new("laws.add_time")
                        .number("seconds", ms / 1000)
                        .side("side", side(opponent)),
                    Penalty::Loss => Phrase::new("laws.loses").side("side", player),
                    Penalty::Draw => Phrase::new("laws.drawn_no_mate").side("side", side(opponent)),
                    Penalty::OpponentMayClaimWin => {
                        Phrase::new("laws.may_claim_win").side("side", side(opponent))
                    }
                    Penalty::OpponentMayClaimDraw => {
                        Phrase::new("laws.may_claim_draw").side("side", side(opponent))
                    }
                };
                let what = Phrase::new("laws.offence")
                    .with("ordinal", Arg::Ordinal(offence))
                    .side("side", player);
                let key = if self.cfg.federation == Federation::Uscf {
                    "laws.director_applies"
                } else if self.reduced_supervision() {
                    unsupervised_illegal_move(self.cfg.laws, self.category)
                } else {
                    "laws.applies"
                };
                Some(
                    Phrase::new(key)
                        .phrase("what", what)
                        .phrase("due", due)
                        .text("ladder", ladder),
                )
            }
            (IrregularityKind::IllegalPosition, _) => {
                Some(Phrase::new(if self.reduced_supervision() {
                    match self.cfg.laws {
                        Laws::Fide2001 | Laws::Fide2009 => "laws.arbiter_intervenes",
                        _ => "laws.illegal_position_drawn",
                    }
                } else {
                    // Fully supervised: the arbiter should already have acted on the illegal
                    // move; the appendix rule does not apply.
                    *art = self
                        .cfg
                        .article(IrregularityKind::IllegalMove)
                        .map(str::to_string);
                    "laws.reinstate"
                }))
            }
            (IrregularityKind::ClockWithoutMove, _) => {
                Some(Phrase::new("laws.arbiter_decides_press"))
            }
            _ => None,
        }
    }

    /// Whether the rapid or blitz rules without full supervision apply (A.4/B.3 up to 2018, A.5
    /// in 2023).
    fn reduced_supervision(&self) -> bool {
        self.category != Category::Standard && self.cfg.supervision == Supervision::Reduced
    }
}
