//! Raw bytes as read from a board, timestamped, coalesced into compact blocks. Pure: no SQLite.
//!
//! Flow: the pipeline pushes every read into a [`RawBuffer`]; [`RawBuffer::take`] hands back a
//! [`RawBlock`] that the store writes as one row; reading back, [`RawBlock::decode`] expands a block
//! into one [`RawChunk`] per original read, each with its own timestamp and direction.
//!
//! Block encoding, version 1: one version byte (`1`), then for each read
//! - the time delta from the previous read (the first read: from the block's `t_ms`), as a
//!   zigzag LEB128 varint (a clock that steps back stays exact),
//! - `len << 1 | dir` as a LEB128 varint (`dir` 0: from the board, 1: to the board),
//! - the `len` bytes.
//!
//! A DGT field update (5 bytes) read on its own costs 7 bytes in a block.
//!
//! A read of zero bytes never comes from a port; one from the board marks a gap: raw bytes were
//! dropped from that time on (a board's in-memory bound, [`crate::recorder::RAW_BOUND`], reached
//! while the store refused writes). See [`RawChunk::is_gap`].

use crate::{Millis, protocol::Direction};

/// The only block encoding so far.
const VERSION: u8 = 1;

/// One read (or write) of bytes, as the device saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChunk {
    pub t_ms: Millis,
    pub dir: Direction,
    pub bytes: Vec<u8>,
}

impl RawChunk {
    /// Whether this read marks a gap: raw bytes were dropped from its time on (see the module
    /// docs).
    pub fn is_gap(&self) -> bool {
        self.bytes.is_empty() && self.dir == Direction::FromBoard
    }
}

/// Why a stored block cannot be decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RawError {
    #[error("raw block encoding {0} is unknown")]
    UnknownVersion(u8),
    #[error("raw block truncated at byte {0}")]
    Truncated(usize),
    #[error("raw block varint too long at byte {0}")]
    Varint(usize),
}

/// Many reads encoded in one blob; what the store writes as one `raw_chunks` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawBlock {
    t_ms: Millis,
    dir: Direction,
    reads: usize,
    data: Vec<u8>,
}

impl RawBlock {
    /// Time of the first read.
    pub fn t_ms(&self) -> Millis {
        self.t_ms
    }

    /// Direction of the first read.
    pub fn dir(&self) -> Direction {
        self.dir
    }

    /// Number of reads in the block.
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// The encoded blob (see the module docs).
    pub fn encoded(&self) -> &[u8] {
        &self.data
    }

    /// A block holding one read.
    pub fn from_chunk(chunk: &RawChunk) -> RawBlock {
        let mut buf = RawBuffer::default();
        buf.push(chunk.t_ms, chunk.dir, &chunk.bytes);
        buf.take()
            .unwrap_or_else(|| RawBlock::empty(chunk.t_ms, chunk.dir))
    }

    fn empty(t_ms: Millis, dir: Direction) -> RawBlock {
        RawBlock {
            t_ms,
            dir,
            reads: 0,
            data: vec![VERSION],
        }
    }

    /// Expands a stored blob whose base time is `t_ms`, appending one chunk per read to `out`.
    pub fn decode(t_ms: Millis, blob: &[u8], out: &mut Vec<RawChunk>) -> Result<usize, RawError> {
        let Some((&version, _)) = blob.split_first() else {
            return Err(RawError::Truncated(0));
        };
        if version != VERSION {
            return Err(RawError::UnknownVersion(version));
        }
        let mut pos = 1;
        let mut t = t_ms;
        let mut count = 0;
        while pos < blob.len() {
            let delta = unzigzag(read_varint(blob, &mut pos)?);
            t = t.wrapping_add_signed(delta);
            let head = read_varint(blob, &mut pos)?;
            let dir = if head & 1 == 0 {
                Direction::FromBoard
            } else {
                Direction::ToBoard
            };
            let len = usize::try_from(head >> 1).map_err(|_| RawError::Truncated(pos))?;
            let end = pos
                .checked_add(len)
                .filter(|&end| end <= blob.len())
                .ok_or(RawError::Truncated(pos))?;
            out.push(RawChunk {
                t_ms: t,
                dir,
                bytes: blob[pos..end].to_vec(),
            });
            pos = end;
            count += 1;
        }
        Ok(count)
    }
}

