//! Issue 31, NATS: a stream fed from a real nats-server through a core NATS subscription:
//! wildcard subjects (`*`, `>`), the subject as a column, exact rows, bad messages
//! counted with their subject, PAUSE/RESUME (at most once: what is published while paused
//! is not delivered), a server stopped and started again (state `retrying`, then
//! `running`, and new messages flow), and credentials never shown. Skipped with a message
//! when nats-server is not installed.

use crate::common::nats::{publish_with, NatsServer};
use crate::common::sources::{fetch, text_of, wait_source};
use crate::common::{self, connect, exec};

fn reading(t: i64, temp: f64) -> String {
    format!("{{\"ts\": \"2001-01-01T00:00:{t:02}Z\", \"temp\": {temp}}}")
}

/// The server takes the source's subscription asynchronously: publish probes (negative
/// temperatures) on `subject` until one comes through the cursor `probes`. Probes still
/// in flight when the first arrives go to that cursor, never to the one the test checks.
async fn wait_subscribed(client: &async_nats::Client, c: &tokio_postgres::Client, subject: &str) {
    let start = std::time::Instant::now();
    loop {
        publish_with(client, &[(subject, reading(0, -99.0))]).await;
        if !fetch(c, "probes", 1, 1).await.is_empty() {
            return;
        }
        assert!(start.elapsed().as_secs() < 20, "no message through");
    }
}

#[tokio::test]
async fn wildcards_subject_column_bad_messages_and_pause() {
    let Some(server) = NatsServer::start(None) else {
        return;
    };
    let c = connect(common::start_server()).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM n (ts timestamptz TIMESTAMPCOLUMN, temp double precision, subject text) \
             WITH (connector = 'nats', url = '{}', subject = 'sensors.*.temp', \
             subject_column = 'subject', format = 'json')",
            server.url()
        ),
    )
    .await;
    wait_source(&c, "n", 20, |r| r.state == "running").await;
    exec(
        &c,
        "SET TimeZone = 'UTC'; BEGIN; \
         DECLARE probes CURSOR FOR SELECT temp FROM n WHERE subject = 'sensors.z.temp'; \
         DECLARE q CURSOR FOR SELECT ts, temp, subject FROM n WHERE subject <> 'sensors.z.temp'",
    )
    .await;
    let client = server.client(None).await;
    wait_subscribed(&client, &c, "sensors.z.temp").await;
    publish_with(
        &client,
        &[
            ("sensors.a.temp", reading(1, 20.5)),
            ("sensors.b.temp", reading(2, 21.0)),
            ("sensors.b.humidity", reading(3, 50.0)),
            ("sensors.b.c.temp", reading(3, 51.0)),
            (
                "sensors.a.temp",
                "{\"ts\": \"2001-01-01T00:00:04Z\", \"temp\": \"hot\"}".into(),
            ),
            ("sensors.c.temp", reading(5, -1.25)),
        ],
    )
    .await;
    let mut rows = fetch(&c, "q", 3, 20).await;
    rows.sort();
    assert_eq!(
        rows,
        common::table(&[
            &["2001-01-01 00:00:01+00", "20.5", "sensors.a.temp"],
            &["2001-01-01 00:00:02+00", "21", "sensors.b.temp"],
            &["2001-01-01 00:00:05+00", "-1.25", "sensors.c.temp"],
        ])
    );
    let r = wait_source(&c, "n", 20, |r| r.bad_messages == 1).await;
    assert_eq!(
        r.last_error.as_deref(),
        Some("subject sensors.a.temp: column \"temp\": invalid input syntax for type double precision: \"hot\"")
    );
    assert_eq!((r.messages - r.tuples, r.bad_messages), (0, 1));
    // Paused, the source is not subscribed: core NATS keeps nothing for it, so what is
    // published meanwhile is not delivered (at most once); after RESUME new messages are.
    exec(&c, "ALTER STREAM n PAUSE").await;
    wait_source(&c, "n", 20, |r| r.state == "paused").await;
    let missed: Vec<(&str, String)> = (50..60)
        .map(|i| ("sensors.p.temp", reading(i, i as f64)))
        .collect();
    publish_with(&client, &missed).await;
    exec(&c, "ALTER STREAM n RESUME").await;
    wait_source(&c, "n", 20, |r| r.state == "running").await;
    wait_subscribed(&client, &c, "sensors.z.temp").await;
    let later: Vec<(&str, String)> = (10..40)
        .map(|i| ("sensors.p.temp", reading(i, i as f64)))
        .collect();
    publish_with(&client, &later).await;
    let rows = fetch(&c, "q", 30, 20).await;
    let temps: Vec<String> = rows.iter().map(|r| r[1].clone()).collect();
    assert_eq!(temps, (10..40).map(|i| i.to_string()).collect::<Vec<_>>());
    assert!(fetch(&c, "q", 1, 1).await.is_empty());
    exec(&c, "COMMIT").await;
}

