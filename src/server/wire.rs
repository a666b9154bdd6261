//! The connection as the handlers see it: a [`Wire`] to write messages to, and builders for
//! the messages tcq sends.
//!
//! pgwire hands every handler a generic client `C` with a long list of trait bounds. The
//! handlers erase it once into `&mut dyn Wire` (see [`Client`]) so that the query logic in
//! the sibling modules is ordinary, non-generic code. Messages are fed (buffered) by default;
//! the logic flushes explicitly when the producer goes idle, which is what makes continuous
//! results arrive promptly without a syscall per row.

use std::borrow::Borrow;
use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::BytesMut;
use futures::{Sink, SinkExt};
use pgwire::api::results::Tag;
use pgwire::api::{ClientInfo, PgWireConnectionState};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::copy::CopyData;
use pgwire::messages::data::{DataRow, FieldDescription, RowDescription};
use pgwire::messages::response::{
    CommandComplete, ErrorResponse, NoticeResponse, TransactionStatus,
};
use pgwire::messages::PgWireBackendMessage;

pub(crate) use super::encode::FieldFormat;
use super::out_bytes::OutBytes;
use crate::engine::{Session, TxStatus};
use crate::error::Error;
use crate::types::{Column, DataType, Value};

/// The write side of one client connection, with the bits of connection state the query
/// logic changes.
#[async_trait]
pub(crate) trait Wire: Send {
    /// Buffer a message.
    async fn feed(&mut self, msg: PgWireBackendMessage) -> PgWireResult<()>;
    /// Buffer messages in order, leaving `msgs` empty (its capacity is kept for the next
    /// call): one call for a slide event's rows, not one per row.
    async fn feed_all(&mut self, msgs: &mut Vec<PgWireBackendMessage>) -> PgWireResult<()>;
    /// Buffer CopyData messages the caller framed itself (type byte `d`, length, body),
    /// after every message fed before; they are written out with the next flush, or at
    /// once when [`FRAMED_BYTES`] wait. Leaves `framed` empty, perhaps holding another
    /// buffer's allocation (see [`OutBytes::append`]).
    async fn write_copy_data(&mut self, framed: &mut Vec<u8>) -> PgWireResult<()>;
    /// Write out everything buffered.
    async fn flush(&mut self) -> PgWireResult<()>;
    /// Change pgwire's protocol state (COPY in progress, ready for query).
    fn set_state(&mut self, state: PgWireConnectionState);
    /// Tell pgwire the transaction status it reports in the ReadyForQuery it sends itself
    /// (after COPY and after errors it handles).
    fn set_tx(&mut self, tx: TransactionStatus);
}

/// Bytes of framed messages ([`Wire::write_framed`]) that wait before they are written.
pub(crate) const FRAMED_BYTES: usize = 64 << 10;

/// The adapter from pgwire's generic client to [`Wire`].
pub(crate) struct Client<'a, C> {
    inner: &'a mut C,
    /// Messages may wait in the codec's buffer (fed since the last flush, or before this
    /// adapter was made): framed bytes must not pass them.
    fed: bool,
    /// The connection's buffer of framed messages, found on first use.
    out: Option<Arc<OutBytes>>,
}

impl<'a, C> Client<'a, C>
where
    C: Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    /// Feed the framed CopyData messages of `framed` to the codec one by one.
    async fn feed_copy_data(&mut self, framed: &[u8]) -> PgWireResult<()> {
        self.fed = true;
        let data = bytes::Bytes::copy_from_slice(framed);
        let mut at = 0;
        while at + 5 <= data.len() {
            let len = u32::from_be_bytes([data[at + 1], data[at + 2], data[at + 3], data[at + 4]]);
            let end = (at + 1 + len as usize).min(data.len());
            let body = data.slice(at + 5..end);
            self.inner
                .feed(PgWireBackendMessage::CopyData(CopyData::new(body)))
                .await?;
            at = end;
        }
        Ok(())
    }
}

impl<'a, C> Client<'a, C> {
    /// The adapter for one handler call.
    pub(crate) fn new(inner: &'a mut C) -> Client<'a, C> {
        Client {
            inner,
            fed: true,
            out: None,
        }
    }
}

#[async_trait]
impl<C> Wire for Client<'_, C>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
    C::Error: Debug,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    async fn feed(&mut self, msg: PgWireBackendMessage) -> PgWireResult<()> {
        self.fed = true;
        Ok(self.inner.feed(msg).await?)
    }

