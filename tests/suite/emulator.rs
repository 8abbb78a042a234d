//! The emulator against the real PGN corpus, the real captures' clock conventions, and a real
//! pseudo-terminal.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use boardscribe::{
    device::Direction,
    emulator::{
        BoardScript, EmulatorOptions, EventKind, PgnGame, PtyEvent, PtyOptions, Style, run_pty,
        script_pgn,
    },
    game::Outcome,
};
use shakmaty::{Chess, Color, Move, Position, Role, Square};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CAPTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/captures/dgt-arnsholt"
);

fn corpus() -> Vec<PgnGame> {
    crate::corpus_common::chess_games()
}

/// DGT code of a piece, written out independently of the emulator (dgt-notes 1.5).
fn dgt_code(role: Role, color: Color) -> u8 {
    let w = match role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    if color == Color::White { w } else { w + 6 }
}

/// Board numbering (dgt-notes 1.6): 0 = a8, 63 = h1; rotated boards read `i ^ 63`.
fn index(sq: Square, rotated: bool) -> usize {
    let i = (7 - sq.rank() as usize) * 8 + sq.file() as usize;
    if rotated { i ^ 63 } else { i }
}

/// The square read at board index `i`.
fn square_of(i: u8, rotated: bool) -> Square {
    let i = if rotated { i ^ 63 } else { i };
    Square::from_coords(
        shakmaty::File::new(u32::from(i % 8)),
        shakmaty::Rank::new(7 - u32::from(i / 8)),
    )
}

fn expected_board(pos: &Chess, rotated: bool) -> [u8; 64] {
    let mut b = [0u8; 64];
    for sq in Square::ALL {
        if let Some(p) = pos.board().piece_at(sq) {
            b[index(sq, rotated)] = dgt_code(p.role, p.color);
        }
    }
    b
}

/// Splits board-to-host bytes into frames by the length in their header (dgt-notes 1.2).
fn frames(bytes: &[u8]) -> (Vec<Vec<u8>>, usize) {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 <= bytes.len() {
        assert!(
            bytes[i] & 0x80 != 0,
            "frame start without the high bit: {:02x}",
            bytes[i]
        );
        let len = (usize::from(bytes[i + 1]) << 7) | usize::from(bytes[i + 2]);
        assert!(len >= 3);
        if i + len > bytes.len() {
            break;
        }
        out.push(bytes[i..i + len].to_vec());
        i += len;
    }
    (out, i)
}

#[derive(Default)]
struct Tally {
    styles: BTreeMap<Style, usize>,
    en_passant_plies: usize,
    promotion_plies: usize,
    fast_hands_out_of_order: usize,
    gestures: usize,
}

