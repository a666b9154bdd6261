//! Helpers for the source tests (`sources_*.rs`): waiting on `tcq_sources`, reading a
//! stream's archive back.

use std::time::{Duration, Instant};

use tokio_postgres::Client;

/// One stream's row of `tcq_sources`: (state, messages, tuples, bad_messages, last_error,
/// lag).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceRow {
    pub state: String,
    pub messages: i64,
    pub tuples: i64,
    pub bad_messages: i64,
    pub last_error: Option<String>,
    pub lag: Option<i64>,
    pub options: String,
}

/// `stream`'s row of `tcq_sources` now. Read with the simple protocol: a Parse is charged
/// against the memory budget (and refused with 53200 past it), which the tests of a
/// throttled source fill on purpose.
pub async fn source_row(c: &Client, stream: &str) -> Option<SourceRow> {
    let sql = format!(
        "SELECT state, messages, tuples, bad_messages, last_error, lag, options \
         FROM tcq_sources WHERE stream = '{}'",
        stream.replace('\'', "''")
    );
    let rows = c.simple_query(&sql).await.expect("tcq_sources");
    rows.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(r) => {
            let int = |i: usize| r.get(i).map(|v| v.parse::<i64>().expect("an integer"));
            Some(SourceRow {
                state: r.get(0).expect("state").to_string(),
                messages: int(1).expect("messages"),
                tuples: int(2).expect("tuples"),
                bad_messages: int(3).expect("bad_messages"),
                last_error: r.get(4).map(str::to_string),
                lag: int(5),
                options: r.get(6).expect("options").to_string(),
            })
        }
        _ => None,
    })
}

/// Poll `stream`'s source until `done` holds (at most `secs` seconds); returns the row.
pub async fn wait_source(
    c: &Client,
    stream: &str,
    secs: u64,
    done: impl Fn(&SourceRow) -> bool,
) -> SourceRow {
    let start = Instant::now();
    loop {
        let row = source_row(c, stream).await;
        if let Some(r) = &row {
            if done(r) {
                return r.clone();
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "source of {stream} not there after {secs} s: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `FETCH n FROM cursor` within `secs` seconds: its rows as text.
pub async fn fetch(c: &Client, cursor: &str, n: usize, secs: u64) -> Vec<Vec<String>> {
    super::rows_within(
        c,
        &format!("FETCH {n} FROM {cursor} WITH (timeout = '{secs}s')"),
        secs + 5,
    )
    .await
}

/// Open a cursor over the `id` column of a paused `stream`, resume the stream, and return
/// the first `n` ids it delivers within `secs` seconds (cursor `q`, in a transaction the
/// caller leaves open).
pub async fn resume_and_fetch_ids(c: &Client, stream: &str, n: usize, secs: u64) -> Vec<i64> {
    super::exec(
        c,
        &format!(
            "BEGIN; DECLARE q CURSOR FOR SELECT id FROM {stream}; ALTER STREAM {stream} RESUME"
        ),
    )
    .await;
    fetch(c, "q", n, secs)
        .await
        .iter()
        .map(|r| r[0].parse().expect("an integer id"))
        .collect()
}

/// Every value of every row `sql` returns, as text (`|` after each value, a line per row):
/// what a test searches for a secret that must not be shown.
pub async fn text_of(c: &Client, sql: &str) -> String {
    let mut out = String::new();
    for m in c.simple_query(sql).await.unwrap() {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            for i in 0..r.len() {
                out.push_str(r.get(i).unwrap_or("NULL"));
                out.push('|');
            }
            out.push('\n');
        }
    }
    out
}
