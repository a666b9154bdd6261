//! PostgreSQL's `numeric` division and square-root scales, so that `avg(integer)`,
//! `variance` and `stddev` print exactly as PostgreSQL prints them.
//!
//! PostgreSQL picks a quotient's display scale with `select_div_scale` (numeric.c): at least
//! 16 significant digits (`NUMERIC_MIN_SIG_DIGITS`), computed from the weights and first
//! digits of both operands in base 10000, and never less than either operand's scale. We
//! reproduce that rule over exact integers (`i128` mantissa plus decimal scale) and round half
//! away from zero, as `div_var(..., round = true)` does.
//!
//! ```ignore
//! use tcq::agg::numeric::{div_scaled, to_decimal};
//! // avg of 1 and 2: PostgreSQL prints 1.5000000000000000
//! let (m, s) = div_scaled((3, 0), (2, 0)).unwrap();
//! assert_eq!(to_decimal(m, s).unwrap().to_string(), "1.5000000000000000");
//! ```

use num_bigint::BigInt;
use rust_decimal::Decimal;

/// An exact decimal: `mantissa * 10^-scale`.
pub(crate) type Scaled = (i128, u32);

const MIN_SIG_DIGITS: i64 = 16;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Weight (in base-10000 digits) and first base-10000 digit of `|m| * 10^-scale`, as
/// PostgreSQL's normalised numeric holds them. `None` for zero.
fn weight_and_first_digit((m, scale): Scaled) -> Option<(i64, i128)> {
    let m = m.checked_abs()?;
    if m == 0 {
        return None;
    }
    if let Ok(m) = u64::try_from(m) {
        // The common case (an average's sum and count) in 64-bit arithmetic: 128-bit
        // division is a slow software routine. `shift` lies in -3..=19 here.
        let digits = m.ilog10() as i64 + 1;
        let weight = (digits - 1 - scale as i64).div_euclid(4);
        let shift = scale as i64 + 4 * weight;
        if shift <= 19 {
            let first = if shift >= 0 {
                m / 10u64.pow(shift as u32)
            } else {
                m * 10u64.pow((-shift) as u32)
            };
            return Some((weight, (first % 10000) as i128));
        }
    }
    let digits = (m.ilog10() as i64) + 1; // decimal digits of the mantissa
    let e10 = digits - 1 - scale as i64; // exponent of the leading decimal digit
    let weight = e10.div_euclid(4);
    // first digit = floor(|x| / 10000^weight)
    let shift = scale as i64 + 4 * weight; // |x| / 10000^w = m / 10^shift
    let first = if shift >= 0 {
        m / pow10(shift as u32)?
    } else {
        m * pow10((-shift) as u32)?
    };
    Some((weight, first % 10000))
}

/// PostgreSQL's `select_div_scale(var1, var2)`.
pub(crate) fn select_div_scale(num: Scaled, den: Scaled) -> u32 {
    let (w1, f1) = weight_and_first_digit(num).unwrap_or((0, 0));
    let (w2, f2) = weight_and_first_digit(den).unwrap_or((0, 0));
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let rscale = MIN_SIG_DIGITS - qweight * 4;
    rscale.max(num.1 as i64).max(den.1 as i64).clamp(0, 1000) as u32
}

/// `round(a / b, rscale)` half away from zero, with `rscale` from [`select_div_scale`].
/// `None` when the quotient does not fit the exact arithmetic (the caller falls back).
pub(crate) fn div_scaled(num: Scaled, den: Scaled) -> Option<Scaled> {
    let rscale = select_div_scale(num, den);
    div_at_scale(num, den, rscale).map(|m| (m, rscale))
}

/// `10^k` for the `k` that fit 64 bits.
const POW10_U64: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// `x.ilog10()` for `x > 0` from its bit length and one table look-up, without the
/// standard library's comparison chain (0 gives 0 instead of panicking).
#[inline(always)]
fn ilog10(x: u64) -> u32 {
    let x = x | 1;
    let t = ((64 - x.leading_zeros()) * 1233) >> 12;
    t - u32::from(x < POW10_U64[t as usize])
}

