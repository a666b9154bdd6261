//! Cross-query sharing over the wire: queries of different clients with the same stream,
//! WHERE and GROUP BY run in one shared plan (`tcq_plans`, `tcq_queries.plan_id`), and each
//! gets exactly the rows it gets alone (`SET tcq.share_across_queries = off`).

use crate::common;

use common::{connect, exec, rows, sqlstate, start_server, wait_for_queries};
use tokio_postgres::Client;

const STREAM: &str =
    "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)";

/// Q1 and Q2 share (same WHERE and keys, partitioned-by aggregates); they differ in
/// windows, aggregates, HAVING and ORDER BY.
const Q1: &str = "SELECT origin, count(*), avg(delay), wtime(*) FROM flights \
     [RANGE BY '10 minutes' START AT '2001-01-01'] [RANGE BY '20 minutes' START AT '2001-01-01'] \
     WHERE delay >= 0 GROUP BY origin ORDER BY origin";
const Q2: &str = "SELECT wtime(*), origin, sum(delay) * 2 FROM flights \
     [RANGE BY '20 minutes' START AT '2001-01-01'] [RANGE BY '30 minutes' SLIDE BY '10 minutes' START AT '2001-01-01'] \
     WHERE delay >= 0 GROUP BY origin HAVING count(*) > 1 ORDER BY 3 DESC, origin";

const DATA: &str = "INSERT INTO flights VALUES \
    ('2001-01-01 00:01', 5, 'ATL'), ('2001-01-01 00:03', 2, 'ORD'), ('2001-01-01 00:07', 4, 'ATL'), \
    ('2001-01-01 00:12', 7, 'ORD'), ('2001-01-01 00:14', -1, 'ORD'), ('2001-01-01 00:18', 3, 'ORD'), \
    ('2001-01-01 00:25', 1, 'ATL'), ('2001-01-01 00:27', 9, 'ATL'), ('2001-01-01 00:33', 6, 'SFO'), \
    ('2001-01-01 00:38', 8, 'ATL'), ('2001-01-01 00:44', 2, 'SFO'), ('2001-01-01 00:52', 0, 'ATL'), \
    ('2001-01-01 01:05', 1, 'ORD')";

async fn declare(c: &Client, name: &str, sql: &str) {
    exec(c, &format!("BEGIN; DECLARE {name} CURSOR FOR {sql}")).await;
}

/// The shared plans as (plan id, queries) per node, in node order.
async fn plans(c: &Client) -> Vec<(String, String, String)> {
    rows(c, "SELECT plan_id, window, queries FROM tcq_plans")
        .await
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect()
}

async fn plan_of(c: &Client, id: &str) -> String {
    rows(
        c,
        &format!("SELECT plan_id FROM tcq_queries WHERE id = {id}"),
    )
    .await
    .remove(0)
    .remove(0)
}

