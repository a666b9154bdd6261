//! The web console and `/metrics`: an HTTP listener beside the PostgreSQL one.
//!
//! [`Console`] holds what the pages need: the [`Engine`], the ingest-rate sampler and the
//! options (authentication, limits). [`serve`] answers on one listener:
//! - `/` and `/assets/...`: the console's page, script and style, compiled into the binary
//!   (no CDN, no network at run time);
//! - `/api/streams`, `/api/queries`: JSON snapshots (schema, tuples, ingest rate with a
//!   60-second history, current time, late tuples; a query's text, client, counters and
//!   state);
//! - `/api/queries/{id}/plan`: the window coverage graph the query runs along, as
//!   `EXPLAIN ANALYZE (FORMAT JSON)` renders it, measured work included;
//! - `POST /api/queries/{id}/cancel`: cancel a query as `pg_cancel_backend` cancels its
//!   session;
//! - `/api/queries/{id}/tail` and `/api/sql/stream?sql=...`: Server-Sent Events carrying a
//!   statement's rows as windows close (see [`live`]);
//! - `POST /api/sql`, `POST /api/explain`: run finite statements, or EXPLAIN one as JSON;
//! - `/metrics` (Prometheus text format) and `/healthz`.
//!
//! [`serve_metrics`] answers only `/metrics` and `/healthz` (`tcqd --metrics ADDR`).
//!
//! Every request needs HTTP Basic authentication when a password file is in force, and the
//! console refuses requests a browser makes on behalf of another site (403), so a web page
//! elsewhere cannot run SQL through a user's console.
//!
//! Design decision: the console runs SQL through an engine [`crate::engine::Session`] as a
//! PostgreSQL connection does, registered among the backends, so `pg_cancel_backend` and
//! `pg_stat_activity` see console sessions as they see wire sessions, and the console needs
//! no second path into the executor. A live tail of a running query is a copy of the rows
//! its own reader gets, which never waits on the console.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! let engine = tcq::engine::Engine::new(Default::default());
//! let console = tcq::http::Console::new(engine, tcq::http::HttpOptions::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! tcq::http::serve(listener, console, std::future::pending()).await
//! # }
//! ```

mod api;
mod ingest;
pub(crate) mod live;
pub(crate) mod metrics;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::engine::Engine;
use crate::password::Verifier;

/// How the console treats clients, and its bounds.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// SCRAM verifiers by user name (the wire server's `--password-file`), installed as
    /// superuser roles when the console starts. `Some`: every request needs HTTP Basic
    /// authentication as a superuser role that may log in, these users or roles made with
    /// `CREATE ROLE ... SUPERUSER LOGIN PASSWORD` (401 otherwise); `None`: no
    /// authentication.
    pub passwords: Option<HashMap<String, Verifier>>,
    /// Rows one finite result (`POST /api/sql`) returns; the rest are cut and the result
    /// says `"truncated": true`. Default 10,000.
    pub rows_max: usize,
    /// Rows one event stream (`/api/sql/stream`, a tail) delivers before it ends with a
    /// `limit` event. Default 1,000,000.
    pub stream_rows_max: u64,
    /// Bytes of SQL text one request may carry (413 beyond). Default 256 KiB.
    pub sql_bytes_max: usize,
    /// Event streams open at once over the whole console (503 beyond). Default 32.
    pub streams_max: usize,
    /// Bytes of one `POST /ingest/<stream>` body (413 beyond). Default 64 MiB.
    pub ingest_bytes_max: usize,
    /// How long one statement of `POST /api/sql` or `/api/explain` may run (a FETCH waits
    /// for its rows, an INSERT for room in its stream's queue); beyond it the request ends
    /// with 57014. Default 30 s.
    pub statement_timeout: std::time::Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            passwords: None,
            rows_max: 10_000,
            stream_rows_max: 1_000_000,
            sql_bytes_max: 256 << 10,
            streams_max: 32,
            ingest_bytes_max: 64 << 20,
            statement_timeout: std::time::Duration::from_secs(30),
        }
    }
}