/// [`div_scaled`] of an integer sum by a positive count (`avg` of integers), in 64-bit
/// words: the scale from [`select_div_scale`]'s rule and the rounded quotient, each
/// computed once, with no 128-bit division and no power computed by a loop. `None` when
/// `|sum|` passes 64 bits or `n` 32 bits (the caller takes the general path).
#[inline]
pub(crate) fn avg_scaled(sum: i128, n: i64) -> Option<Scaled> {
    let a = u64::try_from(sum.unsigned_abs()).ok()?;
    let b = u64::from(u32::try_from(n).ok().filter(|&b| b > 0)?);
    let rscale = avg_scale(a, b);
    if rscale > 28 {
        return None;
    }
    // round(a * 10^rscale / b): the whole part, then the fraction nine digits at a time
    // (the remainder stays below 2^32, so each step is a 64-bit division).
    let (mut q, mut r) = (u128::from(a / b), a % b);
    let mut left = rscale;
    while left > 0 {
        let k = left.min(9);
        let x = r * POW10_U64[k as usize];
        q = q * u128::from(POW10_U64[k as usize]) + u128::from(x / b);
        r = x % b;
        left -= k;
    }
    let q = i128::try_from(q + u128::from(2 * r >= b)).ok()?;
    Some((if sum < 0 { -q } else { q }, rscale))
}

/// The scale of `a / b` by [`select_div_scale`]'s rule, for integers `a` and `b > 0`:
/// from their weights in base 10000 and whether `a`'s first base-10000 digit is at most
/// `b`'s. Between 0 and 28 when `b` fits 32 bits.
#[inline]
pub(crate) fn avg_scale(a: u64, b: u64) -> u32 {
    let w2 = (ilog10(b) / 4) as i64;
    // `b`'s first base-10000 digit; a constant divisor for a count below 2^32 (no
    // division instruction).
    let f2 = match w2 {
        0 => b,
        1 => b / 10_000,
        2 => b / 100_000_000,
        _ => b / POW10_U64[4 * w2 as usize],
    };
    let (w1, first_le) = if a == 0 {
        (0, true)
    } else {
        let w1 = ilog10(a) / 4;
        let p1 = u128::from(POW10_U64[4 * w1 as usize]);
        (w1 as i64, u128::from(a) < u128::from(f2 + 1) * p1)
    };
    let qweight = w1 - w2 - i64::from(first_le);
    (MIN_SIG_DIGITS - qweight * 4).clamp(0, 1000) as u32
}

/// `round(a / b * 10^rscale)` half away from zero, as an integer.
pub(crate) fn div_at_scale((m1, s1): Scaled, (m2, s2): Scaled, rscale: u32) -> Option<i128> {
    if m2 == 0 {
        return None;
    }
    // a/b * 10^r = m1 * 10^(r + s2 - s1) / m2
    let exp = rscale as i64 + s2 as i64 - s1 as i64;
    if let (Ok(e), Ok(a), Ok(b)) = (
        u32::try_from(exp),
        u64::try_from(m1.unsigned_abs()),
        u32::try_from(m2.unsigned_abs()),
    ) {
        // An average's sum and count: long division in 64-bit words. The product must fit
        // the exact arithmetic, as the 128-bit path below requires.
        i128::try_from(u128::from(a).checked_mul(10u128.checked_pow(e)?)?).ok()?;
        let (q, r) = long_div(a, e, b as u64)?;
        let q = i128::try_from(q + u128::from(2 * r >= b as u64)).ok()?;
        return Some(if (m1 < 0) != (m2 < 0) { -q } else { q });
    }
    let (n, d) = if exp >= 0 {
        (m1.checked_mul(pow10(exp as u32)?)?, m2)
    } else {
        (m1, m2.checked_mul(pow10((-exp) as u32)?)?)
    };
    // One division: the remainder follows from the quotient.
    let q = match (u64::try_from(n), u64::try_from(d)) {
        (Ok(n), Ok(d)) => (n / d) as i128,
        _ => n / d,
    };
    let r = n - q * d;
    // Round half away from zero: |2r| >= |d|.
    let adjust = if r.checked_abs()?.checked_mul(2)? >= d.checked_abs()? {
        if (n < 0) != (d < 0) {
            -1
        } else {
            1
        }
    } else {
        0
    };
    q.checked_add(adjust)
}

