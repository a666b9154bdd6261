//! `tcqd`: the tcq server.
//!
//! `tcqd` (or `tcqd serve`) listens on 127.0.0.1:5433 for PostgreSQL clients; `--listen`
//! picks another address. Logging goes to stderr, filtered by `--log-level` (or `RUST_LOG`;
//! default `info`: connections, failed statements, slow clients). SIGTERM or SIGINT shuts
//! the server down: every client gets FATAL 57P01, open COPYs are aborted, and the process
//! exits 0. The web console listens on 127.0.0.1:8080 (`--http ADDR`, `--http off`), and
//! `--metrics ADDR` serves `/metrics` on a listener of its own.
//!
//! State lives in `--data-dir` (default `./tcq-data`, created on first use): the catalog
//! of streams and the tuples of archived streams (see `tcq::engine::archive`). A second
//! tcqd on the same directory is refused. `--memory-only` keeps nothing on disk.

mod cli;

use clap::{Parser, Subcommand};

/// tcq: a continuous query server speaking the PostgreSQL wire protocol.
#[derive(Parser)]
#[command(name = "tcqd", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Log level or filter: error, warn, info (connections, failed statements, slow
    /// clients), debug (every statement), trace; or a RUST_LOG-style filter. Default: RUST_LOG,
    /// else info.
    #[arg(long, global = true)]
    log_level: Option<String>,
    #[command(flatten)]
    serve: ServeArgs,
}

/// Options of `tcqd serve` (also accepted without the subcommand).
#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:5433")]
    listen: String,
    /// Require SCRAM-SHA-256 authentication for the users in this file (`user:password`
    /// or `user:SCRAM-SHA-256$...` per line), who are superusers, and for the roles made
    /// with CREATE ROLE ... LOGIN PASSWORD. Without it every user is trusted, and one that
    /// is no role is a superuser.
    #[arg(long)]
    password_file: Option<std::path::PathBuf>,
    /// PEM certificate chain for TLS (with --tls-key): clients asking for TLS get it.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Allow listening beyond loopback without a password file (for --listen, --http and
    /// --metrics alike).
    #[arg(long)]
    insecure: bool,
    /// Address of the web console (and its /metrics, /healthz), or `off`. Default
    /// 127.0.0.1:8080; when that default is taken, tcqd runs without a console and says so.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Also serve /metrics (Prometheus text format) and /healthz on this address.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<String>,
    /// Client connections open at once (53300 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().connections_max)]
    max_connections: usize,
    /// Continuous queries and cursors per connection (54000 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().queries_per_connection_max)]
    queries_per_connection_max: usize,
    /// Named prepared statements per connection (54000 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().prepared_statements_max)]
    prepared_statements_max: usize,
    /// Bytes of prepared statements' SQL text per connection (53200 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().prepared_statement_bytes_max)]
    prepared_statement_bytes_max: usize,
    /// Bytes of one protocol message's body (54000, connection closed, beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().message_bytes_max)]
    message_bytes_max: usize,
    /// Bytes of one COPY line (54000 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().copy_line_bytes_max)]
    copy_line_bytes_max: usize,
    /// Bytes of result rows queued per subscriber (54000 or skip beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().output_queue_bytes)]
    output_queue_bytes: usize,
    /// Distinct values per DISTINCT aggregate state (54000 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().distinct_values_max)]
    distinct_values_max: usize,
    /// Bytes of memory the engine tracks server-wide: queries' state, queued result rows,
    /// COPY batches in memory, prepared statements (53200 beyond; a COPY stages to disk). A number with an
    /// optional unit: 512MB, 2GB.
    #[arg(long, default_value = "1GB", value_parser = tcq::engine::memory::parse_bytes)]
    memory_limit: usize,
    /// Rows one stored table may hold (54000 beyond).
    #[arg(long, default_value_t = tcq::engine::Limits::default().table_rows_max)]
    table_rows_max: usize,
    /// The data directory: the catalog and the archived streams' tuples. Created on first
    /// use; locked while this server runs.
    #[arg(long, default_value = "tcq-data")]
    data_dir: std::path::PathBuf,
    /// Keep nothing on disk: no catalog, no archive (`--data-dir` is not used).
    #[arg(long)]
    memory_only: bool,
    /// When an INSERT or COPY into an archived stream is fsynced before its command tag:
    /// `always` (each statement fsyncs alone), `batch` (group commit: one fsync serves every
    /// statement waiting), `off` (never: a crash of the machine may lose the last seconds).
    #[arg(long, default_value = "batch")]
    sync: tcq::engine::SyncMode,
    /// Bytes after which an archived stream's log is sealed into a Parquet segment.
    #[arg(long, default_value_t = tcq::engine::StorageConfig::new("").seal_bytes)]
    seal_bytes: u64,
    /// Start although a file of an archived stream cannot be read or is damaged (a log
    /// record or segment whose checksum fails): the damage is logged and skipped and the
    /// rest served. Without it such a file stops tcqd at start, naming it.
    #[arg(long)]
    ignore_damaged_archive: bool,
}

