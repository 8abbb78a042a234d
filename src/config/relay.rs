//! The `[relay]` table: folders and Lichess broadcast rounds, checked.

use std::collections::BTreeMap;

use super::*;
use crate::broadcast::lichess::plan::{LichessRounds, is_round_id};

pub(super) fn relay_config(relay: &RawRelay, ck: &mut Checker<'_>) -> RelayConfig {
    let mut out = RelayConfig::default();
    if let Some(c) = &relay.clk_format {
        match ClockFormat::ALL
            .iter()
            .find(|v| v.as_str() == c.get_ref().trim())
        {
            Some(&v) => out.clk_format = v,
            None => ck.at(
                c.span(),
                format!(
                    "unknown clk_format {:?}; valid: {}",
                    c.get_ref(),
                    list(&ClockFormat::ALL, ClockFormat::as_str)
                ),
            ),
        }
    }
    if let Some(d) = &relay.delay {
        match crate::export::publish::parse_delay(d.get_ref()) {
            Ok(ms) => out.delay_ms = ms,
            Err(e) => ck.at(d.span(), e),
        }
    }
    if let Some(p) = &relay.public_comments {
        out.public_comments = *p.get_ref();
    }
    if let Some(n) = &relay.slice {
        match usize::try_from(*n.get_ref()) {
            Ok(n @ 1..=100) => out.slice = n,
            _ => ck.at(
                n.span(),
                format!(
                    "slice = {} is not a number of games from 1 to 100 (Lichess takes at most 100 per round)",
                    n.get_ref()
                ),
            ),
        }
    }
    if let Some(f) = &relay.folder {
        out.folder = ck
            .required(
                &f.get_ref().dir,
                f.span(),
                "[relay.folder]",
                "dir",
                "\"/var/lib/boardscribe/relay\"",
            )
            .and_then(|d| ck.non_empty(d, "dir", "\"/var/lib/boardscribe/relay\""))
            .map(|d| FolderRelay {
                dir: PathBuf::from(d),
            });
    }
    let entries: Vec<(Range<usize>, &RawLichess)> = match &relay.lichess {
        None => Vec::new(),
        Some(l) => match l.get_ref() {
            LichessEntries::One(raw) => vec![(l.span(), raw)],
            LichessEntries::Many(ls) => ls.iter().map(|l| (l.span(), l.get_ref())).collect(),
        },
    };
    for (span, raw) in entries {
        let boards = match &raw.boards {
            None => Some(None),
            Some(b) => match b.get_ref().parse::<crate::export::publish::BoardRange>() {
                Ok(r) => Some(Some(r)),
                Err(e) => {
                    ck.at(b.span(), format!("boards: {e}"));
                    None
                }
            },
        };
        let rounds = lichess_rounds(raw, span.clone(), ck);
        let token = ck
            .required(
                &raw.token_file,
                span.clone(),
                "[relay.lichess]",
                "token_file",
                "\"/etc/boardscribe/lichess.token\"",
            )
            .and_then(|t| ck.non_empty(t, "token_file", "\"/etc/boardscribe/lichess.token\""));
        if ck.files.lichess_token
            && let (Some(path), Some(file)) = (&token, &raw.token_file)
        {
            ck.token_file(file.span(), "the Lichess token file", path);
        }
        let base_url = match &raw.base_url {
            Some(u) => {
                let s = u.get_ref().trim().trim_end_matches('/');
                if s.starts_with("https://") || s.starts_with("http://") {
                    Some(s.to_owned())
                } else {
                    ck.at(
                        u.span(),
                        format!(
                            "base_url {:?} is not an http(s) URL; valid: e.g. \"{DEFAULT_LICHESS_URL}\"",
                            u.get_ref()
                        ),
                    );
                    None
                }
            }
            None => Some(DEFAULT_LICHESS_URL.to_owned()),
        };
        if let (Some(rounds), Some(token), Some(base_url), Some(boards)) =
            (rounds, token, base_url, boards)
        {
            out.lichess.push(LichessRelay {
                rounds,
                boards,
                token_file: PathBuf::from(token),
                base_url,
            });
        }
    }
    out
}

/// The Lichess round ids of one entry: `round = "…"` or `rounds = { 1 = "…", 2 = "…" }`, one of
/// them, each id 8 letters and digits, each round a number from 1.
fn lichess_rounds(
    raw: &RawLichess,
    table: Range<usize>,
    ck: &mut Checker<'_>,
) -> Option<LichessRounds> {
    const EXAMPLE: &str = "rounds = { 1 = \"AbCdEfGh\", 2 = \"IjKlMnOp\" }";
    let id = |ck: &mut Checker<'_>, v: &Spanned<String>| {
        let text = v.get_ref().trim();
        if is_round_id(text) {
            Some(text.to_owned())
        } else {
            ck.at(
                v.span(),
                format!(
                    "{:?} is not a Lichess round id: 8 letters and digits, the last part of the \
                     round's URL (lichess.org/broadcast/…/round-1/AbCdEfGh)",
                    v.get_ref()
                ),
            );
            None
        }
    };
    match (&raw.round, &raw.rounds) {
        (Some(_), Some(map)) => {
            ck.at(
                map.span(),
                "give `round` or `rounds`, not both: rounds maps each event round to its \
                 Lichess round"
                    .to_owned(),
            );
            None
        }
        (Some(one), None) => {
            let one = id(ck, one)?;
            ck.warn(
                raw.round.as_ref().map_or(table, Spanned::span),
                format!(
                    "round = {one:?} takes the event round current when the daemon starts, and \
                     no later one; map each round to its own Lichess round: {EXAMPLE}"
                ),
            );
            Some(LichessRounds::Current(one))
        }
        (None, Some(map)) => {
            let mut out = BTreeMap::new();
            let mut ok = true;
            for (key, value) in map.get_ref() {
                match key.trim().parse::<u32>() {
                    Ok(n) if n > 0 => match id(ck, value) {
                        Some(v) => {
                            out.insert(n, v);
                        }
                        None => ok = false,
                    },
                    _ => {
                        ck.at(
                            map.span(),
                            format!("rounds: {key:?} is not a round number from 1; e.g. {EXAMPLE}"),
                        );
                        ok = false;
                    }
                }
            }
            if out.is_empty() && ok {
                ck.at(map.span(), format!("rounds is empty; e.g. {EXAMPLE}"));
                ok = false;
            }
            ok.then_some(LichessRounds::Map(out))
        }
        (None, None) => {
            if !ck.was_dropped(&table, "round") {
                ck.at(
                    table,
                    format!("[relay.lichess] needs `rounds`; add e.g. {EXAMPLE}"),
                );
            }
            None
        }
    }
}
