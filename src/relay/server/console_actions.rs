//! The console's actions: the forms of `/arbiter` and the boards' pages, posted by a logged-in
//! arbiter (or with the bearer header). Rule on an alert (`POST /arbiter/rule`), set a result,
//! correct a move by its number and side, add a note, resume a game after a lost thread
//! (`POST /arbiter/boards/{key}/result`, `/correct`, `/note`, `/resume`), calibrate a board
//! again once the arbiter confirmed (`/calibrate`: a Certabo board), start a round (`POST /arbiter/rounds/start`) and import a round's
//! pairings from an uploaded file (`POST /arbiter/pairings`, multipart). Flow: the guard has
//! let through only the arbiter, and the console's cookie only from the console's own pages
//! ([`super::gate`]); each handler reads the form into the decider's own [`AdminAction`] (or
//! round and pairings calls), which records it with the session's name as the author, and
//! sends the browser back (303) to the page it came from, whose banner shows what was done or
//! why nothing was (kept by the server, named by its id).

use axum::{
    Extension,
    extract::{Form, Multipart, rejection::FormRejection},
};
use tracing::info;

use super::{
    gate::Caller,
    session::{self, console_language, see_other},
    *,
};
use crate::{
    decider::{
        AdminAction, CorrectBody, NoteBody, Refusal, ResultBody, ResumeBody, RuleBody, UndoBody,
    },
    game::Kind,
    lang::Lang,
    relay::{
        console::{
            Flash, board_href, calibrate as calibrate_page, resume,
            round_start::{self, Standing},
            rulings, url_encode,
        },
        page::{board_name_in, board_title_in},
    },
    words::{moveno::MoveNo, ruling_text},
};

/// The page to return to: one of the console's own pages (`/arbiter`, its view of the boards
/// that need attention, a board's page by its encoded name or number), else the console.
fn back_to(back: Option<&str>) -> &str {
    let board_page = |b: &str| {
        b.strip_prefix("/arbiter/boards/").is_some_and(|key| {
            !key.is_empty()
                && key.bytes().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'%' | b'-' | b'_' | b'.' | b'~')
                })
                && key != "."
                && key != ".."
        })
    };
    match back {
        Some(b) if b == "/arbiter" || b == "/arbiter?attention=1" || board_page(b) => b,
        _ => "/arbiter",
    }
}

/// Back to `back` with what was done (`Ok`) or why not, kept by the server ([`Flashes`]) and
/// named by its id in the redirect.
///
/// [`Flashes`]: super::session::Flashes
fn back_with(app: &App, back: &str, outcome: Result<String, ApiError>) -> Response {
    let sep = if back.contains('?') { '&' } else { '?' };
    let flash = match outcome {
        Ok(text) => Flash { text, error: false },
        // Sent to a hall that takes it later (the event node): said, not refused.
        Err(ApiError(status, text)) if status.is_success() => Flash { text, error: false },
        Err(ApiError(status, why)) => {
            warn!(%status, why = %why, "arbiter console: an action was refused");
            Flash {
                text: why,
                error: true,
            }
        }
    };
    let id = app.flashes.keep(flash);
    see_other(&format!("{back}{sep}flash={id}"))
}

/// Not logged in: to the login form.
struct NotLoggedIn;

impl IntoResponse for NotLoggedIn {
    fn into_response(self) -> Response {
        see_other("/arbiter")
    }
}

/// The arbiter acting (their name, for the record), as the guard found them
/// ([`super::gate`]): it let only the arbiter's requests through, and the console's cookie
/// only from the console's own pages.
fn arbiter(caller: Option<Extension<Caller>>) -> Result<String, NotLoggedIn> {
    caller.and_then(|c| c.0.author()).ok_or(NotLoggedIn)
}

/// A form that did not read: what was wrong, in the arbiter's words (the web server's own
/// words for the cause).
fn unreadable(e: FormRejection, lang: Lang) -> ApiError {
    bad(lang.fill("refused.form_unreadable", &[("why", &e.body_text())]))
}

/// A decider's refusal in `lang`'s words, for the flash.
fn refused_in(lang: Lang) -> impl Fn(Refusal) -> ApiError {
    move |r| ApiError(status_of(r.reason), r.in_lang(lang))
}

/// No game `game`, in `lang`'s words.
fn no_game(game: i64, lang: Lang) -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        lang.fill("refused.unknown_game", &[("game", &game.to_string())]),
    )
}