async fn query_ids(c: &Client) -> Vec<String> {
    rows(c, "SELECT id FROM tcq_queries ORDER BY id")
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

#[tokio::test]
async fn two_clients_share_one_plan_and_get_the_rows_they_get_alone() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let show = rows(&admin, "SHOW tcq.share_across_queries").await;
    assert_eq!(show, vec![vec!["on".to_string()]]);
    let listed = rows(
        &admin,
        "SELECT setting FROM pg_settings WHERE name = 'tcq.share_across_queries'",
    )
    .await;
    assert_eq!(listed, vec![vec!["on".to_string()]]);
    let bad = admin
        .batch_execute("SET tcq.share_across_queries = maybe")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&bad), "22023");

    let (a, b, a_alone, b_alone) = (
        connect(port).await,
        connect(port).await,
        connect(port).await,
        connect(port).await,
    );
    declare(&a, "q", Q1).await;
    declare(&b, "q", Q2).await;
    for c in [&a_alone, &b_alone] {
        exec(c, "SET tcq.share_across_queries = off").await;
    }
    declare(&a_alone, "q", Q1).await;
    declare(&b_alone, "q", Q2).await;
    wait_for_queries(&admin, 4).await;
    let ids = query_ids(&admin).await;
    let (pa, pb) = (
        plan_of(&admin, &ids[0]).await,
        plan_of(&admin, &ids[1]).await,
    );
    assert_ne!(pa, "NULL");
    assert_eq!(pa, pb, "both shared queries name one plan");
    assert_eq!(
        plan_of(&admin, &ids[2]).await,
        "NULL",
        "sharing off runs alone"
    );
    assert_eq!(plan_of(&admin, &ids[3]).await, "NULL");
    // One plan over the union {10, 20, 30/10}: every node serves the queries that read it.
    let nodes = plans(&admin).await;
    let both = format!("{},{}", ids[0], ids[1]);
    assert!(nodes.iter().all(|n| n.0 == pa), "{nodes:?}");
    assert!(
        nodes
            .iter()
            .any(|n| n.1.contains("RANGE 20 minutes") && n.2 == both),
        "the 20-minute window serves both: {nodes:?}"
    );
    assert!(
        nodes
            .iter()
            .any(|n| n.1.contains("RANGE 10 minutes") && n.2 == ids[0]),
        "{nodes:?}"
    );

    exec(&admin, DATA).await;
    let shared_a = rows(&a, "FETCH 9 FROM q").await;
    let alone_a = rows(&a_alone, "FETCH 9 FROM q").await;
    assert_eq!(shared_a, alone_a);
    // 00:10: ATL {5, 4}, ORD {2}; at 00:20 (ORDER BY origin over the slide event's rows):
    // the 20-minute window's ATL {5, 4}, then ORD {7, 3} (10 minutes; -1 fails WHERE) and
    // ORD {2, 7, 3} (20 minutes).
    assert_eq!(
        shared_a[..5],
        common::table(&[
            &["ATL", "2", "4.5000000000000000", "2001-01-01 00:10:00"],
            &["ORD", "1", "2.0000000000000000", "2001-01-01 00:10:00"],
            &["ATL", "2", "4.5000000000000000", "2001-01-01 00:20:00"],
            &["ORD", "2", "5.0000000000000000", "2001-01-01 00:20:00"],
            &["ORD", "3", "4.0000000000000000", "2001-01-01 00:20:00"],
        ])[..]
    );
    let shared_b = rows(&b, "FETCH 8 FROM q").await;
    let alone_b = rows(&b_alone, "FETCH 8 FROM q").await;
    assert_eq!(shared_b, alone_b);
    assert_eq!(
        shared_b[0],
        vec!["2001-01-01 00:20:00", "ORD", "24"],
        "{shared_b:?}"
    );
}

