//! A pairings file's bytes to text, in the encodings arbiters' programs save them in.
//!
//! Flow: a byte-order mark decides (UTF-8, or UTF-16 LE/BE as Excel's "Unicode text" writes it),
//! and the text must then be what it claims. Without one, UTF-8 when the bytes are UTF-8. Other
//! bytes are read as Windows-1251 (a Russian, Ukrainian, Kazakh, Kyrgyz or Mongolian Excel's CSV)
//! or Windows-1252 (Latin-1; older TRF writers, a Western Excel) only when the text that gives
//! is plausible ([`plausible`]); otherwise the file is refused with the line of its first byte
//! that is not UTF-8, so that no name is imported garbled.

use std::fmt;

/// The encoding a file was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8, with or without a byte-order mark.
    Utf8,
    /// UTF-16 little-endian with a byte-order mark (Excel's "Unicode text").
    Utf16Le,
    /// UTF-16 big-endian with a byte-order mark.
    Utf16Be,
    /// Windows-1251: Cyrillic.
    Windows1251,
    /// Windows-1252: Latin-1 and a few more letters.
    Windows1252,
}

impl Encoding {
    /// The name arbiters see in messages.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf16Le => "UTF-16 LE",
            Encoding::Utf16Be => "UTF-16 BE",
            Encoding::Windows1251 => "Windows-1251 (Cyrillic)",
            Encoding::Windows1252 => "Windows-1252 (Latin-1)",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A file's text and the encoding it was read in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text, without a byte-order mark.
    pub text: String,
    pub encoding: Encoding,
}

/// Why a file's bytes are not text; `line` is 1-based. Worded by the tables' `pairing` section
/// ([`DecodeError::words`]): its English is the error's `Display`.
#[derive(Debug, PartialEq, Eq)]
pub enum DecodeError {
    NotText { line: usize, byte: u8 },
    Malformed { line: usize, encoding: Encoding },
}

// `DecodeError`'s words, its Display and its Error impl are in `pairings` (this file stays free
// of the crate's other modules: the fuzz target compiles it alone).

/// The text of a pairings file, as the module doc says.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    if let Some((found, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let body = &bytes[bom..];
        let encoding = if found == encoding_rs::UTF_16LE {
            Encoding::Utf16Le
        } else if found == encoding_rs::UTF_16BE {
            Encoding::Utf16Be
        } else {
            Encoding::Utf8
        };
        return match found.decode_without_bom_handling_and_without_replacement(body) {
            Some(text) => Ok(Decoded {
                text: text.into_owned(),
                encoding,
            }),
            None => Err(DecodeError::Malformed {
                line: malformed_line(body, encoding),
                encoding,
            }),
        };
    }
    let bad = match std::str::from_utf8(bytes) {
        Ok(text) => {
            return Ok(Decoded {
                text: text.to_owned(),
                encoding: Encoding::Utf8,
            });
        }
        Err(e) => e.valid_up_to(),
    };
    for (encoding, script) in [
        (Encoding::Windows1251, Script::Cyrillic),
        (Encoding::Windows1252, Script::Latin),
    ] {
        let table = match encoding {
            Encoding::Windows1251 => encoding_rs::WINDOWS_1251,
            _ => encoding_rs::WINDOWS_1252,
        };
        let text = table.decode_without_bom_handling(bytes).0;
        if plausible(&text, script) {
            return Ok(Decoded {
                text: text.into_owned(),
                encoding,
            });
        }
    }
    Err(DecodeError::NotText {
        line: line_at(bytes, bad),
        byte: bytes.get(bad).copied().unwrap_or_default(),
    })
}

