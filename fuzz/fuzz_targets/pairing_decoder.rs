#![no_main]
//! Fuzzes the pairings files' decoder (`pairings::encoding::decode`, the daemon crate's file
//! compiled in alone: it needs only `encoding_rs` and `thiserror`, so no tokio or SQLite is
//! built with coverage). Whatever it reads gives back exactly the bytes it came from in the
//! encoding it names, a fallback encoding's text has no control character but tabs and line
//! breaks, and a refusal names the line and the byte where the bytes stop being UTF-8.

#[allow(dead_code)]
#[path = "../../src/pairings/encoding.rs"]
mod encoding;

use encoding::{DecodeError, Encoding, decode};
use libfuzzer_sys::fuzz_target;

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

fn line_at(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at].iter().filter(|&&b| b == b'\n').count()
}

fuzz_target!(|data: &[u8]| {
    let bom = encoding_rs::Encoding::for_bom(data);
    match decode(data) {
        Ok(d) => {
            let again: Vec<u8> = match d.encoding {
                Encoding::Utf8 => {
                    let body = data.strip_prefix(UTF8_BOM).unwrap_or(data);
                    assert_eq!(d.text.as_bytes(), body);
                    return;
                }
                Encoding::Utf16Le => [0xff, 0xfe]
                    .into_iter()
                    .chain(d.text.encode_utf16().flat_map(u16::to_le_bytes))
                    .collect(),
                Encoding::Utf16Be => [0xfe, 0xff]
                    .into_iter()
                    .chain(d.text.encode_utf16().flat_map(u16::to_be_bytes))
                    .collect(),
                fallback => {
                    assert!(bom.is_none() && std::str::from_utf8(data).is_err());
                    assert!(
                        d.text
                            .chars()
                            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
                    );
                    let table = match fallback {
                        Encoding::Windows1251 => encoding_rs::WINDOWS_1251,
                        _ => encoding_rs::WINDOWS_1252,
                    };
                    let (bytes, _, unmappable) = table.encode(&d.text);
                    assert!(!unmappable);
                    bytes.into_owned()
                }
            };
            assert_eq!(again, data);
        }
        Err(DecodeError::NotText { line, byte }) => {
            assert!(bom.is_none());
            let at = std::str::from_utf8(data).unwrap_err().valid_up_to();
            assert_eq!((line, byte), (line_at(data, at), data[at]));
        }
        Err(DecodeError::Malformed { line, encoding }) => {
            let (_, len) = bom.expect("only a file with a BOM is malformed");
            assert!(line <= line_at(data, data.len()), "{encoding}");
            assert!(len <= data.len());
        }
    }
});
