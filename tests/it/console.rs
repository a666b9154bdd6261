//! The web console's HTTP endpoints, over a real socket: JSON shapes with exact values,
//! Server-Sent Events delivering rows as windows close, cancel, authentication, `/metrics`
//! after a known ingest, and the `--http` exposure rule of `tcqd`.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use common::{exec, rows, start_with_console as start, table, wait_for_queries};
use serde_json::{json, Value};
use tcq::http::HttpOptions;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_postgres::{Client, NoTls};

async fn connect(port: u16, application: &str) -> Client {
    let conn = format!(
        "host=127.0.0.1 port={port} user=tcq dbname=tcq password=secret application_name={application}"
    );
    let (client, connection) = tokio_postgres::connect(&conn, NoTls)
        .await
        .expect("connect");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// One HTTP response: status, headers (lower-case names) and body.
struct Response {
    status: u16,
    headers: HashMap<String, String>,
    body: String,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Send one HTTP/1.0 request (so the response is never chunked and ends with the
/// connection) and read its response head; the stream is left at the start of the body.
async fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, HashMap<String, String>, BufReader<TcpStream>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let mut req = format!("{method} {path} HTTP/1.0\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str("Host: 127.0.0.1\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req.push_str("Content-Type: application/json\r\n");
        }
        req.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    req.push_str("\r\n");
    req.push_str(body.unwrap_or(""));
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).await.unwrap();
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("bad status line {line:?}"))
        .parse()
        .unwrap();
    let mut headers = HashMap::new();
    loop {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.insert(k.to_ascii_lowercase(), v.trim().to_string());
    }
    (status, headers, reader)
}

async fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Response {
    let fut = async {
        let (status, headers, mut reader) = send(port, method, path, headers, body).await;
        let mut body = String::new();
        reader.read_to_string(&mut body).await.unwrap();
        Response {
            status,
            headers,
            body,
        }
    };
    tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .unwrap_or_else(|_| panic!("timed out: {method} {path}"))
}

async fn get(port: u16, path: &str) -> Response {
    request(port, "GET", path, &[], None).await
}

async fn post(port: u16, path: &str, body: &str) -> Response {
    request(port, "POST", path, &[], Some(body)).await
}

/// An open event stream.
struct Events {
    reader: BufReader<TcpStream>,
}

impl Events {
    async fn open(port: u16, path: &str) -> Events {
        let (status, headers, reader) = send(port, "GET", path, &[], None).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(headers["content-type"], "text/event-stream");
        Events { reader }
    }

    /// The next event's name and JSON data (keep-alive comments skipped); panics after 20 s.
    async fn next(&mut self) -> (String, Value) {
        let fut = async {
            let (mut name, mut data) = (String::from("message"), String::new());
            loop {
                let mut line = String::new();
                let n = self.reader.read_line(&mut line).await.unwrap();
                assert!(n > 0, "the event stream ended");
                let line = line.trim_end_matches(['\r', '\n']);
                if line.is_empty() {
                    if !data.is_empty() {
                        return (name, serde_json::from_str(&data).unwrap());
                    }
                    continue;
                }
                if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_string();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(20), fut)
            .await
            .expect("an event within 20 s")
    }

    /// The next event, which must be named `name`; its data.
    async fn expect(&mut self, name: &str) -> Value {
        let (got, data) = self.next().await;
        assert_eq!(got, name, "expected a {name} event, got {got}: {data}");
        data
    }
}

const CREATE: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer)";
const QUERY: &str = "SELECT k, count(*), sum(v), wtime(*) FROM s \
     [RANGE BY '10 seconds' START AT '2024-01-01 00:00:00'] GROUP BY k ORDER BY k";
