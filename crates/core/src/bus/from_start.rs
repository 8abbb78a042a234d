//! A bus board's log since its start tag (BUS_FROM_START, dgt-notes 1.12) as the EE_MOVES log
//! the memory reader takes (dgt-notes 1.11).
//!
//! Flow: the host writes SET_START_GAME when a game begins on a board, which writes a START_TAG
//! into the board's EEPROM; after a gap, SEND_FROM_START brings the log from that tag on. The
//! board does not list the position the game began with: [`ee_moves_from_start`] lists it first,
//! as a power-up does, from the game's start and the board's orientation. A board on a bus writes
//! both clocks at a lever change (as its updates carry them); when the log's clock tokens all
//! come so, each pair becomes the one token of the player who pressed, the one whose time ran
//! since the lever changed before (presses alternate, so one such change tells them all). A log
//! that does not begin with a START_TAG (the ring written over, or no game start tagged) is read
//! as it is: its own power-up listing and BEGINPOS tags say where the pieces stood. Pure.

use crate::protocol::dgt::{ClockTime, EeTag, EeToken, EeTokenError, parse_ee_tokens, piece};

/// The EE_MOVES log (ending with EE_EOF) that `data`, a BUS_FROM_START reply's data, stands
/// for, with `start` (board numbering) on the board where the log begins at a START_TAG.
pub fn ee_moves_from_start(data: &[u8], start: &[u8; 64]) -> Result<Vec<u8>, EeTokenError> {
    let tokens = parse_ee_tokens(data)?;
    let first = tokens
        .iter()
        .position(|t| !matches!(t, EeToken::Tag(EeTag::Nop | EeTag::Nop2)));
    let mut log: Vec<EeToken> = Vec::with_capacity(tokens.len() + 40);
    if first.is_some_and(|i| tokens[i] == EeToken::Tag(EeTag::StartTag)) {
        log.push(EeToken::Tag(EeTag::PowerUp));
        for (square, &code) in start.iter().enumerate() {
            if code != piece::EMPTY {
                log.push(EeToken::Field {
                    square: square as u8,
                    piece: code,
                    quick: false,
                });
            }
        }
    }
    log.extend(one_token_a_press(&tokens));
    log.push(EeToken::Tag(EeTag::Eof));
    let mut bytes = Vec::with_capacity(data.len() + 80);
    for t in &log {
        t.encode(&mut bytes);
    }
    Ok(bytes)
}

/// `tokens` with every lever change as the presser's token alone (see the module doc); as they
/// are when some clock token stands outside a left-then-right pair (a board writing one token a
/// press).
fn one_token_a_press(tokens: &[EeToken]) -> Vec<EeToken> {
    let clock = |i: usize| match tokens.get(i) {
        Some(EeToken::Clock { left, time }) => Some((*left, *time)),
        _ => None,
    };
    // Each pair: its index, the left time, the right time.
    let mut pairs: Vec<(usize, ClockTime, ClockTime)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match (clock(i), clock(i + 1)) {
            (Some((true, l)), Some((false, r))) => {
                pairs.push((i, l, r));
                i += 2;
            }
            (Some(_), _) => return tokens.to_vec(),
            _ => i += 1,
        }
    }
    if pairs.is_empty() {
        return tokens.to_vec();
    }
    // The first pair after which exactly one clock ran tells who pressed there.
    let told = pairs.windows(2).enumerate().find_map(|(k, w)| {
        let (left_ran, right_ran) = (w[0].1 != w[1].1, w[0].2 != w[1].2);
        (left_ran != right_ran).then_some((k + 1, left_ran))
    });
    let (at, left_then) = told.unwrap_or((0, true));
    let left_pressed = |k: usize| left_then == (k.abs_diff(at) % 2 == 0);
    let mut out = Vec::with_capacity(tokens.len());
    let mut next = pairs.iter().enumerate().peekable();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(&(k, &(at_index, l, r))) = next.peek()
            && at_index == i
        {
            let left = left_pressed(k);
            out.push(EeToken::Clock {
                left,
                time: if left { l } else { r },
            });
            next.next();
            i += 2;
        } else {
            out.push(tokens[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::dgt::encode_ee_tokens;

    fn t(minutes: u8, seconds: u8) -> ClockTime {
        ClockTime {
            hours: 0,
            minutes,
            seconds,
        }
    }

    fn pair(l: ClockTime, r: ClockTime) -> [EeToken; 2] {
        [
            EeToken::Clock {
                left: true,
                time: l,
            },
            EeToken::Clock {
                left: false,
                time: r,
            },
        ]
    }

    fn field(square: u8, piece: u8) -> EeToken {
        EeToken::Field {
            square,
            piece,
            quick: false,
        }
    }

    fn bytes(tokens: &[EeToken]) -> Vec<u8> {
        let mut b = Vec::new();
        encode_ee_tokens(tokens, &mut b);
        b
    }

    #[test]
    fn a_log_from_the_start_tag_begins_with_the_start_listed_and_one_token_a_press() {
        let mut start = [piece::EMPTY; 64];
        start[4] = piece::BKING;
        start[60] = piece::WKING;
        start[52] = piece::WPAWN;
        // The left player (White) starts the clock, Black's runs... White moves e2e4 and
        // presses: White's (left) time ran, 15:00 -> 14:50; then Black's ran, 15:00 -> 14:41.
        let mut data = vec![EeToken::Tag(EeTag::StartTag)];
        data.extend(pair(t(15, 0), t(15, 0)));
        data.extend([field(52, 0), field(36, piece::WPAWN)]);
        data.extend(pair(t(14, 50), t(15, 0)));
        data.extend([field(4, 0), field(12, piece::BKING)]);
        data.extend(pair(t(14, 50), t(14, 41)));
        let log = ee_moves_from_start(&bytes(&data), &start).unwrap();
        let got = parse_ee_tokens(&log).unwrap();
        let want = vec![
            EeToken::Tag(EeTag::PowerUp),
            field(4, piece::BKING),
            field(52, piece::WPAWN),
            field(60, piece::WKING),
            EeToken::Tag(EeTag::StartTag),
            // Alternating back from the first press told: right, left, right.
            EeToken::Clock {
                left: false,
                time: t(15, 0),
            },
            field(52, 0),
            field(36, piece::WPAWN),
            EeToken::Clock {
                left: true,
                time: t(14, 50),
            },
            field(4, 0),
            field(12, piece::BKING),
            EeToken::Clock {
                left: false,
                time: t(14, 41),
            },
            EeToken::Tag(EeTag::Eof),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_log_without_a_start_tag_or_with_one_token_a_press_is_kept_as_it_is() {
        let start = [piece::WKING; 64];
        let data = vec![
            EeToken::Tag(EeTag::PowerUp),
            field(4, piece::BKING),
            EeToken::Clock {
                left: true,
                time: t(3, 0),
            },
            field(4, 0),
            EeToken::Clock {
                left: false,
                time: t(2, 59),
            },
            EeToken::Clock {
                left: true,
                time: t(2, 58),
            },
        ];
        let log = ee_moves_from_start(&bytes(&data), &start).unwrap();
        let mut want = data.clone();
        want.push(EeToken::Tag(EeTag::Eof));
        assert_eq!(parse_ee_tokens(&log).unwrap(), want);
        assert!(ee_moves_from_start(&[0x40], &start).is_err());
    }
}
