use std::{fs, os::unix::fs::symlink};

use super::*;
use crate::{
    config::{BoardConfig, BoardKind},
    sensor::dgt::ClockLayout,
};

fn usb(vid: u16, pid: u16, product: Option<&str>, manufacturer: Option<&str>) -> UsbInfo {
    UsbInfo {
        vid,
        pid,
        serial: Some("X1".into()),
        product: product.map(Into::into),
        manufacturer: manufacturer.map(Into::into),
        port_path: "1-1".into(),
    }
}

#[test]
fn classify_claims_dgt_ids_and_the_tgz_string_but_not_generic_ids_blindly() {
    let cases = [
        (usb(0x045b, 0x8111, None, None), Looks::Dgt),
        (usb(0x04d8, 0x000a, Some("DGT USB board"), None), Looks::Dgt),
        (
            usb(0x04d8, 0x000a, None, Some("Digital Game Technology (DGT)")),
            Looks::Dgt,
        ),
        (
            usb(
                0x04d8,
                0x000a,
                Some("CDC RS-232 Emulation Demo"),
                Some("Microchip Technology Inc."),
            ),
            Looks::MaybeDgt,
        ),
        (
            usb(0x0403, 0x6001, Some("FT232R USB UART"), Some("FTDI")),
            Looks::MaybeDgt,
        ),
        (usb(0x0403, 0x6001, Some("dgt e-board"), None), Looks::Dgt),
        (
            usb(0x0403, 0x6001, Some("TGZ Pit Board rev B"), None),
            Looks::Togyz,
        ),
        (
            usb(0x2e8a, 0x000a, Some("TGZ Pit Board"), None),
            Looks::Togyz,
        ),
        // Another vendor's CDC device, and a TGZ-like string that does not start the product.
        (usb(0x2341, 0x0043, Some("Arduino Uno"), None), Looks::Other),
        (
            usb(0x2341, 0x0043, Some("Not a TGZ Pit Board"), None),
            Looks::Other,
        ),
        (
            usb(0x0403, 0x6015, Some("FT231X USB UART"), None),
            Looks::Other,
        ),
    ];
    for (info, want) in cases {
        assert_eq!(classify(&info), want, "{info:?}");
    }
}