#[tokio::test]
async fn late_joiner_leaver_and_pruning() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let (a, late, alone) = (
        connect(port).await,
        connect(port).await,
        connect(port).await,
    );
    declare(&a, "q", Q1).await;
    wait_for_queries(&admin, 1).await;
    exec(
        &admin,
        "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'ATL'), ('2001-01-01 00:09', 2, 'ORD')",
    )
    .await;
    // The plan runs (current time 00:09). A query whose windows begin after 00:09 and whose
    // aggregate states the plan carries (avg) joins it; one whose window began before (it
    // would miss tuples it never saw) starts its own plan.
    let joiner = "SELECT origin, avg(delay) FROM flights \
        [RANGE BY '20 minutes' START AT '2001-01-01 00:10'] [RANGE BY '5 minutes' START AT '2001-01-01 00:10'] \
        WHERE delay >= 0 GROUP BY origin ORDER BY origin";
    declare(&late, "q", joiner).await;
    exec(&alone, "SET tcq.share_across_queries = off").await;
    declare(&alone, "q", joiner).await;
    let early = connect(port).await;
    declare(
        &early,
        "q",
        "SELECT origin, avg(delay) FROM flights [RANGE BY '20 minutes' START AT '2001-01-01'] \
         WHERE delay >= 0 GROUP BY origin",
    )
    .await;
    wait_for_queries(&admin, 4).await;
    let ids = query_ids(&admin).await;
    let p0 = plan_of(&admin, &ids[0]).await;
    assert_eq!(plan_of(&admin, &ids[1]).await, p0, "the late joiner joins");
    assert_eq!(plan_of(&admin, &ids[2]).await, "NULL");
    let p3 = plan_of(&admin, &ids[3]).await;
    assert!(p3 != p0 && p3 != "NULL", "{p3} vs {p0}");
    let before = plans(&admin).await;
    assert!(
        before
            .iter()
            .any(|n| n.0 == p0 && n.1.contains("RANGE 5 minutes")),
        "the joiner's new node: {before:?}"
    );

    exec(&admin, DATA).await;
    let joined = rows(&late, "FETCH 6 FROM q").await;
    assert_eq!(joined, rows(&alone, "FETCH 6 FROM q").await);
    // 5-minute windows from 00:10: ORD {7} (00:15), ORD {3} (00:20), ...
    assert_eq!(joined[0], vec!["ORD", "7.0000000000000000"], "{joined:?}");
    // The first query's rows are undisturbed: its instance ending 00:10 holds the tuples
    // inserted before the join (ATL 5, ORD 2) and the ones after (ATL 5 and 4, ORD 2).
    let first = rows(&a, "FETCH 2 FROM q").await;
    assert_eq!(
        first,
        common::table(&[
            &["ATL", "3", "4.6666666666666667", "2001-01-01 00:10:00"],
            &["ORD", "2", "2.0000000000000000", "2001-01-01 00:10:00"],
        ])
    );

    // The joiner leaves (CLOSE): its 5-minute node is pruned, the rest stays.
    exec(&late, "CLOSE q; COMMIT").await;
    wait_for_queries(&admin, 3).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let after = plans(&admin).await;
        if !after.iter().any(|n| n.1.contains("RANGE 5 minutes")) {
            assert!(
                after.iter().all(|n| !n.2.split(',').any(|q| q == ids[1])),
                "{after:?}"
            );
            assert!(after.iter().any(|n| n.0 == p0), "the plan stays for Q1");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not pruned: {after:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The first query leaves by disconnecting: its plan goes.
    drop(a);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while plans(&admin).await.iter().any(|n| n.0 == p0) {
        assert!(
            std::time::Instant::now() < deadline,
            "plan {p0} not removed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn distinct_and_different_where_are_not_shared() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let cs = [
        connect(port).await,
        connect(port).await,
        connect(port).await,
    ];
    declare(
        &cs[0],
        "q",
        "SELECT count(DISTINCT origin) FROM flights [RANGE BY '10 minutes' START AT '2001-01-01']",
    )
    .await;
    declare(
        &cs[1],
        "q",
        "SELECT count(*) FROM flights [RANGE BY '10 minutes' START AT '2001-01-01'] WHERE delay > 0",
    )
    .await;
    declare(
        &cs[2],
        "q",
        "SELECT count(*) FROM flights [RANGE BY '10 minutes' START AT '2001-01-01'] WHERE delay > 1",
    )
    .await;
    wait_for_queries(&admin, 3).await;
    let ids = query_ids(&admin).await;
    assert_eq!(
        plan_of(&admin, &ids[0]).await,
        "NULL",
        "count(DISTINCT) runs alone"
    );
    let (p1, p2) = (
        plan_of(&admin, &ids[1]).await,
        plan_of(&admin, &ids[2]).await,
    );
    assert!(p1 != "NULL" && p2 != "NULL" && p1 != p2, "{p1} {p2}");
    exec(
        &admin,
        "INSERT INTO flights VALUES ('2001-01-01 00:01', 1, 'ATL'), ('2001-01-01 00:02', 2, 'ATL'), \
         ('2001-01-01 00:03', 2, 'ORD'), ('2001-01-01 00:11', 0, 'SFO')",
    )
    .await;
    assert_eq!(rows(&cs[0], "FETCH 1 FROM q").await, vec![vec!["2"]]);
    assert_eq!(rows(&cs[1], "FETCH 1 FROM q").await, vec![vec!["3"]]);
    assert_eq!(rows(&cs[2], "FETCH 1 FROM q").await, vec![vec!["2"]]);
}

#[tokio::test]
async fn explain_shows_the_plan_a_query_would_join_and_both_costs() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let text = |c: &'static str| format!("EXPLAIN (EVENT_RATE '1 per minute') {c}");
    let lines = |r: Vec<Vec<String>>| r.into_iter().map(|mut l| l.remove(0)).collect::<Vec<_>>();
    let alone = lines(rows(&admin, &text(Q2)).await);
    assert!(
        alone.iter().any(|l| l.contains("starts a new shared plan")),
        "{alone:?}"
    );
    let a = connect(port).await;
    declare(&a, "q", Q1).await;
    wait_for_queries(&admin, 1).await;
    let ids = query_ids(&admin).await;
    let plan = plan_of(&admin, &ids[0]).await;
    let joined = lines(rows(&admin, &text(Q2)).await);
    assert!(
        joined.iter().any(
            |l| l == &format!("  joins shared plan {plan} on flights (1 queries, 2 nodes now)")
        ),
        "{joined:?}"
    );
    // Per hour at one event per minute. Q1 {10, 20} alone: 10 <- raw (60), 20 <- 10 (3
    // instances of M = 2 on panes: 6) = 66. Q2 {20, 30/10} alone: a 10-minute factor window
    // (60), 20 <- 10 (6), 30/10 <- 10 (6 instances, subtract-on-evict: one partial in and
    // one out each, 12; panes would merge M = 3: 18) = 78. Shared: one 10-minute root, 20
    // and 30/10 from it = 78 against 66 + 78 = 144.
    assert!(
        joined.iter().any(|l| l
            == "  Model cost of its 2 queries with this one at 1 per minute: 78 events per hour shared, 144 each alone (1.8x)"),
        "{joined:?}"
    );
    assert!(
        joined.iter().any(|l| l.contains(
            "w2: RANGE 30 minutes SLIDE 10 minutes START AT '2001-01-01 00:00:00' <- f1 (M = 3): 8 events per R, 12 per hour; sliding: subtract-on-evict (panes 18, subtract-on-evict 12, two-stacks 24 events per hour)"
        )),
        "{joined:?}"
    );
    exec(&admin, "SET tcq.share_across_queries = off").await;
    let off = lines(rows(&admin, &text(Q2)).await);
    assert!(
        off.iter()
            .any(|l| l.contains("off (tcq.share_across_queries)")),
        "{off:?}"
    );
}

#[tokio::test]
async fn a_member_that_reaches_its_limit_leaves_the_plan() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let (a, b, alone) = (
        connect(port).await,
        connect(port).await,
        connect(port).await,
    );
    let limited = format!("{Q1} LIMIT 3");
    declare(&a, "q", &limited).await;
    declare(&b, "q", Q2).await;
    exec(&alone, "SET tcq.share_across_queries = off").await;
    declare(&alone, "q", &limited).await;
    wait_for_queries(&admin, 3).await;
    let ids = query_ids(&admin).await;
    assert_eq!(
        plan_of(&admin, &ids[0]).await,
        plan_of(&admin, &ids[1]).await
    );
    exec(&admin, DATA).await;
    let got = rows(&a, "FETCH 10 FROM q").await;
    assert_eq!(got.len(), 3, "LIMIT 3 ends the query: {got:?}");
    assert_eq!(got, rows(&alone, "FETCH 10 FROM q").await);
    // It has left: no node names it; its 10-minute node stays only because it feeds Q2's
    // 20 and 30/10-minute windows, now as a factor window that no query reads.
    let nodes = plans(&admin).await;
    assert!(
        nodes.iter().all(|n| !n.2.split(',').any(|q| q == ids[0])),
        "{nodes:?}"
    );
    let ten = "RANGE 10 minutes SLIDE 10 minutes START AT '2001-01-01 00:00:00'";
    assert!(
        nodes.iter().any(|n| n.1 == ten && n.2.is_empty()),
        "{nodes:?}"
    );
    let factor = rows(&admin, "SELECT factor FROM tcq_plans WHERE node = 0").await;
    assert_eq!(factor, vec![vec!["t"]]);
    assert!(
        nodes.iter().any(|n| n.2 == ids[1]),
        "Q2 still runs: {nodes:?}"
    );
    assert_eq!(
        rows(&b, "FETCH 1 FROM q").await[0],
        vec!["2001-01-01 00:20:00", "ORD", "24"]
    );
}

