//! The PostgreSQL wire protocol front end: the only part of tcq that knows about sockets.
//!
//! [`serve`] accepts connections and gives each an engine [`Session`](crate::engine::Session).
//! Start-up trusts every user, or with [`ServerOptions::passwords`] requires SCRAM-SHA-256
//! (the password file's users and the roles of `CREATE ROLE`, looked up in
//! [`Engine::roles`](crate::engine::Engine::roles); a NOLOGIN role is refused with 28000),
//! and registers every backend with a connection manager, so that a CancelRequest on a separate connection reaches the query it names.
//! With [`ServerOptions::tls`] a client that sends an SSLRequest continues over TLS (see
//! [`tls_required`] for when plaintext is refused); CancelRequests are throttled per peer
//! address (module `cancel`).
//! Then the client may use the simple protocol (several statements per Query), the extended
//! protocol (Parse/Bind/Describe/Execute with row-limited portals), COPY FROM STDIN and
//! COPY TO STDOUT. Engine errors become ErrorResponses with the SQLSTATE [`sqlstate`]
//! assigns; no other module knows those codes.
//!
//! Design decision: pgwire's default query handlers collect or buffer rows, which can never
//! finish for a continuous query, so tcq owns the Query, Execute and COPY handlers and
//! writes each row as the engine yields it, flushing whenever the query goes idle (see
//! `conn::pump`). A statement that is streaming reads nothing from its socket, so each
//! connection also gets TCP keepalive and a watcher that notices when the peer closes
//! its end; either way a vanished client's queries are dropped promptly.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use tcq::engine::{Config, Engine};
//! use tcq::server::{serve_with, ServerOptions};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:5433").await?;
//! let engine = Engine::new(Config::default());
//! serve_with(listener, engine, ServerOptions::default(), std::future::pending()).await
//! # }
//! ```

mod cancel;
mod conn;
mod copy;
mod encode;
mod end_point;
mod extended;
mod guard;
mod line_buf;
mod notify;
mod out_bytes;
mod peer;
mod query;
mod scram;
mod socket;
mod startup;
mod tls;
mod wire;

pub(crate) use tls::Tls;

use std::collections::HashMap;
use std::fmt::Debug;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::Sink;
use pgwire::api::copy::CopyHandler;
use pgwire::api::portal::Portal as PgPortal;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::Response;
use pgwire::api::stmt::NoopQueryParser;
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, ConnectionManager};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyFail};
use pgwire::messages::extendedquery::{Bind, Close, Describe, Execute, Parse, Sync as PgSync};
use pgwire::messages::simplequery::Query;
use pgwire::messages::PgWireBackendMessage;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::engine::Engine;
use crate::error::Error;
pub use crate::password::Verifier;
use conn::ConnSlot;
pub use socket::connection_panics;
use wire::Client;

