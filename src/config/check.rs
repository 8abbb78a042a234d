//! Checking a read file: every problem becomes a [`Diagnostic`] with its line, column and a fix,
//! and all of them are reported at once. Flow: [`validate`] checks the tables in turn (the HTTP
//! bind, the tournament and its Laws; boards and relays in their own modules) into a `Config`.
//! Two guards against guessing and listening: the admin token must hold 128 bits
//! ([`token_bits`]), and an address other machines reach must say how TLS is done (`[http] tls`).

use super::*;

/// Collects diagnostics against one text.
pub(super) struct Checker<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    /// Which files the config names are read.
    pub(super) files: FileChecks,
    pub(super) found: Vec<(usize, Diagnostic)>,
    pub(super) warnings: Vec<(usize, Diagnostic)>,
    /// Keys left out for a mistake already reported (`collect`): not missing as well.
    pub(super) dropped: Vec<collect::Dropped>,
}

impl Checker<'_> {
    pub(super) fn at(&mut self, span: Range<usize>, message: String) {
        let d = diagnostic(self.file, self.text, span.start, message);
        self.found.push((span.start, d));
    }

    /// Something that works but may not be meant.
    pub(super) fn warn(&mut self, span: Range<usize>, message: String) {
        let d = diagnostic(
            self.file,
            self.text,
            span.start,
            format!("warning: {message}"),
        );
        self.warnings.push((span.start, d));
    }

    /// Whether `key` of the table at `table` was left out for a mistake already reported.
    pub(super) fn was_dropped(&self, table: &Range<usize>, key: &str) -> bool {
        self.dropped.iter().any(|(t, k)| t == table && k == key)
    }

    /// A key a table must have (reported missing unless it was dropped for its value).
    pub(super) fn present<'v, T>(
        &mut self,
        v: &'v Option<Spanned<T>>,
        table: Range<usize>,
        key: &str,
    ) -> Option<&'v Spanned<T>> {
        if v.is_none() && !self.was_dropped(&table, key) {
            self.at(table, format!("missing key `{key}`; add it to this table"));
        }
        v.as_ref()
    }

    /// A token file the config names: readable, its first line not empty (as `run` reads it).
    pub(super) fn token_file(&mut self, span: Range<usize>, what: &str, path: &str) {
        self.read_token(span, what, path);
    }

    /// The admin token file: as [`Checker::token_file`], and the token must be hard to guess:
    /// at least [`MIN_TOKEN_BITS`] as [`token_bits`] estimates them.
    pub(super) fn admin_token_file(&mut self, span: Range<usize>, path: &str) {
        let Some(token) = self.read_token(span.clone(), "the admin token file", path) else {
            return;
        };
        if let Some(why) = weak_admin_token(path, &token) {
            self.at(span, why);
        }
    }

    /// The first line of a token file, trimmed; a mistake said (and `None`) when it cannot be
    /// read or is empty.
    fn read_token(&mut self, span: Range<usize>, what: &str, path: &str) -> Option<String> {
        match std::fs::read_to_string(path) {
            Ok(text) if text.lines().next().is_some_and(|l| !l.trim().is_empty()) => {
                text.lines().next().map(|l| l.trim().to_owned())
            }
            Ok(_) => {
                self.at(
                    span,
                    format!("{what} {path:?} is empty; write the token on its first line"),
                );
                None
            }
            Err(e) => {
                self.at(
                    span,
                    format!(
                        "{what} {path:?} cannot be read: {e}; create it, readable by the service \
                         user only (see docs/operations.md), or fix the path"
                    ),
                );
                None
            }
        }
    }

    /// A value that must not be empty.
    pub(super) fn non_empty(
        &mut self,
        v: &Spanned<String>,
        what: &str,
        example: &str,
    ) -> Option<String> {
        let s = v.get_ref().trim();
        if s.is_empty() {
            self.at(
                v.span(),
                format!("{what} is empty; give one, e.g. {example}"),
            );
            return None;
        }
        Some(s.to_owned())
    }

    /// A required key of a table.
    pub(super) fn required<'v>(
        &mut self,
        v: &'v Option<Spanned<String>>,
        table: Range<usize>,
        name: &str,
        key: &str,
        example: &str,
    ) -> Option<&'v Spanned<String>> {
        if v.is_none() && !self.was_dropped(&table, key) {
            self.at(
                table,
                format!("{name} needs `{key}`; add e.g. {key} = {example}"),
            );
        }
        v.as_ref()
    }
}

