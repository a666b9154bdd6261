//! Shared helpers for the integration tests: an in-process tcq server on a random port and
//! tokio-postgres connections to it.
//!
//! Each call to [`start_server`] runs a fresh [`Engine`] behind its own listener on
//! 127.0.0.1:0, on a dedicated thread with its own tokio runtime. The server therefore keeps
//! running however the test's own runtime schedules (a `#[tokio::test]` is single-threaded),
//! and tests never share catalog state.

#![allow(dead_code)]

pub mod golden;
pub mod java;
pub mod kafka;
pub mod mqtt;
pub mod nats;
pub mod postgres;
pub mod psql;
pub mod sinks;
pub mod sources;
pub mod tcqd;

use std::sync::Arc;

use tcq::engine::{Config, Engine};
use tokio_postgres::{Client, NoTls};

/// Report that the running test is skipped, and why; the caller then returns. The line is
/// written to the process's stderr through `std::io::Write` (libtest captures only the
/// print macros' output, so it shows without `--nocapture`) and appended to the file named
/// by `TCQ_SKIP_LOG` (one `test<TAB>reason` line; scripts/test.sh sets it and closes its run
/// with a summary of the skips). The test's name is its thread's, as libtest names it.
pub fn skip(reason: &str) {
    use std::io::Write;
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    let reason = reason.replace(['\n', '\t'], " ");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
    if let Some(log) = std::env::var_os("TCQ_SKIP_LOG") {
        record_skip(std::path::Path::new(&log), &test, &reason);
    }
}

/// Append `test<TAB>reason` to the skip log `log` (one write, so lines of tests running
/// at once do not interleave).
pub fn record_skip(log: &std::path::Path, test: &str, reason: &str) {
    use std::io::Write;
    let line = format!("{test}\t{reason}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        let _ = writeln!(
            std::io::stderr(),
            "cannot record the skip in {}: {e}",
            log.display()
        );
    }
}

/// Whether python3 imports every module of `modules`; when one is missing, the test is
/// reported skipped (see [`skip`]) with what to install.
pub fn python_modules(modules: &[&str], install: &str) -> bool {
    let missing: Vec<&str> = modules
        .iter()
        .copied()
        .filter(|m| !have("python3", &["-c", &format!("import {m}")]))
        .collect();
    if missing.is_empty() {
        return true;
    }
    skip(&format!(
        "python3 lacks the module(s) {} (pip install {install}; scripts/test.sh does)",
        missing.join(", ")
    ));
    false
}

/// Whether psql runs; when not, the test is reported skipped (see [`skip`]).
pub fn psql_installed() -> bool {
    if have("psql", &["--version"]) {
        return true;
    }
    skip("psql is not installed (apt-get install postgresql-client; scripts/test.sh does)");
    false
}

