//! The arbiter's console, first step (issue 16): the login with the admin token gives a session
//! cookie (HttpOnly, SameSite=Strict) that opens `/arbiter` and the admin API as the bearer
//! header does; the console lists the hall by board number with each board's state; a wrong
//! token, no cookie or a logged-out cookie opens nothing. Over real HTTP, with emulated boards.

use std::time::Duration;

use boardscribe::relay::Token;
use reqwest::{StatusCode, header, redirect::Policy};
use tokio::time::Instant;

use crate::relay_common::{Bench, corpus_game};

const TOKEN: &str = "console-token";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_logs_in_with_the_token_and_shows_the_hall_by_board_number() {
    let mut bench = Bench::new(Some(Token::new(TOKEN).unwrap())).await;
    let url = bench.url.clone();
    bench
        .start(
            &[
                (corpus_game("tatamast22", 3), 1, 0.0),
                (corpus_game("tatamast22", 4), 2, 0.0),
                (corpus_game("tatamast22", 5), 3, 0.0),
            ],
            0.2,
        )
        .await;
    let client = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();

    // Not logged in: the form, and the admin API stays shut.
    let login = client.get(format!("{url}arbiter")).send().await.unwrap();
    assert_eq!(login.status(), StatusCode::OK);
    let form = login.text().await.unwrap();
    assert!(form.contains(r#"name="token""#) && !form.contains("class=\"hall\""));
    let shut = client
        .get(format!("{url}api/admin/alerts"))
        .send()
        .await
        .unwrap();
    assert_eq!(shut.status(), StatusCode::UNAUTHORIZED);
    let wrong = client
        .post(format!("{url}arbiter/login"))
        .form(&[("token", "guess")])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().get(header::SET_COOKIE).is_none());

    // The token: a session cookie, HttpOnly and SameSite=Strict.
    let ok = client
        .post(format!("{url}arbiter/login"))
        .form(&[("token", TOKEN)])
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::SEE_OTHER);
    let set = ok.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_owned();

    // The hall, by board number, once every board has a move.
    let deadline = Instant::now() + Duration::from_secs(60);
    let hall = loop {
        let page = client
            .get(format!("{url}arbiter"))
            .header(header::COOKIE, &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if page.matches("state-playing").count() == 3 {
            break page;
        }
        assert!(
            Instant::now() < deadline,
            "boards never all playing:\n{page}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let at = |name: &str| hall.find(&format!("data-board=\"{name}\"")).unwrap();
    assert!(at(&bench.boards[0]) < at(&bench.boards[1]));
    assert!(at(&bench.boards[1]) < at(&bench.boards[2]));
    assert!(
        hall.contains(r#"href="/arbiter/boards/1">Board 1</a></td>"#),
        "{hall}"
    );

    // The cookie opens the admin API as the bearer header does.
    let alerts = client
        .get(format!("{url}api/admin/alerts"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(alerts.status(), StatusCode::OK);
    // With the cookie, the API acts only for the console's own pages (the browser says
    // where a request comes from), and takes JSON.
    let start = client
        .post(format!("{url}api/admin/rounds/2/start"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), StatusCode::FORBIDDEN);
    let origin = url.trim_end_matches('/');
    let start = client
        .post(format!("{url}api/admin/rounds/2/start"))
        .header(header::COOKIE, &cookie)
        .header(header::ORIGIN, origin)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_ne!(
        bench.store().round_info().unwrap().map(|r| r.round),
        Some(2)
    );
    let start = client
        .post(format!("{url}api/admin/rounds/2/start"))
        .header(header::COOKIE, &cookie)
        .header(header::ORIGIN, origin)
        .header(header::CONTENT_TYPE, "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), StatusCode::OK);
    assert_eq!(bench.store().round_info().unwrap().unwrap().round, 2);

    // Logged out: the same cookie opens nothing.
    let out = client
        .post(format!("{url}arbiter/logout"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    let after = client
        .get(format!("{url}api/admin/alerts"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
    bench.stop().await;
}
