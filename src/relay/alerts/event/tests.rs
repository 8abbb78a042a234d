use serde_json::json;

use super::*;

/// 10:00:00 UTC (on 1970-01-01).
const TEN: Millis = 36_000_000;

/// The words the event node wrote before its alerts were typed: its `format!`s as they were
/// (src/cluster/health.rs), the English the admin API has served, held word for word.
mod before {
    use super::*;

    pub fn silent(hall: &str, at: Millis) -> String {
        format!(
            "hall {hall} has not been heard since {} UTC: its PC, its boardscribe or \
             its network to the NATS servers is down",
            time_of_day(at)
        )
    }

    pub fn silent_since_start(hall: &str, started_ms: Millis) -> String {
        format!(
            "hall {hall} has not been heard since the event node started ({} UTC): it \
             is not running, or cannot reach the NATS servers",
            time_of_day(started_ms)
        )
    }

    pub const SILENT_ADVICE: &str = "check the hall's PC, `systemctl status boardscribe` there and its \
                         network; the hall keeps recording into its own database meanwhile, \
                         and its records arrive when it is back. Watch its boards from the \
                         hall's own console until then";

    pub fn databases(hall: &str, origins: &[&str]) -> String {
        format!(
            "{} databases publish as hall {hall} (origins {}): only one can",
            origins.len(),
            origins.join(", ")
        )
    }

    pub fn cannot_publish(why: &str) -> String {
        format!("the hall cannot publish: {why}")
    }

    pub fn refused(why: &str) -> String {
        format!("the event node refuses its records: {why}")
    }

    pub fn stalled(hall: &str, whys: &[String]) -> String {
        format!(
            "hall {hall}'s records stop reaching the event: {}",
            whys.join("; ")
        )
    }

    pub const STALLED_ADVICE: &str = "the hall keeps recording into its own database. Give each hall PC \
                         its own name ([cluster] hall); a hall whose database was replaced \
                         records under a new name, and its old database is published again \
                         under a name of its own with `boardscribe cluster republish` (docs/operations.md, \
                         \"A hall's PC replaced\")";

    pub fn outbox(
        hall: &str,
        depth: u64,
        oldest: Millis,
        at_ms: Millis,
        failure: Option<&str>,
    ) -> String {
        let waiting = at_ms.saturating_sub(oldest);
        format!(
            "hall {hall} holds {} records the NATS servers have not taken, the oldest \
             from {} UTC ({} s ago){}",
            depth,
            time_of_day(oldest),
            waiting / 1000,
            failure.map_or(String::new(), |why| format!(": {why}"))
        )
    }

    pub const OUTBOX_ADVICE: &str = "the hall keeps recording and sends them once the servers take them: \
                         check the NATS servers (disk space, the stream's limits, the hall's \
                         permissions) and their log";

    pub fn not_followed(hall: &str) -> (String, String) {
        (
            format!(
                "hall {hall} publishes its records, but the event node does not follow \
                 it: its boards are missing from the event"
            ),
            format!(
                "add \"{hall}\" to [cluster] halls in the event node's configuration and \
                 restart it (nothing is lost: the hall's stream keeps every record); or, \
                 if the hall's name is a mistake, correct [cluster] hall on that PC"
            ),
        )
    }

    pub fn number(board: &str, number: i64, holder: Option<&str>) -> (String, String) {
        match holder {
            Some(holder) => (
                format!(
                    "board {} has number {} in its hall, but board {holder} of the event \
                     already has it: {} is shown and published without a number",
                    board, number, board
                ),
                "number the boards across the event, each hall its own range: renumber \
                 one of the two boards in its hall (its configuration, or its pairings)"
                    .to_owned(),
            ),
            None => (
                format!(
                    "board {} has number {} in its hall; another board of the event had \
                     it, and it is free now, but {} is still shown without a number",
                    board, number, board
                ),
                "renumber the board in its hall (its configuration, or its pairings): it \
                 takes its number then"
                    .to_owned(),
            ),
        }
    }
}

const BUSY: &str = "another database publishes as hall B (origin b2)";
const MISSING: &str = "record 9 of hall B is missing";
const LIMIT: &str = "maximum messages exceeded";

fn stalled(reasons: Vec<StallReason>) -> EventFault {
    EventFault::HallStalled {
        hall: "B".into(),
        reasons,
    }
}

fn databases() -> StallReason {
    StallReason::Databases {
        origins: vec!["b1".into(), "b2".into()],
    }
}