/// A note field: none when blank.
fn note(text: Option<String>) -> Option<String> {
    text.filter(|n| !n.trim().is_empty())
}

#[derive(Deserialize)]
pub(super) struct RuleForm {
    game: i64,
    irregularity: u32,
    ruling: String,
    ply: Option<u32>,
    description: Option<String>,
    back: Option<String>,
}

/// `POST /arbiter/rule`: a ruling on an alert (its first irregularity).
pub(super) async fn rule(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<RuleForm>, FormRejection>,
) -> Response {
    let lang = console_language(&app, &headers, None);
    let author = match arbiter(caller) {
        Ok(a) => a,
        Err(refused) => return refused.into_response(),
    };
    let Ok(Form(f)) = form else {
        return back_with(
            &app,
            "/arbiter",
            Err(form.err().map_or_else(
                || bad(lang.text("refused.form_unread")),
                |e| unreadable(e, lang),
            )),
        );
    };
    let back = back_to(f.back.as_deref()).to_owned();
    let outcome = async {
        let game = GameId(f.game);
        let irregularity = f.irregularity;
        // The penalty due is the record's, not the form's.
        let record = app
            .db
            .read(move |r, db| {
                r.refresh(db)?;
                Ok(r.store()?.game(game)?)
            })
            .await?
            .ok_or_else(|| no_game(game.0, lang))?;
        let alert = alerts::game_alerts(&record)
            .into_iter()
            .find(|a| a.irregularities.contains(&irregularity));
        let due = alert.as_ref().and_then(|a| a.penalty_due.clone());
        let ruling =
            rulings::ruling_from_form(&f.ruling, f.description.as_deref(), due.as_deref(), f.ply)
                .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
        let said = ruling_text(&ruling, record.kind, lang);
        let decided = app
            .decider
            .act(
                game,
                AdminAction::Rule(RuleBody {
                    irregularity,
                    ruling,
                    author: Some(author),
                    note: None,
                }),
            )
            .await
            .map_err(refused_in(lang))?;
        Ok(lang.fill(
            "arbiter.done_ruled",
            &[
                ("board", &board_words(&record, lang)),
                ("ruling", &said),
                ("decision", &decided.id.to_string()),
            ],
        ))
    }
    .await;
    back_with(&app, &back, outcome)
}

/// `Board 12, game 7` (or the board's name) in `lang`.
fn board_words(g: &GameRecord, lang: Lang) -> String {
    lang.fill(
        "arbiter.board_game",
        &[
            ("board", &board_name_in(g.board_no, &g.board_name, lang)),
            ("game", &g.id.0.to_string()),
        ],
    )
}

/// The game a board's form names, read for the message.
async fn game_record(app: &App, game: i64, lang: Lang) -> Result<GameRecord, ApiError> {
    app.db
        .read(move |r, db| {
            r.refresh(db)?;
            Ok(r.store()?.game(GameId(game))?)
        })
        .await?
        .ok_or_else(|| no_game(game, lang))
}

/// A form of a board's page: the game it acts on, and the admin action it asks for with what
/// to tell the arbiter once done (or why it does not read).
pub(super) trait BoardForm: DeserializeOwned + Send {
    fn game(&self) -> i64;
    /// The action on a game of `kind`, and what to tell the arbiter once done, in `lang`.
    fn action(
        self,
        author: String,
        kind: Kind,
        lang: Lang,
    ) -> Result<(AdminAction, String), ApiError>;
}

/// A board page's form, acted on: back to the board's page with what was done, or why not.
async fn board_form<F: BoardForm>(
    app: App,
    key: String,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<F>, FormRejection>,
) -> Response {
    let lang = console_language(&app, &headers, None);
    let author = match arbiter(caller) {
        Ok(a) => a,
        Err(refused) => return refused.into_response(),
    };
    let back = format!("/arbiter/boards/{}", url_encode(&key));
    let outcome = async {
        let Form(f) = form.map_err(|e| unreadable(e, lang))?;
        let game = f.game();
        let record = game_record(&app, game, lang).await?;
        let (action, done) = f.action(author, record.kind, lang)?;
        app.decider
            .act(GameId(game), action)
            .await
            .map_err(refused_in(lang))?;
        Ok(format!("{}: {done}", board_words(&record, lang)))
    }
    .await;
    back_with(&app, &back, outcome)
}

