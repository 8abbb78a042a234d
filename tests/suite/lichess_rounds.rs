//! A three-round event pushed to Lichess as lila reads a push (issue 32): each event round to
//! its own Lichess round, a game of round 1 still in play when round 2 starts, a togyz korgool
//! board beside the chess boards, a blitz time control. A stand-in for lila applies the rules
//! its relay code documents: a game goes to the first chapter not yet matched in the push that
//! has its `GameId`, or its event, round, board and players, or its event and round and the
//! same position at the last common ply (`RelayUpdatePlan`); a round holds at most 100
//! chapters; `TimeControl` is read by `TournamentClock.parse` (a base of 180 or less is
//! minutes), and the round's own time control is used when the tag is missing; a togyz game
//! is refused. Every game must end in its own round's chapter with its final moves, result and
//! clocks, the pushes must carry no body twice in a row, and togyz games must never be pushed.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::Bytes,
    extract::{Path as UrlPath, State},
    http::StatusCode,
    routing::post,
};
use boardscribe::{
    arbiter::ResultReason,
    broadcast::lichess::{LichessClient, LichessQueue, LichessTarget, Token, plan::LichessRounds},
    daemon::Publications,
    emulator::games_from_pgn,
    export::publish::Publication,
    game::Kind,
    pairings::Pairing,
    sensor::Orientation,
    store::{EventSettings, RoundInfo, Store, Write},
    tracker::event::{RecordedMove, TrackerEvent},
};
use shakmaty::{Chess, EnPassantMode, Move, Position as _, fen::Fen};
use tokio::{sync::watch, task::JoinSet};

use crate::lichess_push::{corpus_moves, recorded_from};

const ROUND_IDS: [&str; 3] = ["RoundOne", "RoundTwo", "RoundThr"];

/// A chapter of the stand-in's study.
#[derive(Clone, Debug)]
struct Chapter {
    tags: BTreeMap<String, String>,
    /// The position (FEN) after each ply.
    positions: Vec<String>,
    sans: Vec<String>,
    /// The `[%clk]` comments of the last push, in order.
    clocks: Vec<String>,
    /// (base s, increment s) as `TournamentClock.parse` read the tag, or the round's own.
    clock: Option<(u32, u32)>,
}

#[derive(Default)]
struct Lila {
    chapters: HashMap<String, Vec<Chapter>>,
    /// Every body pushed, by round, in order.
    bodies: HashMap<String, Vec<String>>,
    /// Games refused, with the reason.
    refused: Vec<String>,
}

/// scalachess's non-strict `TournamentClock.parse` of a `TimeControl` tag.
fn tournament_clock(tag: &str) -> Option<(u32, u32)> {
    let clean: String = tag.chars().filter(|c| !c.is_whitespace()).collect();
    let parts: Vec<&str> = clean.split('+').collect();
    let make = |a: u32, b: u32| (if a > 180 { a } else { a * 60 }, b);
    match parts.as_slice() {
        [a] => a.parse().ok().map(|a| make(a, 0)),
        [a, b] => Some(make(a.parse().ok()?, b.parse().ok()?)),
        _ => None,
    }
}

fn round_number(tags: &BTreeMap<String, String>) -> Option<String> {
    tags.get("Round")
        .map(|r| r.split('.').next().unwrap_or("").to_owned())
}

fn board_number(tags: &BTreeMap<String, String>) -> Option<String> {
    tags.get("Board")
        .cloned()
        .or_else(|| tags.get("Round")?.split('.').nth(1).map(str::to_owned))
}

