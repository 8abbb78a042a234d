//! `boardscribe calibrate BOARD`: asks the running daemon (its admin API) to have a board's
//! sensor learn the board again, a Certabo board's calibration from the next start position it
//! shows (with the extra queens on d3 and d6).
//!
//! Flow: the token is read from its file, `POST /api/admin/boards/{board}/calibrate` is sent to
//! the daemon's HTTP address with it, and the daemon's answer (or refusal) is printed.

use std::{net::SocketAddr, path::Path};

use anyhow::{Context, bail};

/// Asks the daemon at `http` to calibrate `board` again, with the admin token in `token_file`.
pub fn calibrate(board: &str, http: SocketAddr, token_file: &Path) -> anyhow::Result<()> {
    let token = std::fs::read_to_string(token_file)
        .with_context(|| format!("reading the admin token {}", token_file.display()))?;
    let mut url = reqwest::Url::parse(&format!("http://{http}/"))?;
    url.path_segments_mut()
        .map_err(|()| anyhow::anyhow!("http://{http}/ takes no path"))?
        .pop_if_empty()
        .extend(["api", "admin", "boards", board, "calibrate"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (status, text) = rt.block_on(async {
        let answer = reqwest::Client::new()
            .post(url)
            .bearer_auth(token.trim())
            .send()
            .await?;
        let status = answer.status();
        Ok::<_, reqwest::Error>((status, answer.text().await?))
    })?;
    if !status.is_success() {
        bail!("the daemon refused ({status}): {}", reason(&text));
    }
    println!(
        "board {board}: calibrating; set its pieces up in the start position, the extra queens on d3 and d6"
    );
    Ok(())
}

/// The daemon's reason in its answer `text`: the `error` of its JSON, else the text itself.
fn reason(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| text.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::reason;

    #[test]
    fn the_reason_is_the_answers_error_or_its_text() {
        assert_eq!(
            reason(r#"{"error":"no board named \"b\" is being recorded here"}"#),
            r#"no board named "b" is being recorded here"#
        );
        assert_eq!(
            reason(" a valid bearer token is required\n"),
            "a valid bearer token is required"
        );
    }
}