/// A diagnostic at byte `offset` of `text`.
pub(super) fn diagnostic(file: &str, text: &str, offset: usize, message: String) -> Diagnostic {
    let (line, column) = line_column(text, offset);
    Diagnostic {
        file: file.to_owned(),
        line,
        column,
        message,
    }
}

/// 1-based line and column (in characters) of byte `offset`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

pub(super) fn list<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> String {
    all.iter().map(|&t| name(t)).collect::<Vec<_>>().join(", ")
}

pub(super) const SUPERVISIONS: [Supervision; 2] = [Supervision::Full, Supervision::Reduced];

pub(super) const LAYOUTS: [(ClockLayout, &str); 2] =
    [(ClockLayout::H17, "h17"), (ClockLayout::H13, "h13")];

/// serde's messages in this file's words: "key" for field, the valid values listed plainly.
pub(super) fn serde_message(m: &str) -> String {
    let m = m.trim_end();
    if let Some(rest) = m.strip_prefix("unknown field ") {
        return match rest.split_once(", expected ") {
            Some((key, valid)) => format!(
                "unknown key {key}; valid: {}",
                valid.trim_start_matches("one of ")
            ),
            None => format!("unknown key {rest}"),
        };
    }
    if let Some(rest) = m.strip_prefix("unknown variant ")
        && let Some((value, valid)) = rest.split_once(", expected ")
    {
        return format!(
            "unknown value {value}; valid: {}",
            valid.trim_start_matches("one of ")
        );
    }
    if let Some(key) = m.strip_prefix("missing field ") {
        return format!("missing key {key}; add it to this table");
    }
    m.replace("expected i64", "expected a whole number")
        .replace("expected u32", "expected a whole number of 0 or more")
        .replace("expected u64", "expected a whole number of 0 or more")
}

pub(super) fn validate(raw: RawConfig, ck: &mut Checker<'_>) -> Config {
    let mut config = Config::default();
    if let Some(db) = &raw.database
        && let Some(db) = ck.non_empty(db, "database", "\"/var/lib/boardscribe/boardscribe.db\"")
    {
        config.database = PathBuf::from(db);
    }
    if let Some(http) = &raw.http {
        config.http = http_bind(http, ck);
        config.http_tls = http_tls(http, ck);
    }
    if let Some(t) = &raw.tournament {
        config.tournament = tournament(t, ck);
    }
    config.laws = laws(&config.tournament, raw.tournament.as_ref(), &raw.laws, ck);
    let mut on_bus = Vec::new();
    config.boards = boards(&raw.board, &mut on_bus, ck);
    config.buses = buses(&raw.bus, on_bus, &config.boards, ck);
    if let Some(relay) = &raw.relay {
        config.relay = relay_config(relay, ck);
    }
    if let Some(admin) = &raw.admin {
        config.admin = ck
            .required(
                &admin.get_ref().token_file,
                admin.span(),
                "[admin]",
                "token_file",
                "\"/etc/boardscribe/admin.token\"",
            )
            .and_then(|v| ck.non_empty(v, "token_file", "\"/etc/boardscribe/admin.token\""))
            .map(|p| AdminConfig {
                token_file: PathBuf::from(p),
            });
        if ck.files.admin_token
            && let Some(file) = &admin.get_ref().token_file
            && config.admin.is_some()
        {
            ck.admin_token_file(file.span(), file.get_ref().trim());
        }
    }
    if let Some(cluster) = &raw.cluster {
        config.cluster = cluster_config(cluster, ck);
    }
    if let (Some(addr), None) = (config.http, &config.admin)
        && let Some(bind) = raw.http.as_ref().and_then(|h| h.get_ref().bind.as_ref())
        && !addr.ip().is_loopback()
    {
        ck.warn(bind.span(), open_bind_warning(addr));
    }
    // An unknown `tls` value is its own mistake, not a missing one.
    if let Some(addr) = config.http
        && let Some(http) = raw.http.as_ref().map(Spanned::get_ref)
        && let (Some(bind), None) = (&http.bind, &http.tls)
        && !addr.ip().is_loopback()
    {
        ck.at(bind.span(), plain_http_refusal(addr));
    }
    config
}

