//! The data directory is private to the user running tcqd (issue 29: it was 0755 with 0644
//! files, so any local user could read the roles' SCRAM verifiers and every archived
//! tuple): directories 0700 and files 0600 whatever the umask, checked with `stat`, and a
//! second user (`setpriv`, since root bypasses modes) can read none of it; a data directory
//! open to group or others is refused at start with the fix in the message.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::tcqd::Tcqd;

/// `stat -c %a PATH`: the mode's permission bits in octal.
fn stat_mode(path: &Path) -> String {
    let out = Command::new("stat")
        .args(["-c", "%a"])
        .arg(path)
        .output()
        .expect("run stat");
    assert!(out.status.success(), "stat {}", path.display());
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// tcqd on data directory `dir`, started by `sh` with umask 000.
fn start_with_umask_000(dir: &Path, extra: &[&str]) -> Tcqd {
    let mut command = Command::new("sh");
    command
        .args(["-c", "umask 000 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_tcqd"))
        .args(["--listen", "127.0.0.1:0", "--http", "off", "--data-dir"])
        .arg(dir)
        .args(extra);
    Tcqd::start_command(command)
}

/// Every path under `dir` with its mode, sorted.
fn modes_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = vec![(".".to_string(), stat_mode(dir))];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            out.push((name, stat_mode(&path)));
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_data_directory_is_private_whatever_the_umask() {
    let parent = tempfile::tempdir().unwrap();
    // Others may pass through the parent, so only the data directory's own modes decide.
    std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = parent.path().join("data");
    let server = start_with_umask_000(&dir, &["--seal-bytes", "2000"]);
    let c = common::connect(server.port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer) TYPE ARCHIVED; \
         CREATE TABLE t (k integer PRIMARY KEY); INSERT INTO t VALUES (1); \
         CREATE ROLE alice LOGIN PASSWORD 'wonderland'",
    )
    .await;
    for i in 0..20 {
        let values: Vec<String> = (0..50)
            .map(|j| format!("('2024-01-01 00:00:{:02}', {})", (i * 50 + j) / 20 % 60, j))
            .collect();
        common::exec(&c, &format!("INSERT INTO s VALUES {}", values.join(","))).await;
    }
    // Wait for a sealed segment (sealing runs after the statement that filled the log).
    let stream = dir.join("streams/s");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_dir(&stream).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".parquet")
    }) {
        assert!(std::time::Instant::now() < deadline, "no segment sealed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let modes = modes_under(&dir);
    let kinds: Vec<&str> = modes.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "catalog",
        "LOCK",
        "streams",
        "streams/s",
        "tables",
        "tables/t.tcqlog",
    ] {
        assert!(
            kinds.contains(&expected),
            "{expected} missing from {modes:?}"
        );
    }
    assert!(kinds.iter().any(|n| n.ends_with(".parquet")), "{modes:?}");
    assert!(kinds
        .iter()
        .any(|n| n.ends_with(".tcqlog") && n.starts_with("streams/")));
    for (name, mode) in &modes {
        let want = if dir.join(name).is_dir() {
            "700"
        } else {
            "600"
        };
        assert_eq!(mode, want, "{name} in {modes:?}");
    }
    // Another local user reads nothing: not the catalog with the SCRAM verifiers, not the
    // directory listing.
    if !common::have("setpriv", &["--version"]) {
        common::skip("setpriv is not installed (util-linux); the second-user check did not run");
        return;
    }
    for (what, args) in [
        (
            "the catalog",
            vec!["cat".to_string(), dir.join("catalog").display().to_string()],
        ),
        (
            "the directory",
            vec!["ls".to_string(), dir.display().to_string()],
        ),
    ] {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(&args)
            .output()
            .expect("run setpriv");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "another user read {what}");
        assert!(stderr.contains("Permission denied"), "{what}: {stderr}");
    }
}

#[test]
fn a_data_directory_open_to_others_is_refused_at_start() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    for mode in [0o755, 0o750, 0o701, 0o770] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
            .args(["--listen", "127.0.0.1:0", "--http", "off", "--data-dir"])
            .arg(&dir)
            .output()
            .expect("run tcqd");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "mode {mode:o}: {stderr}");
        let expected = format!(
            "tcqd: data directory {d} has group or world access (mode {mode:04o}); it must be private to the user running tcqd: chmod 0700 {d}",
            d = dir.display()
        );
        assert!(stderr.contains(&expected), "{stderr}");
        // Nothing was written into it.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let server = Tcqd::start([
        std::ffi::OsStr::new("--http"),
        "off".as_ref(),
        "--data-dir".as_ref(),
        dir.as_os_str(),
    ]);
    assert!(server.log_text().contains("tcq listening on"));
}