/// Whether `program` runs and succeeds with `args` (a tool a test needs is installed).
pub fn have(program: &str, args: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run `python3 SCRIPT --port PORT` against a fresh server and return what it printed,
/// after asserting that it succeeded; `None` (with a SKIPPED message) when python3 or the
/// driver `module` is missing (.ci/run installs the drivers).
pub fn run_python(script: &std::path::Path, module: &str) -> Option<String> {
    if !python_modules(&[module], module) {
        return None;
    }
    let port = start_server();
    let output = std::process::Command::new("python3")
        .arg(script)
        .args(["--port", &port.to_string()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(
        output.status.success(),
        "{} failed\nstdout:\n{stdout}\nstderr:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Some(stdout)
}

/// Start a server with the default configuration; returns its port.
pub fn start_server() -> u16 {
    start_server_with(Config::default())
}

/// Start a server with `config`; returns its port.
pub fn start_server_with(config: Config) -> u16 {
    start_engine(move || Engine::new(config))
}

/// A fresh temporary directory private to this user (mode 0700), as a data directory
/// must be: tcqd refuses one that group or others may access.
pub fn data_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .expect("a temporary data directory")
}

/// Start a server with `config` on data directory `dir` (default storage settings);
/// returns its port.
pub fn start_server_on(config: Config, dir: &std::path::Path) -> u16 {
    let storage = tcq::engine::StorageConfig::new(dir);
    start_engine(move || Engine::open(config, Some(storage)).expect("open the data directory"))
}

/// Start a server around an engine built by `make` inside the server's runtime (an engine
/// may spawn tasks when it is created); returns its port.
fn start_engine(make: impl FnOnce() -> Arc<Engine> + Send + 'static) -> u16 {
    start_engine_with_options(make, tcq::server::ServerOptions::default())
}

/// Start a server with `options` (a password file, TLS) on a fresh in-memory engine;
/// returns its port.
pub fn start_server_with_options(options: tcq::server::ServerOptions) -> u16 {
    start_engine_with_options(|| Engine::new(Config::default()), options)
}

/// A password file holding `text` (`user:password` lines); keep it while the server reads
/// it (only at start).
pub fn password_file(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("password file");
    std::fs::write(file.path(), text).expect("write password file");
    file
}

/// Server options that require SCRAM-SHA-256 for the users of `text` (a password file's
/// lines).
pub fn password_options(text: &str) -> tcq::server::ServerOptions {
    let file = password_file(text);
    tcq::server::ServerOptions::default()
        .with_password_file(file.path())
        .expect("read password file")
}

/// Connect as `user` with `password` over plain TCP; the connection runs on a spawned task.
pub async fn connect_as(
    port: u16,
    user: &str,
    password: &str,
) -> Result<Client, tokio_postgres::Error> {
    let conn = format!(
        "host=127.0.0.1 port={port} user={user} password='{password}' dbname=tcq application_name=tcq-tests"
    );
    let (client, connection) = tokio_postgres::connect(&conn, NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// [`start_engine`] with server options.
fn start_engine_with_options(
    make: impl FnOnce() -> Arc<Engine> + Send + 'static,
    options: tcq::server::ServerOptions,
) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("tcq-test-server".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_stack_size(tcq::engine::THREAD_STACK_BYTES)
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("local addr").port())
                    .expect("report port");
                tcq::server::serve_with(listener, make(), options, std::future::pending())
                    .await
                    .expect("serve");
            });
        })
        .expect("server thread");
    rx.recv().expect("server start")
}

/// The connection string for a test server on `port`.
pub fn conn_string(port: u16) -> String {
    format!("host=127.0.0.1 port={port} user=tcq dbname=tcq application_name=tcq-tests")
}

/// Connect to the server on `port`; the connection runs on a spawned task.
pub async fn connect(port: u16) -> Client {
    connect_with_handle(port).await.0
}

/// Connect, and also return the task driving the connection: aborting it closes the socket
/// abruptly, as a client that crashes or loses its network would.
pub async fn connect_with_handle(port: u16) -> (Client, tokio::task::JoinHandle<()>) {
    let (client, connection) = tokio_postgres::connect(&conn_string(port), NoTls)
        .await
        .expect("connect to tcq");
    let handle = tokio::spawn(async move {
        let _ = connection.await;
    });
    (client, handle)
}

/// A server error's message, then its CONTEXT (PostgreSQL's "where", e.g. the line of a
/// COPY) on a line of its own when it has one: `message\nCONTEXT: COPY t, line 2`.
pub fn message_and_context(db: &tokio_postgres::error::DbError) -> String {
    match db.where_() {
        Some(w) => format!("{}\nCONTEXT: {w}", db.message()),
        None => db.message().to_string(),
    }
}

/// The SQLSTATE of a tokio-postgres error, or a panic showing the error when it has none.
pub fn sqlstate(e: &tokio_postgres::Error) -> String {
    match e.code() {
        Some(code) => code.code().to_string(),
        None => panic!("expected a server error with a SQLSTATE, got: {e}"),
    }
}