#[derive(Deserialize)]
pub(super) struct ResultForm {
    game: i64,
    result: String,
    reason: Option<String>,
    note: Option<String>,
}

impl BoardForm for ResultForm {
    fn game(&self) -> i64 {
        self.game
    }

    fn action(
        self,
        author: String,
        _kind: Kind,
        lang: Lang,
    ) -> Result<(AdminAction, String), ApiError> {
        // A forfeit result is a forfeit unless the arbiter says why otherwise.
        let forfeit = matches!(self.result.as_str(), "+/-" | "-/+" | "-/-");
        let reason = self
            .reason
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| if forfeit { "forfeit" } else { "decision" }.into());
        let done = lang.fill("arbiter.done_result", &[("result", &self.result)]);
        let action = AdminAction::Result(ResultBody {
            result: self.result,
            reason,
            author: Some(author),
            note: note(self.note),
        });
        Ok((action, done))
    }
}

/// `POST /arbiter/boards/{key}/result`: the arbiter's result, final.
pub(super) async fn result(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<ResultForm>, FormRejection>,
) -> Response {
    board_form(app, key, caller, headers, form).await
}

#[derive(Deserialize)]
pub(super) struct CorrectForm {
    game: i64,
    #[serde(rename = "move")]
    number: u32,
    side: String,
    san: String,
    note: Option<String>,
}

impl BoardForm for CorrectForm {
    fn game(&self) -> i64 {
        self.game
    }

    fn action(
        self,
        author: String,
        kind: Kind,
        lang: Lang,
    ) -> Result<(AdminAction, String), ApiError> {
        if self.number == 0 {
            return Err(bad(lang.text("refused.move_from_one")));
        }
        let side = side_named(&self.side, lang)?;
        let ply = MoveNo::ply_of(self.number, side);
        let san = self.san.trim().to_owned();
        let done = lang.fill(
            "arbiter.done_corrected",
            &[
                ("move", &self.number.to_string()),
                ("side", lang.side_of(ply, kind)),
                ("san", &san),
            ],
        );
        let action = AdminAction::Correct(CorrectBody {
            ply,
            mv: san,
            author: Some(author),
            note: note(self.note),
        });
        Ok((action, done))
    }
}

/// `POST /arbiter/boards/{key}/correct`: the move played at a move number and side ("move 34,
/// black: Nf6") replaces the one recorded; the later moves are replayed after it.
pub(super) async fn correct(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<CorrectForm>, FormRejection>,
) -> Response {
    board_form(app, key, caller, headers, form).await
}

#[derive(Deserialize)]
pub(super) struct ResumeForm {
    game: i64,
    /// The last move that stands: its number (0: the start) and side.
    #[serde(rename = "move")]
    number: u32,
    side: String,
    /// The moves played since, copied from the scoresheets.
    moves: Option<String>,
    note: Option<String>,
}

impl BoardForm for ResumeForm {
    fn game(&self) -> i64 {
        self.game
    }

    fn action(
        self,
        author: String,
        kind: Kind,
        lang: Lang,
    ) -> Result<(AdminAction, String), ApiError> {
        let side = side_named(&self.side, lang)?;
        let after_ply = match self.number {
            0 => 0,
            n => MoveNo::ply_of(n, side),
        };
        let moves = resume::scoresheet_moves(self.moves.as_deref().unwrap_or(""));
        let count = moves.len().to_string();
        let done = match after_ply {
            0 => lang.fill("arbiter.done_resumed_start", &[("count", &count)]),
            ply => lang.fill(
                "arbiter.done_resumed",
                &[
                    ("move", &self.number.to_string()),
                    ("side", lang.side_of(ply, kind)),
                    ("count", &count),
                ],
            ),
        };
        let action = AdminAction::Resume(ResumeBody {
            after_ply,
            moves,
            author: Some(author),
            note: note(self.note),
        });
        Ok((action, done))
    }
}

/// `POST /arbiter/boards/{key}/resume`: after a lost thread, the game goes on from the move
/// named (later recorded moves withdrawn) with the moves the scoresheets give since.
pub(super) async fn resume(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<ResumeForm>, FormRejection>,
) -> Response {
    board_form(app, key, caller, headers, form).await
}

/// A form's side, `white` or `black`.
fn side_named(side: &str, lang: Lang) -> Result<Side, ApiError> {
    match side {
        "white" => Ok(Side::White),
        "black" => Ok(Side::Black),
        other => Err(bad(
            lang.fill("refused.not_a_side", &[("side", &format!("{other:?}"))])
        )),
    }
}

