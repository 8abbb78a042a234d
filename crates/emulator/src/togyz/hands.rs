//! The hands on a togyz board: the sensors' debounced pit counts and the changes a player's hand
//! makes (taking korgools, sowing them one by one, carrying a capture to the store), as reports.

use super::*;

/// The player a game side's marker reads as on the board.
pub(super) fn board_player(side: Side, rotated: bool) -> Side {
    if rotated { side.other() } else { side }
}

pub(super) fn color(side: Side) -> Color {
    match side {
        Side::White => Color::White,
        Side::Black => Color::Black,
    }
}

/// A physical change made by a hand, in game numbering.
#[derive(Clone, Copy, Debug)]
pub(super) enum Change {
    Pit { loc: usize, delta: i16 },
    Marker { side: Side, pit: u8 },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Act {
    pub(super) t: Millis,
    pub(super) change: Change,
    pub(super) action: TogyzAction,
}

/// A sensor report, in game numbering, before wire spacing.
#[derive(Clone, Copy, Debug)]
pub(super) struct Report {
    pub(super) t: Millis,
    pub(super) change: Report1,
    pub(super) action: TogyzAction,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Report1 {
    Pit { loc: usize, count: u8 },
    Marker { side: Side, pit: u8 },
}

/// The load cells: location `i` is read at `phase + i * period / 20 + k * period`.
pub(super) struct Sensors {
    pub(super) period_ms: Millis,
    pub(super) phase_ms: Millis,
}

impl Sensors {
    /// The first reading of `loc` at or after `t`.
    pub(super) fn next_scan(&self, loc: usize, t: Millis) -> Millis {
        let off = self.phase_ms + loc as u64 * self.period_ms / LOCATIONS as u64;
        if t <= off {
            off
        } else {
            off + (t - off).div_ceil(self.period_ms) * self.period_ms
        }
    }

    /// Reports for `acts` on a board that read `before` (game numbering) when they began: a pit
    /// change once it has lasted the debounce and settled, at its next scan, in order per
    /// location; a marker on its reed switch a little later. Sorted by time.
    pub(super) fn reports(
        &self,
        rng: &mut ChaCha8Rng,
        acts: &[Act],
        before: &[u8; LOCATIONS],
        last: &mut [Millis; LOCATIONS],
    ) -> Result<Vec<Report>, String> {
        let mut acts = acts.to_vec();
        acts.sort_by_key(|a| a.t);
        let mut counts = before.map(i16::from);
        let mut out = Vec::with_capacity(acts.len());
        for a in &acts {
            match a.change {
                Change::Pit { loc, delta } => {
                    counts[loc] += delta;
                    let count = u8::try_from(counts[loc])
                        .map_err(|_| format!("location {loc} would hold {}", counts[loc]))?;
                    let settle = rng.random_range(0..=60);
                    let t = self
                        .next_scan(loc, a.t + DEBOUNCE_MS + settle)
                        .max(last[loc] + self.period_ms);
                    last[loc] = t;
                    out.push(Report {
                        t,
                        change: Report1::Pit { loc, count },
                        action: a.action,
                    });
                }
                Change::Marker { side, pit } => out.push(Report {
                    t: a.t + rng.random_range(20..=60),
                    change: Report1::Marker { side, pit },
                    action: a.action,
                }),
            }
        }
        out.sort_by_key(|r| r.t);
        Ok(out)
    }
}

/// How one ply's sowing went: when the hands were done and whether they were quick.
pub(super) struct Sown {
    pub(super) t: Millis,
    pub(super) fast: bool,
}

/// The hands' state: what lies where (game numbering), the markers, the time, the acts so far.
pub(super) struct Hands<'a> {
    pub(super) rng: &'a mut ChaCha8Rng,
    pub(super) speed: f64,
    pub(super) raw: [u8; LOCATIONS],
    pub(super) markers: [u8; 2],
    pub(super) acts: Vec<Act>,
}

impl Hands<'_> {
    pub(super) fn dur(&mut self, lo: u64, hi: u64) -> Millis {
        scale(self.rng.random_range(lo..=hi), self.speed)
    }

    pub(super) fn pit(&mut self, t: Millis, loc: usize, delta: i16, action: TogyzAction) {
        let v = i16::from(self.raw[loc]) + delta;
        self.raw[loc] = u8::try_from(v).unwrap_or(0);
        self.acts.push(Act {
            t,
            change: Change::Pit { loc, delta },
            action,
        });
    }

    pub(super) fn marker(&mut self, t: Millis, side: Side, pit: u8) {
        self.markers[side.index()] = pit;
        self.acts.push(Act {
            t,
            change: Change::Marker { side, pit },
            action: TogyzAction::Marker,
        });
    }

    /// The location of `owner`'s tuz pit, if he has a marker down.
    pub(super) fn tuz_loc(&self, owner: Side) -> Option<usize> {
        let pit = self.markers[owner.index()];
        (1..=9)
            .contains(&pit)
            .then(|| Board::location(owner.other(), pit))
    }

