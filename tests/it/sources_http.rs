//! Issue 31, HTTP: `POST /ingest/<stream>` on the console's listener takes NDJSON or CSV
//! with the wire's users (HTTP Basic against the SCRAM verifiers) and privileges (INSERT
//! on the stream), all or nothing, with a bounded body; and a source's counters show in
//! `/metrics` and `/api/streams`.

use std::collections::HashMap;
use std::time::Duration;

use tcq::http::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::sources::{fetch, wait_source};
use crate::common::{self, exec};

/// `POST path` with `content_type` and `body` (and Basic `auth` when given): the status
/// and the body.
async fn post(
    port: u16,
    path: &str,
    content_type: Option<&str>,
    auth: Option<&str>,
    body: &str,
) -> (u16, String) {
    use base64::Engine as _;
    let mut req = format!(
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(t) = content_type {
        req.push_str(&format!("Content-Type: {t}\r\n"));
    }
    if let Some(a) = auth {
        let b64 = base64::engine::general_purpose::STANDARD.encode(a);
        req.push_str(&format!("Authorization: Basic {b64}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    get_response(port, req).await
}

async fn get_response(port: u16, req: String) -> (u16, String) {
    let fut = async {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        // A body over the limit may be refused before it is all sent.
        let _ = s.write_all(req.as_bytes()).await;
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out).await;
        let text = String::from_utf8_lossy(&out).to_string();
        let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = text.split_once("\r\n\r\n").map_or("", |x| x.1).to_string();
        (status, body)
    };
    tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .expect("an answer")
}

/// The SQLSTATE of a JSON error answer (`{"error": {"sqlstate": ...}}`); empty for an
/// answer without one.
fn sqlstate_of(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    v["error"]["sqlstate"].as_str().unwrap_or("").to_string()
}

#[tokio::test]
async fn ndjson_and_csv_posts_with_roles_privileges_and_bounds() {
    let mut passwords = HashMap::new();
    passwords.insert(
        "alice".to_string(),
        tcq::server::Verifier::from_password("secret"),
    );
    let ports = common::start_with_console(HttpOptions {
        passwords: Some(passwords),
        ingest_bytes_max: 4096,
        ..HttpOptions::default()
    });
    let alice = common::connect_as(ports.pg, "alice", "secret")
        .await
        .unwrap();
    exec(
        &alice,
        "CREATE STREAM h (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text); \
         CREATE ROLE bob LOGIN PASSWORD 'pw'",
    )
    .await;
    exec(&alice, "BEGIN; DECLARE q CURSOR FOR SELECT * FROM h").await;
    let ndjson = "{\"ts\": \"2001-01-01 00:00:01\", \"delay\": 5, \"origin\": \"SFO\"}\n\
                  {\"ts\": \"2001-01-01T00:00:02Z\", \"origin\": \"LAX\"}\n";
    let json = Some("application/x-ndjson");
    let bob = Some("bob:pw");
    // Who: no credentials, wrong ones, then a role without INSERT.
    let (status, body) = post(ports.http, "/ingest/h", json, None, ndjson).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(sqlstate_of(&body), "28000", "{body}");
    assert_eq!(
        post(ports.http, "/ingest/h", json, Some("bob:guess"), ndjson)
            .await
            .0,
        401
    );
    let (status, body) = post(ports.http, "/ingest/h", json, bob, ndjson).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("\"sqlstate\":\"42501\""), "{body}");
    exec(&alice, "GRANT INSERT ON STREAM h TO bob").await;
    let (status, body) = post(ports.http, "/ingest/h", json, bob, ndjson).await;
    assert_eq!((status, body.as_str()), (200, "{\"rows\":2}"));
    let csv = "ts,delay,origin\n2001-01-01 00:00:03,7,\"O,RD\"\n";
    let (status, body) = post(
        ports.http,
        "/ingest/h?header=true",
        Some("text/csv"),
        bob,
        csv,
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "{\"rows\":1}"));
    assert_eq!(
        fetch(&alice, "q", 3, 10).await,
        common::table(&[
            &["2001-01-01 00:00:01", "5", "SFO"],
            &["2001-01-01 00:00:02", "NULL", "LAX"],
            &["2001-01-01 00:00:03", "7", "O,RD"],
        ])
    );
    // All or nothing: a bad line refuses the body, naming the line.
    let bad = "2001-01-01 00:00:04,8,JFK\n2001-01-01 00:00:05,late,BOS\n";
    let (status, body) = post(ports.http, "/ingest/h?format=csv", None, bob, bad).await;
    assert_eq!(status, 400);
    let e: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        e["error"]["message"],
        "line 2: column \"delay\": invalid input syntax for type integer: \"late\""
    );
    assert_eq!(e["error"]["sqlstate"], "22P02");
    assert!(
        fetch(&alice, "q", 1, 1).await.is_empty(),
        "nothing of a refused body"
    );
    // The SQLSTATE is COPY's for the same record: 22P04 for a wrong field count or a
    // quote left open, 23502 for no TIMESTAMPCOLUMN value.
    for (csv, sqlstate) in [
        ("2001-01-01 00:00:04,8\n", "22P04"),
        ("2001-01-01 00:00:04,8,JFK,extra\n", "22P04"),
        (
            "2001-01-01 00:00:04,8,\"JFK\n2001-01-01 00:00:05,9,BOS\n",
            "22P04",
        ),
        (",8,JFK\n", "23502"),
    ] {
        let (status, body) = post(ports.http, "/ingest/h?format=csv", None, bob, csv).await;
        assert_eq!(status, 400, "{csv:?}: {body}");
        let e: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(e["error"]["sqlstate"], sqlstate, "{csv:?}: {body}");
    }
    // Unknown stream, unknown media type, a bad query string, a body over
    // ingest_bytes_max: each answer names its SQLSTATE.
    let big = ndjson.repeat(100);
    for (path, media, body, status, sqlstate) in [
        ("/ingest/nope", json, ndjson, 404, "42P01"),
        ("/ingest/h", Some("text/plain"), ndjson, 415, "0A000"),
        ("/ingest/h?header=maybe", json, ndjson, 400, "22023"),
        ("/ingest/h?timestamp_format=x", json, ndjson, 400, "22023"),
        ("/ingest/h", json, big.as_str(), 413, "54000"),
    ] {
        let (got, answer) = post(ports.http, path, media, bob, body).await;
        assert_eq!(got, status, "{path} {media:?}: {answer}");
        assert_eq!(sqlstate_of(&answer), sqlstate, "{path} {media:?}: {answer}");
    }
    // A page elsewhere cannot make a browser post rows.
    let req = format!(
        "POST /ingest/h HTTP/1.0\r\nHost: 127.0.0.1\r\nSec-Fetch-Site: cross-site\r\n\
         Content-Type: text/csv\r\nContent-Length: {}\r\n\r\n{bad}",
        bad.len()
    );
    assert_eq!(get_response(ports.http, req).await.0, 403);
    exec(&alice, "COMMIT").await;
}

