//! The flights demo: tcq end to end on real data, over real sockets.
//!
//! [`run`] starts the server in-process on a TCP port, connects to it twice with
//! tokio-postgres (exactly as any PostgreSQL client would), creates a `flights` stream,
//! registers one continuous query on the first connection:
//!
//! ```sql
//! SELECT origin, count(*), avg(delay), max(delay), wtime(*)
//! FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00']
//! GROUP BY origin
//! ```
//!
//! and replays `data/flights-2001-01.csv.gz` (every US domestic flight of January 2001) on
//! the second with `COPY flights FROM STDIN`, showing the results as windows close and a
//! summary at the end: tuples ingested, tuples per second, slide events and rows, elapsed
//! time and the process's peak resident memory (server and client share the process).
//!
//! What it shows while the data replays: by default a live view, one line per slide event
//! with the window's flights, its airports and the five busiest airports (flights and
//! average delay), at most [`LIVE_LINES_PER_SECOND`] lines a second, above a progress bar;
//! `--all-rows` prints every result row instead (`--rows N` the first N), `--quiet` neither.
//!
//! Design decisions:
//! - The file is decompressed into memory before the clock starts, so the rate measures the
//!   server (and the wire), not gzip. The rows go out as one COPY statement per
//!   [`ROWS_PER_COPY`] rows: each COPY is all-or-nothing and is staged whole by the server,
//!   so small statements keep that staging small.
//! - The query is registered before the first tuple is sent: the reader waits for the
//!   query's RowDescription, which the server sends once the query is installed.
//! - The query is ended by dropping the stream once the last COPY has been acknowledged; the
//!   server then delivers every row already produced and completes the statement, so the
//!   demo knows it has seen all rows without guessing a quiet period.
//! - `--repeat N` replays the data N times, shifting each copy forward in time by the data's
//!   span rounded up to whole days, so that every copy is on time rather than late; with
//!   `--data` pointing at a larger file this is the ingest benchmark.
//!
//! ```no_run
//! use clap::Parser;
//! let args = tcq::demo::DemoArgs::parse_from(["demo", "--quiet"]);
//! let runtime = tokio::runtime::Runtime::new().expect("a runtime");
//! runtime.block_on(tcq::demo::run_async(args)).expect("demo failed");
//! ```

