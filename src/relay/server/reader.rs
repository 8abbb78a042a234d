//! The relay's read side: one read-only connection and what it has rendered since the database
//! last changed (round PGNs, each game's PGN, who sits at each board). Flow: every request
//! refreshes the cache against SQLite's `data_version` (another connection's write — the daemon's
//! writer, the admin API, a command run from another process — drops it) and renders what it
//! asks for once (public renders: the [`PUBLIC_RENDERS`] most recently asked for, as anyone may
//! ask for any slice).

use super::*;
use crate::standings::Standings;

/// A rendered PGN body and its strong entity tag.
#[derive(Clone)]
pub(super) struct Rendered {
    pub(super) body: Bytes,
    pub(super) etag: String,
}

impl Rendered {
    pub(super) fn new(text: String) -> Rendered {
        let hash = fnv(&text);
        Rendered {
            etag: format!("\"{hash:016x}-{:x}\"", text.len()),
            body: Bytes::from(text),
        }
    }
}

/// FNV-1a, 64 bits: with the length, enough to tell two versions of a body apart.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The game a board has in the store, for the page (and its alerts, for the arbiter).
#[derive(Clone, Debug)]
pub(super) struct BoardGame {
    pub(super) id: i64,
    pub(super) seats: Seats,
    pub(super) alerts: Vec<Alert>,
    /// The game has ended (a result is final, or the board closed it).
    pub(super) over: bool,
    /// The position after its last move, if it has one.
    pub(super) last_position: Option<String>,
    /// A game not played (no move, over, a forfeit): its result and termination.
    pub(super) unplayed: Option<(String, Option<String>)>,
}

impl BoardGame {
    /// `g` with its players, and `alerts`.
    fn of(g: &GameRecord, alerts: Vec<Alert>) -> BoardGame {
        BoardGame {
            id: g.id.0,
            seats: Seats {
                round: g.round,
                white: g.player(Side::White),
                black: g.player(Side::Black),
            },
            alerts,
            over: g.ended_at_ms.is_some() || g.result != "*",
            last_position: g.moves.last().map(|m| m.position.clone()),
            unplayed: (g.moves.is_empty()
                && g.ended_at_ms.is_some()
                && crate::store::FORFEITS.contains(&g.result.as_str()))
            .then(|| (g.result.clone(), g.termination.clone())),
        }
    }
}

/// Who sits where: each board's latest game and its players, and the current round's pairings
/// for boards that have no game yet.
#[derive(Debug, Default)]
pub(super) struct Seating {
    pub(super) games: HashMap<String, BoardGame>,
    pub(super) round: Option<u32>,
    pub(super) paired: HashMap<u32, Pairing>,
}

impl Seating {
    /// Board `live`'s game id and seats: its latest game's, else its number's pairing in the
    /// current round. A board whose latest game is over and of an earlier round, and that is
    /// paired in the current round, shows that pairing: it waits for this round's game
    /// ([`Seating::awaits_round`]).
    pub(super) fn of(&self, live: &BoardSnapshot) -> (Option<i64>, Seats) {
        if let Some(g) = self.games.get(&live.name)
            && !self.awaits_round(live)
        {
            return (Some(g.id), g.seats.clone());
        }
        let pairing = live.number.and_then(|n| self.paired.get(&n));
        let seats = Seats {
            round: self.round,
            white: pairing.and_then(|p| p.player(Side::White)),
            black: pairing.and_then(|p| p.player(Side::Black)),
        };
        (None, seats)
    }

    /// Whether board `live` waits for its game of the current round: its latest game is over
    /// and of an earlier round, its number is paired in the current round, and the board shows
    /// that game's last position or none (a board already playing a newer game, which the
    /// store read here does not hold yet, shows that one).
    pub(super) fn awaits_round(&self, live: &BoardSnapshot) -> bool {
        let Some(g) = self.games.get(&live.name) else {
            return false;
        };
        let earlier =
            matches!((g.seats.round, self.round), (Some(played), Some(now)) if played < now);
        let paired = live.number.is_some_and(|n| self.paired.contains_key(&n));
        let shows_it = live.ply == 0 || g.last_position.as_deref() == Some(live.fen.as_str());
        g.over && earlier && paired && shows_it
    }
}

