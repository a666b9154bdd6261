//! Helpers for the tests of derived streams and sinks (`derived_streams.rs`,
//! `sinks.rs`): waiting on `tcq_sinks`, a webhook to POST to, files read back.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_postgres::Client;

/// One row of `tcq_sinks`.
#[derive(Clone, Debug, PartialEq)]
pub struct SinkRow {
    pub kind: String,
    pub state: String,
    pub rows: i64,
    pub slide_events: i64,
    pub errors: i64,
    pub last_error: Option<String>,
    pub options: Option<String>,
    pub query: String,
}

/// `name`'s row of `tcq_sinks` now.
pub async fn sink_row(c: &Client, name: &str) -> Option<SinkRow> {
    let rows = c
        .query(
            "SELECT kind, state, rows, slide_events, errors, last_error, options, query \
             FROM tcq_sinks WHERE name = $1",
            &[&name],
        )
        .await
        .expect("tcq_sinks");
    rows.first().map(|r| SinkRow {
        kind: r.get(0),
        state: r.get(1),
        rows: r.get(2),
        slide_events: r.get(3),
        errors: r.get(4),
        last_error: r.get(5),
        options: r.get(6),
        query: r.get(7),
    })
}

/// Poll `name`'s row of `tcq_sinks` until `done` holds (at most `secs` seconds).
pub async fn wait_sink(
    c: &Client,
    name: &str,
    secs: u64,
    done: impl Fn(&SinkRow) -> bool,
) -> SinkRow {
    let start = Instant::now();
    loop {
        let row = sink_row(c, name).await;
        if let Some(r) = &row {
            if done(r) {
                return r.clone();
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "sink {name} not there after {secs} s: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The lines of `path` once it has at least `n` (at most `secs` seconds).
pub async fn wait_lines(path: &std::path::Path, n: usize, secs: u64) -> Vec<String> {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "{} has {} of {n} lines after {secs} s:\n{text}",
            path.display(),
            lines.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One request a [`Webhook`] answered 200.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub event_time: String,
    pub content_type: String,
    pub authorization: Option<String>,
    pub body: String,
}

/// A webhook on 127.0.0.1 that records what it answers 200 to, and can be told to fail.
#[derive(Clone)]
pub struct Webhook {
    pub url: String,
    received: Arc<Mutex<Vec<Delivery>>>,
    /// Requests still to answer 503.
    fail: Arc<AtomicUsize>,
    /// While set, every request is answered 503.
    down: Arc<AtomicBool>,
    /// Requests seen, answered 200 or not.
    pub attempts: Arc<AtomicUsize>,
}

impl Webhook {
    /// Start one on the current runtime, failing its first `fail` requests.
    pub async fn start(fail: usize) -> Webhook {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let hook = Webhook {
            url: format!("http://{}/hook", listener.local_addr().unwrap()),
            received: Arc::default(),
            fail: Arc::new(AtomicUsize::new(fail)),
            down: Arc::default(),
            attempts: Arc::default(),
        };
        let state = hook.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: String| async move {
                    state.attempts.fetch_add(1, Ordering::SeqCst);
                    let failing = state.down.load(Ordering::SeqCst)
                        || state
                            .fail
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok();
                    if failing {
                        return axum::http::StatusCode::SERVICE_UNAVAILABLE;
                    }
                    let header = |h: &str| {
                        headers
                            .get(h)
                            .map(|v| v.to_str().unwrap_or_default().to_string())
                    };
                    state.received.lock().unwrap().push(Delivery {
                        event_time: header("tcq-event-time").unwrap_or_default(),
                        content_type: header("content-type").unwrap_or_default(),
                        authorization: header("authorization"),
                        body,
                    });
                    axum::http::StatusCode::OK
                },
            ),
        );
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        hook
    }

    /// Answer 503 to everything (`true`) or work again.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// What was delivered so far.
    pub fn received(&self) -> Vec<Delivery> {
        self.received.lock().unwrap().clone()
    }

    /// What was delivered once there are at least `n` deliveries (at most `secs` s).
    pub async fn wait(&self, n: usize, secs: u64) -> Vec<Delivery> {
        let start = Instant::now();
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "{} of {n} deliveries after {secs} s: {got:?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The body of `GET path` on 127.0.0.1:`port` (the console), which must answer 200.
pub async fn http_get(port: u16, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let fut = async {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).await.unwrap();
        text
    };
    let text = tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .unwrap_or_else(|_| panic!("GET {path}: no answer"));
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.starts_with("HTTP/1.1 200"), "GET {path}: {head}");
    body.to_string()
}

/// The stream the sink and derived-stream tests feed.
pub const STREAM: &str =
    "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, origin text, delay integer)";

/// An INSERT into `s` of one tuple a minute from 2001-01-01 00:00 for minutes `from..to`:
/// origins in turn SFO, LAX, ORD, the delay the minute.
pub fn tuples(from: i64, to: i64) -> String {
    let rows: Vec<String> = (from..to)
        .map(|m| {
            format!(
                "('2001-01-01 {:02}:{:02}', '{}', {m})",
                m / 60,
                m % 60,
                ["SFO", "LAX", "ORD"][(m % 3) as usize]
            )
        })
        .collect();
    format!("INSERT INTO s VALUES {}", rows.join(", "))
}
