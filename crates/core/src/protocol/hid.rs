//! USB HID facts every HID kind of board shares: what a report descriptor says of the
//! interface. Pure: the daemon reads the descriptor from sysfs and asks here.
//!
//! Flow: `devices` and the port matching read a hidraw node's `report_descriptor`;
//! [`application_usage_pages`] gives its top-level collections' usage pages, which tell a
//! vendor's protocol interface from its keyboard or mouse interface.

/// The usage page in effect at each top-level collection of a HID report descriptor, in order
/// (USB HID 1.11, 6.2.2: short items `prefix data`, the prefix's low two bits the data size
/// 0/1/2/4, Usage Page the global item 0x04, Collection 0xA0, End Collection 0xC0; long items
/// 0xFE are skipped). Push and Pop are not followed. A descriptor cut short ends the list.
pub fn application_usage_pages(descriptor: &[u8]) -> Vec<u16> {
    let mut pages = Vec::new();
    let mut page = 0u16;
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&prefix) = descriptor.get(i) {
        let (data_at, size) = if prefix == 0xfe {
            // Long item: size byte, tag byte, data.
            match descriptor.get(i + 1) {
                Some(&n) => (i + 3, usize::from(n)),
                None => break,
            }
        } else {
            (i + 1, [0, 1, 2, 4][usize::from(prefix & 3)])
        };
        let Some(data) = descriptor.get(data_at..data_at + size) else {
            break;
        };
        let value = data.iter().rev().fold(0u32, |v, &b| v << 8 | u32::from(b));
        match prefix & 0xfc {
            0x04 => page = value as u16,
            0xa0 => {
                if depth == 0 {
                    pages.push(page);
                }
                depth += 1;
            }
            0xc0 => depth = depth.saturating_sub(1),
            _ => {}
        }
        i = data_at + size;
    }
    pages
}