/// `RelayUpdatePlan.isSameGame`.
fn same_game(game: &Chapter, chapter: &Chapter) -> bool {
    let tag = |c: &Chapter, k: &str| c.tags.get(k).cloned();
    let same = |k: &str| tag(game, k) == tag(chapter, k);
    let event = same("Event") && same("Site");
    let by_id =
        matches!((tag(game, "GameId"), tag(chapter, "GameId")), (Some(a), Some(b)) if a == b);
    let by_tags = event
        && round_number(&game.tags) == round_number(&chapter.tags)
        && board_number(&game.tags) == board_number(&chapter.tags)
        && same("White")
        && same("Black");
    let by_moves = event && round_number(&game.tags) == round_number(&chapter.tags) && {
        let n = game.positions.len().min(chapter.positions.len());
        let at = n.saturating_sub(1);
        matches!((game.positions.get(at), chapter.positions.get(at)), (Some(a), Some(b)) if a == b)
    };
    by_id || by_tags || by_moves
}

impl Lila {
    /// One push of `body` to round `round`: the answer's games.
    fn push(&mut self, round: &str, body: &str) -> Vec<serde_json::Value> {
        self.bodies
            .entry(round.to_owned())
            .or_default()
            .push(body.to_owned());
        let texts: Vec<String> = body
            .split("\n\n[")
            .enumerate()
            .map(|(i, t)| {
                if i == 0 {
                    t.to_owned()
                } else {
                    format!("[{t}")
                }
            })
            .filter(|t| !t.trim().is_empty())
            .collect();
        let mut answer = Vec::new();
        let mut matched: Vec<usize> = Vec::new();
        for text in texts {
            let Ok(mut parsed) = games_from_pgn(&text) else {
                self.refused.push(format!("unreadable: {text}"));
                answer.push(serde_json::json!({"tags": {}, "error": "unreadable"}));
                continue;
            };
            let pgn = parsed.remove(0);
            let tags: BTreeMap<String, String> = pgn.tags.iter().cloned().collect();
            if tags
                .get("Variant")
                .is_some_and(|v| v != "Standard" && v != "Chess960")
            {
                self.refused
                    .push(format!("{round}: variant {:?}", tags.get("Variant")));
                answer.push(serde_json::json!({"tags": tags, "error": "unknown variant"}));
                continue;
            }
            let mut pos = Chess::default();
            let positions = pgn
                .moves
                .iter()
                .map(|m| {
                    pos.play_unchecked(*m);
                    Fen::from_position(&pos, EnPassantMode::Legal).to_string()
                })
                .collect();
            let clocks = text
                .match_indices("[%clk ")
                .map(|(i, _)| text[i + 6..].split(']').next().unwrap().to_owned())
                .collect();
            let clock = match tags.get("TimeControl") {
                Some(t) => tournament_clock(t),
                // The broadcast's own time control is injected (3+2 here).
                None => Some((180, 2)),
            };
            let game = Chapter {
                tags,
                positions,
                sans: pgn.sans.clone(),
                clocks,
                clock,
            };
            let chapters = self.chapters.entry(round.to_owned()).or_default();
            let found = chapters
                .iter()
                .enumerate()
                .find(|(i, c)| !matched.contains(i) && same_game(&game, c))
                .map(|(i, _)| i);
            match found {
                Some(i) => {
                    matched.push(i);
                    chapters[i] = game.clone();
                }
                None if chapters.len() >= 100 => {
                    answer
                        .push(serde_json::json!({"tags": game.tags, "error": "too many chapters"}));
                    continue;
                }
                None => {
                    matched.push(chapters.len());
                    chapters.push(game.clone());
                }
            }
            answer.push(serde_json::json!({"tags": game.tags, "moves": game.sans.len()}));
        }
        answer
    }
}

async fn take(
    State(lila): State<Arc<Mutex<Lila>>>,
    UrlPath(round): UrlPath<String>,
    body: Bytes,
) -> (StatusCode, String) {
    let text = String::from_utf8(body.to_vec()).unwrap();
    let games = lila.lock().unwrap().push(&round, &text);
    (
        StatusCode::OK,
        serde_json::json!({ "games": games }).to_string(),
    )
}