/// A sysfs tree as the kernel lays it out for CDC-ACM and FTDI ports.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("sys");
        fs::create_dir_all(root.join("class/tty")).unwrap();
        for d in ["cdc_acm", "ftdi_sio"] {
            fs::create_dir_all(root.join("bus/usb/drivers").join(d)).unwrap();
        }
        let hub = root.join("devices/pci0000:00/0000:00:14.0/usb1");
        write_attrs(
            &hub,
            &[
                ("idVendor", "1d6b"),
                ("idProduct", "0002"),
                ("serial", "0000:00:14.0"),
                ("product", "xHCI Host Controller"),
            ],
        );
        Tree { _dir: dir, root }
    }

    fn usb_device(&self, port: &str, attrs: &[(&str, &str)]) -> PathBuf {
        let dev = self
            .root
            .join("devices/pci0000:00/0000:00:14.0/usb1")
            .join(port);
        write_attrs(&dev, attrs);
        dev
    }

    /// `ttyACM*`: the tty's device is the interface.
    fn acm(&self, port: &str, tty: &str, attrs: &[(&str, &str)]) {
        let iface = self.usb_device(port, attrs).join(format!("{port}:1.0"));
        let tty_dir = iface.join("tty").join(tty);
        fs::create_dir_all(&tty_dir).unwrap();
        symlink(
            "../../../../../../../bus/usb/drivers/cdc_acm",
            iface.join("driver"),
        )
        .unwrap();
        symlink(format!("../../../{port}:1.0"), tty_dir.join("device")).unwrap();
        symlink(
            format!("../../devices/pci0000:00/0000:00:14.0/usb1/{port}/{port}:1.0/tty/{tty}"),
            self.root.join("class/tty").join(tty),
        )
        .unwrap();
    }

    /// `ttyUSB*`: the tty's device is the usb-serial port below the interface.
    fn ftdi(&self, port: &str, tty: &str, attrs: &[(&str, &str)]) {
        let serial_port = self
            .usb_device(port, attrs)
            .join(format!("{port}:1.0"))
            .join(tty);
        let tty_dir = serial_port.join("tty").join(tty);
        fs::create_dir_all(&tty_dir).unwrap();
        symlink(
            "../../../../../../../../bus/usb/drivers/ftdi_sio",
            serial_port.join("driver"),
        )
        .unwrap();
        symlink(format!("../../../{tty}"), tty_dir.join("device")).unwrap();
        symlink(
            format!("../../devices/pci0000:00/0000:00:14.0/usb1/{port}/{port}:1.0/{tty}/tty/{tty}"),
            self.root.join("class/tty").join(tty),
        )
        .unwrap();
    }

    /// A virtual tty: no `device` link, so not a port.
    fn virtual_tty(&self, tty: &str) {
        let d = self.root.join("devices/virtual/tty").join(tty);
        fs::create_dir_all(&d).unwrap();
        symlink(
            format!("../../devices/virtual/tty/{tty}"),
            self.root.join("class/tty").join(tty),
        )
        .unwrap();
    }

    /// A UART on the mainboard: a device, but no USB above it.
    fn uart(&self, tty: &str) {
        let dev = self.root.join("devices/platform/serial8250");
        let tty_dir = dev.join("tty").join(tty);
        fs::create_dir_all(&tty_dir).unwrap();
        fs::create_dir_all(self.root.join("bus/platform/drivers/serial8250")).unwrap();
        symlink(
            "../../../bus/platform/drivers/serial8250",
            dev.join("driver"),
        )
        .unwrap();
        symlink("../../../serial8250", tty_dir.join("device")).unwrap();
        symlink(
            format!("../../devices/platform/serial8250/tty/{tty}"),
            self.root.join("class/tty").join(tty),
        )
        .unwrap();
    }
}

fn write_attrs(dir: &Path, attrs: &[(&str, &str)]) {
    fs::create_dir_all(dir).unwrap();
    for (k, v) in attrs {
        fs::write(dir.join(k), format!("{v}\n")).unwrap();
    }
}

fn venue() -> Tree {
    let t = Tree::new();
    t.acm(
        "1-1",
        "ttyACM0",
        &[
            ("idVendor", "045b"),
            ("idProduct", "8111"),
            ("serial", "00012345"),
            ("product", "DGT Smart Board"),
            ("manufacturer", "DGT"),
        ],
    );
    t.acm(
        "1-3",
        "ttyACM1",
        &[
            ("idVendor", "2e8a"),
            ("idProduct", "000a"),
            ("serial", "TGZ0042"),
            ("product", "TGZ Pit Board rev B"),
        ],
    );
    // A Microchip CDC device without a serial number: the hub's `serial` must not be taken.
    t.acm(
        "1-4",
        "ttyACM10",
        &[
            ("idVendor", "04d8"),
            ("idProduct", "000a"),
            ("product", "CDC RS-232 Emulation Demo"),
        ],
    );
    t.ftdi(
        "1-2",
        "ttyUSB0",
        &[
            ("idVendor", "0403"),
            ("idProduct", "6001"),
            ("serial", "A50285BI"),
            ("product", "FT232R USB UART"),
            ("manufacturer", "FTDI"),
        ],
    );
    t.virtual_tty("tty0");
    t.uart("ttyS0");
    t
}