/// Every check that a script must pass on its own.
fn check_script(game: &PgnGame, script: &BoardScript, opts: &EmulatorOptions, tally: &mut Tally) {
    let rotated = opts.rotated;
    // Times never go back.
    for w in script.events.windows(2) {
        assert!(
            w[0].at_ms <= w[1].at_ms,
            "time went back: {:?}",
            (w[0].at_ms, w[1].at_ms)
        );
    }
    // Handshake: the board dump answers `> 42` and shows the start position.
    let chunks = script.to_chunks();
    let brd = chunks
        .iter()
        .position(|c| c.1 == Direction::ToBoard && c.2 == [0x42])
        .unwrap();
    let reply = &chunks[brd + 1];
    assert_eq!(reply.1, Direction::FromBoard);
    assert_eq!(reply.2.len(), 67);
    assert_eq!(reply.2[..3], [0x86, 0x00, 0x43]);
    assert_eq!(reply.2[3..], expected_board(&game.start, rotated));

    // Replay the FIELD_UPDATEs; each ply ends on the real position after it.
    let mut board = expected_board(&game.start, rotated);
    let mut pos = game.start.clone();
    let mut ply_updates: BTreeMap<u32, Vec<(u8, u8)>> = BTreeMap::new();
    let mut last_ply = 0;
    let mut plies_done = 0usize;
    let moves = &game.moves;
    let mut clock_frames = Vec::new();
    for e in &script.events {
        let bytes = e.payload.to_bytes();
        if e.kind == EventKind::Clock {
            assert_eq!(bytes[..3], [0x8d, 0x00, 0x0a]);
            clock_frames.push((e.at_ms, bytes[3..].to_vec()));
            continue;
        }
        if e.kind != EventKind::Move && e.kind != EventKind::ResultGesture {
            continue;
        }
        assert_eq!(bytes.len(), 5);
        assert_eq!(bytes[..3], [0x8e, 0x00, 0x05]);
        let (sq, code) = (bytes[3], bytes[4]);
        assert!(sq < 64 && code <= 12);
        assert!(e.ply >= last_ply, "ply {} after ply {}", e.ply, last_ply);
        // Entering a new ply: all earlier plies are settled on their positions.
        while (plies_done as u32) + 1 < e.ply && plies_done < moves.len() {
            pos.play_unchecked(moves[plies_done]);
            plies_done += 1;
            assert_eq!(
                board,
                expected_board(&pos, rotated),
                "after ply {plies_done}"
            );
        }
        last_ply = e.ply;
        board[usize::from(sq)] = code;
        ply_updates.entry(e.ply).or_default().push((sq, code));
    }
    while plies_done < moves.len() {
        pos.play_unchecked(moves[plies_done]);
        plies_done += 1;
        if plies_done < moves.len() || script.result_gesture.is_none() {
            assert_eq!(
                board,
                expected_board(&pos, rotated),
                "after ply {plies_done}"
            );
        }
    }
    assert_eq!(script.plies.len(), moves.len());

    // The result gesture: both kings on the centre squares that encode the result.
    if let Some((wk, bk)) = script.result_gesture {
        tally.gestures += 1;
        assert_eq!(board[usize::from(wk)], 5);
        assert_eq!(board[usize::from(bk)], 11);
        assert_eq!(board.iter().filter(|&&c| c == 5).count(), 1);
        let (w, b) = (square_of(wk, rotated), square_of(bk, rotated));
        let centre = ["d4", "e4", "d5", "e5"];
        assert!(
            centre.contains(&w.to_string().as_str()) && centre.contains(&b.to_string().as_str())
        );
        match game.outcome {
            Some(Outcome::WhiteWins) => assert!(w.is_light() && b.is_light()),
            Some(Outcome::BlackWins) => assert!(w.is_dark() && b.is_dark()),
            Some(Outcome::Draw) => assert_ne!(w.is_light(), b.is_light()),
            None => panic!("gesture without a result"),
        }
    }

    // Styles that leave a mark in the stream show it.
    let mut pos = game.start.clone();
    for (info, m) in script.plies.iter().zip(moves) {
        let ups = ply_updates.get(&info.ply).cloned().unwrap_or_default();
        for s in &info.styles {
            *tally.styles.entry(*s).or_default() += 1;
        }
        if matches!(m, Move::EnPassant { .. }) {
            tally.en_passant_plies += 1;
        }
        if m.is_promotion() {
            tally.promotion_plies += 1;
        }
        let first = |want: (u8, bool)| {
            ups.iter()
                .position(|&(s, c)| s == want.0 && (c == 0) == want.1)
        };
        if info.styles.contains(&Style::FastHands) {
            let placed = first((info.to_index, false)).unwrap();
            // The last clear of the origin (a touch-and-adjust may have cleared it before).
            let cleared = ups
                .iter()
                .rposition(|&(s, c)| s == info.from_index && c == 0)
                .unwrap();
            assert!(placed < cleared, "fast hands reported in order: {ups:?}");
            tally.fast_hands_out_of_order += 1;
        }
        if info.styles.contains(&Style::CaptureOnTop) {
            // The victim's square goes straight from the victim to the mover.
            let first_on_target = ups.iter().find(|&&(s, _)| s == info.to_index).unwrap();
            assert_ne!(
                first_on_target.1, 0,
                "on-top capture showed an empty square: {ups:?}"
            );
        }
        if info.styles.contains(&Style::CaptureVictimFirst)
            || info.styles.contains(&Style::CaptureMoverFirst)
        {
            assert!(ups.iter().any(|&(s, c)| s == info.to_index && c == 0));
        }
        if info.styles.contains(&Style::PromotionPawnFirst) {
            let pawn = dgt_code(Role::Pawn, pos.turn());
            assert!(
                ups.contains(&(info.to_index, pawn)),
                "no pawn on the last rank: {ups:?}"
            );
        }
        if info.styles.contains(&Style::Slide) {
            let code = dgt_code(m.role(), pos.turn());
            let path = shakmaty::attacks::between(
                square_of(info.from_index, rotated),
                square_of(info.to_index, rotated),
            );
            let stops = ups
                .iter()
                .filter(|&&(s, c)| c == code && path.contains(square_of(s, rotated)))
                .count();
            assert!((1..=3).contains(&stops), "slide stops {stops}: {ups:?}");
        }
        if info.styles.contains(&Style::CastleKingFirst)
            || info.styles.contains(&Style::CastleRookFirst)
        {
            let king = dgt_code(Role::King, pos.turn());
            let k_at = ups
                .iter()
                .position(|&(s, c)| s == info.to_index && c == king)
                .unwrap();
            let rook = dgt_code(Role::Rook, pos.turn());
            // The rook lands between the king's origin and target.
            let r_to = (info.from_index + info.to_index) / 2;
            let r_at = ups
                .iter()
                .position(|&(s, c)| s == r_to && c == rook)
                .unwrap();
            if info.styles.contains(&Style::CastleKingFirst) {
                assert!(k_at < r_at, "{ups:?}");
            } else {
                assert!(r_at < k_at, "{ups:?}");
            }
        }
        assert_eq!(info.board_after.0.to_vec(), {
            pos.play_unchecked(*m);
            expected_board(&pos, rotated).to_vec()
        });
    }

    // The clock: only the running side's time goes down, one displayed second at a time,
    // with the statuses seen on real boards.
    if opts.clock {
        let secs = |b: &[u8]| -> i64 {
            let bcd = |x: u8| i64::from(x >> 4) * 10 + i64::from(x & 0x0f);
            i64::from(b[0] & 0x0f) * 3600 + bcd(b[1]) * 60 + bcd(b[2])
        };
        for w in clock_frames.windows(2) {
            let (a, b) = (&w[0].1, &w[1].1);
            let (ra, la, rb, lb) = (
                secs(&a[0..3]),
                secs(&a[3..6]),
                secs(&b[0..3]),
                secs(&b[3..6]),
            );
            if a[6] == b[6] && a[6] & 1 == 1 {
                match a[6] {
                    0x09 => assert!(ra == rb && la - lb == 1, "{a:02x?} {b:02x?}"),
                    0x13 => assert!(la == lb && ra - rb == 1, "{a:02x?} {b:02x?}"),
                    s => panic!("running status {s:02x}"),
                }
            }
        }
    }
}