/// Why the admin token read from `path` is refused, if it is: under [`MIN_TOKEN_BITS`] as
/// [`token_bits`] estimates them (`config check`, `run` and `demo` given the file by a flag).
pub fn weak_admin_token(path: &str, token: &str) -> Option<String> {
    let bits = token_bits(token);
    (bits < MIN_TOKEN_BITS).then(|| {
        format!(
            "the admin token in {path:?} is too easy to guess: about {bits:.0} bits \
             ({} characters of {}), under the {MIN_TOKEN_BITS:.0} needed; write a random one: \
             openssl rand -hex 32 > {path}",
            token.chars().count(),
            alphabet(token).1
        )
    })
}

/// The fewest bits an admin token may hold: guessing it is then out of reach, whatever the
/// rate.
pub(super) const MIN_TOKEN_BITS: f64 = 128.0;

/// The size of the alphabet `token` draws from, as the classes of characters it uses tell, and
/// their names: hex digits alone 16, digits 10, lowercase 26 (with digits 36), uppercase 26,
/// anything else 33 (the printable ASCII symbols; other characters count as such).
fn alphabet(token: &str) -> (u32, String) {
    let has = |f: fn(&char) -> bool| token.chars().any(|c| f(&c));
    let digits = has(char::is_ascii_digit);
    let lower = has(char::is_ascii_lowercase);
    let upper = has(char::is_ascii_uppercase);
    let other = has(|c| !c.is_ascii_alphanumeric());
    let hex_letters = |c: &char| matches!(c, 'a'..='f' | 'A'..='F');
    let letters_hex = token
        .chars()
        .filter(char::is_ascii_alphabetic)
        .all(|c| hex_letters(&c));
    if !other && letters_hex && !(lower && upper) && (lower || upper) {
        return (16, "hex digits".to_owned());
    }
    let mut size = 0;
    let mut names = Vec::new();
    for (used, n, name) in [
        (digits, 10, "digits"),
        (lower, 26, "lowercase letters"),
        (upper, 26, "uppercase letters"),
        (other, 33, "symbols"),
    ] {
        if used {
            size += n;
            names.push(name);
        }
    }
    (size.max(1), names.join(", "))
}

/// An estimate of the bits of a token as if each character were drawn at random from the
/// classes it uses ([`alphabet`]): length × log2(alphabet). A 32-character hex token
/// (`openssl rand -hex 16`) holds 128, a 4-digit one 13. It cannot see that a long word is
/// not random: it is an upper bound, enough to refuse what is plainly too short.
pub(super) fn token_bits(token: &str) -> f64 {
    let (size, _) = alphabet(token);
    token.chars().count() as f64 * f64::from(size).log2()
}

/// Why `config check` and `run` refuse an HTTP address other machines reach without
/// `[http] tls`.
pub fn plain_http_refusal(addr: SocketAddr) -> String {
    format!(
        "the HTTP server listens on {addr}, reachable from other machines, in plain HTTP (the \
         daemon has no TLS): the admin token and the console's session cross the network \
         readable; bind 127.0.0.1 behind a reverse proxy that terminates TLS, or say how other \
         machines reach it: tls = \"proxy\" (a reverse proxy in front terminates TLS) or \
         tls = \"none\" (plain HTTP on this network, knowingly) in [http]"
    )
}