#[derive(Deserialize)]
pub(super) struct NoteForm {
    game: i64,
    text: String,
}

impl BoardForm for NoteForm {
    fn game(&self) -> i64 {
        self.game
    }

    fn action(
        self,
        author: String,
        _kind: Kind,
        lang: Lang,
    ) -> Result<(AdminAction, String), ApiError> {
        let action = AdminAction::Note(NoteBody {
            ply: None,
            text: self.text,
            author: Some(author),
        });
        Ok((action, lang.text("arbiter.done_note").into()))
    }
}

/// `POST /arbiter/boards/{key}/note`: a note in the game's record.
pub(super) async fn add_note(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<NoteForm>, FormRejection>,
) -> Response {
    board_form(app, key, caller, headers, form).await
}

#[derive(Deserialize)]
pub(super) struct UndoForm {
    game: i64,
    decision: i64,
    note: Option<String>,
}

impl BoardForm for UndoForm {
    fn game(&self) -> i64 {
        self.game
    }

    fn action(
        self,
        author: String,
        _kind: Kind,
        lang: Lang,
    ) -> Result<(AdminAction, String), ApiError> {
        let done = lang.fill(
            "arbiter.done_undo",
            &[("decision", &self.decision.to_string())],
        );
        let action = AdminAction::Undo(UndoBody {
            decision: self.decision,
            author: Some(author),
            note: self.note.filter(|n| !n.trim().is_empty()),
        });
        Ok((action, done))
    }
}

/// `POST /arbiter/boards/{key}/undo`: an earlier decision on the game undone, as a further one.
pub(super) async fn undo(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<UndoForm>, FormRejection>,
) -> Response {
    board_form(app, key, caller, headers, form).await
}

#[derive(Deserialize)]
pub(super) struct RoundForm {
    round: u32,
    /// The arbiter confirmed what starting the round leaves behind.
    confirm: Option<String>,
}

/// Where the event stands for starting a round: its current round, and the boards (in
/// `lang`'s words) whose game of it is still in play.
async fn standing(app: &App, lang: Lang) -> Result<Standing, ApiError> {
    let (current, in_play) = app
        .db
        .read(|r, db| {
            r.refresh(db)?;
            let store = r.store()?;
            let current = store
                .rounds()?
                .iter()
                .find(|r| r.current)
                .map(|r| r.number)
                .or(store.round_info()?.map(|i| i.round));
            let in_play = match current {
                Some(n) => store.round_in_play(n)?,
                None => Vec::new(),
            };
            Ok((current, in_play))
        })
        .await?;
    Ok(Standing {
        current,
        in_play: in_play
            .iter()
            .map(|(number, name)| board_name_in(*number, name, lang))
            .collect(),
    })
}

/// `POST /arbiter/rounds/start`: round N becomes the current one.
pub(super) async fn round_start(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<RoundForm>, FormRejection>,
) -> Response {
    let lang = console_language(&app, &headers, None);
    let author = match arbiter(caller) {
        Ok(a) => a,
        Err(refused) => return refused.into_response(),
    };
    let f = match form {
        Ok(Form(f)) => f,
        Err(e) => return back_with(&app, "/arbiter", Err(unreadable(e, lang))),
    };
    // A round skipped, gone back to, or started over games still in play: named, and started
    // only once the arbiter confirms.
    if f.confirm.is_none() {
        match standing(&app, lang).await {
            Ok(now) => {
                let left = round_start::hazards(&now, f.round);
                if !left.is_empty() {
                    return Html(round_start::confirm_html(f.round, &left, lang)).into_response();
                }
            }
            Err(e) => return back_with(&app, "/arbiter", Err(e)),
        }
    }
    let outcome = async {
        let previous = app
            .decider
            .start_round(f.round, author)
            .await
            .map_err(refused_in(lang))?;
        let round = f.round.to_string();
        Ok(match previous {
            Some(p) if p == f.round => {
                lang.fill("arbiter.done_round_current", &[("round", &round)])
            }
            Some(p) => lang.fill(
                "arbiter.done_round_after",
                &[("round", &round), ("previous", &p.to_string())],
            ),
            None => lang.fill("arbiter.done_round", &[("round", &round)]),
        })
    }
    .await;
    back_with(&app, "/arbiter", outcome)
}

