//! The `[cluster]` table: how a hall reaches the event's NATS JetStream (and under which name it
//! records), or which halls the event node follows; checked.

use super::*;

/// The longest hall name: it is a NATS subject token and a stream name's part.
pub const MAX_HALL_NAME: usize = 32;

/// Whether `name` can name a hall: 1 to 32 letters, digits, `_` or `-` (a NATS subject token
/// and part of a JetStream stream name).
pub fn is_hall_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_HALL_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// How long a hall may go unheard before the event node alerts the arbiter, unless configured.
pub const DEFAULT_HALL_SILENT_AFTER_MS: u64 = 15_000;

/// The shortest `hall_silent_after`: three of a hall's status messages
/// ([`crate::cluster::health::STATUS_EVERY`]).
pub const MIN_HALL_SILENT_AFTER_MS: u64 = 6_000;

const HALL_RULE: &str = "1 to 32 letters, digits, `_` or `-`, e.g. \"A\" or \"hall-2\"";

pub(super) fn cluster_config(
    raw: &Spanned<RawCluster>,
    ck: &mut Checker<'_>,
) -> Option<ClusterConfig> {
    let c = raw.get_ref();
    let urls = ck
        .required(
            &c.url,
            raw.span(),
            "[cluster]",
            "url",
            "\"nats://10.0.0.5:4222\"",
        )
        .and_then(|u| {
            let urls: Vec<String> = u
                .get_ref()
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            let bad: Vec<&String> = urls
                .iter()
                .filter(|s| !(s.starts_with("nats://") || s.starts_with("tls://")))
                .collect();
            if urls.is_empty() || !bad.is_empty() {
                ck.at(
                    u.span(),
                    format!(
                        "url {:?}: give the NATS servers as nats:// or tls:// URLs, separated by \
                         commas, e.g. \"nats://10.0.0.5:4222,nats://10.0.0.6:4222\"",
                        u.get_ref()
                    ),
                );
                None
            } else {
                Some(urls)
            }
        });
    let hall = c.hall.as_ref().and_then(|h| {
        let name = h.get_ref().trim();
        if is_hall_name(name) {
            Some(name.to_owned())
        } else {
            ck.at(
                h.span(),
                format!("hall {:?} is not a hall name: {HALL_RULE}", h.get_ref()),
            );
            None
        }
    });
    let mut halls = Vec::new();
    if let Some(hs) = &c.halls {
        for h in hs.get_ref() {
            let name = h.get_ref().trim();
            if !is_hall_name(name) {
                ck.at(
                    h.span(),
                    format!("hall {:?} is not a hall name: {HALL_RULE}", h.get_ref()),
                );
            } else if halls.iter().any(|k| k == name) {
                ck.at(h.span(), format!("hall {name:?} is listed twice"));
            } else {
                halls.push(name.to_owned());
            }
        }
    }
    if c.hall.is_some() && c.halls.is_some() {
        ck.at(
            raw.span(),
            "[cluster] has both `hall` (a hall that records) and `halls` (the event node's \
             list): a process is one or the other"
                .to_owned(),
        );
    }
    let replicas = match &c.replicas {
        None => 1,
        Some(n) => match usize::try_from(*n.get_ref()) {
            Ok(n @ 1..=5) => n,
            _ => {
                ck.at(
                    n.span(),
                    format!(
                        "replicas = {} is not a number of NATS servers from 1 to 5 (3 for a \
                         three-node cluster)",
                        n.get_ref()
                    ),
                );
                1
            }
        },
    };
    let file = |v: &Option<Spanned<String>>, ck: &mut Checker<'_>, what: &str| {
        v.as_ref()
            .and_then(|f| ck.non_empty(f, what, "\"/etc/boardscribe/nats/hall-a.creds\""))
            .map(PathBuf::from)
    };
    let creds_file = file(&c.creds_file, ck, "creds_file");
    let tls_ca_file = file(&c.tls_ca_file, ck, "tls_ca_file");
    let tls_cert_file = file(&c.tls_cert_file, ck, "tls_cert_file");
    let tls_key_file = file(&c.tls_key_file, ck, "tls_key_file");
    if tls_cert_file.is_some() != tls_key_file.is_some() {
        ck.at(
            raw.span(),
            "[cluster] needs tls_cert_file and tls_key_file together (the hall's client \
             certificate and its key)"
                .to_owned(),
        );
    }
    let hall_silent_after_ms = match &c.hall_silent_after {
        None => DEFAULT_HALL_SILENT_AFTER_MS,
        Some(d) => match crate::export::publish::parse_delay(d.get_ref()) {
            Ok(ms) if ms >= MIN_HALL_SILENT_AFTER_MS => ms,
            Ok(_) => {
                ck.at(
                    d.span(),
                    format!(
                        "hall_silent_after = {:?} is shorter than three of a hall's status \
                         messages ({} s): give \"6s\" or more",
                        d.get_ref(),
                        MIN_HALL_SILENT_AFTER_MS / 1000
                    ),
                );
                DEFAULT_HALL_SILENT_AFTER_MS
            }
            Err(e) => {
                ck.at(d.span(), e);
                DEFAULT_HALL_SILENT_AFTER_MS
            }
        },
    };
    Some(ClusterConfig {
        urls: urls?,
        hall,
        halls,
        replicas,
        creds_file,
        tls_ca_file,
        tls_cert_file,
        tls_key_file,
        hall_silent_after_ms,
    })
}