use std::error::Error;
use std::fmt;
use std::io::{BufWriter, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// A boxed error that can cross tasks.
type BoxError = Box<dyn Error + Send + Sync>;

/// Rows per `COPY ... FROM STDIN` statement.
pub(crate) const ROWS_PER_COPY: usize = 65_536;

/// Lines the live view prints per second at most: a replay closes thousands of windows a
/// second, and a line that stays on screen for a tenth of a second can still be read.
/// Slide events in between are counted but not shown.
pub(crate) const LIVE_LINES_PER_SECOND: u32 = 10;

/// Airports the live view names per slide event.
const LIVE_BUSIEST: usize = 5;

/// Bytes per CopyData message; rows are never split across messages.
const COPY_DATA_BYTES: usize = 256 << 10;

/// The stream the demo declares.
pub(crate) const CREATE_STREAM: &str = "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, \
     delay integer, distance integer, origin text, destination text)";

/// The demo's continuous query.
pub(crate) const QUERY: &str = "SELECT origin, count(*), avg(delay), max(delay), wtime(*) \
     FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] \
     GROUP BY origin";

/// The "connections" benchmark: a windowed self-join of flights, an arrival into a hub
/// airport and a departure from it in the same 10-minute tumbling window, counted per hub
/// and window (`tcqd demo --join`; `scripts/bench_connections.py` runs DuckDB on the same).
pub(crate) const CONNECTIONS_QUERY: &str = "SELECT a.destination AS hub, count(*), wtime(*) \
     FROM flights a [RANGE BY '10 minutes' START AT '2001-01-01 00:00:00'] \
     JOIN flights b [RANGE BY '10 minutes' START AT '2001-01-01 00:00:00'] \
     ON a.destination = b.origin GROUP BY a.destination";

/// Command-line arguments of `tcqd demo`.
#[derive(clap::Parser, Debug, Clone)]
#[command(about = "Replay a month of US flights through a continuous query")]
pub(crate) struct DemoArgs {
    /// Keep serving after the demo so that psql and other clients can connect, with the
    /// web console running during the demo and after it.
    #[arg(long)]
    pub(crate) serve: bool,
    /// The web console's address with --serve (if it is taken, a free port is used).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) http: SocketAddr,
    /// Address to serve on. If it is taken and --serve is not given, a free port is used.
    #[arg(long, default_value = "127.0.0.1:5433")]
    pub(crate) listen: SocketAddr,
    /// Show neither the live view nor rows (only the progress bar and the summary).
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Print every result row as it arrives instead of the live view's one line per slide
    /// event.
    #[arg(long, conflicts_with = "quiet")]
    pub(crate) all_rows: bool,
    /// Print the first N result rows instead of the live view (all rows are still counted).
    #[arg(long, value_name = "N", conflicts_with = "quiet")]
    pub(crate) rows: Option<u64>,
    /// The data to replay: CSV with header ts,delay,distance,origin,destination, optionally
    /// gzipped (detected by content). Default: the crate's data/flights-2001-01.csv.gz.
    #[arg(long, value_name = "FILE")]
    pub(crate) data: Option<PathBuf>,
    /// Replay the data this many times, each copy shifted forward in time (benchmark).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) repeat: u32,
    /// Run the "connections" self-join ([`CONNECTIONS_QUERY`]) instead of the per-origin
    /// aggregate: the join benchmark.
    #[arg(long)]
    pub(crate) join: bool,
    /// Also write every result row to this file as CSV (wtime,origin,count,avg,max), for
    /// comparison with scripts/reference.py by scripts/check_demo.py.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Read the flights from this Kafka broker (`host:port`) instead of the data file: the
    /// stream gets a Kafka source (JSON messages with the columns ts, delay, distance,
    /// origin, destination, as `examples/kafka_bench.rs produce` writes them), and the demo
    /// ends once the source has caught up with the topic.
    #[arg(long, value_name = "BOOTSTRAP", conflicts_with_all = ["data", "repeat", "join"])]
    pub(crate) kafka: Option<String>,
    /// The topic read with --kafka.
    #[arg(long, value_name = "TOPIC", default_value = "flights")]
    pub(crate) topic: String,
}

impl Default for DemoArgs {
    fn default() -> Self {
        DemoArgs {
            serve: false,
            http: SocketAddr::from(([127, 0, 0, 1], 8080)),
            listen: SocketAddr::from(([127, 0, 0, 1], 5433)),
            quiet: false,
            all_rows: false,
            rows: None,
            data: None,
            repeat: 1,
            join: false,
            output: None,
            kafka: None,
            topic: "flights".into(),
        }
    }
}

/// The default data file, found relative to the crate.
pub(crate) fn default_data_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join("flights-2001-01.csv.gz")
}

