//! Where a large COPY stages its rows (see `spill`): a directory this server owns, so that
//! a restart removes what a killed server left there (before, each COPY staged under
//! `$TMPDIR`, and a SIGKILL left its file behind for good).
//!
//! With a data directory it is `DIR/staging`, emptied at start under the data directory's
//! lock. Without one (`--memory-only`, or an engine embedded with [`super::Engine::new`]) it
//! is a directory of the engine's own, `$TMPDIR/tcq-staging-<uid>/<pid>-<n>`, beside a file
//! `<pid>-<n>.lock` that the engine holds flock()ed for its life; at start every engine
//! removes the directories whose lock nobody holds (their server is gone). The parent is
//! created with mode 0700 and must be a directory owned by the user running tcqd (not a
//! symlink), since `$TMPDIR` is shared with every local user.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::private_fs;

/// The name of the staging directory inside a data directory.
pub(crate) const STAGING_DIR: &str = "staging";

/// Engines created by this process, to tell their private directories apart.
static ENGINES: AtomicU64 = AtomicU64::new(0);

/// The directory COPY staging files are created in, for the life of an engine.
pub(crate) struct Staging {
    /// The directory, or why there is none (every COPY that would stage then fails with it).
    dir: Result<PathBuf, String>,
    /// The flock()ed lock file of a private directory under `$TMPDIR`; dropping the
    /// engine releases it, and the next engine to start removes the directory.
    _lock: Option<File>,
}

impl Staging {
    /// `DIR/staging` of data directory `data_dir`, emptied of what a crashed server left.
    /// The caller holds the data directory's lock.
    pub(crate) fn in_data_dir(data_dir: &Path) -> Staging {
        let dir = data_dir.join(STAGING_DIR);
        let made = remove_if_present(&dir)
            .and_then(|()| private_fs::create_dir_all(&dir))
            .map(|()| dir.clone())
            .map_err(|e| {
                format!(
                    "cannot prepare the staging directory {}: {e}",
                    dir.display()
                )
            });
        Staging {
            dir: made,
            _lock: None,
        }
    }

    /// A private directory under `$TMPDIR/tcq-staging-<uid>`, after removing the
    /// directories there whose engine is gone.
    pub(crate) fn private_temp() -> Staging {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let parent = std::env::temp_dir().join(format!("tcq-staging-{uid}"));
        match Staging::private_in(&parent, uid) {
            Ok((dir, lock)) => Staging {
                dir: Ok(dir),
                _lock: Some(lock),
            },
            Err(e) => Staging {
                dir: Err(format!(
                    "cannot prepare a staging directory under {}: {e}",
                    parent.display()
                )),
                _lock: None,
            },
        }
    }

    fn private_in(parent: &Path, uid: u32) -> std::io::Result<(PathBuf, File)> {
        private_fs::create_dir_all(parent)?;
        let meta = std::fs::symlink_metadata(parent)?;
        if !meta.is_dir() || meta.uid() != uid {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "not a directory owned by the user running tcqd",
            ));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700))?;
        }
        remove_abandoned(parent);
        let name = format!(
            "{}-{}",
            std::process::id(),
            ENGINES.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(&name);
        // The directory first, then its lock: a lock file alone is what a crash between
        // the two leaves, and the next start removes it.
        remove_if_present(&dir)?;
        private_fs::create_dir_all(&dir)?;
        let lock = private_fs::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(parent.join(format!("{name}.lock")))?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((dir, lock))
    }

    /// The directory to stage in. Errors: why there is none (58030 to the COPY).
    pub(crate) fn dir(&self) -> crate::Result<&Path> {
        self.dir.as_deref().map_err(|e| crate::Error::Io(e.clone()))
    }
}

impl Drop for Staging {
    /// An engine that ends (an embedded one, or a test's) removes its private directory
    /// under `$TMPDIR`; one under a data directory stays, emptied at the next start.
    fn drop(&mut self) {
        if let (Some(_), Ok(dir)) = (&self._lock, &self.dir) {
            let _ = std::fs::remove_dir_all(dir);
            let _ = std::fs::remove_file(dir.with_extension("lock"));
        }
    }
}

/// Remove `path` (a directory and everything in it) when it exists.
fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Remove every `<name>` directory of `parent` whose `<name>.lock` nobody holds, and the
/// lock file; errors are logged and skipped (a directory that stays is only disk space).
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".lock") else {
            continue;
        };
        let lock_path = entry.path();
        let Ok(lock) = File::open(&lock_path) else {
            continue;
        };
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            continue; // its engine is running
        }
        let dir = parent.join(stem);
        match remove_if_present(&dir) {
            Ok(()) => {
                let _ = std::fs::remove_file(&lock_path);
                tracing::info!("removed {}, left by a server that is gone", dir.display());
            }
            Err(e) => tracing::warn!("cannot remove {}: {e}", dir.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_engines_directory_is_removed_a_running_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        // SAFETY: as above.
        let uid = unsafe { libc::geteuid() };
        let (running, _lock) = Staging::private_in(parent.path(), uid).unwrap();
        let (gone, lock) = Staging::private_in(parent.path(), uid).unwrap();
        std::fs::write(gone.join("stage"), b"rows").unwrap();
        drop(lock);
        let (third, _lock3) = Staging::private_in(parent.path(), uid).unwrap();
        assert!(running.exists() && third.exists());
        assert!(
            !gone.exists(),
            "the directory of a released lock is removed"
        );
        assert!(!gone.with_extension("lock").exists());
    }

    #[test]
    fn a_dropped_engine_removes_its_directory() {
        let parent = tempfile::tempdir().unwrap();
        // SAFETY: as above.
        let uid = unsafe { libc::geteuid() };
        let (dir, lock) = Staging::private_in(parent.path(), uid).unwrap();
        std::fs::write(dir.join("stage"), b"rows").unwrap();
        drop(Staging {
            dir: Ok(dir.clone()),
            _lock: Some(lock),
        });
        assert!(!dir.exists() && !dir.with_extension("lock").exists());
    }

    #[test]
    fn a_data_directorys_staging_starts_empty() {
        let data = tempfile::tempdir().unwrap();
        let left = data.path().join(STAGING_DIR).join("tcq-copy-x");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join("stage"), b"rows").unwrap();
        let staging = Staging::in_data_dir(data.path());
        let dir = staging.dir().unwrap();
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
