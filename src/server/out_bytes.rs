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

use tokio::io::AsyncWrite;

/// Framed backend messages waiting for the socket, shared by a connection's handlers
/// (through pgwire's session extensions) and its socket writer.
#[derive(Default)]
pub(crate) struct OutBytes(Mutex<Waiting>);

/// The bytes of [`OutBytes`]: `buf[start..]` waits, `buf[..start]` is written.
#[derive(Default)]
struct Waiting {
    buf: Vec<u8>,
    start: usize,
}

impl OutBytes {
    /// Append whole, framed messages (type byte, length, body), leaving `framed` empty;
    /// returns the bytes now waiting. When nothing waits (the common case: each flush
    /// writes everything), the buffers are swapped instead of copied: `framed` gets the
    /// emptied buffer's allocation back for its next use.
    pub(crate) fn append(&self, framed: &mut Vec<u8>) -> usize {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if w.start == w.buf.len() {
            w.buf.clear();
            w.start = 0;
            std::mem::swap(&mut w.buf, framed);
        } else {
            if w.start >= w.buf.len() - w.start {
                // At least half written: move what waits to the front before growing,
                // so the buffer stays within twice what waits.
                let start = w.start;
                w.buf.drain(..start);
                w.start = 0;
            }
            w.buf.extend_from_slice(framed);
            framed.clear();
        }
        w.buf.len() - w.start
    }

    /// Write what waits to `inner`; ready once nothing is left.
    pub(crate) fn drain<S: AsyncWrite + Unpin>(
        &self,
        inner: &mut S,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        while w.start < w.buf.len() {
            match Pin::new(&mut *inner).poll_write(cx, &w.buf[w.start..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => w.start += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        w.buf.clear();
        w.start = 0;
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
        let mut framed = b"d\0\0\0\x05x".to_vec();
        assert_eq!(out.append(&mut framed), 6);
        assert!(framed.is_empty());
        socket.write_all(b"C\0\0\0\x04").await.unwrap();
        out.append(&mut b"d\0\0\0\x05y".to_vec());
        out.append(&mut b"d\0\0\0\x05z".to_vec());
        socket.flush().await.unwrap();
        socket.write_all(b"Z").await.unwrap();
        let (written, _) = socket.into_inner();
        assert_eq!(written, b"d\0\0\0\x05xC\0\0\0\x04d\0\0\0\x05yd\0\0\0\x05zZ");
    }

    /// A socket that takes at most `budget` more bytes, then would block.
    struct Trickle {
        written: Vec<u8>,
        budget: usize,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let n = buf.len().min(self.budget);
            if n == 0 {
                return Poll::Pending;
            }
            self.budget -= n;
            self.written.extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn bytes_appended_while_others_wait_go_out_after_them_in_order() {
        let out = OutBytes::default();
        let mut socket = Trickle {
            written: Vec::new(),
            budget: 4,
        };
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut framed = b"0123456789".to_vec();
        assert_eq!(out.append(&mut framed), 10);
        assert!(framed.is_empty());
        assert!(out.drain(&mut socket, &mut cx).is_pending());
        // Six bytes wait behind the four written: appended after them.
        let mut framed = b"abcdef".to_vec();
        assert_eq!(out.append(&mut framed), 12);
        assert!(framed.is_empty());
        socket.budget = 6;
        assert!(out.drain(&mut socket, &mut cx).is_pending());
        // Ten written, six wait: moved to the front, then appended to.
        assert_eq!(out.append(&mut b"XYZ".to_vec()), 9);
        socket.budget = usize::MAX;
        assert!(matches!(
            out.drain(&mut socket, &mut cx),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(socket.written, b"0123456789abcdefXYZ");
        // Nothing waits: the next bytes are taken as they are and written whole.
        let mut framed = b"next".to_vec();
        assert_eq!(out.append(&mut framed), 4);
        assert!(framed.is_empty());
        assert!(matches!(
            out.drain(&mut socket, &mut cx),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(socket.written, b"0123456789abcdefXYZnext");
    }
}