/// Run the demo on the current tokio runtime (which must be multi-threaded).
pub(crate) async fn run_async(args: DemoArgs) -> Result<(), BoxError> {
    let replay = match &args.kafka {
        Some(_) => Replay::default(),
        None => {
            let path = args.data.clone().unwrap_or_else(default_data_path);
            let load_started = Instant::now();
            let replay = Replay::load(&path, args.repeat.max(1))
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            eprintln!(
                "loaded {} rows from {} in {:.1?}",
                replay.rows,
                path.display(),
                load_started.elapsed()
            );
            replay
        }
    };

    let (addr, engine, server) = start_server(args.listen, args.serve).await?;
    eprintln!("tcq serving on {addr}");
    let console = if args.serve {
        let url = start_console(args.http, engine).await?;
        eprintln!("tcq console on {url}");
        Some(url)
    } else {
        None
    };
    let ingest = connect(addr, "tcq-demo-ingest").await?;
    match &args.kafka {
        // Paused until the query is registered, so that it sees every flight.
        Some(bootstrap) => {
            let ddl = format!(
                "{CREATE_STREAM} WITH (connector = 'kafka', topic = '{}', bootstrap_servers = '{}', \
                 format = 'json', paused = true)",
                args.topic.replace('\'', "''"),
                bootstrap.replace('\'', "''")
            );
            ingest.batch_execute(&ddl).await?
        }
        None => ingest.batch_execute(CREATE_STREAM).await?,
    }
    let reader = connect(addr, "tcq-demo-query").await?;
    let query = if args.join { CONNECTIONS_QUERY } else { QUERY };
    let mut results = Box::pin(reader.simple_query_raw(query).await?);
    // The RowDescription arrives once the query is installed: only then may tuples flow.
    match results.next().await {
        Some(Ok(SimpleQueryMessage::RowDescription(_))) => {}
        Some(Ok(_)) => return Err("the query sent rows before its description".into()),
        Some(Err(e)) => return Err(e.into()),
        None => return Err("the query ended before it started".into()),
    }

    let progress = progress_bar(replay.rows);
    let printer = Printer::new(&args, progress.clone())?;
    // The peak is the run's: loading the file (read, then cut) must not set it.
    let start_rss_kib = reset_peak_rss_kib();
    let started = Instant::now();
    let reading = tokio::spawn(read_results(results, printer));
    let ingested = match &args.kafka {
        Some(_) => from_kafka(&ingest, &progress).await?,
        None => replay.send(&ingest, &progress).await?,
    };
    let ingest_elapsed = started.elapsed();
    // Dropping the stream ends the query after the rows it has produced.
    ingest.batch_execute("DROP STREAM flights").await?;
    let tally = reading.await??;
    let elapsed = started.elapsed();
    progress.finish_and_clear();

    let summary = Summary {
        ingested,
        ingest_elapsed,
        elapsed,
        tally,
        peak_rss_kib: peak_rss_kib(),
        start_rss_kib,
        replay_bytes: replay.bytes,
    };
    println!("{summary}");
    if args.serve {
        ingest.batch_execute(CREATE_STREAM).await?;
        eprintln!(
            "serving on {addr} with an empty `flights` stream; try\n  psql -h {} -p {}\nThe web console is on {}\nCtrl-C stops.",
            addr.ip(),
            addr.port(),
            console.as_deref().unwrap_or("-")
        );
        tokio::select! {
            r = server => r??,
            r = tokio::signal::ctrl_c() => r?,
        }
    }
    Ok(())
}

/// Resume the stream's Kafka source and follow it in `tcq_sources` until it has caught up
/// with the topic (no lag for a second); the messages it delivered.
async fn from_kafka(client: &Client, progress: &ProgressBar) -> Result<u64, BoxError> {
    client.batch_execute("ALTER STREAM flights RESUME").await?;
    let started = Instant::now();
    let mut caught_up: Option<Instant> = None;
    loop {
        let row = client
            .query_one(
                "SELECT messages, lag, state, last_error FROM tcq_sources WHERE stream = 'flights'",
                &[],
            )
            .await?;
        let (messages, lag): (i64, Option<i64>) = (row.get(0), row.get(1));
        progress.set_length((messages + lag.unwrap_or(0)) as u64);
        progress.set_position(messages as u64);
        if lag == Some(0) && messages > 0 {
            if caught_up.get_or_insert_with(Instant::now).elapsed() >= Duration::from_secs(1) {
                return Ok(messages as u64);
            }
        } else {
            caught_up = None;
        }
        if messages == 0 && started.elapsed() > Duration::from_secs(30) {
            let (state, error): (String, Option<String>) = (row.get(2), row.get(3));
            return Err(format!(
                "no flights from Kafka after 30 s (source {state}: {})",
                error.unwrap_or_default()
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Bind the listener and spawn the server on it.
/// The server's address, its engine and its task.
type Started = (
    SocketAddr,
    std::sync::Arc<tcq::engine::Engine>,
    tokio::task::JoinHandle<std::io::Result<()>>,
);

/// Start the web console over `engine` on `listen` (a free port if it is taken); its URL.
async fn start_console(
    listen: SocketAddr,
    engine: std::sync::Arc<tcq::engine::Engine>,
) -> Result<String, BoxError> {
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{listen} is not available for the console ({e}); using a free port");
            tokio::net::TcpListener::bind(SocketAddr::new(listen.ip(), 0)).await?
        }
    };
    let url = format!("http://{}/", listener.local_addr()?);
    let console = tcq::http::Console::new(engine, tcq::http::HttpOptions::default());
    tokio::spawn(tcq::http::serve(listener, console, std::future::pending()));
    Ok(url)
}

async fn start_server(listen: SocketAddr, must_bind: bool) -> Result<Started, BoxError> {
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) if !must_bind => {
            eprintln!("{listen} is not available ({e}); using a free port");
            tokio::net::TcpListener::bind(SocketAddr::new(listen.ip(), 0)).await?
        }
        Err(e) => return Err(format!("cannot listen on {listen}: {e}").into()),
    };
    let addr = listener.local_addr()?;
    let engine = tcq::engine::Engine::new(tcq::engine::Config::default());
    let server = tokio::spawn(tcq::server::serve(listener, engine.clone()));
    Ok((addr, engine, server))
}

/// Connect over TCP and drive the connection on its own task.
async fn connect(addr: SocketAddr, application: &str) -> Result<Client, BoxError> {
    let (client, connection) = tokio_postgres::Config::new()
        .host(addr.ip().to_string())
        .port(addr.port())
        .user("tcq")
        .dbname("tcq")
        .application_name(application)
        .connect(NoTls)
        .await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("connection error: {e}");
        }
    });
    Ok(client)
}