/// The SQLSTATE PostgreSQL would send for `e` (the code each variant's doc names).
///
/// ```ignore
/// use tcq::Error;
/// assert_eq!(tcq::server::sqlstate(&Error::QueryCanceled), "57014");
/// assert_eq!(tcq::server::sqlstate(&Error::UndefinedTable("s".into())), "42P01");
/// ```
pub(crate) fn sqlstate(e: &Error) -> &'static str {
    match e {
        Error::Syntax(_) => "42601",
        Error::UndefinedTable(_)
        | Error::MissingFromEntry(_)
        | Error::UndefinedRelationOfKind { .. } => "42P01",
        Error::InvalidTableDefinition(_) => "42P16",
        Error::StatementTooComplex(_) => "54001",
        Error::UndefinedColumn(_) => "42703",
        Error::UndefinedFunction(_) => "42883",
        Error::DuplicateTable(_) => "42P07",
        Error::DuplicateColumn(_) => "42701",
        Error::AmbiguousColumn(_) => "42702",
        Error::AmbiguousFunction(_) => "42725",
        Error::DuplicateAlias(_) | Error::DuplicateCteName(_) => "42712",
        Error::InvalidRecursion(_) => "42P19",
        Error::DatatypeMismatch(_) => "42804",
        Error::CannotCoerce(_) => "42846",
        Error::Grouping(_) => "42803",
        Error::Windowing(_) => "42P20",
        Error::UndefinedObject(_) => "42704",
        Error::UndefinedSchema(_) => "3F000",
        Error::InvalidName(_) => "42602",
        Error::UndefinedFile(_) => "58P01",
        Error::IndeterminateDatatype(_) => "42P18",
        Error::UndefinedParameter(_) => "42P02",
        Error::InvalidTextRepresentation(_) => "22P02",
        Error::InvalidDatetimeFormat(_) => "22007",
        Error::DatetimeFieldOverflow(_) => "22008",
        Error::InvalidTimeZoneDisplacement(_) => "22009",
        Error::InvalidParameterValue(_) => "22023",
        Error::NumericValueOutOfRange(_) => "22003",
        Error::ArraySubscript(_) => "2202E",
        Error::DivisionByZero => "22012",
        Error::StringDataRightTruncation(_) => "22001",
        Error::NotNullViolation(_) => "23502",
        Error::UniqueViolation(_) => "23505",
        Error::InvalidColumnReference(_) => "42P10",
        Error::CardinalityViolation(_) => "21000",
        Error::BadCopyFileFormat(_) => "22P04",
        Error::FeatureNotSupported(_) => "0A000",
        Error::InvalidCursorName(_) => "34000",
        Error::InvalidSqlStatementName(_) => "26000",
        Error::ReadOnlySqlTransaction(_) => "25006",
        Error::DuplicateCursor(_) => "42P03",
        Error::NoActiveTransaction(_) => "25P01",
        Error::InFailedTransaction => "25P02",
        Error::QueryCanceled | Error::StatementTimeout => "57014",
        Error::ProgramLimitExceeded(_) => "54000",
        Error::CharacterNotInRepertoire(_) => "22021",
        Error::InvalidRowCountInLimit(_) => "2201W",
        Error::InvalidRowCountInResultOffset(_) => "2201X",
        Error::OutOfMemory(_) => "53200",
        Error::ProtocolViolation(_) => "08P01",
        Error::InsufficientPrivilege(_) => "42501",
        Error::DuplicateObject(_) => "42710",
        Error::ReservedName(_) => "42939",
        Error::DependentObjectsStillExist(_) => "2BP01",
        Error::ObjectNotInPrerequisiteState(_) => "55000",
        Error::InvalidSavepoint(_) => "3B001",
        Error::InvalidBinaryRepresentation(_) => "22P03",
        Error::ActiveSqlTransaction(_) => "25001",
        Error::Detailed { error, .. } => sqlstate(error),
        Error::Io(_) => "58030",
        Error::DataCorrupted(_) => "XX001",
        Error::ObjectInUse(_) => "55006",
        Error::WrongObjectType(_) => "42809",
        Error::InvalidArgumentForPowerFunction(_) => "2201F",
        Error::InvalidArgumentForLogarithm(_) => "2201E",
        Error::InvalidRegularExpression(_) => "2201B",
        Error::CantChangeRuntimeParam(_) => "55P02",
        Error::SubstringError(_) => "22011",
        Error::InvalidEscapeSequence(_) => "22025",
        Error::InvalidUseOfEscapeCharacter(_) => "2200C",
        Error::InvalidArgumentForWidthBucket(_) => "2201G",
        Error::InvalidArgumentForNtile(_) => "22014",
        Error::InvalidArgumentForNthValue(_) => "22016",
        Error::InvalidPrecedingOrFollowingSize(_) => "22013",
        Error::NullValueNotAllowed(_) => "22004",
        Error::Internal(_) => "XX000",
    }
}

/// Serve PostgreSQL clients on `listener` for ever.
///
/// Each connection runs on its own task with its own engine session; a connection that
/// fails or disconnects affects no other.
pub async fn serve(listener: TcpListener, engine: Arc<Engine>) -> std::io::Result<()> {
    serve_until(listener, engine, std::future::pending()).await
}

