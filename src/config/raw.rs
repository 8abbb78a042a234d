//! The configuration file as TOML reads it: every table and key as written, each with its span
//! for diagnostics, before any check (`check` turns it into a [`super::Config`]).

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    pub(super) database: Option<Spanned<String>>,
    pub(super) http: Option<Spanned<RawHttp>>,
    pub(super) tournament: Option<RawTournament>,
    pub(super) laws: Option<Spanned<LawsOverrides>>,
    #[serde(default)]
    pub(super) board: Vec<Spanned<RawBoard>>,
    #[serde(default)]
    pub(super) bus: Vec<Spanned<RawBus>>,
    pub(super) relay: Option<RawRelay>,
    pub(super) admin: Option<Spanned<RawAdmin>>,
    pub(super) cluster: Option<Spanned<RawCluster>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    pub(super) bind: Option<Spanned<String>>,
    pub(super) tls: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTournament {
    pub(super) event: Option<String>,
    pub(super) site: Option<String>,
    pub(super) round: Option<Spanned<toml::Value>>,
    pub(super) start_date: Option<Spanned<toml::Value>>,
    pub(super) end_date: Option<Spanned<toml::Value>>,
    pub(super) time_control: Option<Spanned<String>>,
    pub(super) laws: Option<Spanned<String>>,
    pub(super) federation: Option<Spanned<String>>,
    pub(super) supervision: Option<Spanned<String>>,
    pub(super) variant: Option<Spanned<String>>,
    pub(super) language: Option<Spanned<String>>,
    pub(super) notation: Option<Spanned<String>>,
    pub(super) tiebreaks: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBoard {
    // Required, checked in `boards` (so that a board missing one is read for its other keys).
    pub(super) number: Option<Spanned<i64>>,
    pub(super) kind: Option<Spanned<String>>,
    pub(super) name: Option<Spanned<String>>,
    pub(super) serial: Option<Spanned<String>>,
    pub(super) symlink: Option<Spanned<String>>,
    pub(super) port: Option<Spanned<String>>,
    pub(super) usb_port: Option<Spanned<String>>,
    pub(super) clock_layout: Option<Spanned<String>>,
    pub(super) bus: Option<Spanned<String>>,
    pub(super) bus_serial: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBus {
    // Required, checked in `buses`.
    pub(super) name: Option<Spanned<String>>,
    pub(super) serial: Option<Spanned<String>>,
    pub(super) symlink: Option<Spanned<String>>,
    pub(super) port: Option<Spanned<String>>,
}

/// A board that names a bus, before the buses are read.
pub(super) struct PendingBusBoard {
    pub(super) bus: Spanned<String>,
    pub(super) board: BoardConfig,
    pub(super) serial: String,
    pub(super) address: u16,
    /// Where `bus_serial` is.
    pub(super) at: Range<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRelay {
    pub(super) clk_format: Option<Spanned<String>>,
    /// `"15m"`, `"90s"`, `"0"`.
    pub(super) delay: Option<Spanned<String>>,
    pub(super) public_comments: Option<Spanned<bool>>,
    pub(super) slice: Option<Spanned<i64>>,
    pub(super) folder: Option<Spanned<RawFolder>>,
    pub(super) lichess: Option<Spanned<LichessEntries>>,
}

/// `[relay.lichess]` (one round) or `[[relay.lichess]]` (several, each with its boards).
pub(super) enum LichessEntries {
    /// Placed where the table is.
    One(RawLichess),
    Many(Vec<Spanned<RawLichess>>),
}

impl<'de> Deserialize<'de> for LichessEntries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = LichessEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a [relay.lichess] table or [[relay.lichess]] tables")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                RawLichess::deserialize(serde::de::value::MapAccessDeserializer::new(a))
                    .map(LichessEntries::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                Vec::<Spanned<RawLichess>>::deserialize(
                    serde::de::value::SeqAccessDeserializer::new(a),
                )
                .map(LichessEntries::Many)
            }
        }
        d.deserialize_any(Entries)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFolder {
    pub(super) dir: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLichess {
    pub(super) round: Option<Spanned<String>>,
    /// Event round number → Lichess round id.
    pub(super) rounds: Option<Spanned<std::collections::BTreeMap<String, Spanned<String>>>>,
    /// The boards this round takes: `"1-64"`.
    pub(super) boards: Option<Spanned<String>>,
    pub(super) token_file: Option<Spanned<String>>,
    pub(super) base_url: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAdmin {
    pub(super) token_file: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCluster {
    /// `"nats://host:4222"`, several separated by commas.
    pub(super) url: Option<Spanned<String>>,
    /// A hall: its name.
    pub(super) hall: Option<Spanned<String>>,
    /// The event node: the halls it follows.
    pub(super) halls: Option<Spanned<Vec<Spanned<String>>>>,
    pub(super) replicas: Option<Spanned<i64>>,
    pub(super) creds_file: Option<Spanned<String>>,
    pub(super) tls_ca_file: Option<Spanned<String>>,
    pub(super) tls_cert_file: Option<Spanned<String>>,
    pub(super) tls_key_file: Option<Spanned<String>>,
    /// The event node: how long a hall may go unheard before the arbiter is alerted.
    pub(super) hall_silent_after: Option<Spanned<String>>,
}