impl ServeArgs {
    /// The engine configuration these options describe, and the data directory's.
    fn config(&self) -> (tcq::engine::Config, Option<tcq::engine::StorageConfig>) {
        let limits = tcq::engine::Limits {
            connections_max: self.max_connections,
            queries_per_connection_max: self.queries_per_connection_max,
            prepared_statements_max: self.prepared_statements_max,
            prepared_statement_bytes_max: self.prepared_statement_bytes_max,
            message_bytes_max: self.message_bytes_max,
            copy_line_bytes_max: self.copy_line_bytes_max,
            output_queue_bytes: self.output_queue_bytes,
            distinct_values_max: self.distinct_values_max,
            table_rows_max: self.table_rows_max,
            memory_limit_bytes: self.memory_limit,
            ..tcq::engine::Limits::default()
        };
        let storage = (!self.memory_only).then(|| tcq::engine::StorageConfig {
            sync: self.sync,
            seal_bytes: self.seal_bytes,
            ignore_damage: self.ignore_damaged_archive,
            ..tcq::engine::StorageConfig::new(&self.data_dir)
        });
        (tcq::engine::Config { limits }, storage)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve PostgreSQL clients (the default).
    Serve(ServeArgs),
    /// Replay a month of US flights through a continuous query, end to end.
    Demo(cli::demo::DemoArgs),
    /// Print the paper's evaluation (model costs) and the measured sharing speed-ups.
    Paper,
    /// Run continuous queries on an Apache Flink cluster: export, validate, submit, status,
    /// cancel (docs/flink.md).
    #[command(subcommand)]
    Flink(tcq::flink::cli::FlinkCommand),
}

/// Worker threads get 8 MiB stacks (see the constant's docs).
const WORKER_STACK_BYTES: usize = tcq::engine::THREAD_STACK_BYTES;

fn main() -> std::process::ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
    {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("tcqd: cannot start the runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> std::process::ExitCode {
    let cli = Cli::parse();
    let filter = match &cli.log_level {
        Some(level) => match tracing_subscriber::EnvFilter::try_new(level) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("tcqd: --log-level {level}: {e}");
                return std::process::ExitCode::FAILURE;
            }
        },
        // The demo prints its own progress; the server's connection log would interleave
        // with it, so the demo logs warnings only unless asked.
        None => tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
            let default = match cli.command {
                Some(Command::Demo(_)) | Some(Command::Paper) | Some(Command::Flink(_)) => "warn",
                _ => "info",
            };
            tracing_subscriber::EnvFilter::new(default)
        }),
    };
    // rskafka logs every attempt of its reconnection loop, several a second while a broker
    // is down, at info and warn; a Kafka source logs each failed attempt once, with its
    // error. So rskafka's own lines show only when a filter names it.
    let filter = match cli
        .log_level
        .clone()
        .or_else(|| std::env::var("RUST_LOG").ok())
    {
        Some(f) if f.contains("rskafka") => filter,
        _ => filter.add_directive("rskafka=error".parse().expect("a directive")),
    };
    // Colours only on a terminal: a log file or a pipe gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();

    let result = match cli.command {
        None => serve(cli.serve).await,
        Some(Command::Serve(args)) => serve(args).await,
        Some(Command::Demo(args)) => cli::demo::run_async(args)
            .await
            .map_err(std::io::Error::other),
        Some(Command::Paper) => cli::paper::run_paper().map_err(std::io::Error::other),
        Some(Command::Flink(cmd)) => tcq::flink::cli::run(cmd)
            .await
            .map_err(std::io::Error::other),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcqd: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The console's default address (`--http` not given).
const HTTP_DEFAULT: &str = "127.0.0.1:8080";

/// Refuse `local` beyond loopback without authentication, unless `--insecure`.
fn check_exposure(
    what: &str,
    local: std::net::SocketAddr,
    args: &ServeArgs,
    auth: bool,
) -> std::io::Result<()> {
    if !local.ip().is_loopback() && !auth && !args.insecure {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "refusing to {what} on {local} without authentication: give --password-file, or --insecure to trust every client"
            ),
        ));
    }
    Ok(())
}