/// How long a shutdown waits for connections to close after telling them to.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serve PostgreSQL clients on `listener` until `shutdown` resolves, then shut down as
/// PostgreSQL's fast shutdown does: stop accepting, end every connection with a FATAL
/// 57P01 (`terminating connection due to administrator command`), streaming statements
/// included; an open COPY FROM STDIN is aborted, so none of its rows reach a query. Returns
/// once every connection has closed, or after 5 s.
pub(crate) async fn serve_until(
    listener: TcpListener,
    engine: Arc<Engine>,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    serve_with(listener, engine, ServerOptions::default(), shutdown).await
}

/// How the server treats clients.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// SCRAM-SHA-256 verifiers by user name. `Some`: every connection must authenticate
    /// with SCRAM-SHA-256 as one of these users or as a role made by `CREATE ROLE ...
    /// PASSWORD` (28P01 otherwise); these users are superusers. `None`: trust, every user
    /// name is accepted without a password, and one that is no role is a superuser.
    pub passwords: Option<HashMap<String, Verifier>>,
    /// TLS for clients that ask for it (SSLRequest answered `S`); `None`: answered `N`.
    /// With both TLS and passwords, a client beyond loopback must use TLS (28000
    /// otherwise; see [`tls_required`]).
    pub tls: Option<Tls>,
}

impl ServerOptions {
    /// Load TLS from a PEM certificate chain and a PEM private key (see
    /// [`Tls::from_pem_files`]; errors name the file).
    pub fn with_tls_files(
        mut self,
        cert: &std::path::Path,
        key: &std::path::Path,
    ) -> std::io::Result<Self> {
        self.tls = Some(Tls::from_pem_files(cert, key)?);
        Ok(self)
    }

    /// Read a password file: one `user:password` per line, where the password may also be
    /// a PostgreSQL SCRAM-SHA-256 verifier (`SCRAM-SHA-256$4096:...`); blank lines and
    /// lines starting with `#` are ignored. Plain passwords are turned into verifiers at
    /// once and never kept.
    ///
    /// Errors: the file cannot be read, or a line has no `:` (the message names the line).
    pub fn with_password_file(mut self, path: &std::path::Path) -> std::io::Result<Self> {
        let text = std::fs::read_to_string(path)?;
        let mut passwords = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let Some((user, password)) = line.split_once(':') else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: line {} is not user:password", path.display(), i + 1),
                ));
            };
            let verifier =
                Verifier::parse(password).unwrap_or_else(|| Verifier::from_password(password));
            passwords.insert(user.to_string(), verifier);
        }
        self.passwords = Some(passwords);
        Ok(self)
    }
}

/// The host rule for a client at `peer` when both TLS and passwords are configured: it
/// must use TLS unless it connects over loopback (127.0.0.0/8, ::1, or ::ffff:127.x.y.z).
/// True when a client that is not `secure` must be refused (28000). Without TLS configured
/// or without passwords, nobody is refused for not using TLS.
pub(crate) fn tls_required(
    tls_configured: bool,
    password_required: bool,
    peer: std::net::IpAddr,
    secure: bool,
) -> bool {
    let loopback = match peer {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
    };
    tls_configured && password_required && !secure && !loopback
}

/// [`serve_until`] with [`ServerOptions`] (authentication, TLS).
pub async fn serve_with(
    listener: TcpListener,
    engine: Arc<Engine>,
    options: ServerOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    // Derived streams and sinks restored at start register their queries first, so no
    // client's tuple reaches a stream before them.
    engine.wait_ready().await;
    let handler = Arc::new(Handler::new(engine, options));
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, addr) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and similar: wait rather than spin or give up.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            let _watch = match handler.prepare_socket(&stream, addr) {
                Ok(watch) => watch,
                Err(e) => {
                    tracing::debug!(%addr, "socket set-up failed: {e}");
                    return;
                }
            };
            tracing::debug!(%addr, "connection opened");
            let _open = OpenConnection::count(&handler.connections);
            socket::serve_connection(stream, addr, handler.clone()).await;
            handler.watches.lock().remove(&addr);
            drop(_open);
            return_freed_memory();
            tracing::info!(%addr, "connection closed");
        });
    }
    drop(listener);
    let open = handler.connections.load(Ordering::Relaxed);
    tracing::info!("shutting down: ending {open} connections");
    handler.shutdown.send_replace(true);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    while handler.connections.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Queries no connection ended (their connection outlived the grace period) stop now,
    // before the runtime's timers go away under an executor waiting on a full queue.
    handler.engine.end_all_queries();
    Ok(())
}

