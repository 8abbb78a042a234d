//! The togyz pit board on a real pseudo-terminal: a host sends the TGZ-1 start-up commands and
//! reads back, byte for byte, the serial number, the start dump and every frame of the script;
//! a dump asked for at the end is the board as the script left it; an unplug mid-move closes the
//! pty and a new one answers with the board as it is then.

use std::time::Duration;

use boardscribe::{
    device::Direction,
    emulator::{
        EventKind, PtyEvent, PtyOptions, TogyzEmulatorOptions, TogyzPayload, TogyzScript,
        run_togyz_pty, script_togyz, togyz_records,
    },
    game::togyz::Rules,
    protocol::{
        FrameReader,
        tgz::{Frame, PitDump, Tgz},
    },
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::mpsc::UnboundedReceiver,
};
use tokio_serial::SerialStream;

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

const DEADLINE: Duration = Duration::from_secs(60);

/// Corpus game `n` (0-based) cut to `plies`, played quickly.
fn script(n: usize, plies: usize, seed: u64) -> TogyzScript {
    let text = std::fs::read_to_string(PLAYOK).unwrap();
    let mut games = togyz_records(&text, Rules::KYRGYZ).unwrap();
    let (_, mut moves) = games.swap_remove(n);
    moves.truncate(plies);
    let opts = TogyzEmulatorOptions {
        speed: 0.05,
        seed,
        ..TogyzEmulatorOptions::default()
    };
    script_togyz(&moves, &opts).unwrap()
}

async fn next_event(rx: &mut UnboundedReceiver<PtyEvent>) -> PtyEvent {
    tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .expect("an event in time")
        .expect("the runner is alive")
}

