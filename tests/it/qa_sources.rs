//! A source whose broker cannot be reached says so: its state in `tcq_sources` is never
//! `running` before the broker answers (a Kafka source said `running` for the five seconds
//! its client spent retrying), and the server's log gets one line per failed attempt, not
//! the Kafka client's own lines several times a second.

use std::time::{Duration, Instant};

use crate::common;

use common::sources::{source_row, wait_source};
use common::tcqd::Tcqd;

/// A port on 127.0.0.1 where nothing listens (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().unwrap().port()
}

/// Every state `stream`'s source shows over `secs` seconds, in order, without repeats.
async fn states_over(c: &tokio_postgres::Client, stream: &str, secs: u64) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        if let Some(r) = source_row(c, stream).await {
            if seen.last() != Some(&r.state) {
                seen.push(r.state);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen
}

#[tokio::test]
async fn unreachable_brokers_are_retrying_never_running() {
    let t = Tcqd::start(["--memory-only", "--http", "off"]);
    let c = common::connect(t.port).await;
    let (kafka, mqtt) = (closed_port(), closed_port());
    common::exec(
        &c,
        &format!(
            "CREATE STREAM k (ts timestamp TIMESTAMPCOLUMN, v int) WITH (connector = 'kafka', \
             topic = 't', bootstrap_servers = '127.0.0.1:{kafka}', format = 'json'); \
             CREATE STREAM m (ts timestamp TIMESTAMPCOLUMN, v int) WITH (connector = 'mqtt', \
             url = 'tcp://127.0.0.1:{mqtt}', topic = 't', format = 'json'); \
             CREATE STREAM f (ts timestamp TIMESTAMPCOLUMN, v int) WITH (connector = 'file', \
             path = '/nonexistent/tcq-qa', format = 'json')"
        ),
    )
    .await;
    let log_before = t.log_text().lines().count();
    let kafka_states = states_over(&c, "k", 8).await;
    for stream in ["k", "m", "f"] {
        let r = wait_source(&c, stream, 20, |r| r.state == "retrying").await;
        assert!(r.last_error.is_some(), "{stream}: {r:?}");
    }
    for stream in ["m", "f"] {
        assert_ne!(source_row(&c, stream).await.unwrap().state, "running");
    }
    assert!(
        !kafka_states.iter().any(|s| s == "running"),
        "a Kafka source without a broker showed {kafka_states:?}"
    );
    // About one line per failed attempt and source (the backoff grows to 5 s), where the
    // Kafka client alone used to log about 19 lines a second.
    let log = t.log_text();
    let lines: Vec<&str> = log.lines().skip(log_before).collect();
    assert!(
        lines.iter().all(|l| !l.contains("rskafka")),
        "the Kafka client's own lines:\n{}",
        lines.join("\n")
    );
    assert!(
        lines.len() < 40,
        "{} lines in 8 s:\n{}",
        lines.len(),
        lines.join("\n")
    );
}

/// `POST /ingest/<stream>` of an NDJSON `body` over HTTP/1.0: the status and the body.
async fn post_ndjson(port: u16, stream: &str, body: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let req = format!(
        "POST /ingest/{stream} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\
         Content-Type: application/x-ndjson\r\n\r\n{body}",
        body.len()
    );
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |x| x.1).to_string();
    (status, body)
}

/// A bad line posted to `/ingest` carries the SQLSTATE the same value gets from COPY or
/// INSERT (22021 for a NUL, 22003 out of range, 22008 a date out of range), not 22P02 for
/// every kind: the decoder of connectors' formats reports errors as text.
#[tokio::test]
async fn http_ingest_errors_carry_their_sqlstate() {
    let ports = common::start_with_console(tcq::http::HttpOptions::default());
    let c = common::connect(ports.pg).await;
    common::exec(
        &c,
        "CREATE STREAM h (ts timestamp TIMESTAMPCOLUMN, v int, t text)",
    )
    .await;
    for (line, code) in [
        (r#"{"ts": "2001-01-01", "t": "a\u0000b"}"#, "22021"),
        (r#"{"ts": "2001-01-01", "v": 99999999999}"#, "22003"),
        (r#"{"ts": "2001-13-45"}"#, "22008"),
        (r#"{"ts": "2001-01-01", "v": "x"}"#, "22P02"),
    ] {
        let (status, body) = post_ndjson(ports.http, "h", &format!("{line}\n")).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body.contains(&format!("\"sqlstate\":\"{code}\"")),
            "{line}: {body}"
        );
    }
}
