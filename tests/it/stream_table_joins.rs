//! Stream-table joins over the wire: each slide event joins the stream's current window to
//! the table as it is at that event, so table changes between events show in the next
//! event's rows and never in an earlier one's. Values worked out by hand.

use crate::common;

use common::{connect, exec, rows, sqlstate, start_server, table, wait_for_queries};
use tokio_postgres::Client;

const SETUP: &str = "CREATE TABLE airports (code text PRIMARY KEY, city text, state text); \
     INSERT INTO airports VALUES ('SFO', 'San Francisco', 'CA'), ('LAX', 'Los Angeles', 'CA'), \
     ('ORD', 'Chicago', 'IL'); \
     CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, origin text, delay integer)";

const WINDOW: &str = "[RANGE BY '1 minute' START AT '2001-01-01 00:00:00']";

fn flight(at: &str, origin: &str, delay: i32) -> String {
    format!("INSERT INTO flights VALUES ('2001-01-01 00:{at}', '{origin}', {delay})")
}

async fn setup() -> Client {
    let c = connect(start_server()).await;
    exec(&c, SETUP).await;
    c
}

#[tokio::test]
async fn each_slide_event_reads_the_table_as_it_is_then() {
    let c = setup().await;
    exec(
        &c,
        &format!(
            "BEGIN; DECLARE c CURSOR FOR SELECT a.state, count(*), wtime(*) \
             FROM flights f {WINDOW} JOIN airports a ON f.origin = a.code \
             GROUP BY a.state ORDER BY a.state"
        ),
    )
    .await;
    for f in [
        flight("00:10", "SFO", 1),
        flight("00:20", "ORD", 2),
        flight("00:30", "JFK", 3),
        flight("00:40", "LAX", 4),
    ] {
        exec(&c, &f).await;
    }
    // Changes before the event at 00:01:00: they show in its rows.
    exec(&c, "UPDATE airports SET state = 'XX' WHERE code = 'ORD'").await;
    exec(&c, "INSERT INTO airports VALUES ('JFK', 'New York', 'NY')").await;
    exec(&c, &flight("01:10", "SFO", 5)).await;
    exec(&c, &flight("01:20", "JFK", 6)).await;
    // The event at 00:01:00 happened with the insert above; SFO goes before 00:02:00.
    exec(&c, "DELETE FROM airports WHERE code = 'SFO'").await;
    exec(&c, &flight("02:05", "LAX", 7)).await;
    exec(&c, "SELECT tcq_advance('flights', '2001-01-01 00:03:00')").await;
    let got = rows(&c, "FETCH 5 FROM c").await;
    exec(&c, "CLOSE c; COMMIT").await;
    assert_eq!(
        got,
        table(&[
            &["CA", "2", "2001-01-01 00:01:00"],
            &["NY", "1", "2001-01-01 00:01:00"],
            &["XX", "1", "2001-01-01 00:01:00"],
            // SFO at 01:10 no longer joins: its airport was deleted before this event.
            &["NY", "1", "2001-01-01 00:02:00"],
            &["CA", "1", "2001-01-01 00:03:00"],
        ])
    );
}

#[tokio::test]
async fn a_left_join_read_by_copy_keeps_unmatched_tuples_with_nulls() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, SETUP).await;
    let reader = connect(port).await;
    let copy = tokio::spawn(async move {
        use futures::TryStreamExt;
        let sql = format!(
            "COPY (SELECT f.origin, a.city, wtime(*) FROM flights f {WINDOW} \
             LEFT JOIN airports a ON f.origin = a.code ORDER BY f.origin LIMIT 4) TO STDOUT"
        );
        let stream = reader.copy_out(sql.as_str()).await.unwrap();
        let chunks: Vec<bytes::Bytes> = stream.try_collect().await.unwrap();
        String::from_utf8(chunks.concat()).unwrap()
    });
    wait_for_queries(&c, 1).await;
    exec(&c, &flight("00:10", "SFO", 1)).await;
    exec(&c, &flight("00:20", "BOS", 2)).await;
    exec(&c, "INSERT INTO airports VALUES ('BOS', 'Boston', 'MA')").await;
    exec(&c, &flight("01:10", "LAX", 3)).await;
    exec(&c, &flight("01:30", "ZZZ", 4)).await;
    exec(&c, "UPDATE airports SET city = 'LA' WHERE code = 'LAX'").await;
    exec(&c, &flight("02:10", "SFO", 5)).await;
    let out = tokio::time::timeout(std::time::Duration::from_secs(20), copy)
        .await
        .expect("COPY ends at its LIMIT")
        .unwrap();
    assert_eq!(
        out,
        "BOS\tBoston\t2001-01-01 00:01:00\n\
         SFO\tSan Francisco\t2001-01-01 00:01:00\n\
         LAX\tLA\t2001-01-01 00:02:00\n\
         ZZZ\t\\N\t2001-01-01 00:02:00\n"
    );
}

