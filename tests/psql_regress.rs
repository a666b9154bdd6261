//! psql regression tests, as PostgreSQL's pg_regress runs them: every `sql/psql/NAME.sql`
//! goes through the real `psql` 15 against a fresh in-process server, and what psql prints
//! is compared exactly with `sql/psql/expected/NAME.out`.
//!
//! ```text
//! cargo test --test psql_regress                          # run every script
//! TCQ_REGRESS_ONLY=cursors cargo test --test psql_regress # scripts whose name contains "cursors"
//! TCQ_REGRESS_BLESS=1 cargo test --test psql_regress      # rewrite the expected files
//! ```
//!
//! (The same variables as `tests/regress.rs`, whose scripts under `sql/` run through
//! tokio-postgres; these run through psql, so they pin what a psql user sees: aligned
//! tables, `LINE 1:` carets, HINTs, `\conninfo`, `\copy`, `\set FETCH_COUNT`.)
//!
//! Each script runs as `psql -X -a -q < NAME.sql > NAME.out 2>&1` does in pg_regress: the
//! input is echoed, command tags are not printed, and errors land in the output where they
//! happen. The connection comes from PGHOST, PGPORT, PGUSER (`regress`) and PGDATABASE
//! (`regress`); other PG* variables of the caller's environment are removed so the output
//! does not depend on them. The server's port, which changes from run to run, is written
//! `<port>` in the output. A script that reads a continuous query starts a feeder in the
//! background with `\! sh sql/psql/feed.sh N psql-args &` (see that file): it waits until N
//! queries are registered, then sends its tuples. A script that does not finish within
//! 60 s is killed, which the output says. On a mismatch the test prints `diff -u` of
//! expected and actual and leaves the actual output in `target/tmp/psql_regress/NAME.out`.
//!
//! Skipped, with a message, when psql is missing or is not version 15 (other versions
//! format some output differently); .ci/run installs Debian's psql 15.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);

/// Scripts under sql/psql/ that another test runs its own way: `catalog.sql` is run by
/// tests/psql_describe.rs with psql's command tags (`psql -a`, without `-q`).
const OTHER_RUNNERS: &[&str] = &["catalog"];

/// PostgreSQL's client variables that would change psql's connection or output.
const PG_VARIABLES: &[&str] = &[
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGUSER",
    "PGDATABASE",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGOPTIONS",
    "PGAPPNAME",
    "PGTZ",
    "PGDATESTYLE",
    "PGCLIENTENCODING",
    "PGSSLMODE",
    "PGCONNECT_TIMEOUT",
    "PSQLRC",
    "PSQL_PAGER",
    "PAGER",
    "PSQL_HISTORY",
];

/// `Some(reason)` when this machine's psql cannot run the suite.
fn psql_missing() -> Option<String> {
    let Ok(out) = Command::new("psql").arg("--version").output() else {
        return Some("psql is not installed (apt-get install postgresql-client)".into());
    };
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !version.starts_with("psql (PostgreSQL) 15.") {
        return Some(format!(
            "the expected output is psql 15's, and this psql is `{version}`"
        ));
    }
    None
}

#[test]
fn psql_scripts_give_their_expected_output() {
    if let Some(reason) = psql_missing() {
        eprintln!("SKIPPED: {reason}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("TCQ_REGRESS_BLESS").is_some();
    let only = std::env::var("TCQ_REGRESS_ONLY").ok();
    let actual_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("psql_regress");
    std::fs::create_dir_all(&actual_dir).expect("create the actual-output directory");

    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root.join("sql/psql"))
        .expect("read sql/psql/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .filter(|p| {
            p.file_stem()
                .is_some_and(|n| !OTHER_RUNNERS.iter().any(|o| n == *o))
        })
        .filter(|p| {
            only.as_deref()
                .is_none_or(|o| p.to_string_lossy().contains(o))
        })
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "no scripts under sql/psql/");

    let mut failures = Vec::new();
    for script in &scripts {
        let name = script.file_stem().unwrap().to_string_lossy().into_owned();
        let actual_path = actual_dir.join(format!("{name}.out"));
        let actual = run_script(root, script, &actual_path);
        std::fs::write(&actual_path, &actual).expect("write actual");
        let expected_path = root.join("sql/psql/expected").join(format!("{name}.out"));
        if bless {
            std::fs::write(&expected_path, &actual).expect("write expected");
            eprintln!("blessed {}", expected_path.display());
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected == actual {
            eprintln!("ok       {name}");
        } else {
            eprintln!("FAILED   {name}\n{}", diff(&expected_path, &actual_path));
            failures.push(name);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} psql scripts differ from their expected output: {}\n(actual output in {})",
        failures.len(),
        scripts.len(),
        failures.join(", "),
        actual_dir.display()
    );
}

/// Run one script through psql against a fresh server; returns what psql printed, stdout
/// and stderr interleaved as written, with the port replaced by `<port>`.
fn run_script(root: &Path, script: &Path, actual_path: &Path) -> String {
    let port = common::start_server();
    let output = File::create(actual_path).expect("create the output file");
    let mut command = Command::new("psql");
    command
        .args(["-X", "-a", "-q"])
        .current_dir(root)
        .stdin(File::open(script).expect("open the script"))
        .stdout(output.try_clone().expect("clone the output file"))
        .stderr(output);
    for variable in PG_VARIABLES {
        command.env_remove(variable);
    }
    command
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGUSER", "regress")
        .env("PGDATABASE", "regress");
    let mut child = command.spawn().expect("run psql");
    let deadline = Instant::now() + SCRIPT_TIMEOUT;
    let mut note = String::new();
    while child.try_wait().expect("poll psql").is_none() {
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            note = format!("-- runner: psql did not finish within {SCRIPT_TIMEOUT:?}; killed\n");
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let printed = std::fs::read_to_string(actual_path).expect("read psql's output");
    printed.replace(&format!("\"{port}\""), "\"<port>\"") + &note
}

/// `diff -u expected actual`, as pg_regress shows a failure.
fn diff(expected: &Path, actual: &Path) -> String {
    match Command::new("diff")
        .arg("-u")
        .arg(expected)
        .arg(actual)
        .output()
    {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(e) => format!("(diff is not available: {e}; compare the two files)"),
    }
}
