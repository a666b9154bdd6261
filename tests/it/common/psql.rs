//! The psql runner of `tests/psql_regress.rs`: a script through the real `psql` 15
//! against a fresh in-process server, as pg_regress runs it (`psql -X -a -q`), with the
//! caller's PG* variables removed so the output does not depend on them.

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A script that has not finished by then is killed, which its output says.
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);

/// PostgreSQL's client variables that would change psql's connection or output.
pub const PG_VARIABLES: &[&str] = &[
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
pub fn psql_missing() -> Option<String> {
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

/// A `psql` command for the server on `port` (user and database `regress`), with the
/// caller's PG* variables removed.
pub fn command(port: u16) -> Command {
    let mut command = Command::new("psql");
    for variable in PG_VARIABLES {
        command.env_remove(variable);
    }
    command
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGUSER", "regress")
        .env("PGDATABASE", "regress");
    command
}

/// Run one script through psql against a fresh server; returns what psql printed, stdout
/// and stderr interleaved as written, with the port replaced by `<port>`.
pub fn run_script(root: &Path, script: &Path, actual_path: &Path) -> String {
    let port = super::start_server();
    let output = File::create(actual_path).expect("create the output file");
    let mut command = command(port);
    command
        .args(["-X", "-a", "-q"])
        .current_dir(root)
        .stdin(File::open(script).expect("open the script"))
        .stdout(output.try_clone().expect("clone the output file"))
        .stderr(output);
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