#[test]
fn ports_are_read_from_a_sysfs_tree() {
    let t = venue();
    let ports = list_ports(&t.root).unwrap();
    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["ttyACM0", "ttyACM1", "ttyACM10", "ttyS0", "ttyUSB0"]
    );
    let acm0 = &ports[0];
    assert_eq!(acm0.path, PathBuf::from("/dev/ttyACM0"));
    assert_eq!(acm0.driver.as_deref(), Some("cdc_acm"));
    assert_eq!(
        acm0.usb,
        Some(UsbInfo {
            vid: 0x045b,
            pid: 0x8111,
            serial: Some("00012345".into()),
            product: Some("DGT Smart Board".into()),
            manufacturer: Some("DGT".into()),
            port_path: "1-1".into(),
        })
    );
    assert_eq!(acm0.hid, None);
    assert_eq!(classify(ports[1].usb.as_ref().unwrap()), Looks::Togyz);
    let generic = ports[2].usb.as_ref().unwrap();
    assert_eq!(
        (generic.vid, generic.pid, generic.serial.as_deref()),
        (0x04d8, 0x000a, None)
    );
    assert_eq!(classify(generic), Looks::MaybeDgt);
    assert_eq!(ports[3].usb, None);
    assert_eq!(ports[3].driver.as_deref(), Some("serial8250"));
    let ftdi = &ports[4];
    assert_eq!(ftdi.driver.as_deref(), Some("ftdi_sio"));
    assert_eq!(
        ftdi.usb.as_ref().unwrap().serial.as_deref(),
        Some("A50285BI")
    );
}

#[test]
fn the_real_sysfs_lists_every_tty_with_a_device() {
    let ports = list_ports(Path::new("/sys")).unwrap();
    let with_device = |class: &str| {
        fs::read_dir(class).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.path().join("device").exists())
                .count()
        })
    };
    let expected = with_device("/sys/class/tty") + with_device("/sys/class/hidraw");
    assert_eq!(ports.len(), expected);
    for p in &ports {
        assert_eq!(p.path, Path::new("/dev").join(&p.name));
    }
    // A listing of the real machine renders whatever it holds.
    let table = describe::<BoardConfig>(&ports, &[]);
    assert_eq!(table.lines().count(), ports.len() + 1);
}

#[test]
fn a_missing_sysfs_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let e = list_ports(dir.path()).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}/class/tty: cannot list serial ports",
            dir.path().display()
        )),
        "{e}"
    );
}

fn board(number: u32, kind: BoardKind, locator: Locator) -> BoardConfig {
    BoardConfig {
        number,
        kind,
        name: format!("board {number}"),
        locator,
        clock_layout: ClockLayout::default(),
    }
}

#[test]
fn ports_match_boards_by_serial_symlink_or_path() {
    let t = venue();
    let ports = list_ports(&t.root).unwrap();
    let links = tempfile::tempdir().unwrap();
    // As udev makes them: eboard/tgz-TGZ0042 -> ../ttyACM1, here through a chain of two links.
    let dev = links.path().join("dev");
    fs::create_dir_all(dev.join("eboard")).unwrap();
    symlink("../ttyACM1", dev.join("eboard/tgz-TGZ0042")).unwrap();
    assert_eq!(
        link_target(&dev.join("eboard/tgz-TGZ0042")),
        Some(dev.join("ttyACM1"))
    );
    assert_eq!(link_target(&dev.join("eboard")), None);
    let stable = links.path().join("board3");
    symlink("/dev/ttyACM1", &stable).unwrap();
    let chain = links.path().join("chain");
    symlink("board3", &chain).unwrap();
    let boards = [
        board(1, BoardKind::Dgt, Locator::Serial("00012345".into())),
        board(3, BoardKind::Togyz, Locator::Symlink(chain)),
        board(4, BoardKind::Dgt, Locator::Port("/dev/ttyUSB0".into())),
        board(5, BoardKind::Dgt, Locator::Serial("GONE".into())),
    ];
    let found: Vec<(String, Option<u32>)> = ports
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                configured_board(&boards, p).map(|b| b.number),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("ttyACM0".into(), Some(1)),
            ("ttyACM1".into(), Some(3)),
            ("ttyACM10".into(), None),
            ("ttyS0".into(), None),
            ("ttyUSB0".into(), Some(4)),
        ]
    );
    let table = describe(&ports, &boards);
    let acm0 = table
        .lines()
        .find(|l| l.starts_with("/dev/ttyACM0 "))
        .unwrap();
    for part in [
        "045b:8111",
        "00012345",
        "DGT Smart Board",
        "DGT board",
        "1 (board 1)",
    ] {
        assert!(acm0.contains(part), "{acm0}");
    }
    let acm10 = table
        .lines()
        .find(|l| l.starts_with("/dev/ttyACM10 "))
        .unwrap();
    assert!(
        acm10.contains("maybe DGT (generic ID, not claimed)"),
        "{acm10}"
    );
    assert!(table.contains("/dev/ttyS0     - (serial8250)"), "{table}");
    assert!(
        table.ends_with("board 5 (board 5, dgt): not plugged in (serial GONE)\n"),
        "{table}"
    );
}

