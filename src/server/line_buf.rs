//! One COPY TO line assembled in a fixed buffer before it joins the output.
//!
//! Appending a row's short pieces (a message head, the wtime's text, a key, a few numbers)
//! one by one to the output string costs a capacity check and a `memcpy` call each. A
//! [`LineBuf`] takes them instead: pieces of at most [`CHUNK`] bytes are copied with a
//! few fixed-size moves, numbers are printed straight into it, and the whole line then
//! reaches the output in one copy. Anything longer, or a line past [`CAP`] bytes, flushes
//! what is held and goes to the output directly, so any line can pass through it.

use rust_decimal::Decimal;

/// Bytes held before a flush.
const CAP: usize = 256;
/// The longest piece copied by fixed-size moves; longer ones go to the output directly.
const CHUNK: usize = 32;
/// Room a number needs: a sign, 20 digits of `u64`, a point, and 28 digits of scale
/// (a [`Decimal`]'s most) with a zero before the point.
const NUMBER: usize = 52;

/// Powers of ten that fit 64 bits: `P10[k]` is `10^k`.
const P10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// Two ASCII digits of each number below 100.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Bytes of one line (or of its first pieces), always whole UTF-8: every piece is a whole
/// `str` or ASCII.
pub(crate) struct LineBuf {
    buf: [u8; CAP],
    len: usize,
}

impl Default for LineBuf {
    fn default() -> Self {
        LineBuf {
            buf: [0; CAP],
            len: 0,
        }
    }
}

impl LineBuf {
    /// Append the bytes held to `out` and empty the buffer.
    #[inline]
    pub(crate) fn flush(&mut self, out: &mut String) {
        let held = &self.buf[..self.len];
        debug_assert!(std::str::from_utf8(held).is_ok());
        // SAFETY: the buffer holds whole `str`s and ASCII bytes only (see the methods
        // below), so its bytes are UTF-8.
        out.push_str(unsafe { std::str::from_utf8_unchecked(held) });
        self.len = 0;
    }

    /// Make room for `n` more bytes (`n <= CAP`), flushing to `out` when needed; with
    /// `CHECK` false the caller has made sure of it (see [`LineBuf::fits`]).
    #[inline(always)]
    fn room<const CHECK: bool>(&mut self, n: usize, out: &mut String) {
        debug_assert!(CHECK || self.len + n <= CAP);
        if CHECK && self.len + n > CAP {
            self.flush_full(out);
        }
    }

    /// True when a line of `advance` bytes at most, each piece of which is written with
    /// at most [`LineBuf::WINDOW`] bytes of room, fits what the buffer holds now: then
    /// every write of the line may be an `*_in::<false>` one, without a room check.
    #[inline]
    pub(crate) fn fits(&self, advance: usize) -> bool {
        self.len + advance + Self::WINDOW <= CAP
    }

    /// The most room any single write asks for (an average's).
    pub(crate) const WINDOW: usize = NUMBER + 8;

    /// The most bytes [`LineBuf::put`] and [`LineBuf::piece`] add, short of a flush.
    pub(crate) const CHUNK: usize = CHUNK;

    /// The most bytes [`LineBuf::put_i64`] adds.
    pub(crate) const INT: usize = 21;

    /// The most bytes [`LineBuf::put_avg_in`] adds: a sign, 20 whole digits, a point and
    /// 28 fraction digits.
    pub(crate) const AVG: usize = 50;

    /// [`LineBuf::flush`] of a full buffer, out of the way of the common path.
    #[cold]
    #[inline(never)]
    fn flush_full(&mut self, out: &mut String) {
        self.flush(out);
    }

    /// Append `s`: by fixed-size moves when it is at most [`CHUNK`] bytes, else after
    /// flushing, straight to `out`.
    #[inline(always)]
    pub(crate) fn put(&mut self, s: &str, out: &mut String) {
        self.put_in::<true>(s, out)
    }

    /// [`LineBuf::put`], checking room only when `CHECK`.
    #[inline(always)]
    pub(crate) fn put_in<const CHECK: bool>(&mut self, s: &str, out: &mut String) {
        let b = s.as_bytes();
        debug_assert!(CHECK || self.len + CHUNK <= CAP);
        if b.len() > CHUNK || (CHECK && self.len + CHUNK > CAP) {
            return self.put_slow(s, out);
        }
        let at = self.len;
        copy_short(b, &mut self.buf[at..at + CHUNK]);
        self.len += b.len();
    }

