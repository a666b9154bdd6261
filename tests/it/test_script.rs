//! scripts/test.sh, the README's test command, run with a stand-in `cargo` on PATH: it
//! passes its arguments through, keeps cargo's exit status, and closes with the skips the
//! tests recorded (through `common::skip`) and one line of totals (issue 29: a skipped test
//! reported a plain `ok`, and its reason showed only with --nocapture).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// A stand-in cargo: prints what libtest prints for two binaries, records two skips the
/// way `common::skip` does, and exits with `status`.
fn fake_cargo(dir: &Path, status: i32) {
    let script = format!(
        "#!/bin/sh\n\
         echo \"args: $*\"\n\
         echo 'test result: ok. 7 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s'\n\
         echo 'test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s'\n\
         printf 'clients_python::a\\tpython3 lacks psycopg\\n' >> \"$TCQ_SKIP_LOG\"\n\
         printf 'tls::b\\tpython3 lacks psycopg\\n' >> \"$TCQ_SKIP_LOG\"\n\
         exit {status}\n"
    );
    let path = dir.join("cargo");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_test_script_passes_arguments_through_and_sums_up_the_skips() {
    let bin = tempfile::tempdir().unwrap();
    fake_cargo(bin.path(), 101);
    let log = bin.path().join("skips.log");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = Command::new("bash")
        .arg(root.join("scripts/test.sh"))
        .args(["--test", "it", "archive::"])
        .env("PATH", path)
        .env("TCQ_TEST_NO_INSTALL", "1")
        .env("TCQ_SKIP_LOG", &log)
        .env("TCQ_TEST_OUTPUT", bin.path().join("output.log"))
        .output()
        .expect("run scripts/test.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(101),
        "cargo's status is kept\n{stdout}"
    );
    assert!(
        stdout.contains("args: test --no-fail-fast --test it archive::"),
        "{stdout}"
    );
    let tail: Vec<&str> = stdout.lines().rev().take(4).collect();
    assert_eq!(
        tail,
        [
            "tests: 8 passed, 2 failed, 2 skipped",
            "  tls::b: python3 lacks psycopg",
            "  clients_python::a: python3 lacks psycopg",
            "skipped: 2 tests (python3 lacks psycopg x2)",
        ],
        "{stdout}"
    );
}

/// `common::skip`'s record is the line the script reads: the test's name (its thread's,
/// as libtest names it), a tab, the reason on one line.
#[test]
fn a_skip_is_recorded_with_the_test_name() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    let name = std::thread::current().name().unwrap().to_string();
    common::record_skip(&log, &name, "no tool");
    common::record_skip(&log, "other::test", "another reason");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text,
        "test_script::a_skip_is_recorded_with_the_test_name\tno tool\nother::test\tanother reason\n"
    );
}
