//! tcq against a real PostgreSQL 15, query by query: the same stored tables on both, the
//! same read queries (listed families over one table and over a join, and seeded-random
//! SELECT-WHERE-GROUP BY; see `pg_differential/queries.rs`), comparing the outcome (rows or
//! SQLSTATE), the rows (in order under ORDER BY, as a multiset otherwise) and the result
//! columns' type OIDs as each server describes the statement.
//!
//! A query that tcq refuses with 0A000 and a message the SQL reference lists as not
//! supported ([`DOCUMENTED_REFUSALS`]) is not a difference. Every other difference is one,
//! and must be listed in `pg_differential/known_differences.txt` (kind and query), the
//! differences not fixed yet: the test fails on a difference that is not listed and on a
//! listed one that is gone, so the list only shrinks. `TCQ_PG_DIFF_BLESS=1` rewrites it.
//!
//! ```text
//! cargo test --test it pg_differential::       # compare; prints the summary by kind
//! TCQ_PG_DIFF_BLESS=1 cargo test --test it pg_differential::
//! ```
//!
//! PostgreSQL runs as a throw-away cluster (`common/postgres.rs`); without PostgreSQL 15's
//! server programs (Debian's `postgresql` package, which `scripts/test.sh` installs) the test is
//! skipped with a message.

mod arrays;
mod corners;
mod queries;
mod wide;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use crate::common;

/// Substrings of the 0A000 messages for features the SQL reference (docs/sql.md) lists as
/// not supported; such a refusal is no difference.
const DOCUMENTED_REFUSALS: &[&str] = &[
    "numeric functions of values of more than 28 significant digits are not supported",
    "set-returning functions in the arguments of a set-returning function are not supported",
    "GROUPING SETS, ROLLUP, CUBE and GROUP BY () are not supported",
];

const STATEMENT_TIMEOUT: Duration = Duration::from_secs(20);

/// What a server did with one query.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// Rows as text (NULL as `None`), and the result columns' type OIDs.
    Rows {
        rows: Vec<Vec<Option<String>>>,
        types: Option<Vec<u32>>,
    },
    /// SQLSTATE and message.
    Error(String, String),
    /// No answer within the timeout, or the connection broke.
    Lost(String),
}

async fn connect(conn: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(conn, NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect to {conn}: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Run `sql` (simple protocol, text rows), then describe it for its column types.
async fn run(client: &Client, sql: &str) -> Outcome {
    let work = async {
        let messages = match client.simple_query(sql).await {
            Ok(m) => m,
            Err(e) => {
                return match e.as_db_error() {
                    Some(db) => Outcome::Error(db.code().code().into(), db.message().into()),
                    None => Outcome::Lost(e.to_string()),
                }
            }
        };
        let rows = messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => {
                    Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                }
                _ => None,
            })
            .collect();
        let types = client
            .prepare(sql)
            .await
            .ok()
            .map(|s| s.columns().iter().map(|c| c.type_().oid()).collect());
        Outcome::Rows { rows, types }
    };
    match tokio::time::timeout(STATEMENT_TIMEOUT, work).await {
        Ok(o) => o,
        Err(_) => Outcome::Lost(format!("no answer within {STATEMENT_TIMEOUT:?}")),
    }
}

fn ordered(sql: &str) -> bool {
    sql.to_ascii_uppercase().contains("ORDER BY")
}

/// The kind of difference between tcq's outcome and PostgreSQL's, `None` when they agree.
fn difference(sql: &str, tcq: &Outcome, pg: &Outcome) -> Option<&'static str> {
    match (tcq, pg) {
        (Outcome::Lost(_), _) => Some("tcq lost the statement"),
        (_, Outcome::Lost(_)) => Some("PostgreSQL lost the statement"),
        (Outcome::Error(a, _), Outcome::Error(b, _)) => (a != b).then_some("other SQLSTATE"),
        (Outcome::Error(code, msg), Outcome::Rows { .. }) => {
            if code == "0A000" && DOCUMENTED_REFUSALS.iter().any(|d| msg.contains(d)) {
                None
            } else if code == "0A000" {
                Some("refused (0A000) where PostgreSQL answers")
            } else {
                Some("tcq fails where PostgreSQL answers")
            }
        }
        (Outcome::Rows { .. }, Outcome::Error(..)) => Some("missing error"),
        (Outcome::Rows { rows: a, types: ta }, Outcome::Rows { rows: b, types: tb }) => {
            if ta.is_none() || ta != tb {
                return Some("column types");
            }
            let (mut a, mut b) = (a.clone(), b.clone());
            if !ordered(sql) {
                a.sort();
                b.sort();
            }
            (a != b).then_some("wrong rows")
        }
    }
}

