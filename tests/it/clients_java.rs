//! The Java client in clients/java/TcqJdbc.java against a real in-process server, through
//! pgjdbc's own APIs: CopyManager copyIn and copyOut, batched PreparedStatement INSERTs, a
//! ResultSet read through a portal (autocommit off and setFetchSize), the same in binary
//! from an unbounded query closed after three rows, and Statement.cancel. The test compiles
//! the program with javac against the pgjdbc jar and runs it; it is skipped, with a message,
//! when a JDK or the jar is missing (.ci/run installs Debian's libpostgresql-jdbc-java; set
//! TCQ_PGJDBC_JAR to use another jar).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const DEBIAN_JAR: &str = "/usr/share/java/postgresql.jar";

/// The pgjdbc jar to compile and run against, if there is one.
fn pgjdbc_jar() -> Option<PathBuf> {
    let jar =
        std::env::var_os("TCQ_PGJDBC_JAR").map_or_else(|| PathBuf::from(DEBIAN_JAR), PathBuf::from);
    jar.exists().then_some(jar)
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The child's output once it exits; killed (and the test failed) past `limit`, so a hung
/// client cannot hang the test run.
fn wait_at_most(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("poll the child").is_none() {
        if Instant::now() > deadline {
            child.kill().ok();
            let output = child.wait_with_output().expect("reap the child");
            panic!(
                "the client did not finish within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("collect the output")
}

#[test]
fn pgjdbc_ingests_and_streams_by_every_api() {
    if !has("javac") || !has("java") {
        common::skip(
            "no JDK (javac and java) is installed (apt-get install openjdk-17-jdk-headless)",
        );
        return;
    }
    let Some(jar) = pgjdbc_jar() else {
        common::skip(&format!(
            "pgjdbc is not installed ({DEBIAN_JAR}: apt-get install libpostgresql-jdbc-java, or set TCQ_PGJDBC_JAR)"
        ));
        return;
    };
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/java/TcqJdbc.java");
    let classes = Path::new(env!("CARGO_TARGET_TMPDIR")).join("clients_java");
    std::fs::create_dir_all(&classes).expect("create the class directory");
    let javac = Command::new("javac")
        .arg("-cp")
        .arg(&jar)
        .arg("-d")
        .arg(&classes)
        .arg(&source)
        .output()
        .expect("run javac");
    assert!(
        javac.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&javac.stderr)
    );

    let port = common::start_server();
    let classpath = std::env::join_paths([classes.as_path(), jar.as_path()]).expect("classpath");
    let child = Command::new("java")
        .arg("-cp")
        .arg(classpath)
        .arg("TcqJdbc")
        .arg(port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run java");
    let output = wait_at_most(child, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "TcqJdbc failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // The window ending at :10 holds a (tuples at :01 and :05, sum 4) and b (:03, 2); the
    // one ending at :20 holds a (:12, 10); the tuple at :25 closes it.
    let rows = |api: &str| {
        format!(
            "{api}: a 2 4 2001-01-01 00:00:10\n{api}: b 1 2 2001-01-01 00:00:10\n{api}: a 1 10 2001-01-01 00:00:20\n"
        )
    };
    let expected =
        ["copy_out", "fetch_size", "live_binary"].map(rows).concat() + "cancel: 57014\ndone\n";
    assert_eq!(stdout, expected, "stderr:\n{stderr}");
}
