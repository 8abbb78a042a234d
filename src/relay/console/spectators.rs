//! The spectators' link on the console: the address of the live page, written out and as a QR
//! code the arbiter can show on a screen or print for the hall.
//!
//! Flow: the server gives the address spectators reach the daemon at (the host the arbiter's
//! own browser used, http or https as the request came); [`spectators_section`] draws it with
//! `qrcode`'s SVG renderer. Pure.

use std::fmt::Write as _;

use qrcode::{EcLevel, QrCode, render::svg};

use crate::{lang::Lang, relay::page::escape};

/// The QR code of `url`, with enough redundancy to be read off a screen across a room (ECC
/// level M), as an SVG; none for an address too long for a QR code.
pub fn qr_svg(url: &str) -> Option<String> {
    let code = QrCode::with_error_correction_level(url.as_bytes(), EcLevel::M).ok()?;
    Some(
        code.render::<svg::Color<'_>>()
            .min_dimensions(160, 160)
            .quiet_zone(true)
            .build(),
    )
}

/// The console's section for the spectators' link `url`.
pub fn spectators_section(out: &mut String, url: &str, lang: Lang) {
    let _ = write!(
        out,
        r#"<section class="spectators"><h2>{head}</h2><p><a href="{url}" dir="ltr">{url}</a></p>"#,
        head = escape(lang.text("arbiter.spectators_link")),
        url = escape(url),
    );
    if let Some(svg) = qr_svg(url) {
        let _ = write!(
            out,
            r#"<figure class="qr" role="img" aria-label="{}">{}</figure>"#,
            escape(&lang.fill("arbiter.qr_of", &[("url", url)])),
            // The renderer's XML declaration is no part of a page.
            svg.split_once("?>").map_or(svg.as_str(), |(_, s)| s)
        );
    }
    out.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code drawn reads back as the address: its modules, as `qrcode` lays them out, are
    /// scanned by a QR reader (`rqrr`) from a picture of them.
    #[test]
    fn the_qr_code_reads_back_as_the_spectators_address() {
        for url in [
            "http://192.168.1.20:8080/",
            "https://chess.example.org/live/?lang=kk",
        ] {
            let code = QrCode::with_error_correction_level(url.as_bytes(), EcLevel::M).unwrap();
            let width = code.width();
            let dark = code.to_colors();
            let (scale, quiet) = (4, 4);
            let side = (width + 2 * quiet) * scale;
            let mut picture = rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| {
                let (mx, my) = (
                    (x / scale).checked_sub(quiet),
                    (y / scale).checked_sub(quiet),
                );
                match (mx, my) {
                    (Some(mx), Some(my)) if mx < width && my < width => {
                        match dark[my * width + mx] {
                            qrcode::Color::Dark => 0,
                            qrcode::Color::Light => 255,
                        }
                    }
                    _ => 255,
                }
            });
            let grids = picture.detect_grids();
            assert_eq!(grids.len(), 1, "{url}");
            let (_, read) = grids[0].decode().unwrap();
            assert_eq!(read, url);
            let svg = qr_svg(url).unwrap();
            assert!(svg.contains("<svg") && svg.contains("<path"), "{svg}");
        }
        let mut html = String::new();
        spectators_section(&mut html, "http://hall.local/?a=1&b=2", Lang::Fa);
        assert!(html.contains(r#"<a href="http://hall.local/?a=1&amp;b=2" dir="ltr">"#));
        assert!(html.contains("<svg") && !html.contains("<?xml"), "{html}");
    }
}
