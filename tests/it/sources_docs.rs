//! The examples of docs/connectors.md, run as written: each `CREATE STREAM ... WITH
//! (connector = ...)` block against the broker (or directory) this test starts, with only
//! its address put in, and the `curl` example against a console. A broker that is not
//! installed skips its example with a message.

use crate::common::sources::wait_source;
use crate::common::{self, connect, exec};

/// The docs page's fenced blocks of `lang` that contain `needle`.
fn block(lang: &str, needle: &str) -> String {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/connectors.md"))
        .unwrap();
    let fence = format!("```{lang}\n");
    page.split(&fence)
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap().to_string())
        .find(|b| b.contains(needle))
        .unwrap_or_else(|| panic!("no {lang} block with {needle} in docs/connectors.md"))
}

#[tokio::test]
async fn the_kafka_example() {
    let Some(broker) = common::kafka::Broker::start() else {
        return;
    };
    broker.create_topic("flights", 2).await;
    let m = "{\"ts\": \"2001-01-01 00:00:00\", \"delay\": 5, \"distance\": 337, \"origin\": \"SFO\", \"destination\": \"LAX\"}";
    broker.produce("flights", 0, &[m.to_string()]).await;
    broker
        .produce("flights", 1, &[m.replace("SFO", "JFK")])
        .await;
    let c = connect(common::start_server()).await;
    let sql = block("sql", "topic = 'flights'").replace("127.0.0.1:9092", &broker.bootstrap());
    exec(&c, &sql).await;
    let r = wait_source(&c, "flights", 20, |r| r.messages == 2).await;
    assert_eq!((r.tuples, r.bad_messages), (2, 0));
}

#[tokio::test]
async fn the_mqtt_example() {
    let Some(broker) = common::mqtt::Mosquitto::start() else {
        return;
    };
    let c = connect(common::start_server()).await;
    let url = format!("tcp://127.0.0.1:{}", broker.port);
    exec(
        &c,
        &block("sql", "connector = 'mqtt'").replace("tcp://127.0.0.1:1883", &url),
    )
    .await;
    wait_source(&c, "readings", 20, |r| r.state == "running").await;
    let m = "{\"ts\": \"2001-01-01T00:00:00Z\", \"temp\": 21.5}".to_string();
    let start = std::time::Instant::now();
    while crate::common::sources::source_row(&c, "readings")
        .await
        .unwrap()
        .messages
        == 0
    {
        broker.publish(&[("sensors/kitchen/temp", m.clone())]).await;
        assert!(start.elapsed().as_secs() < 20, "no message through");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_nats_example() {
    let Some(server) = common::nats::NatsServer::start(None) else {
        return;
    };
    let c = connect(common::start_server()).await;
    exec(
        &c,
        &block("sql", "connector = 'nats'").replace("nats://127.0.0.1:4222", &server.url()),
    )
    .await;
    wait_source(&c, "temps", 20, |r| r.state == "running").await;
    let client = server.client(None).await;
    let m = "{\"ts\": \"2001-01-01T00:00:00Z\", \"temp\": 21.5}".to_string();
    let start = std::time::Instant::now();
    // The server takes the subscription asynchronously: publish until one arrives.
    while crate::common::sources::source_row(&c, "temps")
        .await
        .unwrap()
        .messages
        == 0
    {
        common::nats::publish_with(&client, &[("sensors.kitchen.temp", m.clone())]).await;
        assert!(start.elapsed().as_secs() < 20, "no message through");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let r = wait_source(&c, "temps", 20, |r| r.tuples >= 1).await;
    assert_eq!(r.bad_messages, 0);
}

#[tokio::test]
async fn the_file_example() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.csv"),
        "ts,delay,origin\n2001-01-01 00:00:00,5,SFO\n",
    )
    .unwrap();
    let c = connect(common::start_server()).await;
    let path = dir.path().display().to_string();
    exec(
        &c,
        &block("sql", "connector = 'file'").replace("/var/spool/arrivals", &path),
    )
    .await;
    let r = wait_source(&c, "arrivals", 20, |r| r.messages == 1).await;
    assert_eq!(r.bad_messages, 0);
}

#[tokio::test]
async fn the_curl_example() {
    if !common::have("curl", &["--version"]) {
        common::skip("curl is not installed");
        return;
    }
    let mut passwords = std::collections::HashMap::new();
    passwords.insert(
        "alice".to_string(),
        tcq::server::Verifier::from_password("pw"),
    );
    let ports = common::start_with_console(tcq::http::HttpOptions {
        passwords: Some(passwords),
        ..Default::default()
    });
    let c = common::connect_as(ports.pg, "alice", "pw").await.unwrap();
    exec(
        &c,
        "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, distance integer, \
         origin text, destination text); CREATE ROLE bob LOGIN PASSWORD 'secret'; \
         GRANT INSERT ON STREAM flights TO bob",
    )
    .await;
    let sh =
        block("sh", "/ingest/").replace("127.0.0.1:8080", &format!("127.0.0.1:{}", ports.http));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&sh)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{\"rows\":2}");
    let n: i64 = c
        .query_one("SELECT tuples FROM tcq_streams WHERE name = 'flights'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
}