/// The moves as the tracker records them, a 3+2 clock on each, from `t0` ms.
fn recorded(moves: &[Move], t0: u64) -> Vec<RecordedMove> {
    recorded_from(moves, t0, 180_000, |i| 1000 * (1 + i as i64 % 4) - 2000)
}

/// `[%clk h:mm:ss]` of `ms`.
fn clk(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// What one game should look like at the end.
struct Played {
    round: u32,
    board: u32,
    moves: Vec<RecordedMove>,
    result: &'static str,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_rounds_each_in_its_own_lichess_round_with_a_game_of_round_1_still_going() {
    let lila = Arc::new(Mutex::new(Lila::default()));
    let app = Router::new()
        .route("/api/broadcast/round/{id}/push", post(take))
        .with_state(lila.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("event.db");
    let mut store = Store::open(&db).unwrap();
    let event = RoundInfo {
        event: "Blitz Open".into(),
        site: "Almaty".into(),
        round: 1,
    };
    store
        .open_event(
            Some(&event),
            &EventSettings {
                time_control: Some("3+2".into()),
                ..EventSettings::default()
            },
            0,
        )
        .unwrap();
    for round in 1..=3u32 {
        let pairings: Vec<Pairing> = (1..=3u32)
            .map(|b| {
                Pairing::new(
                    b,
                    &format!("White, R{round}B{b}"),
                    &format!("Black, R{round}B{b}"),
                )
            })
            .collect();
        store.import_pairings(round, &pairings).unwrap();
    }
    let boards: Vec<_> = (1..=3u32)
        .map(|n| {
            let b = store.board(&format!("board-{n}"), Kind::Chess).unwrap();
            store.set_board_number(b, n).unwrap();
            b
        })
        .collect();
    let togyz = store.board("togyz-4", Kind::Togyz).unwrap();
    store.set_board_number(togyz, 4).unwrap();

    // The daemon's push over the store, as `run` and `event` start it.
    let token = Token::new("lip_roundsTest42").unwrap();
    let queue = LichessQueue {
        client: LichessClient::new(&base, &token).unwrap(),
        targets: vec![LichessTarget {
            rounds: LichessRounds::Map((1..=3u32).zip(ROUND_IDS.map(str::to_owned)).collect()),
            boards: None,
        }],
    };
    let (changes, _) = watch::channel(0u64);
    let mut relays = JoinSet::new();
    Publications {
        db: db.clone(),
        folder: None,
        lichess: vec![queue],
        publication: Publication::default(),
        slice: 64,
    }
    .spawn(&mut relays, &changes);

    let sources = [
        corpus_moves("WorldChamp1886.pgn", 0),
        corpus_moves("Capablanca.pgn", 0),
        corpus_moves("WorldChamp1886.pgn", 1),
    ];
    let mut t = 1_000u64;
    let mut played: Vec<Played> = Vec::new();
    // Writes a batch and signals it, as the daemon's store writer does; lets the push run.
    async fn commit(store: &mut Store, changes: &watch::Sender<u64>, writes: Vec<Write>) {
        store.write_batch(&writes).unwrap();
        changes.send_modify(|n| *n += 1);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let start = |board, at_ms| Write::Event {
        board,
        event: TrackerEvent::GameStarted {
            at_ms,
            orientation: Orientation::Normal,
            start: None,
        },
    };
    let mv = |board, m: &RecordedMove| Write::Event {
        board,
        event: TrackerEvent::Move(m.clone()),
    };
    let end = |store: &mut Store, board_no: u32, round: u32, result: &str, at_ms: u64| {
        let game = store
            .games()
            .unwrap()
            .into_iter()
            .find(|g| g.board_no == Some(board_no) && g.round == Some(round))
            .unwrap();
        let reason = if result == "1/2-1/2" {
            ResultReason::Agreement
        } else {
            ResultReason::Resignation
        };
        store
            .set_result(game.id, result, reason, "arbiter", None, at_ms)
            .unwrap();
    };
    let results = ["1-0", "0-1", "1/2-1/2"];
    let mut long_game: Vec<RecordedMove> = Vec::new();
    for round in 1..=3u32 {
        if round > 1 {
            store.start_round(round, "arbiter", t).unwrap();
            changes.send_modify(|n| *n += 1);
        }
        let games: Vec<Vec<RecordedMove>> = (0..3)
            .map(|i| {
                let n = 10 + 4 * i + 2 * round as usize;
                recorded(&sources[(i + round as usize) % 3][..n], t)
            })
            .collect();
        // Board 3 of round 1 is still in play through round 2: it gets no new game then.
        let busy = |b: usize| round == 2 && b == 2;
        let mut writes = vec![start(togyz, t)];
        for (b, board) in boards.iter().enumerate() {
            if !busy(b) {
                writes.push(start(*board, t));
            }
        }
        commit(&mut store, &changes, writes).await;
        let plies = games.iter().map(Vec::len).max().unwrap();
        for ply in 0..plies {
            let mut writes = Vec::new();
            for (b, board) in boards.iter().enumerate() {
                if busy(b) {
                    // The round-1 game goes on while round 2 is played.
                    if let Some(m) = long_game.get(ply + 12) {
                        writes.push(mv(*board, m));
                    }
                } else if let Some(m) = games[b].get(ply) {
                    if round == 1 && b == 2 && ply >= 12 {
                        continue;
                    }
                    writes.push(mv(*board, m));
                }
            }
            if !writes.is_empty() {
                commit(&mut store, &changes, writes).await;
            }
        }
        t += 100_000;
        for b in 0..3u32 {
            if round == 1 && b == 2 {
                // Board 3 of round 1 stops at ply 12 and goes on in round 2.
                long_game = games[2].clone();
                continue;
            }
            if busy(b as usize) {
                end(&mut store, 3, 1, results[1], t);
                played.push(Played {
                    round: 1,
                    board: 3,
                    moves: long_game.clone(),
                    result: results[1],
                });
                // Board 3's round-2 game begins late, and is played whole.
                let late = recorded(&sources[0][..14], t);
                commit(&mut store, &changes, vec![start(boards[2], t)]).await;
                for m in &late {
                    commit(&mut store, &changes, vec![mv(boards[2], m)]).await;
                }
                t += 100_000;
                end(&mut store, 3, 2, results[2], t);
                played.push(Played {
                    round: 2,
                    board: 3,
                    moves: late,
                    result: results[2],
                });
                continue;
            }
            let result = results[(b + round) as usize % 3];
            end(&mut store, b + 1, round, result, t);
            changes.send_modify(|n| *n += 1);
            played.push(Played {
                round,
                board: b + 1,
                moves: games[b as usize].clone(),
                result,
            });
        }
        t += 100_000;
    }
    assert_eq!(played.len(), 9);

    // Every game in its own round's chapter, whole.
    let settled = |lila: &Lila| {
        played.iter().all(|p| {
            lila.chapters
                .get(ROUND_IDS[p.round as usize - 1])
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.tags.get("GameId") == Some(&format!("r{}b{}", p.round, p.board))
                            && c.tags.get("Result").map(String::as_str) == Some(p.result)
                            && c.sans.len() == p.moves.len()
                    })
                })
        })
    };
    for _ in 0..500 {
        if settled(&lila.lock().unwrap()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lila = lila.lock().unwrap();
    for (r, id) in ROUND_IDS.iter().enumerate() {
        let chapters = &lila.chapters[*id];
        let ids: Vec<&str> = chapters.iter().map(|c| c.tags["GameId"].as_str()).collect();
        let round = r as u32 + 1;
        assert_eq!(
            ids,
            (1..=3).map(|b| format!("r{round}b{b}")).collect::<Vec<_>>(),
            "round {round}'s Lichess round holds {ids:?}"
        );
    }
    for p in &played {
        let chapter = lila.chapters[ROUND_IDS[p.round as usize - 1]]
            .iter()
            .find(|c| c.tags["GameId"] == format!("r{}b{}", p.round, p.board))
            .unwrap();
        let want: Vec<&str> = p.moves.iter().map(|m| m.notation.as_str()).collect();
        assert_eq!(chapter.sans, want, "r{}b{} moves", p.round, p.board);
        assert_eq!(chapter.tags["Result"], p.result, "r{}b{}", p.round, p.board);
        assert_eq!(
            chapter.tags["White"],
            format!("White, R{}B{}", p.round, p.board)
        );
        // 3+2 read as three minutes and two seconds, never three hours.
        assert_eq!(chapter.clock, Some((180, 2)), "r{}b{}", p.round, p.board);
        // The clocks of the last move, in [%clk] and in fixed tags.
        let last = p.moves.last().unwrap();
        let (white, black) = (last.clock_white_ms.unwrap(), last.clock_black_ms.unwrap());
        let mover = if last.ply % 2 == 1 { white } else { black };
        assert_eq!(
            chapter.clocks.last(),
            Some(&clk(mover)),
            "r{}b{}",
            p.round,
            p.board
        );
        assert_eq!(chapter.tags.get("WhiteClock"), Some(&clk(white)));
        assert_eq!(chapter.tags.get("BlackClock"), Some(&clk(black)));
    }
    assert!(lila.refused.is_empty(), "refused: {:?}", lila.refused);
    // A push only when the round changed: never the same body twice in a row.
    let mut pushes = 0;
    for (round, bodies) in &lila.bodies {
        pushes += bodies.len();
        for pair in bodies.windows(2) {
            assert_ne!(pair[0], pair[1], "{round}: the same body pushed again");
        }
        assert!(
            bodies.iter().all(|b| !b.contains("Togyz")),
            "{round}: a togyz game was pushed"
        );
    }
    // Pushes per game: a push changes a game only with its pairing, its start, a move, or its
    // result (the clocks are those of its last move: nothing between moves is pushed).
    let mut per_game: BTreeMap<String, usize> = BTreeMap::new();
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for bodies in lila.bodies.values() {
        let mut last: HashMap<String, String> = HashMap::new();
        for body in bodies {
            for text in body.split("\n\n[").filter(|t| !t.trim().is_empty()) {
                let Some(id) = text
                    .split("GameId \"")
                    .nth(1)
                    .and_then(|t| t.split('"').next())
                else {
                    continue;
                };
                if last.get(id) != Some(&text.to_owned()) {
                    *per_game.entry(id.to_owned()).or_default() += 1;
                    // Each version by its moves (one [%clk] each) and its result.
                    let result = text
                        .split("Result \"")
                        .nth(1)
                        .and_then(|t| t.split('"').next())
                        .unwrap_or("?");
                    versions
                        .entry(id.to_owned())
                        .or_default()
                        .push(format!("{}{result}", text.matches("[%clk").count()));
                    last.insert(id.to_owned(), text.to_owned());
                }
            }
        }
    }
    for p in &played {
        let id = format!("r{}b{}", p.round, p.board);
        let changed = per_game.get(&id).copied().unwrap_or(0);
        // Its pairing shown from the round's start, its start, each move and its result, at
        // most; commits of several plies (or a push that comes after two of these) make fewer.
        assert!(
            changed <= p.moves.len() + 3,
            "{id}: {changed} pushes changed it, for {} moves and a result: its versions by \
             moves and result {:?}",
            p.moves.len(),
            versions.get(&id)
        );
    }
    eprintln!(
        "lichess rounds: 9 games over 3 rounds, {pushes} pushes ({:?} per round); pushes that \
         changed each game: {per_game:?}; each game's versions by moves and result: {versions:?}",
        ROUND_IDS.map(|id| lila.bodies.get(id).map_or(0, Vec::len))
    );
}