fn progress_bar(rows: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(rows), ProgressDrawTarget::stderr_with_hz(5));
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} replay [{bar:40}] {human_pos}/{human_len} tuples {per_sec} eta {eta}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar
}

/// The data to replay, decompressed and cut into COPY statements.
#[derive(Default)]
struct Replay {
    /// One entry per COPY statement; each is a list of CopyData payloads.
    statements: Vec<Vec<Bytes>>,
    rows: u64,
    /// Bytes of data held for the replay (the payloads share these buffers).
    bytes: usize,
}

impl Replay {
    fn load(path: &Path, repeat: u32) -> Result<Replay, BoxError> {
        // One copy of the data in memory: the statements are slices of it, not copies.
        let text = bytes::Bytes::from(read_maybe_gzipped(path)?);
        let body = match text.iter().position(|&b| b == b'\n') {
            Some(end) if text.starts_with(b"ts,") => text.slice(end + 1..),
            _ => text,
        };
        let span_days = span_days(&body)?;
        let mut replay = Replay {
            statements: Vec::new(),
            rows: 0,
            bytes: 0,
        };
        for copy in 0..repeat {
            let shift = chrono::Duration::days(span_days * i64::from(copy));
            let rows = if copy == 0 {
                body.clone()
            } else {
                Bytes::from(shift_times(&body, shift)?)
            };
            replay.push_rows(rows);
        }
        Ok(replay)
    }

    /// Cut rows into statements of [`ROWS_PER_COPY`] rows and messages of about
    /// [`COPY_DATA_BYTES`] bytes, always at line ends; the messages share `rows`' buffer.
    fn push_rows(&mut self, mut rows: Bytes) {
        self.bytes += rows.len();
        let mut statement = Vec::new();
        let mut in_statement = 0;
        while !rows.is_empty() {
            let mut end = 0;
            let mut lines = 0;
            while end < rows.len() && end < COPY_DATA_BYTES && in_statement + lines < ROWS_PER_COPY
            {
                end += rows[end..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(rows.len() - end, |p| p + 1);
                lines += 1;
            }
            statement.push(rows.split_to(end));
            in_statement += lines;
            self.rows += lines as u64;
            if in_statement == ROWS_PER_COPY || rows.is_empty() {
                self.statements.push(std::mem::take(&mut statement));
                in_statement = 0;
            }
        }
    }

    /// Send every statement in order; returns the rows the server acknowledged.
    async fn send(&self, client: &Client, progress: &ProgressBar) -> Result<u64, BoxError> {
        let mut acknowledged = 0;
        for messages in &self.statements {
            let sink = client
                .copy_in::<_, Bytes>("COPY flights FROM STDIN WITH (FORMAT csv)")
                .await?;
            futures::pin_mut!(sink);
            for message in messages {
                sink.as_mut().feed(message.clone()).await?;
            }
            let rows = sink.as_mut().finish().await?;
            acknowledged += rows;
            progress.inc(rows);
        }
        Ok(acknowledged)
    }
}

fn read_maybe_gzipped(path: &Path) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::with_capacity(raw.len() * 5);
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut text)?;
        Ok(text)
    } else {
        Ok(raw)
    }
}

const TS_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

fn parse_ts(line: &[u8]) -> Result<chrono::NaiveDateTime, BoxError> {
    let field = line.split(|&b| b == b',').next().unwrap_or_default();
    let text = std::str::from_utf8(field)?;
    Ok(chrono::NaiveDateTime::parse_from_str(text, TS_FORMAT)
        .map_err(|e| format!("bad timestamp {text:?}: {e}"))?)
}

