//! Issue 31, Kafka SASL: a source whose login the broker refuses (Tansu started with
//! `--authentication`, which holds no users) says so in `tcq_sources` and keeps retrying;
//! its password shows nowhere: not in `tcq_sources`, EXPLAIN, psql's `\d`, or the server's
//! log. Skipped with a message when Tansu is not installed.

use crate::common::kafka::Broker;
use crate::common::sources::{text_of, wait_source};
use crate::common::tcqd::Tcqd;
use crate::common::{self, connect, exec};

const PASSWORD: &str = "n0t-Th3-pa55word";

#[tokio::test]
async fn a_refused_sasl_login_is_retrying_and_the_password_is_never_shown() {
    let Some(broker) = Broker::start_authenticating() else {
        return;
    };
    let t = Tcqd::start(["--memory-only", "--http", "off"]);
    let c = connect(t.port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, id bigint) WITH (connector = 'kafka', \
             topic = 't', bootstrap_servers = '{}', sasl_mechanism = 'scram-sha-256', \
             sasl_username = 'alice', sasl_password = '{PASSWORD}', group_id = 'g')",
            broker.bootstrap()
        ),
    )
    .await;
    let r = wait_source(&c, "s", 30, |r| {
        r.state == "retrying" && r.last_error.is_some()
    })
    .await;
    let error = r.last_error.unwrap();
    assert!(
        error.starts_with(&format!(
            "kafka {}: SASL SCRAM-SHA-256 authentication of user \"alice\" failed: ",
            broker.bootstrap()
        )),
        "{error}"
    );
    assert!(error.ends_with("unknown user"), "{error}");
    assert_eq!(r.messages, 0);
    assert!(
        r.options.contains("sasl_password = '********'"),
        "{}",
        r.options
    );
    let mut shown = text_of(&c, "SELECT * FROM tcq_sources").await;
    shown += &text_of(&c, "EXPLAIN SELECT * FROM s").await;
    shown += &text_of(&c, "SELECT query FROM pg_stat_activity").await;
    if common::psql::psql_missing().is_none() {
        let out = common::psql::command(t.port)
            .args([
                "-X",
                "-c",
                "\\d s",
                "-c",
                "\\d+ s",
                "-c",
                "\\dS+ tcq_sources",
            ])
            .output()
            .expect("psql");
        shown += &String::from_utf8_lossy(&out.stdout);
        shown += &String::from_utf8_lossy(&out.stderr);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("ts"),
            "{shown}"
        );
    }
    assert!(!shown.contains(PASSWORD), "{shown}");
    let log = t.log_text();
    assert!(log.contains("SASL"), "the refusal is logged: {log}");
    assert!(!log.contains(PASSWORD), "{log}");
}
