//! Issue 31, queries that run without a client: `CREATE STREAM d AS SELECT ...`. A derived
//! stream's query shares one plan with a client's identical query and both get exact rows;
//! its rows (each slide event's, `wtime` its TIMESTAMPCOLUMN) are read like any stream's,
//! by clients and by another derived stream; dropping what it reads is 2BP01 unless
//! CASCADE; writes into it are refused; only superusers create it; and an archived derived
//! stream over an archived stream gets every slide event exactly once across a SIGKILL.

use std::collections::BTreeMap;

use crate::common::sinks::wait_sink;
use crate::common::sinks::{tuples, STREAM};
use crate::common::sources::fetch;
use crate::common::{self, connect, exec, rows, sqlstate};

const QUERY: &str = "SELECT origin, count(*) AS n, sum(delay) AS total, wtime(*) FROM s \
                     [RANGE BY '10 minutes' START AT '2001-01-01'] GROUP BY origin";

/// QUERY's rows for the 10-minute windows `0..windows`, computed here: (origin, n, total,
/// wtime), sorted within each window.
fn expected(windows: i64) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for w in 0..windows {
        let mut groups: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for m in w * 10..w * 10 + 10 {
            let g = groups
                .entry(["SFO", "LAX", "ORD"][(m % 3) as usize])
                .or_default();
            g.0 += 1;
            g.1 += m;
        }
        let end = (w + 1) * 10;
        for (origin, (n, total)) in groups {
            out.push(vec![
                origin.to_string(),
                n.to_string(),
                total.to_string(),
                format!("2001-01-01 {:02}:{:02}:00", end / 60, end % 60),
            ]);
        }
    }
    out
}

/// `rows` sorted within each slide event (the last column is its instant), as
/// [`expected`] lists them.
fn by_event(mut rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    rows.sort_by(|a, b| (a.last(), &a[0]).cmp(&(b.last(), &b[0])));
    rows
}

/// A derived stream's query and a client's identical query run as one shared plan, and
/// both get exactly the rows computed here; clients read the derived stream as any
/// stream, and a derived stream over it computes from its rows.
#[tokio::test]
async fn a_derived_stream_shares_a_clients_plan_and_both_get_exact_rows() {
    let port = common::start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(&c, &format!("CREATE STREAM d AS {QUERY}")).await;
    exec(
        &c,
        "CREATE STREAM d2 AS SELECT sum(n) AS n, wtime(*) FROM d \
         [RANGE BY '30 minutes' START AT '2001-01-01']",
    )
    .await;
    let columns = c.prepare("SELECT * FROM d").await.unwrap();
    let names: Vec<&str> = columns.columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["origin", "n", "total", "wtime"]);
    let client = connect(port).await;
    exec(&client, &format!("BEGIN; DECLARE q CURSOR FOR {QUERY}")).await;
    let reader = connect(port).await;
    exec(
        &reader,
        "BEGIN; DECLARE r CURSOR FOR SELECT origin, n, total, wtime FROM d; \
         DECLARE r2 CURSOR FOR SELECT n, wtime FROM d2",
    )
    .await;
    common::wait_for_queries(&c, 5).await;
    let plans = rows(
        &c,
        "SELECT plan_id, feeds FROM tcq_queries WHERE query LIKE '%sum(delay)%' ORDER BY id",
    )
    .await;
    assert_eq!(plans.len(), 2, "{plans:?}");
    assert_eq!(plans[0][0], plans[1][0], "one shared plan: {plans:?}");
    assert_ne!(plans[0][0], "NULL");
    assert_eq!(
        (plans[0][1].as_str(), plans[1][1].as_str()),
        ("stream d", "NULL")
    );
    // Minutes 0..50, then 55: the windows ending 00:10 to 00:50 close.
    exec(&c, &tuples(0, 50)).await;
    exec(&c, &tuples(55, 56)).await;
    let want = expected(5);
    assert_eq!(by_event(fetch(&client, "q", 15, 20).await), want);
    assert_eq!(by_event(fetch(&reader, "r", 15, 20).await), want);
    // d2: the 30-minute window over d's rows (wtime 00:10 and 00:20) closes once d's time
    // reaches 00:30: minutes 0 to 19.
    assert_eq!(
        fetch(&reader, "r2", 1, 20).await,
        common::table(&[&["20", "2001-01-01 00:30:00"]])
    );
    let d = wait_sink(&c, "d", 10, |r| r.rows == 15).await;
    assert_eq!(
        (d.kind.as_str(), d.state.as_str(), d.slide_events),
        ("stream", "running", 5)
    );
    let streams = rows(
        &c,
        "SELECT name, timestamp_column, tuples FROM tcq_streams ORDER BY name",
    )
    .await;
    assert_eq!(
        streams,
        common::table(&[
            &["d", "wtime", "15"],
            &["d2", "wtime", "1"],
            &["s", "ts", "51"]
        ])
    );
}