#[test]
fn the_path_to_open_follows_the_locator() {
    let t = venue();
    let serial = Locator::Serial("A50285BI".into());
    assert_eq!(
        path_to_open(&serial, &t.root).unwrap(),
        Some(PathBuf::from("/dev/ttyUSB0"))
    );
    assert_eq!(
        path_to_open(&Locator::Serial("GONE".into()), &t.root).unwrap(),
        None
    );
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("ttyACM7");
    let link = Locator::Symlink(dir.path().join("dgt-1"));
    symlink(&node, dir.path().join("dgt-1")).unwrap();
    // The link is there but its device is not: the board is away.
    assert_eq!(path_to_open(&link, &t.root).unwrap(), None);
    fs::write(&node, "").unwrap();
    assert_eq!(
        path_to_open(&link, &t.root).unwrap(),
        Some(dir.path().join("dgt-1"))
    );
    let ports = list_ports(&t.root).unwrap();
    assert_eq!(
        find_port(&serial, &ports).map(|p| p.name.as_str()),
        Some("ttyUSB0")
    );
}

/// A HID report descriptor whose top-level collections are on these usage pages (16-bit Usage
/// Page items, each collection closed at once).
fn descriptor(pages: &[u16]) -> Vec<u8> {
    let mut d = Vec::new();
    for p in pages {
        let [lo, hi] = p.to_le_bytes();
        d.extend([0x06, lo, hi, 0x09, 0x01, 0xa1, 0x01, 0xc0]);
    }
    d
}

impl Tree {
    /// `hidraw*`: the node's device is the HID device below the USB interface, with its
    /// `uevent` (`HID_ID`) and `report_descriptor`.
    fn hidraw(&self, port: &str, iface: u8, node: &str, ids: (u16, u16), pages: &[u16]) {
        let dev = self.usb_device(
            port,
            &[
                ("idVendor", &format!("{:04x}", ids.0)),
                ("idProduct", &format!("{:04x}", ids.1)),
                ("product", "Smart Chess Board"),
            ],
        );
        let hid_name = format!("0003:{:04X}:{:04X}.000{iface}", ids.0, ids.1);
        let hid = dev.join(format!("{port}:1.{iface}")).join(&hid_name);
        fs::create_dir_all(hid.join("hidraw").join(node)).unwrap();
        fs::write(
            hid.join("uevent"),
            format!(
                "DRIVER=hid-generic\nHID_ID=0003:{:08X}:{:08X}\nHID_NAME=Chess\nHID_PHYS=usb-0000:00:14.0-{port}/input{iface}\n",
                ids.0, ids.1
            ),
        )
        .unwrap();
        fs::write(hid.join("report_descriptor"), descriptor(pages)).unwrap();
        fs::create_dir_all(self.root.join("class/hidraw")).unwrap();
        symlink(
            format!(
                "../../devices/pci0000:00/0000:00:14.0/usb1/{port}/{port}:1.{iface}/{hid_name}/hidraw/{node}"
            ),
            self.root.join("class/hidraw").join(node),
        )
        .unwrap();
        symlink(
            "../../../{hid_name}".replace("{hid_name}", &hid_name),
            hid.join("hidraw").join(node).join("device"),
        )
        .unwrap();
    }
}

