//! The Lichess push client against a local HTTP endpoint that records what it receives: real
//! round PGN from a real store (corpus games), retries after 5xx, coalesced changes, nothing lost,
//! the token only in the `Authorization` header and never in the logs.

use std::{
    fs,
    io::Write as _,
    net::SocketAddr,
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::Bytes,
    extract::{Path as UrlPath, State},
    http::{HeaderMap, StatusCode},
    routing::post,
};
use boardscribe::{
    broadcast::lichess::{Backoff, LichessPush},
    emulator::games_from_pgn,
    export::{PgnStyle, round::broadcast_games, write_pgn},
    game::Kind,
    pairings::Pairing,
    sensor::Orientation,
    store::{BoardId, GameRecord, RoundInfo, Store, Write},
    tracker::event::{RecordedMove, TrackerEvent},
};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, fen::Fen, san::SanPlus};
use tokio::sync::watch;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");
const TOKEN: &str = "lip_Zq8nTestToken42";
const ROUND_ID: &str = "rT3stR0d";

/// What the endpoint received.
#[derive(Clone, Debug)]
struct Received {
    round: String,
    authorization: Option<String>,
    content_type: Option<String>,
    user_agent: Option<String>,
    body: String,
    /// The status it answered.
    status: u16,
}

#[derive(Clone)]
struct Endpoint {
    received: Arc<Mutex<Vec<Received>>>,
    /// Statuses to answer, in order; 200 once they are used up.
    script: Arc<Mutex<Vec<u16>>>,
}

async fn push(
    State(ep): State<Endpoint>,
    UrlPath(round): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("<bytes>").to_owned())
    };
    let status = {
        let mut script = ep.script.lock().unwrap();
        if script.is_empty() {
            200
        } else {
            script.remove(0)
        }
    };
    let body = String::from_utf8(body.to_vec()).expect("the PGN is UTF-8");
    let games = games_from_pgn(&body).map(|g| g.len()).unwrap_or(0);
    ep.received.lock().unwrap().push(Received {
        round,
        authorization: header("authorization"),
        content_type: header("content-type"),
        user_agent: header("user-agent"),
        body,
        status,
    });
    let answer = match status {
        200 => format!(
            "{{\"games\":[{}]}}",
            vec!["{\"tags\":{},\"moves\":1}"; games].join(",")
        ),
        401 => "{\"error\":\"No such token: it is unknown\"}".to_owned(),
        _ => "upstream busy".to_owned(),
    };
    (StatusCode::from_u16(status).unwrap(), answer)
}

async fn serve(script: Vec<u16>) -> (SocketAddr, Endpoint) {
    let ep = Endpoint {
        received: Arc::default(),
        script: Arc::new(Mutex::new(script)),
    };
    let app = Router::new()
        .route("/api/broadcast/round/{id}/push", post(push))
        .with_state(ep.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, ep)
}

/// A log buffer that a tracing subscriber writes to.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl LogBuffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Every event at every level, from every crate (reqwest and hyper too), into `buf`.
fn capture_logs(buf: &LogBuffer) -> tracing::subscriber::DefaultGuard {
    let buf = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || buf.clone())
        .finish();
    tracing::subscriber::set_default(subscriber)
}

pub(crate) fn corpus_moves(file: &str, game: usize) -> Vec<Move> {
    let text = fs::read_to_string(Path::new(CORPUS).join(file)).unwrap();
    games_from_pgn(&text).unwrap().swap_remove(game).moves
}

/// The moves as the tracker records them, a clock on each.
fn recorded(moves: &[Move]) -> Vec<RecordedMove> {
    recorded_from(moves, 0, 5_400_000, |i| 1000 * (5 + i as i64 % 60))
}