    async fn feed_all(&mut self, msgs: &mut Vec<PgWireBackendMessage>) -> PgWireResult<()> {
        self.fed = true;
        for msg in msgs.drain(..) {
            self.inner.feed(msg).await?;
        }
        Ok(())
    }

    async fn write_copy_data(&mut self, framed: &mut Vec<u8>) -> PgWireResult<()> {
        if self.out.is_none() {
            self.out = self.inner.session_extensions().get::<OutBytes>();
        }
        let Some(out) = self.out.clone() else {
            // A socket without the guard's buffer: the messages go through the codec.
            let fed = self.feed_copy_data(framed).await;
            framed.clear();
            return fed;
        };
        if self.fed {
            self.flush().await?;
        }
        if out.append(framed) >= FRAMED_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> PgWireResult<()> {
        self.fed = false;
        Ok(SinkExt::<PgWireBackendMessage>::flush(self.inner).await?)
    }

    fn set_state(&mut self, state: PgWireConnectionState) {
        self.inner.set_state(state);
    }

    fn set_tx(&mut self, tx: TransactionStatus) {
        self.inner.set_transaction_status(tx);
    }
}

/// The ReadyForQuery indicator for a session's transaction status.
pub(crate) fn session_tx(session: &Session) -> TransactionStatus {
    match session.tx_status() {
        TxStatus::InBlock => TransactionStatus::Transaction,
        TxStatus::Failed => TransactionStatus::Error,
        TxStatus::Idle => TransactionStatus::Idle,
    }
}

/// An ErrorResponse for an engine error, with its SQLSTATE.
pub(crate) fn error_info(e: &Error) -> ErrorInfo {
    let mut info = ErrorInfo::new("ERROR".into(), super::sqlstate(e).into(), e.to_string());
    info.position = e.position().map(|p| p.to_string());
    info.hint = e.hint().map(str::to_string);
    info.detail = e.detail().map(str::to_string);
    info.where_context = e.context().map(str::to_string);
    info
}

/// A protocol-level error that has no engine variant (unknown prepared statement, ...).
pub(crate) fn server_error(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        code.into(),
        message.into(),
    )))
}

/// An engine error as the `Err` a pgwire handler returns (pgwire then sends it and, in the
/// extended protocol, skips to the next Sync).
pub(crate) fn user_error(e: &Error) -> PgWireError {
    PgWireError::UserError(Box::new(error_info(e)))
}

/// The ErrorResponse message for an engine error.
pub(crate) fn error_message(e: &Error) -> PgWireBackendMessage {
    PgWireBackendMessage::ErrorResponse(ErrorResponse::from(error_info(e)))
}

/// A NOTICE message without a code of its own (00000): a query's notices about windows
/// and time.
pub(crate) fn notice_message(text: &str) -> PgWireBackendMessage {
    coded_notice_message(&crate::engine::Notice::from(text))
}

/// A NOTICE (or WARNING) message with the notice's severity and SQLSTATE.
pub(crate) fn coded_notice_message(n: &crate::engine::Notice) -> PgWireBackendMessage {
    let info = ErrorInfo::new(n.severity.into(), n.sqlstate.into(), n.message.clone());
    PgWireBackendMessage::NoticeResponse(NoticeResponse::from(info))
}

/// The NOTICE (42622) PostgreSQL's scanner sends for an identifier longer than 63 bytes.
pub(crate) fn truncation_notice(written: &str, cut: &str) -> PgWireBackendMessage {
    let info = ErrorInfo::new(
        "NOTICE".into(),
        "42622".into(),
        format!("identifier \"{written}\" will be truncated to \"{cut}\""),
    );
    PgWireBackendMessage::NoticeResponse(NoticeResponse::from(info))
}

/// A CommandComplete message with the tag as given (`SELECT 3`, `INSERT 0 1`, `BEGIN`).
pub(crate) fn complete(tag: &str) -> PgWireBackendMessage {
    PgWireBackendMessage::CommandComplete(CommandComplete::new(tag.to_string()))
}

/// A CommandComplete `<command> <rows>` (`SELECT 5`, `COPY 10`).
pub(crate) fn complete_rows(command: &str, rows: u64) -> PgWireBackendMessage {
    let tag = Tag::new(command).with_rows(rows as usize);
    PgWireBackendMessage::CommandComplete(tag.into())
}