#[derive(Deserialize)]
pub(super) struct ForfeitForm {
    round: u32,
    board: u32,
    result: String,
    note: Option<String>,
}

/// `POST /arbiter/boards/{key}/forfeit`: a paired board's game of a round recorded as not played.
pub(super) async fn forfeit(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<ForfeitForm>, FormRejection>,
) -> Response {
    let back = format!("/arbiter/boards/{}", url_encode(&key));
    let act = async |app: App, f: ForfeitForm, author, lang: Lang| {
        let note = f.note.filter(|n| !n.trim().is_empty());
        app.decider
            .record_forfeit(f.board, f.round, f.result.clone(), author, note)
            .await
            .map_err(refused_in(lang))?;
        Ok(lang.fill(
            "arbiter.done_forfeit",
            &[("result", &f.result), ("round", &f.round.to_string())],
        ))
    };
    event_form(app, caller, headers, form, &back, act).await
}

#[derive(Deserialize)]
pub(super) struct ByeForm {
    round: u32,
    name: String,
    /// `U`, `F`, `H` or `Z`; none to withdraw the bye.
    code: Option<String>,
}

/// `POST /arbiter/byes`: a player given a bye in a round; `POST /arbiter/byes/withdraw`: the
/// bye withdrawn. Back to the standings with what was done.
async fn bye_form(
    app: App,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<ByeForm>, FormRejection>,
    give: bool,
) -> Response {
    let act = async |app: App, f: ByeForm, author, lang: Lang| {
        let round = f.round.to_string();
        let name = f.name.trim().to_owned();
        if give {
            let code = f
                .code
                .as_deref()
                .and_then(|c| c.chars().next())
                .unwrap_or('?');
            app.decider
                .set_bye(f.round, name.clone(), code, author)
                .await
                .map_err(refused_in(lang))?;
            Ok(lang.fill("arbiter.done_bye", &[("name", &name), ("round", &round)]))
        } else {
            app.decider
                .withdraw_bye(f.round, name.clone(), author)
                .await
                .map_err(refused_in(lang))?;
            Ok(lang.fill(
                "arbiter.done_bye_withdrawn",
                &[("name", &name), ("round", &round)],
            ))
        }
    };
    event_form(app, caller, headers, form, "/arbiter/standings", act).await
}

/// `POST /arbiter/byes`: a player given a bye in a round.
pub(super) async fn give_bye(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<ByeForm>, FormRejection>,
) -> Response {
    bye_form(app, caller, headers, form, true).await
}

/// `POST /arbiter/byes/withdraw`: a bye withdrawn.
pub(super) async fn withdraw_bye(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<ByeForm>, FormRejection>,
) -> Response {
    bye_form(app, caller, headers, form, false).await
}

/// `POST /arbiter/pairings/undo`: the latest import of round N's pairings undone.
pub(super) async fn pairings_undo(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<RoundUndoForm>, FormRejection>,
) -> Response {
    let act = async |app: App, f: RoundUndoForm, author, lang: Lang| {
        let boards = app
            .decider
            .undo_pairings_import(f.round, author)
            .await
            .map_err(refused_in(lang))?;
        Ok(lang.fill(
            "arbiter.done_import_undone",
            &[
                ("round", &f.round.to_string()),
                ("boards", &boards.to_string()),
            ],
        ))
    };
    event_form(app, caller, headers, form, "/arbiter", act).await
}

#[derive(Deserialize)]
pub(super) struct RoundUndoForm {
    round: u32,
}

/// `POST /arbiter/rounds/undo`: the start of round N (the latest one) undone: the round before
/// it is current again.
pub(super) async fn round_undo(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<RoundUndoForm>, FormRejection>,
) -> Response {
    let act = async |app: App, f: RoundUndoForm, author, lang: Lang| {
        let current = app
            .decider
            .undo_round_start(f.round, author)
            .await
            .map_err(refused_in(lang))?;
        Ok(lang.fill(
            "arbiter.done_round_undone",
            &[
                ("round", &f.round.to_string()),
                ("current", &current.to_string()),
            ],
        ))
    };
    event_form(app, caller, headers, form, "/arbiter", act).await
}

