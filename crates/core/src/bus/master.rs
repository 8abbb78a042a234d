//! The bus master: one command in flight on a chain of DGT boards, and what the replies mean.
//!
//! Flow: [`BusMaster::next_command`] picks the next command (a broadcast PING to discover the
//! chain, addressed PINGs to re-probe missing boards, then round-robin per board: REPEAT_CHANGES
//! after a bad checksum, a dump (SEND_BRD) on start and after any doubt, a clock (SEND_CLK) when
//! one changed or is due, SEND_FROM_START when the caller wants a board's memory after a gap,
//! SET_START_GAME when a game began on it, else SEND_CHANGES); the caller writes it and hands every reply to
//! [`BusMaster::on_reply`] and, once [`BusMaster::deadline`] passes without one,
//! [`BusMaster::on_timeout`]. Out come [`BoardInput`]s: a board joined, a good reply to fold into
//! its pipeline, a board lost after `misses_to_lose` silent commands, a memory that did not
//! come. Pure: time is an argument.

use std::collections::BTreeMap;

use crate::{
    Millis,
    protocol::dgt::{BusCommand, BusReply, Frame, bus_id},
};

/// The broadcast address: every board answers a PING to it (dgt-notes 1.12).
pub const BROADCAST: u16 = 0;

/// Milliseconds `bytes` take on the line at 9600 baud 8N1 (10 bits a byte: 1.0417 ms), rounded up.
pub fn wire_ms(bytes: usize) -> Millis {
    (bytes as u64 * 10_000).div_ceil(9_600)
}

/// The total length of the reply a command asks for, when it is fixed.
fn reply_len(cmd: BusCommand) -> usize {
    match cmd {
        BusCommand::SendBoard => 6 + 64,
        BusCommand::SendClock => 6 + 7,
        BusCommand::SendVersion => 8,
        // Updates grow with the changes; the deadline moves while their bytes arrive.
        _ => 6,
    }
}

/// The reply id a command is answered with.
fn reply_id(cmd: BusCommand) -> Option<u8> {
    Some(match cmd {
        BusCommand::SendBoard => bus_id::BRD_DUMP,
        BusCommand::SendClock => bus_id::BWTIME,
        BusCommand::SendChanges | BusCommand::RepeatChanges => bus_id::UPDATE,
        BusCommand::SendFromStart => bus_id::FROM_START,
        BusCommand::Ping => bus_id::PING,
        BusCommand::SetStartGame => bus_id::START_GAME_WRITTEN,
        BusCommand::SendVersion => bus_id::VERSION,
        BusCommand::SendBoard50B => bus_id::BRD_DUMP_50B,
        _ => return None,
    })
}

/// How the master paces the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterSettings {
    /// How long a board may take to start answering after the command has left (H17: ~80 ms).
    pub reply_timeout_ms: Millis,
    /// How long every board may take to answer a broadcast PING (H17: 1100 ms).
    pub discovery_ms: Millis,
    /// Silent commands in a row after which a board is lost.
    pub misses_to_lose: u32,
    /// A missing board (lost, or expected and never seen) gets an addressed PING this often.
    pub reprobe_every_ms: Millis,
    /// A broadcast PING looks for boards nobody expected this often (`None`: only at start).
    /// It holds the line for `discovery_ms`, a delay for every board's moves; the boards the
    /// config expects are re-probed by address, and a board nobody expected is not recorded
    /// anyway, so the default is `None` (the start and `boardscribe devices` name strangers).
    pub broadcast_every_ms: Option<Millis>,
    /// Each board's clock is read at least this often (the live clock); a clock change in the
    /// updates has it read at once.
    pub clock_every_ms: Millis,
    /// Bad checksums in a row on one board after which its changes are in doubt (a dump).
    pub bad_to_doubt: u32,
}

impl Default for MasterSettings {
    fn default() -> Self {
        MasterSettings {
            reply_timeout_ms: 80,
            discovery_ms: 1100,
            misses_to_lose: 3,
            reprobe_every_ms: 1000,
            broadcast_every_ms: None,
            clock_every_ms: 3000,
            bad_to_doubt: 3,
        }
    }
}