/// The one handler object pgwire shares between all connections.
pub(crate) struct Handler {
    engine: Arc<Engine>,
    manager: Arc<ConnectionManager>,
    /// Connections open now (`connections_max` is checked at start-up).
    connections: AtomicUsize,
    /// Turns `true` when the server shuts down; every connection watches it.
    shutdown: watch::Sender<bool>,
    /// Whether start-up asks for a password (SCRAM-SHA-256): there is a password file. Its
    /// users are installed as roles in the engine, where start-up looks every user up;
    /// `false`: trust (no password asked).
    passwords_required: bool,
    /// TLS offered to clients that ask; `None`: SSLRequest answered `N`.
    tls: Option<Tls>,
    /// Per-address limits on CancelRequests.
    cancels: cancel::CancelThrottle,
    /// Peer-closed signals for connections whose start-up has not claimed theirs yet.
    watches: parking_lot::Mutex<HashMap<SocketAddr, watch::Receiver<bool>>>,
}

impl Handler {
    fn new(engine: Arc<Engine>, options: ServerOptions) -> Handler {
        if let Some(passwords) = &options.passwords {
            engine.roles().install_file_roles(
                passwords
                    .iter()
                    .map(|(user, verifier)| (user.clone(), verifier.to_string())),
            );
        }
        Handler {
            engine,
            manager: Arc::new(ConnectionManager::new()),
            connections: AtomicUsize::new(0),
            shutdown: watch::channel(false).0,
            passwords_required: options.passwords.is_some(),
            tls: options.tls,
            cancels: cancel::CancelThrottle::default(),
            watches: parking_lot::Mutex::new(HashMap::new()),
        }
    }

    /// Act on a CancelRequest from `peer`: cancel the query of the backend it names if its
    /// key is right, unless `peer` has used up its attempts (see [`cancel`]). Nothing is
    /// returned, so the caller's reply cannot depend on the outcome.
    async fn cancel_request(
        &self,
        peer: std::net::IpAddr,
        request: pgwire::messages::cancel::CancelRequest,
    ) {
        if !self.cancels.take(peer, std::time::Instant::now()) {
            tracing::debug!(%peer, "cancel request throttled");
            return;
        }
        if self.manager.cancel(request.pid, &request.secret_key).await {
            self.cancels.refund(peer);
        } else {
            tracing::debug!(%peer, "cancel request with an unknown pid or key");
        }
    }

    /// TCP keepalive, and a registration that flags the connection when the peer closes
    /// it (see [`peer`]). Both act on the socket itself: a connection holds one descriptor
    /// (LISTEN notifications and `pg_terminate_backend` go through the connection loop).
    fn prepare_socket(
        &self,
        stream: &TcpStream,
        addr: SocketAddr,
    ) -> std::io::Result<Option<peer::PeerWatch>> {
        socket2::SockRef::from(stream).set_keepalive(true)?;
        Ok(
            peer::watch(stream.as_raw_fd()).map(|(registration, closed)| {
                self.watches.lock().insert(addr, closed);
                registration
            }),
        )
    }
}

/// Give memory freed by closed connections back to the operating system, at most once a
/// second (a close within that second schedules one for its end). glibc's allocator keeps
/// freed heap pages for reuse, so without this a burst of connections (5,000 idle ones
/// take ~100 MB) would leave the process at its peak size.
fn return_freed_memory() {
    static LAST_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static SCHEDULED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let now_ms = (crate::time::now_us() / 1000) as u64;
    let last = LAST_MS.load(Ordering::Relaxed);
    if now_ms.saturating_sub(last) < 1000
        || LAST_MS
            .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        if !SCHEDULED.swap(true, Ordering::Relaxed) {
            tokio::spawn(async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                SCHEDULED.store(false, Ordering::Relaxed);
                LAST_MS.store((crate::time::now_us() / 1000) as u64, Ordering::Relaxed);
                trim();
            });
        }
        return;
    }
    trim();
}

fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Counts one open connection while it exists.
struct OpenConnection<'a>(&'a AtomicUsize);

impl<'a> OpenConnection<'a> {
    fn count(open: &'a AtomicUsize) -> OpenConnection<'a> {
        open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(open)
    }
}

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The connection's state, put there by start-up. A message has arrived, so the
/// connection is no longer idle.
fn slot_of<C: ClientInfo>(client: &C) -> PgWireResult<Arc<ConnSlot>> {
    let slot = client
        .session_extensions()
        .get::<ConnSlot>()
        .ok_or_else(|| wire::server_error("08P01", "query before start-up completed"))?;
    slot.set_idle(false);
    Ok(slot)
}

#[async_trait]
impl SimpleQueryHandler for Handler {
    async fn on_query<C>(&self, client: &mut C, query: Query) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            query::on_query(&mut Client::new(client), &slot, &query.query),
        )
        .await
    }

    async fn do_query<C>(&self, _client: &mut C, _query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        // Never called: `on_query` is overridden.
        Ok(Vec::new())
    }
}

#[async_trait]
impl ExtendedQueryHandler for Handler {
    type Statement = String;
    type QueryParser = NoopQueryParser;

    fn query_parser(&self) -> Arc<Self::QueryParser> {
        Arc::new(NoopQueryParser::new())
    }

    async fn on_parse<C>(&self, client: &mut C, message: Parse) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            extended::on_parse(&mut Client::new(client), &slot, message),
        )
        .await
    }

    async fn on_bind<C>(&self, client: &mut C, message: Bind) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            extended::on_bind(&mut Client::new(client), &slot, message),
        )
        .await
    }

    async fn on_execute<C>(&self, client: &mut C, message: Execute) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            extended::on_execute(&mut Client::new(client), &slot, message),
        )
        .await
    }

    async fn on_describe<C>(&self, client: &mut C, message: Describe) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            extended::on_describe(&mut Client::new(client), &slot, message),
        )
        .await
    }

    async fn on_sync<C>(&self, client: &mut C, _message: PgSync) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            extended::on_sync(&mut Client::new(client), &slot),
        )
        .await
    }

    async fn on_close<C>(&self, client: &mut C, message: Close) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            extended::on_close(&mut Client::new(client), &slot, message),
        )
        .await
    }

    async fn do_query<C>(
        &self,
        _client: &mut C,
        _portal: &PgPortal<Self::Statement>,
        _max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        // Never called: `on_execute` is overridden.
        Ok(Response::EmptyQuery)
    }
}

#[async_trait]
impl CopyHandler for Handler {
    async fn on_copy_data<C>(&self, client: &mut C, copy_data: CopyData) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            copy::on_copy_data(&mut Client::new(client), &slot, &copy_data.data),
        )
        .await
    }

    async fn on_copy_done<C>(&self, client: &mut C, _done: CopyDone) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let slot = slot_of(client)?;
        crate::tz::scope(
            slot.zone.clone(),
            copy::on_copy_done(&mut Client::new(client), &slot),
        )
        .await
    }

    async fn on_copy_fail<C>(&self, client: &mut C, fail: CopyFail) -> PgWireError
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match slot_of(client) {
            Ok(slot) => {
                let zone = slot.zone.clone();
                crate::tz::scope(
                    zone,
                    copy::on_copy_fail(&mut Client::new(client), &slot, &fail.message),
                )
                .await
            }
            Err(e) => e,
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn sqlstate_example() {
        use crate::Error;
        assert_eq!(crate::server::sqlstate(&Error::QueryCanceled), "57014");
        assert_eq!(
            crate::server::sqlstate(&Error::UndefinedTable("s".into())),
            "42P01"
        );
    }
}
