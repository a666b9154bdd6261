//! The data directory is private to the user running `tcqd`, as PostgreSQL's is: the
//! catalog holds the roles' SCRAM verifiers and the archive holds every tuple.
//!
//! Directories are created with mode 0700 and files with mode 0600, whatever the umask (a
//! umask only ever removes bits, and these have none for group or others). A data directory
//! that group or others may read, write or enter is refused at start with a message naming
//! the fix, as PostgreSQL's postmaster refuses one (tcq does not take PostgreSQL's optional
//! 0750 group mode).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// Mode of every directory tcq creates under (and for) the data directory.
pub(crate) const DIR_MODE: u32 = 0o700;

/// Mode of every file tcq creates in the data directory.
pub(crate) const FILE_MODE: u32 = 0o600;

/// `mkdir -p` with mode 0700 for every directory it creates.
pub(crate) fn create_dir_all(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
}

/// Open options that create files with mode 0600 (other options as `OpenOptions::new`).
pub(crate) fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.mode(FILE_MODE);
    o
}

/// Create (or truncate) `path` for writing, mode 0600 when it is new.
pub(crate) fn create(path: &Path) -> std::io::Result<File> {
    options().write(true).create(true).truncate(true).open(path)
}

/// Refuse data directory `dir` when group or others have any access to it. Errors: 58030
/// (Io) naming the directory, its mode and `chmod 0700`, or when it cannot be stat()ed.
pub(crate) fn check_private(dir: &Path) -> Result<()> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| Error::Io(format!("cannot stat data directory {}: {e}", dir.display())))?;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Error::Io(format!(
            "data directory {} has group or world access (mode {mode:04o}); it must be private to the user running tcqd: chmod 0700 {}",
            dir.display(),
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_private_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        create_dir_all(&nested).unwrap();
        create(&nested.join("f")).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&nested), 0o700);
        assert_eq!(mode(&nested.join("f")), 0o600);
        check_private(&nested).unwrap();
        std::fs::set_permissions(&nested, std::fs::Permissions::from_mode(0o750)).unwrap();
        let e = check_private(&nested).unwrap_err().to_string();
        assert!(e.contains("mode 0750") && e.contains("chmod 0700"), "{e}");
    }
}