/// What the master tells the boards' pipelines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardInput {
    /// A board answered for the first time, or again after it was lost.
    Joined { address: u16 },
    /// A reply with a good checksum, to fold into the board's pipeline.
    Reply { address: u16, reply: BusReply },
    /// A board stopped answering.
    Lost { address: u16 },
    /// The board's memory (SEND_FROM_START) was asked for and did not come whole.
    MemoryNotRead { address: u16 },
}

/// Counters for logs, metrics and the poll-cycle measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MasterStats {
    pub commands: u64,
    pub replies: u64,
    pub timeouts: u64,
    pub bad_checksums: u64,
    /// Replies nobody asked for (another address, another id, after the deadline).
    pub unexpected: u64,
    /// Full round-robin rounds over the present boards.
    pub rounds: u64,
    /// How long the last full round took.
    pub last_round_ms: Millis,
}

/// One board on the chain, as the master knows it.
#[derive(Clone, Debug)]
struct Node {
    present: bool,
    /// Next command to it is REPEAT_CHANGES (the last update came with a bad checksum).
    repeat: bool,
    /// Its changes must be read before the dump (buffered while it was away, or at start).
    drain: bool,
    need_dump: bool,
    need_clock: bool,
    /// A lever was pressed: its clock goes before the other boards' turns.
    clock_now: bool,
    /// Its memory is wanted (SEND_FROM_START), after its changes are in.
    memory: bool,
    /// A game began on it: SET_START_GAME.
    start_tag: bool,
    last_clock: Option<Millis>,
    misses: u32,
    bad: u32,
    next_probe: Millis,
}

impl Node {
    fn missing(now: Millis) -> Node {
        Node {
            present: false,
            repeat: false,
            drain: true,
            need_dump: true,
            need_clock: true,
            clock_now: false,
            memory: false,
            start_tag: false,
            last_clock: None,
            misses: 0,
            bad: 0,
            next_probe: now,
        }
    }