/// The fine query of the roll-up test: per (origin, dest) over epoch grids, so a later
/// query's default START AT windows are the same plan nodes.
const FINE: &str = "SELECT origin, dest, count(*), avg(delay) FROM routes \
     [RANGE BY '10 minutes' START AT 'epoch'] [RANGE BY '20 minutes' START AT 'epoch'] \
     GROUP BY origin, dest";
/// Per origin only (a subset of FINE's keys), with max, a state FINE's plan lacks.
const COARSE: &str = "SELECT origin, count(*), max(delay), wtime(*) FROM routes \
     [RANGE BY '10 minutes'] [RANGE BY '20 minutes'] \
     GROUP BY origin ORDER BY wtime(*), origin, count(*)";

#[tokio::test]
async fn a_query_on_a_subset_of_the_keys_rolls_up_from_the_running_plan() {
    let port = start_server();
    let admin = connect(port).await;
    exec(
        &admin,
        "CREATE STREAM routes (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text, dest text)",
    )
    .await;
    let (fine, coarse, alone) = (
        connect(port).await,
        connect(port).await,
        connect(port).await,
    );
    declare(&fine, "q", FINE).await;
    wait_for_queries(&admin, 1).await;
    // 24 tuples of 3 (origin, dest) pairs in two minutes: the stream runs at 0.2 events/s,
    // 120 per 10-minute instance against 3 fine groups, so rolling up is cheaper.
    let early: Vec<String> = (0..24)
        .map(|i| {
            let (o, d) = [("ATL", "ORD"), ("ATL", "SFO"), ("ORD", "ATL")][i % 3];
            format!(
                "('2001-01-01 00:{:02}:{:02}', {i}, '{o}', '{d}')",
                i * 5 / 60,
                i * 5 % 60
            )
        })
        .collect();
    exec(
        &admin,
        &format!("INSERT INTO routes VALUES {}", early.join(", ")),
    )
    .await;
    let ids = query_ids(&admin).await;
    let plan = plan_of(&admin, &ids[0]).await;
    let explained: Vec<String> = rows(&admin, &format!("EXPLAIN {COARSE}"))
        .await
        .into_iter()
        .map(|mut l| l.remove(0))
        .collect();
    assert!(
        explained
            .iter()
            .any(|l| l.starts_with(&format!("  joins shared plan {plan} on routes"))),
        "{explained:?}"
    );
    assert!(
        explained
            .iter()
            .any(|l| l.starts_with("  rolls up from the plan's finer GROUP BY groups: ")),
        "{explained:?}"
    );

    // At one event per second: its windows are the plan's nodes already (no extra), and
    // 3 fine groups merge per closed instance, 18 + 9 per hour; alone, the 10-minute window
    // folds 3,600 tuples per hour and the 20-minute one merges 6 of its partials.
    let at_rate: Vec<String> = rows(
        &admin,
        &format!("EXPLAIN (EVENT_RATE '1 per second') {COARSE}"),
    )
    .await
    .into_iter()
    .map(|mut l| l.remove(0))
    .collect();
    assert!(
        at_rate.iter().any(|l| l
            == "  rolls up from the plan's finer GROUP BY groups: 27 events per hour for its windows and merges, 3606 alone"),
        "{at_rate:?}"
    );

    declare(&coarse, "q", COARSE).await;
    exec(&alone, "SET tcq.share_across_queries = off").await;
    declare(&alone, "q", COARSE).await;
    wait_for_queries(&admin, 3).await;
    let ids = query_ids(&admin).await;
    assert_eq!(
        plan_of(&admin, &ids[1]).await,
        plan,
        "the coarse query joins"
    );
    assert_eq!(plan_of(&admin, &ids[2]).await, "NULL");
    // Both nodes serve both queries (no new node); the coarse one rolls up.
    let nodes = rows(
        &admin,
        "SELECT plan_id, window, queries, rollup_queries FROM tcq_plans",
    )
    .await;
    let both = format!("{},{}", ids[0], ids[1]);
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    for n in &nodes {
        assert_eq!((&n[0], &n[2], &n[3]), (&plan, &both, &ids[1]), "{nodes:?}");
    }

    // After the coarse query's registration (its default START AT): ATL's two pairs merge.
    exec(
        &admin,
        "INSERT INTO routes VALUES ('2100-01-01 00:11', 4, 'ATL', 'ORD'), \
         ('2100-01-01 00:12', 6, 'ATL', 'SFO'), ('2100-01-01 00:14', 1, 'ATL', 'ORD'), \
         ('2100-01-01 00:15', 3, 'ORD', 'ATL'), ('2100-01-01 00:22', 7, 'ORD', 'SFO'), \
         ('2100-01-01 00:25', 2, 'ATL', 'SFO'), ('2100-01-01 00:41', 0, 'SFO', 'ATL')",
    )
    .await;
    let got = rows(&coarse, "FETCH 8 FROM q").await;
    assert_eq!(got, rows(&alone, "FETCH 8 FROM q").await);
    assert_eq!(
        got,
        common::table(&[
            &["ATL", "3", "6", "2100-01-01 00:20:00"],
            &["ATL", "3", "6", "2100-01-01 00:20:00"],
            &["ORD", "1", "3", "2100-01-01 00:20:00"],
            &["ORD", "1", "3", "2100-01-01 00:20:00"],
            &["ATL", "1", "2", "2100-01-01 00:30:00"],
            &["ORD", "1", "7", "2100-01-01 00:30:00"],
            &["ATL", "1", "2", "2100-01-01 00:40:00"],
            &["ORD", "1", "7", "2100-01-01 00:40:00"],
        ])
    );
    // The fine query's rows stay per pair: its first 10-minute instance, 8 tuples a pair.
    let first = rows(&fine, "FETCH 3 FROM q").await;
    let mut first: Vec<(String, String, String)> = first
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect();
    first.sort();
    assert_eq!(
        first,
        [("ATL", "ORD"), ("ATL", "SFO"), ("ORD", "ATL")].map(|(o, d)| (
            o.to_string(),
            d.to_string(),
            "8".to_string()
        ))
    );
}

