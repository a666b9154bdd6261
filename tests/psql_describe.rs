//! psql against tcq: the catalog queries psql sends (`\d` and friends) run on the
//! relational engine over tcq's system catalogs, and errors show psql's caret and hint.
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

/// `sql/psql/catalog.sql` run through the real psql (`-a`: each command echoed before its
/// output) against a fresh server gives exactly `sql/psql/expected/catalog.out`: psql's
/// `\d` family, `\l`, `\dn`, `\df`, `\dx`, `\conninfo` and plain SQL over the catalogs and
/// information_schema, errors included. `TCQ_REGRESS_BLESS=1` rewrites the expectation.
#[tokio::test]
async fn psql_catalog_script_gives_its_expected_output() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sql/psql");
    let script = std::fs::read_to_string(root.join("catalog.sql")).unwrap();
    let port = start_server();
    if Command::new("psql").arg("--version").output().is_err() {
        eprintln!("psql is not installed: skipping the psql catalog script");
        return;
    }
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        // Through a shell so that errors (stderr) stay in place among the results.
        let mut child = Command::new("sh")
            .args([
                "-c",
                &format!("psql -h 127.0.0.1 -p {port} -U tcq -d tcq -X -a -f - 2>&1"),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap().stdout
    })
    .await
    .unwrap();
    let actual =
        String::from_utf8_lossy(&out).replace(&format!("at port \"{port}\""), "at port \"PORT\"");
    let path = root.join("expected/catalog.out");
    if std::env::var_os("TCQ_REGRESS_BLESS").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines().chain(std::iter::repeat("<missing>")))
            .filter(|(e, a)| e != a)
            .take(20)
            .map(|(e, a)| format!("expected: {e}\n  actual: {a}"))
            .collect();
        panic!(
            "psql output differs from sql/psql/expected/catalog.out:\n{}\n--- actual ---\n{actual}",
            diff.join("\n")
        );
    }
}