/// `a * 10^exp / d` truncated, and the remainder, for `0 < d < 2^32`: nine decimal digits
/// at a time (the remainder times 10^9 stays below 2^62), so every step is a 64-bit
/// division where `a * 10^exp / d` at once would be a 128-bit one, a slow software
/// routine. `None` when the quotient passes 128 bits.
fn long_div(a: u64, exp: u32, d: u64) -> Option<(u128, u64)> {
    debug_assert!(d > 0 && d < 1 << 32);
    let (mut q, mut r) = (u128::from(a / d), a % d);
    let mut left = exp;
    while left > 0 {
        let k = left.min(9);
        let p = 10u64.pow(k);
        let x = r * p;
        q = q
            .checked_mul(u128::from(p))?
            .checked_add(u128::from(x / d))?;
        r = x % d;
        left -= k;
    }
    Some((q, r))
}

/// `round(sqrt(x), rscale)` for `x >= 0`, as PostgreSQL's `sqrt_var` at that scale.
pub(crate) fn sqrt_at_scale((m, s): Scaled, rscale: u32) -> Option<i128> {
    if m < 0 {
        return None;
    }
    // sqrt(m * 10^-s) * 10^(r+1) = sqrt(m * 10^(2r + 2 - s)); one extra digit to round.
    let exp = 2 * (rscale as i64 + 1) - s as i64;
    let root = if exp >= 0 {
        isqrt_scaled(m as u128, exp as u32)?
    } else {
        isqrt(m as u128 / 10u128.checked_pow((-exp) as u32)?)
    };
    i128::try_from((root + 5) / 10).ok()
}

/// `floor(sqrt(m * 10^zeros))`, digit by digit (two decimal digits of the radicand per
/// root digit), so the radicand may be far wider than 128 bits as long as the root fits.
fn isqrt_scaled(m: u128, zeros: u32) -> Option<u128> {
    let mut digits: Vec<u8> = m.to_string().bytes().map(|b| b - b'0').collect();
    digits.extend(std::iter::repeat_n(0, zeros as usize));
    if digits.len() % 2 == 1 {
        digits.insert(0, 0);
    }
    let (mut root, mut rem) = (0u128, 0u128);
    for pair in digits.chunks(2) {
        rem = rem
            .checked_mul(100)?
            .checked_add((pair[0] * 10 + pair[1]) as u128)?;
        // The largest d with (20 * root + d) * d <= rem.
        let base = root.checked_mul(20)?;
        let mut d = 9u128;
        while (base + d) * d > rem {
            d -= 1;
        }
        rem -= (base + d) * d;
        root = root.checked_mul(10)?.checked_add(d)?;
    }
    Some(root)
}

fn isqrt(n: u128) -> u128 {
    isqrt_scaled(n, 0).unwrap_or(0)
}

/// An exact decimal in big integers: `mantissa * 10^-scale`.
pub(crate) type BigScaled<'a> = (&'a BigInt, u32);

/// Weight and first base-10000 digit of a big scaled value, as
/// [`weight_and_first_digit`] (read off its decimal digits). `None` for zero.
fn big_weight_and_first_digit((m, scale): BigScaled) -> Option<(i64, i64)> {
    if m.sign() == num_bigint::Sign::NoSign {
        return None;
    }
    let digits = m.magnitude().to_string();
    let e10 = digits.len() as i64 - 1 - scale as i64;
    let weight = e10.div_euclid(4);
    // The digits above 10^(4 * weight): those of the leading base-10000 digit.
    let lead = (e10 - 4 * weight + 1) as usize;
    let first: i64 = digits[..lead.min(digits.len())].parse().ok()?;
    Some((
        weight,
        first * 10i64.pow(lead.saturating_sub(digits.len()) as u32),
    ))
}