/// The console's shared state: the engine, the ingest-rate sampler and the options.
pub struct Console {
    engine: Arc<Engine>,
    options: HttpOptions,
    rates: metrics::Rates,
    /// Event streams open now (bounded by `streams_max`).
    streams: Arc<tokio::sync::Semaphore>,
    /// Digests of `user:password` pairs already verified, so a page polling every second
    /// does not pay the SCRAM key derivation (4,096 HMACs) on every request. Bounded: it is
    /// cleared when it reaches [`VERIFIED_MAX`] entries.
    verified: parking_lot::Mutex<HashSet<[u8; 32]>>,
    /// Turns `true` at shutdown: open event streams end, so a graceful shutdown finishes.
    shutdown: watch::Sender<bool>,
}

const VERIFIED_MAX: usize = 64;

/// The user name of console sessions when no password file is in force.
pub(crate) const DEFAULT_USER: &str = "tcq";

/// The authenticated user of a request, put in its extensions by the authentication
/// layer; console sessions run as this user.
#[derive(Clone, Debug)]
pub(crate) struct User(pub(crate) String);

impl Console {
    /// The console over `engine`; starts the task that samples ingest rates once a second
    /// (needs a tokio runtime; it stops when the console is dropped).
    pub fn new(engine: Arc<Engine>, options: HttpOptions) -> Arc<Console> {
        // The password file's users are roles, as the wire server installs them: requests
        // are checked against the roles alone (engine::roles).
        if let Some(passwords) = &options.passwords {
            engine.roles().install_file_roles(
                passwords
                    .iter()
                    .map(|(user, verifier)| (user.clone(), verifier.to_string())),
            );
        }
        let console = Arc::new(Console {
            streams: Arc::new(tokio::sync::Semaphore::new(options.streams_max)),
            engine,
            options,
            rates: metrics::Rates::default(),
            verified: parking_lot::Mutex::new(HashSet::new()),
            shutdown: watch::channel(false).0,
        });
        metrics::start_sampler(&console);
        console
    }

    /// The engine the console shows.
    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The user the `Authorization` header `value` authenticates: a user of the password
    /// file or a superuser role with LOGIN (`CREATE ROLE ... SUPERUSER LOGIN PASSWORD`)
    /// with the right password, or [`DEFAULT_USER`] without a password file; `None` when
    /// the request must be refused.
    fn authorized(&self, value: Option<&HeaderValue>) -> Option<String> {
        self.authenticated(value, true)
    }

