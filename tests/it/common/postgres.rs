//! A throw-away PostgreSQL 15 cluster for differential tests: `initdb` into a temporary
//! directory, `pg_ctl start` on a free port of 127.0.0.1, `pg_ctl stop` when dropped.
//!
//! PostgreSQL refuses to run as root, so under root (as CI runs) the cluster belongs to the
//! `postgres` user that Debian's `postgresql` package creates, and initdb and pg_ctl run as
//! it through `runuser`. [`Cluster::start`] says why it cannot start (binaries missing, no
//! `postgres` user, another major version) so a test can skip with a visible message.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster; stopped (immediate mode) and its directory removed on drop.
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    run_as: Option<String>,
    /// The port it listens on, on 127.0.0.1; user `postgres`, trust authentication.
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// The directory of PostgreSQL 15's server programs, if installed.
fn bin_dir() -> Option<PathBuf> {
    let debian = Path::new("/usr/lib/postgresql/15/bin");
    if debian.join("initdb").exists() {
        return Some(debian.to_path_buf());
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.join("initdb").exists().then_some(dir)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Cluster {
    /// Start a cluster, or say why not.
    pub fn start() -> Result<Cluster, String> {
        let bin = bin_dir()
            .ok_or("PostgreSQL 15's server is not installed (apt-get install postgresql)")?;
        let version = Command::new(bin.join("postgres"))
            .arg("--version")
            .output()
            .map_err(|e| format!("postgres --version: {e}"))?;
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        if !version.contains("PostgreSQL) 15.") {
            return Err(format!(
                "the comparison is with PostgreSQL 15, and this is `{version}`"
            ));
        }
        // SAFETY: geteuid(2) has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let run_as = root.then(|| "postgres".to_string());
        let dir = tempfile::Builder::new()
            .prefix("tcq-pg-")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        if root {
            let status = Command::new("chown")
                .args(["postgres:", &dir.path().to_string_lossy()])
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !status.success() {
                return Err(
                    "running as root and there is no `postgres` user to own the cluster".into(),
                );
            }
        }
        let mut cluster = Cluster {
            data: dir.path().join("data"),
            bin,
            run_as,
            port: free_port(),
            _dir: dir,
        };
        cluster.init()?;
        cluster.launch()?;
        Ok(cluster)
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    fn init(&self) -> Result<(), String> {
        // C.UTF-8 sorts text by code point, as tcq does, and lower()/upper() know Unicode.
        let out = self
            .command("initdb")
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "-D",
            ])
            .arg(&self.data)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    fn launch(&mut self) -> Result<(), String> {
        let mut last = String::new();
        for _ in 0..5 {
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c TimeZone=UTC",
                self.port,
                self.data
                    .parent()
                    .expect("data in the temporary directory")
                    .display()
            );
            let out = self
                .command("pg_ctl")
                .args(["start", "-w", "-t", "60", "-l"])
                .arg(self.data.join("log"))
                .arg("-D")
                .arg(&self.data)
                .args(["-o", &options])
                .output()
                .map_err(|e| format!("pg_ctl start: {e}"))?;
            if out.status.success() {
                return Ok(());
            }
            last = std::fs::read_to_string(self.data.join("log")).unwrap_or_default();
            self.port = free_port();
        }
        Err(format!("pg_ctl start failed: {last}"))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["stop", "-m", "immediate", "-D"])
            .arg(&self.data)
            .output();
    }
}
