//! Every command the README and `docs/*.md` show, accounted for. Each fenced `sql` or `sh`
//! block is either run here through the real psql, as a reader would paste it (only the
//! port changed), or run by the test named in [`ELSEWHERE`], or is a synopsis (grammar with
//! `[ ... ]` and `|`, placeholders) listed in [`SYNOPSES`] with why it cannot run as is.
//! `every_block_is_run_or_listed` fails on a block that is none of these, so a new example
//! in the docs needs a test before it lands.
//!
//! Continuous SELECTs in SQL examples are run as `EXPLAIN SELECT ...`: planned exactly as
//! registered, without waiting for windows that would never close.

use crate::common::{self, psql};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One fenced block: its page (relative to the root), language and text.
struct Block {
    page: String,
    lang: String,
    text: String,
}

/// Every `sql` and `sh` block of README.md and `docs/*.md`.
fn blocks() -> Vec<Block> {
    let mut pages = vec!["README.md".to_string()];
    for e in std::fs::read_dir(root().join("docs")).expect("docs/ is readable") {
        let name = e.expect("docs/ entry").file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    let mut out = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(root().join(&page)).expect("a readable page");
        let mut open: Option<(String, Vec<&str>)> = None;
        for line in text.lines() {
            match (open.take(), line.trim_start().strip_prefix("```")) {
                (None, Some(lang)) => open = Some((lang.trim().to_string(), Vec::new())),
                (Some((lang, body)), Some(_)) => {
                    if lang == "sql" || lang == "sh" {
                        let (page, text) = (page.clone(), body.join("\n"));
                        out.push(Block { page, lang, text });
                    }
                }
                (Some((lang, mut body)), None) => {
                    body.push(line);
                    open = Some((lang, body));
                }
                (None, None) => {}
            }
        }
    }
    out
}

/// Blocks run here: page, a needle the block holds, and the test of this file that runs it.
const HERE: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "-c \"CREATE STREAM flights",
        "the_readme_walk_through",
    ),
    (
        "README.md",
        "COPY (SELECT origin, count(*)",
        "the_readme_walk_through",
    ),
    (
        "README.md",
        "gunzip -c data/flights-2001-01.csv.gz",
        "the_readme_walk_through",
    ),
    ("README.md", "wtime(*)\nFROM flights", "the_sql_examples"),
    ("docs/sql.md", "CREATE TABLE airports", "the_sql_examples"),
    ("docs/sql.md", "AS hub", "the_sql_examples"),
    ("docs/sql.md", "LEFT JOIN airports", "the_sql_examples"),
    (
        "docs/sql.md",
        "SELECT wrange(*), wstart(*)",
        "the_sql_examples",
    ),
    (
        "docs/sharing.md",
        "[RANGE BY '20 minutes'] [RANGE BY '30 minutes']",
        "the_sharing_examples",
    ),
    ("docs/sharing.md", "FROM tcq_plans", "the_sharing_examples"),
    (
        "docs/durability.md",
        "ALTER STREAM flights SET",
        "the_retention_example",
    ),
];