#[test]
fn corpus_scripts_are_consistent_and_cover_every_style() {
    let games = corpus();
    assert_eq!(games.len(), 959);
    let mut tally = Tally::default();
    for seed in [1u64, 2] {
        for (i, g) in games.iter().enumerate() {
            let opts = EmulatorOptions {
                seed: seed * 10_000 + i as u64,
                rotated: seed == 2 && i % 3 == 0,
                time_control: if i % 2 == 0 {
                    Some((180_000, 2_000))
                } else {
                    None
                },
                ..EmulatorOptions::default()
            };
            let script = script_pgn(g, &opts).unwrap();
            check_script(g, &script, &opts, &mut tally);
        }
    }
    // The corpus is standard chess: Chess960 castling is seen in tests/chess960.rs.
    for s in Style::ALL
        .into_iter()
        .filter(|s| !Style::CHESS960.contains(s))
    {
        assert!(
            tally.styles.get(&s).copied().unwrap_or(0) > 0
                || (s == Style::ResultGesture && tally.gestures > 0),
            "style {s:?} never used"
        );
    }
    assert!(tally.gestures > 0);
    assert!(tally.en_passant_plies > 0, "no en passant in the corpus");
    assert!(tally.promotion_plies > 0, "no promotion in the corpus");
    assert!(tally.fast_hands_out_of_order > 0);
    let ep: usize = [
        Style::EnPassantVictimFirst,
        Style::EnPassantVictimBetween,
        Style::EnPassantVictimLast,
    ]
    .iter()
    .map(|s| tally.styles[s])
    .sum();
    assert_eq!(ep, tally.en_passant_plies);
    let promo = tally.styles[&Style::PromotionPawnFirst] + tally.styles[&Style::PromotionDirect];
    assert_eq!(promo, tally.promotion_plies);
}