#[tokio::test]
async fn a_server_stopped_and_restarted_is_retrying_then_running() {
    let Some(mut server) = NatsServer::start(None) else {
        return;
    };
    let c = connect(common::start_server()).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM r (ts timestamptz TIMESTAMPCOLUMN, temp double precision) \
             WITH (connector = 'nats', url = '{}', subject = 'plant.>')",
            server.url()
        ),
    )
    .await;
    wait_source(&c, "r", 20, |r| r.state == "running").await;
    exec(
        &c,
        "BEGIN; DECLARE probes CURSOR FOR SELECT temp FROM r WHERE temp < 0; \
         DECLARE q CURSOR FOR SELECT temp FROM r WHERE temp >= 0",
    )
    .await;
    let client = server.client(None).await;
    wait_subscribed(&client, &c, "plant.probe").await;
    let first: Vec<(&str, String)> = (0..20).map(|i| ("plant.a", reading(i, i as f64))).collect();
    publish_with(&client, &first).await;
    let got = fetch(&c, "q", 20, 20).await;
    let temps: Vec<i64> = got.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(temps, (0..20).collect::<Vec<_>>());
    drop(client);
    server.stop();
    let r = wait_source(&c, "r", 30, |r| r.state == "retrying").await;
    assert_eq!(
        r.last_error,
        Some(format!("nats {}: disconnected; reconnecting", server.url()))
    );
    server.start_again();
    wait_source(&c, "r", 30, |r| r.state == "running").await;
    let client = server.client(None).await;
    wait_subscribed(&client, &c, "plant.probe").await;
    let second: Vec<(&str, String)> = (20..40)
        .map(|i| ("plant.b.c", reading(i, i as f64)))
        .collect();
    publish_with(&client, &second).await;
    let got = fetch(&c, "q", 20, 20).await;
    let temps: Vec<i64> = got.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(temps, (20..40).collect::<Vec<_>>(), "in order, once");
    exec(&c, "COMMIT").await;
}

const PASSWORD: &str = "n4ts-s3cret-pw";

#[tokio::test]
async fn credentials_are_used_and_never_shown() {
    let Some(server) = NatsServer::start(Some(("alice", PASSWORD))) else {
        return;
    };
    let c = connect(common::start_server()).await;
    let create = |name: &str, password: &str| {
        format!(
            "CREATE STREAM {name} (ts timestamptz TIMESTAMPCOLUMN, temp double precision) \
             WITH (connector = 'nats', url = '{}', subject = 'secure.>', \
             user = 'alice', password = '{password}')",
            server.url()
        )
    };
    exec(&c, &create("s", PASSWORD)).await;
    exec(&c, &create("w", &format!("not-{PASSWORD}"))).await;
    wait_source(&c, "s", 20, |r| r.state == "running").await;
    let refused = wait_source(&c, "w", 20, |r| r.state == "retrying").await;
    let error = refused.last_error.unwrap();
    assert!(
        error.starts_with(&format!("nats {}: ", server.url())),
        "{error}"
    );
    assert!(error.contains("authorization"), "{error}");
    exec(
        &c,
        "BEGIN; DECLARE probes CURSOR FOR SELECT temp FROM s WHERE temp < 0",
    )
    .await;
    let client = server.client(Some(("alice", PASSWORD))).await;
    wait_subscribed(&client, &c, "secure.probe").await;
    let r = wait_source(&c, "s", 20, |r| r.messages >= 1).await;
    assert!(r.options.contains("password = '********'"), "{}", r.options);
    let mut shown = text_of(&c, "SELECT * FROM tcq_sources").await;
    shown += &text_of(&c, "EXPLAIN SELECT * FROM s").await;
    shown += &text_of(&c, "SELECT query FROM pg_stat_activity").await;
    assert!(shown.contains("alice"), "{shown}");
    assert!(!shown.contains(PASSWORD), "{shown}");
    exec(&c, "COMMIT").await;
}

#[tokio::test]
async fn bad_nats_options_have_postgres_sqlstates() {
    let c = connect(common::start_server()).await;
    let create = |options: &str| {
        format!(
            "CREATE STREAM e (ts timestamptz TIMESTAMPCOLUMN, temp double precision, topic text) \
             WITH (connector = 'nats', {options})"
        )
    };
    for (options, state, message) in [
        (
            "url = 'nats://127.0.0.1:4222', subject = 'a.>.b'",
            "22023",
            "invalid value for option \"subject\" of connector 'nats': \"a.>.b\" (expected dot-separated tokens, * for one token, > for the rest at the end)",
        ),
        (
            "url = 'nats://alice:pw@127.0.0.1:4222', subject = 'a'",
            "22023",
            "invalid value for option \"url\" of connector 'nats': \"...\" (credentials go in the options user and password, or token, never in the url)",
        ),
        (
            "url = 'nats://127.0.0.1:4222', subject = 'a', password = 'pw'",
            "22023",
            "connector 'nats' authenticates with user and password together, or with token alone",
        ),
        (
            "url = 'nats://127.0.0.1:4222', subject = 'a', stream = 'S', durable = 'd'",
            "0A000",
            "option \"stream\" of connector 'nats': JetStream consumers are not supported; a nats source is a core NATS subscription (at most once)",
        ),
        (
            "url = 'nats://127.0.0.1:4222', subject = 'a', topic_column = 'topic'",
            "22023",
            "unrecognized option \"topic_column\" for connector 'nats'; the options are connector, delimiter, format, header, on_error, password, paused, queue_group, subject, subject_column, timestamp_format, token, url, user",
        ),
    ] {
        let sql = create(options);
        let e = c.batch_execute(&sql).await.expect_err(&sql);
        assert_eq!(common::sqlstate(&e), state, "{sql}");
        assert_eq!(e.as_db_error().unwrap().message(), message, "{sql}");
    }
}
