//! The boards of a venue: `[[board]]` entries (a port, a USB serial number, a sysfs path) and
//! `[[bus]]` chains with their boards, checked for duplicates, kinds and clock layouts.

use super::*;

pub(super) fn boards(
    raw: &[Spanned<RawBoard>],
    on_bus: &mut Vec<PendingBusBoard>,
    ck: &mut Checker<'_>,
) -> Vec<BoardConfig> {
    let mut out = Vec::new();
    // Where each number, name and locator was first used.
    let mut numbers: HashMap<u32, usize> = HashMap::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut locators: HashMap<Locator, (u32, usize)> = HashMap::new();
    for rb in raw {
        let b = rb.get_ref();
        let number_field = ck.present(&b.number, rb.span(), "number");
        let kind_field = ck.present(&b.kind, rb.span(), "kind");
        let (Some(number_field), Some(kind_field)) = (number_field, kind_field) else {
            continue;
        };
        let n = *number_field.get_ref();
        let number = match u32::try_from(n) {
            Ok(n) if n >= 1 => n,
            _ => {
                ck.at(
                    number_field.span(),
                    format!("board number {n} is not valid; valid: a whole number of 1 or more"),
                );
                continue;
            }
        };
        let repeated_number = numbers.contains_key(&number);
        if let Some(&first) = numbers.get(&number) {
            let (line, _) = line_column(ck.text, first);
            ck.at(
                number_field.span(),
                format!(
                    "board number {number} is already used at line {line}; give each board its own number"
                ),
            );
        } else {
            numbers.insert(number, number_field.span().start);
        }
        let kind = match BoardKind::from_name(kind_field.get_ref().trim()) {
            Some(k) => Some(k),
            None => {
                ck.at(
                    kind_field.span(),
                    format!(
                        "unknown board kind {:?}; valid: {}",
                        kind_field.get_ref(),
                        list(&BoardKind::ALL, BoardKind::name)
                    ),
                );
                None
            }
        };
        let name = match &b.name {
            Some(n) => ck.non_empty(n, "name", "\"Board 1 (top table)\""),
            None => Some(format!("board {number}")),
        };
        // A repeated number also repeats the default name: said once is enough.
        if let Some(name) = name.as_ref().filter(|_| !repeated_number) {
            let at = b.name.as_ref().map_or(rb.span().start, |n| n.span().start);
            if let Some(&first) = names.get(name) {
                let (line, _) = line_column(ck.text, first);
                ck.at(
                    b.name.as_ref().map_or(rb.span(), Spanned::span),
                    format!("board name {name:?} is already used at line {line}; give each board its own name"),
                );
            } else {
                names.insert(name.clone(), at);
            }
        }
        if let Some(bus) = &b.bus {
            if let Some(v) = [&b.serial, &b.symlink, &b.port]
                .into_iter()
                .flatten()
                .next()
            {
                ck.at(
                    v.span(),
                    format!(
                        "board {number} is on bus {:?} and is found through it; remove serial, symlink and port from this board",
                        bus.get_ref()
                    ),
                );
            }
            if let Some(kind) = kind.filter(|&k| k != BoardKind::Dgt) {
                ck.at(
                    kind_field.span(),
                    format!("only dgt boards can be on a bus; remove bus from this {kind} board"),
                );
            }
            let serial = match &b.bus_serial {
                None => {
                    ck.at(
                        rb.span(),
                        format!("board {number} is on a bus and needs `bus_serial`; add e.g. bus_serial = \"01025\" (the board's serial number)"),
                    );
                    None
                }
                Some(v) => match crate::bus::address_from_serial(v.get_ref()) {
                    Some(address) => Some((v.get_ref().trim().to_owned(), address, v.span())),
                    None => {
                        ck.at(
                            v.span(),
                            format!("bus_serial {:?} is not a board serial number; valid: 1 to 5 digits, not all 0, e.g. \"01025\"", v.get_ref()),
                        );
                        None
                    }
                },
            };
            if let (Some(kind), Some(name), Some((serial, address, at))) = (kind, name, serial) {
                on_bus.push(PendingBusBoard {
                    bus: bus.clone(),
                    board: BoardConfig {
                        number,
                        kind,
                        name,
                        // The bus's, once the buses are read.
                        locator: Locator::Port(PathBuf::new()),
                        clock_layout: board_clock_layout(b, kind, ck),
                    },
                    serial,
                    address,
                    at,
                });
            }
            continue;
        }
        if let Some(v) = &b.bus_serial {
            ck.at(
                v.span(),
                format!("board {number}: bus_serial is for boards on a bus; add bus = \"…\" (a [[bus]] name) or remove it"),
            );
        }
        let locator = board_locator(number, rb, ck);
        if let Some(l) = &locator {
            let span = [&b.serial, &b.symlink, &b.port]
                .into_iter()
                .flatten()
                .next()
                .map_or(rb.span(), Spanned::span);
            if let Some(&(other, first)) = locators.get(l) {
                let (line, _) = line_column(ck.text, first);
                ck.at(
                    span,
                    format!("board {number} has the same {l} as board {other} (line {line}); each board needs its own device"),
                );
            } else {
                locators.insert(l.clone(), (number, span.start));
            }
        }
        let clock_layout = match kind {
            Some(kind) => board_clock_layout(b, kind, ck),
            None => ClockLayout::default(),
        };
        if let (Some(kind), Some(name), Some(locator)) = (kind, name, locator) {
            out.push(BoardConfig {
                number,
                kind,
                name,
                locator,
                clock_layout,
            });
        }
    }
    out.sort_by_key(|b| b.number);
    out
}