/// The moves as the tracker records them from `t0` ms, one a second, each side's clock
/// starting at `start` and losing `spent(i)` ms on ply `i + 1` (negative: the increment made
/// up for more than the move took).
pub(crate) fn recorded_from(
    moves: &[Move],
    t0: u64,
    start: u64,
    spent: impl Fn(usize) -> i64,
) -> Vec<RecordedMove> {
    let mut pos = Chess::default();
    let mut clocks = [start; 2];
    moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            clocks[i % 2] = clocks[i % 2].saturating_add_signed(-spent(i));
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string();
            RecordedMove {
                ply: i as u32 + 1,
                notation: san,
                uci: Some(uci),
                position: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
                at_ms: t0 + 1000 * (i as u64 + 1),
                clock_white_ms: Some(clocks[0]),
                clock_black_ms: Some(clocks[1]),
                time_trouble: false,
            }
        })
        .collect()
}

struct Hall {
    store: Arc<Mutex<Store>>,
    boards: Vec<BoardId>,
    games: Vec<Vec<RecordedMove>>,
}

/// Two numbered boards with pairings, round 1 started, no moves yet.
fn hall() -> Hall {
    let mut store = Store::open_in_memory().unwrap();
    store
        .set_round(&RoundInfo {
            event: "Push Test Open".into(),
            site: "Almaty".into(),
            round: 1,
        })
        .unwrap();
    let pairing = Pairing::new;
    store
        .import_pairings(
            1,
            &[
                pairing(1, "Steinitz, W", "Zukertort, J"),
                pairing(2, "Capablanca, J", "Marshall, F"),
            ],
        )
        .unwrap();
    let mut boards = Vec::new();
    for n in 1..=2 {
        let b = store.board(&format!("board-{n}"), Kind::Chess).unwrap();
        store.set_board_number(b, n).unwrap();
        store
            .write_batch(&[Write::Event {
                board: b,
                event: TrackerEvent::GameStarted {
                    at_ms: 0,
                    orientation: Orientation::Normal,
                    start: None,
                },
            }])
            .unwrap();
        boards.push(b);
    }
    let games = vec![
        recorded(&corpus_moves("WorldChamp1886.pgn", 0)[..30]),
        recorded(&corpus_moves("Capablanca.pgn", 0)[..30]),
    ];
    Hall {
        store: Arc::new(Mutex::new(store)),
        boards,
        games,
    }
}

impl Hall {
    fn play(&self, board: usize, ply: usize) {
        let mv = self.games[board][ply].clone();
        self.store
            .lock()
            .unwrap()
            .write_batch(&[Write::Event {
                board: self.boards[board],
                event: TrackerEvent::Move(mv),
            }])
            .unwrap();
    }

    fn round_pgn(&self) -> String {
        let store = self.store.lock().unwrap();
        round_pgn(&store.round_games(1).unwrap(), 1)
    }

    fn body_fn(&self) -> impl Fn() -> Result<String, String> + Send + Sync + 'static {
        let store = Arc::clone(&self.store);
        move || {
            let store = store.lock().map_err(|e| e.to_string())?;
            let games = store.round_games(1).map_err(|e| e.to_string())?;
            Ok(round_pgn(&games, 1))
        }
    }
}

/// Round `round` of `games` as the arbiter reads it: one game per board, every comment.
pub(crate) fn round_pgn(games: &[GameRecord], round: u32) -> String {
    write_pgn(broadcast_games(games, round), &PgnStyle::arbiter())
}

fn token_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("lichess.token");
    let mut f = fs::File::create(&path).unwrap();
    writeln!(f, "{TOKEN}").unwrap();
    path
}

