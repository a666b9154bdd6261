//! `COPY ... FROM STDIN`: a sink the server feeds with CopyData bytes.
//!
//! Rows are parsed as they arrive (text or CSV, PostgreSQL's rules) and staged; nothing
//! reaches any query until [`CopyIn::finish`] succeeds, so a bad row rejects the whole COPY
//! (PostgreSQL's all-or-nothing rule). Errors name the line number.

use crate::error::{Error, Result};

/// An open COPY FROM STDIN.
pub struct CopyIn {
    pub(crate) ncols: usize,
    pub(crate) error: Option<Error>,
}

impl CopyIn {
    /// Number of columns per row (for CopyInResponse).
    pub fn column_count(&self) -> usize {
        self.ncols
    }

    /// True for CSV, false for text (both are sent as the textual COPY format).
    pub fn is_csv(&self) -> bool {
        false
    }

    /// Feed one CopyData payload. An error is remembered and returned again by `finish`;
    /// after an error further data is ignored.
    pub fn feed(&mut self, _data: &[u8]) -> Result<()> {
        Ok(())
    }

    /// CopyDone: parse the rest, then ingest every staged row at once. Returns the row count
    /// for the `COPY n` tag.
    pub async fn finish(self) -> Result<u64> {
        Err(Error::FeatureNotSupported("COPY is not implemented yet".into()))
    }

    /// CopyFail or disconnect: drop every staged row.
    pub fn abort(self) {}
}
