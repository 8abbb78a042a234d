//! A mixed hall through one `boardscribe run --config FILE` process: 8 DGT boards with their
//! clocks, 4 Millennium ChessLink boards, 4 Certabo boards and 4 Chessnut boards (the first
//! three kinds each on a pseudo-terminal, the Chessnut boards on Unix sockets standing in for
//! their hidraw nodes), each playing a whole corpus game in round 1. After the boards finish,
//! the round's PGN (`/round.pgn`, one file) holds every board's game exactly, clock times on
//! the DGT boards' moves only, and so does the database after SIGTERM.
//!
//! The hands play at human speed on the boards that report whole positions (what their corpus
//! tests show exact) and ten times as fast on the DGT boards; the thinking is quicker than
//! people think, as far as each kind's reports follow it exactly in the corpus (a Certabo
//! board's records, one every 350 ms, miss positions that stand for less).
//!
//! The daemon runs apart from its emulators (they are this test's tasks), so its CPU time and
//! peak memory are its own: run with `cargo test --release --test suite mixed_hall -- --nocapture`
//! to see them.

use crate::{corpus_common, fleet_common};

use std::time::{Duration, Instant};

use boardscribe::{
    emulator::{self, EmulatorOptions, PtyFleet, PtyScript},
    kind::BoardKind,
    store::Store,
};
use fleet_common::{Daemon, HallBoard, Kind};
use shakmaty::CastlingMode;

/// The hall, in board order: (kind, how many, hands' speed, thinking's speed, the longest
/// game in plies). The Certabo boards think at human speed (faster, a few corpus games in a
/// hundred lose a position between two records), so they play shorter games: the round lasts
/// a few minutes.
const HALL: [(BoardKind, usize, f64, f64, usize); 4] = [
    (BoardKind::Dgt, 8, 0.1, 0.1, 44),
    (BoardKind::ChessLink, 4, 1.0, 0.25, 44),
    (BoardKind::Certabo, 4, 1.0, 1.0, 26),
    (BoardKind::Chessnut, 4, 1.0, 0.25, 44),
];

/// The shortest game played, in plies.
const FEWEST_PLIES: usize = 20;