/// Whole days from the first row's time to just past the last row's (the shift between
/// repeated copies).
fn span_days(body: &[u8]) -> Result<i64, BoxError> {
    let mut lines = body.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let (Some(first), Some(last)) = (lines.next(), lines.next_back()) else {
        return Ok(1);
    };
    let span = parse_ts(last)? - parse_ts(first)?;
    Ok(span.num_days() + 1)
}

fn shift_times(body: &[u8], shift: chrono::Duration) -> Result<Vec<u8>, BoxError> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 16);
    for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let comma = line.iter().position(|&b| b == b',').unwrap_or(line.len());
        let ts = parse_ts(line)? + shift;
        write!(out, "{}", ts.format(TS_FORMAT))?;
        out.extend_from_slice(&line[comma..]);
        out.push(b'\n');
    }
    Ok(out)
}

/// What the terminal shows of the results.
#[derive(Debug, Clone, Copy, PartialEq)]
enum View {
    /// Nothing (`--quiet`).
    Quiet,
    /// One summary line per slide event, throttled (the default).
    Live,
    /// Result rows, at most this many (`--all-rows`, `--rows N`).
    Rows(u64),
}

impl View {
    fn of(args: &DemoArgs) -> View {
        match (args.quiet, args.all_rows, args.rows) {
            (true, _, _) => View::Quiet,
            (_, _, Some(n)) => View::Rows(n),
            (_, true, None) => View::Rows(u64::MAX),
            (false, false, None) => View::Live,
        }
    }
}

/// One group of a slide event as the live view keeps it: origin, count(*), avg(delay).
#[derive(Debug, Clone, PartialEq)]
struct Group {
    origin: String,
    count: u64,
    avg: Option<f64>,
}

/// The live view's header, printed once above its first line.
fn live_header() -> String {
    format!(
        "{:<19}  {:>7} {:>8}  busiest airports: count(*), avg(delay) in minutes",
        "window end", "flights", "airports"
    )
}

/// The live view's line for one slide event: the window's flights (sum of the groups'
/// counts), its airports (groups) and the [`LIVE_BUSIEST`] busiest airports, by flights
/// then name.
fn live_line(wtime: &str, groups: &[Group]) -> String {
    let flights: u64 = groups.iter().map(|g| g.count).sum();
    let mut busiest: Vec<&Group> = groups.iter().collect();
    busiest.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.origin.cmp(&b.origin)));
    let named: Vec<String> = busiest
        .iter()
        .take(LIVE_BUSIEST)
        .map(|g| match g.avg {
            Some(avg) => format!("{} {} {avg:+.1}", g.origin, g.count),
            None => format!("{} {}", g.origin, g.count),
        })
        .collect();
    format!(
        "{wtime:<19}  {flights:>7} {:>8}  {}",
        groups.len(),
        named.join(" | ")
    )
}

/// Where results go: the terminal (above the progress bar) and an optional CSV file.
struct Printer {
    progress: ProgressBar,
    view: View,
    /// The current slide event's groups (live view).
    groups: Vec<Group>,
    /// When the live view last printed a line (`None` before its first, with the header).
    last_line: Option<Instant>,
    pending: Vec<String>,
    output: Option<BufWriter<std::fs::File>>,
}

impl Printer {
    fn new(args: &DemoArgs, progress: ProgressBar) -> std::io::Result<Printer> {
        let output = match &args.output {
            Some(path) => {
                let mut out = BufWriter::new(std::fs::File::create(path)?);
                writeln!(out, "wtime,origin,count,avg,max")?;
                Some(out)
            }
            None => None,
        };
        Ok(Printer {
            progress,
            view: View::of(args),
            groups: Vec::new(),
            last_line: None,
            pending: Vec::new(),
            output,
        })
    }

    fn row(&mut self, seen: u64, cells: [&str; 5]) -> std::io::Result<()> {
        let [origin, count, avg, max, wtime] = cells;
        if let Some(out) = &mut self.output {
            writeln!(out, "{wtime},{origin},{count},{avg},{max}")?;
        }
        match self.view {
            View::Quiet => {}
            View::Live => self.groups.push(Group {
                origin: origin.to_string(),
                count: count.parse().unwrap_or(0),
                avg: avg.parse().ok(),
            }),
            View::Rows(max_rows) if seen <= max_rows => {
                if seen == 1 {
                    self.pending.push(format!(
                        "{:<19}  {:<6} {:>6} {:>22} {:>6}",
                        "wtime", "origin", "count", "avg(delay)", "max"
                    ));
                }
                self.pending.push(format!(
                    "{wtime:<19}  {origin:<6} {count:>6} {avg:>22} {max:>6}"
                ));
            }
            View::Rows(_) => {}
        }
        Ok(())
    }