    /// The user the `Authorization` header `value` authenticates, as
    /// [`Console::authorized`], but any role that may log in when not `superuser_only`
    /// (`/ingest`, where the stream's privileges decide).
    fn authenticated(&self, value: Option<&HeaderValue>, superuser_only: bool) -> Option<String> {
        use base64::Engine as _;
        use sha2::Digest;
        if self.options.passwords.is_none() {
            return Some(DEFAULT_USER.to_string());
        }
        let encoded = value?.to_str().ok()?.strip_prefix("Basic ")?;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()?;
        let (user, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
        // A pair verified before the roles last changed (a password, SUPERUSER, LOGIN) is
        // checked again: the generation is part of what the cache holds.
        let roles = self.engine.roles();
        let mut hasher = sha2::Sha256::new();
        hasher.update(&decoded);
        hasher.update(roles.generation().to_le_bytes());
        // A pair good for /ingest only is never taken for a console one.
        hasher.update([u8::from(superuser_only)]);
        let digest: [u8; 32] = hasher.finalize().into();
        if self.verified.lock().contains(&digest) {
            return Some(user.to_string());
        }
        // Superuser roles that may log in: the password file's users and those made with
        // CREATE ROLE ... SUPERUSER LOGIN. The console shows and cancels every query, so it
        // is for superusers only.
        let valid = roles
            .get(user)
            .filter(|r| r.login && (r.superuser || !superuser_only))
            .and_then(|r| r.password)
            .and_then(|p| Verifier::parse(&p))
            .is_some_and(|v| v.check_password(password));
        if !valid {
            return None;
        }
        let mut verified = self.verified.lock();
        if verified.len() >= VERIFIED_MAX {
            verified.clear();
        }
        verified.insert(digest);
        Some(user.to_string())
    }
}

/// Why a request must be refused as coming from another site, if it must: the console
/// runs SQL, so a page elsewhere must not make the user's browser call it (cross-site
/// request forgery), nor reach it through a DNS name rebound to 127.0.0.1.
///
/// - `Sec-Fetch-Site` (sent by browsers), when present, must be `same-origin` or `none`;
/// - `Origin`, when present, must be `http://` followed by the request's `Host`;
/// - without a password file, `Host` must name the machine by address or as `localhost`.
///
/// Clients that are not browsers (curl, Prometheus, scripts) send neither of the first two
/// headers and are not affected.
fn cross_site(headers: &axum::http::HeaderMap, authenticated: bool) -> Option<String> {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site")) {
        if site != "same-origin" && site != "none" {
            return Some(format!("a {site} request"));
        }
    }
    let host = text(header::HOST).unwrap_or("");
    if let Some(origin) = text(header::ORIGIN) {
        if origin.strip_prefix("http://") != Some(host) {
            return Some(format!("a request from origin {origin}"));
        }
    }
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let local = name == "localhost" || name.parse::<std::net::IpAddr>().is_ok();
    if !authenticated && !local {
        return Some(format!("a request for host {host:?} (without a password file, only addresses and localhost are served)"));
    }
    None
}

/// Refuse cross-site requests with 403 (see [`cross_site`]).
async fn same_site_only(
    State(console): State<Arc<Console>>,
    request: Request,
    next: Next,
) -> Response {
    let authenticated = console.options.passwords.is_some();
    match cross_site(request.headers(), authenticated) {
        None => next.run(request).await,
        Some(why) => (
            StatusCode::FORBIDDEN,
            format!("the console refuses {why}\n"),
        )
            .into_response(),
    }
}

/// Refuse a request without valid credentials (when a password file is in force) with 401
/// and a Basic challenge, so a browser asks for a user name and password.
async fn require_auth(
    State(console): State<Arc<Console>>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(user) = console.authorized(request.headers().get(header::AUTHORIZATION)) {
        request.extensions_mut().insert(User(user));
        return next.run(request).await;
    }
    unauthorized()
}

/// 401 with a Basic challenge, so a browser asks for a user name and password.
fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(
            header::WWW_AUTHENTICATE,
            "Basic realm=\"tcq\", charset=\"UTF-8\"",
        )],
        "authentication required: the user name and password of tcqd's --password-file\n",
    )
        .into_response()
}

/// The console's routes.
fn console_router(console: Arc<Console>) -> Router {
    Router::new()
        .route("/", get(api::index))
        .route("/assets/{name}", get(api::asset))
        .route("/favicon.ico", get(api::favicon))
        .route("/api/streams", get(api::streams))
        .route("/api/tables", get(api::tables))
        .route("/api/queries", get(api::queries))
        .route("/api/sinks", get(api::sinks))
        .route("/api/queries/{id}/plan", get(api::plan))
        .route("/api/queries/{id}/cancel", post(api::cancel))
        .route("/api/queries/{id}/tail", get(live::tail))
        .route("/api/sql", post(api::sql))
        .route("/api/sql/stream", get(live::sql_stream))
        .route("/api/explain", post(api::explain))
        .route("/metrics", get(metrics::metrics))
        .route("/healthz", get(healthz))
        .layer(axum::middleware::from_fn_with_state(
            console.clone(),
            require_auth,
        ))
        // Authenticated by itself: any role may ingest where it has INSERT.
        .route(
            "/ingest/{stream}",
            post(ingest::ingest).layer(axum::extract::DefaultBodyLimit::max(
                console.options.ingest_bytes_max,
            )),
        )
        // Outermost: a cross-site request is refused before anything else.
        .layer(axum::middleware::from_fn_with_state(
            console.clone(),
            same_site_only,
        ))
        .layer(axum::middleware::map_response(json_errors))
        .with_state(console)
}

