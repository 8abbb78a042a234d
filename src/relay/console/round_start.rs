//! Starting a round from the console without a one-click hazard: what starting round N would
//! leave behind (rounds skipped, a round gone back to, games of the current round still in
//! play), and the page that names it and asks the arbiter to confirm.
//!
//! Flow: the console's round form posts the round; the server reads where the event stands
//! ([`Standing`]) and asks [`hazards`] (pure); none, and the round starts; some, and the
//! arbiter gets [`confirm_html`], whose button posts the same round again with `confirm`.

use std::fmt::Write as _;

use super::{escape, header, page};
use crate::lang::Lang;

/// Where the event stands when a round is asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    /// The current round, if one was started.
    pub current: Option<u32>,
    /// The boards (in the language's words) whose game of the current round is still in play.
    pub in_play: Vec<String>,
}

/// What starting a round would leave behind, for the arbiter to confirm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// The rounds between the current one and the one asked for, never started.
    Skips(Vec<u32>),
    /// The round asked for comes before the current one.
    GoesBack { current: u32 },
    /// Games of the current round are still in play on these boards.
    InPlay { current: u32, boards: Vec<String> },
}

/// What starting round `asked` from `standing` would leave behind (none: start it). Asking for
/// the current round again changes nothing and leaves nothing.
pub fn hazards(standing: &Standing, asked: u32) -> Vec<Hazard> {
    let current = standing.current.unwrap_or(0);
    if asked == current {
        return Vec::new();
    }
    let mut out = Vec::new();
    if asked > current + 1 {
        out.push(Hazard::Skips((current + 1..asked).collect()));
    }
    if asked < current {
        out.push(Hazard::GoesBack { current });
    }
    if current > 0 && !standing.in_play.is_empty() {
        out.push(Hazard::InPlay {
            current,
            boards: standing.in_play.clone(),
        });
    }
    out
}

/// The page asking the arbiter to confirm starting round `asked` in spite of `hazards`, each
/// named; its button posts the round again, confirmed, and a link goes back unchanged.
pub fn confirm_html(asked: u32, hazards: &[Hazard], lang: Lang) -> String {
    let round = asked.to_string();
    let mut main = String::new();
    header(&mut main, None, "/arbiter", lang);
    let _ = write!(
        main,
        r#"<main><section class="confirm-round" role="alertdialog" aria-labelledby="confirm-title"><h2 id="confirm-title">{title}</h2><ul>"#,
        title = escape(&lang.fill("arbiter.confirm_round_title", &[("round", &round)])),
    );
    let list = |numbers: &[u32]| {
        numbers
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for h in hazards {
        let text = match h {
            Hazard::Skips(rounds) => {
                lang.fill("arbiter.confirm_round_skips", &[("rounds", &list(rounds))])
            }
            Hazard::GoesBack { current } => lang.fill(
                "arbiter.confirm_round_back",
                &[("round", &round), ("current", &current.to_string())],
            ),
            Hazard::InPlay { current, boards } => lang.fill(
                "arbiter.confirm_round_in_play",
                &[
                    ("current", &current.to_string()),
                    ("boards", &boards.join(", ")),
                ],
            ),
        };
        let _ = write!(main, r#"<li dir="auto">{}</li>"#, escape(&text));
    }
    let _ = write!(
        main,
        r#"</ul><form class="round-start confirm" method="post" action="/arbiter/rounds/start"><input type="hidden" name="round" value="{round}"><input type="hidden" name="confirm" value="1"><button type="submit">{start}</button></form>
<p><a href="/arbiter">{back}</a></p></section></main>"#,
        start = escape(&lang.fill("arbiter.confirm_round_start", &[("round", &round)])),
        back = escape(lang.text("arbiter.confirm_round_cancel")),
    );
    page(
        &lang.fill("arbiter.confirm_round_title", &[("round", &round)]),
        &main,
        false,
        lang,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(current: Option<u32>, in_play: &[&str]) -> Standing {
        Standing {
            current,
            in_play: in_play.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_next_round_after_a_finished_one_starts_at_once() {
        assert_eq!(hazards(&standing(None, &[]), 1), Vec::new());
        assert_eq!(hazards(&standing(Some(1), &[]), 2), Vec::new());
        // The current round again: nothing changes, nothing to confirm.
        assert_eq!(hazards(&standing(Some(2), &["Board 3"]), 2), Vec::new());
    }

    #[test]
    fn a_skip_a_step_back_and_games_in_play_are_each_named() {
        assert_eq!(
            hazards(&standing(Some(1), &[]), 3),
            vec![Hazard::Skips(vec![2])]
        );
        assert_eq!(
            hazards(&standing(None, &[]), 3),
            vec![Hazard::Skips(vec![1, 2])]
        );
        assert_eq!(
            hazards(&standing(Some(3), &[]), 2),
            vec![Hazard::GoesBack { current: 3 }]
        );
        assert_eq!(
            hazards(&standing(Some(2), &["Board 3", "Board 7"]), 4),
            vec![
                Hazard::Skips(vec![3]),
                Hazard::InPlay {
                    current: 2,
                    boards: vec!["Board 3".into(), "Board 7".into()],
                },
            ]
        );
    }

    #[test]
    fn the_confirmation_names_what_is_left_in_every_language_and_posts_the_round_confirmed() {
        let hazards = hazards(&standing(Some(2), &["Board 3", "Board 7"]), 4);
        for lang in Lang::ALL {
            let html = confirm_html(4, &hazards, lang);
            assert!(html.contains(&format!(r#"<html lang="{}""#, lang.code())));
            assert!(html.contains(r#"name="round" value="4""#), "{html}");
            assert!(html.contains(r#"name="confirm" value="1""#), "{html}");
            assert!(html.contains("Board 3, Board 7"), "{lang}: {html}");
            for key in [
                "arbiter.confirm_round_skips",
                "arbiter.confirm_round_in_play",
            ] {
                let first_words: String = lang.text(key).split('{').next().unwrap().to_owned();
                assert!(
                    html.contains(&escape(&first_words)),
                    "{lang}: {key} in {html}"
                );
            }
            let main = &html[html.find("<main>").unwrap()..];
            assert!(!main.contains('{'), "{lang}: a blank left in {main}");
        }
    }
}
