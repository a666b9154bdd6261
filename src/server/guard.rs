//! The client's byte stream, checked before pgwire decodes it.
//!
//! pgwire's frontend decoders trust the lengths and counts a client sends: a Parse of
//! length 4, a CopyData of length 3 or a Bind whose parameter count runs past its message
//! panic inside the decoder or read the next message's bytes as their own. [`Guarded`] sits
//! between the socket and pgwire's framing and lets through only messages whose framing is
//! well formed: the length field is at least 4 and at most `message_bytes_max`, the type byte
//! is one a client may send, and every field of the body (strings, counts, lengths) ends
//! exactly where the message ends, as PostgreSQL's `pq_getmsg*` functions check. Anything
//! else turns into a [`Reject`], which the connection loop answers with an ErrorResponse
//! (08P01, or 54000 for an oversized message) before it closes the connection, as
//! PostgreSQL does for a protocol violation.
//!
//! SQL text that is not valid UTF-8 is not a protocol violation: PostgreSQL answers such a
//! Query or Parse with 22021 and the connection goes on. pgwire would decode it lossily, so
//! the guard replaces the text with a marker comment naming the offending bytes, which
//! [`check_text`] turns into that error before the statement is parsed.
//!
//! Design decision: the check works on bytes, below the codec, because pgwire's `Framed`
//! codec cannot be replaced (its handlers are generic over the socket type, not the codec).
//! A message is held until it is complete and checked, except CopyData, whose body is
//! opaque and passes through as it arrives; an oversized message is refused from its
//! 5-byte header, before any of its body is buffered.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::out_bytes::OutBytes;

/// A message the guard refused: the SQLSTATE and the message for the ErrorResponse.
///
/// Travels to the connection loop as the payload of an `io::Error` of kind `InvalidData`.
#[derive(Debug)]
pub(crate) struct Reject {
    /// SQLSTATE: 08P01 (protocol violation) or 54000 (message too large).
    pub(crate) code: &'static str,
    /// Human-readable message naming the offending value.
    pub(crate) message: String,
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Reject {}

/// The reject carried by `e`, if `e` came from the guard.
pub(crate) fn reject_of(e: &io::Error) -> Option<&Reject> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<Reject>())
}

/// PostgreSQL's `MAX_STARTUP_PACKET_LENGTH`.
const STARTUP_BYTES_MAX: usize = 10_000;
const SSL_REQUEST_CODE: u32 = 80_877_103;
const GSSENC_REQUEST_CODE: u32 = 80_877_104;
const CANCEL_REQUEST_CODE: u32 = 80_877_102;

/// Where the connection is in the protocol: before the StartupMessage, messages carry no
/// type byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Startup,
    Typed,
}

/// A socket whose reads yield only well-framed frontend messages (see the module docs).
pub(crate) struct Guarded<S> {
    inner: S,
    phase: Phase,
    /// Bytes read from the socket, not yet checked.
    raw: BytesMut,
    /// Checked bytes, ready for pgwire's codec.
    ready: BytesMut,
    /// Bytes of a CopyData body still to pass through unchecked (they wait in `raw`).
    passthrough: usize,
    /// Set once a message was refused: returned after the bytes before it are delivered.
    failed: Option<Reject>,
    /// Largest message body accepted, in bytes.
    message_bytes_max: usize,
    /// Framed messages written past the codec, drained before any byte of its buffer.
    out: Option<Arc<OutBytes>>,
}

impl<S> Guarded<S> {
    /// Guard `inner`, refusing message bodies over `message_bytes_max` bytes.
    pub(crate) fn new(inner: S, message_bytes_max: usize) -> Guarded<S> {
        Guarded {
            inner,
            phase: Phase::Startup,
            raw: BytesMut::new(),
            ready: BytesMut::new(),
            passthrough: 0,
            failed: None,
            message_bytes_max,
            out: None,
        }
    }

    /// Write the messages of `out` to the socket before any byte the codec writes.
    pub(crate) fn set_out(&mut self, out: Arc<OutBytes>) {
        self.out = Some(out);
    }

    /// Write out what waits in `out`.
    fn drain_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>
    where
        S: AsyncWrite + Unpin,
    {
        match &self.out {
            Some(out) => out.drain(&mut self.inner, cx),
            None => Poll::Ready(Ok(())),
        }
    }