/// Blocks another test runs as written: page, needle, the test's file and function.
const ELSEWHERE: &[(&str, &str, &str, &str)] = &[
    (
        "README.md",
        "cargo run --release -- demo",
        "tests/it/console.rs",
        "demo_serve_prints_the_console_address",
    ),
    (
        "README.md",
        "cargo run --release\n",
        "tests/it/console.rs",
        "tcqd_serves_the_console_and_metrics_and_shuts_down_with_a_stream_open",
    ),
    (
        "README.md",
        "connector = 'kafka'",
        "tests/it/sources_kafka.rs",
        "the_demo_reads_a_kafka_topic",
    ),
    (
        "docs/connectors.md",
        "topic = 'flights'",
        "tests/it/sources_docs.rs",
        "the_kafka_example",
    ),
    (
        "docs/connectors.md",
        "group_id = 'tcq-departures'",
        "tests/it/sources_kafka_group.rs",
        "the_consumer_group_example",
    ),
    (
        "docs/connectors.md",
        "connector = 'mqtt'",
        "tests/it/sources_docs.rs",
        "the_mqtt_example",
    ),
    (
        "docs/connectors.md",
        "connector = 'nats'",
        "tests/it/sources_docs.rs",
        "the_nats_example",
    ),
    (
        "docs/connectors.md",
        "connector = 'file', path = '/var/spool",
        "tests/it/sources_docs.rs",
        "the_file_example",
    ),
    (
        "docs/connectors.md",
        "curl -sS",
        "tests/it/sources_docs.rs",
        "the_curl_example",
    ),
    (
        "docs/connectors.md",
        "CREATE STREAM hourly",
        "tests/it/sinks_docs.rs",
        "the_derived_stream_example",
    ),
    (
        "docs/connectors.md",
        "CREATE SINK late",
        "tests/it/sinks_docs.rs",
        "the_sink_example",
    ),
    (
        "docs/durability.md",
        "-- DuckDB",
        "tests/it/archive.rs",
        "sealed_segments_read_back_in_duckdb",
    ),
    (
        "docs/clients.md",
        "TcqJdbc",
        "tests/it/clients_java.rs",
        "pgjdbc_ingests_and_streams_by_every_api",
    ),
    (
        "docs/flink.md",
        "QUERIES ALL",
        "tests/it/flink_export.rs",
        "explain_format_flink_returns_the_job_as_query_plan_rows",
    ),
    (
        "docs/flink.md",
        "tcqd flink export",
        "tests/it/flink_export.rs",
        "tcqd_flink_export_reads_a_file_of_streams_and_queries",
    ),
    (
        "docs/flink.md",
        "flink_cluster.sh start",
        "tests/it/flink_export.rs",
        "a_flink_cluster_computes_tcqs_rows_from_the_exported_job",
    ),
    (
        "docs/flink.md",
        "--attach",
        "tests/it/flink_export.rs",
        "a_flink_cluster_computes_tcqs_rows_from_the_exported_job",
    ),
];

/// Synopses: page, needle, why the block is grammar rather than a command.
const SYNOPSES: &[(&str, &str, &str)] = &[
    (
        "docs/sql.md",
        "[TYPE UNARCHIVED]",
        "grammar: optional words in brackets",
    ),
    (
        "docs/sql.md",
        "CREATE SINK [IF NOT EXISTS]",
        "grammar: optional words and alternatives",
    ),
    (
        "docs/connectors.md",
        "connector = 'kafka' | 'mqtt' | 'nats' | 'file'",
        "grammar: column list and alternatives",
    ),
    (
        "docs/security.md",
        "CREATE ROLE alice LOGIN",
        "grammar: [IF EXISTS] and a verifier shown as '...'",
    ),
];

/// The entries among [`HERE`], [`ELSEWHERE`] and [`SYNOPSES`] that name `b`.
fn entries_for(b: &Block) -> Vec<String> {
    let names = |page: &str, needle: &str| b.page == page && b.text.contains(needle.trim_end());
    let here = HERE
        .iter()
        .filter(|e| names(e.0, e.1))
        .map(|e| format!("here: {}", e.2));
    let other = ELSEWHERE
        .iter()
        .filter(|e| names(e.0, e.1))
        .map(|e| e.3.to_string());
    let syn = SYNOPSES
        .iter()
        .filter(|e| names(e.0, e.1))
        .map(|e| format!("synopsis: {}", e.2));
    here.chain(other).chain(syn).collect()
}

#[test]
fn every_block_is_run_or_listed() {
    let blocks = blocks();
    assert!(blocks.len() >= 25, "only {} blocks found", blocks.len());
    let unlisted: Vec<String> = blocks
        .iter()
        .filter(|b| entries_for(b).is_empty())
        .map(|b| format!("a {} block of {}:\n{}", b.lang, b.page, b.text))
        .collect();
    assert!(
        unlisted.is_empty(),
        "blocks run by no test and listed as no synopsis:\n{}",
        unlisted.join("\n\n")
    );
    // Every listed entry still names a block, and every test named elsewhere exists.
    let needles = HERE
        .iter()
        .map(|e| (e.0, e.1))
        .chain(ELSEWHERE.iter().map(|e| (e.0, e.1)));
    for (page, needle) in needles.chain(SYNOPSES.iter().map(|e| (e.0, e.1))) {
        let named = blocks
            .iter()
            .any(|b| b.page == page && b.text.contains(needle.trim_end()));
        assert!(
            named,
            "no block of {page} holds {needle:?}: update the lists"
        );
    }
    for (_, _, file, test) in ELSEWHERE {
        let text = std::fs::read_to_string(root().join(file)).expect("the named test file");
        assert!(
            text.contains(&format!("fn {test}(")),
            "{file} has no fn {test}"
        );
    }
}