/// What the read connection has rendered since the database last changed.
#[derive(Default)]
pub(super) struct ReaderState {
    pub(super) store: Option<Store>,
    pub(super) version: Option<i64>,
    pub(super) games: Option<Arc<Vec<GameRecord>>>,
    pub(super) round: Option<Rendered>,
    /// `/rounds/N.pgn`, by round.
    pub(super) rounds: HashMap<u32, Rendered>,
    pub(super) per_game: HashMap<GameId, Option<Rendered>>,
    pub(super) boards: Option<Arc<Seating>>,
    /// How public outputs show the games (delay, comments), and how every PGN it renders
    /// writes `[%clk]`.
    pub(super) publication: Publication,
    /// Public renders, by what was asked, with the second they show (they change as time passes:
    /// the delay's window slides, the running clock runs); the most recently used only, as
    /// anyone may ask for any slice.
    pub(super) public: Recent<(Millis, Rendered)>,
    /// The standings: the arbiter's (every result) and the public's with the second they show
    /// (a result comes out of the delay as time passes); both dropped when the database changes.
    pub(super) standings_all: Option<Arc<Standings>>,
    pub(super) standings_public: Option<(Millis, Arc<Standings>)>,
}

/// How many public renders are kept: a broadcast asks for a few slices, a crawler for any.
const PUBLIC_RENDERS: usize = 64;

/// A map of at most `bound` entries by text key; inserting into a full one drops the least
/// recently used (read or written).
pub(super) struct Recent<V> {
    entries: HashMap<String, (u64, V)>,
    /// Counts every use; an entry keeps the count of its last.
    uses: u64,
    bound: usize,
}

impl<V> Default for Recent<V> {
    fn default() -> Self {
        Recent::with_bound(PUBLIC_RENDERS)
    }
}

impl<V> Recent<V> {
    /// An empty map that keeps at most `bound` entries (at least one).
    pub(super) fn with_bound(bound: usize) -> Self {
        Recent {
            entries: HashMap::new(),
            uses: 0,
            bound: bound.max(1),
        }
    }

    /// The entry for `key`, now the most recently used.
    pub(super) fn get(&mut self, key: &str) -> Option<&V> {
        self.uses += 1;
        let uses = self.uses;
        self.entries.get_mut(key).map(|(used, v)| {
            *used = uses;
            &*v
        })
    }

    /// Keeps `value` for `key`, dropping the least recently used entry if the map is full.
    pub(super) fn insert(&mut self, key: String, value: V) {
        self.uses += 1;
        if self.entries.len() >= self.bound && !self.entries.contains_key(&key) {
            // A scan: the bound is small, and an insert follows a render, which costs far more.
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, (self.uses, value));
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn clear(&mut self) {
        self.entries.clear();
    }
}

/// What a PGN request asks for.
#[derive(Clone, Debug)]
pub(super) enum PgnAsk {
    /// The current round (every game while no round is set).
    Round,
    /// Round `n`.
    RoundN(u32),
    /// One game.
    Game(GameId),
}

impl ReaderState {
    /// `f` over one read transaction, so that every query it makes sees the same commits. A
    /// failure drops the connection: the next read opens it anew.
    pub(super) fn in_snapshot<T>(
        &mut self,
        db: &Path,
        f: impl Fn(&mut ReaderState, &Path) -> Result<T, RelayError>,
    ) -> Result<T, RelayError> {
        let result = self
            .refresh(db)
            .and_then(|()| Ok(self.store()?.begin_read()?))
            .and_then(|()| {
                let read = f(self, db);
                let ended = self.store()?.end_read();
                let read = read?;
                ended?;
                Ok(read)
            });
        if result.is_err() {
            self.store = None;
        }
        result
    }

    /// Opens the connection if needed and drops the cache if another connection committed.
    pub(super) fn refresh(&mut self, db: &Path) -> Result<(), RelayError> {
        let store = match self.store.take() {
            Some(store) => store,
            None => Store::open_read_only(db)?,
        };
        // A connection that fails is opened anew next time.
        let version = store.data_version()?;
        if self.version != Some(version) {
            self.version = Some(version);
            self.games = None;
            self.round = None;
            self.rounds.clear();
            self.per_game.clear();
            self.boards = None;
            self.public.clear();
            self.standings_all = None;
            self.standings_public = None;
        }
        self.store = Some(store);
        Ok(())
    }