    /// Carries what lies in `owner`'s tuz to his store at `t`: the pit empties, then the store
    /// rises. Returns the time of the last act, or `None` if there was nothing to carry.
    pub(super) fn carry(&mut self, t: Millis, owner: Side) -> Option<Millis> {
        let loc = self.tuz_loc(owner)?;
        let n = self.raw[loc];
        if n == 0 {
            return None;
        }
        self.pit(t, loc, -i16::from(n), TogyzAction::Carry);
        let t2 = t + self.dur(200, 500);
        self.pit(t2, STORE + owner.index(), i16::from(n), TogyzAction::Carry);
        Some(t2)
    }

    /// The start pit lifted from `t` and its korgools sown (the first back into it when there
    /// are two or more), maybe quickly; a hand may rest on a pit just sown.
    pub(super) fn sow(
        &mut self,
        mut t: Millis,
        side: Side,
        mv: Move,
        sowing: &Sowing,
        styles: &mut Vec<TogyzStyle>,
    ) -> Result<Sown, String> {
        let hands = self;
        let start_loc = Board::location(side, mv.pit());
        let n = hands.raw[start_loc];
        if n == 0 {
            return Err("the start pit is empty".into());
        }
        hands.pit(t, start_loc, -i16::from(n), TogyzAction::Lift);
        let fast = hands.rng.random_bool(0.3);
        if fast {
            styles.push(TogyzStyle::FastHand);
        }
        t += hands.dur(250, 500);
        let mut drops = Vec::new();
        let mut loc = start_loc;
        let sown = if n == 1 {
            1
        } else {
            drops.push((t, start_loc));
            hands.pit(t, start_loc, 1, TogyzAction::Sow);
            n - 1
        };
        for _ in 0..sown {
            t += if fast {
                hands.dur(50, 140)
            } else {
                hands.dur(150, 350)
            };
            loc = (loc + 1) % PIT_LOCATIONS;
            drops.push((t, loc));
            hands.pit(t, loc, 1, TogyzAction::Sow);
        }
        if usize::from(sowing.landing) != loc {
            return Err(format!(
                "the last korgool fell in location {loc}, the rules say {}",
                sowing.landing
            ));
        }
        // A hand resting on a pit just sown, for a moment.
        if hands.rng.random_bool(0.2) {
            let (dt, dl) = drops[hands.rng.random_range(0..drops.len())];
            let k = hands.rng.random_range(1..=2);
            let on = dt + hands.dur(20, 60);
            let off = on + scale(hands.rng.random_range(100..=400), hands.speed).max(60);
            hands.pit(on, dl, k, TogyzAction::Rest);
            hands.pit(off, dl, -k, TogyzAction::Rest);
            styles.push(TogyzStyle::RestingHand);
            // The hand leaves the pit before it takes anything.
            t = t.max(off);
        }
        Ok(Sown { t, fast })
    }

    /// From `t`, a new tuz (its marker set before or after its three korgools go to the store,
    /// or they are left under it) or a capture carried to the store (in one or two handfuls);
    /// when the hands are done.
    pub(super) fn take(
        &mut self,
        mut t: Millis,
        side: Side,
        sowing: &Sowing,
        styles: &mut Vec<TogyzStyle>,
    ) -> Result<Millis, String> {
        let hands = self;
        let landing = usize::from(sowing.landing);
        let store = STORE + side.index();
        if sowing.tuz_created {
            let t1 = t + hands.dur(300, 900);
            if hands.rng.random_bool(0.5) {
                styles.push(TogyzStyle::MarkerFirst);
                hands.marker(t1, side, sowing.landing_pit());
                t = t1;
                if hands.rng.random_bool(0.5) {
                    styles.push(TogyzStyle::LeftInTuz);
                } else {
                    let at = t1 + hands.dur(300, 700);
                    t = hands.carry(at, side).unwrap_or(t1);
                }
            } else {
                let c = i16::from(hands.raw[landing]);
                hands.pit(t1, landing, -c, TogyzAction::Capture);
                let t2 = t1 + hands.dur(200, 500);
                hands.pit(t2, store, c, TogyzAction::Capture);
                t = t2 + hands.dur(300, 800);
                hands.marker(t, side, sowing.landing_pit());
            }
        } else if sowing.captured > 0 {
            let c = i16::from(sowing.captured);
            if i16::from(hands.raw[landing]) != c {
                return Err(format!(
                    "the landing pit holds {}, the capture is {c}",
                    hands.raw[landing]
                ));
            }
            let t1 = t + hands.dur(250, 700);
            hands.pit(t1, landing, -c, TogyzAction::Capture);
            t = t1 + hands.dur(200, 500);
            if c >= 2 && hands.rng.random_bool(0.4) {
                styles.push(TogyzStyle::Handfuls);
                let a = hands.rng.random_range(1..c);
                hands.pit(t, store, a, TogyzAction::Capture);
                t += hands.dur(200, 450);
                hands.pit(t, store, c - a, TogyzAction::Capture);
            } else {
                hands.pit(t, store, c, TogyzAction::Capture);
            }
        }
        Ok(t)
    }
}
