//! tcq against a real PostgreSQL 15 for what the read-query differential (`pg_differential`)
//! cannot express: statements whose answer is a command tag, a WARNING or NOTICE, or an
//! error in the middle of a session (DML with RETURNING and ON CONFLICT, constraints and
//! their SQLSTATEs, transaction blocks and their warnings, overflow and division errors).
//!
//! Each script in `pg_qa/*.sql` runs through the real `psql` 15 (`psql -X -a` with
//! `VERBOSITY=sqlstate`, so an error or warning prints as its severity and SQLSTATE) once
//! against tcq and once against PostgreSQL, and the two outputs must be equal line for line:
//! tags, rows, notices, SQLSTATEs, and column types where a script asks `\gdesc`. Every
//! script drops what it creates, and orders the rows it prints.
//!
//! ```text
//! cargo test --test it pg_qa::
//! ```
//!
//! Without PostgreSQL 15's server programs or psql 15 the test is skipped with a message.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common;

/// What psql printed for `script` against the server on `port`, stdout and stderr
/// interleaved as written.
fn run(script: &Path, port: u16, out: &Path) -> String {
    let file = File::create(out).expect("create the output file");
    let mut command = common::psql::command(port);
    command
        .env("PGUSER", "postgres")
        .env("PGDATABASE", "postgres")
        .env("PGTZ", "UTC")
        .args(["-X", "-a", "-v", "VERBOSITY=sqlstate"])
        .stdin(File::open(script).expect("open the script"))
        .stdout(file.try_clone().expect("clone the output file"))
        .stderr(file);
    let mut child = command.spawn().expect("run psql");
    let deadline = Instant::now() + common::psql::SCRIPT_TIMEOUT;
    while child.try_wait().expect("poll psql").is_none() {
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            return std::fs::read_to_string(out).unwrap_or_default() + "-- killed: no end\n";
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::read_to_string(out).expect("read psql's output")
}

/// The first lines where `a` and `b` differ, with a line of context before each.
fn first_differences(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut shown = String::new();
    let mut count = 0;
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        if x != y {
            let before = i.checked_sub(1).and_then(|j| a.get(j)).unwrap_or(&"");
            shown += &format!(
                "  line {}: after `{before}`\n    tcq: {}\n    pg:  {}\n",
                i + 1,
                x.unwrap_or("<end>"),
                y.unwrap_or("<end>")
            );
            count += 1;
            if count == 5 {
                break;
            }
        }
    }
    shown
}

fn scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/pg_qa");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read tests/it/pg_qa")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    scripts.sort();
    scripts
}

#[test]
fn sessions_answer_as_postgresql_15_does() {
    if let Some(reason) = common::psql::psql_missing() {
        common::skip(&reason);
        return;
    }
    let cluster = match common::postgres::Cluster::start() {
        Ok(c) => c,
        Err(reason) => {
            common::skip(&reason);
            return;
        }
    };
    let tcq_port = common::start_server();
    let dir = common::golden::actual_dir("pg_qa");
    let mut failures = String::new();
    let scripts = scripts();
    assert!(scripts.len() >= 4, "the scripts of tests/it/pg_qa");
    for script in &scripts {
        let name = script.file_stem().unwrap().to_string_lossy().to_string();
        let tcq_out = dir.join(format!("{name}.tcq.out"));
        let pg_out = dir.join(format!("{name}.pg.out"));
        let (tcq, pg) = (
            run(script, tcq_port, &tcq_out),
            run(script, cluster.port, &pg_out),
        );
        // The scripts exist for their errors and warnings: a script whose PostgreSQL
        // output has none tests less than it claims.
        assert!(
            pg.contains("ERROR:") && pg.lines().count() > 20,
            "{name}.sql against PostgreSQL printed too little:\n{pg}"
        );
        if tcq != pg {
            failures += &format!(
                "{name}.sql ({} vs {}):\n{}",
                tcq_out.display(),
                pg_out.display(),
                first_differences(&tcq, &pg)
            );
        }
    }
    assert!(
        failures.is_empty(),
        "tcq answers differently from PostgreSQL 15:\n{failures}"
    );
}
