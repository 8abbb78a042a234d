//! `boardscribe run --config FILE` end to end: the real binary records two DGT boards and a
//! togyz pit board emulated on pseudo-terminals (found through the config's `port`), tells
//! systemd READY and STOPPING on a notify socket the test binds, keeps the LiveChess-style folder
//! of the round up to date, stops cleanly on SIGTERM with the games still open, and resumes them
//! on restart.

use std::{
    fs::File,
    os::unix::net::UnixDatagram,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

use boardscribe::{
    emulator::{
        self, EmulatorOptions, PgnGame, PtyFleet, PtyOptions, PtyScript, TogyzEmulatorOptions,
    },
    game::{
        GameKind,
        togyz::{Rules, TogyzGame},
    },
    store::Store,
};
use shakmaty::CastlingMode;

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");
const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);
const DEADLINE: Duration = Duration::from_secs(150);

fn corpus_game(file: &str, n: usize) -> PgnGame {
    let text = std::fs::read_to_string(Path::new(CORPUS).join(format!("{file}.pgn"))).unwrap();
    emulator::games_from_pgn(&text).unwrap().swap_remove(n - 1)
}

fn expected_uci(game: &PgnGame) -> Vec<String> {
    game.moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

/// The result the rules give after `moves` from the start, if the game is over then.
fn togyz_outcome(moves: &[boardscribe::game::togyz::Move]) -> Option<&'static str> {
    let mut pos = TogyzGame::start();
    for mv in moves {
        pos = TogyzGame::play(&pos, mv);
    }
    let mut next = Vec::new();
    TogyzGame::successors(
        &pos,
        TogyzGame::reading_key(&TogyzGame::reading(&pos)),
        &mut next,
    );
    TogyzGame::outcome(&pos, !next.is_empty()).map(|(o, _)| o.as_pgn())
}

/// The daemon, killed (and its log shown) if the test fails while it runs.
struct Daemon {
    child: Option<Child>,
    log: PathBuf,
}

impl Daemon {
    fn start(dir: &Path, name: &str, config: &Path, notify: &Path) -> Daemon {
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).unwrap();
        let child = Command::new(BIN)
            .args(["run", "--config", config.to_str().unwrap()])
            .env("NOTIFY_SOCKET", notify)
            .env("WATCHDOG_USEC", "2000000")
            .env("BOARDSCRIBE_LOG", "boardscribe=info")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        Daemon {
            child: Some(child),
            log,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then the exit status.
    fn terminate(&mut self) -> ExitStatus {
        let child = self.child.as_mut().unwrap();
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status;
            }
            assert!(start.elapsed() < DEADLINE, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("--- daemon log ---\n{}", self.log());
        }
    }
}

/// Reads the notify socket all the time, as systemd does (a full socket would block the
/// daemon's sends), passing each message on.
fn drain(sock: UnixDatagram) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = sock.recv(&mut buf) {
            if tx
                .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                .is_err()
            {
                return;
            }
        }
    });
    rx
}

/// Reads notifications until one contains `what`; returns everything read.
fn wait_notify(messages: &std::sync::mpsc::Receiver<String>, what: &str) -> String {
    let start = Instant::now();
    let mut seen = String::new();
    while start.elapsed() < DEADLINE {
        if let Ok(msg) = messages.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&msg);
            if msg.lines().any(|l| l == what) {
                return seen;
            }
        }
    }
    panic!("no {what} from the daemon; got {seen:?}");
}