    /// Append `p`'s text: one move of its padded bytes when it is at most [`CHUNK`] bytes.
    #[inline(always)]
    pub(crate) fn piece(&mut self, p: &Piece, out: &mut String) {
        self.piece_in::<true>(p, out)
    }

    /// [`LineBuf::piece`], checking room only when `CHECK`.
    #[inline(always)]
    pub(crate) fn piece_in<const CHECK: bool>(&mut self, p: &Piece, out: &mut String) {
        let n = p.text.len();
        debug_assert!(CHECK || self.len + CHUNK <= CAP);
        if n > CHUNK || (CHECK && self.len + CHUNK > CAP) {
            return self.put_slow(&p.text, out);
        }
        let at = self.len;
        self.buf[at..at + CHUNK].copy_from_slice(&p.padded);
        self.len += n;
    }

    /// [`LineBuf::put`] of a long piece or into a full buffer.
    #[cold]
    #[inline(never)]
    fn put_slow(&mut self, s: &str, out: &mut String) {
        self.flush(out);
        if s.len() > CHUNK {
            out.push_str(s);
        } else {
            copy_short(s.as_bytes(), &mut self.buf[..CHUNK]);
            self.len = s.len();
        }
    }

    /// Append one ASCII byte.
    #[inline(always)]
    pub(crate) fn ascii(&mut self, c: u8, out: &mut String) {
        self.ascii_in::<true>(c, out)
    }

    /// [`LineBuf::ascii`], checking room only when `CHECK`.
    #[inline(always)]
    pub(crate) fn ascii_in<const CHECK: bool>(&mut self, c: u8, out: &mut String) {
        debug_assert!(c.is_ascii());
        self.room::<CHECK>(1, out);
        self.buf[self.len] = c;
        self.len += 1;
    }

    /// Append the decimal text of `v` (as `itoa` and PostgreSQL's `int8out` print it).
    #[inline(always)]
    pub(crate) fn put_i64(&mut self, v: i64, out: &mut String) {
        self.put_i64_in::<true>(v, out)
    }

    /// [`LineBuf::put_i64`], checking room only when `CHECK`.
    #[inline(always)]
    pub(crate) fn put_i64_in<const CHECK: bool>(&mut self, v: i64, out: &mut String) {
        self.room::<CHECK>(NUMBER, out);
        if v < 0 {
            self.buf[self.len] = b'-';
            self.len += 1;
        }
        let mut tmp = [0u8; 20];
        let start = write_u64(v.unsigned_abs(), &mut tmp);
        let at = self.len;
        copy_short(&tmp[start..], &mut self.buf[at..at + CHUNK]);
        self.len += 20 - start;
    }

    /// Append the text of numeric `d` as PostgreSQL prints it (every digit of its scale,
    /// at least one digit before the point, no exponent), as
    /// [`crate::types::push_numeric`] does.
    #[inline]
    pub(crate) fn put_numeric(&mut self, d: &Decimal, out: &mut String) {
        let m = d.mantissa();
        let scale = d.scale() as usize;
        let Ok(abs) = u64::try_from(m.unsigned_abs()) else {
            return self.put_wide_numeric(m < 0, m.unsigned_abs(), scale, out);
        };
        self.room::<true>(NUMBER, out);
        // Digits written backwards from the end of `tmp`: the scale's digits (zero
        // padded), the point, then the whole part (at least "0").
        let mut tmp = [0u8; NUMBER];
        let mut at = NUMBER;
        let mut rest = abs;
        if scale > 0 {
            rest = write_fixed(rest, scale, &mut tmp[..at]);
            at -= scale;
            at -= 1;
            tmp[at] = b'.';
        }
        at = write_u64(rest, &mut tmp[..at]);
        if m < 0 {
            at -= 1;
            tmp[at] = b'-';
        }
        // At most a sign, "0." and 28 digits, or 20 digits, a point and a sign.
        let text = &tmp[at..];
        let dst = &mut self.buf[self.len..self.len + CHUNK];
        copy_short(text, dst);
        self.len += text.len();
    }