#[tokio::test]
async fn an_error_in_one_members_select_list_ends_that_member_alone() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let (bad, overflow, good, bad_alone) = (
        connect(port).await,
        connect(port).await,
        connect(port).await,
        connect(port).await,
    );
    let window = "[RANGE BY '10 minutes' START AT '2001-01-01']";
    let failing =
        format!("SELECT origin, 10 / (count(*) - 2) FROM flights {window} GROUP BY origin");
    declare(&bad, "q", &failing).await;
    declare(
        &overflow,
        "q",
        &format!(
            "SELECT origin FROM flights {window} GROUP BY origin \
             HAVING sum(delay) * 9223372036854775807 > 0"
        ),
    )
    .await;
    declare(
        &good,
        "q",
        &format!("SELECT origin, count(*) FROM flights {window} GROUP BY origin ORDER BY origin"),
    )
    .await;
    exec(&bad_alone, "SET tcq.share_across_queries = off").await;
    declare(&bad_alone, "q", &failing).await;
    wait_for_queries(&admin, 4).await;
    let ids = query_ids(&admin).await;
    let plan = plan_of(&admin, &ids[0]).await;
    assert_eq!(plan_of(&admin, &ids[1]).await, plan);
    assert_eq!(plan_of(&admin, &ids[2]).await, plan);
    // ATL has 2 tuples in [00:00, 00:10): 10 / 0 at 00:10, and its sum 9 overflows bigint
    // when multiplied.
    exec(&admin, DATA).await;
    for c in [&bad, &bad_alone] {
        let e = c.simple_query("FETCH 5 FROM q").await.unwrap_err();
        assert_eq!(sqlstate(&e), "22012", "{e}");
    }
    let e = overflow.simple_query("FETCH 5 FROM q").await.unwrap_err();
    assert_eq!(sqlstate(&e), "22003", "{e}");
    // The other member runs on past the failing instant: 00:10, 00:20 and 00:30.
    assert_eq!(
        rows(&good, "FETCH 4 FROM q").await,
        common::table(&[&["ATL", "2"], &["ORD", "1"], &["ORD", "3"], &["ATL", "2"]])
    );
    let nodes = plans(&admin).await;
    assert!(
        nodes.iter().all(|n| n.0 == plan && n.2 == ids[2]),
        "the failed members left the plan: {nodes:?}"
    );
}

