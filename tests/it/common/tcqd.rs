//! The `tcqd` binary as a child process, for tests that need a real restart (a data
//! directory reopened) or the command line's flags.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running tcqd listening on 127.0.0.1 (a random port), killed when dropped.
pub struct Tcqd {
    /// The process.
    pub child: Child,
    /// The port it listens on.
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Tcqd {
    /// Start tcqd with `args` after `--listen 127.0.0.1:0`; waits (at most 30 s) until it
    /// logs the address it listens on.
    pub fn start<I, S>(args: I) -> Tcqd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tcqd"));
        command.args(["--listen", "127.0.0.1:0"]).args(args);
        Tcqd::start_command(command)
    }

    /// Start `command`, which runs tcqd with `--listen 127.0.0.1:0` (through `sh -c` or
    /// `setpriv`, say); waits as [`Tcqd::start`] does.
    pub fn start_command(mut command: Command) -> Tcqd {
        let mut child = command
            .env("RUST_LOG", "info")
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tcqd");
        let stderr = child.stderr.take().expect("tcqd's stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // Logged before the port is reported, so the log holds the line by then.
                let port = line
                    .split("tcq listening on ")
                    .nth(1)
                    .and_then(|addr| addr.trim().rsplit(':').next()?.parse::<u16>().ok());
                lines.lock().expect("log lock").push(line);
                if let Some(port) = port {
                    let _ = port_tx.send(port);
                }
            }
        });
        let port = port_rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("tcqd did not start: {:?}", log.lock()));
        Tcqd { child, port, log }
    }

    /// What tcqd has logged so far, one line each.
    pub fn log_text(&self) -> String {
        self.log.lock().expect("log lock").join("\n")
    }
}

impl Drop for Tcqd {
    /// A failing test kills its server too.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
