//! Which USB HID interface is a Chessnut board's protocol interface, from the numbers the
//! daemon reads off hidraw and sysfs. Pure: the daemon does the opening.
//!
//! Flow: for each hidraw node the daemon reads the vendor and product ids and the report
//! descriptor; [`application_usage_pages`] gives the descriptor's top-level usage pages and
//! [`is_chessnut`] says whether the node is the one to open.
//!
//! Facts: vendor 0x2D80; the product id varies by batch and model, its high byte 0x80 to 0x86
//! (\[EL\] matches `pid & 0xFF00` against 0x8000 … 0x8600 and its README names Air 0x80xx, Pro
//! 0x81xx, Air+ 0x82xx, Evo 0x83xx, Go 0x85xx; \[GO\] saw 0x8001 and 0x8002); the protocol's
//! interface has usage page 0xFF00 (\[EL\] `DEVICE_USAGE_PAGE`, \[PL\]'s WebHID filter, \[GO\],
//! who notes a second interface on usage page 0x0001, Generic Desktop, which is not it). The
//! usage page is not in sysfs' uevent; hidapi's Linux backend reads it from the report
//! descriptor (`thirdparty/hidapi/linux/hid.c`, `get_next_hid_usage`, in \[EL\]), as
//! [`application_usage_pages`] (in [`crate::protocol::hid`], shared by every HID kind) does.

/// The vendor id of every Chessnut board.
pub const VENDOR_ID: u16 = 0x2d80;
/// The usage page of the protocol's interface.
pub const USAGE_PAGE: u16 = 0xff00;
/// The high bytes of the product ids the vendor's SDK opens.
pub const PRODUCT_FAMILIES: std::ops::RangeInclusive<u8> = 0x80..=0x86;

/// The model a product id's high byte names (\[EL\] README).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Model {
    Air,
    Pro,
    AirPlus,
    Evo,
    Go,
    /// 0x84 or 0x86: opened by the SDK, named nowhere.
    Unnamed(u8),
}

/// The model of a Chessnut product id; `None` outside [`PRODUCT_FAMILIES`].
pub fn model(pid: u16) -> Option<Model> {
    let [family, _] = pid.to_be_bytes();
    Some(match family {
        0x80 => Model::Air,
        0x81 => Model::Pro,
        0x82 => Model::AirPlus,
        0x83 => Model::Evo,
        0x85 => Model::Go,
        f if PRODUCT_FAMILIES.contains(&f) => Model::Unnamed(f),
        _ => return None,
    })
}

/// Whether a HID interface is a Chessnut board's protocol interface.
pub fn is_chessnut(vid: u16, pid: u16, usage_page: u16) -> bool {
    vid == VENDOR_ID && model(pid).is_some() && usage_page == USAGE_PAGE
}

pub use crate::protocol::hid::application_usage_pages;
