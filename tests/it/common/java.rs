//! Running one of the single-file programs of `tests/java/` with the system's Java and
//! Debian's pgjdbc jar (.ci/run installs both).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// Debian's pgjdbc jar (package libpostgresql-jdbc-java).
pub const JAR: &str = "/usr/share/java/postgresql.jar";

/// Run `tests/java/<program>` with `args` on the class path of [`JAR`]; returns its stdout
/// and stderr once it exits, and fails the test (showing both) when it exits unsuccessfully.
/// `None`, after printing why the test is skipped, when Java or the jar is missing.
pub fn run<I, S>(program: &str, args: I) -> Option<(String, String)>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    if !super::have("java", &["-version"]) || !Path::new(JAR).exists() {
        super::skip(&format!(
            "java or {JAR} is missing \
             (apt-get install openjdk-17-jdk-headless libpostgresql-jdbc-java)"
        ));
        return None;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/java")
        .join(program);
    let out = Command::new("java")
        .args(["-cp", JAR])
        .arg(&path)
        .args(args)
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{program}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    Some((stdout, stderr))
}