/// Waits until `done` holds for what was received (at most 20 s).
async fn wait_for(ep: &Endpoint, what: &str, done: impl Fn(&[Received]) -> bool) {
    for _ in 0..2000 {
        if done(&ep.received.lock().unwrap()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn fast() -> Backoff {
    Backoff {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(200),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn every_change_reaches_lichess_after_retries_and_the_token_stays_out_of_the_logs() {
    let logs = LogBuffer::default();
    let _guard = capture_logs(&logs);
    let (addr, ep) = serve(vec![503, 503]).await;
    let dir = tempfile::tempdir().unwrap();
    let push =
        LichessPush::from_token_file(&format!("http://{addr}/"), ROUND_ID, &token_file(&dir))
            .unwrap()
            .with_backoff(fast());
    assert!(!format!("{push:?}").contains(TOKEN));

    let hall = hall();
    hall.play(0, 0);
    let (changes, rx) = watch::channel(0u64);
    let task = tokio::spawn(push.run(rx, hall.body_fn()));

    // At start the round is pushed: refused twice with 503, taken the third time, same body.
    let first = hall.round_pgn();
    wait_for(&ep, "the first push to be taken", |r| {
        r.iter().any(|x| x.status == 200)
    })
    .await;
    {
        let r = ep.received.lock().unwrap();
        let statuses: Vec<u16> = r.iter().map(|x| x.status).collect();
        assert_eq!(statuses, [503, 503, 200]);
        assert!(r.iter().all(|x| x.body == first));
    }

    // Changes one at a time, each awaited: every body arrives.
    for ply in 1..4 {
        hall.play(0, ply);
        hall.play(1, ply - 1);
        changes.send_modify(|n| *n += 1);
        let want = hall.round_pgn();
        wait_for(&ep, "a body", |r| r.last().is_some_and(|x| x.body == want)).await;
    }
    let paced = ep.received.lock().unwrap().len();
    assert_eq!(paced, 3 + 3);

    // A burst: changes collapse while a push is under way, and the last body is the final round.
    for ply in 4..30 {
        hall.play(0, ply);
        hall.play(1, ply - 1);
        changes.send_modify(|n| *n += 1);
        tokio::task::yield_now().await;
    }
    let last = hall.round_pgn();
    wait_for(&ep, "the final round PGN", |r| {
        r.last().is_some_and(|x| x.body == last && x.status == 200)
    })
    .await;
    drop(changes);
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the task ends when the sender is gone")
        .unwrap();

    let received = ep.received.lock().unwrap().clone();
    assert!(
        received.len() < paced + 26,
        "{} pushes for 26 changes: nothing coalesced",
        received.len()
    );
    let mut previous = [0usize; 2];
    for r in &received {
        assert_eq!(r.round, ROUND_ID);
        assert_eq!(
            r.authorization.as_deref(),
            Some(&*format!("Bearer {TOKEN}"))
        );
        assert_eq!(r.content_type.as_deref(), Some("text/plain; charset=utf-8"));
        assert_eq!(
            r.user_agent.as_deref(),
            Some(concat!("boardscribe/", env!("CARGO_PKG_VERSION")))
        );
        // Every body is the whole round, each game a prefix of what was played, never shorter
        // than the body before.
        let games = games_from_pgn(&r.body).unwrap();
        assert_eq!(games.len(), 2);
        for (i, g) in games.iter().enumerate() {
            let played: Vec<&str> = hall.games[i].iter().map(|m| m.notation.as_str()).collect();
            assert_eq!(g.sans, played[..g.sans.len()]);
            assert!(g.sans.len() >= previous[i]);
            previous[i] = g.sans.len();
            assert_eq!(g.tag("Round"), Some(&*format!("1.{}", i + 1)));
        }
        assert_eq!(games[1].tag("White"), Some("Capablanca, J"));
    }
    assert_eq!(previous, [30, 29], "nothing lost");

    let text = logs.text();
    assert!(
        text.contains("push failed"),
        "the logs were captured: {text}"
    );
    assert!(text.contains("503"), "{text}");
    assert!(!text.contains(TOKEN), "the token is in the logs");
    assert!(!text.contains("Zq8n"), "part of the token is in the logs");
}

#[tokio::test(flavor = "current_thread")]
async fn a_refused_push_is_logged_and_not_retried() {
    let logs = LogBuffer::default();
    let _guard = capture_logs(&logs);
    let (addr, ep) = serve(vec![401]).await;
    let dir = tempfile::tempdir().unwrap();
    let push = LichessPush::from_token_file(&format!("http://{addr}"), ROUND_ID, &token_file(&dir))
        .unwrap()
        .with_backoff(fast());
    let hall = hall();
    hall.play(0, 0);
    let (changes, rx) = watch::channel(0u64);
    let task = tokio::spawn(push.run(rx, hall.body_fn()));
    wait_for(&ep, "the refused push", |r| r.len() == 1).await;
    // Long enough for several retries, had there been any.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ep.received.lock().unwrap().len(), 1);
    // The next change is pushed again, and taken.
    hall.play(0, 1);
    changes.send_modify(|n| *n += 1);
    let want = hall.round_pgn();
    wait_for(&ep, "the next push", |r| {
        r.len() == 2 && r[1].status == 200 && r[1].body == want
    })
    .await;
    drop(changes);
    task.await.unwrap();
    let text = logs.text();
    assert!(text.contains("Lichess refused the push"), "{text}");
    assert!(text.contains("No such token: it is unknown"), "{text}");
    assert!(!text.contains(TOKEN));
}

#[tokio::test(flavor = "current_thread")]
async fn no_endpoint_is_retried_until_one_answers() {
    // A port that nobody listens on yet, then an endpoint on it.
    let addr = crate::ports::free_addr();
    let dir = tempfile::tempdir().unwrap();
    let client =
        LichessPush::from_token_file(&format!("http://{addr}"), ROUND_ID, &token_file(&dir))
            .unwrap()
            .with_backoff(fast());
    let hall = hall();
    hall.play(1, 0);
    let (changes, rx) = watch::channel(0u64);
    let task = tokio::spawn(client.run(rx, hall.body_fn()));
    tokio::time::sleep(Duration::from_millis(250)).await;
    let ep = Endpoint {
        received: Arc::default(),
        script: Arc::default(),
    };
    let app = Router::new()
        .route("/api/broadcast/round/{id}/push", post(push))
        .with_state(ep.clone());
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let want = hall.round_pgn();
    wait_for(&ep, "the push after the endpoint came up", |r| {
        r.first().is_some_and(|x| x.body == want)
    })
    .await;
    drop(changes);
    task.await.unwrap();
}

/// A 150-board round (issue 17): pushed to two Lichess rounds, boards 1-100 and 101-150, each
/// body at most 100 games and accepted by a stand-in that refuses more (as Lichess does); a
/// third entry without boards pushes the first `slice` (64) games only; `/round.pgn?boards=`
/// serves a slice, public (no irregularity comments), and an unreadable range is a 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_of_150_boards_goes_in_slices_of_at_most_100() {
    use boardscribe::{
        broadcast::lichess::plan::{Pushed, round_body},
        daemon,
        export::publish::{BoardRange, Publication},
        relay::{Hub, RelayExtras},
    };
    const BOARDS: u32 = 150;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.db");
    {
        let mut store = Store::open(&db).unwrap();
        store
            .set_round(&RoundInfo {
                event: "Big Open".into(),
                site: "Bishkek".into(),
                round: 1,
            })
            .unwrap();
        let pairings: Vec<Pairing> = (1..=BOARDS)
            .map(|n| {
                Pairing::new(
                    n,
                    &format!("White, Player{n}"),
                    &format!("Black, Player{n}"),
                )
            })
            .collect();
        store.import_pairings(1, &pairings).unwrap();
        let sources = [
            recorded(&corpus_moves("WorldChamp1886.pgn", 0)[..12]),
            recorded(&corpus_moves("Capablanca.pgn", 0)[..12]),
        ];
        for n in 1..=BOARDS {
            let b = store.board(&format!("board-{n}"), Kind::Chess).unwrap();
            store.set_board_number(b, n).unwrap();
            let mut writes = vec![Write::Event {
                board: b,
                event: TrackerEvent::GameStarted {
                    at_ms: 0,
                    orientation: Orientation::Normal,
                    start: None,
                },
            }];
            for mv in &sources[n as usize % 2][..(n as usize % 12) + 1] {
                writes.push(Write::Event {
                    board: b,
                    event: TrackerEvent::Move(mv.clone()),
                });
            }
            store.write_batch(&writes).unwrap();
        }
    }
    // The stand-in: refuses a body of more than 100 games, as Lichess does.
    /// Each push: the round, its games, their boards, the answer.
    type Push = (String, usize, Vec<u32>, u16);
    #[derive(Clone, Default)]
    struct Rounds(Arc<Mutex<Vec<Push>>>);
    async fn take(
        State(r): State<Rounds>,
        UrlPath(round): UrlPath<String>,
        body: Bytes,
    ) -> (StatusCode, String) {
        let text = String::from_utf8(body.to_vec()).unwrap();
        let games = games_from_pgn(&text).unwrap();
        let boards: Vec<u32> = games
            .iter()
            .map(|g| {
                g.tags
                    .iter()
                    .find(|(k, _)| k == "Board")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap()
            })
            .collect();
        let status = if games.len() > 100 { 400 } else { 200 };
        r.0.lock()
            .unwrap()
            .push((round, games.len(), boards, status));
        let answer = if status == 200 {
            format!(
                "{{\"games\":[{}]}}",
                vec!["{\"tags\":{},\"moves\":1}"; games.len()].join(",")
            )
        } else {
            "{\"error\":\"Too many games\"}".to_owned()
        };
        (StatusCode::from_u16(status).unwrap(), answer)
    }
    let rounds = Rounds::default();
    let app = Router::new()
        .route("/api/broadcast/round/{id}/push", post(take))
        .with_state(rounds.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    // The daemon's push, entry by entry, over the store as it reads it.
    let token = boardscribe::broadcast::lichess::Token::new(TOKEN).unwrap();
    let (changes, _) = watch::channel(0u64);
    let publication = Publication::default();
    for (round, boards) in [
        ("sliceOne", Some("1-100")),
        ("sliceTwo", Some("101-150")),
        ("noRange", None),
    ] {
        let range: Option<BoardRange> = boards.map(|b| b.parse().unwrap());
        let push = LichessPush::new(&base, round, &token)
            .unwrap()
            .with_backoff(fast());
        let db = db.clone();
        // The slice set for the entries with boards; the default for the one without.
        let slice = if range.is_some() { 100 } else { 64 };
        tokio::spawn(push.run(changes.subscribe(), move || {
            let store = Store::open_read_only(&db).map_err(|e| e.to_string())?;
            let games = store.round_games(1).map_err(|e| e.to_string())?;
            let style = publication.lichess_style();
            let body = round_body(&games, 1, range.as_ref(), slice, &style, &mut Pushed::new());
            Ok::<_, String>(body.pgn)
        }));
    }
    for _ in 0..2000 {
        if rounds.0.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut got = rounds.0.lock().unwrap().clone();
    got.sort();
    let summary: Vec<(String, usize, u32, u32, u16)> = got
        .iter()
        .map(|(r, n, b, s)| {
            (
                r.clone(),
                *n,
                *b.iter().min().unwrap(),
                *b.iter().max().unwrap(),
                *s,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("noRange".to_owned(), 64, 1, 64, 200),
            ("sliceOne".to_owned(), 100, 1, 100, 200),
            ("sliceTwo".to_owned(), 50, 101, 150, 200),
        ]
    );

    // The served slice.
    let hub = Hub::new();
    let (_stop_tx, stop) = watch::channel(false);
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let url = daemon::start_relay_with(any, &hub, &db, None, stop, RelayExtras::default())
        .await
        .unwrap();
    let text = reqwest::get(format!("{url}round.pgn?boards=101-150"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let boards: Vec<u32> = games_from_pgn(&text)
        .unwrap()
        .iter()
        .map(|g| {
            g.tags
                .iter()
                .find(|(k, _)| k == "Board")
                .unwrap()
                .1
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(boards, (101..=150).collect::<Vec<_>>());
    assert!(
        text.contains("[GameId \"r1b101\"]") && text.contains("[WhiteClock \""),
        "{text}"
    );
    let bad = reqwest::get(format!("{url}round.pgn?boards=9-3"))
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}