#[test]
fn hid_nodes_are_listed_with_their_ids_pages_and_usb_port_paths() {
    let t = venue();
    // Two boards of one model on two USB ports (no serial numbers), each with a second
    // interface on the Generic Desktop page; and a keyboard.
    t.hidraw("1-5", 0, "hidraw0", (0x2d80, 0x8002), &[0xff00]);
    t.hidraw("1-5", 1, "hidraw1", (0x2d80, 0x8002), &[0x0001]);
    t.hidraw("1-6.2", 0, "hidraw2", (0x2d80, 0x8002), &[0xff00]);
    t.hidraw("1-7", 0, "hidraw10", (0x046d, 0xc31c), &[0x0001, 0x000c]);
    let ports = list_ports(&t.root).unwrap();
    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "hidraw0", "hidraw1", "hidraw2", "hidraw10", "ttyACM0", "ttyACM1", "ttyACM10", "ttyS0",
            "ttyUSB0"
        ]
    );
    let node = |name: &str| ports.iter().find(|p| p.name == name).unwrap();
    let h0 = node("hidraw0");
    assert_eq!(h0.path, PathBuf::from("/dev/hidraw0"));
    assert_eq!(
        h0.hid,
        Some(HidInfo {
            vid: 0x2d80,
            pid: 0x8002,
            usage_pages: vec![0xff00],
        })
    );
    let usb = h0.usb.as_ref().unwrap();
    assert_eq!((usb.vid, usb.port_path.as_str()), (0x2d80, "1-5"));
    assert_eq!(node("hidraw1").hid.as_ref().unwrap().usage_pages, [0x0001]);
    assert_eq!(
        node("hidraw10").hid.as_ref().unwrap().usage_pages,
        [0x0001, 0x000c]
    );
    assert_eq!(node("hidraw2").usb.as_ref().unwrap().port_path, "1-6.2");
    // A Chessnut board's protocol interface, not its other one, nor a keyboard.
    assert_eq!(looks(h0), Looks::Chessnut);
    assert_eq!(looks(node("hidraw1")), Looks::Other);
    assert_eq!(looks(node("hidraw10")), Looks::Other);
    // Boards told apart by where they are plugged in.
    let boards = [
        board(7, BoardKind::Dgt, Locator::UsbPort("1-6.2".into())),
        board(8, BoardKind::Dgt, Locator::UsbPort("1-9".into())),
    ];
    assert_eq!(
        configured_board(&boards, node("hidraw2")).map(|b| b.number),
        Some(7)
    );
    assert_eq!(configured_board(&boards, h0).map(|b| b.number), None);
    assert_eq!(
        path_to_open(&boards[0].locator, &t.root).unwrap(),
        Some(PathBuf::from("/dev/hidraw2"))
    );
    assert_eq!(path_to_open(&boards[1].locator, &t.root).unwrap(), None);
    // Of a board's two interfaces, the one on the vendor-defined page.
    assert_eq!(
        path_to_open(&Locator::UsbPort("1-5".into()), &t.root).unwrap(),
        Some(PathBuf::from("/dev/hidraw0"))
    );
    let table = describe(&ports, &boards);
    let row = table
        .lines()
        .find(|l| l.starts_with("/dev/hidraw2 "))
        .unwrap();
    for part in ["2d80:8002", "1-6.2", "Chessnut board", "7 (board 7)"] {
        assert!(row.contains(part), "{row}");
    }
    assert!(
        table.ends_with("board 8 (board 8, dgt): not plugged in (USB port 1-9)\n"),
        "{table}"
    );
}