/// Wait until at least `n` continuous queries are registered (and attached to their
/// streams: the system view passes a barrier through each stream's queue), so rows sent
/// next are seen by them. Panics after 10 s.
pub async fn wait_for_queries(client: &Client, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let msgs = client
            .simple_query("SELECT id FROM tcq_queries")
            .await
            .expect("tcq_queries");
        let registered = msgs
            .iter()
            .filter(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(_)))
            .count();
        if registered >= n {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{registered} of {n} queries registered after 10 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// `COPY ... FROM STDIN` through tokio-postgres's own COPY API: `data` in CopyData
/// messages of `piece` bytes (at least 1), then CopyDone. The server's answer: the row
/// count, or its error.
pub async fn copy_in(
    c: &Client,
    sql: &str,
    data: &[u8],
    piece: usize,
) -> Result<u64, tokio_postgres::Error> {
    use futures::SinkExt;
    let sink = c.copy_in::<_, bytes::Bytes>(sql).await?;
    futures::pin_mut!(sink);
    for p in data.chunks(piece.max(1)) {
        sink.send(bytes::Bytes::copy_from_slice(p)).await?;
    }
    sink.finish().await
}

/// Every byte `sql` (a `COPY ... TO STDOUT`) sends, its CopyData messages joined.
pub async fn copy_out_bytes(c: &Client, sql: &str) -> Vec<u8> {
    use futures::TryStreamExt;
    let stream = c.copy_out(sql).await.unwrap();
    let parts: Vec<bytes::Bytes> = stream.try_collect().await.unwrap();
    parts.concat()
}

/// Rows of a simple query as text (NULL as "NULL"); panics on an error or after 20 s.
pub async fn rows(c: &Client, sql: &str) -> Vec<Vec<String>> {
    rows_within(c, sql, 20).await
}

/// [`rows`] allowed `secs` seconds instead of 20.
pub async fn rows_within(c: &Client, sql: &str, secs: u64) -> Vec<Vec<String>> {
    let msgs = tokio::time::timeout(std::time::Duration::from_secs(secs), c.simple_query(sql))
        .await
        .unwrap_or_else(|_| panic!("not done after {secs} s: {sql}"))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    msgs.into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// Run `sql` (one or more statements); panics on an error or after 20 s.
pub async fn exec(c: &Client, sql: &str) {
    tokio::time::timeout(std::time::Duration::from_secs(20), c.batch_execute(sql))
        .await
        .unwrap_or_else(|_| panic!("timed out: {sql}"))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Expected rows written as string literals.
pub fn table(v: &[&[&str]]) -> Vec<Vec<String>> {
    v.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

/// The ports of a server started with [`start_with_console`].
pub struct ConsolePorts {
    /// The PostgreSQL listener.
    pub pg: u16,
    /// The web console.
    pub http: u16,
    /// The separate `/metrics` listener (`tcqd --metrics`).
    pub metrics: u16,
}

/// Start an engine with its wire server (authenticating with `options.passwords` when
/// given), its web console and a separate metrics listener, on a thread of their own.
pub fn start_with_console(options: tcq::http::HttpOptions) -> ConsolePorts {
    start_with_console_on(options, None)
}

/// [`start_with_console`] with the engine on data directory `dir` (memory only: `None`).
pub fn start_with_console_on(
    options: tcq::http::HttpOptions,
    dir: Option<&std::path::Path>,
) -> ConsolePorts {
    let storage = dir.map(tcq::engine::StorageConfig::new);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_stack_size(tcq::engine::THREAD_STACK_BYTES)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let engine = Engine::open(Config::default(), storage).expect("open the engine");
            let bind = || tokio::net::TcpListener::bind("127.0.0.1:0");
            let (pg, http, metrics) = (
                bind().await.unwrap(),
                bind().await.unwrap(),
                bind().await.unwrap(),
            );
            tx.send(ConsolePorts {
                pg: pg.local_addr().unwrap().port(),
                http: http.local_addr().unwrap().port(),
                metrics: metrics.local_addr().unwrap().port(),
            })
            .unwrap();
            let server_options = tcq::server::ServerOptions {
                passwords: options.passwords.clone(),
                tls: None,
            };
            let console = tcq::http::Console::new(engine.clone(), options);
            let pending = std::future::pending;
            tokio::spawn(tcq::http::serve(http, console.clone(), pending()));
            tokio::spawn(tcq::http::serve_metrics(metrics, console, pending()));
            tcq::server::serve_with(pg, engine, server_options, pending())
                .await
                .expect("serve");
        });
    });
    rx.recv().expect("server start")
}

/// Start the `tcqd` binary on 127.0.0.1 with a port of its own choosing, in memory only,
/// with `args` added; returns the child and the port it reports on stderr (30 s at most).
/// A thread keeps draining the child's stderr so its logging never blocks it.
pub fn spawn_tcqd(args: &[&str]) -> (std::process::Child, u16) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["--listen", "127.0.0.1:0", "--memory-only"])
        .args(args)
        .env("RUST_LOG", "warn,tcq=info")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tcqd");
    let stderr = child.stderr.take().unwrap();
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let (false, Some(addr)) = (sent, line.split("tcq listening on ").nth(1)) {
                let port: u16 = addr.trim().rsplit(':').next().unwrap().parse().unwrap();
                let _ = port_tx.send(port);
                sent = true;
            }
        }
    });
    let port = port_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("tcqd reports its address");
    (child, port)
}