    /// What the round robin asks this (present) board next. Its clock is never read on its
    /// turn but right after its changes or its dump: a clock read before changes still held by
    /// the board would show a press before the move it completes.
    fn command(&self) -> BusCommand {
        if self.repeat {
            BusCommand::RepeatChanges
        } else if self.drain {
            BusCommand::SendChanges
        } else if self.memory {
            BusCommand::SendFromStart
        } else if self.need_dump {
            BusCommand::SendBoard
        } else {
            BusCommand::SendChanges
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    cmd: BusCommand,
    address: u16,
    deadline: Millis,
}

/// The bus master of one serial port (see the module doc).
#[derive(Clone, Debug)]
pub struct BusMaster {
    settings: MasterSettings,
    nodes: BTreeMap<u16, Node>,
    inflight: Option<InFlight>,
    /// The address polled last by the round robin.
    cursor: u16,
    next_broadcast: Option<Millis>,
    round_started: Option<Millis>,
    stats: MasterStats,
}

impl BusMaster {
    /// A master expecting the boards at `expected` (others are added when they answer a ping).
    pub fn new(settings: MasterSettings, expected: impl IntoIterator<Item = u16>) -> BusMaster {
        let nodes = expected
            .into_iter()
            .filter(|&a| a != BROADCAST)
            .map(|a| (a & 0x3fff, Node::missing(0)))
            .collect();
        BusMaster {
            settings,
            nodes,
            inflight: None,
            cursor: 0,
            next_broadcast: Some(0),
            round_started: None,
            stats: MasterStats::default(),
        }
    }

    /// The next command to write, `None` while one is in flight or nothing is due
    /// ([`BusMaster::wake_at`] says when to ask again).
    pub fn next_command(&mut self, now: Millis) -> Option<(BusCommand, u16)> {
        if self.inflight.is_some() {
            return None;
        }
        let (cmd, address) = self.pick(now)?;
        let wait = if address == BROADCAST {
            self.settings.discovery_ms
        } else {
            self.settings.reply_timeout_ms + wire_ms(reply_len(cmd))
        };
        self.inflight = Some(InFlight {
            cmd,
            address,
            deadline: now + wire_ms(4) + wait,
        });
        self.stats.commands += 1;
        Some((cmd, address))
    }

    fn pick(&mut self, now: Millis) -> Option<(BusCommand, u16)> {
        if self.next_broadcast.is_some_and(|t| now >= t) {
            self.next_broadcast = self.settings.broadcast_every_ms.map(|e| now + e);
            return Some((BusCommand::Ping, BROADCAST));
        }
        let reprobe = self.settings.reprobe_every_ms;
        if let Some((&address, node)) = self
            .nodes
            .iter_mut()
            .find(|(_, n)| !n.present && now >= n.next_probe)
        {
            node.next_probe = now + reprobe;
            return Some((BusCommand::Ping, address));
        }
        // A repeat goes out at once: the board still holds what it sent.
        if let Some((&address, _)) = self.nodes.iter().find(|(_, n)| n.present && n.repeat) {
            return Some((BusCommand::RepeatChanges, address));
        }
        // So does a game's start tag: the moves of the game are logged after it.
        if let Some((&address, _)) = self
            .nodes
            .iter()
            .find(|(_, n)| n.present && n.start_tag && !n.drain)
        {
            return Some((BusCommand::SetStartGame, address));
        }
        // So does the clock after a lever press: the press completes a move.
        if let Some((&address, _)) = self
            .nodes
            .iter()
            .find(|(_, n)| n.present && n.clock_now && !n.drain)
        {
            return Some((BusCommand::SendClock, address));
        }
        let next = self
            .nodes
            .range(self.cursor.saturating_add(1)..)
            .find(|(_, n)| n.present)
            .map(|(&a, _)| a);
        let address = match next {
            Some(a) => a,
            None => {
                // Wrapped: a round is complete.
                let first = self
                    .nodes
                    .iter()
                    .find(|(_, n)| n.present)
                    .map(|(&a, _)| a)?;
                if let Some(start) = self.round_started {
                    self.stats.rounds += 1;
                    self.stats.last_round_ms = now.saturating_sub(start);
                }
                self.round_started = Some(now);
                first
            }
        };
        if self.round_started.is_none() {
            self.round_started = Some(now);
        }
        self.cursor = address;
        let node = self.nodes.get(&address)?;
        Some((node.command(), address))
    }

    /// When the caller should look again: the deadline of the command in flight, else when the
    /// next probe or broadcast is due (`None` with nothing in flight: a command is due now, or
    /// nothing ever will be).
    pub fn wake_at(&self) -> Option<Millis> {
        if let Some(f) = self.inflight {
            return Some(f.deadline);
        }
        if self.nodes.values().any(|n| n.present) {
            return None;
        }
        self.nodes
            .values()
            .map(|n| n.next_probe)
            .chain(self.next_broadcast)
            .min()
    }

    /// The deadline of the command in flight.
    pub fn deadline(&self) -> Option<Millis> {
        self.inflight.map(|f| f.deadline)
    }

    /// Bytes of a reply are arriving: the board answers, give it time to finish.
    pub fn receiving(&mut self, now: Millis) {
        let timeout = self.settings.reply_timeout_ms;
        if let Some(f) = &mut self.inflight
            && f.address != BROADCAST
        {
            f.deadline = f.deadline.max(now + timeout);
        }
    }

    /// A frame read from the line.
    pub fn on_reply(&mut self, now: Millis, frame: Frame) -> Vec<BoardInput> {
        let Frame::Bus(reply) = frame else {
            self.stats.unexpected += 1;
            return Vec::new();
        };
        let Some(f) = self.inflight else {
            self.stats.unexpected += 1;
            return Vec::new();
        };
        let addressed = f.address == reply.address
            || (f.address == BROADCAST && reply.id.0 == bus_id::PING && reply.address != BROADCAST);
        if !addressed || reply_id(f.cmd) != Some(reply.id.0) {
            self.stats.unexpected += 1;
            return Vec::new();
        }
        self.stats.replies += 1;
        let mut out = Vec::new();
        let address = reply.address;
        let node = self
            .nodes
            .entry(address)
            .or_insert_with(|| Node::missing(now));
        if !reply.checksum_ok {
            self.stats.bad_checksums += 1;
            node.bad += 1;
            if matches!(f.cmd, BusCommand::SendChanges | BusCommand::RepeatChanges) {
                node.repeat = true;
            }
            // The tag is written once the board answers at all.
            node.start_tag &= f.cmd != BusCommand::SetStartGame;
            if node.bad >= self.settings.bad_to_doubt {
                // Repeats keep failing: take what can be had again, then a dump.
                node.repeat = false;
                node.need_dump = true;
                node.bad = 0;
                if f.cmd == BusCommand::SendFromStart && std::mem::take(&mut node.memory) {
                    out.push(BoardInput::MemoryNotRead { address });
                }
            }
            if f.address != BROADCAST {
                self.inflight = None;
            }
            return out;
        }
        node.bad = 0;
        node.misses = 0;
        if !node.present {
            node.present = true;
            node.drain = true;
            node.need_dump = true;
            node.need_clock = true;
            out.push(BoardInput::Joined { address });
        }
        match f.cmd {
            BusCommand::SendBoard => {
                node.need_dump = false;
                node.clock_now |= node.need_clock;
            }
            BusCommand::SendClock => {
                node.need_clock = false;
                node.clock_now = false;
                node.last_clock = Some(now);
            }
            BusCommand::SendFromStart => node.memory = false,
            BusCommand::SetStartGame => node.start_tag = false,
            BusCommand::SendChanges | BusCommand::RepeatChanges => {
                node.repeat = false;
                let clock_due = node
                    .last_clock
                    .is_none_or(|t| now >= t + self.settings.clock_every_ms);
                // A board back from doubt is dumped first; its clock follows the dump.
                node.clock_now |= !node.need_dump && (node.need_clock || clock_due);
                node.drain = false;
            }
            _ => {}
        }
        if f.address != BROADCAST {
            self.inflight = None;
        }
        if f.cmd != BusCommand::Ping {
            out.push(BoardInput::Reply { address, reply });
        }
        out
    }

    /// The command in flight got no (whole) answer by its deadline; call once `now` is past it.
    pub fn on_timeout(&mut self, now: Millis) -> Vec<BoardInput> {
        let Some(f) = self.inflight else {
            return Vec::new();
        };
        if now < f.deadline {
            return Vec::new();
        }
        self.inflight = None;
        if f.address == BROADCAST {
            return Vec::new();
        }
        self.stats.timeouts += 1;
        let misses_to_lose = self.settings.misses_to_lose;
        let Some(node) = self.nodes.get_mut(&f.address) else {
            return Vec::new();
        };
        if !node.present {
            return Vec::new();
        }
        node.misses += 1;
        // Whatever it may have sent is gone: read its changes, then a dump to be sure.
        node.need_dump = true;
        node.drain = true;
        node.repeat = false;
        let mut out = Vec::new();
        // A board that does not answer these is not asked again (it may not keep a log).
        node.start_tag &= f.cmd != BusCommand::SetStartGame;
        let memory_missed = f.cmd == BusCommand::SendFromStart || node.misses >= misses_to_lose;
        if memory_missed && std::mem::take(&mut node.memory) {
            out.push(BoardInput::MemoryNotRead { address: f.address });
        }
        if node.misses >= misses_to_lose {
            node.present = false;
            node.misses = 0;
            node.next_probe = now + self.settings.reprobe_every_ms;
            out.push(BoardInput::Lost { address: f.address });
        }
        out
    }

    /// The board's state is in doubt (its updates did not decode): a dump next.
    pub fn doubt(&mut self, address: u16) {
        if let Some(n) = self.nodes.get_mut(&address) {
            n.need_dump = true;
        }
    }

    /// Asks for the board's memory (SEND_FROM_START) once its changes are in: whether it answers
    /// now (a board away is not asked).
    pub fn want_memory(&mut self, address: u16) -> bool {
        match self.nodes.get_mut(&address) {
            Some(n) if n.present => {
                n.memory = true;
                true
            }
            _ => false,
        }
    }

    /// A game began on the board: its start is tagged in its log (SET_START_GAME) before the
    /// other boards' turns.
    pub fn want_start_tag(&mut self, address: u16) {
        if let Some(n) = self.nodes.get_mut(&address).filter(|n| n.present) {
            n.start_tag = true;
        }
    }

    /// The board's clock changed (a lever press in its updates): read it next, before the
    /// other boards' turns.
    pub fn want_clock(&mut self, address: u16) {
        if let Some(n) = self.nodes.get_mut(&address) {
            n.need_clock = true;
            n.clock_now = true;
        }
    }

    /// Every board the master knows, with whether it answers now.
    pub fn boards(&self) -> impl Iterator<Item = (u16, bool)> + '_ {
        self.nodes.iter().map(|(&a, n)| (a, n.present))
    }

    /// Whether a command is waiting for its answer.
    pub fn in_flight(&self) -> Option<(BusCommand, u16)> {
        self.inflight.map(|f| (f.cmd, f.address))
    }

    pub fn stats(&self) -> MasterStats {
        self.stats
    }

    pub fn settings(&self) -> &MasterSettings {
        &self.settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::dgt::MessageId;

    fn reply(id: u8, address: u16, data: &[u8], ok: bool) -> Frame {
        Frame::Bus(BusReply {
            id: MessageId(id),
            address,
            data: data.to_vec(),
            checksum_ok: ok,
        })
    }

    /// A master that has discovered `addresses` (broadcast answered) at time 0..1200.
    fn discovered(addresses: &[u16]) -> (BusMaster, Millis) {
        let mut m = BusMaster::new(MasterSettings::default(), []);
        assert_eq!(m.next_command(0), Some((BusCommand::Ping, BROADCAST)));
        for &a in addresses {
            let input = m.on_reply(10, reply(bus_id::PING, a, &[], true));
            assert_eq!(input, vec![BoardInput::Joined { address: a }]);
        }
        // The broadcast holds the line for the discovery window.
        assert_eq!(m.next_command(500), None);
        let end = m.deadline().unwrap();
        assert_eq!(end, wire_ms(4) + 1100);
        assert!(m.on_timeout(end).is_empty());
        assert_eq!(m.stats().timeouts, 0);
        (m, end)
    }

    /// Answers whatever is in flight with a good reply of the right id.
    fn answer(m: &mut BusMaster, now: Millis) -> Vec<BoardInput> {
        let (cmd, address) = m.in_flight().unwrap();
        let data: Vec<u8> = match cmd {
            BusCommand::SendBoard => vec![0; 64],
            BusCommand::SendClock => vec![0; 7],
            _ => vec![],
        };
        m.on_reply(now, reply(reply_id(cmd).unwrap(), address, &data, true))
    }

    #[test]
    fn memory_after_the_changes_a_start_tag_first_and_a_memory_that_does_not_come_is_told() {
        let (mut m, mut now) = discovered(&[0x401, 0x17]);
        use BusCommand::*;
        // Wanted while its changes are still to be drained: they come first.
        assert!(m.want_memory(0x401));
        assert!(!m.want_memory(0x999), "a board the master does not know");
        let mut seen = Vec::new();
        for _ in 0..4 {
            seen.push(m.next_command(now).unwrap());
            now += 20;
            answer(&mut m, now);
        }
        assert_eq!(
            seen,
            [
                (SendChanges, 0x17),
                (SendChanges, 0x401),
                (SendBoard, 0x17),
                (SendClock, 0x17),
            ]
        );
        // Its turn: the memory before the dump.
        assert_eq!(m.next_command(now), Some((SendFromStart, 0x401)));
        now += 20;
        let input = answer(&mut m, now);
        assert!(matches!(
            &input[..],
            [BoardInput::Reply { address: 0x401, .. }]
        ));
        let mut to_it = Vec::new();
        while to_it.len() < 2 {
            let (cmd, address) = m.next_command(now).unwrap();
            if address == 0x401 {
                to_it.push(cmd);
            }
            now += 20;
            answer(&mut m, now);
        }
        assert_eq!(to_it, [SendBoard, SendClock]);
        // A game began on 0x17: its tag goes before anyone's turn.
        m.want_start_tag(0x17);
        assert_eq!(m.next_command(now), Some((SetStartGame, 0x17)));
        now += 20;
        answer(&mut m, now);
        assert_ne!(m.next_command(now).map(|c| c.0), Some(SetStartGame));
        now += 20;
        answer(&mut m, now);
        // A memory asked for that times out is told, and not asked again.
        assert!(m.want_memory(0x17));
        let mut told = Vec::new();
        for _ in 0..6 {
            let Some((cmd, address)) = m.next_command(now) else {
                break;
            };
            if cmd == SendFromStart {
                now = m.deadline().unwrap();
                told = m.on_timeout(now);
                assert_eq!(address, 0x17);
            } else {
                now += 20;
                answer(&mut m, now);
            }
        }
        assert_eq!(told, [BoardInput::MemoryNotRead { address: 0x17 }]);
        for _ in 0..6 {
            let c = m.next_command(now).unwrap();
            assert_ne!(c.0, SendFromStart);
            now += 20;
            answer(&mut m, now);
        }
    }

    #[test]
    fn wire_time_at_9600_baud() {
        assert_eq!(wire_ms(0), 0);
        assert_eq!(wire_ms(4), 5); // 4.17 ms
        assert_eq!(wire_ms(70), 73); // 72.9 ms
        assert_eq!(wire_ms(96), 100);
    }

    #[test]
    fn start_drains_then_dumps_then_reads_the_clock_then_polls_round_robin() {
        let (mut m, mut now) = discovered(&[0x401, 0x17]);
        let mut seen = Vec::new();
        for _ in 0..10 {
            let c = m.next_command(now).unwrap();
            // One command in flight.
            assert_eq!(m.next_command(now), None);
            seen.push(c);
            now += 20;
            answer(&mut m, now);
        }
        use BusCommand::*;
        assert_eq!(
            seen,
            vec![
                (SendChanges, 0x17),
                (SendChanges, 0x401),
                (SendBoard, 0x17),
                (SendClock, 0x17),
                (SendBoard, 0x401),
                (SendClock, 0x401),
                (SendChanges, 0x17),
                (SendChanges, 0x401),
                (SendChanges, 0x17),
                (SendChanges, 0x401),
            ]
        );
        assert_eq!(m.stats().rounds, 3);
        assert_eq!(m.stats().last_round_ms, 40);
    }

    #[test]
    fn a_bad_checksum_on_changes_is_repeated_at_once_and_passed_on_only_when_good() {
        let (mut m, mut now) = discovered(&[1, 2]);
        // Drain both boards, dump, clock: six commands.
        for _ in 0..6 {
            m.next_command(now).unwrap();
            now += 10;
            answer(&mut m, now);
        }
        assert_eq!(m.next_command(now), Some((BusCommand::SendChanges, 1)));
        let bad = m.on_reply(now + 10, reply(bus_id::UPDATE, 1, &[0x41, 0x1c], false));
        assert!(bad.is_empty(), "a corrupt update is not folded");
        assert_eq!(m.stats().bad_checksums, 1);
        // The repeat goes before board 2's turn.
        assert_eq!(
            m.next_command(now + 20),
            Some((BusCommand::RepeatChanges, 1))
        );
        let good = m.on_reply(now + 30, reply(bus_id::UPDATE, 1, &[0x41, 0x1c], true));
        assert_eq!(good.len(), 1);
        assert!(
            matches!(&good[0], BoardInput::Reply { address: 1, reply } if reply.data == [0x41, 0x1c])
        );
        assert_eq!(m.next_command(now + 40), Some((BusCommand::SendChanges, 2)));
    }

    #[test]
    fn repeated_bad_checksums_put_the_board_in_doubt() {
        let (mut m, mut now) = discovered(&[1]);
        for _ in 0..3 {
            m.next_command(now).unwrap();
            now += 10;
            answer(&mut m, now);
        }
        for i in 0..3 {
            let (cmd, _) = m.next_command(now).unwrap();
            assert_eq!(
                cmd,
                if i == 0 {
                    BusCommand::SendChanges
                } else {
                    BusCommand::RepeatChanges
                }
            );
            now += 10;
            m.on_reply(now, reply(bus_id::UPDATE, 1, &[], false));
        }
        assert_eq!(m.next_command(now), Some((BusCommand::SendBoard, 1)));
    }

    #[test]
    fn a_silent_board_is_lost_after_three_misses_and_rejoins_on_a_probe() {
        let (mut m, mut now) = discovered(&[1, 2]);
        for _ in 0..6 {
            m.next_command(now).unwrap();
            now += 10;
            answer(&mut m, now);
        }
        let mut lost_at = None;
        for _ in 0..8 {
            let (cmd, a) = m.next_command(now).unwrap();
            if a == 1 {
                // Board 1 is silent: wait out the deadline.
                let d = m.deadline().unwrap();
                assert_eq!(d, now + wire_ms(4) + 80 + wire_ms(6));
                assert!(m.on_timeout(d - 1).is_empty(), "not before the deadline");
                let out = m.on_timeout(d);
                now = d;
                if !out.is_empty() {
                    assert_eq!(out, vec![BoardInput::Lost { address: 1 }]);
                    lost_at = Some(now);
                }
                // After a miss, the board's changes are read before a dump.
                assert_eq!(cmd, BusCommand::SendChanges);
            } else {
                now += 10;
                answer(&mut m, now);
            }
        }
        let lost_at = lost_at.expect("lost after three misses");
        assert_eq!(m.stats().timeouts, 3);
        assert!(m.boards().any(|(a, present)| a == 1 && !present));
        // Only board 2 is polled until the re-probe is due.
        while now < lost_at + 1000 {
            assert_eq!(m.next_command(now).map(|c| c.1), Some(2));
            now += 10;
            answer(&mut m, now);
        }
        assert_eq!(m.next_command(now), Some((BusCommand::Ping, 1)));
        let back = m.on_reply(now + 8, reply(bus_id::PING, 1, &[], true));
        assert_eq!(back, vec![BoardInput::Joined { address: 1 }]);
        now += 10;
        // Back: its buffered changes first, then a dump and the clock.
        let mut to_one = Vec::new();
        while to_one.len() < 3 {
            let (cmd, a) = m.next_command(now).unwrap();
            if a == 1 {
                to_one.push(cmd);
            }
            now += 10;
            answer(&mut m, now);
        }
        assert_eq!(
            to_one,
            vec![
                BusCommand::SendChanges,
                BusCommand::SendBoard,
                BusCommand::SendClock
            ]
        );
    }

    #[test]
    fn an_expected_board_that_never_answers_is_probed_without_stopping_the_others() {
        let mut m = BusMaster::new(MasterSettings::default(), [5, 6]);
        assert_eq!(m.next_command(0), Some((BusCommand::Ping, BROADCAST)));
        m.on_reply(20, reply(bus_id::PING, 5, &[], true));
        let mut now = m.deadline().unwrap();
        m.on_timeout(now);
        // Board 6 is probed (addressed ping), then board 5 polled; 6 again a second later.
        assert_eq!(m.next_command(now), Some((BusCommand::Ping, 6)));
        now = m.deadline().unwrap();
        assert!(
            m.on_timeout(now).is_empty(),
            "a missing board is not lost twice"
        );
        let mut pings = 0;
        let end = now + 3000;
        while now < end {
            let (cmd, a) = m.next_command(now).unwrap();
            if a == 6 {
                assert_eq!(cmd, BusCommand::Ping);
                pings += 1;
                now = m.deadline().unwrap();
                m.on_timeout(now);
            } else {
                now += 15;
                answer(&mut m, now);
            }
        }
        assert_eq!(pings, 3);
    }

    #[test]
    fn a_new_board_answering_a_later_broadcast_is_added() {
        let settings = MasterSettings {
            broadcast_every_ms: Some(5000),
            ..MasterSettings::default()
        };
        let mut m = BusMaster::new(settings, [1]);
        m.next_command(0).unwrap();
        m.on_reply(5, reply(bus_id::PING, 1, &[], true));
        let mut now = m.deadline().unwrap();
        m.on_timeout(now);
        while now < 5000 {
            let (cmd, _) = m.next_command(now).unwrap();
            assert_ne!(cmd, BusCommand::Ping);
            now += 10;
            answer(&mut m, now);
        }
        assert_eq!(m.next_command(now), Some((BusCommand::Ping, BROADCAST)));
        let joined = m.on_reply(now + 40, reply(bus_id::PING, 9, &[], true));
        assert_eq!(joined, vec![BoardInput::Joined { address: 9 }]);
        // A late or stray reply is ignored, not taken for an answer.
        assert!(
            m.on_reply(now + 50, reply(bus_id::BWTIME, 1, &[0; 7], true))
                .is_empty()
        );
        assert_eq!(m.stats().unexpected, 1);
        m.on_timeout(m.deadline().unwrap());
        assert!(m.boards().any(|(a, p)| a == 9 && p));
    }

    #[test]
    fn a_reply_from_another_address_or_of_another_kind_is_not_an_answer() {
        let (mut m, now) = discovered(&[1, 2]);
        assert_eq!(m.next_command(now), Some((BusCommand::SendChanges, 1)));
        assert!(
            m.on_reply(now + 5, reply(bus_id::UPDATE, 2, &[], true))
                .is_empty()
        );
        assert!(
            m.on_reply(now + 6, reply(bus_id::BRD_DUMP, 1, &[0; 64], true))
                .is_empty()
        );
        assert_eq!(m.in_flight(), Some((BusCommand::SendChanges, 1)));
        assert_eq!(m.stats().unexpected, 2);
        // Bytes arriving push the deadline on.
        let d = m.deadline().unwrap();
        m.receiving(d - 1);
        assert_eq!(m.deadline(), Some(d - 1 + 80));
    }

    #[test]
    fn a_lever_press_has_its_clock_read_before_the_other_boards_turns() {
        let (mut m, mut now) = discovered(&[1, 2, 3]);
        for _ in 0..9 {
            m.next_command(now).unwrap();
            now += 10;
            answer(&mut m, now);
        }
        assert_eq!(m.next_command(now), Some((BusCommand::SendChanges, 1)));
        now += 10;
        answer(&mut m, now);
        m.want_clock(1);
        assert_eq!(m.next_command(now), Some((BusCommand::SendClock, 1)));
        now += 20;
        answer(&mut m, now);
        assert_eq!(m.next_command(now), Some((BusCommand::SendChanges, 2)));
    }

    #[test]
    fn clock_changes_and_doubts_are_served_on_the_next_turn() {
        let (mut m, mut now) = discovered(&[1]);
        for _ in 0..3 {
            m.next_command(now).unwrap();
            now += 10;
            answer(&mut m, now);
        }
        m.want_clock(1);
        assert_eq!(m.next_command(now), Some((BusCommand::SendClock, 1)));
        now += 10;
        answer(&mut m, now);
        m.doubt(1);
        assert_eq!(m.next_command(now), Some((BusCommand::SendBoard, 1)));
        now += 80;
        answer(&mut m, now);
        assert_eq!(m.next_command(now), Some((BusCommand::SendChanges, 1)));
        now += 10;
        answer(&mut m, now);
        // The periodic clock read, right after the board's changes.
        now += 3000;
        assert_eq!(m.next_command(now), Some((BusCommand::SendChanges, 1)));
        now += 10;
        answer(&mut m, now);
        assert_eq!(m.next_command(now), Some((BusCommand::SendClock, 1)));
    }
}