/// A console form on the event rather than on a game (a forfeit, a bye, an undone round start
/// or pairings import): read as the session's arbiter, acted on by `act` (what was done, in
/// the console's words), then back to `back` with that, or with why nothing was.
async fn event_form<F>(
    app: App,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<F>, FormRejection>,
    back: &str,
    act: impl AsyncFnOnce(App, F, String, Lang) -> Result<String, ApiError>,
) -> Response {
    let lang = console_language(&app, &headers, None);
    let author = match arbiter(caller) {
        Ok(a) => a,
        Err(refused) => return refused.into_response(),
    };
    let outcome = match form {
        Ok(Form(f)) => act(app.clone(), f, author, lang).await,
        Err(e) => Err(unreadable(e, lang)),
    };
    back_with(&app, back, outcome)
}

/// The largest pairings file the console takes.
const MAX_PAIRINGS_BYTES: usize = 1 << 20;

/// What a pairings upload holds, read from its parts.
#[derive(Default)]
struct Upload {
    round: Option<u32>,
    format: Option<String>,
    file_name: Option<String>,
    /// The file's text, and the encoding it was read in.
    text: Option<pairings::Decoded>,
}

fn bad(why: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, why.into())
}

async fn read_upload(mut parts: Multipart, lang: Lang) -> Result<Upload, ApiError> {
    let mut up = Upload::default();
    while let Some(part) = parts
        .next_field()
        .await
        .map_err(|e| bad(lang.fill("refused.upload_unreadable", &[("why", &e.body_text())])))?
    {
        match part.name().unwrap_or("") {
            "round" => {
                let text = part.text().await.map_err(|e| bad(e.body_text()))?;
                up.round = Some(text.trim().parse().map_err(|_| {
                    bad(lang.fill("refused.not_a_round", &[("text", &format!("{text:?}"))]))
                })?);
            }
            "format" => up.format = Some(part.text().await.map_err(|e| bad(e.body_text()))?),
            "file" => {
                up.file_name = part.file_name().map(str::to_owned);
                let bytes = part.bytes().await.map_err(|e| bad(e.body_text()))?;
                if bytes.len() > MAX_PAIRINGS_BYTES {
                    return Err(ApiError(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!(
                            "the pairings file is {} bytes: at most {MAX_PAIRINGS_BYTES}",
                            bytes.len()
                        ),
                    ));
                }
                up.text = Some(pairings::decode(&bytes).map_err(|e| bad(e.words(lang)))?);
            }
            _ => {}
        }
    }
    Ok(up)
}