#[test]
fn speeds_scale_hands_and_seeds_are_deterministic() {
    let games = corpus();
    let g = &games[0];
    let opts = EmulatorOptions {
        seed: 7,
        ..EmulatorOptions::default()
    };
    let a = script_pgn(g, &opts).unwrap();
    let b = script_pgn(g, &opts).unwrap();
    assert_eq!(a, b);
    let c = script_pgn(
        g,
        &EmulatorOptions {
            seed: 8,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_ne!(a.events, c.events);
    let blitz = script_pgn(
        g,
        &EmulatorOptions {
            speed: 0.3,
            ..opts.clone()
        },
    )
    .unwrap();
    let slow = script_pgn(
        g,
        &EmulatorOptions {
            speed: 3.0,
            ..opts.clone()
        },
    )
    .unwrap();
    let span = |s: &BoardScript| s.plies.last().unwrap().end_ms;
    assert!(span(&blitz) < span(&a) && span(&a) < span(&slow));
    let no_clock = script_pgn(
        g,
        &EmulatorOptions {
            clock: false,
            ..opts.clone()
        },
    )
    .unwrap();
    assert!(no_clock.events.iter().all(|e| e.kind != EventKind::Clock));
    assert_eq!(no_clock.initial_clock.0[6] & 0x20, 0x20, "no clock: D5 set");
    let mut scaled = a.clone();
    scaled.scale_times(0.5);
    assert_eq!(scaled.events.len(), a.events.len());
    assert!(scaled.events.last().unwrap().at_ms < a.events.last().unwrap().at_ms);
    assert!(script_pgn(g, &EmulatorOptions { speed: 0.0, ..opts }).is_err());
}

/// `(t, dir, bytes)` of a capture v1 text.
fn parse_capture(text: &str) -> Vec<(u64, char, Vec<u8>)> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.split_whitespace();
        let t = it.next().unwrap();
        let (s, ms) = t.split_once('.').unwrap();
        let t = s.parse::<u64>().unwrap() * 1000 + ms.parse::<u64>().unwrap();
        let dir = it.next().unwrap().chars().next().unwrap();
        let bytes = it.map(|h| u8::from_str_radix(h, 16).unwrap()).collect();
        out.push((t, dir, bytes));
    }
    out
}

#[test]
fn clock_statuses_and_increment_match_the_real_capture() {
    // 1.capture is a 3+2 game with white on the left.
    let real = parse_capture(&std::fs::read_to_string(format!("{CAPTURES}/1.capture")).unwrap());
    let real_status: BTreeSet<u8> = real
        .iter()
        .filter(|(_, d, b)| *d == '<' && b.first() == Some(&0x8d))
        .map(|(_, _, b)| b[9])
        .collect();
    let games = corpus();
    let opts = EmulatorOptions {
        seed: 3,
        time_control: Some((182_000, 2_000)),
        ..EmulatorOptions::default()
    };
    let script = script_pgn(&games[1], &opts).unwrap();
    let text = script.to_capture_text();
    assert!(text.starts_with("# boardscribe capture v1\n# device: dgt\n"));
    let ours = parse_capture(&text);
    assert_eq!(ours.len(), script.events.len());
    let clock: Vec<&Vec<u8>> = ours
        .iter()
        .filter(|(_, d, b)| *d == '<' && b.first() == Some(&0x8d))
        .map(|(_, _, b)| b)
        .collect();
    // Every status we send while a clock runs was seen on the real board.
    for b in &clock {
        if b[9] & 1 == 1 {
            assert!(
                real_status.contains(&b[9]),
                "status {:02x} never seen on the real board",
                b[9]
            );
        }
    }
    // The first frames are byte for byte those of the real game's start (3:02, Fischer flag).
    assert_eq!(clock[0][3..], [0x20, 0x03, 0x02, 0x20, 0x03, 0x02, 0x08]);
    assert_eq!(clock[1][3..], [0x20, 0x03, 0x02, 0x20, 0x03, 0x02, 0x09]);
    assert_eq!(clock[2][3..], [0x20, 0x03, 0x02, 0x20, 0x03, 0x01, 0x09]);
    // At white's first press the lever flips to 0x13.
    let press = clock.iter().position(|b| b[9] == 0x13).unwrap();
    assert_eq!(clock[press - 1][9], 0x09);
}