#[tokio::test]
async fn a_sources_counters_show_in_metrics_and_the_console_api() {
    let ports = common::start_with_console(HttpOptions::default());
    let c = common::connect(ports.pg).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.json"),
        "{\"ts\": \"2001-01-01 00:00:01\", \"delay\": 1}\n{\"delay\": 2}\n{\"ts\": \"2001-01-01 00:00:03\"}\n",
    )
    .unwrap();
    exec(
        &c,
        &format!(
            "CREATE STREAM f (ts timestamp TIMESTAMPCOLUMN, delay integer) \
             WITH (connector = 'file', path = '{}', format = 'json')",
            dir.path().display()
        ),
    )
    .await;
    wait_source(&c, "f", 20, |r| r.messages == 2 && r.bad_messages == 1).await;
    let req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".to_string();
    let (status, metrics) = get_response(ports.metrics, req).await;
    assert_eq!(status, 200);
    for line in [
        "tcq_source_messages_total{stream=\"f\",connector=\"file\"} 2",
        "tcq_source_bad_messages_total{stream=\"f\",connector=\"file\"} 1",
        "tcq_source_lag{stream=\"f\",connector=\"file\"} 0",
        "tcq_source_running{stream=\"f\",connector=\"file\"} 1",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "{line} not in\n{metrics}"
        );
    }
    let req = "GET /api/streams HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".to_string();
    let (_, body) = get_response(ports.http, req).await;
    let streams: serde_json::Value = serde_json::from_str(&body).unwrap();
    let src = &streams[0]["source"];
    assert_eq!(src["connector"], "file");
    assert_eq!(src["state"], "running");
    assert_eq!(src["messages"], 2);
    assert_eq!(src["bad_messages"], 1);
    assert_eq!(
        src["last_error"],
        "file a.json line 2: no value for the TIMESTAMPCOLUMN \"ts\""
    );
}