#[tokio::test]
async fn tables_without_keys_join_by_hash_or_scan_and_empty_events_still_count() {
    let c = setup().await;
    exec(
        &c,
        "CREATE TABLE routes (origin text, carrier text); \
         INSERT INTO routes VALUES ('SFO', 'UA'), ('SFO', 'AA'), ('LAX', 'DL'); \
         CREATE TABLE bands (lo integer, hi integer, label text); \
         INSERT INTO bands VALUES (0, 5, 'short'), (5, 100, 'long')",
    )
    .await;
    exec(
        &c,
        &format!(
            "BEGIN; \
             DECLARE r CURSOR FOR SELECT count(*), sum(f.delay), wtime(*) FROM flights f {WINDOW} \
             JOIN routes USING (origin); \
             DECLARE b CURSOR FOR SELECT b.label, count(*) FROM flights f {WINDOW} \
             JOIN bands b ON f.delay >= b.lo AND f.delay < b.hi GROUP BY b.label ORDER BY 1"
        ),
    )
    .await;
    exec(&c, &flight("00:10", "SFO", 1)).await;
    exec(&c, &flight("00:20", "LAX", 7)).await;
    exec(&c, &flight("00:30", "ORD", 9)).await;
    exec(&c, "DELETE FROM routes WHERE carrier = 'AA'").await;
    exec(&c, "SELECT tcq_advance('flights', '2001-01-01 00:03:00')").await;
    assert_eq!(
        rows(&c, "FETCH 3 FROM r").await,
        table(&[
            // SFO matches UA only (AA went before the event), LAX matches DL.
            &["2", "8", "2001-01-01 00:01:00"],
            // Windows with no flights still give their one row.
            &["0", "NULL", "2001-01-01 00:02:00"],
            &["0", "NULL", "2001-01-01 00:03:00"],
        ])
    );
    assert_eq!(
        rows(&c, "FETCH 2 FROM b").await,
        table(&[&["long", "2"], &["short", "1"]])
    );
    exec(&c, "CLOSE ALL; COMMIT").await;
}

#[tokio::test]
async fn dropping_a_table_ends_the_joins_that_read_it() {
    let c = setup().await;
    exec(
        &c,
        &format!(
            "BEGIN; DECLARE c CURSOR FOR SELECT count(*) FROM flights f {WINDOW} \
             JOIN airports a ON f.origin = a.code"
        ),
    )
    .await;
    exec(&c, &flight("00:10", "SFO", 1)).await;
    exec(&c, &flight("01:10", "SFO", 1)).await;
    // Dropped and created again with other columns: the query does not read the new one.
    exec(
        &c,
        "DROP TABLE airports; CREATE TABLE airports (code text PRIMARY KEY);          INSERT INTO airports VALUES ('SFO')",
    )
    .await;
    exec(&c, &flight("02:10", "SFO", 1)).await;
    assert_eq!(rows(&c, "FETCH 1 FROM c").await, table(&[&["1"]]));
    let e = c.simple_query("FETCH 1 FROM c").await.unwrap_err();
    assert_eq!(sqlstate(&e), "42P01");
}

