//! The rulings the console offers on an alert: those the Laws provide for its kind of
//! irregularity. The penalty due (the configured Laws' ladder, worked out when the
//! irregularity was recorded) comes first; an illegal move, displaced pieces or an illegal
//! position can have the position before it reinstated (7.4, 7.5.1); an illegal move may
//! stand (no claim, or the claim came after the game); any irregularity may be let go, or
//! given a penalty the arbiter describes (12.9). A board not heard, or a thread lost after a
//! gap, is no ruling's: it ends when the board is back or the game resumed. Flow: the console
//! asks [`choices`] for an alert and writes [`rule_form`]; the server reads the form back into
//! a [`Ruling`] with [`ruling_from_form`]. Pure.

use std::fmt::Write as _;

use crate::{
    game::Kind,
    lang::Lang,
    relay::{alerts::Alert, page::escape},
    store::Ruling,
    tracker::IrregularityKind,
};

/// One ruling the form offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// [`Ruling::as_str`]'s name, the form's value.
    pub value: &'static str,
    pub label: String,
}

/// The ply whose position a reinstatement restores: the alert's, within the record
/// (`plies` played).
fn reinstate_ply(alert: &Alert, plies: u32) -> u32 {
    alert.ply.unwrap_or(plies + 1).clamp(1, plies + 1)
}

/// The rulings the Laws allow on `alert` (none for a board alert or a lost thread), in
/// `lang`; `plies`: the moves recorded so far in the game, of `kind`.
pub fn choices(alert: &Alert, plies: u32, kind: Kind, lang: Lang) -> Vec<Choice> {
    let game_kind = kind;
    let Some(kind) = IrregularityKind::from_str_opt(&alert.kind) else {
        return Vec::new();
    };
    if alert.irregularity.is_none() || alert.game.is_none() || kind == IrregularityKind::ThreadLost
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(due) = &alert.penalty_due {
        out.push(Choice {
            value: "penalty_applied",
            label: lang.fill("arbiter.apply_penalty", &[("penalty", due)]),
        });
    }
    if matches!(
        kind,
        IrregularityKind::IllegalMove
            | IrregularityKind::Displaced
            | IrregularityKind::IllegalPosition
    ) {
        out.push(Choice {
            value: "position_reinstated",
            label: {
                let ply = reinstate_ply(alert, plies);
                lang.fill(
                    "ruling.position_reinstated_before",
                    &[
                        ("move", &ply.div_ceil(2).to_string()),
                        ("side", lang.side_of(ply, game_kind)),
                    ],
                )
            },
        });
    }
    if kind == IrregularityKind::IllegalMove {
        out.push(Choice {
            value: "move_stands",
            label: lang.text("arbiter.move_stands").into(),
        });
    }
    out.push(Choice {
        value: "no_action",
        label: lang.text("ruling.no_action").into(),
    });
    if alert.penalty_due.is_none() {
        out.push(Choice {
            value: "penalty_applied",
            label: lang.text("arbiter.describe_penalty").into(),
        });
    }
    out
}

/// The ruling form of `alert` in `lang` (nothing when no ruling applies); `plies` and `kind`:
/// the game's; `back`: the page to return to.
pub fn rule_form(out: &mut String, alert: &Alert, plies: u32, kind: Kind, back: &str, lang: Lang) {
    let options = choices(alert, plies, kind, lang);
    let (Some(game), Some(irregularity)) = (alert.game, alert.irregularity) else {
        return;
    };
    if options.is_empty() {
        return;
    }
    let _ = write!(
        out,
        r#" <form class="rule" method="post" action="/arbiter/rule"><input type="hidden" name="game" value="{game}"><input type="hidden" name="irregularity" value="{irregularity}"><input type="hidden" name="ply" value="{ply}"><input type="hidden" name="back" value="{back}"><select name="ruling" aria-label="{aria}" dir="auto">"#,
        ply = reinstate_ply(alert, plies),
        back = escape(back),
        aria = escape(lang.text("arbiter.ruling")),
    );
    for c in &options {
        let _ = write!(
            out,
            r#"<option value="{}">{}</option>"#,
            c.value,
            escape(&c.label)
        );
    }
    let _ = write!(
        out,
        r#"</select><input type="text" name="description" placeholder="{other}" maxlength="200" aria-label="{other}" dir="auto"><button type="submit">{rule}</button></form>"#,
        other = escape(lang.text("arbiter.other_penalty")),
        rule = escape(lang.text("arbiter.rule")),
    );
}

/// Why a ruling form does not read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulingFormError {
    #[error("no ruling {0:?}: choose one of the list")]
    Unknown(String),
    #[error("say which penalty was applied")]
    NoPenalty,
    #[error("say before which move the position was reinstated")]
    NoPly,
}

