//! The runner jar: `flink/runner` (a Java class that runs an exported job's SQL through a
//! TableEnvironment) compiled with `javac` against a Flink distribution's `lib/`, packaged
//! with the job's script as the resource `tcq-job.sql`; and the planner check of a job
//! (`Runner --validate`), which adds `flink/validate`'s Kafka stand-in when the
//! distribution has no Kafka connector.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The runner's source (`flink/runner/tcq/flink/Runner.java`).
const RUNNER_JAVA: &str = include_str!("../../flink/runner/tcq/flink/Runner.java");
/// The Kafka stand-in for validation (`flink/validate/tcq/flink/ValidationFactory.java`).
const VALIDATION_JAVA: &str = include_str!("../../flink/validate/tcq/flink/ValidationFactory.java");
/// Its service registration.
const VALIDATION_SERVICE: &str =
    include_str!("../../flink/validate/META-INF/services/org.apache.flink.table.factories.Factory");

/// The runner's main class.
pub(crate) const ENTRY_CLASS: &str = "tcq.flink.Runner";

/// The Flink distribution: `explicit`, else `$FLINK_HOME`.
///
/// Errors: a message when neither names a directory with `lib/flink-dist-*.jar`.
pub(crate) fn flink_home(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let home = match explicit {
        Some(p) => p.to_path_buf(),
        None => std::env::var_os("FLINK_HOME")
            .map(PathBuf::from)
            .ok_or("no Flink distribution: give --flink-home or set FLINK_HOME")?,
    };
    let has_dist = std::fs::read_dir(home.join("lib"))
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("flink-dist"))
        })
        .unwrap_or(false);
    if !has_dist {
        return Err(format!(
            "{} is not a Flink distribution (no lib/flink-dist-*.jar)",
            home.display()
        ));
    }
    Ok(home)
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            text,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(text)
}

/// Whether the distribution's `lib/` holds a Kafka table connector.
fn has_kafka(home: &Path) -> bool {
    std::fs::read_dir(home.join("lib"))
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().contains("connector-kafka"))
        })
        .unwrap_or(false)
}

/// Compile the runner (and, with `validate`, the Kafka stand-in where the distribution has
/// no Kafka connector) into `dir/classes`.
fn compile(home: &Path, dir: &Path, validate: bool) -> Result<PathBuf, String> {
    let src = dir.join("src/tcq/flink");
    let classes = dir.join("classes");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&classes).map_err(|e| e.to_string())?;
    let mut files = vec![src.join("Runner.java")];
    std::fs::write(&files[0], RUNNER_JAVA).map_err(|e| e.to_string())?;
    if validate && !has_kafka(home) {
        let f = src.join("ValidationFactory.java");
        std::fs::write(&f, VALIDATION_JAVA).map_err(|e| e.to_string())?;
        files.push(f);
        let services = classes.join("META-INF/services");
        std::fs::create_dir_all(&services).map_err(|e| e.to_string())?;
        std::fs::write(
            services.join("org.apache.flink.table.factories.Factory"),
            VALIDATION_SERVICE,
        )
        .map_err(|e| e.to_string())?;
    }
    let cp = format!("{}/lib/*", home.display());
    run(
        Command::new("javac")
            .args(["-nowarn", "-d"])
            .arg(&classes)
            .args(["-cp", &cp])
            .args(&files),
        "compiling the Flink runner",
    )?;
    Ok(classes)
}

/// The job jar: the runner and `script` as `tcq-job.sql`, built in a temporary directory.
///
/// Errors: a message when `javac` or `jar` (a JDK) is missing or fails.
pub(crate) fn job_jar(home: &Path, script: &str) -> Result<Vec<u8>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let classes = compile(home, dir.path(), false)?;
    std::fs::write(classes.join("tcq-job.sql"), script).map_err(|e| e.to_string())?;
    let jar = dir.path().join("tcq-job.jar");
    run(
        Command::new("jar")
            .arg("cf")
            .arg(&jar)
            .arg("-C")
            .arg(&classes)
            .arg("."),
        "packaging the job jar",
    )?;
    std::fs::read(&jar).map_err(|e| e.to_string())
}

/// Plan `script` with Flink's planner on this machine (no cluster, no broker): the plans
/// `Runner --validate` prints.
///
/// Errors: the planner's message for a job it rejects (an unknown option, a bad type, a
/// query it cannot plan), or a missing JDK.
pub(crate) fn validate(home: &Path, script: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let classes = compile(home, dir.path(), true)?;
    let file = dir.path().join("tcq-job.sql");
    std::fs::write(&file, script).map_err(|e| e.to_string())?;
    let cp = format!("{}/lib/*:{}", home.display(), classes.display());
    run(
        Command::new("java")
            .args(["-cp", &cp, ENTRY_CLASS, "--validate"])
            .arg(&file),
        "validating the job",
    )
}