const INSERT_FIRST: &str = "INSERT INTO s VALUES ('2024-01-01 00:00:01','a',1), \
     ('2024-01-01 00:00:03','b',2), ('2024-01-01 00:00:05','a',3), ('2024-01-01 00:00:12','a',4)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_queries_and_metrics_show_exact_counters_after_a_known_ingest() {
    let ports = start(HttpOptions::default());
    let c = connect(ports.pg, "ingest").await;
    exec(&c, CREATE).await;
    let reader = connect(ports.pg, "reader").await;
    let reading = tokio::spawn(async move { rows(&reader, QUERY).await });
    wait_for_queries(&c, 1).await;
    exec(&c, INSERT_FIRST).await;
    // A late tuple: 00:00:04 belongs to the window [00:00, 00:10) already emitted.
    exec(&c, "INSERT INTO s VALUES ('2024-01-01 00:00:04','b',5)").await;
    // tcq_queries passes a barrier: every statement above has reached the query.
    let q = rows(&c, "SELECT rows_out, late_tuples FROM tcq_queries").await;
    assert_eq!(q, table(&[&["2", "1"]]));

    let streams = get(ports.http, "/api/streams").await;
    assert_eq!(streams.status, 200);
    assert_eq!(streams.headers["content-type"], "application/json");
    let mut s = streams.json();
    let s = s[0].as_object_mut().unwrap();
    // The rate is sampled on the server's clock: only its presence is exact.
    assert!(s.remove("rate_per_sec").unwrap().is_number());
    assert!(s.remove("rate_history").unwrap().is_array());
    assert_eq!(
        Value::Object(s.clone()),
        json!({
            "name": "s",
            "columns": [
                {"name": "ts", "type": "timestamp without time zone"},
                {"name": "k", "type": "text"},
                {"name": "v", "type": "integer"}
            ],
            "timestamp_column": "ts",
            "type": "UNARCHIVED",
            "tuples": 5,
            "current_time": "2024-01-01 00:00:12",
            "current_time_us": 1704067212000000i64,
            "late_tuples": 1,
            "queries": 1,
            "disk_bytes": null,
            "retention": null,
            "source": null
        })
    );

    let queries = get(ports.http, "/api/queries").await.json();
    let q = &queries[0];
    let pid = q["pid"].as_i64().unwrap();
    assert_eq!(
        q,
        &json!({
            "id": 1,
            "text": QUERY,
            "pid": pid,
            "client": {"pid": pid, "user": "tcq", "application_name": "reader", "client_addr": "127.0.0.1"},
            "streams": ["s"],
            "current_time": "2024-01-01 00:00:12",
            "current_time_us": 1704067212000000i64,
            "tuples_in": 5,
            "rows_out": 2,
            "slide_events": 1,
            "late_tuples": 1,
            "open_instances": 1,
            "groups": q["groups"],
            "state_bytes": q["state_bytes"],
            "has_plan": true,
            "feeds": null,
            "flink_job": null,
            "flink_state": null
        })
    );
    // Group ids survive until compaction: a and b, at least the open instance's a.
    assert!((1..=2).contains(&q["groups"].as_i64().unwrap()), "{q}");
    assert!(q["state_bytes"].as_i64().unwrap() > 0, "{q}");

    for port in [ports.http, ports.metrics] {
        let m = get(port, "/metrics").await;
        assert_eq!(m.status, 200);
        assert_eq!(
            m.headers["content-type"],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        let samples: HashMap<&str, &str> = m
            .body
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.rsplit_once(' '))
            .collect();
        for (series, value) in [
            ("tcq_stream_tuples_total{stream=\"s\"}", "5"),
            ("tcq_stream_late_tuples{stream=\"s\"}", "1"),
            ("tcq_ingest_tuples_total", "5"),
            ("tcq_query_rows_out_total{query=\"1\"}", "2"),
            ("tcq_query_tuples_in_total{query=\"1\"}", "5"),
            ("tcq_query_late_tuples_total{query=\"1\"}", "1"),
            ("tcq_query_slide_events_total{query=\"1\"}", "1"),
            ("tcq_query_open_instances{query=\"1\"}", "1"),
            ("tcq_rows_out", "2"),
            ("tcq_late_tuples", "1"),
            ("tcq_open_window_instances", "1"),
            ("tcq_streams", "1"),
            ("tcq_queries", "1"),
            ("tcq_connections", "2"),
            ("tcq_memory_limit_bytes", "1073741824"),
            ("tcq_memory_refusals_total", "0"),
            ("tcq_memory_tracked_bytes{kind=\"copy_staging\"}", "0"),
        ] {
            assert_eq!(
                samples.get(series).copied(),
                Some(value),
                "{series} in\n{}",
                m.body
            );
        }
        for series in [
            "tcq_stream_ingest_rate{stream=\"s\"}",
            "tcq_memory_resident_bytes",
        ] {
            let v: f64 = samples[series].parse().unwrap();
            assert!(v >= 0.0, "{series}");
        }
        // The query's open instance is charged to the memory budget.
        let state: f64 = samples["tcq_memory_tracked_bytes{kind=\"query_state\"}"]
            .parse()
            .unwrap();
        assert!(state > 0.0, "{}", m.body);
        assert!(m.body.contains("# TYPE tcq_query_rows_out_total counter\n"));
        assert_eq!(get(port, "/healthz").await.body, "ok\n");
    }
    // The metrics listener serves nothing else.
    assert_eq!(get(ports.metrics, "/api/streams").await.status, 404);

    exec(&c, "DROP STREAM s").await;
    let got = reading.await.unwrap();
    assert_eq!(
        got,
        table(&[
            &["a", "2", "4", "2024-01-01 00:00:10"],
            &["b", "1", "2", "2024-01-01 00:00:10"]
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_endpoint_draws_the_shared_plan_with_measured_work() {
    let ports = start(HttpOptions::default());
    let c = connect(ports.pg, "ingest").await;
    exec(&c, CREATE).await;
    let reader = connect(ports.pg, "reader").await;
    // The paper's windows 20, 30, 40 (minutes): with factor window 10 the plan is
    // 10 <- S, 20 <- 10, 30 <- 10, 40 <- 20.
    let sql = "SELECT count(*), sum(v) FROM s \
        [RANGE BY '20 minutes' START AT '2024-01-01'] [RANGE BY '30 minutes' START AT '2024-01-01'] \
        [RANGE BY '40 minutes' START AT '2024-01-01']";
    let reading = tokio::spawn(async move { rows(&reader, sql).await });
    wait_for_queries(&c, 1).await;
    // One tuple a minute for two hours.
    let values: Vec<String> = (0..120)
        .map(|m| format!("('2024-01-01 {:02}:{:02}:00','a',1)", m / 60, m % 60))
        .collect();
    exec(&c, &format!("INSERT INTO s VALUES {}", values.join(","))).await;
    rows(&c, "SELECT * FROM tcq_queries").await;

    let plan = get(ports.http, "/api/queries/1/plan").await;
    assert_eq!(plan.status, 200);
    let plan = plan.json();
    let nodes: Vec<Value> = plan["plan"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            json!([
                n["name"],
                n["window"]["range_us"],
                n["factor"],
                n["parent"],
                n["multiplier"]
            ])
        })
        .collect();
    let min = 60_000_000i64;
    assert_eq!(
        nodes,
        vec![
            json!(["f1", 10 * min, true, null, null]),
            json!(["w1", 20 * min, false, "f1", 2]),
            json!(["w3", 40 * min, false, "w1", 2]),
            json!(["w2", 30 * min, false, "f1", 3]),
        ]
    );
    assert_eq!(plan["choice"], "Algorithm 2");
    // Measured: the factor window folded all 120 tuples; at current time 01:59 eleven of
    // its instances have closed (ends 00:10 .. 01:50), each merged once into w1 and once
    // into w2; five instances of w1 have closed (ends 00:20 .. 01:40), each merged into w3.
    let measured: Vec<Value> = plan["measured"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!([m["tuples_folded"], m["partials_merged"]]))
        .collect();
    assert_eq!(
        measured,
        vec![
            json!([120, 0]),
            json!([0, 11]),
            json!([0, 5]),
            json!([0, 11])
        ]
    );
    assert_eq!(plan["measured"]["stream_time_us"], json!(119 * min));

    // No plan for an unknown query; a clear error for a query without one.
    let missing = get(ports.http, "/api/queries/99/plan").await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.json()["error"]["message"],
        "no continuous query with id 99"
    );
    exec(&c, "DROP STREAM s").await;
    reading.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sql_stream_delivers_rows_as_windows_close_and_pg_cancel_backend_stops_it() {
    let ports = start(HttpOptions::default());
    let c = connect(ports.pg, "ingest").await;
    exec(&c, CREATE).await;
    let path = format!(
        "/api/sql/stream?sql={}",
        QUERY
            .replace(' ', "%20")
            .replace('\'', "%27")
            .replace(',', "%2C")
    );
    let mut events = Events::open(ports.http, &path).await;
    let pid = events.expect("session").await["pid"].as_i64().unwrap();
    assert_eq!(
        events.expect("columns").await,
        json!([
            {"name": "k", "type": "text"},
            {"name": "count", "type": "bigint"},
            {"name": "sum", "type": "bigint"},
            {"name": "wtime", "type": "timestamp without time zone"}
        ])
    );
    wait_for_queries(&c, 1).await;
    exec(&c, INSERT_FIRST).await;
    assert_eq!(
        events.expect("rows").await,
        json!([
            ["a", 2, 4, "2024-01-01 00:00:10"],
            ["b", 1, 2, "2024-01-01 00:00:10"]
        ])
    );
    exec(&c, "INSERT INTO s VALUES ('2024-01-01 00:00:25','b',7)").await;
    assert_eq!(
        events.expect("rows").await,
        json!([["a", 1, 4, "2024-01-01 00:00:20"]])
    );
    // The console's session is a backend like any other.
    let activity = rows(
        &c,
        &format!("SELECT application_name FROM pg_stat_activity WHERE pid = {pid} AND backend_type = 'client backend'"),
    )
    .await;
    assert_eq!(activity, table(&[&["tcq console"]]));
    assert_eq!(
        rows(&c, &format!("SELECT pg_cancel_backend({pid})")).await,
        table(&[&["t"]])
    );
    assert_eq!(
        events.expect("error").await,
        json!({
            "message": "canceling statement due to user request",
            "sqlstate": "57014",
            "detail": null,
            "hint": null,
            "position": null
        })
    );
    // Its query is gone with it.
    wait_until_no_queries(&c).await;
}

async fn wait_until_no_queries(c: &Client) {
    for _ in 0..500 {
        if rows(c, "SELECT id FROM tcq_queries").await.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("queries still registered after 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tail_copies_a_querys_rows_and_cancel_ends_the_query_on_its_connection() {
    let ports = start(HttpOptions::default());
    let c = connect(ports.pg, "ingest").await;
    exec(&c, CREATE).await;
    let reader = connect(ports.pg, "reader").await;
    let reading = tokio::spawn(async move { reader.simple_query(QUERY).await });
    wait_for_queries(&c, 1).await;
    let mut tail = Events::open(ports.http, "/api/queries/1/tail").await;
    assert_eq!(
        tail.expect("columns").await[1],
        json!({"name": "count", "type": "bigint"})
    );
    exec(&c, INSERT_FIRST).await;
    assert_eq!(
        tail.expect("rows").await,
        json!([
            ["a", 2, 4, "2024-01-01 00:00:10"],
            ["b", 1, 2, "2024-01-01 00:00:10"]
        ])
    );

    let cancelled = post(ports.http, "/api/queries/1/cancel", "").await;
    assert_eq!(cancelled.status, 200);
    assert_eq!(cancelled.json(), json!({"cancelled": true}));
    let err = reading.await.unwrap().expect_err("the query was cancelled");
    assert_eq!(common::sqlstate(&err), "57014");
    // The tail ends with the query.
    assert_eq!(tail.expect("complete").await, json!({"tag": "SELECT 2"}));
    assert_eq!(tail.expect("end").await, json!({}));

    let missing = post(ports.http, "/api/queries/1/cancel", "").await;
    assert_eq!(missing.status, 404);
    assert_eq!(get(ports.http, "/api/queries/1/tail").await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sql_box_runs_finite_statements_and_explains_as_json() {
    let ports = start(HttpOptions::default());
    let body = json!({"sql": format!("{CREATE}; INSERT INTO s VALUES ('2024-01-01 00:00:01','a',1); SELECT name, tuples FROM tcq_streams")});
    let r = post(ports.http, "/api/sql", &body.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.json(),
        json!({"results": [
            {"tag": "CREATE STREAM"},
            {"tag": "INSERT 0 1"},
            {"tag": "SELECT 1", "columns": [{"name": "name", "type": "text"}, {"name": "tuples", "type": "bigint"}],
             "rows": [["s", 1]], "truncated": false, "notices": []}
        ]})
    );
    let r = post(ports.http, "/api/sql", &json!({"sql": QUERY}).to_string()).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["sqlstate"], "0A000");
    let r = post(
        ports.http,
        "/api/sql",
        &json!({"sql": "SELEC 1"}).to_string(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["sqlstate"], "42601");
    let long = "x".repeat(300 << 10);
    let r = post(ports.http, "/api/sql", &json!({"sql": long}).to_string()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["error"]["sqlstate"], "54000");
    // Every error answer names a SQLSTATE, those of the request's shape too: another
    // media type, a body that is no JSON or lacks "sql", an unknown query id or path.
    let text = [("Content-Type", "text/plain")];
    let sql = r#"{"sql": "SELECT 1"}"#;
    for (method, path, headers, body, status, sqlstate) in [
        ("POST", "/api/sql", &text[..], sql, 415, "0A000"),
        ("POST", "/api/explain", &text[..], sql, 415, "0A000"),
        ("POST", "/api/sql", &[][..], "{", 400, "22023"),
        ("POST", "/api/sql", &[][..], "{}", 422, "22023"),
        ("GET", "/api/queries/77/plan", &[][..], "", 404, "42704"),
        ("GET", "/api/queries/77/tail", &[][..], "", 404, "42704"),
        ("GET", "/api/nothing", &[][..], "", 404, "42704"),
        ("GET", "/assets/nothing.js", &[][..], "", 404, "42704"),
        ("GET", "/api/sql", &[][..], "", 405, "0A000"),
    ] {
        let body = (!body.is_empty()).then_some(body);
        let r = request(ports.http, method, path, headers, body).await;
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        assert_eq!(
            r.json()["error"]["sqlstate"],
            sqlstate,
            "{method} {path}: {}",
            r.body
        );
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{method} {path}: {}",
            r.body
        );
    }

    let sql = "SELECT count(*) FROM s [RANGE BY '20 minutes'] [RANGE BY '40 minutes']";
    let r = post(ports.http, "/api/explain", &json!({"sql": sql}).to_string()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let plan = r.json();
    let nodes: Vec<Value> = plan["plan"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| json!([n["name"], n["parent"], n["multiplier"]]))
        .collect();
    assert_eq!(
        nodes,
        vec![json!(["w1", null, null]), json!(["w2", "w1", 2])]
    );
    assert!(plan.get("measured").is_none());
    let r = post(
        ports.http,
        "/api/explain",
        &json!({"sql": "SELECT 1"}).to_string(),
    )
    .await;
    assert_eq!(r.status, 400);

    // The page and its assets are compiled in.
    let page = get(ports.http, "/").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(
        page.headers["content-security-policy"],
        "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
    );
    assert!(page.body.contains("<script src=\"/assets/console.js\">"));
    let js = get(ports.http, "/assets/console.js").await;
    assert_eq!(js.headers["content-type"], "text/javascript; charset=utf-8");
    assert!(js.body.contains("function drawPlan"));
    assert_eq!(get(ports.http, "/assets/nothing.js").await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_password_file_every_endpoint_needs_basic_authentication() {
    let mut passwords = HashMap::new();
    passwords.insert(
        "alice".to_string(),
        tcq::server::Verifier::from_password("secret"),
    );
    let ports = start(HttpOptions {
        passwords: Some(passwords),
        ..HttpOptions::default()
    });
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let right = format!("Basic {}", b64("alice:secret"));
    let wrong = format!("Basic {}", b64("alice:guess"));
    let stranger = format!("Basic {}", b64("eve:secret"));
    for port in [ports.http, ports.metrics] {
        for path in ["/metrics", "/healthz"] {
            let r = get(port, path).await;
            assert_eq!(r.status, 401, "{path}");
            assert_eq!(
                r.headers["www-authenticate"],
                "Basic realm=\"tcq\", charset=\"UTF-8\""
            );
            for bad in [&wrong, &stranger] {
                let r = request(port, "GET", path, &[("Authorization", bad)], None).await;
                assert_eq!(r.status, 401, "{path} {bad}");
            }
            // Twice: the second answer comes from the cache of verified pairs.
            for _ in 0..2 {
                let r = request(port, "GET", path, &[("Authorization", &right)], None).await;
                assert_eq!(r.status, 200, "{path}");
            }
        }
    }
    for path in ["/", "/api/streams", "/api/queries", "/assets/console.js"] {
        assert_eq!(get(ports.http, path).await.status, 401, "{path}");
        let r = request(ports.http, "GET", path, &[("Authorization", &right)], None).await;
        assert_eq!(r.status, 200, "{path}");
    }
    // The console's session runs as the authenticated user.
    let sql =
        r#"{"sql":"SELECT usename FROM pg_stat_activity WHERE application_name = 'tcq console'"}"#;
    let auth = [("Authorization", right.as_str())];
    let r = request(ports.http, "POST", "/api/sql", &auth, Some(sql)).await;
    assert_eq!(r.json()["results"][0]["rows"], json!([["alice"]]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn superuser_roles_made_with_create_role_may_use_the_console() {
    let mut passwords = HashMap::new();
    passwords.insert(
        "admin".to_string(),
        tcq::server::Verifier::from_password("secret"),
    );
    let ports = start(HttpOptions {
        passwords: Some(passwords),
        ..HttpOptions::default()
    });
    let (admin, connection) = tokio_postgres::connect(
        &format!(
            "host=127.0.0.1 port={} user=admin password=secret dbname=tcq",
            ports.pg
        ),
        tokio_postgres::NoTls,
    )
    .await
    .expect("admin logs in");
    tokio::spawn(connection);
    admin
        .batch_execute(
            "CREATE ROLE boss SUPERUSER LOGIN PASSWORD 'bp'; \
             CREATE ROLE alice LOGIN PASSWORD 'ap'",
        )
        .await
        .unwrap();
    use base64::Engine as _;
    let auth = |pair: &str| {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    };
    let status = |pair: &'static str| {
        let header = auth(pair);
        async move {
            request(
                ports.http,
                "GET",
                "/api/streams",
                &[("Authorization", &header)],
                None,
            )
            .await
            .status
        }
    };
    assert_eq!(status("boss:bp").await, 200);
    assert_eq!(status("boss:bp").await, 200);
    assert_eq!(status("boss:wrong").await, 401);
    assert_eq!(
        status("alice:ap").await,
        401,
        "the console is for superusers"
    );
    // A change to the roles is seen at once, cached credentials included.
    admin
        .batch_execute("ALTER ROLE boss NOSUPERUSER")
        .await
        .unwrap();
    assert_eq!(status("boss:bp").await, 401);
    admin
        .batch_execute("ALTER ROLE boss SUPERUSER PASSWORD 'new'")
        .await
        .unwrap();
    assert_eq!(status("boss:bp").await, 401);
    assert_eq!(status("boss:new").await, 200);
}

/// `tcqd --http` beyond loopback needs a password file or --insecure, as `--listen` does.
#[test]
fn tcqd_refuses_a_console_beyond_loopback_without_authentication() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--memory-only",
            "--http",
            "0.0.0.0:0",
        ])
        .output()
        .expect("run tcqd");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to serve the console on 0.0.0.0:")
            && stderr.contains("without authentication: give --password-file, or --insecure"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_console_endpoint_is_bounded() {
    let ports = start(HttpOptions {
        stream_rows_max: 1,
        streams_max: 1,
        statement_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    });
    let c = connect(ports.pg, "ingest").await;
    exec(&c, CREATE).await;

    // A FETCH that waits for rows that never come ends with the statement timeout.
    let fetch = format!("BEGIN; DECLARE c CURSOR FOR {QUERY}; FETCH 1 FROM c");
    let r = post(ports.http, "/api/sql", &json!({ "sql": fetch }).to_string()).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json(),
        json!({"error": {"message": "canceling statement due to statement timeout (0.3 s in the console)", "sqlstate": "57014"}})
    );
    wait_until_no_queries(&c).await;

    // One event stream at a time; the second is refused.
    let path = format!(
        "/api/sql/stream?sql={}",
        QUERY
            .replace(' ', "%20")
            .replace('\'', "%27")
            .replace(',', "%2C")
    );
    let mut events = Events::open(ports.http, &path).await;
    events.expect("session").await;
    events.expect("columns").await;
    let refused = get(ports.http, &path).await;
    assert_eq!(refused.status, 503);
    assert_eq!(
        refused.json(),
        json!({"error": {"message": "the console has 1 live streams open already", "sqlstate": "53300"}})
    );
    // The row limit: two rows close at once, one is sent, then the stream ends.
    wait_for_queries(&c, 1).await;
    exec(&c, INSERT_FIRST).await;
    assert_eq!(
        events.expect("rows").await,
        json!([["a", 2, 4, "2024-01-01 00:00:10"]])
    );
    assert_eq!(events.expect("limit").await, json!({"rows": 1}));
    wait_until_no_queries(&c).await;

    // Closing the page ends its statement (and frees its stream slot, a moment after the
    // query is gone).
    let mut tries = 0;
    while get(ports.http, "/api/sql/stream?sql=SELECT%201")
        .await
        .status
        == 503
    {
        tries += 1;
        assert!(tries < 500, "the stream slot was not freed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut events = Events::open(ports.http, &path).await;
    events.expect("session").await;
    events.expect("columns").await;
    wait_for_queries(&c, 1).await;
    drop(events);
    wait_until_no_queries(&c).await;
}

/// A page elsewhere must not run SQL through a user's console: requests a browser makes
/// for another site, from another origin, or for a host name rebound to 127.0.0.1 are 403.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_site_requests_are_refused() {
    let ports = start(HttpOptions::default());
    let stream = "/api/sql/stream?sql=CREATE%20STREAM%20x%20(t%20timestamp)";
    let origin = format!("http://127.0.0.1:{}", ports.http);
    for (headers, why) in [
        (
            vec![("Sec-Fetch-Site", "cross-site")],
            "a cross-site request",
        ),
        (vec![("Sec-Fetch-Site", "same-site")], "a same-site request"),
        (
            vec![("Origin", "http://evil.example")],
            "a request from origin http://evil.example",
        ),
    ] {
        let r = request(ports.http, "GET", stream, &headers, None).await;
        assert_eq!(r.status, 403, "{headers:?}");
        assert_eq!(
            r.json(),
            json!({"error": {"message": format!("the console refuses {why}"), "sqlstate": "42501"}})
        );
        let r = request(ports.http, "POST", "/api/queries/1/cancel", &headers, None).await;
        assert_eq!(r.status, 403, "{headers:?}");
    }
    let r = request(
        ports.http,
        "GET",
        "/",
        &[("Host", "rebound.example:8080")],
        None,
    )
    .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["error"]["message"],
        "the console refuses a request for host \"rebound.example:8080\" (without a password file, only addresses and localhost are served)"
    );
    assert_eq!(r.json()["error"]["sqlstate"], "42501");
    // The console's own page: same origin.
    let host = origin.strip_prefix("http://").unwrap();
    let same = [
        ("Sec-Fetch-Site", "same-origin"),
        ("Origin", origin.as_str()),
        ("Host", host),
    ];
    let r = request(
        ports.http,
        "POST",
        "/api/sql",
        &same,
        Some(r#"{"sql":"SELECT 1"}"#),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = request(ports.http, "GET", "/", &[("Host", "localhost:8080")], None).await;
    assert_eq!(r.status, 200);
    // Nothing was created by the refused requests.
    let r = post(
        ports.http,
        "/api/sql",
        r#"{"sql":"SELECT count(*) FROM tcq_streams"}"#,
    )
    .await;
    assert_eq!(r.json()["results"][0]["rows"], json!([[0]]));
}

/// Start `tcqd` with `args`; the child and the stderr lines matching each of `wanted` (the
/// text after it), in order of `wanted`.
fn spawn_tcqd(args: &[&str], wanted: &[&str]) -> (std::process::Child, Vec<String>) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(args)
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start tcqd");
    let stderr = child.stderr.take().unwrap();
    let wanted: Vec<String> = wanted.iter().map(|s| s.to_string()).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut found = vec![None; wanted.len()];
        let mut sent = false;
        // Reads to the end, so the child never blocks on a full pipe.
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            for (i, w) in wanted.iter().enumerate() {
                if let (None, Some(rest)) = (&found[i], line.split(w.as_str()).nth(1)) {
                    found[i] = Some(rest.trim().to_string());
                }
            }
            if !sent && found.iter().all(Option::is_some) {
                let _ = tx.send(found.iter().flatten().cloned().collect::<Vec<_>>());
                sent = true;
            }
        }
    });
    let found = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("tcqd reports its addresses");
    (child, found)
}

/// The port of `http://127.0.0.1:PORT/...`.
fn port_of(url: &str) -> u16 {
    let rest = url.trim_start_matches("http://");
    let hostport = rest.split('/').next().unwrap();
    hostport.rsplit(':').next().unwrap().parse().unwrap()
}

/// `tcqd --http ADDR --metrics ADDR` serves the console and a metrics listener, and SIGTERM
/// still ends the process with 0 while a page holds an event stream open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcqd_serves_the_console_and_metrics_and_shuts_down_with_a_stream_open() {
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--memory-only",
        "--http",
        "127.0.0.1:0",
        "--metrics",
        "127.0.0.1:0",
    ];
    let (mut child, found) = spawn_tcqd(&args, &["tcq console on ", "tcq metrics on "]);
    let (http, metrics) = (port_of(&found[0]), port_of(&found[1]));
    assert_eq!(get(http, "/healthz").await.body, "ok\n");
    let m = get(metrics, "/metrics").await;
    assert!(m.body.contains("\ntcq_streams 0\n"), "{}", m.body);
    // A continuous query streams (it waits for tuples that never come) when SIGTERM arrives.
    let path = "/api/sql/stream?sql=CREATE%20STREAM%20x%20(t%20timestamp);%20SELECT%20*%20FROM%20x";
    let mut events = Events::open(http, path).await;
    events.expect("session").await;
    assert_eq!(
        events.expect("complete").await,
        json!({"tag": "CREATE STREAM"})
    );
    events.expect("columns").await;
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

/// `tcqd demo --serve` prints the console's address and serves it after the demo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_serve_prints_the_console_address() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("flights.csv");
    std::fs::write(
        &data,
        "ts,delay,distance,origin,destination\n\
         2001-01-01 00:01:00,33,2176,LAS,PHL\n\
         2001-01-01 01:30:00,19,215,ATL,SAV\n",
    )
    .unwrap();
    let args = [
        "demo",
        "--serve",
        "--quiet",
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
        "--data",
        data.to_str().unwrap(),
    ];
    let (mut child, found) = spawn_tcqd(&args, &["The web console is on "]);
    let http = port_of(&found[0]);
    let streams = get(http, "/api/streams").await.json();
    assert_eq!(streams[0]["name"], "flights");
    assert_eq!(
        streams[0]["tuples"], 0,
        "the stream is created anew after the demo"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A query whose slide events leave the executor as column blocks (group keys, aggregates
/// and wtime, no ORDER BY): the live SQL stream and a tail both send each event's rows
/// whole, in first-seen group order, with keys that JSON must escape and a NULL key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_rows_reach_the_live_stream_and_a_tail_exactly() {
    const BLOCK_QUERY: &str = "SELECT k, count(*), sum(v), wtime(*) FROM s \
         [RANGE BY '10 seconds' START AT '2024-01-01 00:00:00'] GROUP BY k";
    let ports = start(HttpOptions::default());
    let c = connect(ports.pg, "ingest").await;
    exec(&c, CREATE).await;
    let encoded: String = BLOCK_QUERY
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let mut live = Events::open(ports.http, &format!("/api/sql/stream?sql={encoded}")).await;
    live.expect("session").await;
    live.expect("columns").await;
    let reader = connect(ports.pg, "reader").await;
    let reading = tokio::spawn(async move { reader.simple_query(BLOCK_QUERY).await });
    wait_for_queries(&c, 2).await;
    let ids = rows(&c, "SELECT id FROM tcq_queries ORDER BY id").await;
    let mut tail = Events::open(ports.http, &format!("/api/queries/{}/tail", ids[1][0])).await;
    tail.expect("columns").await;
    exec(
        &c,
        "INSERT INTO s VALUES ('2024-01-01 00:00:01','a\"b',1), ('2024-01-01 00:00:02','x,y',2), \
         ('2024-01-01 00:00:03','a\"b',3), ('2024-01-01 00:00:04',NULL,5), \
         ('2024-01-01 00:00:05','ü',6), ('2024-01-01 00:00:12','a\"b',4)",
    )
    .await;
    let first = json!([
        ["a\"b", 2, 4, "2024-01-01 00:00:10"],
        ["x,y", 1, 2, "2024-01-01 00:00:10"],
        [null, 1, 5, "2024-01-01 00:00:10"],
        ["ü", 1, 6, "2024-01-01 00:00:10"]
    ]);
    assert_eq!(live.expect("rows").await, first);
    assert_eq!(tail.expect("rows").await, first);
    exec(&c, "INSERT INTO s VALUES ('2024-01-01 00:00:25','b',7)").await;
    let second = json!([["a\"b", 1, 4, "2024-01-01 00:00:20"]]);
    assert_eq!(live.expect("rows").await, second);
    assert_eq!(tail.expect("rows").await, second);
    exec(&c, "DROP STREAM s").await;
    assert_eq!(tail.expect("complete").await, json!({"tag": "SELECT 5"}));
    let messages = reading.await.unwrap().unwrap();
    let got: Vec<Option<String>> = messages
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
            _ => None,
        })
        .collect();
    let key = |k: &str| Some(k.to_string());
    assert_eq!(got, [key("a\"b"), key("x,y"), None, key("ü"), key("a\"b")]);
}

/// Console polish (issue 29), over HTTP: `/favicon.ico` is served (Chromium asked for it
/// on every page and logged a 404); the Streams page's JSON has an archived stream's disk
/// size and retention, and `/api/tables` lists the stored tables; an error in the SQL box
/// carries the HINT, DETAIL and position psql shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn favicon_tables_disk_size_retention_and_error_hints() {
    let dir = common::data_dir();
    let ports = common::start_with_console_on(HttpOptions::default(), Some(dir.path()));
    let icon = get(ports.http, "/favicon.ico").await;
    assert_eq!(
        (icon.status, icon.headers["content-type"].as_str()),
        (200, "image/svg+xml")
    );
    assert!(icon.body.starts_with("<svg"), "{}", icon.body);
    let page = get(ports.http, "/").await;
    assert!(page
        .body
        .contains(r#"<link rel="icon" href="/assets/favicon.svg""#));
    assert_eq!(get(ports.http, "/assets/favicon.svg").await.body, icon.body);

    let c = connect(ports.pg, "setup").await;
    exec(
        &c,
        "CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, v integer) TYPE ARCHIVED WITH (retention = '30 days'); \
         CREATE STREAM u (ts timestamp TIMESTAMPCOLUMN, v integer); \
         INSERT INTO a VALUES ('2024-01-01 00:00:01', 1), ('2024-01-01 00:00:02', 2); \
         CREATE TABLE airports (code text PRIMARY KEY, hubs integer DEFAULT 0); \
         INSERT INTO airports VALUES ('SFO'), ('OAK', 2)",
    )
    .await;
    let streams = get(ports.http, "/api/streams").await.json();
    let disk = rows(&c, "SELECT disk_bytes FROM tcq_streams WHERE name = 'a'").await;
    assert!(disk[0][0].parse::<i64>().unwrap() > 0, "{disk:?}");
    let of = |name: &str| {
        streams
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(of("a")["disk_bytes"].to_string(), disk[0][0]);
    assert_eq!(of("a")["retention"], json!("30 days"));
    assert_eq!(
        (of("u")["disk_bytes"].clone(), of("u")["retention"].clone()),
        (Value::Null, Value::Null)
    );
    assert_eq!(
        get(ports.http, "/api/tables").await.json(),
        json!([{
            "name": "airports",
            "columns": [{"name": "code", "type": "text"}, {"name": "hubs", "type": "integer"}],
            "primary_key": ["code"],
            "rows": 2
        }])
    );

    let sql = "SELECT count(*) FROM a [RANG BY '1 hour']";
    let path = format!(
        "/api/sql/stream?sql={}",
        sql.replace(' ', "%20")
            .replace('\'', "%27")
            .replace('[', "%5B")
            .replace(']', "%5D")
            .replace('*', "%2A")
            .replace('(', "%28")
            .replace(')', "%29")
    );
    let mut events = Events::open(ports.http, &path).await;
    events.expect("session").await;
    let error = events.expect("error").await;
    assert_eq!(
        error,
        json!({
            "message": "syntax error at or near \"RANG\"",
            "sqlstate": "42601",
            "detail": null,
            "hint": "A window clause is [RANGE BY 'interval' [SLIDE BY 'interval'] [START AT 'timestamp'] [SLACK 'interval']], after a stream in FROM.",
            "position": 25
        })
    );
    let finite = post(ports.http, "/api/sql", &json!({ "sql": sql }).to_string()).await;
    assert_eq!(finite.status, 400);
    assert_eq!(finite.json()["error"], error);
}
