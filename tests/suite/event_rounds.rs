//! A three-round mini event with one daemon that is never restarted (issue 16): eight emulated
//! DGT boards each play three games one after another on the same port, the pieces set up again
//! between rounds. Round 1 is paired from the CLI before the daemon starts; round 2 is paired by
//! upload and started through the admin API while board 8 is still finishing its round-1 game;
//! round 3 is paired and started from the CLI (another process, on the same database). Then
//! `/rounds/N.pgn`, `/round.pgn`, `export --round N` and `/api/boards` give each round's games
//! with the right players, and every game's moves are the ones played.

use std::{path::Path, process::Command, time::Duration};

use boardscribe::{
    arbiter::LawsSetup,
    daemon,
    emulator::{EmulatorOptions, PgnGame, PtyFleet, PtyOptions, PtyScript, script_pgn},
    metrics::Metrics,
    relay::{Hub, RelayExtras, Token},
    store::{RoundInfo, Store},
};
use serde_json::Value;
use tokio::{sync::watch, time::Instant};

use crate::relay_common::corpus_game;

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");
const BOARDS: u32 = 8;
/// Plies of each game (board 8's first game is longer: it is still going when round 2 starts).
const PLIES: usize = 10;
const LONG_PLIES: usize = 30;
const SPEED: f64 = 0.25;
const TOKEN: &str = "event-token";

/// Corpus game `n`, cut to its first `plies` plies (the game goes on after the cut, unrecorded
/// until the board is set up again).
fn game(n: usize, plies: usize) -> PgnGame {
    let mut g = corpus_game("tatamast22", n);
    g.moves.truncate(plies);
    g.outcome = None;
    g
}

fn name(round: u32, board: u32, white: bool) -> String {
    let colour = if white { "White" } else { "Black" };
    format!("R{round}B{board} {colour}, Player")
}

fn pairings_csv(round: u32) -> String {
    let mut csv = String::from("board,white,black,white_elo,black_title\n");
    for b in 1..=BOARDS {
        csv.push_str(&format!(
            "{b},\"{}\",\"{}\",{},GM\n",
            name(round, b, true),
            name(round, b, false),
            2000 + 10 * b + round
        ));
    }
    csv
}

async fn get_text(client: &reqwest::Client, url: &str) -> String {
    let resp = client.get(url).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{url}");
    resp.text().await.unwrap()
}

