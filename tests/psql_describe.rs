//! psql's `\d` family against tcq: the catalog queries psql sends are answered from tcq's
//! catalog (DESIGN.md section 1, "enough of pg_catalog for psql's \d").
//!
//! Runs the real `psql` binary; the test says so and passes without checking when psql is
//! not installed (CI installs it).

mod common;

use std::process::Command;

use common::{connect, start_server};

fn psql(port: u16, command: &str) -> Option<String> {
    let out = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "tcq",
            "-d",
            "tcq",
            "-X",
            "-c",
            command,
        ])
        .output()
        .ok()?;
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

#[tokio::test]
async fn backslash_d_lists_and_describes_streams() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(
        "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text); \
         CREATE STREAM network.tcpdump (src text, bytes bigint)",
    )
    .await
    .unwrap();
    let port_ = port;
    let Some(list) = tokio::task::spawn_blocking(move || psql(port_, "\\d"))
        .await
        .unwrap()
    else {
        eprintln!("psql is not installed: skipping the \\d checks");
        return;
    };
    assert!(list.contains(" network | tcpdump | stream | tcq"), "{list}");
    assert!(list.contains(" public  | flights | stream | tcq"), "{list}");
    let one = tokio::task::spawn_blocking(move || psql(port, "\\d flights"))
        .await
        .unwrap()
        .unwrap();
    assert!(one.contains("Table \"public.flights\""), "{one}");
    assert!(
        one.contains(" ts     | timestamp without time zone |           | not null |"),
        "{one}"
    );
    assert!(one.contains(" delay  | integer "), "{one}");
    // Tables are listed beside streams, with their NOT NULL and key columns.
    c.batch_execute(
        "CREATE TABLE airports (code text PRIMARY KEY, city text NOT NULL, state varchar(2))",
    )
    .await
    .unwrap();
    let both = tokio::task::spawn_blocking(move || {
        (
            psql(port, "\\dt").unwrap(),
            psql(port, "\\d airports").unwrap(),
        )
    })
    .await
    .unwrap();
    assert!(
        both.0.contains(" public  | airports | table  | tcq"),
        "{}",
        both.0
    );
    assert!(
        both.0.contains(" public  | flights  | stream | tcq"),
        "{}",
        both.0
    );
    assert!(both.1.contains("Table \"public.airports\""), "{}", both.1);
    assert!(
        both.1
            .contains(" code   | text                 |           | not null |"),
        "{}",
        both.1
    );
    assert!(
        both.1
            .contains(" state  | character varying(2) |           |          |"),
        "{}",
        both.1
    );
    let missing = tokio::task::spawn_blocking(move || psql(port, "\\d nope"))
        .await
        .unwrap()
        .unwrap();
    assert!(
        missing.contains("Did not find any relation named \"nope\""),
        "{missing}"
    );
}

/// psql shows an error's position as its `LINE 1:` caret and prints the hint, as it does
/// for PostgreSQL's "Perhaps you meant to reference the column" errors.
#[tokio::test]
async fn psql_shows_error_positions_and_hints() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute("CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer)")
        .await
        .unwrap();
    let Some(out) = tokio::task::spawn_blocking(move || psql(port, "SELECT delya FROM flights"))
        .await
        .unwrap()
    else {
        eprintln!("psql is not installed: skipping the error position checks");
        return;
    };
    assert_eq!(
        out,
        "ERROR:  column \"delya\" does not exist\n\
         LINE 1: SELECT delya FROM flights\n\
         \x20              ^\n\
         HINT:  Perhaps you meant to reference the column \"flights.delay\".\n"
    );
}
