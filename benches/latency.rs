//! Window-close-to-client latency with compiled clients (run with
//! `cargo build --release --bin tcqd && cargo bench --bench latency`; arguments after `--`:
//! `--tcqd PATH`, `--subscribers 1,100`, `--windows 300`, `--interval-ms 20`).
//!
//! The same measurement as `scripts/bench_latency.py`, with tokio-postgres clients on one
//! thread instead of asyncpg ones, so the figures are the server's and the wire's rather
//! than a Python event loop's:
//!
//! - a fresh `tcqd --memory-only` on a loopback port, stream
//!   `s (ts timestamp TIMESTAMPCOLUMN, v integer)`;
//! - N subscribers, each its own connection running `COPY (SELECT count(*), wtime(*) FROM s
//!   [RANGE BY '1 second' SLIDE BY '1 second' START AT '2001-01-01 00:00:00']) TO STDOUT`,
//!   so each row reaches it as one CopyData message the moment the server flushes it;
//! - one writer INSERTs one tuple per window, `interval-ms` apart in real time, at
//!   2001-01-01 00:00:00 + k s. Tuple k closes window k-1 (its end is k s): the clock for
//!   that window's row starts just before tuple k's INSERT is written and stops when a
//!   subscriber has read the row.
//!
//! The first 10 windows are a warm-up. Every (window, subscriber) pair is one sample; the
//! bench prints p50, p99 and the maximum in milliseconds and tcqd's CPU time per window,
//! and fails unless every subscriber got every window exactly once with count 1. Clients
//! and server share the machine's cores. With `TCQ_LATENCY_TRACE=1` it also prints, per
//! window, the first, median and last subscriber's latency and when the INSERT was
//! acknowledged, and passes tcqd's stderr through; `TCQ_LATENCY_CLIENT_THREADS=N` runs the
//! clients on N threads instead of one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use parking_lot::Mutex;
use tokio_postgres::NoTls;

const QUERY: &str = "COPY (SELECT count(*), wtime(*) FROM s [RANGE BY '1 second' \
     SLIDE BY '1 second' START AT '2001-01-01 00:00:00']) TO STDOUT";
const WARMUP: usize = 10;

struct Args {
    tcqd: String,
    subscribers: Vec<usize>,
    windows: usize,
    interval: Duration,
}

fn args() -> Args {
    let mut a = Args {
        tcqd: concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/tcqd").into(),
        subscribers: vec![1, 100],
        windows: 300,
        interval: Duration::from_millis(20),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--tcqd" => a.tcqd = value(),
            "--subscribers" => {
                a.subscribers = value()
                    .split(',')
                    .map(|n| n.parse().expect("--subscribers 1,100"))
                    .collect()
            }
            "--windows" => a.windows = value().parse().expect("--windows N"),
            "--interval-ms" => {
                a.interval = Duration::from_secs_f64(
                    value().parse::<f64>().expect("--interval-ms MS") / 1000.0,
                )
            }
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    a
}

/// A tcqd on a free loopback port, killed on drop.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Server {
    fn start(tcqd: &str) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = std::process::Command::new(tcqd)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--memory-only"])
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(if std::env::var_os("TCQ_LATENCY_TRACE").is_some() {
                std::process::Stdio::inherit()
            } else {
                std::process::Stdio::null()
            })
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {tcqd} ({e}); build it with cargo build --release --bin tcqd")
            });
        // Killed and waited for on drop, also when it does not start.
        let server = Server { child, port };
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("tcqd did not start");
    }

    /// User plus system CPU seconds the server has used (from /proc).
    fn cpu_secs(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        (ticks(11) + ticks(12)) / hz
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn connect(port: u16) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=tcq dbname=tcq"),
        NoTls,
    )
    .await
    .expect("connect");
    tokio::spawn(conn);
    client
}

/// `...\t2001-01-01 00:00:07\n` -> 7 (seconds since 2001-01-01 00:00:00).
fn window_second(line: &str) -> Option<usize> {
    let (count, wtime) = line.split_once('\t')?;
    if count != "1" {
        return None;
    }
    let (date, time) = wtime.split_once(' ')?;
    let day: usize = date.rsplit('-').next()?.parse().ok()?;
    let mut hms = time.split(':');
    let (h, m, s): (usize, usize, f64) = (
        hms.next()?.parse().ok()?,
        hms.next()?.parse().ok()?,
        hms.next()?.parse().ok()?,
    );
    Some((((day - 1) * 24 + h) * 60 + m) * 60 + s as usize)
}

struct Outcome {
    samples_ms: Vec<f64>,
    missing: usize,
    bad: Vec<String>,
    cpu_ms_per_window: f64,
    client_cpu_ms_per_window: f64,
}

/// User plus system CPU seconds this process (the clients) has used.
fn own_cpu_secs() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