fn show(o: &Outcome) -> String {
    match o {
        Outcome::Rows { rows, types } => {
            let shown: Vec<String> = rows
                .iter()
                .take(6)
                .map(|r| {
                    r.iter()
                        .map(|v| v.as_deref().unwrap_or("NULL"))
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect();
            format!("types {types:?} rows [{}]", shown.join("; "))
        }
        Outcome::Error(code, msg) => format!("ERROR {code}: {msg}"),
        Outcome::Lost(why) => format!("LOST: {why}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_queries_answer_as_postgresql_15_does() {
    let cluster = match common::postgres::Cluster::start() {
        Ok(c) => c,
        Err(reason) => {
            common::skip(&reason);
            return;
        }
    };
    let pg_conn = format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres",
        cluster.port
    );
    let tcq_port = common::start_server();
    let tcq_conn = common::conn_string(tcq_port);
    let (mut tcq, pg) = (connect(&tcq_conn).await, connect(&pg_conn).await);
    for c in [&tcq, &pg] {
        c.batch_execute("SET TimeZone = 'UTC'")
            .await
            .expect("set the time zone");
        for s in queries::SETUP.iter().chain(corners::SETUP) {
            c.simple_query(s)
                .await
                .unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }
    let mut all = queries::listed();
    wide::listed(&mut all);
    arrays::listed(&mut all);
    corners::listed(&mut all);
    all.extend(queries::random(30, 400));
    let mut found: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut report = String::new();
    let (mut equal, mut documented) = (0, 0);
    for sql in &all {
        let (t, p) = (run(&tcq, sql).await, run(&pg, sql).await);
        if matches!(t, Outcome::Lost(_)) {
            tcq = connect(&tcq_conn).await;
            tcq.batch_execute("SET TimeZone = 'UTC'")
                .await
                .expect("tcq answers again");
        }
        match difference(sql, &t, &p) {
            None if matches!(t, Outcome::Error(ref c, _) if c == "0A000")
                && matches!(p, Outcome::Rows { .. }) =>
            {
                documented += 1
            }
            None => equal += 1,
            Some(kind) => {
                writeln!(
                    report,
                    "{kind}: {sql}\n  tcq: {}\n  pg:  {}",
                    show(&t),
                    show(&p)
                )
                .unwrap();
                found.insert(sql.clone(), kind);
            }
        }
    }
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for kind in found.values() {
        *by_kind.entry(kind).or_default() += 1;
    }
    eprintln!(
        "{} queries: {equal} equal, {documented} refused with a documented 0A000, {} differ {by_kind:?}",
        all.len(),
        found.len()
    );
    let dir = common::golden::actual_dir("pg_differential");
    std::fs::write(dir.join("differences.txt"), &report).expect("write the report");
    check_known(&found, &dir);
}

/// Compare the differences found with the known ones (or rewrite the list when blessing).
fn check_known(found: &BTreeMap<String, &'static str>, dir: &Path) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/pg_differential/known_differences.txt");
    let listed: String = found.iter().map(|(q, k)| format!("{k}\t{q}\n")).collect();
    if std::env::var_os("TCQ_PG_DIFF_BLESS").is_some() {
        let header = "# Queries on which tcq still differs from PostgreSQL 15 (kind, tab, query), written\n\
                      # by TCQ_PG_DIFF_BLESS=1 cargo test --test it pg_differential:: ; see that test.\n";
        std::fs::write(&path, format!("{header}{listed}")).expect("write the known differences");
        return;
    }
    let known: BTreeMap<String, String> = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, q)| (q.to_string(), k.to_string()))
        .collect();
    let new: Vec<String> = found
        .iter()
        .filter(|(q, k)| known.get(*q).map(String::as_str) != Some(**k))
        .map(|(q, k)| format!("  {k}: {q}"))
        .collect();
    let gone: Vec<String> = known
        .iter()
        .filter(|(q, _)| !found.contains_key(*q))
        .map(|(q, k)| format!("  {k}: {q}"))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "differences from PostgreSQL not in {} ({}):\n{}\nlisted there but no longer found ({}):\n{}\n\
         (details of every difference in {}; TCQ_PG_DIFF_BLESS=1 rewrites the list)",
        path.display(),
        new.len(),
        new.join("\n"),
        gone.len(),
        gone.join("\n"),
        dir.join("differences.txt").display()
    );
}