fn cli(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "boardscribe {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The UCI moves of every game in a round PGN, by board (read back with the PGN's own tags).
fn round_games(pgn: &str) -> Vec<(String, String, String, usize)> {
    pgn.split("\n\n[Event")
        .filter(|g| g.contains("[Round"))
        .map(|g| {
            let tag = |t: &str| {
                g.lines()
                    .find_map(|l| l.strip_prefix(&format!("[{t} \"")))
                    .and_then(|l| l.strip_suffix("\"]"))
                    .unwrap_or("")
                    .to_owned()
            };
            let moves = g
                .lines()
                .filter(|l| !l.starts_with('['))
                .flat_map(|l| l.split_whitespace())
                .filter(|t| t.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
                .filter(|t| !t.starts_with("[%") && !t.ends_with(']'))
                .count();
            (tag("Round"), tag("White"), tag("Black"), moves)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_rounds_with_one_daemon_each_round_with_its_players() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("event.db");
    let db_arg = db.to_str().unwrap().to_owned();
    // Round 1 is paired before the daemon starts, from the CLI.
    let r1 = dir.path().join("round1.csv");
    std::fs::write(&r1, pairings_csv(1)).unwrap();
    cli(&[
        "pairings",
        "--db",
        &db_arg,
        "--round",
        "1",
        r1.to_str().unwrap(),
    ]);

    // Each board's three games, set up again between rounds at common times.
    let opts = |seed: u64| EmulatorOptions {
        speed: SPEED,
        seed,
        time_control: Some((15 * 60_000, 10_000)),
        ..EmulatorOptions::default()
    };
    let mut games = Vec::new();
    for b in 1..=BOARDS as usize {
        let first = if b == BOARDS as usize {
            LONG_PLIES
        } else {
            PLIES
        };
        games.push([game(b, first), game(8 + b, PLIES), game(16 + b, PLIES)]);
    }
    let scripts: Vec<[_; 3]> = games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let s = |k: usize| script_pgn(&g[k], &opts(100 * i as u64 + k as u64)).unwrap();
            [s(0), s(1), s(2)]
        })
        .collect();
    // Script times from each board's body start.
    let length =
        |s: &boardscribe::emulator::BoardScript| s.events.last().unwrap().at_ms - s.body_start_ms;
    let t1 = scripts[..7].iter().map(|s| length(&s[0])).max().unwrap();
    let long = length(&scripts[7][0]);
    assert!(
        long > t1 + 12_000,
        "board 8's first game must outlast round 1's start of round 2"
    );
    let round2_at = t1 + 3_000;
    let setup2 = t1 + 8_000;
    let mut series = Vec::new();
    let mut ends2 = Vec::new();
    for (i, s) in scripts.iter().enumerate() {
        let at = if i == 7 { long + 3_000 } else { setup2 };
        let two = s[0]
            .clone()
            .followed_by(&s[1], s[0].body_start_ms + at)
            .unwrap();
        ends2.push(two.events.last().unwrap().at_ms - two.body_start_ms);
        series.push(two);
    }
    let t2 = *ends2.iter().max().unwrap();
    let round3_at = t2 + 3_000;
    let setup3 = t2 + 8_000;
    let series: Vec<_> = series
        .into_iter()
        .zip(&scripts)
        .map(|(two, s)| {
            let at = two.body_start_ms + setup3;
            two.followed_by(&s[2], at).unwrap()
        })
        .collect();
    let total = series
        .iter()
        .map(|s| s.events.last().unwrap().at_ms - s.body_start_ms)
        .max()
        .unwrap();

    // The boards, the daemon (never restarted) and its relay.
    let mut boards = Vec::new();
    let mut ports = Vec::new();
    for (i, s) in series.into_iter().enumerate() {
        let link = dir.path().join(format!("board-{}", i + 1));
        let options = PtyOptions {
            link: Some(link.clone()),
            ..PtyOptions::default()
        };
        boards.push((PtyScript::from(s), options));
        ports.push(link);
    }
    let mut fleet_of_boards = PtyFleet::spawn(boards).await.unwrap();
    let hub = Hub::new();
    let (stop, stop_rx) = watch::channel(false);
    let metrics = std::sync::Arc::new(Metrics::new());
    let changes = std::sync::Arc::new(watch::channel(0).0);
    let extras = RelayExtras {
        metrics: metrics.clone(),
        changes: Some(changes.clone()),
        ..RelayExtras::default()
    };
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let token = Token::new(TOKEN).unwrap();
    let url = daemon::start_relay_with(any, &hub, &db, Some(token), stop_rx.clone(), extras)
        .await
        .unwrap();
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    let mut fleet = daemon::Fleet::new(
        &db,
        daemon::port_boards(&ports, boardscribe::kind::BoardKind::Dgt),
        laws,
    );
    fleet.metrics = metrics;
    fleet.changes = changes;
    fleet.round = Some(RoundInfo {
        event: "Mini Open".into(),
        site: "Bishkek".into(),
        round: 1,
    });
    fleet.event.time_control = Some("15+10".into());
    let recording = tokio::spawn(daemon::record_fleet(fleet, stop_rx, Some(hub), |_, _| {}));
    let started = Instant::now();
    let client = reqwest::Client::new();

    // Round 2: paired by upload and started through the admin API, board 8 still playing.
    tokio::time::sleep_until(started + Duration::from_millis(round2_at)).await;
    let open_before = Store::open_read_only(&db).unwrap().games().unwrap();
    assert!(
        open_before
            .iter()
            .any(|g| g.board_no == Some(8) && g.round == Some(1) && g.ended_at_ms.is_none()),
        "board 8 is still playing its round-1 game when round 2 starts"
    );
    let upload = client
        .post(format!("{url}api/admin/pairings"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({ "round": 2, "format": "csv", "text": pairings_csv(2) }))
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), 200, "{}", upload.text().await.unwrap());
    let start = client
        .post(format!("{url}api/admin/rounds/2/start"))
        .bearer_auth(TOKEN)
        .body(r#"{"author":"chief arbiter"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), 200);
    let started2: Value = start.json().await.unwrap();
    assert_eq!(
        (started2["round"].as_u64(), started2["previous"].as_u64()),
        (Some(2), Some(1))
    );
    // Unauthenticated: refused.
    let refused = client
        .post(format!("{url}api/admin/rounds/3/start"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    // Round 3: paired and started from the CLI, another process on the same database.
    tokio::time::sleep_until(started + Duration::from_millis(round3_at)).await;
    let r3 = dir.path().join("round3.csv");
    std::fs::write(&r3, pairings_csv(3)).unwrap();
    cli(&[
        "pairings",
        "--db",
        &db_arg,
        "--round",
        "3",
        r3.to_str().unwrap(),
    ]);
    let said = cli(&["round", "start", "3", "--db", &db_arg, "--author", "deputy"]);
    assert!(
        said.contains("round 3 started by deputy (was round 2)"),
        "{said}"
    );

    tokio::time::timeout(
        Duration::from_millis(total + 60_000),
        fleet_of_boards.all_done(|_, _| {}),
    )
    .await
    .expect("the boards did not finish their games in time");
    tokio::time::sleep(Duration::from_millis(2_000)).await;

    // Each round served and exported with its players; every game's moves as played.
    for round in 1..=3u32 {
        let pgn = get_text(&client, &format!("{url}rounds/{round}.pgn")).await;
        let got = round_games(&pgn);
        let want: Vec<(String, String, String, usize)> = (1..=BOARDS)
            .map(|b| {
                let plies = games[b as usize - 1][round as usize - 1].moves.len();
                (
                    format!("{round}.{b}"),
                    name(round, b, true),
                    name(round, b, false),
                    plies,
                )
            })
            .collect();
        assert_eq!(got, want, "round {round}:\n{pgn}");
        assert!(pgn.contains("[BlackTitle \"GM\"]"), "{pgn}");
        assert!(
            pgn.contains(&format!("[WhiteElo \"{}\"]", 2000 + 10 + round)),
            "{pgn}"
        );

        let json = cli(&[
            "export",
            "--db",
            &db_arg,
            "--format",
            "json",
            "--round",
            &round.to_string(),
        ]);
        let v: Value = serde_json::from_str(&json).unwrap();
        let exported = v["games"].as_array().unwrap();
        assert_eq!(exported.len(), BOARDS as usize, "round {round}: {json}");
        for g in exported {
            let b = g["board_number"].as_u64().unwrap() as u32;
            assert_eq!(g["round"].as_u64(), Some(u64::from(round)));
            assert_eq!(g["white"].as_str(), Some(name(round, b, true).as_str()));
            assert_eq!(g["black"].as_str(), Some(name(round, b, false).as_str()));
            assert_eq!(g["black_player"]["title"].as_str(), Some("GM"));
            assert_eq!(g["time_control"].as_str(), Some("15+10"));
            assert_eq!(g["event"].as_str(), Some("Mini Open"));
            let played: Vec<String> = games[b as usize - 1][round as usize - 1]
                .moves
                .iter()
                .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
                .collect();
            let recorded: Vec<&str> = g["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["uci"].as_str().unwrap())
                .collect();
            assert_eq!(recorded, played, "round {round} board {b}");
        }
    }
    let current = get_text(&client, &format!("{url}round.pgn")).await;
    let round3 = get_text(&client, &format!("{url}rounds/3.pgn")).await;
    assert_eq!(current, round3, "/round.pgn is the current round's");
    assert_eq!(
        client
            .get(format!("{url}rounds/0.pgn"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    // The live boards name round 3's players; the rounds list says who started each.
    let boards: Value =
        serde_json::from_str(&get_text(&client, &format!("{url}api/boards")).await).unwrap();
    for b in boards["boards"].as_array().unwrap() {
        let n = b["number"].as_u64().unwrap() as u32;
        assert_eq!(b["white"].as_str(), Some(name(3, n, true).as_str()), "{b}");
        assert_eq!(b["round"].as_u64(), Some(3));
        assert_eq!(
            b["black_label"].as_str(),
            Some(format!("GM {}", name(3, n, false)).as_str())
        );
    }
    let rounds: Value =
        serde_json::from_str(&get_text(&client, &format!("{url}api/rounds")).await).unwrap();
    let listed: Vec<(u64, &str, u64, bool)> = rounds["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["number"].as_u64().unwrap(),
                r["started_by"].as_str().unwrap(),
                r["games"].as_u64().unwrap(),
                r["current"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (1, "config", 8, false),
            (2, "chief arbiter", 8, false),
            (3, "deputy", 8, true)
        ]
    );
    let list = cli(&["round", "list", "--db", &db_arg]);
    assert!(list.starts_with("Mini Open (Bishkek), 15+10"), "{list}");

    stop.send(true).unwrap();
    recording.await.unwrap().unwrap();
    fleet_of_boards.abort();
    check_scoresheet(&db);
    check_serve(&db, &round3).await;
}

/// `boardscribe serve --db` serves the finished database, without boards: the same round PGN,
/// and each board's last game with its result on the page.
async fn check_serve(db: &Path, round3: &str) {
    let port = crate::ports::free();
    let mut serve = Command::new(BIN)
        .args(["serve", "--db", db.to_str().unwrap(), "--http"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut served = None;
    for _ in 0..100 {
        served = crate::fleet_common::http_get(port, "/rounds/3.pgn");
        if served.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let boards = crate::fleet_common::http_get(port, "/api/boards");
    let page = crate::fleet_common::http_get(port, "/");
    serve.kill().unwrap();
    serve.wait().unwrap();
    // The daemon's PGN gives the clocks its boards showed when asked (`WhiteClock`/`BlackClock`);
    // a database served without boards gives those of each game's last move: all else is the same.
    let without_clock_tags = |text: &str| -> String {
        text.lines()
            .filter(|l| !l.starts_with("[WhiteClock ") && !l.starts_with("[BlackClock "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        served.as_deref().map(without_clock_tags),
        Some(without_clock_tags(round3))
    );
    let boards: Value = serde_json::from_str(&boards.unwrap()).unwrap();
    let boards = boards["boards"].as_array().unwrap();
    assert_eq!(boards.len(), BOARDS as usize);
    for b in boards {
        let n = b["number"].as_u64().unwrap() as u32;
        assert_eq!(b["black"].as_str(), Some(name(3, n, false).as_str()));
        assert_eq!(b["ply"].as_u64(), Some(PLIES as u64));
    }
    assert!(page.unwrap().contains(&name(3, 1, true)));
}

/// A round-2 scoresheet carries the event, round, board number, players and time control.
fn check_scoresheet(db: &Path) {
    let store = Store::open_read_only(db).unwrap();
    let g = store
        .round_games(2)
        .unwrap()
        .into_iter()
        .find(|g| g.board_no == Some(5))
        .unwrap();
    let html = cli(&[
        "export",
        "--db",
        db.to_str().unwrap(),
        "--format",
        "scoresheet",
        "--game",
        &g.id.0.to_string(),
    ]);
    for (class, value) in [
        ("event", "<bdi>Mini Open</bdi>".to_owned()),
        ("site", "<bdi>Bishkek</bdi>".to_owned()),
        ("round", "2".to_owned()),
        ("board", "5".to_owned()),
        ("time-control", "15+10".to_owned()),
        ("white", format!("<bdi>{}</bdi> (2052)", name(2, 5, true))),
        (
            "black",
            format!("<bdi>GM</bdi> <bdi>{}</bdi>", name(2, 5, false)),
        ),
    ] {
        assert!(
            html.contains(&format!("<td class=\"{class}\">{value}</td>")),
            "{class}: {value}\n{html}"
        );
    }
}