/// PostgreSQL's `select_div_scale` over big scaled values.
pub(crate) fn big_select_div_scale(num: BigScaled, den: BigScaled) -> u32 {
    let (w1, f1) = big_weight_and_first_digit(num).unwrap_or((0, 0));
    let (w2, f2) = big_weight_and_first_digit(den).unwrap_or((0, 0));
    let qweight = w1 - w2 - i64::from(f1 <= f2);
    let rscale = MIN_SIG_DIGITS - qweight * 4;
    rscale.max(num.1 as i64).max(den.1 as i64).clamp(0, 1000) as u32
}

/// `round(a / b * 10^rscale)` half away from zero, in big integers. `None` for `b = 0`.
pub(crate) fn big_div_at_scale(
    (m1, s1): BigScaled,
    (m2, s2): BigScaled,
    rscale: u32,
) -> Option<BigInt> {
    if m2.sign() == num_bigint::Sign::NoSign {
        return None;
    }
    let exp = rscale as i64 + s2 as i64 - s1 as i64;
    let ten = |e: i64| BigInt::from(10u8).pow(e.unsigned_abs() as u32);
    let (n, d) = if exp >= 0 {
        (m1 * ten(exp), m2.clone())
    } else {
        (m1.clone(), m2 * ten(exp))
    };
    let (q, r) = (n.magnitude() / d.magnitude(), n.magnitude() % d.magnitude());
    let q = BigInt::from(if r * 2u8 >= *d.magnitude() {
        q + 1u8
    } else {
        q
    });
    Some(
        if (n.sign() == num_bigint::Sign::Minus) != (d.sign() == num_bigint::Sign::Minus) {
            -q
        } else {
            q
        },
    )
}

/// `round(sqrt(m * 10^-s) * 10^rscale)` half away from zero for `m >= 0`, as
/// [`sqrt_at_scale`] in big integers.
pub(crate) fn big_sqrt_at_scale((m, s): BigScaled, rscale: u32) -> Option<BigInt> {
    if m.sign() == num_bigint::Sign::Minus {
        return None;
    }
    // One digit past rscale, truncated, then rounded on it.
    let exp = 2 * (rscale as i64 + 1) - s as i64;
    let x = if exp >= 0 {
        m * BigInt::from(10u8).pow(exp as u32)
    } else {
        m / BigInt::from(10u8).pow((-exp) as u32)
    };
    Some((x.sqrt() + 5u8) / 10u8)
}

/// The exact value as a [`Decimal`], dropping low digits (rounding) when the mantissa is
/// wider than 96 bits. `None` when even the integer part does not fit.
pub(crate) fn to_decimal(mut m: i128, mut scale: u32) -> Option<Decimal> {
    loop {
        if scale <= 28 {
            if let Ok(d) = Decimal::try_from_i128_with_scale(m, scale) {
                return Some(d);
            }
        }
        if scale == 0 {
            return None;
        }
        let q = m / 10;
        let r = m % 10;
        m = q + if r >= 5 {
            1
        } else if r <= -5 {
            -1
        } else {
            0
        };
        scale -= 1;
    }
}

