//! `boardscribe arbiter`: results, rulings, corrected moves, resumptions, notes and a game's
//! history, each decision kept with its time and author.
//!
//! Flow: the game is named by `--game ID` or by `--board N` (that board's game in the current
//! round: [`resolve_game`]); a ply by `--ply N` or by a move number (`--move 34b`: [`MoveNo`]),
//! read against the game's record. The store does the work; what it did is printed in one line.
//! `history` prints the game's events in words ([`crate::words::history`]), or as stored with `--json`.

use anyhow::{Context, bail};
use clap::{Subcommand, ValueEnum};

use super::commands::{author, now_ms, open_existing, open_to_read};
use crate::{
    arbiter::Laws,
    store::{Action, Decision, GameId, HistoryEntry, ResultReason, Ruling, Store},
    words::{history, moveno::MoveNo},
};

#[derive(Subcommand, Debug)]
pub enum ArbiterCommand {
    /// Set or change a game's result.
    Result {
        #[command(flatten)]
        who: Who,
        /// 1-0, 0-1, 1/2-1/2, *, +/-, -/+ or -/-.
        #[arg(long, allow_hyphen_values = true)]
        result: String,
        /// resignation, agreement, forfeit, decision, or any other word.
        #[arg(long)]
        reason: String,
        /// The Laws the game was played under (a 2023 resignation where the opponent cannot
        /// mate is a draw: 5.1.2).
        #[arg(long, default_value_t = Laws::default())]
        laws: Laws,
    },
    /// Rule on an irregularity (its number within the game).
    Rule {
        #[command(flatten)]
        who: Who,
        #[arg(long)]
        irregularity: u32,
        #[arg(long, value_enum)]
        ruling: RulingArg,
        /// The penalty applied (with `--ruling penalty`).
        #[arg(long)]
        description: Option<String>,
        /// The ply play went on before (with `--ruling reinstated`).
        #[arg(long, conflicts_with = "move_no")]
        ply: Option<u32>,
        /// The move play went on before, as --ply: 34w (ply 67) or 34b (ply 68).
        #[arg(long = "move", value_name = "MOVE_NUMBER")]
        move_no: Option<String>,
    },
    /// Correct a mis-sensed move (UCI or SAN); later moves are replayed after it. Either
    /// `--ply 68 --move Nf6`, or the move with its number: `--move "34b Nf6"` (or "34... Nf6";
    /// 34w or "34." for white's).
    Correct {
        #[command(flatten)]
        who: Who,
        #[arg(long)]
        ply: Option<u32>,
        /// The right move; without --ply, its number first: "34b Nf6".
        #[arg(long = "move")]
        mv: String,
    },
    /// Resume a game after ply N (after `thread_lost`, or with that position set up again):
    /// later recorded moves are withdrawn, the given ones (the scoresheets', UCI or SAN; pit
    /// numbers for togyz korgool) recorded after it. For a game a running daemon records, use
    /// `POST /api/admin/games/N/resume`: its board then goes on from the new record at once;
    /// here, the next daemon start does.
    Resume {
        #[command(flatten)]
        who: Who,
        /// The last recorded ply that stands (0: the start).
        #[arg(
            long,
            required_unless_present = "after_move",
            conflicts_with = "after_move"
        )]
        after_ply: Option<u32>,
        /// The last recorded move that stands: 34w (ply 67) or 34b (ply 68).
        #[arg(long, value_name = "MOVE_NUMBER")]
        after_move: Option<String>,
        /// Moves played after it, in order, separated by spaces or commas.
        #[arg(long, default_value = "")]
        moves: String,
    },
    /// Add a note to a game, or after the move at a ply.
    Note {
        #[command(flatten)]
        game: GameArg,
        #[arg(long, conflicts_with = "move_no")]
        ply: Option<u32>,
        /// The move the note follows, as --ply: 34w (ply 67) or 34b (ply 68).
        #[arg(long = "move", value_name = "MOVE_NUMBER")]
        move_no: Option<String>,
        #[arg(long)]
        text: String,
        /// Who decided (default: $USER, else "arbiter").
        #[arg(long)]
        author: Option<String>,
    },
    /// Record a paired board's game of a round as not played: a forfeit (+/- White wins, -/+
    /// Black wins, -/- both lose), for a board where no game began in that round. The game is
    /// stored with no moves, its players the pairing's; its result can be undone like any.
    Forfeit {
        /// The round (default: the current one).
        #[arg(long)]
        round: Option<u32>,
        /// The board's number, as in the pairings.
        #[arg(long)]
        board: u32,
        #[arg(long, allow_hyphen_values = true)]
        result: String,
        /// Who decided (default: $USER, else "arbiter").
        #[arg(long)]
        author: Option<String>,
        #[arg(long)]
        note: Option<String>,
    },
    /// Undo an earlier decision (its id, from `history`), as a further decision: a result gives
    /// back the one it replaced (and a game it closed is open again), a ruling's irregularity is
    /// open again, a note is withdrawn, a correction or a resume gives back the moves it
    /// withdrew. Both decisions stay in the history. For a game a running daemon records, use
    /// the console or `POST /api/admin/games/N/undo`: its board then records a reopened game at
    /// once; here, the next daemon start does.
    Undo {
        #[command(flatten)]
        who: Who,
        /// The decision to undo (its id).
        #[arg(long)]
        decision: i64,
    },
    /// Print a game's events, decisions included, in the order recorded: in words, one line
    /// each (local time, board and game, move, what happened, by whom).
    History {
        #[command(flatten)]
        game: GameArg,
        /// The events as stored (event id, time in ms, kind, ply, detail as JSON), for scripts.
        #[arg(long)]
        json: bool,
    },
}