/// What `config check` and `run` say of an HTTP address other machines reach with no admin
/// token.
pub fn open_bind_warning(addr: SocketAddr) -> String {
    format!(
        "the HTTP server listens on {addr}, reachable from other machines, and no admin token \
         is set ([admin] token_file): the live page and feeds are open to the network (/metrics \
         to this machine only) and the admin API is off; bind 127.0.0.1 behind a reverse \
         proxy, or set a token"
    )
}

pub(super) fn http_bind(http: &Spanned<RawHttp>, ck: &mut Checker<'_>) -> Option<SocketAddr> {
    let Some(bind) = &http.get_ref().bind else {
        return DEFAULT_HTTP_BIND.parse().ok();
    };
    match bind.get_ref().trim().parse::<SocketAddr>() {
        Ok(a) => Some(a),
        Err(_) => {
            ck.at(
                bind.span(),
                format!(
                    "invalid bind address {:?}; valid: an IP address and port such as \
                     127.0.0.1:8080, 0.0.0.0:80 or [::]:8080",
                    bind.get_ref()
                ),
            );
            None
        }
    }
}

/// `[http] tls`, when given: `proxy` or `none`.
fn http_tls(http: &Spanned<RawHttp>, ck: &mut Checker<'_>) -> Option<HttpTls> {
    let tls = http.get_ref().tls.as_ref()?;
    let found = HttpTls::ALL
        .into_iter()
        .find(|t| t.as_str() == tls.get_ref().trim());
    if found.is_none() {
        ck.at(
            tls.span(),
            format!(
                "unknown value {:?} for tls; valid: proxy (a reverse proxy in front terminates \
                 TLS), none (plain HTTP on this network, knowingly)",
                tls.get_ref()
            ),
        );
    }
    found
}

/// A date key: a TOML date (`2026-12-02`) or a string of one, as `YYYY-MM-DD`.
fn date(value: &Spanned<toml::Value>, key: &str, ck: &mut Checker<'_>) -> Option<String> {
    let text = match value.get_ref() {
        toml::Value::Datetime(d) if d.time.is_none() && d.offset.is_none() => d.to_string(),
        toml::Value::String(s) => s.trim().to_owned(),
        _ => String::new(),
    };
    match text.parse::<jiff::civil::Date>() {
        Ok(d) if text.len() == 10 => Some(d.to_string()),
        _ => {
            ck.at(
                value.span(),
                format!(
                    "{key} {} is not a date; valid: a day as YYYY-MM-DD, e.g. {key} = 2026-12-02",
                    value.get_ref()
                ),
            );
            None
        }
    }
}