    /// The stream back, and whether bytes read from it are still unread (a client that
    /// did not wait for the answer to its SSLRequest).
    pub(crate) fn into_inner(self) -> (S, bool) {
        let unread = !self.raw.is_empty() || !self.ready.is_empty() || self.failed.is_some();
        (self.inner, unread)
    }

    /// Move every complete, valid message from `raw` to `ready`; stop at the first
    /// incomplete one, or record a reject at the first invalid one.
    fn frame(&mut self) {
        while self.failed.is_none() {
            if self.passthrough > 0 {
                // A CopyData body: `poll_read` hands it on straight from `raw`.
                return;
            }
            let step = match self.phase {
                Phase::Startup => self.frame_startup(),
                Phase::Typed => self.frame_typed(),
            };
            match step {
                Ok(true) => {}
                Ok(false) => return,
                Err(reject) => self.failed = Some(reject),
            }
        }
    }

    /// Copy checked bytes into `buf`: those of `ready`, then the CopyData body being
    /// passed through, straight from `raw` (COPY's data is copied once here, not twice).
    /// False when there was nothing to copy.
    fn serve(&mut self, buf: &mut ReadBuf<'_>) -> bool {
        let mut served = false;
        if !self.ready.is_empty() {
            let n = self.ready.len().min(buf.remaining());
            buf.put_slice(&self.ready[..n]);
            self.ready.advance(n);
            served = true;
        }
        if self.ready.is_empty() && self.passthrough > 0 && !self.raw.is_empty() {
            let n = self.raw.len().min(self.passthrough).min(buf.remaining());
            buf.put_slice(&self.raw[..n]);
            self.raw.advance(n);
            self.passthrough -= n;
            if self.passthrough == 0 {
                self.frame();
            }
            served |= n > 0;
        }
        served
    }

    /// One untyped start-up-phase message; `Ok(false)` if it is not complete yet.
    fn frame_startup(&mut self) -> Result<bool, Reject> {
        if self.raw.len() < 4 {
            return Ok(false);
        }
        let len = u32::from_be_bytes(self.raw[..4].try_into().expect("4 bytes")) as usize;
        if !(8..=STARTUP_BYTES_MAX).contains(&len) {
            return Err(violation(format!(
                "invalid length of startup packet: {len}"
            )));
        }
        if self.raw.len() < len {
            return Ok(false);
        }
        let msg = &self.raw[..len];
        let code = u32::from_be_bytes(msg[4..8].try_into().expect("4 bytes"));
        match code {
            SSL_REQUEST_CODE | GSSENC_REQUEST_CODE if len == 8 => {}
            CANCEL_REQUEST_CODE if (16..=12 + 256).contains(&len) => {}
            SSL_REQUEST_CODE | GSSENC_REQUEST_CODE | CANCEL_REQUEST_CODE => {
                return Err(violation(format!(
                    "invalid length of startup packet: {len}"
                )))
            }
            _ if code >> 16 == 3 => {
                startup_parameters(&msg[8..])?;
                self.phase = Phase::Typed;
            }
            _ => {
                return Err(Reject {
                    code: "0A000",
                    message: format!(
                        "unsupported frontend protocol {}.{}: server supports 3.0 to 3.2",
                        code >> 16,
                        code & 0xffff
                    ),
                })
            }
        }
        self.ready.extend_from_slice(&self.raw.split_to(len));
        Ok(true)
    }

    /// One typed message; `Ok(false)` if it is not complete yet.
    fn frame_typed(&mut self) -> Result<bool, Reject> {
        if self.raw.len() < 5 {
            return Ok(false);
        }
        let kind = self.raw[0];
        let len = i32::from_be_bytes(self.raw[1..5].try_into().expect("4 bytes"));
        if len < 4 {
            return Err(violation(format!(
                "invalid message length {len} for message type \"{}\"",
                kind.escape_ascii()
            )));
        }
        let body_len = len as usize - 4;
        if body_len > self.message_bytes_max {
            return Err(Reject {
                code: "54000",
                message: format!(
                    "message of {body_len} bytes exceeds message_bytes_max ({})",
                    self.message_bytes_max
                ),
            });
        }
        if kind == b'd' {
            self.ready.extend_from_slice(&self.raw.split_to(5));
            self.passthrough = body_len;
            return Ok(true);
        }
        if self.raw.len() < 5 + body_len {
            // Not reserved up front: a client that announces a large message pays for the
            // memory only as it sends the bytes.
            return Ok(false);
        }
        check_body(kind, &self.raw[5..5 + body_len])?;
        match mark_invalid_text(kind, &self.raw[5..5 + body_len]) {
            Some(marked) => {
                self.raw.advance(5 + body_len);
                self.ready.extend_from_slice(&marked);
            }
            None => self
                .ready
                .extend_from_slice(&self.raw.split_to(5 + body_len)),
        }
        Ok(true)
    }
}