fn start_dump() -> Vec<u8> {
    let mut v = vec![0x86, 0x00, 0x43];
    v.extend(expected_board(&Chess::default(), false));
    v
}

async fn wait_event(rx: &mut tokio::sync::mpsc::UnboundedReceiver<PtyEvent>) -> PtyEvent {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("runner event in time")
        .expect("runner alive")
}

/// Reads frames until `done` says so (or 20 s pass).
async fn read_until(
    port: &mut tokio_serial::SerialStream,
    acc: &mut Vec<u8>,
    got: &mut Vec<Vec<u8>>,
    mut done: impl FnMut(&[Vec<u8>]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut buf = [0u8; 512];
    while !done(got) {
        let n = tokio::time::timeout_at(deadline, port.read(&mut buf))
            .await
            .expect("frames in time")
            .expect("read");
        assert!(n > 0);
        acc.extend_from_slice(&buf[..n]);
        let (fs, used) = frames(acc);
        acc.drain(..used);
        got.extend(fs);
    }
}

fn apply(board: &mut [u8], fs: &[Vec<u8>]) {
    for f in fs {
        if f[0] == 0x8e {
            board[usize::from(f[3])] = f[4];
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_smoke_serial_dump_and_updates() {
    let games = corpus();
    let mut game = games[0].clone();
    game.moves.truncate(8);
    game.outcome = None;
    let opts = EmulatorOptions {
        speed: 0.05,
        seed: 11,
        ..EmulatorOptions::default()
    };
    let script = script_pgn(&game, &opts).unwrap();
    let final_board = script.plies.last().unwrap().board_after.0;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let pty_opts = PtyOptions {
        linger_ms: Some(2_000),
        ..PtyOptions::default()
    };
    let runner = {
        let script = script.clone();
        tokio::spawn(async move { run_pty(&script, &pty_opts, Some(tx)).await })
    };
    let PtyEvent::Ready(path) = wait_event(&mut rx).await else {
        panic!("not ready first")
    };
    let mut port = crate::host_port::open(&path).await;
    port.write_all(&[0x45, 0x42, 0x4b]).await.unwrap();
    let (mut acc, mut got) = (Vec::new(), Vec::new());
    read_until(&mut port, &mut acc, &mut got, |fs| {
        if fs.len() < 2 {
            return false;
        }
        let mut b = fs[1][3..].to_vec();
        apply(&mut b, &fs[2..]);
        b == final_board
    })
    .await;
    assert_eq!(got[0][..3], [0x91, 0x00, 0x08]);
    assert_eq!(
        String::from_utf8(got[0][3..].to_vec()).unwrap(),
        script.serial
    );
    assert!(got[0][3..].iter().all(u8::is_ascii_digit));
    assert_eq!(got[1], start_dump());
    let updates = got.iter().filter(|f| f[0] == 0x8e).count();
    let expected: usize = script
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Move)
        .count();
    assert_eq!(updates, expected, "every field update of the script, once");
    assert!(
        got.iter().any(|f| f[0] == 0x8d),
        "clock frames in update-nice mode"
    );
    // A dump on request shows the board as it is now.
    port.write_all(&[0x42]).await.unwrap();
    let n_before = got.len();
    read_until(&mut port, &mut acc, &mut got, |fs| {
        fs[n_before..].iter().any(|f| f[0] == 0x86)
    })
    .await;
    let dump = got[n_before..].iter().find(|f| f[0] == 0x86).unwrap();
    assert_eq!(dump[3..], final_board);
    // The host closes and opens the port again: the board is still there.
    drop(port);
    let mut port = crate::host_port::open(&path).await;
    port.write_all(&[0x40, 0x42]).await.unwrap();
    let (mut acc, mut got) = (Vec::new(), Vec::new());
    read_until(&mut port, &mut acc, &mut got, |fs| {
        fs.iter().any(|f| f[0] == 0x86)
    })
    .await;
    let dump = got.iter().find(|f| f[0] == 0x86).unwrap();
    assert_eq!(dump[3..], final_board);
    drop(port);
    assert_eq!(wait_event(&mut rx).await, PtyEvent::ScriptDone);
    runner.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_unplug_mid_move_then_the_dump_is_the_board_now() {
    let games = corpus();
    let mut game = games[2].clone();
    game.moves.truncate(10);
    game.outcome = None;
    let opts = EmulatorOptions {
        speed: 0.05,
        seed: 5,
        ..EmulatorOptions::default()
    };
    let script = script_pgn(&game, &opts).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dgtboard");
    let capture = dir.path().join("emu.capture");
    let pty_opts = PtyOptions {
        link: Some(link.clone()),
        capture_out: Some(capture.clone()),
        unplug_at_ply: Some(4),
        unplug_for_ms: 300,
        linger_ms: Some(300),
        ..PtyOptions::default()
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let runner = {
        let script = script.clone();
        tokio::spawn(async move { run_pty(&script, &pty_opts, Some(tx)).await })
    };
    let PtyEvent::Ready(first_path) = wait_event(&mut rx).await else {
        panic!("not ready first")
    };
    assert_eq!(std::fs::canonicalize(&link).unwrap(), first_path);
    let mut port = crate::host_port::open(&link).await;
    port.write_all(&[0x4b, 0x42]).await.unwrap();
    let mut host_got = Vec::new();
    let mut buf = [0u8; 512];
    // Read until the board goes away (EOF or EIO on the slave).
    loop {
        match tokio::time::timeout(Duration::from_secs(20), port.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => host_got.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the board never went away"),
        }
    }
    assert_eq!(wait_event(&mut rx).await, PtyEvent::Unplugged);
    drop(port);
    let (before, _) = frames(&host_got);
    let from = script.plies[3].from_index;
    assert_eq!(
        before.last().unwrap()[..],
        [0x8e, 0x00, 0x05, from, 0x00],
        "unplugged right after the lift"
    );

    let PtyEvent::Replugged(second_path) = wait_event(&mut rx).await else {
        panic!("no replug")
    };
    assert_eq!(std::fs::canonicalize(&link).unwrap(), second_path);
    let mut port = crate::host_port::open(&link).await;
    // Idle after the replug: only a dump on request, no updates until asked.
    port.write_all(&[0x42]).await.unwrap();
    let (mut acc, mut got) = (Vec::new(), Vec::new());
    read_until(&mut port, &mut acc, &mut got, |fs| !fs.is_empty()).await;
    assert_eq!(
        got[0][0], 0x86,
        "first frame after the replug is the requested dump"
    );
    // The dump is a board the script passed through after the unplug, not the old one.
    let mut boards = Vec::new();
    let mut b = script.start_dump.0;
    let mut after_unplug = false;
    for e in &script.events {
        if e.kind == EventKind::Move {
            let bytes = e.payload.to_bytes();
            b[usize::from(bytes[3])] = bytes[4];
            if e.ply == 4 && bytes[3] == from && bytes[4] == 0 {
                after_unplug = true;
            }
            if after_unplug {
                boards.push(b);
            }
        }
    }
    let dump: [u8; 64] = got[0][3..].try_into().unwrap();
    assert!(
        boards.contains(&dump),
        "the dump is not a board of the script after the unplug"
    );
    // Then updates again, up to the final position.
    port.write_all(&[0x4b]).await.unwrap();
    let final_board = script.plies.last().unwrap().board_after.0;
    let mut board = dump;
    let mut seen = 1;
    read_until(&mut port, &mut acc, &mut got, |fs| {
        apply(&mut board, &fs[seen..]);
        seen = fs.len();
        board == final_board
    })
    .await;
    loop {
        if wait_event(&mut rx).await == PtyEvent::ScriptDone {
            break;
        }
    }
    drop(port);
    runner.await.unwrap().unwrap();

    // The capture holds what the host read on the first connection, then the unplug.
    let text = std::fs::read_to_string(&capture).unwrap();
    assert!(text.starts_with("# boardscribe capture v1\n# device: dgt\n"));
    let (first, _) = text.split_once("# unplugged\n").unwrap();
    let sent: Vec<u8> = parse_capture(first)
        .into_iter()
        .filter(|(_, d, _)| *d == '<')
        .flat_map(|(_, _, b)| b)
        .collect();
    assert_eq!(sent, host_got);
    let to_board: Vec<u8> = parse_capture(first)
        .into_iter()
        .filter(|(_, d, _)| *d == '>')
        .flat_map(|(_, _, b)| b)
        .collect();
    assert_eq!(to_board, [0x4b, 0x42]);
}

/// Reads whatever the board sends within `for_ms`, asking nothing.
async fn read_for(port: &mut tokio_serial::SerialStream, for_ms: u64) -> Vec<u8> {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(for_ms);
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while let Ok(r) = tokio::time::timeout_at(deadline, port.read(&mut buf)).await {
        match r {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    got
}

/// A USB board's bytes to a host that has gone are lost with it: a pty would keep them for the
/// next host, who would read a game's moves long after they were made (a restarted daemon took
/// them for new ones). The host closes its port mid-game, the game plays to its end, and the
/// next host hears no field update it did not live through. The next host's port is not left
/// exclusive by the one before (a USB device is released when its holder goes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_bytes_sent_while_no_host_has_the_port_are_not_read_by_the_next_host() {
    let games = corpus();
    let mut game = games[1].clone();
    game.moves.truncate(12);
    game.outcome = None;
    let opts = EmulatorOptions {
        speed: 0.05,
        seed: 3,
        ..EmulatorOptions::default()
    };
    let script = script_pgn(&game, &opts).unwrap();
    let final_board = script.plies.last().unwrap().board_after.0;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let pty_opts = PtyOptions {
        linger_ms: Some(5_000),
        ..PtyOptions::default()
    };
    let runner = {
        let script = script.clone();
        tokio::spawn(async move { run_pty(&script, &pty_opts, Some(tx)).await })
    };
    let PtyEvent::Ready(path) = wait_event(&mut rx).await else {
        panic!("not ready first")
    };
    let mut port = crate::host_port::open(&path).await;
    port.write_all(&[0x4b, 0x42]).await.unwrap();
    let (mut acc, mut got) = (Vec::new(), Vec::new());
    read_until(&mut port, &mut acc, &mut got, |fs| {
        fs.iter().any(|f| f[0] == 0x8e)
    })
    .await;
    // Gone with the first field update heard; exclusive (TIOCEXCL and flock), as the daemon is.
    drop(port);
    assert_eq!(wait_event(&mut rx).await, PtyEvent::ScriptDone);

    // The port is free once its last host has gone.
    let mut port = crate::host_port::open(&path).await;
    let (heard, _) = frames(&read_for(&mut port, 600).await);
    let stale: Vec<&Vec<u8>> = heard.iter().filter(|f| f[0] == 0x8e).collect();
    assert!(
        stale.is_empty(),
        "field updates from before this host opened the port: {stale:02x?}"
    );
    // The board is still there, as it is now.
    port.write_all(&[0x42]).await.unwrap();
    let (mut acc, mut got) = (Vec::new(), Vec::new());
    read_until(&mut port, &mut acc, &mut got, |fs| {
        fs.iter().any(|f| f[0] == 0x86)
    })
    .await;
    let dump = got.iter().find(|f| f[0] == 0x86).unwrap();
    assert_eq!(dump[3..], final_board);
    drop(port);
    runner.await.unwrap().unwrap();
}

/// A togyz korgool record given to `emulate` (the DGT chess board) is refused, naming what it
/// is, every file of the corpus: its moves (`76 98 …`) read as no chess move at all, and played
/// they would have been an empty chess game. The chess corpus still reads.
#[test]
fn a_togyz_record_given_to_the_chess_emulator_is_an_error_not_an_empty_game() {
    let dir = std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/togyz"
    ));
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pgn") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let refused = boardscribe::emulator::games_from_pgn(&text)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("togyz"), "{}: {refused}", path.display());
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["emulate", "--pgn"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", path.display());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("Variant \"togyz\" is not chess"), "{said}");
    }
    assert!(files > 0, "no togyz record in {}", dir.display());
    assert!(!corpus().is_empty());
}
