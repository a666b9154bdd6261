//! The web console in a real browser: headless Chromium, driven by Playwright for Python
//! (tests/browser/console_check.py), loads every page against a server fed with the
//! flights sample (data/flights-2001-01.csv.gz) while ingest goes on, and checks the plan
//! graph, the live tail and the SQL box render. Screenshots go to
//! target/console-screenshots/.
//!
//! Skipped, with a message (see `common::skip`), when Chromium (`apt-get install chromium`)
//! or Playwright for Python (`pip install playwright`) is missing; scripts/test.sh installs
//! both.

use crate::common;

use std::io::BufRead;
use std::time::Duration;

use common::{exec, start_with_console, wait_for_queries};
use tcq::http::HttpOptions;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The demo's aggregate over three correlated windows, whose plan (chosen by cost from the
/// data) the console draws.
const QUERY: &str =
    "SELECT origin, wrange(*), count(*), avg(delay), max(delay), wtime(*) FROM flights \
    [RANGE BY '20 minutes' START AT '2001-01-01'] [RANGE BY '30 minutes' START AT '2001-01-01'] \
    [RANGE BY '40 minutes' START AT '2001-01-01'] GROUP BY origin";

/// The first `n` flights of the sample, as INSERT value lists.
fn flights(n: usize) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/flights-2001-01.csv.gz");
    let file = std::fs::File::open(path).expect("the flights sample");
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(file));
    reader
        .lines()
        .skip(1)
        .take(n)
        .map(|l| {
            let l = l.unwrap();
            let f: Vec<&str> = l.split(',').collect();
            format!("('{}',{},{},'{}','{}')", f[0], f[1], f[2], f[3], f[4])
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_renders_every_page_in_headless_chromium() {
    if !std::path::Path::new(CHROMIUM).exists() {
        common::skip(&format!(
            "{CHROMIUM} is not installed (apt-get install chromium); the console was not checked in a browser"
        ));
        return;
    }
    if !common::python_modules(&["playwright"], "playwright") {
        return;
    }
    let ports = start_with_console(HttpOptions::default());
    let c = common::connect(ports.pg).await;
    exec(&c, "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, distance integer, origin text, destination text)").await;
    exec(
        &c,
        "CREATE TABLE airports (code text PRIMARY KEY, hubs integer DEFAULT 0); \
         INSERT INTO airports VALUES ('OAK', 2), ('SFO')",
    )
    .await;
    // A key a window, an hour apart: its hourly chart has groups of a single point
    // however late the browser looks (the flights' groups gain points as windows close).
    exec(
        &c,
        "CREATE STREAM solo (ts timestamp TIMESTAMPCOLUMN, k text)",
    )
    .await;
    let conn = format!(
        "host=127.0.0.1 port={} user=tcq dbname=tcq application_name=console-browser-reader",
        ports.pg
    );
    let (reader, connection) = tokio_postgres::connect(&conn, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let reading = tokio::spawn(async move { reader.simple_query(QUERY).await });
    wait_for_queries(&c, 1).await;

    // A day of flights at once, then the next ones 300 at a time while the browser looks,
    // so windows keep closing.
    let rows = flights(120_000);
    let (first, rest) = rows.split_at(15_000);
    for chunk in first.chunks(3_000) {
        exec(
            &c,
            &format!("INSERT INTO flights VALUES {}", chunk.join(",")),
        )
        .await;
    }
    let rest = rest.to_vec();
    let feeding = tokio::spawn(async move {
        for (i, chunk) in rest.chunks(300).enumerate() {
            exec(
                &c,
                &format!("INSERT INTO flights VALUES {}", chunk.join(",")),
            )
            .await;
            let (day, hour) = (1 + i / 24, i % 24);
            exec(
                &c,
                &format!("INSERT INTO solo VALUES ('2001-01-{day:02} {hour:02}:30', 'k{i}')"),
            )
            .await;
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        c
    });

    let out = concat!(env!("CARGO_MANIFEST_DIR"), "/target/console-screenshots");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/browser/console_check.py"
    );
    let url = format!("http://127.0.0.1:{}/", ports.http);
    // Blocking, on a thread of its own: the ingest task keeps running meanwhile. Playwright's
    // own timeouts bound every wait in the script.
    let result = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args([script, &url, out])
            .output()
    })
    .await
    .unwrap()
    .expect("run python3");
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    println!("{stdout}");
    assert!(
        result.status.success(),
        "the browser check failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("ok: plan: edges with multipliers"),
        "{stdout}"
    );
    assert!(stdout.contains("ok: tail: rows rendered"), "{stdout}");

    let c = feeding.await.unwrap();
    exec(&c, "DROP STREAM flights").await;
    let rows = reading
        .await
        .unwrap()
        .expect("the query ends when its stream is dropped");
    assert!(rows.len() > 1000, "{} messages", rows.len());
}