/// The 1-based line of byte `at`.
fn line_at(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The line of the first unit of `body` that is not UTF-8 or UTF-16 (a lone surrogate, half a
/// unit at the end).
fn malformed_line(body: &[u8], encoding: Encoding) -> usize {
    let units = body.chunks(2).map(|pair| match (encoding, pair) {
        (Encoding::Utf16Le, [a, b]) => Some(u16::from_le_bytes([*a, *b])),
        (Encoding::Utf16Be, [a, b]) => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    });
    if matches!(encoding, Encoding::Utf16Le | Encoding::Utf16Be) {
        let mut line = 1;
        let mut chars = char::decode_utf16(units.map_while(|u| u));
        for c in chars.by_ref() {
            match c {
                Ok('\n') => line += 1,
                Ok(_) => {}
                Err(_) => return line,
            }
        }
        return line;
    }
    let at = std::str::from_utf8(body)
        .err()
        .map_or(0, |e| e.valid_up_to());
    line_at(body, at)
}

/// The letters a fallback encoding is expected to give.
#[derive(Clone, Copy)]
enum Script {
    Cyrillic,
    Latin,
}

impl Script {
    fn has(self, c: char) -> bool {
        !c.is_ascii()
            && c.is_alphabetic()
            && match self {
                Script::Cyrillic => ('\u{400}'..='\u{4ff}').contains(&c),
                Script::Latin => c < '\u{250}',
            }
    }
}

/// Whether a capital follows a small letter in `word` (`йЧБОПЧ`: KOI8-R misread as Windows-1251,
/// whose small and capital letters are the other way round).
fn camel(word: &str) -> bool {
    word.chars()
        .zip(word.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase())
}

/// Typographic characters a name or a tournament's title may hold besides letters.
const PUNCTUATION: &str = "\u{a0}«»„“”‘’‚–—…№·°ºª´";

/// Whether `text`, read in a fallback encoding, reads as names in `script`: no control character
/// but tabs and line breaks; every other character ASCII, a letter of the script or common
/// punctuation; no word mixing ASCII letters with the script's (Cyrillic: nor a capital after a
/// small letter; Latin: a word of two letters or more with an accent has ASCII letters too, as
/// `Müller`, where `Èâàíîâ` is Cyrillic misread); and
/// at least one word showing the script (Cyrillic: two of its letters; Latin: an accented
/// letter beside ASCII ones). Random bytes, and one encoding read as the other, fail.
fn plausible(text: &str, script: Script) -> bool {
    let chars_ok = text.chars().all(|c| {
        matches!(c, '\t' | '\n' | '\r')
            || (c.is_ascii() && !c.is_ascii_control())
            || script.has(c)
            || PUNCTUATION.contains(c)
    });
    if !chars_ok {
        return false;
    }
    let mut shown = false;
    for word in text.split(|c: char| !c.is_alphabetic()) {
        let ours = word.chars().filter(|&c| script.has(c)).count();
        let ascii = word.chars().filter(char::is_ascii_alphabetic).count();
        if ours == 0 {
            continue;
        }
        match script {
            Script::Cyrillic if ascii > 0 || camel(word) => return false,
            Script::Cyrillic => shown |= ours >= 2,
            Script::Latin if ascii == 0 && ours > 1 => return false,
            Script::Latin => shown |= ascii > 0,
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(text: &str, table: &'static encoding_rs::Encoding) -> Vec<u8> {
        let (bytes, _, unmappable) = table.encode(text);
        assert!(!unmappable, "{text:?} fits {}", table.name());
        bytes.into_owned()
    }

    #[test]
    fn utf8_with_and_without_a_bom() {
        let text = "board,white,black\n1,Иванов Иван,Ким Ана\n";
        let plain = decode(text.as_bytes()).unwrap();
        assert_eq!(
            (plain.text.as_str(), plain.encoding),
            (text, Encoding::Utf8)
        );
        let bom = [b"\xef\xbb\xbf".as_slice(), text.as_bytes()].concat();
        assert_eq!(decode(&bom), Ok(plain));
        let broken = [b"\xef\xbb\xbfboard\n\xff".as_slice()].concat();
        assert_eq!(
            decode(&broken),
            Err(DecodeError::Malformed {
                line: 2,
                encoding: Encoding::Utf8
            })
        );
    }

    #[test]
    fn utf16_as_excel_saves_unicode_text() {
        let text = "board\twhite\tblack\r\n1\tӨлзий Баяр\tپژمان گلچین\r\n";
        let le: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xfe, 0xff]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        let d = decode(&le).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, Encoding::Utf16Le));
        let d = decode(&be).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, Encoding::Utf16Be));
        // A lone surrogate on line 2; half a unit at the end.
        let mut lone = le.clone();
        let at = lone.len() - 6;
        lone.splice(at..at + 2, [0x00, 0xd8]);
        assert_eq!(
            decode(&lone),
            Err(DecodeError::Malformed {
                line: 2,
                encoding: Encoding::Utf16Le
            })
        );
        let mut odd = le;
        odd.push(b'x');
        assert!(matches!(
            decode(&odd),
            Err(DecodeError::Malformed { line: 3, .. })
        ));
    }

    #[test]
    fn windows_1251_from_a_russian_excel() {
        let text =
            "board;white;black\r\n1;Иванов, Иван;Ёлкина, Юлия\r\n2;Шевченко, Ігор;«Ким» Ана\r\n";
        let bytes = encode(text, encoding_rs::WINDOWS_1251);
        assert!(std::str::from_utf8(&bytes).is_err());
        let d = decode(&bytes).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, Encoding::Windows1251));
        assert_eq!(d.encoding.to_string(), "Windows-1251 (Cyrillic)");
    }

    #[test]
    fn windows_1252_from_an_older_writer() {
        let text = "001    3 w    Chén, Li       2300\n001    4 m    Müller, Jörg   2200\n";
        let bytes = encode(text, encoding_rs::WINDOWS_1252);
        let d = decode(&bytes).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, Encoding::Windows1252));
    }

    #[test]
    fn one_encoding_is_not_read_as_the_other() {
        // Latin-1 text misread as Cyrillic would mix scripts in a word (Chйn); Cyrillic misread
        // as Latin-1 has words of accented letters only (Èâàíîâ).
        let latin = encode("1,Chén,Müller\n", encoding_rs::WINDOWS_1252);
        assert_eq!(decode(&latin).unwrap().encoding, Encoding::Windows1252);
        let cyrillic = encode("1,Иванов,Ким\n", encoding_rs::WINDOWS_1251);
        assert_eq!(decode(&cyrillic).unwrap().encoding, Encoding::Windows1251);
        // An initial alone shows neither script: refused rather than guessed.
        let initial = encode("1,\"Dupont, É.\",Martin\n", encoding_rs::WINDOWS_1252);
        assert_eq!(
            decode(&initial),
            Err(DecodeError::NotText {
                line: 1,
                byte: 0xc9
            })
        );
        // KOI8-R (another Cyrillic encoding) reads as neither.
        let koi8 = encode("board,white\n1,Иванов Иван\n", encoding_rs::KOI8_R);
        assert!(matches!(
            decode(&koi8),
            Err(DecodeError::NotText { line: 2, .. })
        ));
    }

    #[test]
    fn random_bytes_are_refused_with_their_line() {
        // Fixed "random" bytes (a xorshift), after two good lines.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let mut bytes = b"board,white,black\n1,a,b\n".to_vec();
        bytes.extend(&noise);
        let first_bad = std::str::from_utf8(&bytes).unwrap_err().valid_up_to();
        let line = 1 + bytes[..first_bad].iter().filter(|&&b| b == b'\n').count();
        assert!(line >= 3);
        let err = decode(&bytes).unwrap_err();
        assert_eq!(
            err,
            DecodeError::NotText {
                line,
                byte: bytes[first_bad]
            }
        );
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("line {line}: byte 0x")),
            "{message}"
        );
        assert!(message.contains("save it as CSV UTF-8"), "{message}");
    }
}
