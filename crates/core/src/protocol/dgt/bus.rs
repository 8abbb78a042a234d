//! DGT_MSG_BUSADRES (0x90, single-board mode) and the bus-mode replies 0x83..=0x8a
//! (`id len_hi len_lo addr_hi addr_lo data.. checksum`, checksum = sum of the bytes before it
//! & 0x7f), dgt-notes 1.10 and 1.12. A bad checksum is kept as `checksum_ok: false`, not dropped:
//! the host answers it with REPEAT_CHANGES.

use nom::{Parser, bytes::complete::take, number::complete::u8 as byte};

use super::{
    BusReply, Frame, MessageId, id,
    parse::{FrameError, Mode, PResult, bus_id, run_payload, split_frame, split_frame_for},
};

fn address(p: &[u8]) -> PResult<'_, u16> {
    (byte, byte)
        .map(|(hi, lo)| (u16::from(hi) << 7) | u16::from(lo))
        .parse(p)
}

pub(crate) fn bus_address_payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, |p| address.map(Frame::BusAddress).parse(p))
}

/// The bus checksum: the sum of `bytes`, bit 7 cleared.
pub fn bus_checksum(bytes: &[u8]) -> u8 {
    (bytes.iter().fold(0u32, |acc, &b| acc + u32::from(b)) & 0x7f) as u8
}

pub(crate) fn bus_reply_payload(reply_id: u8, p: &[u8]) -> Result<Frame, FrameError> {
    let total = p.len() + 3;
    let header = [reply_id, ((total >> 7) & 0x7f) as u8, (total & 0x7f) as u8];
    let summed = &p[..p.len().saturating_sub(1)];
    let expected = (u32::from(bus_checksum(&header)) + u32::from(bus_checksum(summed))) & 0x7f;
    run_payload(p, |p| {
        let (p, address) = address(p)?;
        let (p, data) = take(p.len().saturating_sub(1)).parse(p)?;
        let (p, sum) = byte(p)?;
        Ok((
            p,
            Frame::Bus(BusReply {
                id: MessageId(reply_id),
                address,
                data: data.to_vec(),
                checksum_ok: u32::from(sum) == expected,
            }),
        ))
    })
}

/// Decodes one BUSADRES frame (single-board mode) from the start of `i`.
pub fn parse_bus_address(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::BUSADRES, Mode::Single)?;
    let frame = bus_address_payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}

/// Decodes one bus-mode reply (ids 0x83..=0x8a) from the start of `i`.
pub fn parse_bus_reply(i: &[u8]) -> PResult<'_, Frame> {
    if let Some(&b) = i.first()
        && b & 0x80 != 0
        && !(bus_id::BRD_DUMP..=bus_id::BRD_DUMP_50B).contains(&b)
    {
        return Err(nom::Err::Error(FrameError::WrongId { id: b }));
    }
    let (rest, raw) = split_frame(i, Mode::Bus)?;
    let frame = bus_reply_payload(raw.id, raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