fn outbox(failure: Option<&str>) -> EventFault {
    EventFault::HallOutboxGrowing {
        hall: "D".into(),
        records: 40,
        oldest_ms: TEN,
        waiting_ms: 12_345,
        failure: failure.map(str::to_owned),
    }
}

fn number(holder: Option<&str>) -> EventFault {
    EventFault::BoardNumberTaken {
        board: "B/B7".into(),
        number: 7,
        holder: holder.map(str::to_owned),
    }
}

/// Every kind, in each of its forms: the fault, and its English as the event node wrote it
/// before (detail, advice).
fn every_kind() -> Vec<(EventFault, String, String)> {
    let advice = |s: &str| s.to_owned();
    let (not_followed, not_followed_advice) = before::not_followed("C");
    let (taken, taken_advice) = before::number("B/B7", 7, Some("A/A7"));
    let (free, free_advice) = before::number("B/B7", 7, None);
    vec![
        (
            EventFault::HallSilent {
                hall: "B".into(),
                since_ms: TEN,
                heard: true,
            },
            before::silent("B", TEN),
            advice(before::SILENT_ADVICE),
        ),
        (
            EventFault::HallSilent {
                hall: "B".into(),
                since_ms: TEN,
                heard: false,
            },
            before::silent_since_start("B", TEN),
            advice(before::SILENT_ADVICE),
        ),
        (
            stalled(vec![databases()]),
            before::stalled("B", &[before::databases("B", &["b1", "b2"])]),
            advice(before::STALLED_ADVICE),
        ),
        (
            stalled(vec![StallReason::CannotPublish { why: BUSY.into() }]),
            before::stalled("B", &[before::cannot_publish(BUSY)]),
            advice(before::STALLED_ADVICE),
        ),
        (
            stalled(vec![StallReason::Refused {
                why: MISSING.into(),
            }]),
            before::stalled("B", &[before::refused(MISSING)]),
            advice(before::STALLED_ADVICE),
        ),
        (
            stalled(vec![
                databases(),
                StallReason::CannotPublish { why: BUSY.into() },
                StallReason::Refused {
                    why: MISSING.into(),
                },
            ]),
            before::stalled(
                "B",
                &[
                    before::databases("B", &["b1", "b2"]),
                    before::cannot_publish(BUSY),
                    before::refused(MISSING),
                ],
            ),
            advice(before::STALLED_ADVICE),
        ),
        (
            outbox(None),
            before::outbox("D", 40, TEN, TEN + 12_345, None),
            advice(before::OUTBOX_ADVICE),
        ),
        (
            outbox(Some(LIMIT)),
            before::outbox("D", 40, TEN, TEN + 12_345, Some(LIMIT)),
            advice(before::OUTBOX_ADVICE),
        ),
        (
            EventFault::HallNotFollowed { hall: "C".into() },
            not_followed,
            not_followed_advice,
        ),
        (number(Some("A/A7")), taken, taken_advice),
        (number(None), free, free_advice),
    ]
}

#[test]
fn the_english_of_every_kind_is_word_for_word_what_the_event_node_wrote_before() {
    for (fault, detail, advice) in every_kind() {
        let alert = EventAlert::new(fault.clone(), 5);
        assert_eq!(alert.detail, detail, "{fault:?}");
        assert_eq!(alert.advice, advice, "{fault:?}");
        assert_eq!(alert.detail_in(Lang::En), detail);
        assert_eq!(alert.advice_in(Lang::En), advice);
        assert_eq!(alert.kind, fault.kind());
        assert_eq!(alert.since_ms, 5);
    }
}

/// The values a fault's words carry as they are, in every language.
fn values(fault: &EventFault) -> Vec<String> {
    let mut out = Vec::new();
    match fault {
        EventFault::HallSilent { hall, .. } => {
            out.extend([hall.clone(), "10:00:00".into(), STATUS_COMMAND.into()])
        }
        EventFault::HallStalled { hall, reasons } => {
            out.extend([
                hall.clone(),
                HALL_SETTING.into(),
                REPUBLISH_COMMAND.into(),
                REPLACED_DOC.into(),
            ]);
            for r in reasons {
                match r {
                    StallReason::Databases { origins } => {
                        out.extend([origins.len().to_string(), origins.join(", ")])
                    }
                    StallReason::CannotPublish { why } | StallReason::Refused { why } => {
                        out.push(why.clone())
                    }
                }
            }
        }
        EventFault::HallOutboxGrowing { hall, failure, .. } => {
            out.extend([hall.clone(), "40".into(), "10:00:00".into(), "12".into()]);
            out.extend(failure.clone());
        }
        EventFault::HallNotFollowed { hall } => out.extend([
            format!("\"{hall}\""),
            hall.clone(),
            HALLS_SETTING.into(),
            HALL_SETTING.into(),
        ]),
        EventFault::BoardNumberTaken { board, holder, .. } => {
            out.extend([board.clone(), "7".into()]);
            out.extend(holder.clone());
        }
    }
    out
}