    /// Append the text of the `numeric` average of `n` integers summing to `sum` (`n > 0`),
    /// as [`LineBuf::put_numeric`] prints [`crate::agg::int_avg`]'s value: the scale by
    /// PostgreSQL's rule ([`crate::agg::numeric::avg_scale`]), the quotient rounded half
    /// away from zero. With a scale of at most 16 and a remainder times `10^scale` within
    /// 64 bits (a count up to 1844 at scale 16), the fraction is one 64-bit division;
    /// otherwise [`LineBuf::put_avg_chunks`] divides eight digits at a time.
    /// Checks room only when `CHECK` (see [`LineBuf::fits`]).
    #[inline]
    pub(crate) fn put_avg_in<const CHECK: bool>(&mut self, sum: i64, n: u32, out: &mut String) {
        debug_assert!(n > 0);
        let (a, b) = (sum.unsigned_abs(), u64::from(n.max(1)));
        let scale = crate::agg::numeric::avg_scale(a, b) as usize;
        let mut whole = a / b;
        let r = a % b;
        let x = match P10.get(scale) {
            Some(&p) if scale <= 16 => r.checked_mul(p),
            _ => None,
        };
        let Some(x) = x else {
            return self.put_avg_chunks(sum, b, scale.min(28), out);
        };
        // The fraction's `scale` digits, rounded; a carry past them goes to the whole part.
        let mut frac = x / b;
        frac += u64::from(2 * (x % b) >= b);
        if frac == P10[scale] {
            frac = 0;
            whole += 1;
        }
        let negative = sum < 0 && (whole != 0 || frac != 0);
        let mut at = self.start_avg::<CHECK>(negative, whole, out);
        let dst = &mut self.buf[self.len..self.len + NUMBER + 8];
        if scale > 0 {
            // Sixteen digits with the fraction's leading (scaled up), of which `scale` count.
            let lead = frac * P10[16 - scale];
            dst[at] = b'.';
            dst[at + 1..at + 9].copy_from_slice(&eight_digits((lead / 100_000_000) as u32));
            dst[at + 9..at + 17].copy_from_slice(&eight_digits((lead % 100_000_000) as u32));
            at += 1 + scale;
        }
        self.len += at;
    }

    /// Room for an average's `NUMBER + 8` bytes, then its sign (when `negative`) and its
    /// `whole` part written at the line's end; returns how many bytes they took (the line's
    /// length is not moved: the caller adds its fraction after them, then the total).
    #[inline(always)]
    fn start_avg<const CHECK: bool>(
        &mut self,
        negative: bool,
        whole: u64,
        out: &mut String,
    ) -> usize {
        self.room::<CHECK>(NUMBER + 8, out);
        let mut tmp = [0u8; 20];
        let start = write_u64(whole, &mut tmp);
        let dst = &mut self.buf[self.len..self.len + NUMBER + 8];
        let at = usize::from(negative);
        dst[0] = b'-';
        copy_short(&tmp[start..], &mut dst[at..at + CHUNK]);
        at + 20 - start
    }

    /// [`LineBuf::put_avg_in`] of a scale (at most 28) whose fraction needs more than one
    /// 64-bit division: eight digits per division (the remainder stays below `b < 2^32`,
    /// so each dividend below 2^59).
    #[inline(never)]
    fn put_avg_chunks(&mut self, sum: i64, b: u64, scale: usize, out: &mut String) {
        const P8: [u64; 9] = [
            1,
            10,
            100,
            1_000,
            10_000,
            100_000,
            1_000_000,
            10_000_000,
            100_000_000,
        ];
        let a = sum.unsigned_abs();
        // At most 28 with a count below 2^32: four chunks of at most eight digits.
        let mut whole = a / b;
        let mut r = a % b;
        let mut chunks = [0u64; 4];
        let nchunks = scale.div_ceil(8);
        for (i, chunk) in chunks[..nchunks].iter_mut().enumerate() {
            let width = (scale - 8 * i).min(8);
            let x = r * P8[width];
            *chunk = x / b;
            r = x % b;
        }
        if 2 * r >= b {
            // Round up the last digit, carrying through full chunks into the whole part.
            let mut carry = true;
            for i in (0..nchunks).rev() {
                let width = (scale - 8 * i).min(8);
                chunks[i] += 1;
                if chunks[i] < P8[width] {
                    carry = false;
                    break;
                }
                chunks[i] = 0;
            }
            whole += u64::from(carry);
        }
        // Fixed-size moves only: the whole part by `copy_short`, each chunk as eight
        // digits (a short last chunk scaled up to lead them) of which `width` count.
        let negative = sum < 0 && (whole != 0 || chunks.iter().any(|&c| c != 0));
        let mut at = self.start_avg::<true>(negative, whole, out);
        let dst = &mut self.buf[self.len..self.len + NUMBER + 8];
        if scale > 0 {
            dst[at] = b'.';
            at += 1;
            for (i, &chunk) in chunks[..nchunks].iter().enumerate() {
                let width = (scale - 8 * i).min(8);
                let digits = eight_digits((chunk * P8[8 - width]) as u32);
                dst[at..at + 8].copy_from_slice(&digits);
                at += width;
            }
        }
        self.len += at;
    }