/// The rules around a derived stream: 2BP01 to drop what it reads (CASCADE drops it
/// too), 42809 to write into it, 42P07 for a name taken, 0A000 for a query that cannot
/// run for good, 42501 for a user who is no superuser; DROP STREAM ends its query;
/// EXPLAIN of it explains its query, which would join the running plan.
#[tokio::test]
async fn dependents_writes_names_and_privileges_are_checked() {
    let port = common::start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(&c, &format!("CREATE STREAM d AS {QUERY}")).await;
    exec(&c, "CREATE STREAM e AS SELECT origin, n FROM d WHERE n > 1").await;
    let err = |sql: &'static str| {
        let c = &c;
        async move {
            let e = c.batch_execute(sql).await.expect_err(sql);
            let db = e
                .as_db_error()
                .unwrap_or_else(|| panic!("{sql}: not a server error: {e:?}"));
            (
                sqlstate(&e),
                db.message().to_string(),
                db.detail().map(str::to_string),
            )
        }
    };
    let (code, msg, detail) = err("DROP STREAM s").await;
    assert_eq!(code, "2BP01");
    assert_eq!(
        msg,
        "cannot drop stream s because other objects depend on it"
    );
    assert_eq!(
        detail.as_deref(),
        Some("stream e depends on stream d\nstream d depends on stream s")
    );
    assert_eq!(err("DROP STREAM d RESTRICT").await.0, "2BP01");
    assert_eq!(
        err("INSERT INTO d VALUES ('x', 1, 1, '2001-01-01')")
            .await
            .0,
        "42809"
    );
    // On a connection of its own: tokio-postgres does not reuse a connection whose COPY
    // failed at Execute.
    let copier = connect(port).await;
    let copy = copier.copy_in::<_, bytes::Bytes>("COPY d FROM STDIN").await;
    assert_eq!(sqlstate(&copy.err().expect("COPY into d refused")), "42809");
    assert_eq!(
        err("CREATE STREAM d AS SELECT origin FROM s").await.0,
        "42P07"
    );
    exec(&c, "CREATE STREAM IF NOT EXISTS d AS SELECT origin FROM s").await;
    assert_eq!(
        err("CREATE STREAM x AS SELECT origin FROM s LIMIT 5")
            .await
            .0,
        "0A000"
    );
    assert_eq!(
        err("CREATE STREAM x AS SELECT count(*) FROM pg_class")
            .await
            .0,
        "0A000"
    );
    let explain = rows(&c, &format!("EXPLAIN CREATE STREAM x AS {QUERY}")).await;
    let text: Vec<&str> = explain.iter().map(|r| r[0].as_str()).collect();
    assert!(
        text.iter().any(|l| l.contains("joins shared plan")),
        "{}",
        text.join("\n")
    );
    exec(&c, "CREATE ROLE alice LOGIN").await;
    let alice = common::connect_as(port, "alice", "").await.unwrap();
    let e = alice
        .batch_execute("CREATE STREAM x AS SELECT origin FROM s")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501", "{e}");
    // DROP STREAM d alone is refused for e; with CASCADE, d and e go, and their queries.
    assert_eq!(rows(&c, "SELECT count(*) FROM tcq_queries").await, [["2"]]);
    exec(&c, "DROP STREAM d CASCADE").await;
    assert_eq!(rows(&c, "SELECT name FROM tcq_streams").await, [["s"]]);
    assert!(rows(&c, "SELECT name FROM tcq_sinks").await.is_empty());
    for _ in 0..100 {
        if rows(&c, "SELECT count(*) FROM tcq_queries").await == [["0"]] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(rows(&c, "SELECT count(*) FROM tcq_queries").await, [["0"]]);
    exec(&c, "DROP STREAM s").await;
}