/// Names that stay as they are in every language's words (as the tables' test keeps them).
const NAMES: &[&str] = &["boardscribe", "NATS", "UTC"];

#[test]
fn every_kind_reads_in_every_language_with_every_blank_filled_and_its_values_as_they_are() {
    for (fault, english_detail, english_advice) in every_kind() {
        let alert = EventAlert::new(fault.clone(), 5);
        for lang in Lang::ALL {
            let detail = alert.detail_in(lang);
            let advice = alert.advice_in(lang);
            let both = format!("{detail} | {advice}");
            assert!(
                !both.contains('{') && !both.contains('}'),
                "{lang}: a blank left in {both}"
            );
            for value in values(&fault) {
                assert!(both.contains(&value), "{lang}: {value:?} not in {both}");
            }
            if lang == Lang::En {
                continue;
            }
            assert_ne!(detail, english_detail, "{lang}");
            assert_ne!(advice, english_advice, "{lang}");
            // No English left: without its values and names, no Latin letter.
            let mut bare = both.clone();
            let mut values = values(&fault);
            values.sort_by_key(|v| std::cmp::Reverse(v.len()));
            for value in values {
                bare = bare.replace(&value, "");
            }
            for name in NAMES {
                bare = bare.replace(name, "");
            }
            assert!(
                !bare.chars().any(|c| c.is_ascii_alphabetic()),
                "{lang}: Latin letters left in {both}"
            );
        }
    }
}

#[test]
fn a_stalled_halls_reasons_are_the_languages_list_and_a_value_with_braces_stays_as_it_is() {
    let fault = stalled(vec![
        StallReason::CannotPublish {
            why: "bad {hall} {why} {".into(),
        },
        StallReason::Refused {
            why: MISSING.into(),
        },
    ]);
    let alert = EventAlert::new(fault, 0);
    assert_eq!(
        alert.detail,
        "hall B's records stop reaching the event: the hall cannot publish: bad {hall} {why} {; \
         the event node refuses its records: record 9 of hall B is missing"
    );
    let fa = alert.detail_in(Lang::Fa);
    assert!(fa.contains("bad {hall} {why} {؛ "), "{fa}");
    let ru = alert.detail_in(Lang::Ru);
    assert!(ru.starts_with("записи зала B перестали доходить"), "{ru}");
}

#[test]
fn the_api_serves_the_english_and_the_fault_typed_beside_it() {
    let alert = EventAlert::new(
        stalled(vec![
            databases(),
            StallReason::Refused {
                why: MISSING.into(),
            },
        ]),
        1_000,
    );
    let value = serde_json::to_value(&alert).unwrap();
    assert_eq!(value["id"], "hall-B-stalled");
    assert_eq!(value["kind"], "hall_stalled");
    assert_eq!(value["hall"], "B");
    assert_eq!(value["since_ms"], 1_000);
    assert_eq!(value["detail"], alert.detail);
    assert_eq!(value["advice"], alert.advice);
    assert_eq!(
        value["fault"],
        json!({
            "kind": "hall_stalled",
            "hall": "B",
            "reasons": [
                {"reason": "databases", "origins": ["b1", "b2"]},
                {"reason": "refused", "why": MISSING},
            ],
        })
    );
    let number = serde_json::to_value(EventAlert::new(number(Some("A/A7")), 0)).unwrap();
    assert_eq!(number["id"], "board-B/B7-number");
    assert_eq!(number["hall"], "B");
    assert_eq!(
        number["fault"],
        json!({"kind": "board_number_taken", "board": "B/B7", "number": 7, "holder": "A/A7"})
    );
    for (fault, _, _) in every_kind() {
        let value = serde_json::to_value(EventAlert::new(fault.clone(), 0)).unwrap();
        assert_eq!(value["fault"]["kind"], value["kind"], "{fault:?}");
    }
}
