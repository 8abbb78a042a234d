//! USB discovery: which serial ports and HID nodes exist, what is behind each, and which
//! configured board it is.
//!
//! Flow: [`list_ports`] reads `<sysfs>/class/tty/*/device` (only ttys with a device behind them
//! are ports) and `<sysfs>/class/hidraw/*/device` (a HID device: its `uevent`'s `HID_ID` gives
//! the vendor and product, its `report_descriptor` the usage pages of its top-level
//! collections, [`HidInfo`]), walks up from the port's device to the USB device that carries
//! `idVendor` and reads its IDs, strings and USB port path (the device's sysfs name, `1-1.4`:
//! where it is plugged in, which tells apart boards that carry no serial number) ([`UsbInfo`]);
//! [`classify`] (pure) says what the IDs and product string look like; [`configured_board`]
//! matches a port to a `[[board]]` by serial number, symlink target, port path or USB port
//! path. Pure Rust over sysfs files, no libudev; the sysfs root is a parameter so tests run on
//! a tree they build as well as on the real `/sys`.

use std::{
    fmt,
    path::{Component, Path, PathBuf},
};

/// How a configured board is found among the serial ports (a `[[board]]`'s `serial`, `symlink`
/// or `port`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Locator {
    /// The USB serial number (the `serial` attribute in sysfs).
    Serial(String),
    /// A udev symlink, e.g. `/dev/eboard/dgt-12345`, followed to its port.
    Symlink(PathBuf),
    /// A port path, e.g. `/dev/ttyACM0`.
    Port(PathBuf),
    /// Where the board is plugged in: the USB device's port path as sysfs names it, e.g.
    /// `1-1.4` (bus 1, root hub port 1, hub port 4). For boards that carry no serial number.
    UsbPort(String),
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Locator::Serial(s) => write!(f, "serial {s}"),
            Locator::Symlink(p) => write!(f, "symlink {}", p.display()),
            Locator::Port(p) => write!(f, "port {}", p.display()),
            Locator::UsbPort(p) => write!(f, "USB port {p}"),
        }
    }
}

/// What port matching reads of a board the venue expects (a `[[board]]` is one).
pub trait Expected {
    /// How its port is found.
    fn locator(&self) -> &Locator;
    /// Its board number.
    fn number(&self) -> u32;
    fn name(&self) -> &str;
    /// Which kind of board it is, as the config names it.
    fn kind_name(&self) -> String;
}

/// What the USB device behind a port says of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsbInfo {
    pub vid: u16,
    pub pid: u16,
    /// The `serial` attribute (the iSerialNumber string).
    pub serial: Option<String>,
    /// The `product` attribute (the iProduct string).
    pub product: Option<String>,
    pub manufacturer: Option<String>,
    /// The USB port path: the device's name in sysfs (`1-1.4`).
    pub port_path: String,
}

/// What a HID node's device says of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HidInfo {
    /// From `HID_ID` (`bus:vendor:product`) in the device's `uevent`.
    pub vid: u16,
    pub pid: u16,
    /// The usage page of each top-level collection of its report descriptor, in order.
    pub usage_pages: Vec<u16>,
}

impl HidInfo {
    /// Whether a top-level collection is on a vendor-defined usage page (0xFF00 to 0xFFFF,
    /// USB HID Usage Tables 3): the interface a board's own protocol is on.
    pub fn is_vendor_defined(&self) -> bool {
        self.usage_pages.iter().any(|&p| p >= 0xff00)
    }
}

/// One serial port or HID node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// The kernel name, e.g. `ttyACM0`.
    pub name: String,
    /// The device node, `/dev/<name>`.
    pub path: PathBuf,
    /// The kernel driver of the port's device (`cdc_acm`, `ftdi_sio`, `serial8250`, …).
    pub driver: Option<String>,
    /// `None` for a port that is not on USB (a UART on the mainboard).
    pub usb: Option<UsbInfo>,
    /// A HID node's (`hidraw*`) IDs and usage pages; `None` for a tty.
    pub hid: Option<HidInfo>,
}