pub(super) fn tournament(t: &RawTournament, ck: &mut Checker<'_>) -> Tournament {
    let mut out = Tournament {
        event: t.event.clone(),
        site: t.site.clone(),
        ..Tournament::default()
    };
    if let Some(round) = &t.round {
        // The store numbers rounds 1, 2, ...: `run` can start no other (a "3.1" is refused
        // here, where `config check` sees it too).
        out.round = match round.get_ref() {
            toml::Value::Integer(n) if *n >= 1 && u32::try_from(*n).is_ok() => Some(n.to_string()),
            toml::Value::String(s) if s.trim().parse::<u32>().is_ok_and(|n| n >= 1) => {
                Some(s.trim().to_owned())
            }
            other => {
                ck.at(
                    round.span(),
                    format!(
                        "round {other} is not a round number; valid: a whole number of 1 or \
                         more, e.g. round = 3"
                    ),
                );
                None
            }
        };
    }
    out.start_date = t
        .start_date
        .as_ref()
        .and_then(|d| date(d, "start_date", ck));
    out.end_date = t.end_date.as_ref().and_then(|d| date(d, "end_date", ck));
    if let (Some(start), Some(end), Some(at)) = (&out.start_date, &out.end_date, &t.end_date)
        && end < start
    {
        ck.at(
            at.span(),
            format!("end_date {end} is before start_date {start}"),
        );
    }
    if let Some(tc) = &t.time_control {
        match tc.get_ref().parse::<TimeControl>() {
            Ok(tc) => out.time_control = Some(tc),
            Err(e) => ck.at(tc.span(), e.to_string()),
        }
    }
    if let Some(laws) = &t.laws {
        match laws.get_ref().parse::<Laws>() {
            Ok(l) => out.laws = l,
            Err(_) => ck.at(
                laws.span(),
                format!(
                    "unknown laws edition {:?}; valid: {}",
                    laws.get_ref(),
                    list(&Laws::ALL, Laws::as_str)
                ),
            ),
        }
    }
    if let Some(f) = &t.federation {
        match Federation::ALL
            .iter()
            .find(|v| v.as_str() == f.get_ref().trim().to_ascii_lowercase())
        {
            Some(&v) => out.federation = v,
            None => ck.at(
                f.span(),
                format!(
                    "unknown federation {:?}; valid: {}",
                    f.get_ref(),
                    list(&Federation::ALL, Federation::as_str)
                ),
            ),
        }
    }
    if let Some(v) = &t.variant {
        match v.get_ref().parse::<Variant>() {
            Ok(v) => out.variant = v,
            Err(_) => ck.at(
                v.span(),
                format!(
                    "unknown variant {:?}; valid: {}",
                    v.get_ref(),
                    list(&Variant::ALL, Variant::as_str)
                ),
            ),
        }
    }
    if let Some(l) = &t.language {
        match l.get_ref().parse::<crate::lang::Lang>() {
            Ok(l) => out.language = l,
            Err(e) => ck.at(l.span(), e),
        }
    }
    if let Some(n) = &t.notation {
        match n.get_ref().parse::<Notation>() {
            Ok(notation) => {
                out.notation = notation;
                // FIDE Appendix C: national letters where the language gives them; where it
                // gives none to print, the sheets print figurines (works, but may not be meant).
                if let Some(reason) = notation.local_falls_back(out.language) {
                    ck.warn(
                        n.span(),
                        format!(
                            "notation = \"local\" with language = \"{}\": {}'s {reason}, so the \
                             sheets print figurines; write notation = \"figurine\" to say so, or \
                             \"san\" for English letters",
                            out.language,
                            out.language.english_name()
                        ),
                    );
                }
            }
            Err(e) => ck.at(n.span(), e.to_string()),
        }
    }
    if let Some(names) = &t.tiebreaks {
        match crate::standings::parse_tiebreaks(names.get_ref()) {
            Ok(list) => out.tiebreaks = super::Tiebreaks(list),
            Err(e) => ck.at(names.span(), e.to_string()),
        }
    }
    if let Some(s) = &t.supervision {
        match SUPERVISIONS
            .iter()
            .find(|v| v.as_str() == s.get_ref().trim())
        {
            Some(&v) => out.supervision = v,
            None => ck.at(
                s.span(),
                format!(
                    "unknown supervision {:?}; valid: {}",
                    s.get_ref(),
                    list(&SUPERVISIONS, Supervision::as_str)
                ),
            ),
        }
    }
    out
}

pub(super) fn laws(
    t: &Tournament,
    raw_t: Option<&RawTournament>,
    overrides: &Option<Spanned<LawsOverrides>>,
    ck: &mut Checker<'_>,
) -> LawsConfig {
    let mut cfg = match overrides {
        Some(o) => {
            let supervision_in_tournament = raw_t.and_then(|r| r.supervision.as_ref());
            if let (Some(_), Some(s)) = (o.get_ref().supervision, supervision_in_tournament) {
                ck.at(
                    s.span(),
                    "supervision is set both here and in [laws]; keep one of the two".to_owned(),
                );
            }
            LawsConfig::preset_with_overrides(t.laws, t.federation, o.get_ref())
        }
        None => LawsConfig::preset(t.laws, t.federation),
    };
    if raw_t.is_some_and(|r| r.supervision.is_some()) {
        cfg.supervision = t.supervision;
    }
    cfg
}
