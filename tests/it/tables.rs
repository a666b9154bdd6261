//! Stored tables over the wire: DDL, DML and plain SELECT answered as PostgreSQL answers
//! them, constraint errors with their SQLSTATEs, COPY in and out, and the shared namespace
//! of streams and tables.

use crate::common;

use common::{connect, exec, rows, sqlstate, start_server, start_server_with, table};
use futures::SinkExt;
use tokio_postgres::Client;

const AIRPORTS: &str = "CREATE TABLE airports (code text PRIMARY KEY, city text NOT NULL, \
                        state varchar(2), hubs integer DEFAULT 0)";

async fn err(c: &Client, sql: &str) -> (String, String) {
    let e = c
        .batch_execute(sql)
        .await
        .expect_err(&format!("{sql} should fail"));
    let msg = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default();
    (sqlstate(&e), msg)
}

async fn filled() -> Client {
    let c = connect(start_server()).await;
    exec(&c, AIRPORTS).await;
    let n = c
        .execute(
            "INSERT INTO airports VALUES ('SFO', 'San Francisco', 'CA', 2), \
             ('LAX', 'Los Angeles', 'CA'), ('ORD', 'Chicago', 'IL', 1)",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 3);
    c
}

#[tokio::test]
async fn insert_fills_defaults_and_select_answers_as_postgresql() {
    let c = filled().await;
    // A named column list: the rest take DEFAULT (hubs) or NULL (state).
    exec(
        &c,
        "INSERT INTO airports (code, city) VALUES ('JFK', 'New York')",
    )
    .await;
    // Parameters, through the extended protocol.
    let n = c
        .execute(
            "INSERT INTO airports (code, city, state, hubs) VALUES ($1, $2, $3, $4)",
            &[&"DEN", &"Denver", &"CO", &4i32],
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(
        rows(&c, "SELECT * FROM airports ORDER BY code").await,
        table(&[
            &["DEN", "Denver", "CO", "4"],
            &["JFK", "New York", "NULL", "0"],
            &["LAX", "Los Angeles", "CA", "0"],
            &["ORD", "Chicago", "IL", "1"],
            &["SFO", "San Francisco", "CA", "2"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "SELECT state, count(*), sum(hubs) FROM airports WHERE code <> 'ORD' \
             GROUP BY state HAVING count(*) >= 1 ORDER BY count(*) DESC, state NULLS FIRST \
             LIMIT 2 OFFSET 1"
        )
        .await,
        table(&[&["NULL", "1", "0"], &["CO", "1", "4"]])
    );
    // An aggregate over no rows still gives its one row.
    assert_eq!(
        rows(
            &c,
            "SELECT count(*), max(hubs) FROM airports WHERE state = 'TX'"
        )
        .await,
        table(&[&["0", "NULL"]])
    );
    let r = c
        .query(
            "SELECT code, hubs FROM airports WHERE hubs > $1 ORDER BY hubs",
            &[&1i32],
        )
        .await
        .unwrap();
    let got: Vec<(String, i32)> = r.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![("SFO".into(), 2), ("DEN".into(), 4)]);
}

#[tokio::test]
async fn update_delete_truncate_report_their_counts_and_keep_keys() {
    let c = filled().await;
    assert_eq!(
        c.execute(
            "UPDATE airports SET hubs = hubs + 10 WHERE state = 'CA'",
            &[]
        )
        .await
        .unwrap(),
        2
    );
    assert_eq!(
        c.execute(
            "UPDATE airports SET city = upper(city) WHERE code = $1",
            &[&"ORD"]
        )
        .await
        .unwrap(),
        1
    );
    // Moving a row onto a held key refuses the whole UPDATE.
    let (state, msg) = err(&c, "UPDATE airports SET code = 'SFO' WHERE code = 'LAX'").await;
    assert_eq!(state, "23505");
    assert!(msg.contains("\"airports_pkey\""), "{msg}");
    assert_eq!(
        rows(&c, "SELECT code, city, hubs FROM airports ORDER BY code").await,
        table(&[
            &["LAX", "Los Angeles", "10"],
            &["ORD", "CHICAGO", "1"],
            &["SFO", "San Francisco", "12"],
        ])
    );
    assert_eq!(
        c.execute("DELETE FROM airports WHERE hubs > 5", &[])
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        c.execute("DELETE FROM airports WHERE false", &[])
            .await
            .unwrap(),
        0
    );
    // A deleted key may be inserted again.
    exec(
        &c,
        "INSERT INTO airports VALUES ('SFO', 'San Francisco', 'CA')",
    )
    .await;
    assert_eq!(
        rows(&c, "SELECT code FROM airports ORDER BY code").await,
        table(&[&["ORD"], &["SFO"]])
    );
    exec(&c, "TRUNCATE airports").await;
    assert_eq!(
        rows(&c, "SELECT count(*) FROM airports").await,
        table(&[&["0"]])
    );
}

#[tokio::test]
async fn constraint_and_name_errors_carry_postgresql_sqlstates() {
    let c = filled().await;
    let cases: &[(&str, &str)] = &[
        (
            "INSERT INTO airports VALUES ('SFO', 'Again', 'CA')",
            "23505",
        ),
        // All or nothing: the first row is new, the second clashes inside the statement.
        (
            "INSERT INTO airports VALUES ('BOS', 'Boston', 'MA'), ('BOS', 'B', 'MA')",
            "23505",
        ),
        ("INSERT INTO airports (code) VALUES ('ATL')", "23502"),
        ("INSERT INTO airports VALUES (NULL, 'Nowhere')", "23502"),
        ("UPDATE airports SET city = NULL", "23502"),
        (
            "INSERT INTO airports VALUES ('ATL', 'Atlanta', 'GA', 'many')",
            "22P02",
        ),
        (
            "INSERT INTO airports VALUES ('ATL', 'Atlanta', 'GAA')",
            "22001",
        ),
        ("SELECT nope FROM airports", "42703"),
        ("UPDATE airports SET nope = 1", "42703"),
        ("SELECT * FROM nowhere", "42P01"),
        ("DELETE FROM nowhere", "42P01"),
        ("DROP TABLE nowhere", "42P01"),
        (AIRPORTS, "42P07"),
        (
            "CREATE STREAM airports (ts timestamp TIMESTAMPCOLUMN)",
            "42P07",
        ),
        (
            "CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY)",
            "42P16",
        ),
        ("CREATE TABLE t (a int, a int)", "42701"),
        ("CREATE TABLE t (a timetz)", "0A000"),
        ("CREATE TABLE t (a char(0))", "22023"),
        (
            "SELECT count(*) FROM airports [RANGE BY '1 minute']",
            "0A000",
        ),
        (
            "INSERT INTO airports VALUES ('ATL', 'Atlanta') RETURNING nope",
            "42703",
        ),
    ];
    for (sql, want) in cases {
        let (got, msg) = err(&c, sql).await;
        assert_eq!(&got, want, "{sql}: {msg}");
    }
    // Nothing of a refused statement was kept.
    assert_eq!(
        rows(&c, "SELECT code, city FROM airports ORDER BY code").await,
        table(&[
            &["LAX", "Los Angeles"],
            &["ORD", "Chicago"],
            &["SFO", "San Francisco"]
        ])
    );
    let (_, msg) = err(&c, "SELECT count(*) FROM airports [RANGE BY '1 minute']").await;
    assert!(msg.contains("\"airports\" is a table"), "{msg}");
}

#[tokio::test]
async fn on_conflict_do_nothing_skips_held_keys() {
    let c = filled().await;
    let n = c
        .execute(
            "INSERT INTO airports VALUES ('SFO', 'Other', 'CA'), ('BOS', 'Boston', 'MA'), \
             ('BOS', 'Again', 'MA') ON CONFLICT DO NOTHING",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(
        rows(
            &c,
            "SELECT code, city FROM airports WHERE code IN ('SFO', 'BOS') ORDER BY code"
        )
        .await,
        table(&[&["BOS", "Boston"], &["SFO", "San Francisco"]])
    );
}

#[tokio::test]
async fn unique_keys_over_several_columns_let_nulls_repeat() {
    let c = connect(start_server()).await;
    exec(
        &c,
        "CREATE TABLE routes (origin text, dest text, carrier text, UNIQUE (origin, dest))",
    )
    .await;
    exec(
        &c,
        "INSERT INTO routes VALUES ('SFO', 'LAX', 'UA'), ('LAX', 'SFO', 'UA'), \
         ('SFO', NULL, 'AA'), ('SFO', NULL, 'DL')",
    )
    .await;
    let (state, msg) = err(&c, "INSERT INTO routes VALUES ('SFO', 'LAX', 'DL')").await;
    assert_eq!(state, "23505");
    assert!(msg.contains("routes_origin_dest_key"), "{msg}");
    assert_eq!(
        rows(&c, "SELECT count(*) FROM routes").await,
        table(&[&["4"]])
    );
}

#[tokio::test]
async fn copy_into_a_table_is_all_or_nothing_and_copy_out_reads_it() {
    let c = filled().await;
    let sink = c
        .copy_in("COPY airports (code, city, state) FROM STDIN WITH (FORMAT csv)")
        .await
        .unwrap();
    let mut sink = Box::pin(sink);
    // psql ends CSV data with a lone `\.` line, as PostgreSQL's COPY reads it.
    sink.send(bytes::Bytes::from_static(
        b"DEN,Denver,CO\nATL,\"Atlanta, GA\",GA\n\\.\n",
    ))
    .await
    .unwrap();
    assert_eq!(sink.as_mut().finish().await.unwrap(), 2);
    // A COPY whose row clashes with a held key adds nothing.
    let sink = c.copy_in("COPY airports FROM STDIN").await.unwrap();
    let mut sink = Box::pin(sink);
    sink.send(bytes::Bytes::from_static(
        b"BOS\tBoston\tMA\t1\nSFO\tAgain\tCA\t0\n",
    ))
    .await
    .unwrap();
    let e = sink.as_mut().finish().await.unwrap_err();
    assert_eq!(sqlstate(&e), "23505");
    assert_eq!(
        rows(&c, "SELECT count(*) FROM airports").await,
        table(&[&["5"]])
    );

    let out = copy_out(&c, "COPY airports TO STDOUT WITH (FORMAT csv, HEADER)").await;
    assert_eq!(
        out,
        "code,city,state,hubs\nSFO,San Francisco,CA,2\nLAX,Los Angeles,CA,0\n\
         ORD,Chicago,IL,1\nDEN,Denver,CO,0\nATL,\"Atlanta, GA\",GA,0\n"
    );
    let out = copy_out(
        &c,
        "COPY (SELECT state, count(*) FROM airports GROUP BY state ORDER BY state) TO STDOUT",
    )
    .await;
    assert_eq!(out, "CA\t2\nCO\t1\nGA\t1\nIL\t1\n");
    let out = copy_out(&c, "COPY airports (city) TO STDOUT").await;
    assert_eq!(out.lines().count(), 5);
}

async fn copy_out(c: &Client, sql: &str) -> String {
    use futures::TryStreamExt;
    let stream = c.copy_out(sql).await.unwrap();
    let chunks: Vec<bytes::Bytes> = stream.try_collect().await.unwrap();
    String::from_utf8(chunks.concat()).unwrap()
}

#[tokio::test]
async fn a_cursor_reads_a_table_and_a_stream_of_the_same_session_is_untouched() {
    let c = filled().await;
    exec(
        &c,
        "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, origin text)",
    )
    .await;
    exec(
        &c,
        "INSERT INTO flights VALUES ('2001-01-01 00:00:00', 'SFO')",
    )
    .await;
    let (state, _) = err(&c, "UPDATE flights SET origin = 'LAX'").await;
    assert_eq!(state, "0A000");
    let (state, _) = err(&c, "CREATE TABLE flights (a int)").await;
    assert_eq!(state, "42P07");
    exec(
        &c,
        "BEGIN; DECLARE c CURSOR FOR SELECT code FROM airports ORDER BY code",
    )
    .await;
    assert_eq!(
        rows(&c, "FETCH 2 FROM c").await,
        table(&[&["LAX"], &["ORD"]])
    );
    assert_eq!(rows(&c, "FETCH 5 FROM c").await, table(&[&["SFO"]]));
    exec(&c, "COMMIT").await;
    exec(&c, "DROP TABLE airports; DROP TABLE IF EXISTS airports").await;
    let (state, _) = err(&c, "SELECT * FROM airports").await;
    assert_eq!(state, "42P01");
}

#[tokio::test]
async fn a_table_holds_at_most_table_rows_max_rows() {
    let mut config = tcq::engine::Config::default();
    config.limits.table_rows_max = 3;
    let c = connect(start_server_with(config)).await;
    exec(&c, "CREATE TABLE t (a integer)").await;
    exec(&c, "INSERT INTO t VALUES (1), (2)").await;
    let (state, msg) = err(&c, "INSERT INTO t VALUES (3), (4)").await;
    assert_eq!(state, "54000");
    assert!(msg.contains("table_rows_max (3)"), "{msg}");
    exec(&c, "INSERT INTO t VALUES (3)").await;
    assert_eq!(rows(&c, "SELECT sum(a) FROM t").await, table(&[&["6"]]));
}

#[tokio::test]
async fn on_conflict_do_update_upserts_by_the_named_key() {
    let c = connect(start_server()).await;
    exec(
        &c,
        "CREATE TABLE counts (code text PRIMARY KEY, n integer NOT NULL, city text UNIQUE); \
         INSERT INTO counts VALUES ('x', 1, 'X'), ('y', 2, 'Y')",
    )
    .await;
    let n = c
        .execute(
            "INSERT INTO counts VALUES ('x', 10, 'X2'), ('z', 3, 'Z') ON CONFLICT (code) \
             DO UPDATE SET n = counts.n + excluded.n, city = EXCLUDED.city",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 2);
    // WHERE false leaves the held row alone, and counts nothing.
    let n = c
        .execute(
            "INSERT INTO counts VALUES ('y', 5, 'Q') ON CONFLICT (code) DO UPDATE \
             SET n = excluded.n WHERE counts.n > 100",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 0);
    let cases: &[(&str, &str)] = &[
        (
            "INSERT INTO counts VALUES ('x', 1, 'A'), ('x', 2, 'B') ON CONFLICT (code) DO UPDATE SET n = excluded.n",
            "21000",
        ),
        (
            "INSERT INTO counts VALUES ('y', 1, 'Z') ON CONFLICT (code) DO UPDATE SET city = excluded.city",
            "23505",
        ),
        (
            "INSERT INTO counts VALUES ('y', 1, 'W') ON CONFLICT (n) DO UPDATE SET city = 'W'",
            "42P10",
        ),
        (
            "INSERT INTO counts VALUES ('y', 1, 'W') ON CONFLICT DO UPDATE SET city = 'W'",
            "42601",
        ),
        (
            "INSERT INTO counts VALUES ('y', 1, 'W') ON CONFLICT (code) DO UPDATE SET n = NULL",
            "23502",
        ),
    ];
    for (sql, want) in cases {
        let (got, msg) = err(&c, sql).await;
        assert_eq!(&got, want, "{sql}: {msg}");
    }
    assert_eq!(
        rows(&c, "SELECT * FROM counts ORDER BY code").await,
        table(&[&["x", "11", "X2"], &["y", "2", "Y"], &["z", "3", "Z"]])
    );
}

#[tokio::test]
async fn returning_gives_the_affected_rows_in_both_protocols() {
    let c = filled().await;
    // Simple protocol.
    assert_eq!(
        rows(
            &c,
            "INSERT INTO airports (code, city) VALUES ('JFK', 'New York'), ('SFO', 'x') \
             ON CONFLICT DO NOTHING RETURNING code, hubs + 1 AS next"
        )
        .await,
        table(&[&["JFK", "1"]])
    );
    assert_eq!(
        rows(
            &c,
            "UPDATE airports SET hubs = hubs * 10 WHERE state = 'CA' RETURNING *"
        )
        .await,
        table(&[
            &["SFO", "San Francisco", "CA", "20"],
            &["LAX", "Los Angeles", "CA", "0"],
        ])
    );
    // Extended protocol: the statement describes its RETURNING columns.
    let got = c
        .query(
            "DELETE FROM airports WHERE hubs < $1 RETURNING code, upper(city) AS city",
            &[&1i32],
        )
        .await
        .unwrap();
    let got: Vec<(String, String)> = got.iter().map(|r| (r.get("code"), r.get("city"))).collect();
    assert_eq!(
        got,
        vec![
            ("LAX".into(), "LOS ANGELES".into()),
            ("JFK".into(), "NEW YORK".into())
        ]
    );
    let got = c
        .query(
            "INSERT INTO airports VALUES ('ORD', 'O', 'IL', 5) ON CONFLICT (code) \
             DO UPDATE SET hubs = airports.hubs + excluded.hubs RETURNING hubs",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(got[0].get::<_, i32>(0), 6);
    let (state, _) = err(
        &c,
        "INSERT INTO airports VALUES ('BOS', 'B') RETURNING count(*)",
    )
    .await;
    assert_eq!(state, "42803");
}

#[tokio::test]
async fn returning_on_a_stream_is_refused() {
    let c = connect(start_server()).await;
    exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, a integer)",
    )
    .await;
    let (state, msg) = err(&c, "INSERT INTO s VALUES (now(), 1) RETURNING a").await;
    assert_eq!(state, "0A000", "{msg}");
}

/// PostgreSQL's words around a table that does not or does exist: DROP TABLE of a missing
/// table says "table", and the IF [NOT] EXISTS notices read as PostgreSQL's, SQLSTATE
/// included (42P07 for the relation that exists, 00000 for the one that does not).
#[tokio::test]
async fn drop_and_create_if_not_exists_speak_as_postgresql() {
    use futures::StreamExt;
    let port = start_server();
    let (c, mut connection) =
        tokio_postgres::connect(&common::conn_string(port), tokio_postgres::NoTls)
            .await
            .unwrap();
    let (tx, mut notices) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(msg)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notice(n) = msg {
                let _ = tx.send(format!("{}: {}", n.code().code(), n.message()));
            }
        }
    });
    let e = c.batch_execute("DROP TABLE nosuch").await.unwrap_err();
    assert_eq!(sqlstate(&e), "42P01");
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "table \"nosuch\" does not exist"
    );
    exec(&c, "CREATE TABLE t (a integer)").await;
    exec(&c, "CREATE TABLE IF NOT EXISTS t (a integer)").await;
    exec(&c, "DROP TABLE IF EXISTS nosuch").await;
    let got = [notices.recv().await.unwrap(), notices.recv().await.unwrap()];
    assert_eq!(
        got,
        [
            "42P07: relation \"t\" already exists, skipping",
            "00000: table \"nosuch\" does not exist, skipping"
        ]
    );
    // The same for a stream: PostgreSQL's SQLSTATE for the existing relation.
    exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    exec(
        &c,
        "CREATE STREAM IF NOT EXISTS s (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    assert_eq!(
        notices.recv().await.unwrap(),
        "42P07: relation \"s\" already exists, skipping"
    );
}