/// The text of the one block of `page` holding `needle`.
fn block(page: &str, needle: &str) -> String {
    let found: Vec<Block> = blocks()
        .into_iter()
        .filter(|b| b.page == page && b.text.contains(needle))
        .collect();
    assert_eq!(found.len(), 1, "blocks of {page} holding {needle:?}");
    found.into_iter().next().unwrap().text
}

/// A shell running `script` with the docs' port 5433 replaced by `port`, from `dir`, with
/// the caller's PG* variables removed.
fn shell(script: &str, port: u16, dir: &Path) -> Command {
    let script = script.replace("-p 5433", &format!("-p {port}"));
    let mut c = Command::new("sh");
    c.args(["-c", &script]).current_dir(dir);
    for v in psql::PG_VARIABLES {
        c.env_remove(v);
    }
    c
}

/// Run `c` to its end within a minute; returns stdout and stderr, asserting success.
fn run(mut c: Command) -> String {
    let out = c.output().expect("run the command");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{c:?} failed:\n{text}");
    text
}

/// SQL with every top-level continuous `SELECT` statement (one reading a window clause)
/// turned into `EXPLAIN SELECT`.
fn explained(sql: &str) -> String {
    sql.split_inclusive(';')
        .map(|s| {
            let t = s.trim_start();
            if t.starts_with("SELECT") && t.contains("[RANGE BY") {
                format!("\nEXPLAIN {t}")
            } else {
                s.to_string()
            }
        })
        .collect()
}

/// Run `sql` through `psql -X -v ON_ERROR_STOP=1` against `port` from `dir`.
fn psql_script(sql: &str, port: u16, dir: &Path) -> String {
    let mut c = psql::command(port);
    c.args(["-X", "-v", "ON_ERROR_STOP=1", "-c", "\\set ECHO all"]);
    let file = dir.join("script.sql");
    std::fs::write(&file, sql).expect("write the script");
    c.args(["-f", file.to_str().unwrap()]).current_dir(dir);
    run(c)
}

/// Wait until `child` ends, at most `limit`; past that kill it and return `None`.
fn wait(mut child: Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("poll") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().ok();
    child.wait().ok();
    None
}

/// The README's walk-through: terminal 1 declares the stream and registers the query,
/// terminal 2 feeds the month of flights, and terminal 1 prints every busy airport's
/// windows: the count the README gives, each row with its five columns. DROP STREAM (not
/// in the README, where Ctrl-C ends it) ends the query here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_walk_through() {
    if !common::psql_installed() {
        return;
    }
    let port = common::start_server();
    let dir = root();
    let create = block("README.md", "-c \"CREATE STREAM flights");
    run(shell(&create, port, &dir));
    let query = block("README.md", "COPY (SELECT origin, count(*)");
    let printed = tempfile::NamedTempFile::new().unwrap();
    let terminal1 = shell(&query, port, &dir)
        .stdout(printed.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the query's psql");
    let admin = common::connect(port).await;
    common::wait_for_queries(&admin, 1).await;
    run(shell(&block("README.md", "gunzip -c"), port, &dir));
    // The last row of January's last closed window is out before the COPY reports its end.
    common::exec(&admin, "DROP STREAM flights CASCADE").await;
    let status = wait(terminal1, Duration::from_secs(60));
    assert!(status.is_some(), "DROP STREAM ends the query's COPY");
    let out = std::fs::read_to_string(printed.path()).unwrap();
    let rows: Vec<&str> = out.lines().collect();
    assert!(
        (7_300..=7_500).contains(&rows.len()),
        "the README says about 7,400 rows; psql printed {}",
        rows.len()
    );
    assert!(
        rows.iter().all(|r| r.split('\t').count() == 5),
        "{:?}",
        &rows[..3]
    );
    assert!(rows
        .iter()
        .all(|r| r.split('\t').nth(1).unwrap().parse::<i64>().unwrap() > 40));
}

/// A fresh server with the README's flights stream declared by its own psql command, and
/// a working directory; `None` (the test skipped) without psql.
fn server_with_flights() -> Option<(u16, tempfile::TempDir)> {
    if !common::psql_installed() {
        return None;
    }
    let port = common::start_server();
    let dir = tempfile::tempdir().unwrap();
    let create = block("README.md", "-c \"CREATE STREAM flights");
    run(shell(&create, port, dir.path()));
    Some((port, dir))
}