    /// The slide event at `wtime` is complete: print its rows, or its live line when the
    /// last line is older than 1/[`LIVE_LINES_PER_SECOND`] s (always for the `last` one).
    fn end_event(&mut self, wtime: &str, last: bool) -> std::io::Result<()> {
        if self.view == View::Live && !self.groups.is_empty() {
            let interval = Duration::from_secs(1) / LIVE_LINES_PER_SECOND;
            let due = self.last_line.is_none_or(|t| t.elapsed() >= interval);
            if due || last {
                if self.last_line.is_none() {
                    self.pending.push(live_header());
                }
                self.pending.push(live_line(wtime, &self.groups));
                self.last_line = Some(Instant::now());
            }
            self.groups.clear();
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        self.progress.suspend(|| {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            pending
                .iter()
                .try_for_each(|line| writeln!(out, "{line}"))?;
            out.flush()
        })
    }

    fn finish(mut self, last_wtime: &str) -> std::io::Result<()> {
        self.end_event(last_wtime, true)?;
        if let Some(mut out) = self.output.take() {
            out.flush()?;
        }
        Ok(())
    }
}

/// What the reader saw.
#[derive(Debug, Default, Clone)]
struct Tally {
    rows: u64,
    /// Distinct wtime values among the rows: slide events that produced rows (a slide event
    /// whose groups are all empty emits nothing, so the client cannot see it).
    slide_events: u64,
    /// Sum of count(*) over all rows.
    count_sum: u64,
}

async fn read_results(
    mut results: std::pin::Pin<Box<tokio_postgres::SimpleQueryStream>>,
    mut printer: Printer,
) -> Result<Tally, BoxError> {
    let mut tally = Tally::default();
    let mut last_wtime = String::new();
    while let Some(message) = results.next().await {
        let row = match message? {
            SimpleQueryMessage::Row(row) => row,
            SimpleQueryMessage::CommandComplete(_) => break,
            _ => continue,
        };
        let cell = |i: usize| row.get(i).unwrap_or("");
        // The demo's query has five columns; the join's (hub, count, wtime) three.
        let cells = match row.len() {
            5 => [cell(0), cell(1), cell(2), cell(3), cell(4)],
            _ => [cell(0), cell(1), "", "", cell(row.len() - 1)],
        };
        if cells[4] != last_wtime {
            printer.end_event(&last_wtime, false)?;
            last_wtime = cells[4].to_string();
            tally.slide_events += 1;
        }
        tally.rows += 1;
        tally.count_sum += cells[1].parse::<u64>().unwrap_or(0);
        printer.row(tally.rows, cells)?;
    }
    printer.finish(&last_wtime)?;
    Ok(tally)
}

/// The closing summary.
struct Summary {
    ingested: u64,
    ingest_elapsed: Duration,
    elapsed: Duration,
    tally: Tally,
    peak_rss_kib: Option<u64>,
    /// Resident KiB when the clock started (the loaded replay data included).
    start_rss_kib: Option<u64>,
    /// Bytes of replay data the client holds in memory.
    replay_bytes: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = self.ingested as f64 / self.elapsed.as_secs_f64().max(1e-9);
        writeln!(f, "── summary ──")?;
        writeln!(f, "tuples ingested        {}", self.ingested)?;
        writeln!(
            f,
            "elapsed                {:.3} s (ingest acknowledged after {:.3} s)",
            self.elapsed.as_secs_f64(),
            self.ingest_elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "tuples per second      {rate:.0} (end to end: first COPY to last row)"
        )?;
        writeln!(f, "slide events with rows {}", self.tally.slide_events)?;
        writeln!(f, "rows emitted           {}", self.tally.rows)?;
        writeln!(f, "sum of count(*)        {}", self.tally.count_sum)?;
        let mib = |kib: u64| kib as f64 / 1024.0;
        match (self.peak_rss_kib, self.start_rss_kib) {
            (Some(peak), Some(start)) => write!(
                f,
                "peak RSS (process)     {:.1} MiB ({:.1} MiB of replay data held by the client; \
                 {:.1} MiB resident at the start, {:.1} MiB more at the peak)",
                mib(peak),
                self.replay_bytes as f64 / 1048576.0,
                mib(start),
                mib(peak.saturating_sub(start)),
            ),
            (Some(peak), None) => write!(f, "peak RSS (process)     {:.1} MiB", mib(peak)),
            _ => write!(f, "peak RSS (process)     unknown (no /proc/self/status)"),
        }
    }
}