/// What a port looks like from its USB IDs and strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Looks {
    /// A DGT board: an ID only DGT boards use, or a generic ID with a product string saying DGT.
    Dgt,
    /// A togyz korgool pit board: product string `TGZ Pit Board…`.
    Togyz,
    /// A Chessnut board's protocol interface (a HID node: its IDs and usage page 0xFF00).
    Chessnut,
    /// A generic FTDI or Microchip CDC ID that some DGT boards use, but nothing says DGT: not
    /// claimed (many other devices share these IDs).
    MaybeDgt,
    /// Nothing known.
    Other,
}

impl Looks {
    /// Short text for listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Looks::Dgt => "DGT board",
            Looks::Togyz => "TGZ board",
            Looks::Chessnut => "Chessnut board",
            Looks::MaybeDgt => "maybe DGT (generic ID, not claimed)",
            Looks::Other => "-",
        }
    }
}

impl fmt::Display for Looks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// DGT Smart Board and newer (Renesas RL78/G1C USB serial, dgt-notes 2): DGT's own use.
pub const DGT_RENESAS: (u16, u16) = (0x045b, 0x8111);
/// DGT USB board, CDC (dgt-notes 2): Microchip's generic CDC ID, shared with other devices.
pub const DGT_MICROCHIP_CDC: (u16, u16) = (0x04d8, 0x000a);
/// Older DGT USB e-board (dgt-notes 2): FTDI's generic FT232 ID, shared with many devices.
pub const DGT_FTDI: (u16, u16) = (0x0403, 0x6001);
/// How a TGZ pit board's product string starts (togyz-board.md).
pub const TGZ_PRODUCT_PREFIX: &str = "TGZ Pit Board";

/// What `usb` looks like (pure).
pub fn classify(usb: &UsbInfo) -> Looks {
    let says = |needle: &str| {
        [&usb.product, &usb.manufacturer]
            .into_iter()
            .flatten()
            .any(|s| s.to_ascii_uppercase().contains(needle))
    };
    if usb
        .product
        .as_deref()
        .is_some_and(|p| p.trim_start().starts_with(TGZ_PRODUCT_PREFIX))
    {
        return Looks::Togyz;
    }
    let id = (usb.vid, usb.pid);
    if id == DGT_RENESAS {
        Looks::Dgt
    } else if id == DGT_MICROCHIP_CDC || id == DGT_FTDI {
        if says("DGT") {
            Looks::Dgt
        } else {
            Looks::MaybeDgt
        }
    } else {
        Looks::Other
    }
}

/// What a port or HID node looks like: a tty by its USB IDs and strings ([`classify`]); a HID
/// node by its IDs and usage pages (a Chessnut board's protocol interface).
pub fn looks(port: &PortInfo) -> Looks {
    use crate::protocol::chessnut::usb::is_chessnut;
    match (&port.hid, &port.usb) {
        (Some(h), _) if h.usage_pages.iter().any(|&p| is_chessnut(h.vid, h.pid, p)) => {
            Looks::Chessnut
        }
        (Some(_), _) => Looks::Other,
        (None, Some(usb)) => classify(usb),
        (None, None) => Looks::Other,
    }
}