/// docs/sql.md's stored-table block as written (with an `airports.csv` beside it, as its
/// `\copy` expects), the command tags its comments give, and its continuous queries
/// (joins of the flights stream, with a table too) planned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sql_examples() {
    let Some((port, dir)) = server_with_flights() else {
        return;
    };
    std::fs::write(
        dir.path().join("airports.csv"),
        "JFK,New York,NY,0\nORD,Chicago,IL,0\n",
    )
    .unwrap();
    let tables = block("docs/sql.md", "CREATE TABLE airports");
    let out = psql_script(&tables, port, dir.path());
    for tag in ["INSERT 0 0", "UPDATE 2", "DELETE 1", "COPY 2"] {
        assert!(out.contains(&format!("\n{tag}\n")), "no {tag} in:\n{out}");
    }
    assert!(
        out.contains("code,city,state,hubs\nSFO,San Francisco,CA,1\n"),
        "{out}"
    );
    let mut joins = String::from(
        "CREATE TABLE airports (code text, city text, state text);\n\
         CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, k int);\n\
         CREATE STREAM b (ts timestamp TIMESTAMPCOLUMN, k int);\n",
    );
    for needle in [
        "AS hub",
        "LEFT JOIN airports",
        "SELECT wrange(*), wstart(*)",
    ] {
        joins += &explained(&block("docs/sql.md", needle));
    }
    joins += &explained(&block("README.md", "wtime(*)\nFROM flights"));
    let out = psql_script(&joins, port, dir.path());
    assert_eq!(out.matches("QUERY PLAN").count(), 5, "{out}");
}

/// docs/sharing.md: the paper's three tumbling windows cost what the page says, and the
/// second query joins client A's shared plan with the model costs the page shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sharing_examples() {
    let Some((port, dir)) = server_with_flights() else {
        return;
    };
    let out = psql_script(
        &block("docs/sharing.md", "[RANGE BY '20 minutes'] [RANGE BY"),
        port,
        dir.path(),
    );
    assert!(
        out.contains("Total: 150 events per R, 75 per hour; unshared: 360 events per R"),
        "{out}"
    );
    assert!(out.contains("saving 58.3%"), "{out}");
    let page = block("docs/sharing.md", "FROM tcq_plans");
    let a = client_a_query(&page);
    let (reader, _connection) = common::connect_with_handle(port).await;
    let _client_a = tokio::spawn(async move { reader.simple_query(&a).await });
    let admin = common::connect(port).await;
    common::wait_for_queries(&admin, 1).await;
    let out = psql_script(&explained(&page), port, dir.path());
    assert!(
        out.contains("joins shared plan 1 on flights (1 queries, 2 nodes now)"),
        "{out}"
    );
    let cost = "84 events per hour shared, 150 each alone (1.8x)";
    assert!(out.contains(cost), "{out}");
    assert!(
        out.contains("(2 rows)"),
        "tcq_plans shows the plan's two nodes:\n{out}"
    );
}

/// The query a `-- client A runs: SELECT ...` comment gives, over its comment lines up to
/// the first line that is no longer indented query text.
fn client_a_query(block: &str) -> String {
    let mut lines = block.lines();
    let first = lines.next().unwrap();
    let mut query = first
        .split("client A runs:")
        .nth(1)
        .expect("client A's query")
        .to_string();
    for l in lines.by_ref() {
        match l.strip_prefix("--   ") {
            Some(more) => query = format!("{query} {more}"),
            None => break,
        }
    }
    query.trim().to_string()
}

/// docs/durability.md's archived stream with a retention, changed as the page shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retention_example() {
    if !common::psql_installed() {
        return;
    }
    let data = common::data_dir();
    let port = common::start_server_on(tcq::engine::Config::default(), data.path());
    let out = psql_script(
        &block("docs/durability.md", "ALTER STREAM flights SET"),
        port,
        data.path(),
    );
    assert!(out.contains("ALTER STREAM"), "{out}");
    let c = common::connect(port).await;
    let r = common::rows(&c, "SELECT ftoptions::text FROM pg_foreign_table").await;
    assert!(r[0][0].contains("retention=7 days"), "{r:?}");
}