/// Reads until `done` holds of the frames so far; every byte must decode.
async fn read_until(
    port: &mut SerialStream,
    reader: &mut FrameReader<Tgz>,
    raw: &mut Vec<u8>,
    got: &mut Vec<Frame>,
    done: impl Fn(&[Frame]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let mut buf = [0u8; 512];
    while !done(got) {
        let n = tokio::time::timeout_at(deadline, port.read(&mut buf))
            .await
            .expect("frames in time")
            .expect("read");
        assert!(n > 0, "the board hung up");
        raw.extend_from_slice(&buf[..n]);
        reader.push(&buf[..n]);
        while let Some(f) = reader.next_frame() {
            got.push(f.expect("every frame decodes"));
        }
    }
}

/// The script's board-to-host frames after the start-up, in order.
fn body_frames(script: &TogyzScript) -> Vec<Frame> {
    script
        .events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake && e.dir == Direction::FromBoard)
        .map(|e| match &e.payload {
            TogyzPayload::Frame(f) => f.clone(),
            TogyzPayload::Command(c) => panic!("a command from the board: {c:?}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_reads_the_scripts_frames_byte_exactly() {
    let script = script(3, 14, 21);
    let expected = body_frames(&script);
    assert!(
        expected
            .iter()
            .any(|f| matches!(f, Frame::PitUpdate { .. }))
            && expected.iter().any(|f| matches!(f, Frame::BwTime(_))),
        "the script has pit updates and clock frames"
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let runner = {
        let script = script.clone();
        let opts = PtyOptions {
            linger_ms: Some(1_500),
            ..PtyOptions::default()
        };
        tokio::spawn(async move { run_togyz_pty(&script, &opts, Some(tx)).await })
    };
    let PtyEvent::Ready(path) = next_event(&mut rx).await else {
        panic!("not ready first")
    };
    let mut port = crate::host_port::open(&path).await;
    // An unknown byte first: the board ignores it.
    port.write_all(&[0x20, 0x45, 0x42, 0x4b]).await.unwrap();
    let (mut reader, mut raw, mut got) = (FrameReader::with_wire(Tgz), Vec::new(), Vec::new());
    let want = expected.len() + 2;
    read_until(&mut port, &mut reader, &mut raw, &mut got, |fs| {
        fs.len() >= want
    })
    .await;
    assert_eq!(got[0], Frame::SerialNr(script.serial.clone()));
    assert_eq!(got[1], Frame::BoardDump(script.start_dump));
    assert_eq!(
        got[2..],
        expected[..],
        "every frame of the script, in order"
    );
    let wire: Vec<u8> = [
        Frame::SerialNr(script.serial.clone()),
        Frame::BoardDump(script.start_dump),
    ]
    .iter()
    .chain(&expected)
    .flat_map(Frame::to_bytes)
    .collect();
    assert_eq!(raw, wire, "byte for byte");
    assert_eq!(next_event(&mut rx).await, PtyEvent::ScriptDone);
    // A dump on request shows the board as the last ply left it; the version and trademark too.
    port.write_all(&[0x42, 0x4d, 0x47]).await.unwrap();
    let n = got.len();
    read_until(&mut port, &mut reader, &mut raw, &mut got, |fs| {
        fs.len() >= n + 3
    })
    .await;
    let last = script.plies.last().unwrap().board_after;
    assert_eq!(got[n], Frame::BoardDump(last));
    assert!(matches!(got[n + 1], Frame::Version { .. }));
    assert!(matches!(&got[n + 2], Frame::Trademark(t) if t.starts_with("TGZ Pit Board")));
    drop(port);
    runner.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unplug_mid_move_and_the_board_comes_back_idle() {
    let script = script(5, 12, 8);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("tgzboard");
    let capture = dir.path().join("emu.capture");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let runner = {
        let script = script.clone();
        let opts = PtyOptions {
            link: Some(link.clone()),
            capture_out: Some(capture.clone()),
            unplug_at_ply: Some(5),
            unplug_for_ms: 300,
            linger_ms: Some(1_000),
            ..PtyOptions::default()
        };
        tokio::spawn(async move { run_togyz_pty(&script, &opts, Some(tx)).await })
    };
    assert!(matches!(next_event(&mut rx).await, PtyEvent::Ready(_)));
    let mut port = crate::host_port::open(&link).await;
    port.write_all(&[0x42, 0x44]).await.unwrap();
    let (mut reader, mut raw, mut got) = (FrameReader::with_wire(Tgz), Vec::new(), Vec::new());
    // Board updates only (0x44): no clock frames.
    let before: Vec<Frame> = body_frames(&script)
        .into_iter()
        .filter(|f| !matches!(f, Frame::BwTime(_)))
        .collect();
    // The start pit of ply 5 reads empty, then the plug is pulled.
    let lift = script
        .events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .position(|e| e.ply == 5 && e.action == boardscribe::emulator::TogyzAction::Lift)
        .unwrap();
    let sent_before: usize = script
        .events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .take(lift + 1)
        .filter(|e| !matches!(e.payload, TogyzPayload::Frame(Frame::BwTime(_))))
        .count();
    read_until(&mut port, &mut reader, &mut raw, &mut got, |fs| {
        fs.len() > sent_before
    })
    .await;
    assert_eq!(next_event(&mut rx).await, PtyEvent::Unplugged);
    assert_eq!(got[0], Frame::BoardDump(script.start_dump));
    assert_eq!(
        got[1..],
        before[..sent_before],
        "what was sent before the unplug"
    );
    drop(port);
    let PtyEvent::Replugged(path) = next_event(&mut rx).await else {
        panic!("not replugged")
    };
    assert_eq!(std::fs::canonicalize(&link).unwrap(), path);
    assert_eq!(next_event(&mut rx).await, PtyEvent::ScriptDone);
    // Back idle: nothing unasked; a dump is the board as the script left it.
    let mut port = crate::host_port::open(&link).await;
    port.write_all(&[0x42]).await.unwrap();
    let (mut reader, mut raw, mut got) = (FrameReader::with_wire(Tgz), Vec::new(), Vec::new());
    read_until(&mut port, &mut reader, &mut raw, &mut got, |fs| {
        !fs.is_empty()
    })
    .await;
    let last: PitDump = script.plies.last().unwrap().board_after;
    assert_eq!(got, [Frame::BoardDump(last)]);
    drop(port);
    runner.await.unwrap().unwrap();
    let text = std::fs::read_to_string(&capture).unwrap();
    assert!(
        text.contains("# device: togyz"),
        "{}",
        &text[..200.min(text.len())]
    );
    assert!(text.contains("# unplugged") && text.contains("# replugged"));
}