#[tokio::test]
async fn explain_shows_how_each_table_is_joined_and_bad_joins_are_refused() {
    let c = setup().await;
    exec(&c, "CREATE TABLE routes (origin text, carrier text)").await;
    let plan: Vec<String> = rows(
        &c,
        &format!(
            "EXPLAIN SELECT count(*) FROM flights f {WINDOW} JOIN airports a ON a.code = f.origin \
             LEFT JOIN routes r ON r.origin = a.code"
        ),
    )
    .await
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    let text = plan.join("\n");
    assert!(
        text.contains("Table airports AS a: read as it is at each slide event; look-up by airports_pkey on (f.origin)"),
        "{text}"
    );
    assert!(
        text.contains("Table routes AS r (LEFT JOIN): read as it is at each slide event; hash join built per slide event on r.origin = a.code"),
        "{text}"
    );
    assert!(text.contains("Input 1: flights AS f"), "{text}");
    assert!(
        text.starts_with("Stream-table join of 1 stream input(s) and 2 table(s)"),
        "{text}"
    );
    let e = c
        .simple_query(&format!(
            "SELECT count(*) FROM flights f {WINDOW} LEFT JOIN airports a ON a.code = r.origin \
             JOIN routes r ON r.origin = f.origin"
        ))
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42P01", "{e}");
    for sql in [
        // A window clause on the table.
        format!("SELECT * FROM flights f {WINDOW} JOIN airports a [RANGE BY '1 minute'] ON true"),
        // A stream on the null-supplying side of an outer join.
        format!("SELECT * FROM airports a LEFT JOIN flights f {WINDOW} ON true"),
        format!("SELECT * FROM flights f {WINDOW} RIGHT JOIN airports a ON true"),
        // A stream under two windows inside a join.
        format!(
            "SELECT count(*) FROM flights f {WINDOW} [RANGE BY '2 minutes'] JOIN airports a ON true"
        ),
    ] {
        let e = c.simple_query(&sql).await.unwrap_err();
        assert_eq!(sqlstate(&e), "0A000", "{sql}: {e}");
    }
    // Tables alone are finite: the relational engine joins them (and the catalogs).
    exec(
        &c,
        "INSERT INTO routes VALUES ('SFO', 'UA'), ('SFO', 'AA'), ('JFK', 'B6')",
    )
    .await;
    let joined = rows(
        &c,
        "SELECT a.code, r.carrier FROM airports a JOIN routes r ON a.code = r.origin ORDER BY 2",
    )
    .await;
    assert_eq!(
        joined,
        vec![
            vec!["SFO".to_string(), "AA".to_string()],
            vec!["SFO".to_string(), "UA".to_string()]
        ]
    );
}

/// A stream's text column joined to tables' `character(n)` keys compares as PostgreSQL's
/// text = bpchar does: the key loses its trailing blanks and compares as text (so `'xy '`
/// meets no `xy` key, and `' '` meets the empty key only through a char column). A
/// char(3) key joined to a char(5) PRIMARY KEY compares as bpchar (trailing blanks never
/// count). Rows checked against PostgreSQL 15 with the window's tuples in a table.
#[tokio::test]
async fn character_keys_compare_without_their_padding_as_postgresql_does() {
    let c = connect(start_server()).await;
    exec(
        &c,
        "CREATE STREAM sa (ts timestamp TIMESTAMPCOLUMN, t text); \
         CREATE TABLE tk (c char(5) PRIMARY KEY, label text); \
         INSERT INTO tk VALUES ('a', 'pk-a'), ('xy ', 'pk-xy'), ('', 'pk-empty'); \
         CREATE TABLE t3 (c char(3), label text); \
         INSERT INTO t3 VALUES ('a', 'a'), ('xy', 'xy'), ('', ''), ('abc', 'abc')",
    )
    .await;
    let from = format!("sa {WINDOW}");
    exec(
        &c,
        &format!(
            "BEGIN; \
             DECLARE by_key CURSOR FOR SELECT sa.t, tk.label FROM {from} \
             JOIN tk ON sa.t = tk.c ORDER BY 1, 2; \
             DECLARE left_key CURSOR FOR SELECT sa.t, tk.label FROM {from} \
             LEFT JOIN tk ON sa.t = tk.c ORDER BY 1, 2; \
             DECLARE chained CURSOR FOR SELECT sa.t, t3.label, tk.label FROM {from} \
             JOIN t3 ON sa.t = t3.label JOIN tk ON t3.c = tk.c ORDER BY 1, 2, 3"
        ),
    )
    .await;
    exec(
        &c,
        "INSERT INTO sa VALUES ('2001-01-01 00:00:01', 'a'), ('2001-01-01 00:00:02', 'xy '), \
         ('2001-01-01 00:00:03', ''), ('2001-01-01 00:00:04', 'abc'), ('2001-01-01 00:00:05', ' ')",
    )
    .await;
    exec(&c, "SELECT tcq_advance('sa', '2001-01-01 00:01:00')").await;
    assert_eq!(
        rows(&c, "FETCH 2 FROM by_key").await,
        table(&[&["", "pk-empty"], &["a", "pk-a"]])
    );
    assert_eq!(
        rows(&c, "FETCH 5 FROM left_key").await,
        table(&[
            &["", "pk-empty"],
            &[" ", "NULL"],
            &["a", "pk-a"],
            &["abc", "NULL"],
            &["xy ", "NULL"],
        ])
    );
    assert_eq!(
        rows(&c, "FETCH 2 FROM chained").await,
        table(&[&["", "", "pk-empty"], &["a", "a", "pk-a"]])
    );
    exec(&c, "CLOSE by_key; CLOSE left_key; CLOSE chained; COMMIT").await;
}
