//! `connector = 'file'`: rows appended to a file, one line each.
//!
//! Each batch is encoded whole, then written with one `write_all` at the end of the file
//! and, with `fsync = 'batch'` (the default), fsynced before the batch counts as written
//! (the sink's position is saved after that, so a crash of tcqd or of the machine loses
//! no batch it counted; one written but not counted is written again after a restart).
//! With `fsync = 'off'` the operating system decides when the bytes reach the disk: a
//! crash of tcqd loses nothing, a crash of the machine may lose the last batches while the
//! sink's position says they were written. With `rotate_bytes`, a batch that would take
//! the file past that size first renames it to `<path>.<n>` (the next free n from 1) and
//! starts a new file; a CSV header, if asked for, begins each file. The file is created
//! with mode 0600 (other users may not read what the server writes).
//!
//! A file removed or renamed away is opened (created) again at the next batch. A write
//! error (a full disk, the directory removed) fails the batch: the engine retries it, and a file left with part of the batch at its end is cut back to where the batch
//! began first, so a retried batch is never half there twice.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::encode;
use super::spec::{FileSinkSpec, SinkFormat, SinkFormatKind};
use super::{SinkBatch, Writer};

/// Appends batches to the sink's file.
pub(super) struct FileWriter {
    spec: FileSinkSpec,
    format: SinkFormat,
    /// The file's state; taken by the blocking thread while it writes.
    state: Option<FileState>,
}

/// What the blocking writes work on.
struct FileState {
    spec: FileSinkSpec,
    /// The open file and its length, after the first batch.
    file: Option<(std::fs::File, u64)>,
}

impl FileWriter {
    pub(super) fn new(spec: FileSinkSpec, format: SinkFormat) -> FileWriter {
        FileWriter {
            format,
            state: Some(FileState {
                spec: spec.clone(),
                file: None,
            }),
            spec,
        }
    }
}

impl FileState {
    /// The open file and its length, opening (creating) it if needed.
    fn open(&mut self) -> std::io::Result<&mut (std::fs::File, u64)> {
        if self
            .file
            .as_ref()
            .is_some_and(|(f, _)| !self.still_at_path(f))
        {
            // Removed or renamed away since the last batch: a write to the open file would
            // reach no reader (or one that went elsewhere), so the path is opened again,
            // and a batch whose directory is gone fails and is retried.
            tracing::warn!(
                "file sink: {} is no longer the file written; opening it again",
                self.spec.path.display()
            );
            self.file = None;
        }
        if self.file.is_none() {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&self.spec.path)?;
            let len = f.metadata()?.len();
            self.file = Some((f, len));
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    /// Whether `path` still names the open file `f` (same device and inode).
    fn still_at_path(&self, f: &std::fs::File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(&self.spec.path), f.metadata()) {
            (Ok(p), Ok(o)) => p.dev() == o.dev() && p.ino() == o.ino(),
            _ => false,
        }
    }

    /// Rename the full file to `<path>.<n>` (n the first free number) and forget it.
    fn rotate(&mut self) -> std::io::Result<()> {
        self.file = None;
        let rotated = next_free(&self.spec.path);
        std::fs::rename(&self.spec.path, &rotated)?;
        tracing::info!(
            "file sink: {} rotated to {}",
            self.spec.path.display(),
            rotated.display()
        );
        Ok(())
    }

    /// Append `body` (whole lines), after `header` when the file is new.
    fn append(&mut self, header: Option<&str>, body: &[u8]) -> std::io::Result<()> {
        let len = self.open()?.1;
        if let Some(max) = self.spec.rotate_bytes {
            if len > 0 && len + body.len() as u64 > max {
                self.rotate()?;
            }
        }
        let fsync = self.spec.fsync;
        let (f, len) = self.open()?;
        let start = *len;
        let mut bytes = Vec::with_capacity(body.len() + 64);
        if let (0, Some(h)) = (start, header) {
            bytes.extend_from_slice(h.as_bytes());
        }
        bytes.extend_from_slice(body);
        let written = f
            .write_all(&bytes)
            .and_then(|()| if fsync { f.sync_data() } else { Ok(()) });
        match written {
            Ok(()) => {
                *len = start + bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Cut a partial write back, so the retried batch is whole once.
                let _ = f.set_len(start);
                self.file = None;
                Err(e)
            }
        }
    }
}

/// `<path>.<n>` for the first n from 1 that names no file.
fn next_free(path: &Path) -> PathBuf {
    let mut n = 1u64;
    loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        let candidate = PathBuf::from(name);
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

#[async_trait::async_trait]
impl Writer for FileWriter {
    async fn write(&mut self, batch: &SinkBatch<'_>) -> Result<(), String> {
        let mut body = String::new();
        for row in batch.rows {
            encode::line(batch.columns, row, self.format, &mut body);
        }
        let header = (self.format.kind == SinkFormatKind::Csv && self.format.header).then(|| {
            let mut h = String::new();
            encode::csv_header(batch.columns, self.format.delimiter, &mut h);
            h
        });
        // (A write whose thread failed left no state: the file is opened again.)
        let mut state = self.state.take().unwrap_or_else(|| FileState {
            spec: self.spec.clone(),
            file: None,
        });
        // The file's writes and fsync run on a blocking thread, not on an async worker.
        let (state, r) = tokio::task::spawn_blocking(move || {
            let r = state.append(header.as_deref(), body.as_bytes());
            let r = r.map_err(|e| format!("{}: {e}", state.spec.path.display()));
            (state, r)
        })
        .await
        .map_err(|e| format!("file sink: {e}"))?;
        self.state = Some(state);
        r
    }
}