/// HAVING over aggregate results and constants is compiled (`exec::having`); adding
/// `OR false` keeps the same condition on the generic evaluator. Shared or alone, both keep
/// the same groups: a group whose max is NULL (only NULL delays) fails, integers meet a
/// float constant and a numeric average meets an integer on the left.
#[tokio::test]
async fn compiled_having_keeps_the_groups_the_evaluator_keeps() {
    let port = start_server();
    let admin = connect(port).await;
    exec(&admin, STREAM).await;
    let cond = "count(*) >= 2 AND max(delay) < 7.5::float8 AND 4 < avg(delay)";
    let query = |having: &str| {
        format!(
            "SELECT origin, wtime(*), count(*), max(delay), avg(delay) FROM flights \
             [RANGE BY '10 minutes' START AT '2001-01-01'] GROUP BY origin \
             HAVING {having} ORDER BY origin"
        )
    };
    let (compiled, generic) = (query(cond), query(&format!("({cond}) OR false")));
    let mut clients = Vec::new();
    for (share, sql) in [
        ("on", &compiled),
        ("on", &generic),
        ("off", &compiled),
        ("off", &generic),
    ] {
        let c = connect(port).await;
        exec(&c, &format!("SET tcq.share_across_queries = {share}")).await;
        declare(&c, "q", sql).await;
        clients.push(c);
    }
    wait_for_queries(&admin, 4).await;
    exec(
        &admin,
        "INSERT INTO flights VALUES \
         ('2001-01-01 00:01', 5, 'ATL'), ('2001-01-01 00:02', NULL, 'SFO'), \
         ('2001-01-01 00:03', 2, 'ORD'), ('2001-01-01 00:04', 8, 'LAX'), \
         ('2001-01-01 00:05', 4, 'ATL'), ('2001-01-01 00:06', NULL, 'SFO'), \
         ('2001-01-01 00:07', 9, 'LAX'), ('2001-01-01 00:08', 6, 'DEN'), \
         ('2001-01-01 00:08', 3, 'BOS'), ('2001-01-01 00:09', 7, 'DEN'), \
         ('2001-01-01 00:09', 3, 'BOS'), \
         ('2001-01-01 00:11', 7, 'ORD'), ('2001-01-01 00:12', 1, 'ATL'), \
         ('2001-01-01 00:13', NULL, 'SFO'), ('2001-01-01 00:14', 3, 'ORD'), \
         ('2001-01-01 00:25', 1, 'ATL')",
    )
    .await;
    // [00:00, 00:10): ATL {5, 4} and DEN {6, 7} pass; ORD has one tuple, SFO's max is
    // NULL, LAX's max 9 is too high, BOS's average 3 too low. [00:10, 00:20): ORD {7, 3}.
    let want = common::table(&[
        &["ATL", "2001-01-01 00:10:00", "2", "5", "4.5000000000000000"],
        &["DEN", "2001-01-01 00:10:00", "2", "7", "6.5000000000000000"],
        &["ORD", "2001-01-01 00:20:00", "2", "7", "5.0000000000000000"],
    ]);
    for (i, c) in clients.iter().enumerate() {
        assert_eq!(rows(c, "FETCH 3 FROM q").await, want, "client {i}");
    }
    let ids = query_ids(&admin).await;
    let plan = plan_of(&admin, &ids[0]).await;
    assert_ne!(plan, "NULL");
    assert_eq!(
        plan_of(&admin, &ids[1]).await,
        plan,
        "both shared queries join one plan"
    );
}