/// The hall's boards, numbered from 1, each with its own corpus game (the corpus's next game
/// from [`FEWEST_PLIES`] to its kind's longest that the Laws do not cut short).
fn hall() -> Vec<HallBoard> {
    let mut games: Vec<_> = corpus_common::named_chess_games()
        .into_iter()
        .filter(|(_, g)| {
            g.moves.len() >= FEWEST_PLIES
                && !g.tags.iter().any(|(k, _)| k.eq_ignore_ascii_case("FEN"))
                && !fleet_common::cut_by_the_laws(g)
        })
        .collect();
    let mut out = Vec::new();
    for (kind, count, speed, think, longest) in HALL {
        for _ in 0..count {
            let at = games
                .iter()
                .position(|(_, g)| g.moves.len() <= longest)
                .expect("enough corpus games");
            let (source, game) = games.remove(at);
            let i = out.len();
            let opts = EmulatorOptions {
                speed,
                think_speed: Some(think),
                seed: 3_500 + i as u64,
                rotated: i % 2 == 1,
                clock: kind.reports_clock(),
                time_control: kind.reports_clock().then_some((15 * 60_000, 10_000)),
                result_gesture: false,
                ..EmulatorOptions::default()
            };
            let hands = emulator::script_pgn(&game, &opts).unwrap();
            let script = PtyScript::chess_hands(kind, hands).unwrap();
            out.push(HallBoard {
                number: i as u32 + 1,
                name: format!("{kind}-{}", i + 1),
                kind,
                moves: game
                    .moves
                    .iter()
                    .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                    .collect(),
                result: "*",
                script,
                source,
            });
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hall_of_four_vendors_records_every_game_exactly_on_one_round_pgn() {
    let _alone = fleet_common::ONE_ROUND_AT_A_TIME.lock().await;
    let hall = hall();
    let longest = hall.iter().map(|b| b.length_ms()).max().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let entries = fleet_common::hall_entries(dir.path(), &hall);
    let db = dir.path().join("hall.db");
    let http = crate::ports::free();
    let config = dir.path().join("boardscribe.toml");
    std::fs::write(&config, fleet_common::config_text(&db, http, &entries)).unwrap();
    // The daemon first: a process started later would inherit the emulators' ptys.
    let mut daemon = Daemon::start(dir.path(), &config);
    let mut fleet = PtyFleet::spawn(hall.iter().map(|b| {
        let opts = fleet_common::pty_options(dir.path(), b, false, 0);
        (b.script.clone(), opts)
    }))
    .await
    .unwrap();
    let played = Instant::now();
    tokio::time::timeout(
        Duration::from_millis(longest + 60_000),
        fleet.all_done(|_, _| {}),
    )
    .await
    .expect("the boards did not finish their games in time");
    // Every board's last move printed (durable).
    fleet_common::wait_printed_all(&daemon, &hall, Duration::from_secs(20)).await;
    let round_secs = played.elapsed().as_secs_f64();
    let pid = daemon.pid();
    let cpu = fleet_common::cpu_secs(pid);
    let peak_kib = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);

    // The round's PGN, one file: every board's game, exactly.
    let pgn = tokio::task::block_in_place(|| fleet_common::http_get(http, "/round.pgn"))
        .expect("/round.pgn answers");
    let games = emulator::games_from_pgn(&pgn).unwrap();
    assert_eq!(games.len(), hall.len(), "{pgn}");
    let mut wrong = Vec::new();
    for b in &hall {
        let number = b.number.to_string();
        let Some(game) = games
            .iter()
            .find(|g| g.tag("Board") == Some(number.as_str()))
        else {
            wrong.push(format!("{}: no game in the round's PGN", b.name));
            continue;
        };
        let moves: Vec<String> = game
            .moves
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        if moves != b.moves {
            let first = moves.iter().zip(&b.moves).position(|(a, e)| a != e);
            wrong.push(format!(
                "{} ({}): {} of {} plies in the PGN, first difference at {:?}",
                b.name,
                b.source,
                moves.len(),
                b.moves.len(),
                first.map(|p| (p + 1, &moves[p], &b.moves[p]))
            ));
        }
    }
    assert!(wrong.is_empty(), "{}\n{pgn}", wrong.join("\n"));
    // Clock times where a clock is connected, and nowhere else.
    for block in pgn.split("[Event ").skip(1) {
        let board = block
            .lines()
            .find_map(|l| l.strip_prefix("[Board \"")?.strip_suffix("\"]"))
            .and_then(|n| n.parse::<u32>().ok())
            .expect("a Board tag");
        let b = &hall[board as usize - 1];
        assert_eq!(
            block.contains("[%clk "),
            b.kind == Kind::Dgt,
            "{}: {block}",
            b.name
        );
    }

    let status = daemon.terminate();
    assert!(status.success(), "run after SIGTERM: {status}");
    let store = Store::open_read_only(&db).unwrap();
    for b in &hall {
        let games: Vec<_> = store
            .games()
            .unwrap()
            .into_iter()
            .filter(|g| g.board_name == b.name)
            .collect();
        assert_eq!(games.len(), 1, "{}", b.name);
        assert_eq!(b.moves_of(&games[0]), b.moves, "{}", b.name);
    }
    let boards = hall.len() as f64;
    println!(
        "mixed hall: {} boards (8 DGT, 4 ChessLink, 4 Certabo, 4 Chessnut), {} plies, round \
         {round_secs:.0} s; the daemon alone: {cpu:.2} s CPU ({:.3} % of a core per board), \
         peak RSS {:.1} MiB",
        hall.len(),
        hall.iter().map(|b| b.moves.len()).sum::<usize>(),
        cpu / round_secs / boards * 100.0,
        peak_kib as f64 / 1024.0
    );
}
