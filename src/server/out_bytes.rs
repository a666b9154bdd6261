//! Protocol messages a handler frames itself, written to the socket past pgwire's codec.
//!
//! pgwire's codec takes one message value at a time and copies its body into the
//! connection's write buffer. A COPY TO result of many short rows (a slide event a second)
//! paid that per row: a message value, a reference-counted slice of the row's text, the
//! codec's call and a copy of a few dozen bytes. [`OutBytes`] is a second write buffer that
//! whole, already framed messages are appended to in bulk (a block's CopyData messages at
//! once); the socket's [`Guarded`](super::guard::Guarded) writer drains it before any byte
//! of the codec's buffer, so messages keep their order as long as the codec's buffer was
//! flushed before the bytes were appended (see `Wire::write_framed`).
//!
//! Design decision: one row per CopyData message, as PostgreSQL sends COPY TO; psycopg's
//! `Copy.rows()` reads a message as one row.

use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use tokio::io::AsyncWrite;

/// Framed backend messages waiting for the socket, shared by a connection's handlers
/// (through pgwire's session extensions) and its socket writer.
#[derive(Default)]
pub(crate) struct OutBytes(Mutex<BytesMut>);

impl OutBytes {
    /// Append whole, framed messages (type byte, length, body); returns the bytes now
    /// waiting.
    pub(crate) fn append(&self, framed: &[u8]) -> usize {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        buf.extend_from_slice(framed);
        buf.len()
    }

    /// Write what waits to `inner`; ready once nothing is left.
    pub(crate) fn drain<S: AsyncWrite + Unpin>(
        &self,
        inner: &mut S,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        while !buf.is_empty() {
            match Pin::new(&mut *inner).poll_write(cx, &buf) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => buf.advance(n),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// Fill in the length field of each CopyData message of `framed`: message `i` runs from
/// `ends[i - 1]` (0 for the first) to `ends[i]` and starts with its type byte and a
/// four-byte placeholder, as [`copy_block`](super::encode::copy_block) writes them.
pub(crate) fn set_lengths(framed: &mut [u8], ends: &[usize]) {
    let mut start = 0;
    for &end in ends {
        let len = (end - start - 1) as u32;
        framed[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::server::guard::Guarded;

    #[test]
    fn each_message_gets_its_length() {
        let mut framed = b"d\0\0\0\0a\tb\nd\0\0\0\0c\n".to_vec();
        set_lengths(&mut framed, &[9, 16]);
        assert_eq!(framed, b"d\0\0\0\x08a\tb\nd\0\0\0\x06c\n");
    }

    #[tokio::test]
    async fn framed_messages_go_out_before_what_the_codec_writes_after_them() {
        let out = Arc::new(OutBytes::default());
        let mut socket = Guarded::new(Vec::<u8>::new(), 1 << 20);
        socket.set_out(out.clone());
        assert_eq!(out.append(b"d\0\0\0\x05x"), 6);
        socket.write_all(b"C\0\0\0\x04").await.unwrap();
        out.append(b"d\0\0\0\x05y");
        out.append(b"d\0\0\0\x05z");
        socket.flush().await.unwrap();
        socket.write_all(b"Z").await.unwrap();
        let (written, _) = socket.into_inner();
        assert_eq!(written, b"d\0\0\0\x05xC\0\0\0\x04d\0\0\0\x05yd\0\0\0\x05zZ");
    }
}