/// Why the ports could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{}: cannot list serial ports: {source}", path.display())]
    List {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Every tty under `sysfs` (normally `/sys`) with a device behind it, and every HID node
/// (`hidraw*`; none when the class is missing), sorted by name.
///
/// A port that vanishes while being read is left out, not an error.
pub fn list_ports(sysfs: &Path) -> Result<Vec<PortInfo>, DiscoverError> {
    let class = sysfs.join("class/tty");
    let entries = std::fs::read_dir(&class).map_err(|source| DiscoverError::List {
        path: class.clone(),
        source,
    })?;
    let root = std::fs::canonicalize(sysfs).unwrap_or_else(|_| sysfs.to_owned());
    let mut ports: Vec<PortInfo> = entries
        .flatten()
        .filter_map(|e| port_info(&root, &e.path(), &e.file_name().to_string_lossy()))
        .collect();
    if let Ok(nodes) = std::fs::read_dir(sysfs.join("class/hidraw")) {
        ports.extend(
            nodes
                .flatten()
                .filter_map(|e| hid_info(&root, &e.path(), &e.file_name().to_string_lossy())),
        );
    }
    ports.sort_by_key(|a| natural_key(&a.name));
    Ok(ports)
}

/// A HID node: its HID device's `uevent` and `report_descriptor`, and the USB device above it.
fn hid_info(root: &Path, class_entry: &Path, name: &str) -> Option<PortInfo> {
    let device = std::fs::canonicalize(class_entry.join("device")).ok()?;
    let uevent = std::fs::read_to_string(device.join("uevent")).ok()?;
    let (vid, pid) = uevent
        .lines()
        .find_map(|l| hid_id(l.strip_prefix("HID_ID=")?))?;
    let descriptor = std::fs::read(device.join("report_descriptor")).unwrap_or_default();
    Some(PortInfo {
        name: name.to_owned(),
        path: Path::new("/dev").join(name),
        driver: driver_of(&device),
        usb: usb_info(root, &device),
        hid: Some(HidInfo {
            vid,
            pid,
            usage_pages: crate::protocol::hid::application_usage_pages(&descriptor),
        }),
    })
}

/// `0003:00002D80:00008002` (bus, vendor, product in hex): the vendor and product.
fn hid_id(value: &str) -> Option<(u16, u16)> {
    let mut parts = value.trim().split(':').skip(1);
    let mut hex = || u16::from_str_radix(parts.next()?, 16).ok();
    Some((hex()?, hex()?))
}

/// `ttyACM10` after `ttyACM9`.
fn natural_key(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = name.split_at(name.len() - digits);
    (stem.to_owned(), number.parse().unwrap_or(0))
}

fn port_info(root: &Path, class_entry: &Path, name: &str) -> Option<PortInfo> {
    let device = std::fs::canonicalize(class_entry.join("device")).ok()?;
    Some(PortInfo {
        name: name.to_owned(),
        path: Path::new("/dev").join(name),
        driver: driver_of(&device),
        usb: usb_info(root, &device),
        hid: None,
    })
}

/// The kernel driver bound to `device` (`cdc_acm`, `ftdi_sio`, `hid-generic`...).
fn driver_of(device: &Path) -> Option<String> {
    std::fs::read_link(device.join("driver"))
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
}

/// Walks up from a port's device to the USB device (the first with `idVendor`), within `root`.
fn usb_info(root: &Path, device: &Path) -> Option<UsbInfo> {
    let mut dir = Some(device);
    while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
        if let Some(vid) = attr(d, "idVendor") {
            let hex = |s: String| u16::from_str_radix(&s, 16).ok();
            return Some(UsbInfo {
                vid: hex(vid)?,
                pid: attr(d, "idProduct").and_then(hex)?,
                serial: attr(d, "serial"),
                product: attr(d, "product"),
                manufacturer: attr(d, "manufacturer"),
                port_path: d
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            });
        }
        dir = d.parent();
    }
    None
}