/// Reset the process's peak resident set to its current size (Linux's `clear_refs` value
/// 5) and return that size in KiB (VmRSS); `None` where /proc does not allow it.
pub(crate) fn reset_peak_rss_kib() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// VmHWM from /proc/self/status: the process's peak resident set, in KiB.
pub(crate) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_cut_into_statements_at_line_ends() {
        let mut replay = Replay {
            statements: Vec::new(),
            rows: 0,
            bytes: 0,
        };
        let rows: String = (0..ROWS_PER_COPY + 3)
            .map(|i| format!("2001-01-01 00:00:00,{i},1,A,B\n"))
            .collect();
        replay.push_rows(Bytes::from(rows.clone()));
        assert_eq!(replay.rows, (ROWS_PER_COPY + 3) as u64);
        assert_eq!(replay.bytes, rows.len());
        assert_eq!(replay.statements.len(), 2);
        let joined: Vec<u8> = replay
            .statements
            .iter()
            .flatten()
            .flat_map(|b| b.to_vec())
            .collect();
        assert_eq!(joined, rows.as_bytes());
        for message in replay.statements.iter().flatten() {
            assert!(
                message.ends_with(b"\n"),
                "a CopyData message must end at a line end"
            );
        }
        let last: usize = replay.statements[1]
            .iter()
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .sum();
        assert_eq!(last, 3);
    }

    #[test]
    fn repeated_copies_are_shifted_by_whole_days() {
        let body = b"2001-01-01 00:01:00,1,2,A,B\n2001-01-31 23:57:00,3,4,C,D\n";
        assert_eq!(span_days(body).unwrap(), 31);
        let shifted = shift_times(body, chrono::Duration::days(31)).unwrap();
        assert_eq!(
            shifted,
            b"2001-02-01 00:01:00,1,2,A,B\n2001-03-03 23:57:00,3,4,C,D\n"
        );
    }

    #[test]
    fn the_live_view_names_the_busiest_airports_of_a_slide_event() {
        let group = |origin: &str, count, avg| Group {
            origin: origin.into(),
            count,
            avg,
        };
        let groups = [
            group("SFO", 40, Some(3.25)),
            group("ORD", 61, Some(12.34)),
            group("ATL", 61, Some(-1.0)),
            group("BOS", 2, None),
            group("DEN", 38, Some(0.0)),
            group("LAX", 40, Some(5.5)),
            group("SEA", 1, Some(9.0)),
        ];
        assert_eq!(
            live_line("2001-01-01 08:00:00", &groups),
            "2001-01-01 08:00:00      243        7  \
             ATL 61 -1.0 | ORD 61 +12.3 | LAX 40 +5.5 | SFO 40 +3.2 | DEN 38 +0.0"
        );
        assert_eq!(
            live_line("2001-01-01 08:10:00", &groups[3..4]),
            "2001-01-01 08:10:00        2        1  BOS 2"
        );
    }

    #[test]
    fn the_live_view_is_the_default_and_rows_are_on_request() {
        let view = |argv: &[&str]| {
            use clap::Parser;
            View::of(&DemoArgs::parse_from([&["demo"], argv].concat()))
        };
        assert_eq!(view(&[]), View::Live);
        assert_eq!(view(&["--all-rows"]), View::Rows(u64::MAX));
        assert_eq!(view(&["--rows", "20"]), View::Rows(20));
        assert_eq!(view(&["--quiet"]), View::Quiet);
        use clap::Parser;
        assert!(DemoArgs::try_parse_from(["demo", "--quiet", "--all-rows"]).is_err());
    }

    #[test]
    fn peak_rss_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_rss_kib().unwrap() > 0);
        }
    }
}