/// The ruling a form chose: `description` (what the arbiter typed) names a penalty, else the
/// penalty due; `ply` the reinstated position's.
pub fn ruling_from_form(
    value: &str,
    description: Option<&str>,
    penalty_due: Option<&str>,
    ply: Option<u32>,
) -> Result<Ruling, RulingFormError> {
    let typed = description.map(str::trim).filter(|d| !d.is_empty());
    match value {
        "penalty_applied" => typed
            .or(penalty_due)
            .map(|d| Ruling::PenaltyApplied {
                description: d.to_owned(),
            })
            .ok_or(RulingFormError::NoPenalty),
        "move_stands" => Ok(Ruling::MoveStands),
        "position_reinstated" => ply
            .map(|ply| Ruling::PositionReinstated { ply })
            .ok_or(RulingFormError::NoPly),
        "no_action" => Ok(Ruling::NoAction),
        other => Err(RulingFormError::Unknown(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::relay::alerts::AlertState;

    fn alert(kind: &str, penalty: Option<&str>, ply: Option<u32>) -> Alert {
        Alert {
            id: "game-1-irregularity-2".into(),
            board: json!(3),
            board_name: "b3".into(),
            game: Some(1),
            kind: kind.into(),
            article: Some("7.5.1".into()),
            detail: String::new(),
            detail_phrase: None,
            lost: None,
            penalty_due: penalty.map(str::to_owned),
            penalty_phrase: None,
            since_ms: 0,
            count: 1,
            state: AlertState::Open,
            irregularity: Some(2),
            irregularities: vec![2],
            ply,
            player: None,
            ruling: None,
            resolved: None,
        }
    }

    fn values(a: &Alert, plies: u32) -> Vec<&'static str> {
        choices(a, plies, Kind::Chess, Lang::En)
            .iter()
            .map(|c| c.value)
            .collect()
    }

    #[test]
    fn an_illegal_move_offers_the_penalty_due_first_then_what_else_the_laws_allow() {
        let a = alert("illegal_move", Some("2 minutes to white"), Some(68));
        assert_eq!(
            values(&a, 67),
            [
                "penalty_applied",
                "position_reinstated",
                "move_stands",
                "no_action"
            ]
        );
        let c = choices(&a, 67, Kind::Chess, Lang::En);
        assert_eq!(c[0].label, "apply the penalty due: 2 minutes to white");
        assert_eq!(c[1].label, "position reinstated before move 34 (Black)");
        let ru = choices(&a, 67, Kind::Chess, Lang::Ru);
        assert_eq!(ru[1].label, "восстановлена позиция перед ходом 34 (Чёрные)");
    }

    #[test]
    fn other_kinds_offer_less_and_board_alerts_or_a_lost_thread_none() {
        assert_eq!(
            values(&alert("clock_without_move", None, Some(5)), 4),
            ["no_action", "penalty_applied"]
        );
        assert_eq!(
            values(&alert("displaced", None, Some(9)), 8),
            ["position_reinstated", "no_action", "penalty_applied"]
        );
        assert!(values(&alert("thread_lost", None, None), 8).is_empty());
        let mut board = alert("board_unplugged", None, None);
        board.irregularity = None;
        assert!(values(&board, 8).is_empty());
        let mut html = String::new();
        rule_form(&mut html, &board, 8, Kind::Chess, "/arbiter", Lang::En);
        assert!(html.is_empty());
    }

    #[test]
    fn the_reinstated_ply_stays_within_the_record() {
        let mut html = String::new();
        rule_form(
            &mut html,
            &alert("displaced", None, Some(40)),
            10,
            Kind::Chess,
            "/arbiter",
            Lang::En,
        );
        assert!(html.contains(r#"name="ply" value="11""#), "{html}");
        assert!(html.contains(r#"<option value="position_reinstated">"#));
    }

    #[test]
    fn forms_read_back_into_rulings() {
        assert_eq!(
            ruling_from_form("penalty_applied", Some("  "), Some("black loses"), None),
            Ok(Ruling::PenaltyApplied {
                description: "black loses".into()
            })
        );
        assert_eq!(
            ruling_from_form(
                "penalty_applied",
                Some("warning"),
                Some("black loses"),
                None
            ),
            Ok(Ruling::PenaltyApplied {
                description: "warning".into()
            })
        );
        assert_eq!(
            ruling_from_form("penalty_applied", None, None, None),
            Err(RulingFormError::NoPenalty)
        );
        assert_eq!(
            ruling_from_form("position_reinstated", None, None, Some(7)),
            Ok(Ruling::PositionReinstated { ply: 7 })
        );
        assert_eq!(
            ruling_from_form("no_action", None, None, None),
            Ok(Ruling::NoAction)
        );
        assert!(ruling_from_form("forfeit", None, None, None).is_err());
    }
}