/// A sysfs attribute, trimmed; `None` when absent or empty.
fn attr(dir: &Path, name: &str) -> Option<String> {
    let s = std::fs::read_to_string(dir.join(name)).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// Where a symlink chain ends (relative targets resolved against the link's directory, `..`
/// removed lexically), whether or not the end exists; `None` if `link` is not a symlink.
pub fn link_target(link: &Path) -> Option<PathBuf> {
    let mut at = link.to_owned();
    let mut followed = false;
    for _ in 0..16 {
        let Ok(target) = std::fs::read_link(&at) else {
            break;
        };
        followed = true;
        at = normalize(&at.parent().unwrap_or(Path::new("/")).join(target));
    }
    followed.then_some(at)
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether `port` is the device `locator` names.
pub fn locates(locator: &Locator, port: &PortInfo) -> bool {
    match locator {
        Locator::Serial(s) => port
            .usb
            .as_ref()
            .and_then(|u| u.serial.as_deref())
            .is_some_and(|serial| serial == s),
        Locator::Symlink(link) => link_target(link).is_some_and(|t| t == port.path),
        Locator::Port(p) => *p == port.path || link_target(p).is_some_and(|t| t == port.path),
        // A HID board's protocol is on its vendor-defined interface, not its keyboard or mouse.
        Locator::UsbPort(at) => {
            port.usb.as_ref().is_some_and(|u| u.port_path == *at)
                && port.hid.as_ref().is_none_or(HidInfo::is_vendor_defined)
        }
    }
}

/// The configured board that `port` is, if any.
pub fn configured_board<'a, B: Expected>(boards: &'a [B], port: &PortInfo) -> Option<&'a B> {
    boards.iter().find(|b| locates(b.locator(), port))
}

/// The port of `locator` among `ports`, or `None` while it is not plugged in.
pub fn find_port<'a>(locator: &Locator, ports: &'a [PortInfo]) -> Option<&'a PortInfo> {
    ports.iter().find(|p| locates(locator, p))
}

/// The path to open for `locator` now: a symlink or port path as given once its device node
/// exists, a serial number or USB port path through the ports of `sysfs`; `None` while the
/// board is away.
pub fn path_to_open(locator: &Locator, sysfs: &Path) -> Result<Option<PathBuf>, DiscoverError> {
    Ok(match locator {
        Locator::Symlink(p) | Locator::Port(p) => p.exists().then(|| p.clone()),
        Locator::Serial(_) | Locator::UsbPort(_) => {
            find_port(locator, &list_ports(sysfs)?).map(|p| p.path.clone())
        }
    })
}

/// The `boardscribe devices` table: every port, what it looks like, which board it is; then the
/// configured boards no port matched.
pub fn describe<B: Expected>(ports: &[PortInfo], boards: &[B]) -> String {
    let dash = |s: Option<&str>| s.unwrap_or("-").to_owned();
    let mut rows: Vec<[String; 8]> = vec![[
        "PORT".to_owned(),
        "VID:PID".to_owned(),
        "USB PORT".to_owned(),
        "SERIAL".to_owned(),
        "PRODUCT".to_owned(),
        "MANUFACTURER".to_owned(),
        "LOOKS LIKE".to_owned(),
        "BOARD".to_owned(),
    ]];
    for p in ports {
        let usb = p.usb.as_ref();
        let board = configured_board(boards, p).map_or_else(
            || "-".to_owned(),
            |b| format!("{} ({})", b.number(), b.name()),
        );
        rows.push([
            p.path.display().to_string(),
            match (usb, &p.hid) {
                (Some(u), _) => format!("{:04x}:{:04x}", u.vid, u.pid),
                (None, Some(h)) => format!("{:04x}:{:04x}", h.vid, h.pid),
                (None, None) => format!("- ({})", p.driver.as_deref().unwrap_or("no USB")),
            },
            dash(usb.map(|u| u.port_path.as_str())),
            dash(usb.and_then(|u| u.serial.as_deref())),
            dash(usb.and_then(|u| u.product.as_deref())),
            dash(usb.and_then(|u| u.manufacturer.as_deref())),
            looks(p).to_string(),
            board,
        ]);
    }
    let widths: Vec<usize> = (0..8)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    for b in boards {
        if !ports.iter().any(|p| locates(b.locator(), p)) {
            out.push_str(&format!(
                "board {} ({}, {}): not plugged in ({})\n",
                b.number(),
                b.name(),
                b.kind_name(),
                b.locator()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