fn violation(message: String) -> Reject {
    Reject {
        code: "08P01",
        message,
    }
}

/// A cursor over a message body that fails, never panics, when a field runs past the end.
struct Body<'a> {
    kind: u8,
    rest: &'a [u8],
}

impl<'a> Body<'a> {
    fn short(&self) -> Reject {
        violation(format!(
            "invalid message format: message type \"{}\" ends inside a field",
            self.kind.escape_ascii()
        ))
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], Reject> {
        if self.rest.len() < n {
            return Err(self.short());
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn cstring(&mut self) -> Result<&'a [u8], Reject> {
        let Some(end) = self.rest.iter().position(|&b| b == 0) else {
            return Err(violation(format!(
                "invalid string in message type \"{}\": no terminating zero byte",
                self.kind.escape_ascii()
            )));
        };
        let s = &self.rest[..end];
        self.rest = &self.rest[end + 1..];
        Ok(s)
    }

    fn i16(&mut self) -> Result<i16, Reject> {
        let b = self.bytes(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, Reject> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A count of fields. PostgreSQL reads it as unsigned (up to 65,535); pgwire's decoder
    /// as signed, so a count past 32,767 is refused here, named as the client sent it
    /// rather than as a negative number.
    fn count(&mut self, what: &str) -> Result<usize, Reject> {
        let n = self.i16()?;
        if n < 0 {
            return Err(violation(format!(
                "{} {what}s in one message; tcq takes at most {}",
                n as u16,
                i16::MAX
            )));
        }
        Ok(n as usize)
    }

    fn end(&self) -> Result<(), Reject> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(violation(format!(
                "invalid message format: {} bytes after the end of message type \"{}\"",
                self.rest.len(),
                self.kind.escape_ascii()
            )))
        }
    }
}

/// Check the body of a typed message other than CopyData field by field.
fn check_body(kind: u8, body: &[u8]) -> Result<(), Reject> {
    let mut b = Body { kind, rest: body };
    match kind {
        // Query, CopyFail: one string.
        b'Q' | b'f' => {
            b.cstring()?;
        }
        // Parse: name, query, parameter type oids.
        b'P' => {
            b.cstring()?;
            b.cstring()?;
            let n = b.count("parameter type")?;
            b.bytes(n * 4)?;
        }
        // Bind: portal, statement, parameter formats, parameters, result formats.
        b'B' => {
            b.cstring()?;
            b.cstring()?;
            let n = b.count("parameter format")?;
            b.bytes(n * 2)?;
            let n = b.count("parameter")?;
            for _ in 0..n {
                let len = b.i32()?;
                if len < -1 {
                    return Err(violation(format!("invalid parameter length {len}")));
                }
                if len > 0 {
                    b.bytes(len as usize)?;
                }
            }
            let n = b.count("result format")?;
            b.bytes(n * 2)?;
        }
        // Describe, Close: 'S' or 'P', then a name.
        b'D' | b'C' => {
            let target = b.bytes(1)?[0];
            if target != b'S' && target != b'P' {
                return Err(violation(format!(
                    "invalid {} target type \"{}\"",
                    if kind == b'D' { "DESCRIBE" } else { "CLOSE" },
                    target.escape_ascii()
                )));
            }
            b.cstring()?;
        }
        // Execute: portal, row limit.
        b'E' => {
            b.cstring()?;
            b.i32()?;
        }
        // Flush, Sync, Terminate, CopyDone: nothing.
        b'H' | b'S' | b'X' | b'c' => {}
        // Password, SASLInitialResponse, SASLResponse: decoded by context later, as bytes.
        b'p' => {
            b.rest = &[];
        }
        _ => {
            return Err(violation(format!(
                "invalid frontend message type {} (\"{}\")",
                kind,
                kind.escape_ascii()
            )))
        }
    }
    b.end()
}

/// What SQL text that was not valid UTF-8 is replaced with, followed by the offending bytes.
const INVALID_TEXT_MARKER: &str = "/* tcq: invalid UTF-8:";

/// A Query or Parse (already checked by [`check_body`]) whose SQL text is not valid UTF-8,
/// rebuilt with [`INVALID_TEXT_MARKER`] in place of its text; `None` if the text is valid.
fn mark_invalid_text(kind: u8, body: &[u8]) -> Option<Vec<u8>> {
    let (name, text, rest) = match kind {
        b'Q' => (&body[..0], &body[..body.len() - 1], &body[..0]),
        b'P' => {
            let name_end = body.iter().position(|&b| b == 0)? + 1;
            let text_len = body[name_end..].iter().position(|&b| b == 0)?;
            let text = &body[name_end..name_end + text_len];
            (&body[..name_end], text, &body[name_end + text_len + 1..])
        }
        _ => return None,
    };
    let e = std::str::from_utf8(text).err()?;
    let bad = &text[e.valid_up_to()..];
    let bad = &bad[..e.error_len().unwrap_or(bad.len())];
    let hex: Vec<String> = bad.iter().map(|b| format!("0x{b:02x}")).collect();
    let marked = format!("{INVALID_TEXT_MARKER} {} */", hex.join(" "));
    let mut new_body = name.to_vec();
    new_body.extend_from_slice(marked.as_bytes());
    new_body.push(0);
    new_body.extend_from_slice(rest);
    let mut msg = vec![kind];
    msg.extend_from_slice(&(new_body.len() as i32 + 4).to_be_bytes());
    msg.extend(new_body);
    Some(msg)
}

/// 22021 for SQL text the guard found not to be valid UTF-8 (see the module docs).
pub(crate) fn check_text(text: &str) -> crate::Result<()> {
    match text.strip_prefix(INVALID_TEXT_MARKER) {
        Some(rest) => Err(crate::Error::CharacterNotInRepertoire(format!(
            "invalid byte sequence for encoding \"UTF8\": {}",
            rest.trim_end_matches("*/").trim()
        ))),
        None => Ok(()),
    }
}

/// The StartupMessage's parameters: name/value string pairs ended by an empty name.
fn startup_parameters(body: &[u8]) -> Result<(), Reject> {
    let mut b = Body {
        kind: b'0',
        rest: body,
    };
    loop {
        if b.cstring()?.is_empty() {
            break;
        }
        b.cstring()?;
    }
    b.end()
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.serve(buf) {
                return Poll::Ready(Ok(()));
            }
            if let Some(reject) = this.failed.take() {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, reject)));
            }
            // Read straight into `raw`'s spare room, at least 8 KiB at a time.
            this.raw.reserve(8192);
            let before = this.raw.len();
            let spare = this.raw.spare_capacity_mut();
            let mut read = ReadBuf::uninit(spare);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let n = read.filled().len();
                    if n == 0 {
                        // End of stream: an incomplete message is simply dropped.
                        return Poll::Ready(Ok(()));
                    }
                    // SAFETY: `poll_read` initialised the first `n` bytes of the spare room.
                    unsafe { this.raw.set_len(before + n) };
                    this.frame();
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain_out(cx))?;
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain_out(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain_out(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain_out(cx))?;
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn guard_of(bytes: &[u8]) -> Guarded<&'static [u8]> {
        let mut g = Guarded::new(&[][..], 1 << 20);
        g.phase = Phase::Typed;
        g.raw.extend_from_slice(bytes);
        g.frame();
        g
    }

    /// What the guard lets through, read as pgwire's codec reads it, at most `chunk` bytes
    /// a call, and the error that ends it (`None`: the end of the stream).
    fn read_all(g: &mut Guarded<&'static [u8]>, chunk: usize) -> (Vec<u8>, Option<io::Error>) {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut out = Vec::new();
        loop {
            let mut space = vec![0u8; chunk];
            let mut rb = ReadBuf::new(&mut space);
            match Pin::new(&mut *g).poll_read(&mut cx, &mut rb) {
                Poll::Ready(Ok(())) if rb.filled().is_empty() => return (out, None),
                Poll::Ready(Ok(())) => out.extend_from_slice(rb.filled()),
                Poll::Ready(Err(e)) => return (out, Some(e)),
                Poll::Pending => unreachable!("a slice never blocks"),
            }
        }
    }

    #[test]
    fn well_formed_messages_pass_whole() {
        let mut bytes = typed(b'Q', b"SELECT 1\0");
        bytes.extend(typed(b'P', b"s\0SELECT $1\0\0\x01\0\0\0\x17"));
        bytes.extend(typed(
            b'B',
            b"\0s\0\0\x01\0\x01\0\x01\0\0\0\x04\0\0\0\x07\0\x01\0\x01",
        ));
        bytes.extend(typed(b'E', b"\0\0\0\0\0"));
        bytes.extend(typed(b'S', b""));
        bytes.extend(typed(b'd', b"any\0bytes"));
        let mut g = guard_of(&bytes);
        assert!(g.failed.is_none(), "{:?}", g.failed);
        let (read, end) = read_all(&mut g, 4096);
        assert!(end.is_none(), "{end:?}");
        assert_eq!(read, bytes);
    }

    #[test]
    fn copy_data_passes_through_in_pieces_and_a_bad_message_after_it_is_refused() {
        // The body is handed on from the socket's buffer in reads smaller than it; the
        // messages after it are framed and checked as before.
        let body: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let mut bytes = typed(b'd', &body);
        bytes.extend(typed(b'd', b"2001-01-01 00:00:00,1\n"));
        bytes.extend(typed(b'c', b""));
        let mut g = guard_of(&bytes);
        let (read, end) = read_all(&mut g, 7);
        assert!(end.is_none(), "{end:?}");
        assert_eq!(read, bytes);

        let mut good = typed(b'd', &body);
        good.extend(typed(b'S', b""));
        let mut bytes = good.clone();
        bytes.extend(typed(b'S', b"x"));
        let mut g = guard_of(&bytes);
        let (read, end) = read_all(&mut g, 64);
        assert_eq!(read, good);
        let end = end.expect("refused");
        assert_eq!(reject_of(&end).expect("a reject").code, "08P01");
    }

    #[test]
    fn the_issue_reproducers_are_rejected() {
        for bytes in [
            &b"P\0\0\0\x04"[..],
            &b"d\0\0\0\x03"[..],
            &b"B\x00\x00\x00\x0e\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00"[..],
        ] {
            let g = guard_of(bytes);
            let reject = g.failed.as_ref().expect("rejected");
            assert_eq!(reject.code, "08P01", "{reject}");
            assert!(g.ready.is_empty());
        }
    }

    #[test]
    fn invalid_utf8_text_is_marked_not_refused() {
        let mut bytes = typed(b'Q', b"SELECT '\xc3\x28'\0");
        bytes.extend(typed(b'P', b"s\0SELECT '\xff'\0\0\0"));
        let g = guard_of(&bytes);
        assert!(g.failed.is_none());
        let mut expected = typed(b'Q', b"/* tcq: invalid UTF-8: 0xc3 */\0");
        expected.extend(typed(b'P', b"s\0/* tcq: invalid UTF-8: 0xff */\0\0\0"));
        assert_eq!(&g.ready[..], &expected[..]);
        let e = check_text("/* tcq: invalid UTF-8: 0xc3 */").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid byte sequence for encoding \"UTF8\": 0xc3"
        );
        assert!(check_text("SELECT 1").is_ok());
    }

    #[test]
    fn oversized_message_is_refused_from_its_header() {
        let g = guard_of(b"Q\x12\0\0\0SELECT");
        let reject = g.failed.as_ref().expect("rejected");
        assert_eq!(reject.code, "54000");
        assert!(reject.message.contains("301989884 bytes"), "{reject}");
    }

    #[test]
    fn trailing_bytes_and_bad_counts_are_rejected() {
        for bytes in [
            typed(b'Q', b"SELECT 1\0extra"),
            typed(b'Q', b"SELECT 1"),
            typed(b'E', b"\0\0\0"),
            typed(b'D', b"X\0"),
            typed(b'B', b"\0\0\0\0\0\x01\xff\xff\xff\xfe\0\0"),
            typed(b'S', b"x"),
            typed(b'Z', b""),
        ] {
            let g = guard_of(&bytes);
            assert!(g.failed.is_some(), "accepted {bytes:?}");
        }
    }
}