/// A [`Decimal`] as an exact scaled integer.
pub(crate) fn from_decimal(d: &Decimal) -> Scaled {
    (d.mantissa(), d.scale())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table-based `ilog10` equals the standard one at every power of ten, one
    /// below and one above it, at each power of two and its neighbours, and at the top.
    #[test]
    fn ilog10_matches_std() {
        assert_eq!(ilog10(0), 0);
        let mut xs = vec![1u64, 2, 9, u64::MAX, u64::MAX - 1];
        for &p in &POW10_U64 {
            xs.extend([p - 1, p, p + 1]);
        }
        for k in 0..64 {
            let p = 1u64 << k;
            xs.extend([p - 1, p, p.wrapping_add(1)]);
        }
        for x in xs.into_iter().filter(|&x| x > 0) {
            assert_eq!(ilog10(x), x.ilog10(), "{x}");
        }
    }

    fn avg(sum: i128, n: i128) -> String {
        let (m, s) = div_scaled((sum, 0), (n, 0)).unwrap();
        to_decimal(m, s).unwrap().to_string()
    }

    #[test]
    fn an_integer_average_in_64_bits_is_the_general_quotient() {
        // Sums and counts around every power of ten and base-10000 digit boundary, both
        // signs, against the general select_div_scale and div_at_scale.
        let mut edges: Vec<i128> = vec![0, 1, 2, 3, 5, 7, 9999, 10001, 123456789];
        for k in 0..20u32 {
            let p = 10i128.pow(k);
            edges.extend([p - 1, p, p + 1, 2 * p, 5 * p - 1, 9 * p + 7]);
        }
        edges.extend([u64::MAX as i128, u64::MAX as i128 - 1, (1 << 63) + 5]);
        for &sum in &edges {
            for &n in &edges {
                let Ok(n64) = i64::try_from(n) else { continue };
                if n64 <= 0 || n64 > u32::MAX as i64 {
                    assert_eq!(avg_scaled(sum, n64), None);
                    continue;
                }
                for sum in [sum, -sum] {
                    let fast = avg_scaled(sum, n64);
                    if sum.unsigned_abs() > u64::MAX as u128 {
                        assert_eq!(fast, None);
                        continue;
                    }
                    let general = div_scaled((sum, 0), (n, 0));
                    assert_eq!(fast, general, "avg of sum {sum}, count {n}");
                }
            }
        }
        assert_eq!(avg_scaled(1 << 64, 3), None);
        assert_eq!(avg_scaled(3, 0), None);
        let (m, s) = avg_scaled(3, 2).unwrap();
        assert_eq!(to_decimal(m, s).unwrap().to_string(), "1.5000000000000000");
    }

    /// Weight and first base-10000 digit read off the decimal digits, as a reference for
    /// the arithmetic paths.
    fn weight_by_digits(m: i128, scale: u32) -> Option<(i64, i128)> {
        if m == 0 {
            return None;
        }
        let digits = m.unsigned_abs().to_string();
        let e10 = digits.len() as i64 - 1 - scale as i64;
        let weight = e10.div_euclid(4);
        // Digits of the leading base-10000 digit: those above 10^(4*weight).
        let lead = (e10 - 4 * weight + 1) as usize;
        let first: i128 = digits[..lead.min(digits.len())].parse().unwrap();
        let first = first * 10i128.pow((lead.saturating_sub(digits.len())) as u32);
        Some((weight, first))
    }

    #[test]
    fn weights_from_64_and_128_bit_arithmetic_agree_with_the_digits() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = match x % 4 {
                0 => (x % 1000) as i128,
                1 => (x >> (x % 60)) as i128,
                2 => x as i128 * 1_000_003,
                _ => -((x >> 3) as i128),
            };
            let scale = (x % 23) as u32;
            assert_eq!(
                weight_and_first_digit((m, scale)),
                weight_by_digits(m, scale),
                "{m} {scale}"
            );
            let d = (x % 100_000) as i128 + 1;
            let r = (x % 25) as u32;
            let q = div_at_scale((m, 0), (d, 0), r);
            let want = m.checked_mul(10i128.pow(r)).map(|n| {
                let (tq, tr) = (n / d, n % d);
                if 2 * tr.abs() >= d {
                    tq + n.signum()
                } else {
                    tq
                }
            });
            assert_eq!(q, want, "{m} / {d} at {r}");
        }
    }

    /// The 64-bit long division gives exactly the 128-bit quotient and its rounding, for
    /// every sign, operands up to 2^64 and 2^32, and scales to 38 digits.
    #[test]
    fn long_division_agrees_with_128_bit_division() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..20_000 {
            let a = match i % 3 {
                0 => next() % 10_000,
                1 => next() % 100_000_000_000,
                _ => next(),
            };
            let d = 1 + next()
                % if i % 2 == 0 {
                    1_000
                } else {
                    u32::MAX as u64 - 1
                };
            let exp = (next() % 39) as u32;
            let wide = (a as u128).checked_mul(10u128.pow(exp));
            if let Some(n) = wide {
                let want = (n / d as u128, (n % d as u128) as u64);
                assert_eq!(long_div(a, exp, d), Some(want), "{a} * 10^{exp} / {d}");
            }
            // What the exact arithmetic takes: a product within i128.
            let n = wide.filter(|&n| n <= i128::MAX as u128);
            for (m1, m2) in [(1i128, 1i128), (-1, 1), (1, -1), (-1, -1)] {
                let (m1, m2) = (m1 * a as i128, m2 * d as i128);
                let slow = n.and_then(|n| i128::try_from(n).ok()).map(|n| {
                    let n = if m1 < 0 { -n } else { n };
                    let (q, r) = (n / m2, n % m2);
                    let away = if (n < 0) != (m2 < 0) { -1 } else { 1 };
                    q + if 2 * r.abs() >= m2.abs() { away } else { 0 }
                });
                assert_eq!(
                    div_at_scale((m1, 0), (m2, 0), exp),
                    slow,
                    "{m1} / {m2} at {exp}"
                );
            }
        }
    }

    #[test]
    fn avg_scales_match_postgresql() {
        // Values checked against PostgreSQL 15's `select avg(x)`.
        assert_eq!(avg(3, 2), "1.5000000000000000");
        assert_eq!(avg(247, 2), "123.5000000000000000");
        assert_eq!(avg(20001, 2), "10000.5000000000000000");
        assert_eq!(avg(2000001, 2), "1000000.500000000000");
        assert_eq!(avg(1, 2), "0.50000000000000000000");
        assert_eq!(avg(-3, 2), "-1.5000000000000000");
        assert_eq!(avg(10, 3), "3.3333333333333333");
        assert_eq!(avg(20, 3), "6.6666666666666667");
        assert_eq!(avg(0, 3), "0.00000000000000000000");
    }

    /// `avg_scale` as PostgreSQL's `select_div_scale` states it, with weights from the
    /// decimal digit counts, for counts around every power of ten up to 2^32 and
    /// scattered sums.
    #[test]
    fn avg_scale_matches_its_rule_by_digit_counts() {
        let weight = |x: u64| (x.max(1).to_string().len() as i64 - 1) / 4;
        let first = |x: u64| x / 10u64.pow(4 * weight(x) as u32);
        let mut counts = vec![1u64, 2, 3, 7, 1_844, 1_845, u64::from(u32::MAX)];
        let mut sums = vec![0u64, 1, 9, 10, 9_999, 10_000, u64::MAX >> 1];
        let mut p = 1u64;
        for _ in 0..18 {
            p *= 10;
            sums.extend([p - 1, p, p + 1, p / 7 * 3]);
            if p < 1 << 32 {
                counts.extend([p - 1, p, p + 1, p / 3]);
            }
        }
        for &b in &counts {
            for &a in &sums {
                let first_le = a == 0 || first(a) <= first(b);
                let q = weight(a) - weight(b) - i64::from(first_le);
                let want = (MIN_SIG_DIGITS - q * 4).clamp(0, 1000) as u32;
                assert_eq!(avg_scale(a, b), want, "{a} / {b}");
            }
        }
    }

    #[test]
    fn sqrt_rounds_at_scale() {
        // sqrt(2) at 16 digits: 1.4142135623730950
        assert_eq!(sqrt_at_scale((2, 0), 16), Some(14142135623730950));
        assert_eq!(sqrt_at_scale((4, 0), 3), Some(2000));
        // stddev of 1 and 2: sqrt(0.5) at scale 20, PostgreSQL's 0.70710678118654752440.
        assert_eq!(
            sqrt_at_scale((50_000_000_000_000_000_000, 20), 20),
            Some(70_710_678_118_654_752_440)
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::agg::numeric::{div_scaled, to_decimal};
        // avg of 1 and 2: PostgreSQL prints 1.5000000000000000
        let (m, s) = div_scaled((3, 0), (2, 0)).unwrap();
        assert_eq!(to_decimal(m, s).unwrap().to_string(), "1.5000000000000000");
    }
}