/// `POST /arbiter/pairings` (multipart: `round`, `format`, `file`): a round's pairings from a
/// CSV or TRF file, replacing the round's earlier ones.
pub(super) async fn pairings_upload(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    parts: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Response {
    let lang = console_language(&app, &headers, None);
    let author = match arbiter(caller) {
        Ok(a) => a,
        Err(refused) => return refused.into_response(),
    };
    let outcome = async {
        let parts = parts
            .map_err(|e| bad(lang.fill("refused.upload_unreadable", &[("why", &e.body_text())])))?;
        let up = read_upload(parts, lang).await?;
        let round = up
            .round
            .ok_or_else(|| bad(lang.text("refused.say_round")))?;
        let decoded = up
            .text
            .filter(|d| !d.text.trim().is_empty())
            .ok_or_else(|| bad(lang.text("refused.choose_file")))?;
        let name = up.file_name.unwrap_or_default();
        // Said when it was not UTF-8, so that a misread file shows where it came from.
        let read_as = match decoded.encoding {
            pairings::Encoding::Utf8 => String::new(),
            other => {
                info!(file = %name, encoding = %other, "pairings file read as {other}");
                lang.fill("arbiter.read_as", &[("encoding", &other.to_string())])
            }
        };
        let format = match up.format.as_deref().unwrap_or("auto") {
            "csv" => PairingsFormat::Csv,
            "trf" => PairingsFormat::Trf,
            _ => PairingsFormat::from_path(Path::new(&name)).ok_or_else(|| {
                bad(lang.fill("refused.csv_or_trf", &[("name", &format!("{name:?}"))]))
            })?,
        };
        // The file's faults in the console's words, with how it was read.
        let rows = pairings::parse(&decoded.text, format, round)
            .and_then(|rows| Ok((rows, pairings::parse_byes(&decoded.text, format, round)?)))
            .map_err(|e| bad(format!("{}{read_as}", e.words(lang))));
        let (rows, byes) = rows?;
        let boards = app
            .decider
            .import_pairings(round, rows, byes, author)
            .await
            .map_err(refused_in(lang))?;
        Ok(format!(
            "{}{read_as}",
            lang.fill(
                "arbiter.done_pairings",
                &[
                    ("round", &round.to_string()),
                    ("boards", &boards.to_string()),
                    (
                        "file",
                        if name.is_empty() {
                            lang.text("arbiter.the_file")
                        } else {
                            &name
                        },
                    ),
                ],
            )
        ))
    }
    .await;
    back_with(&app, "/arbiter", outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_way_back_stays_in_the_console() {
        assert_eq!(back_to(Some("/arbiter/boards/3")), "/arbiter/boards/3");
        assert_eq!(
            back_to(Some("/arbiter?attention=1")),
            "/arbiter?attention=1"
        );
        assert_eq!(back_to(Some("https://evil.example/")), "/arbiter");
        assert_eq!(back_to(Some("/arbiter//evil.example")), "/arbiter");
        assert_eq!(back_to(Some("/")), "/arbiter");
        assert_eq!(back_to(None), "/arbiter");
        assert_eq!(
            back_to(Some("/arbiter/boards/b%C3%BC-1")),
            "/arbiter/boards/b%C3%BC-1"
        );
        assert_eq!(back_to(Some("/arbiter/boards/..")), "/arbiter");
        assert_eq!(back_to(Some("/arbiter/boards/1\r\nX: y")), "/arbiter");
        assert_eq!(back_to(Some("/arbiter/boards/ü")), "/arbiter");
        assert_eq!(back_to(Some("/arbiter/boards/1/../../x")), "/arbiter");
        assert_eq!(back_to(Some("/arbiterx")), "/arbiter");
    }

    #[test]
    fn a_correction_says_its_move_and_side_in_the_games_own_words() {
        let form = |side: &str| CorrectForm {
            game: 7,
            number: 12,
            side: side.into(),
            san: " 54 ".into(),
            note: None,
        };
        let Ok((_, done)) = form("black").action("Chief".into(), Kind::Togyz, Lang::Ky) else {
            panic!("the form reads");
        };
        let ky = Lang::Ky.fill(
            "arbiter.done_corrected",
            &[
                ("move", "12"),
                ("side", Lang::Ky.text("togyz.black")),
                ("san", "54"),
            ],
        );
        assert_eq!(done, ky);
        let Ok((_, done)) = form("white").action("Chief".into(), Kind::Chess, Lang::En) else {
            panic!("the form reads");
        };
        assert_eq!(done, "move 12 (White) corrected to 54");
    }
}

#[derive(Deserialize)]
pub(super) struct CalibrateForm {
    /// The console page to return to.
    back: Option<String>,
    /// The arbiter confirmed, having read what to set up.
    confirm: Option<String>,
}

/// `POST /arbiter/boards/{key}/calibrate`: the board's sensor learns the board again (a
/// Certabo board's calibration) from the next calibration setup it shows, as the admin API's
/// `/api/admin/boards/{name}/calibrate` has it. Asked first, the page naming that setup, for
/// the arbiter to confirm.
pub(super) async fn calibrate(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    form: Result<Form<CalibrateForm>, FormRejection>,
) -> Response {
    let lang = console_language(&app, &headers, None);
    let author = match arbiter(caller) {
        Ok(a) => a,
        Err(refused) => return refused.into_response(),
    };
    let f = match form {
        Ok(Form(f)) => f,
        Err(e) => return back_with(&app, "/arbiter", Err(unreadable(e, lang))),
    };
    let back = back_to(f.back.as_deref()).to_owned();
    let board = match views(&app, Audience::Arbiter).await {
        Ok((views, _)) => session::find_board(&views, &key).map(|v| {
            (
                v.live.name.clone(),
                board_title_in(&v.live, lang),
                board_href(v),
            )
        }),
        Err(e) => return back_with(&app, &back, Err(e)),
    };
    let Some((name, title, href)) = board else {
        let refusal = Refusal::unknown_board(&key);
        return back_with(&app, &back, Err(refused_in(lang)(refusal)));
    };
    if f.confirm.is_none() {
        return Html(calibrate_page::confirm_html(&title, &href, &back, lang)).into_response();
    }
    info!(board = %name, by = %author, "the arbiter asks from the console to calibrate the board again");
    let outcome = app
        .decider
        .relearn(&name)
        .await
        .map(|()| lang.fill("arbiter.done_calibrate", &[("board", &title)]))
        .map_err(refused_in(lang));
    back_with(&app, &back, outcome)
}