/// Coalesces reads into a [`RawBlock`]; the pipeline flushes it when it writes a batch.
#[derive(Clone, Debug, Default)]
pub struct RawBuffer {
    first: Option<(Millis, Direction)>,
    last_ms: Millis,
    reads: usize,
    data: Vec<u8>,
}

impl RawBuffer {
    pub fn new() -> RawBuffer {
        RawBuffer::default()
    }

    /// Appends one read made at `t_ms`.
    pub fn push(&mut self, t_ms: Millis, dir: Direction, bytes: &[u8]) {
        if self.first.is_none() {
            self.first = Some((t_ms, dir));
            self.last_ms = t_ms;
            self.data.clear();
            self.data.push(VERSION);
        }
        // Reinterpreting the wrapped difference as signed gives the exact step either way.
        let delta = t_ms.wrapping_sub(self.last_ms) as i64;
        self.last_ms = t_ms;
        write_varint(&mut self.data, zigzag(delta));
        let dir_bit = match dir {
            Direction::FromBoard => 0,
            Direction::ToBoard => 1,
        };
        write_varint(&mut self.data, ((bytes.len() as u64) << 1) | dir_bit);
        self.data.extend_from_slice(bytes);
        self.reads += 1;
    }

    /// Size of the encoded block so far.
    pub fn len_bytes(&self) -> usize {
        self.data.len()
    }

    /// Number of reads buffered.
    pub fn reads(&self) -> usize {
        self.reads
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The buffered reads as one block, leaving the buffer empty; `None` if nothing was pushed.
    pub fn take(&mut self) -> Option<RawBlock> {
        let (t_ms, dir) = self.first.take()?;
        let reads = std::mem::take(&mut self.reads);
        let data = std::mem::take(&mut self.data);
        Some(RawBlock {
            t_ms,
            dir,
            reads,
            data,
        })
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, RawError> {
    let start = *pos;
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let &b = buf.get(*pos).ok_or(RawError::Truncated(*pos))?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(RawError::Varint(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips_extremes() {
        for v in [0, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn clock_stepping_back_and_huge_times_survive() {
        let reads = [
            (
                u64::MAX - 5,
                Direction::FromBoard,
                vec![0x8e, 0, 5, 0x34, 0],
            ),
            (3, Direction::ToBoard, vec![0x42]),
            (3, Direction::FromBoard, vec![]),
            (1_700_000_000_000, Direction::FromBoard, vec![0xff; 300]),
            (1_699_999_999_000, Direction::ToBoard, vec![1, 2]),
        ];
        let mut buf = RawBuffer::new();
        for (t, dir, bytes) in &reads {
            buf.push(*t, *dir, bytes);
        }
        assert_eq!(buf.reads(), reads.len());
        let block = buf.take().unwrap();
        assert!(buf.is_empty() && buf.take().is_none());
        assert_eq!(
            (block.t_ms(), block.dir()),
            (u64::MAX - 5, Direction::FromBoard)
        );
        let mut out = Vec::new();
        let n = RawBlock::decode(block.t_ms(), block.encoded(), &mut out).unwrap();
        assert_eq!(n, reads.len());
        let got: Vec<_> = out.into_iter().map(|c| (c.t_ms, c.dir, c.bytes)).collect();
        assert_eq!(got, reads);
    }

    #[test]
    fn truncated_and_unknown_blocks_are_errors() {
        let mut buf = RawBuffer::new();
        buf.push(10, Direction::FromBoard, &[1, 2, 3]);
        let block = buf.take().unwrap();
        let blob = block.encoded();
        let mut out = Vec::new();
        assert!(matches!(
            RawBlock::decode(10, &blob[..blob.len() - 1], &mut out),
            Err(RawError::Truncated(_))
        ));
        assert_eq!(
            RawBlock::decode(10, &[9], &mut out),
            Err(RawError::UnknownVersion(9))
        );
        assert_eq!(
            RawBlock::decode(10, &[], &mut out),
            Err(RawError::Truncated(0))
        );
        let mut long = vec![VERSION];
        long.extend([0xff; 11]);
        assert_eq!(
            RawBlock::decode(10, &long, &mut out),
            Err(RawError::Varint(1))
        );
    }
}