/// An archived derived stream over an archived stream, killed with SIGKILL after some
/// slide events and restarted: every slide event is in it exactly once. The query is
/// killed with a window half full, so the restart must replay the archive into it.
#[tokio::test]
async fn an_archived_derived_stream_gets_every_slide_event_once_across_sigkill() {
    let data = common::data_dir();
    let args = ["--data-dir", data.path().to_str().unwrap()];
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    exec(&c, &format!("{STREAM} TYPE ARCHIVED")).await;
    exec(&c, &format!("CREATE STREAM d TYPE ARCHIVED AS {QUERY}")).await;
    exec(&c, &tuples(0, 25)).await;
    wait_sink(&c, "d", 20, |r| r.rows == 6).await;
    drop(server);
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    let d = wait_sink(&c, "d", 20, |r| r.state == "running").await;
    assert_eq!(d.rows, 0, "counters start again with the server");
    exec(&c, &tuples(25, 50)).await;
    exec(&c, &tuples(55, 56)).await;
    wait_sink(&c, "d", 20, |r| r.rows == 9).await;
    // Every row of d, from its archive: one instance holding them all.
    exec(
        &c,
        "BEGIN; DECLARE all_rows CURSOR FOR SELECT origin, n, total, wtime FROM d \
         [RANGE BY '1 day' START AT '2001-01-01']",
    )
    .await;
    let admin = connect(server.port).await;
    common::wait_for_queries(&admin, 2).await;
    exec(&admin, "SELECT tcq_advance('d', '2001-01-02 00:00')").await;
    assert_eq!(by_event(fetch(&c, "all_rows", 15, 20).await), expected(5));
}

/// Derived streams of the other query shapes: a filter without a window (its tuples keep
/// their timestamps), a multi-window query (both windows' rows of one instant in one
/// batch) and a join (wtime(*) the slide event's instant).
#[tokio::test]
async fn filters_multi_window_queries_and_joins_feed_derived_streams() {
    let port = common::start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(
        &c,
        "CREATE STREAM t (ts timestamp TIMESTAMPCOLUMN, origin text, hub text)",
    )
    .await;
    exec(
        &c,
        "CREATE STREAM late AS SELECT origin, delay FROM s WHERE delay % 10 = 7",
    )
    .await;
    exec(
        &c,
        "CREATE STREAM multi AS SELECT wrange(*) AS r, count(*) AS n FROM s \
         [RANGE BY '10 minutes' START AT '2001-01-01'] \
         [RANGE BY '20 minutes' SLIDE BY '10 minutes' START AT '2001-01-01']",
    )
    .await;
    exec(
        &c,
        "CREATE STREAM hubs AS SELECT t.hub, count(*) AS n FROM s [RANGE BY '10 minutes' START AT '2001-01-01'] \
         JOIN t [RANGE BY '10 minutes' START AT '2001-01-01'] USING (origin) GROUP BY t.hub",
    )
    .await;
    let columns = |name: &'static str| {
        let c = &c;
        async move {
            rows(
                c,
                &format!("SELECT columns, timestamp_column FROM tcq_streams WHERE name = '{name}'"),
            )
            .await
        }
    };
    assert_eq!(
        columns("late").await,
        common::table(&[&[
            "origin text, delay integer, ts timestamp without time zone",
            "ts"
        ]])
    );
    assert_eq!(
        columns("multi").await,
        common::table(&[&[
            "r interval, n bigint, wtime timestamp without time zone",
            "wtime"
        ]])
    );
    let reader = connect(port).await;
    exec(
        &reader,
        "BEGIN; DECLARE l CURSOR FOR SELECT * FROM late; DECLARE m CURSOR FOR SELECT * FROM multi; \
         DECLARE h CURSOR FOR SELECT * FROM hubs",
    )
    .await;
    common::wait_for_queries(&c, 6).await;
    exec(
        &c,
        "INSERT INTO t VALUES ('2001-01-01 00:01', 'SFO', 'west'), ('2001-01-01 00:02', 'LAX', 'west'), \
         ('2001-01-01 00:25', 'ORD', 'east')",
    )
    .await;
    exec(&c, &tuples(0, 25)).await;
    assert_eq!(
        fetch(&reader, "l", 2, 20).await,
        common::table(&[
            &["LAX", "7", "2001-01-01 00:07:00"],
            &["ORD", "17", "2001-01-01 00:17:00"]
        ])
    );
    assert_eq!(
        fetch(&reader, "m", 3, 20).await,
        common::table(&[
            &["00:10:00", "10", "2001-01-01 00:10:00"],
            &["00:10:00", "10", "2001-01-01 00:20:00"],
            &["00:20:00", "20", "2001-01-01 00:20:00"],
        ]),
        "the 20-minute window's first instance ends at 00:20"
    );
    // The first ten minutes: SFO 4 and LAX 3 tuples, each joined to its hub's one tuple.
    assert_eq!(
        fetch(&reader, "h", 1, 20).await,
        common::table(&[&["west", "7", "2001-01-01 00:10:00"]])
    );
}