/// A board's `clock_layout` (dgt boards only).
pub(super) fn board_clock_layout(
    b: &RawBoard,
    kind: BoardKind,
    ck: &mut Checker<'_>,
) -> ClockLayout {
    let Some(cl) = &b.clock_layout else {
        return ClockLayout::default();
    };
    match LAYOUTS.iter().find(|(_, s)| *s == cl.get_ref().trim()) {
        Some(&(layout, _)) if kind == BoardKind::Dgt => return layout,
        Some(_) => ck.at(
            cl.span(),
            format!("clock_layout is for dgt boards; remove it from this {kind} board"),
        ),
        None => ck.at(
            cl.span(),
            format!(
                "unknown clock_layout {:?}; valid: h17 (dgtbrd.h 2011-2017, the default), h13 (dgtbrd13.h 1998)",
                cl.get_ref()
            ),
        ),
    }
    ClockLayout::default()
}

/// The `[[bus]]` tables, each with the boards that name it.
pub(super) fn buses(
    raw: &[Spanned<RawBus>],
    on_bus: Vec<PendingBusBoard>,
    boards: &[BoardConfig],
    ck: &mut Checker<'_>,
) -> Vec<BusConfig> {
    let mut out: Vec<BusConfig> = Vec::new();
    // Where each bus name and locator was first given.
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut locators: HashMap<Locator, usize> = HashMap::new();
    for rb in raw {
        let b = rb.get_ref();
        let Some(name_field) = ck.present(&b.name, rb.span(), "name") else {
            continue;
        };
        let Some(name) = ck.non_empty(name_field, "bus name", "\"hall-a\"") else {
            continue;
        };
        if let Some(&first) = names.get(&name) {
            let (line, _) = line_column(ck.text, first);
            ck.at(
                name_field.span(),
                format!(
                    "bus name {name:?} is already used at line {line}; give each bus its own name"
                ),
            );
            continue;
        }
        names.insert(name.clone(), name_field.span().start);
        let what = format!("bus {name:?}");
        let Some(locator) = locator_from(
            &what,
            &[
                ("serial", &b.serial),
                ("symlink", &b.symlink),
                ("port", &b.port),
            ],
            rb.span(),
            ck,
        ) else {
            continue;
        };
        let at = [&b.serial, &b.symlink, &b.port]
            .into_iter()
            .flatten()
            .next()
            .map_or(rb.span(), Spanned::span);
        if let Some(&first) = locators.get(&locator) {
            let (line, _) = line_column(ck.text, first);
            ck.at(
                at.clone(),
                format!("bus {name:?} has the same {locator} as the bus at line {line}; each bus needs its own device"),
            );
        } else if let Some(board) = boards.iter().find(|x| x.locator == locator) {
            ck.at(
                at.clone(),
                format!(
                    "bus {name:?} has the same {locator} as board {}; a port is a bus or one board",
                    board.number
                ),
            );
        }
        locators.insert(locator.clone(), at.start);
        out.push(BusConfig {
            name,
            locator,
            boards: Vec::new(),
        });
    }
    for p in on_bus {
        let wanted = p.bus.get_ref().trim();
        let Some(i) = out.iter().position(|b| b.name == wanted) else {
            let valid = if out.is_empty() {
                "no [[bus]] is defined; add one with name and port".to_owned()
            } else {
                format!(
                    "valid: {}",
                    out.iter()
                        .map(|b| format!("{:?}", b.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            ck.at(
                p.bus.span(),
                format!(
                    "board {}: bus {:?} is not defined; {valid}",
                    p.board.number,
                    p.bus.get_ref()
                ),
            );
            continue;
        };
        let bus = &mut out[i];
        if let Some(other) = bus.boards.iter().find(|o| o.address == p.address) {
            ck.at(
                p.at.clone(),
                format!(
                    "board {}: bus_serial {:?} gives bus address {} like board {} on bus {:?}; each board on a bus needs its own serial",
                    p.board.number, p.serial, p.address, other.board.number, bus.name
                ),
            );
            continue;
        }
        let mut board = p.board;
        board.locator = bus.locator.clone();
        bus.boards.push(BusBoardConfig {
            board,
            serial: p.serial,
            address: p.address,
        });
    }
    for bus in &mut out {
        bus.boards.sort_by_key(|b| b.board.number);
    }
    out
}

pub(super) fn board_locator(
    number: u32,
    rb: &Spanned<RawBoard>,
    ck: &mut Checker<'_>,
) -> Option<Locator> {
    let b = rb.get_ref();
    locator_from(
        &format!("board {number}"),
        &[
            ("serial", &b.serial),
            ("symlink", &b.symlink),
            ("port", &b.port),
            ("usb_port", &b.usb_port),
        ],
        rb.span(),
        ck,
    )
}

/// The keys' names as a list to choose from: `serial, symlink or port`.
fn one_of(keys: &[(&str, &Option<Spanned<String>>)]) -> String {
    match keys {
        [rest @ .., (last, _)] if !rest.is_empty() => {
            let rest: Vec<&str> = rest.iter().map(|(k, _)| *k).collect();
            format!("{} or {last}", rest.join(", "))
        }
        _ => keys.iter().map(|(k, _)| *k).collect(),
    }
}

/// The one locator of `what` (a board, a bus) among its serial, symlink and port keys (and a
/// board's usb_port).
pub(super) fn locator_from(
    what: &str,
    keys: &[(&str, &Option<Spanned<String>>)],
    table: Range<usize>,
    ck: &mut Checker<'_>,
) -> Option<Locator> {
    let given: Vec<(&str, &Spanned<String>)> = keys
        .iter()
        .filter_map(|&(k, v)| v.as_ref().map(|v| (k, v)))
        .collect();
    match given.as_slice() {
        [] => {
            ck.at(
                table,
                format!(
                    "{what} says nowhere how to find it; give exactly one of serial = \"…\" \
                     (USB serial number), symlink = \"/dev/eboard/…\" or port = \"/dev/ttyACM0\""
                ),
            );
            None
        }
        [(key, v)] => {
            let example = match *key {
                "serial" => "\"12345\"",
                "symlink" => "\"/dev/eboard/dgt-12345\"",
                "usb_port" => "\"1-1.4\"",
                _ => "\"/dev/ttyACM0\"",
            };
            let s = ck.non_empty(v, key, example)?;
            match *key {
                "serial" => Some(Locator::Serial(s)),
                "symlink" if !s.starts_with('/') => {
                    ck.at(
                        v.span(),
                        format!("symlink {s:?} is not an absolute path; valid: e.g. \"/dev/eboard/dgt-12345\""),
                    );
                    None
                }
                "symlink" => Some(Locator::Symlink(PathBuf::from(s))),
                "usb_port" => Some(Locator::UsbPort(s)),
                _ => Some(Locator::Port(PathBuf::from(s))),
            }
        }
        [(first, _), (second, v), ..] => {
            ck.at(
                v.span(),
                format!(
                    "{what} gives both {first} and {second}; give exactly one of {}",
                    one_of(keys)
                ),
            );
            None
        }
    }
}