async fn run(a: &Args, subscribers: usize) -> Outcome {
    let server = Server::start(&a.tcqd);
    let writer = connect(server.port).await;
    writer
        .batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .expect("CREATE STREAM");
    // arrivals[i][k]: when subscriber i read the row of the window ending at k s.
    let arrivals: Arc<Mutex<Vec<Vec<Option<Instant>>>>> =
        Arc::new(Mutex::new(vec![vec![None; a.windows + 1]; subscribers]));
    let bad = Arc::new(Mutex::new(Vec::new()));
    let mut readers = Vec::new();
    for i in 0..subscribers {
        let client = connect(server.port).await;
        let (arrivals, bad) = (arrivals.clone(), bad.clone());
        readers.push(tokio::spawn(async move {
            let Ok(stream) = client.copy_out(QUERY).await else {
                return;
            };
            let mut stream = std::pin::pin!(stream);
            let mut partial = String::new();
            while let Some(Ok(data)) = stream.next().await {
                let now = Instant::now();
                partial.push_str(&String::from_utf8_lossy(&data));
                while let Some(n) = partial.find('\n') {
                    let line: String = partial.drain(..=n).collect();
                    let line = line.trim_end();
                    let mut arrivals = arrivals.lock();
                    match window_second(line) {
                        Some(k) if k < arrivals[i].len() && arrivals[i][k].is_none() => {
                            arrivals[i][k] = Some(now)
                        }
                        _ => bad.lock().push(format!("subscriber {i}: {line}")),
                    }
                }
            }
        }));
    }
    // Every query registered (and attached to the stream) before the first tuple.
    let mut registered = 0;
    for _ in 0..1000 {
        let row = writer
            .query_one("SELECT count(*) FROM tcq_queries", &[])
            .await
            .expect("tcq_queries");
        registered = row.get::<_, i64>(0) as usize;
        if registered == subscribers {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        registered, subscribers,
        "every subscriber's query registered"
    );
    let (cpu0, own0) = (server.cpu_secs(), own_cpu_secs());
    let mut sent = vec![Instant::now(); a.windows + 1];
    let mut acked_ms = vec![0.0; a.windows + 1];
    let mut next_at = Instant::now();
    for k in 0..sent.len() {
        next_at += a.interval;
        tokio::time::sleep_until(next_at.into()).await;
        let insert = format!(
            "INSERT INTO s VALUES ('2001-01-{:02} {:02}:{:02}:{:02}', 1)",
            k / 86_400 + 1,
            k / 3600 % 24,
            k / 60 % 60,
            k % 60
        );
        sent[k] = Instant::now(); // tuple k closes the window ending at k s
        writer.batch_execute(&insert).await.expect("INSERT");
        acked_ms[k] = sent[k].elapsed().as_secs_f64() * 1000.0;
    }
    // Let the last rows arrive.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let all = arrivals
            .lock()
            .iter()
            .all(|a| a[WARMUP + 1..].iter().all(Option::is_some));
        if all {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (cpu, own) = (server.cpu_secs() - cpu0, own_cpu_secs() - own0);
    let mut samples_ms = Vec::new();
    let mut missing = 0;
    if std::env::var_os("TCQ_LATENCY_TRACE").is_some() {
        // Per window: the first and the last subscriber's latency, and the median.
        let arrivals = arrivals.lock();
        for k in WARMUP + 1..=a.windows {
            let mut ms: Vec<f64> = arrivals
                .iter()
                .filter_map(|per_sub| per_sub[k])
                .map(|t| t.duration_since(sent[k]).as_secs_f64() * 1000.0)
                .collect();
            ms.sort_by(f64::total_cmp);
            if let (Some(first), Some(last)) = (ms.first(), ms.last()) {
                eprintln!(
                    "window {k}: first {first:.2} median {:.2} last {last:.2} ms; INSERT acknowledged after {:.2} ms",
                    ms[ms.len() / 2],
                    acked_ms[k]
                );
            }
        }
    }
    for per_sub in arrivals.lock().iter() {
        for k in WARMUP + 1..=a.windows {
            match per_sub[k] {
                Some(t) => samples_ms.push(t.duration_since(sent[k]).as_secs_f64() * 1000.0),
                None => missing += 1,
            }
        }
    }
    let _ = writer.batch_execute("DROP STREAM s").await;
    for r in readers {
        let _ = tokio::time::timeout(Duration::from_secs(5), r).await;
    }
    let bad = bad.lock().clone();
    Outcome {
        samples_ms,
        missing,
        bad,
        cpu_ms_per_window: cpu * 1000.0 / (a.windows + 1) as f64,
        client_cpu_ms_per_window: own * 1000.0 / (a.windows + 1) as f64,
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((p / 100.0) * (sorted.len().max(1) - 1) as f64).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn main() {
    let a = args();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{cores} cores; {} windows, one closing tuple every {:?}; tokio-postgres clients on one thread",
        a.windows, a.interval
    );
    println!("| subscribers | samples | p50 ms | p99 ms | max ms | tcqd CPU ms per window | clients' CPU ms per window |");
    println!("|---|---|---|---|---|---|---|");
    let rt = match std::env::var("TCQ_LATENCY_CLIENT_THREADS") {
        Ok(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n.parse().expect("TCQ_LATENCY_CLIENT_THREADS=N"))
            .enable_all()
            .build(),
        Err(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
    .expect("a tokio runtime");
    let mut ok = true;
    for &n in &a.subscribers {
        let mut o = rt.block_on(run(&a, n));
        o.samples_ms.sort_by(f64::total_cmp);
        let s = &o.samples_ms;
        println!(
            "| {n} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            s.len(),
            pct(s, 50.0),
            pct(s, 99.0),
            s.last().copied().unwrap_or(f64::NAN),
            o.cpu_ms_per_window,
            o.client_cpu_ms_per_window
        );
        if o.missing > 0 || !o.bad.is_empty() {
            ok = false;
            println!(
                "  {} rows missing, {} unexpected: {:?}",
                o.missing,
                o.bad.len(),
                &o.bad[..o.bad.len().min(3)]
            );
        }
    }
    if !ok {
        eprintln!("latency: some subscriber did not get every window exactly once");
        std::process::exit(1);
    }
}