fn poll<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_with_a_config_records_notifies_relays_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let games = [
        corpus_game("tatamast22", 27),
        corpus_game("WorldChamp1886", 20),
    ];
    // A togyz game of the corpus, whole, played on a pit board as board 3.
    let togyz_text = std::fs::read_to_string(PLAYOK).unwrap();
    let (togyz_record, togyz_moves) = emulator::togyz_records(&togyz_text, Rules::KYRGYZ)
        .unwrap()
        .into_iter()
        .find(|(_, moves)| moves.len() < 90 && togyz_outcome(moves).is_some())
        .unwrap();
    let togyz_result = togyz_outcome(&togyz_moves);
    let togyz_want: Vec<String> = togyz_record
        .moves
        .iter()
        .map(|m| m.text.to_string())
        .collect();
    let togyz_opts = TogyzEmulatorOptions {
        speed: 0.04,
        seed: 43,
        ..TogyzEmulatorOptions::default()
    };
    let togyz_script = emulator::script_togyz(&togyz_moves, &togyz_opts).unwrap();
    let mut boards = Vec::new();
    let mut links = Vec::new();
    for (i, game) in games.iter().enumerate() {
        let opts = EmulatorOptions {
            speed: 0.04,
            seed: 40 + i as u64,
            rotated: i == 1,
            time_control: Some((15 * 60_000, 10_000)),
            ..EmulatorOptions::default()
        };
        boards.push(PtyScript::from(emulator::script_pgn(game, &opts).unwrap()));
    }
    boards.push(PtyScript::from(togyz_script));
    let boards: Vec<_> = boards
        .into_iter()
        .enumerate()
        .map(|(i, script)| {
            let link = dir.path().join(format!("board-{}", i + 1));
            links.push(link.clone());
            let pty = PtyOptions {
                link: Some(link),
                ..PtyOptions::default()
            };
            (script, pty)
        })
        .collect();
    let mut emulators = PtyFleet::spawn(boards).await.unwrap();
    let db = dir.path().join("hall.db");
    let relay = dir.path().join("relay");
    let config = dir.path().join("boardscribe.toml");
    std::fs::write(
        &config,
        format!(
            r#"database = "{db}"

[tournament]
event = "Config Open"
site = "Test Hall"
round = 1
time_control = "15+10"

[[board]]
number = 1
kind = "dgt"
name = "top board"
port = "{b1}"

[[board]]
number = 2
kind = "dgt"
name = "second board"
port = "{b2}"

[[board]]
number = 3
kind = "togyz"
name = "pit board"
port = "{b3}"

[relay.folder]
dir = "{relay}"
"#,
            db = db.display(),
            b1 = links[0].display(),
            b2 = links[1].display(),
            b3 = links[2].display(),
            relay = relay.display(),
        ),
    )
    .unwrap();
    let notify_path = dir.path().join("notify");
    let notify = drain(UnixDatagram::bind(&notify_path).unwrap());

    let mut daemon = Daemon::start(dir.path(), "run", &config, &notify_path);
    let ready = tokio::task::block_in_place(|| wait_notify(&notify, "READY=1"));
    assert!(ready.contains("STATUS="), "{ready:?}");

    tokio::time::timeout(DEADLINE, emulators.all_done(|_, _| {}))
        .await
        .expect("the boards did not finish in time");

    let names = ["top board", "second board", "pit board"];
    let recorded = tokio::task::block_in_place(|| {
        poll("every move in SQLite", || {
            let store = Store::open_read_only(&db).ok()?;
            let all = store.games().ok()?;
            let per_board: Vec<_> = names
                .iter()
                .map(|n| all.iter().rfind(|g| g.board_name == *n).cloned())
                .collect::<Option<_>>()?;
            let chess = per_board.iter().zip(&games).all(|(g, want)| {
                g.moves
                    .iter()
                    .filter_map(|m| m.uci.clone())
                    .collect::<Vec<_>>()
                    == expected_uci(want)
            });
            let togyz = per_board[2]
                .moves
                .iter()
                .map(|m| m.notation.clone())
                .collect::<Vec<_>>()
                == togyz_want;
            (chess && togyz).then_some(per_board)
        })
    });
    for (g, number) in recorded.iter().zip(1u32..) {
        assert_eq!(g.round, Some(1));
        assert_eq!(g.board_no, Some(number));
    }
    assert_eq!(recorded[2].kind, boardscribe::game::Kind::Togyz);
    // Sown to the end by the rules: the daemon decides the result itself.
    assert_eq!(Some(recorded[2].result.as_str()), togyz_result);

    // The round's folder: one file per board (the pit board's too) and the whole round.
    let round_dir = relay.join("round-1");
    tokio::task::block_in_place(|| {
        poll("the round folder", || {
            let one = std::fs::read_to_string(round_dir.join("game-1.pgn")).ok()?;
            let two = std::fs::read_to_string(round_dir.join("game-2.pgn")).ok()?;
            let three = std::fs::read_to_string(round_dir.join("game-3.pgn")).ok()?;
            let all = std::fs::read_to_string(round_dir.join("games.pgn")).ok()?;
            let last = |g: &PgnGame| g.moves.len();
            let complete = one.contains("[Event \"Config Open\"]")
                && one.contains("[Round \"1.1\"]")
                && two.contains("[Round \"1.2\"]")
                && three.contains("[Round \"1.3\"]")
                && all.matches("[Event ").count() == 3
                && last(&games[0]) > 0;
            complete.then_some(())
        })
    });
    let open_before: Vec<_> = {
        let store = Store::open_read_only(&db).unwrap();
        recorded
            .iter()
            .map(|g| store.game(g.id).unwrap().unwrap())
            .collect()
    };

    // SIGTERM: STOPPING, a clean exit, the games still open.
    let status = daemon.terminate();
    let stopping = tokio::task::block_in_place(|| wait_notify(&notify, "STOPPING=1"));
    assert!(stopping.contains("STOPPING=1"));
    assert!(status.success(), "{status:?}\n{}", daemon.log());
    let log = daemon.log();
    assert!(log.contains("store closed"), "{log}");
    assert!(log.contains("game="), "spans carry the game: {log}");
    drop(daemon);

    // A restart resumes the open games: same games, same moves, nothing new.
    let mut again = Daemon::start(dir.path(), "restart", &config, &notify_path);
    tokio::task::block_in_place(|| wait_notify(&notify, "READY=1"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let status = again.terminate();
    assert!(status.success(), "{}", again.log());
    let log = again.log();
    let store = Store::open_read_only(&db).unwrap();
    for (before, name) in open_before.iter().zip(names) {
        let games_now: Vec<_> = store
            .games()
            .unwrap()
            .into_iter()
            .filter(|g| g.board_name == name)
            .collect();
        assert_eq!(games_now.len(), 1, "{name}: a new game after the restart");
        assert_eq!(games_now[0].id, before.id);
        assert_eq!(games_now[0].moves.len(), before.moves.len());
        if store.open_game(games_now[0].board).unwrap().is_some() {
            assert!(
                log.contains(&format!("board={name}")) && log.contains("resuming game"),
                "{log}"
            );
        }
    }
    drop(again);
    emulators.abort();
}