    /// [`LineBuf::put_numeric`] of a mantissa past 64 bits (`abs` below 2^96, `scale`
    /// at most 28): its 20 to 29 digits, then the point placed among them.
    #[cold]
    #[inline(never)]
    fn put_wide_numeric(&mut self, negative: bool, abs: u128, scale: usize, out: &mut String) {
        const E19: u128 = 10_000_000_000_000_000_000;
        self.room::<true>(NUMBER + 8, out);
        let mut tmp = [0u8; 40];
        write_fixed((abs % E19) as u64, 19, &mut tmp);
        let start = write_u64((abs / E19) as u64, &mut tmp[..40 - 19]);
        let digits = &tmp[start..];
        let dst = &mut self.buf[self.len..self.len + NUMBER + 8];
        let mut n = 0;
        if negative {
            dst[0] = b'-';
            n = 1;
        }
        if digits.len() > scale {
            let point = digits.len() - scale;
            dst[n..n + point].copy_from_slice(&digits[..point]);
            n += point;
            if scale > 0 {
                dst[n] = b'.';
                dst[n + 1..n + 1 + scale].copy_from_slice(&digits[point..]);
                n += 1 + scale;
            }
        } else {
            let zeros = scale - digits.len();
            dst[n..n + 2].copy_from_slice(b"0.");
            dst[n + 2..n + 2 + zeros].fill(b'0');
            n += 2 + zeros;
            dst[n..n + digits.len()].copy_from_slice(digits);
            n += digits.len();
        }
        self.len += n;
    }
}

/// A text written into many lines (a column's text the same in every row, with the
/// delimiter before it): up to [`CHUNK`] bytes are also kept zero-padded to [`CHUNK`],
/// so that [`LineBuf::piece`] copies it by one fixed-size move.
#[derive(Clone, Default)]
pub(crate) struct Piece {
    text: String,
    padded: [u8; CHUNK],
}

impl Piece {
    /// Bytes of the piece's text.
    pub(crate) fn text_len(&self) -> usize {
        self.text.len()
    }

    /// Make the piece the concatenation of `parts`.
    pub(crate) fn set(&mut self, parts: &[&str]) {
        self.text.clear();
        for p in parts {
            self.text.push_str(p);
        }
        self.padded = [0; CHUNK];
        if let Some(dst) = self.padded.get_mut(..self.text.len()) {
            dst.copy_from_slice(self.text.as_bytes());
        }
    }
}

/// Copy `src` (at most [`CHUNK`] bytes) to the start of `dst` ([`CHUNK`] bytes) by at
/// most two fixed-size moves of overlapping halves, with no call and no loop.
#[inline(always)]
fn copy_short(src: &[u8], dst: &mut [u8]) {
    let n = src.len();
    let dst = &mut dst[..CHUNK];
    match n {
        16..=CHUNK => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..]);
        }
        8..=15 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        }
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        _ => {}
    }
}