/// The on-wire size of a type (`typlen`): fixed widths, or -1 for variable-length types.
fn type_size(ty: DataType) -> i16 {
    match ty {
        DataType::Bool => 1,
        DataType::Int2 => 2,
        DataType::Int4 | DataType::Float4 | DataType::Date => 4,
        DataType::Int8
        | DataType::Float8
        | DataType::Timestamp
        | DataType::TimestampTz
        | DataType::Time => 8,
        DataType::Interval => 16,
        DataType::Numeric | DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) => -1,
    }
}

/// The type modifier PostgreSQL reports: `n + 4` for `varchar(n)` and `character(n)`,
/// else -1.
fn type_modifier(ty: DataType) -> i32 {
    match ty {
        DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) => n as i32 + 4,
        _ => -1,
    }
}

/// A RowDescription for `columns`, each with its format.
pub(crate) fn row_description(columns: &[Column], formats: &[FieldFormat]) -> PgWireBackendMessage {
    let fields = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let ty = c.data_type;
            let format = formats.get(i).is_some_and(|f| f.is_binary()) as i16;
            let (size, modifier) = match c.catalog_type {
                Some(t) => (t.size(), -1),
                None => (type_size(ty), type_modifier(ty)),
            };
            FieldDescription::new(c.name.clone(), 0, 0, c.type_oid(), size, modifier, format)
        })
        .collect();
    PgWireBackendMessage::RowDescription(RowDescription::new(fields))
}

/// A DataRow for `row`, each field in its format.
pub(crate) fn data_row<'a, R>(
    row: R,
    formats: &[FieldFormat],
    scratch: &mut String,
) -> PgWireBackendMessage
where
    R: IntoIterator<Item = &'a Value>,
    R::IntoIter: ExactSizeIterator,
{
    data_row_in(row, formats, scratch, &mut BytesMut::new())
}

/// [`data_row`], its fields written into `buf` and cut from it: rows encoded one after
/// the other share `buf`'s allocation instead of one each.
pub(crate) fn data_row_in<R>(
    row: R,
    formats: &[FieldFormat],
    scratch: &mut String,
    buf: &mut BytesMut,
) -> PgWireBackendMessage
where
    R: IntoIterator,
    R::Item: std::borrow::Borrow<Value>,
    R::IntoIter: ExactSizeIterator,
{
    let row = row.into_iter();
    let n = row.len();
    debug_assert!(buf.is_empty(), "a row's fields start an empty buffer");
    if buf.capacity() < 16 * n {
        buf.reserve(ROW_BUFFER_BYTES.max(16 * n));
    }
    for (i, v) in row.enumerate() {
        let format = formats.get(i).copied().unwrap_or(FieldFormat::Text);
        super::encode::put_field(v.borrow(), format, buf, scratch);
    }
    PgWireBackendMessage::DataRow(DataRow::new(buf.split(), n as i16))
}

/// Bytes a shared row buffer grows by when it runs short.
const ROW_BUFFER_BYTES: usize = 64 << 10;

/// Per-column formats from a Bind's result format codes: none = all text, one = all
/// columns, else one per column.
pub(crate) fn field_formats(codes: &[i16], columns: &[Column]) -> Vec<FieldFormat> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let binary = match codes {
                [] => false,
                [one] => *one == 1,
                many => many.get(i).copied() == Some(1),
            };
            FieldFormat::of(c, binary)
        })
        .collect()
}

/// Text format for every column (the simple query protocol).
pub(crate) fn text_formats(columns: &[Column]) -> Vec<FieldFormat> {
    vec![FieldFormat::Text; columns.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::CatalogType;

    #[test]
    fn result_format_codes_expand_per_column() {
        use FieldFormat::{Binary, BinaryAs, Text};
        let c = |n: usize| vec![Column::new("x", DataType::Int4); n];
        assert_eq!(field_formats(&[], &c(2)), vec![Text, Text]);
        assert_eq!(field_formats(&[1], &c(3)), vec![Binary, Binary, Binary]);
        assert_eq!(field_formats(&[0, 1], &c(2)), vec![Text, Binary]);
        let oid = Column::catalog("oid", CatalogType::Oid);
        assert_eq!(
            field_formats(&[1], std::slice::from_ref(&oid)),
            vec![BinaryAs(CatalogType::Oid)]
        );
        assert_eq!(field_formats(&[0], &[oid]), vec![Text]);
    }

    #[test]
    fn varchar_reports_its_length_as_type_modifier() {
        assert_eq!(type_modifier(DataType::Varchar(Some(10))), 14);
        assert_eq!(type_modifier(DataType::Text), -1);
        assert_eq!(type_size(DataType::Interval), 16);
    }
}