    /// The event's standings: from the whole record for the arbiter (`public_at: None`), else
    /// from the games as the public sees them at that moment ([`public::view`]: a result the
    /// delay still hides counts for nothing yet). Kept until the database changes (the
    /// public's, with a delay, for the second it shows).
    pub(super) fn standings(
        &mut self,
        db: &Path,
        public_at: Option<Millis>,
    ) -> Result<Arc<Standings>, RelayError> {
        self.refresh(db)?;
        let stamp = public_at.map(|now_ms| match self.publication.cutoff(now_ms) {
            Some(_) => now_ms / 1000,
            None => 0,
        });
        match (stamp, &self.standings_all, &self.standings_public) {
            (None, Some(all), _) => return Ok(all.clone()),
            (Some(at), _, Some((shown, s))) if *shown == at => return Ok(s.clone()),
            _ => {}
        }
        let games = match public_at {
            None => self.games(db)?,
            Some(now_ms) => {
                let publication = self.publication;
                Arc::new(public::view(
                    self.store()?,
                    public::Shown::Every,
                    &publication,
                    now_ms,
                )?)
            }
        };
        let store = self.store()?;
        let field = store.standings_field(&games)?;
        let standings = Arc::new(crate::standings::standings(
            &field,
            &store.event_tiebreaks()?,
        )?);
        match stamp {
            None => self.standings_all = Some(standings.clone()),
            Some(at) => self.standings_public = Some((at, standings.clone())),
        }
        Ok(standings)
    }

    /// The event as a TRF-16, from the whole record (the arbiter's).
    pub(super) fn trf(&mut self, db: &Path) -> Result<String, RelayError> {
        self.refresh(db)?;
        Ok(crate::export::event_trf(self.store()?)?)
    }

    pub(super) fn store(&self) -> Result<&Store, RelayError> {
        self.store.as_ref().ok_or(RelayError::NoReader)
    }

    pub(super) fn games(&mut self, db: &Path) -> Result<Arc<Vec<GameRecord>>, RelayError> {
        self.refresh(db)?;
        if let Some(games) = &self.games {
            return Ok(games.clone());
        }
        let games = Arc::new(self.store()?.games()?);
        self.games = Some(games.clone());
        Ok(games)
    }

    pub(super) fn round(&mut self, db: &Path) -> Result<Rendered, RelayError> {
        let games = self.games(db)?;
        if let Some(r) = &self.round {
            return Ok(r.clone());
        }
        let style = PgnStyle::internal(self.publication.clk);
        let text = match self.store()?.round_info()? {
            Some(info) => {
                let games = self.store()?.round_games(info.round)?;
                write_pgn(round::broadcast_games(&games, info.round), &style)
            }
            None => write_pgn(games.iter(), &style),
        };
        let rendered = Rendered::new(text);
        self.round = Some(rendered.clone());
        Ok(rendered)
    }

    /// Round `n` as a broadcast reads it (one game per board), whether current or past.
    pub(super) fn round_n(&mut self, db: &Path, n: u32) -> Result<Rendered, RelayError> {
        self.refresh(db)?;
        if let Some(r) = self.rounds.get(&n) {
            return Ok(r.clone());
        }
        let games = self.store()?.round_games(n)?;
        let text = write_pgn(
            round::broadcast_games(&games, n),
            &PgnStyle::internal(self.publication.clk),
        );
        let rendered = Rendered::new(text);
        self.rounds.insert(n, rendered.clone());
        Ok(rendered)
    }

    pub(super) fn game(&mut self, db: &Path, id: GameId) -> Result<Option<Rendered>, RelayError> {
        self.refresh(db)?;
        if let Some(r) = self.per_game.get(&id) {
            return Ok(r.clone());
        }
        let rendered = self
            .store()?
            .game(id)?
            .map(|g| Rendered::new(write_pgn([&g], &PgnStyle::internal(self.publication.clk))));
        self.per_game.insert(id, rendered.clone());
        Ok(rendered)
    }