/// The `--metrics` listener's routes.
fn metrics_router(console: Arc<Console>) -> Router {
    Router::new()
        .route("/metrics", get(metrics::metrics))
        .route("/healthz", get(healthz))
        .layer(axum::middleware::from_fn_with_state(
            console.clone(),
            require_auth,
        ))
        .with_state(console)
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// Serve the console on `listener` until `shutdown` completes; open event streams then end
/// and the function returns once every response has finished.
pub async fn serve(
    listener: TcpListener,
    console: Arc<Console>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_router(listener, console.clone(), console_router(console), shutdown).await
}

/// Serve only `/metrics` and `/healthz` on `listener` (`tcqd --metrics ADDR`), until
/// `shutdown` completes.
pub async fn serve_metrics(
    listener: TcpListener,
    console: Arc<Console>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_router(listener, console.clone(), metrics_router(console), shutdown).await
}

async fn serve_router(
    listener: TcpListener,
    console: Arc<Console>,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let signal = async move {
        shutdown.await;
        console.shutdown.send_replace(true);
    };
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(signal)
    .await
}

/// A JSON error body, `{"error": {"message": ..., "sqlstate": ...}}`, with `status`:
/// every error answer carries a SQLSTATE (see [`json_errors`] for the answers made
/// outside the handlers).
fn error_response(status: StatusCode, message: String, sqlstate: &str) -> Response {
    let body = serde_json::json!({ "error": { "message": message, "sqlstate": sqlstate } });
    (status, axum::Json(body)).into_response()
}

/// The SQLSTATE of an error answer made outside the handlers (a refusal of the
/// middleware, an extractor's rejection, a body over its limit, an unknown path), by
/// its status: 28000 for 401, 42501 for 403, 42704 for 404, 54000 for 413, 0A000 for
/// 405 and 415, 53300 for 503, XX000 for another 5xx and 22023 for another 4xx (a
/// query string or JSON body that does not parse).
fn status_sqlstate(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "28000",
        403 => "42501",
        404 => "42704",
        413 => "54000",
        405 | 415 => "0A000",
        503 => "53300",
        500..=599 => "XX000",
        _ => "22023",
    }
}

/// Error answers that are not JSON yet (see [`status_sqlstate`]) as [`error_response`]
/// makes them: the text as the message (at most 64 KiB read), the headers kept (a 401's
/// Basic challenge). Other answers pass as they are.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10)
        .await
        .unwrap_or_default();
    let message = String::from_utf8_lossy(&text).trim_end().to_string();
    let message = match message.is_empty() {
        true => status.canonical_reason().unwrap_or("error").to_string(),
        false => message,
    };
    let json = error_response(status, message, status_sqlstate(status));
    let (json_parts, body) = json.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    for (name, value) in &json_parts.headers {
        parts.headers.insert(name, value.clone());
    }
    Response::from_parts(parts, body)
}

/// An engine error's fields as the wire server sends them: message, SQLSTATE, and the
/// detail, hint and position (1-based, in characters) psql prints, each `null` when absent.
pub(crate) fn error_json(e: &crate::Error) -> serde_json::Value {
    serde_json::json!({
        "message": e.to_string(),
        "sqlstate": crate::server::sqlstate(e),
        "detail": e.detail(),
        "hint": e.hint(),
        "position": e.position(),
    })
}

/// An engine error as JSON: 400 with the fields of [`error_json`].
fn engine_error(e: &crate::Error) -> Response {
    let body = serde_json::json!({ "error": error_json(e) });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}