/// Which game: by its id, or by its board's number in the hall.
#[derive(clap::Args, Debug, Clone, Copy)]
#[group(required = true, multiple = false)]
pub struct GameArg {
    /// The game's id.
    #[arg(long)]
    pub game: Option<i64>,
    /// The board's number: its game in the current round (the latest, if it has several).
    #[arg(long)]
    pub board: Option<u32>,
}

/// The game, the author and the note of a decision.
#[derive(clap::Args, Debug)]
pub struct Who {
    #[command(flatten)]
    game: GameArg,
    /// Who decided (default: $USER, else "arbiter").
    #[arg(long)]
    author: Option<String>,
    #[arg(long)]
    note: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RulingArg {
    /// A penalty was applied (`--description` says which).
    Penalty,
    /// The move stands.
    Stands,
    /// The position was reinstated (`--ply` or `--move` says before which move).
    Reinstated,
    /// No action.
    None,
}

/// The game `arg` names: `--game` as given, or `--board N`'s game in the current round (the
/// latest if it has several, said on stderr); an error says what is missing.
pub fn resolve_game(store: &Store, arg: GameArg) -> anyhow::Result<GameId> {
    let number = match (arg.game, arg.board) {
        (Some(id), _) => return Ok(GameId(id)),
        (None, Some(number)) => number,
        (None, None) => bail!("say which game: --game ID or --board N"),
    };
    let on_board = store.games_on_board(number)?;
    let round = on_board.current_round;
    let in_round = on_board.in_current_round();
    let ids = |games: &[crate::store::BoardGame]| {
        games
            .iter()
            .map(|g| g.game.0.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(latest) = in_round.last() else {
        if on_board.games.is_empty() {
            if store.board_with_number(number)?.is_none() {
                bail!(
                    "board {number}: no board has this number (the numbers are the config's \
                     [[board]] number); give --game ID"
                );
            }
            bail!("board {number}: no game recorded on it yet");
        }
        let last = on_board.games.last().map_or(0, |g| g.game.0);
        let last_round = on_board
            .games
            .last()
            .and_then(|g| g.round)
            .map_or_else(|| "no round".to_owned(), |r| format!("round {r}"));
        bail!(
            "board {number}: no game in round {} (the current round); its latest game is \
             {last}, of {last_round}: give --game {last}",
            round.unwrap_or_default()
        );
    };
    if in_round.len() > 1 {
        let within = round.map_or_else(|| "games".to_owned(), |r| format!("games in round {r}"));
        eprintln!(
            "board {number}: {} {within} ({}); taking the latest, game {} (give --game ID for \
             another)",
            in_round.len(),
            ids(&in_round),
            latest.game.0
        );
    }
    Ok(latest.game)
}

/// The live moves' notations of `game`, by ply (to read a move number against).
fn record(store: &Store, game: GameId) -> anyhow::Result<Vec<String>> {
    let g = store
        .game(game)?
        .with_context(|| format!("no game with id {}", game.0))?;
    Ok(g.moves.into_iter().map(|m| m.notation).collect())
}

/// The ply `--ply` or a move number gives, if either is given.
fn ply_of(
    store: &Store,
    game: GameId,
    ply: Option<u32>,
    move_no: Option<&str>,
) -> anyhow::Result<Option<u32>> {
    match (ply, move_no) {
        (Some(ply), _) => Ok(Some(ply)),
        (None, Some(text)) => {
            let n = MoveNo::parse(text)?;
            Ok(Some(n.ply(game.0, &record(store, game)?)?))
        }
        (None, None) => Ok(None),
    }
}

pub(super) fn arbiter(db: &std::path::Path, command: ArbiterCommand) -> anyhow::Result<()> {
    let mut store = match command {
        ArbiterCommand::History { .. } => open_to_read(db)?,
        _ => open_existing(db)?,
    };
    let decision = match command {
        ArbiterCommand::Result {
            who,
            result,
            reason,
            laws,
        } => {
            let game = resolve_game(&store, who.game)?;
            let (decision, changed) = store.declare_result(
                game,
                &result,
                ResultReason::from(reason),
                laws,
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?;
            if let Some(why) = changed {
                println!("recorded as 1/2-1/2: {why}");
            }
            decision
        }
        ArbiterCommand::Rule {
            who,
            irregularity,
            ruling,
            description,
            ply,
            move_no,
        } => {
            let game = resolve_game(&store, who.game)?;
            let ply = ply_of(&store, game, ply, move_no.as_deref())?;
            let ruling = match (ruling, description, ply) {
                (RulingArg::Penalty, Some(description), None) => {
                    Ruling::PenaltyApplied { description }
                }
                (RulingArg::Penalty, None, _) => bail!("--ruling penalty needs --description"),
                (RulingArg::Reinstated, None, Some(ply)) => Ruling::PositionReinstated { ply },
                (RulingArg::Reinstated, _, None) => {
                    bail!("--ruling reinstated needs --ply or --move")
                }
                (RulingArg::Stands, None, None) => Ruling::MoveStands,
                (RulingArg::None, None, None) => Ruling::NoAction,
                (r, ..) => bail!("--ruling {r:?} takes no --description or --ply besides its own"),
            };
            store.rule_on_irregularity(
                game,
                irregularity,
                ruling,
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?
        }
        ArbiterCommand::Correct { who, ply, mv } => {
            let game = resolve_game(&store, who.game)?;
            let (ply, mv) = match ply {
                Some(ply) => (ply, mv),
                None => {
                    let (n, mv) = MoveNo::parse_with_move(&mv)?;
                    (n.ply(game.0, &record(&store, game)?)?, mv)
                }
            };
            store.correct_move(
                game,
                ply,
                &mv,
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?
        }
        ArbiterCommand::Resume {
            who,
            after_ply,
            after_move,
            moves,
        } => {
            let game = resolve_game(&store, who.game)?;
            let Some(after_ply) = ply_of(&store, game, after_ply, after_move.as_deref())? else {
                bail!("say after which move: --after-ply N or --after-move 34b");
            };
            store.resume_game(
                game,
                after_ply,
                &split_moves(&moves),
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?
        }
        ArbiterCommand::Note {
            game,
            ply,
            move_no,
            text,
            author: who,
        } => {
            let game = resolve_game(&store, game)?;
            let ply = ply_of(&store, game, ply, move_no.as_deref())?;
            store.add_note(game, ply, &text, &author(who), now_ms()?)?
        }
        ArbiterCommand::Forfeit {
            round,
            board,
            result,
            author: who,
            note,
        } => {
            let round = match round {
                Some(r) => r,
                None => store
                    .round_info()?
                    .map(|i| i.round)
                    .context("no round is current: say which with --round")?,
            };
            store.record_forfeit(
                board,
                round,
                &result,
                &author(who),
                note.as_deref(),
                now_ms()?,
            )?
        }
        ArbiterCommand::Undo { who, decision } => {
            let game = resolve_game(&store, who.game)?;
            store.undo_decision(
                game,
                decision,
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?
        }
        ArbiterCommand::History { game, json } => {
            let game = resolve_game(&store, game)?;
            let entries = store.history(game)?;
            if json {
                for entry in &entries {
                    print_history_entry(entry);
                }
            } else {
                let record = store
                    .game(game)?
                    .with_context(|| format!("no game with id {}", game.0))?;
                let zone = history::local_zone();
                for line in history::in_words(&record, &entries, &zone, crate::lang::Lang::En) {
                    println!("{line}");
                }
            }
            return Ok(());
        }
    };
    print_decision(&decision);
    Ok(())
}

/// Moves given as one argument: separated by spaces or commas, move numbers (`12.`, `12...`)
/// dropped (togyz korgool moves are digits without a dot).
pub(super) fn split_moves(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .map(|t| t.rsplit('.').next().unwrap_or(t))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

pub(super) fn print_decision(d: &Decision) {
    let what = match &d.action {
        Action::SetResult {
            result,
            reason,
            previous_result,
            ..
        } => format!(
            "result {result} ({}), was {previous_result}",
            reason.as_str()
        ),
        Action::Rule {
            irregularity,
            ruling,
        } => format!("irregularity {irregularity}: {}", ruling.as_str()),
        Action::CorrectMove {
            ply,
            old_notation,
            new_notation,
            retracted,
            ..
        } => {
            format!("ply {ply}: {old_notation} -> {new_notation} ({retracted} move(s) re-recorded)")
        }
        Action::Note { ply: Some(ply) } => format!("note after ply {ply}"),
        Action::Note { ply: None } => "note".to_owned(),
        Action::Resume {
            after_ply,
            moves,
            retracted,
        } => format!(
            "resumed after ply {after_ply}{}{}",
            if moves.is_empty() {
                String::new()
            } else {
                format!(" with {}", moves.join(" "))
            },
            if *retracted > 0 {
                format!(" ({retracted} move(s) withdrawn)")
            } else {
                String::new()
            }
        ),
        Action::Undo {
            decision,
            undone,
            result,
            reopened,
            retracted,
            restored,
            ..
        } => {
            let mut s = format!("decision {decision} ({}) undone", undone.replace('_', " "));
            if let Some(result) = result {
                s.push_str(&format!(": the result is {result} again"));
            }
            if *reopened {
                s.push_str(", the game is open again");
            }
            if retracted + restored > 0 {
                s.push_str(&format!(
                    ": {retracted} move(s) withdrawn, {restored} recorded again"
                ));
            }
            s
        }
    };
    println!(
        "decision {} on game {} by {}: {what}",
        d.id, d.game.0, d.author
    );
}

/// One event as stored (`history --json`: the format scripts read; keep it byte for byte).
pub(super) fn print_history_entry(h: &HistoryEntry) {
    let e = &h.event;
    let ply = e.ply.map(|p| format!(" ply {p}")).unwrap_or_default();
    println!("#{} at_ms {} {}{ply} {}", e.id, e.at_ms, e.kind, e.detail);
    if !h.retracted.is_empty() {
        let moves: Vec<String> = h
            .retracted
            .iter()
            .map(|m| format!("{}:{}", m.ply, m.notation))
            .collect();
        println!("    retracted: {}", moves.join(" "));
    }
}