/// Write the decimal digits of `v` so that they end where `dst` ends (`dst` holds at least
/// 20 bytes, or as many as `v` has digits); returns where they start in `dst`.
#[inline]
fn write_u64(mut v: u64, dst: &mut [u8]) -> usize {
    let mut at = dst.len();
    while v >= 100 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        dst[at..at + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if v >= 10 {
        let p = v as usize * 2;
        at -= 2;
        dst[at..at + 2].copy_from_slice(&PAIRS[p..p + 2]);
    } else {
        at -= 1;
        dst[at] = b'0' + v as u8;
    }
    at
}

/// Write the low `count` decimal digits of `v`, zero padded, so that they end where `dst`
/// ends; returns `v` without them (`v / 10^count`).
#[inline]
fn write_fixed(mut v: u64, mut count: usize, dst: &mut [u8]) -> u64 {
    let mut at = dst.len();
    while count >= 8 {
        let low = (v % 100_000_000) as u32;
        v /= 100_000_000;
        at -= 8;
        dst[at..at + 8].copy_from_slice(&eight_digits(low));
        count -= 8;
    }
    while count >= 2 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        dst[at..at + 2].copy_from_slice(&PAIRS[p..p + 2]);
        count -= 2;
    }
    if count == 1 {
        at -= 1;
        dst[at] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    v
}

/// The eight decimal digits of `v` (below 10^8), zero padded, as ASCII, most significant
/// first: computed in the lanes of one 64-bit word (two 4-digit halves, then four 2-digit
/// quarters, then eight digits) by multiplications instead of a division per pair.
#[inline(always)]
fn eight_digits(v: u32) -> [u8; 8] {
    debug_assert!(v < 100_000_000);
    // 32-bit lanes: the high four digits in the low lane (written first), the low four
    // in the high lane; each below 10^4.
    let x = u64::from(v / 10_000) | (u64::from(v % 10_000) << 32);
    // Per lane x / 100 (exact below 10^4 as (x * 10486) >> 20), then 16-bit lanes.
    let hi = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let y = hi | ((x - hi * 100) << 16);
    // Per 16-bit lane y / 10 (exact below 100 as (y * 103) >> 10), then 8-bit lanes.
    let tens = ((y * 103) >> 10) & 0x000F_000F_000F_000F;
    let z = tens | ((y - tens * 10) << 8);
    (z | 0x3030_3030_3030_3030).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value below 10^8 (in steps covering each 4-digit half exhaustively) prints
    /// as `format!("{:08}")`.
    #[test]
    fn eight_digits_print_as_zero_padded_decimal() {
        let check = |v: u32| {
            assert_eq!(&eight_digits(v), format!("{v:08}").as_bytes(), "{v}");
        };
        for half in 0..10_000u32 {
            check(half);
            check(half * 10_000);
            check(half * 10_000 + 9_999 - half);
            check(99_999_999 - half);
        }
        let mut v = 0u32;
        while v < 100_000_000 {
            check(v);
            v += 9_973;
        }
    }

    /// Pieces of every length up to past a chunk, filling the buffer past its capacity:
    /// the output is their concatenation.
    #[test]
    fn pieces_of_any_length_concatenate() {
        let text: String = "abcdéfghij0123456789".repeat(4);
        let mut line = LineBuf::default();
        let (mut out, mut want) = (String::new(), String::new());
        for round in 0..3 {
            for n in 0..=text.len() {
                let Some(piece) = text.get(..n) else { continue };
                line.put(piece, &mut out);
                want.push_str(piece);
                line.ascii(b',', &mut out);
                want.push(',');
            }
            if round == 1 {
                line.flush(&mut out);
            }
        }
        line.flush(&mut out);
        assert_eq!(out, want);
    }

    /// Pieces short and long, into a buffer filling up: the output is their texts.
    #[test]
    fn pieces_write_their_text() {
        let mut pieces = vec![Piece::default(); 4];
        pieces[0].set(&[",", "2001-01-01 00:10:00"]);
        pieces[1].set(&[]);
        pieces[2].set(&["x".repeat(32).as_str()]);
        pieces[3].set(&["\t", "y".repeat(40).as_str()]);
        let mut line = LineBuf::default();
        let (mut out, mut want) = (String::new(), String::new());
        for k in 0..100 {
            let p = &pieces[k % 4];
            line.piece(p, &mut out);
            want.push_str(&p.text);
            line.put("é", &mut out);
            want.push('é');
        }
        line.flush(&mut out);
        assert_eq!(out, want);
    }

    #[test]
    fn integers_print_as_itoa() {
        let mut values = vec![0, 1, -1, 9, 10, 99, 100, -100, 101, i64::MIN, i64::MAX];
        let mut p = 1i64;
        for _ in 0..18 {
            p *= 10;
            values.extend([p - 1, p, p + 1, -p, -p + 1, p / 3 * 7 % (i64::MAX / 2)]);
        }
        let mut line = LineBuf::default();
        let (mut out, mut want) = (String::new(), String::new());
        for v in values {
            line.put_i64(v, &mut out);
            line.ascii(b'|', &mut out);
            want.push_str(itoa::Buffer::new().format(v));
            want.push('|');
        }
        line.flush(&mut out);
        assert_eq!(out, want);
    }

    /// Averages of integer sums over counts across both types' ranges (powers of ten and
    /// their neighbours, each base-10000 weight, both signs, zero) print as the general
    /// formatter prints `int_avg`'s numeric: the same scale, digits and rounding.
    #[test]
    fn averages_print_as_the_general_formatter_prints_int_avg() {
        let mut sums: Vec<i64> = vec![0, 1, 2, 5, 7, 123_456_789, i64::MAX, i64::MIN];
        let mut counts: Vec<u32> = vec![1, 2, 3, 6, 7, 9, 97, 9_999, 65_537, u32::MAX];
        let mut p = 1i64;
        for k in 0..18 {
            p *= 10;
            sums.extend([p - 1, p, p + 1, p / 3, p / 7 * 6 + 5]);
            if k < 9 {
                counts.extend([(p - 1) as u32, p as u32, (p + 1) as u32, (p / 3) as u32]);
            }
        }
        // A deterministic scatter of pairs besides.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut pairs = Vec::new();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let sum = (x as i64) >> (x % 60);
            let n = ((x >> 20) as u32 >> (x % 31)).max(1);
            pairs.push((sum, n));
        }
        for &s in &sums {
            for &n in &counts {
                pairs.extend([(s, n), (s.saturating_neg(), n)]);
            }
        }
        let mut line = LineBuf::default();
        let (mut out, mut want) = (String::new(), String::new());
        for (sum, n) in pairs {
            line.put_avg_in::<true>(sum, n, &mut out);
            line.ascii(b';', &mut out);
            let v = crate::agg::int_avg(i128::from(sum), i64::from(n)).unwrap();
            crate::types::format_value(&v, &mut want);
            want.push(';');
        }
        line.flush(&mut out);
        assert_eq!(out, want);
    }

    /// Every count up to 2,100 (the one-division fraction up to 1,844 at scale 16, the
    /// eight-digit chunks above it), with sums whose quotients round up through every
    /// fraction digit into the whole part, round down just below a half, are exact, and
    /// give scales 16 to 20: as the general formatter prints `int_avg`'s value.
    #[test]
    fn averages_of_small_counts_print_as_the_general_formatter() {
        let mut line = LineBuf::default();
        let (mut out, mut want) = (String::new(), String::new());
        for n in 1..=2_100u32 {
            let b = i64::from(n);
            for sum in [
                0,
                1,
                b - 1,
                b,
                b + 1,
                b / 2,
                (b - 1) / 2,
                7 * b - 1,
                9_999 * b + b - 1,
                99_999_999 * b - 1,
                123_456_789 * b + b / 2,
                10_000 * b,
                -1,
                1 - b,
                -(7 * b - 1),
                -(b / 2),
            ] {
                line.put_avg_in::<true>(sum, n, &mut out);
                line.ascii(b';', &mut out);
                let v = crate::agg::int_avg(i128::from(sum), i64::from(n)).unwrap();
                crate::types::format_value(&v, &mut want);
                want.push(';');
            }
            line.flush(&mut out);
            assert_eq!(out, want, "count {n}");
            out.clear();
            want.clear();
        }
    }

    /// Numerics of every scale, mantissas around each power of ten up to 96 bits, both
    /// signs, zeros of each scale, print as the general formatter prints them.
    #[test]
    fn numerics_print_as_the_general_formatter() {
        let mut mantissas: Vec<i64> = vec![0, 1, 5, 9, 12, 1234567, i64::MAX, i64::MIN + 1];
        let mut p = 1i64;
        for _ in 0..18 {
            p *= 10;
            mantissas.extend([p - 1, p, p + 1, p / 7 * 3]);
        }
        let mut line = LineBuf::default();
        let (mut out, mut want) = (String::new(), String::new());
        for scale in 0..=28 {
            for &m in &mantissas {
                for m in [m, -m] {
                    let d = Decimal::new(m, scale);
                    line.put_numeric(&d, &mut out);
                    line.ascii(b';', &mut out);
                    crate::types::format_value(&crate::types::Value::Numeric(d), &mut want);
                    want.push(';');
                }
            }
        }
        // Mantissas past 64 bits up to a Decimal's 96, at every scale.
        let mut wide: Vec<i128> = vec![u64::MAX as i128, u64::MAX as i128 + 1, (1 << 96) - 1];
        let mut p = 10i128.pow(19);
        while p < 1 << 96 {
            wide.extend([p - 1, p, p + 1, p / 7 * 3]);
            p *= 10;
        }
        for scale in 0..=28 {
            for &m in &wide {
                for m in [m, -m] {
                    let Ok(d) = Decimal::try_from_i128_with_scale(m, scale) else {
                        continue;
                    };
                    line.put_numeric(&d, &mut out);
                    line.ascii(b';', &mut out);
                    crate::types::format_value(&crate::types::Value::Numeric(d), &mut want);
                    want.push(';');
                }
            }
        }
        line.flush(&mut out);
        assert_eq!(out, want);
    }
}