/// Bind `addr` for `what`, naming the address when it cannot.
async fn bind(what: &str, addr: &str) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot {what} on {addr}: {e}")))
}

/// The console's listener: `--http ADDR`, none for `--http off`, and for the default
/// address none (with a warning) when it is taken.
async fn bind_console(args: &ServeArgs) -> std::io::Result<Option<tokio::net::TcpListener>> {
    match args.http.as_deref() {
        Some("off") => Ok(None),
        Some(addr) => bind("serve the console", addr).await.map(Some),
        None => match tokio::net::TcpListener::bind(HTTP_DEFAULT).await {
            Ok(l) => Ok(Some(l)),
            Err(e) => {
                tracing::warn!(
                    "no web console: cannot listen on {HTTP_DEFAULT} ({e}); give --http ADDR or --http off"
                );
                Ok(None)
            }
        },
    }
}

/// Serve until SIGTERM or SIGINT, then shut down as PostgreSQL's fast shutdown does
/// (clients get 57P01, open COPYs are aborted) and exit 0.
async fn serve(args: ServeArgs) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut options = tcq::server::ServerOptions::default();
    if let Some(path) = &args.password_file {
        options = options.with_password_file(path)?;
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        options = options.with_tls_files(cert, key)?;
    }
    let (config, storage) = args.config();
    let engine = tcq::engine::Engine::open(config, storage).map_err(std::io::Error::other)?;
    let auth = options.passwords.is_some();
    let listener = bind("listen", &args.listen).await?;
    check_exposure("listen", listener.local_addr()?, &args, auth)?;
    let console_listener = bind_console(&args).await?;
    if let Some(l) = &console_listener {
        check_exposure("serve the console", l.local_addr()?, &args, auth)?;
    }
    let metrics_listener = match &args.metrics {
        Some(addr) => Some(bind("serve metrics", addr).await?),
        None => None,
    };
    if let Some(l) = &metrics_listener {
        check_exposure("serve metrics", l.local_addr()?, &args, auth)?;
    }
    // Signals are caught from here on, so a SIGTERM sent once the addresses are printed
    // shuts down gracefully.
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tracing::info!("tcq listening on {}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let when_stopped = move || {
        let mut rx = stopped.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let console = tcq::http::Console::new(
        engine.clone(),
        tcq::http::HttpOptions {
            passwords: options.passwords.clone(),
            ..Default::default()
        },
    );
    let mut http_tasks = Vec::new();
    if let Some(l) = console_listener {
        tracing::info!("tcq console on http://{}/", l.local_addr()?);
        http_tasks.push(tokio::spawn(tcq::http::serve(
            l,
            console.clone(),
            when_stopped(),
        )));
    }
    if let Some(l) = metrics_listener {
        tracing::info!("tcq metrics on http://{}/metrics", l.local_addr()?);
        http_tasks.push(tokio::spawn(tcq::http::serve_metrics(
            l,
            console,
            when_stopped(),
        )));
    }
    let shutdown = async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
        stop.send_replace(true);
    };
    let result = tcq::server::serve_with(listener, engine, options, shutdown).await;
    for task in http_tasks {
        // A console that cannot finish within the server's own shutdown is not waited for.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
    }
    result
}