    /// What spectators get for `ask` at `now_ms`: each game as it stood the delay ago, with
    /// moves, clocks and results (the venue's comments only if it publishes them), the boards
    /// in `range` only if given. `None`: no such game.
    pub(super) fn public_pgn(
        &mut self,
        db: &Path,
        ask: &PgnAsk,
        range: Option<&BoardRange>,
        now_ms: Millis,
        live: &HashMap<String, (u64, u64)>,
    ) -> Result<Option<Rendered>, RelayError> {
        self.refresh(db)?;
        let key = format!(
            "{ask:?}/{}",
            range.map(ToString::to_string).unwrap_or_default()
        );
        let cutoff = self.publication.cutoff(now_ms);
        // What the body depends on besides the store: the second shown (delayed), else the
        // boards' clocks.
        let stamp = match cutoff {
            Some(_) => now_ms / 1000,
            None => {
                let mut clocks: Vec<_> = live.iter().collect();
                clocks.sort();
                fnv(&format!("{clocks:?}"))
            }
        };
        if let Some((at, r)) = self.public.get(&key)
            && *at == stamp
        {
            return Ok(Some(r.clone()));
        }
        let style = self.publication.style(now_ms, live);
        let store = self.store()?;
        let publication = self.publication;
        let view = |shown| public::view(store, shown, &publication, now_ms);
        let round = |n: u32, games: &[GameRecord]| {
            let picked = round::broadcast_games(games, n);
            let picked = match range {
                Some(r) => r.select(&picked),
                None => picked,
            };
            write_pgn(picked, &style)
        };
        let text = match ask {
            PgnAsk::Round => match store.round_info()? {
                Some(info) => round(info.round, &view(Shown::Round(info.round))?),
                None => {
                    let games = view(Shown::Every)?;
                    let all: Vec<&GameRecord> = games.iter().collect();
                    match range {
                        Some(r) => write_pgn(r.select(&all), &style),
                        None => write_pgn(all, &style),
                    }
                }
            },
            PgnAsk::RoundN(n) => round(*n, &view(Shown::Round(*n))?),
            PgnAsk::Game(id) => match view(Shown::Game(*id))?.first() {
                Some(g) => write_pgn([g], &style),
                None => return Ok(None),
            },
        };
        let rendered = Rendered::new(text);
        self.public.insert(key, (stamp, rendered.clone()));
        Ok(Some(rendered))
    }

    pub(super) fn boards(&mut self, db: &Path) -> Result<Arc<Seating>, RelayError> {
        let games = self.games(db)?;
        if let Some(b) = &self.boards {
            return Ok(b.clone());
        }
        let mut seating = Seating::default();
        // By id: the board's latest game wins.
        for g in games.iter() {
            seating.games.insert(
                g.board_name.clone(),
                BoardGame::of(g, alerts::game_alerts(g)),
            );
        }
        if let Some(info) = self.store()?.round_info()? {
            seating.round = Some(info.round);
            for p in self.store()?.pairings(info.round)? {
                seating.paired.insert(p.board, p);
            }
        }
        let boards = Arc::new(seating);
        self.boards = Some(boards.clone());
        Ok(boards)
    }

    /// Who sits where as spectators see a delayed broadcast: each board's game the delayed view
    /// names (`named`, by board name: [`crate::relay::delayed`] names a game once it began the
    /// delay ago, which is when it shows the game before it over), else the current round's
    /// pairing. No alerts (spectators see none).
    pub(super) fn delayed_boards(
        &mut self,
        db: &Path,
        named: &HashMap<String, i64>,
    ) -> Result<Arc<Seating>, RelayError> {
        let all = self.boards(db)?;
        let games = self.games(db)?;
        let mut seating = Seating {
            games: HashMap::new(),
            round: all.round,
            paired: all.paired.clone(),
        };
        for g in games.iter() {
            if named.get(&g.board_name) == Some(&g.id.0) {
                seating
                    .games
                    .insert(g.board_name.clone(), BoardGame::of(g, Vec::new()));
            }
        }
        Ok(Arc::new(seating))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_keeps_its_bound_and_the_most_recently_used() {
        let mut recent = Recent::with_bound(3);
        for k in ["a", "b", "c"] {
            recent.insert(k.to_owned(), k.to_uppercase());
        }
        // "a" read: "b" is now the least recently used, and goes when "d" comes.
        assert_eq!(recent.get("a").map(String::as_str), Some("A"));
        recent.insert("d".into(), "D".into());
        assert_eq!(recent.len(), 3);
        assert!(recent.get("b").is_none());
        for k in ["a", "c", "d"] {
            assert!(recent.get(k).is_some(), "{k} was dropped");
        }
        // Writing a key again replaces it in place, dropping nothing.
        recent.insert("c".into(), "C2".into());
        assert_eq!(recent.len(), 3);
        assert_eq!(recent.get("c").map(String::as_str), Some("C2"));
        // Many distinct keys (a crawler's slices): never more than the bound, the last ones kept.
        let mut recent = Recent::default();
        for i in 0..2000 {
            recent.insert(format!("/round.pgn?boards={i}"), i);
            assert!(recent.len() <= PUBLIC_RENDERS);
        }
        assert_eq!(recent.len(), PUBLIC_RENDERS);
        for i in 2000 - PUBLIC_RENDERS..2000 {
            assert_eq!(recent.get(&format!("/round.pgn?boards={i}")), Some(&i));
        }
        assert!(recent.get("/round.pgn?boards=0").is_none());
        recent.clear();
        assert_eq!(recent.len(), 0);
    }
}
