//! Scalar expression evaluation with PostgreSQL's semantics.
//!
//! [`eval`] computes a bound [`Expr`] over one row: three-valued logic, NULL propagation,
//! integer overflow as SQLSTATE 22003 (`integer out of range`), division by zero as 22012,
//! integer division that truncates, comparisons across the numeric types, timestamp and
//! interval arithmetic, casts between all types (text through the types' input and output
//! functions), LIKE/ILIKE, IN, CASE and the scalar functions of [`ScalarFunc`].
//! [`eval_predicate`] is the WHERE/HAVING form: NULL counts as false.
//!
//! The binder has already typed everything, so evaluation dispatches on the runtime
//! variants of the operands; result variants always agree with the types the binder
//! declared (e.g. `integer + bigint` is a `bigint`, `smallint + smallint` a `smallint`).
//!
//! Design decision: evaluation is a plain recursive match over the tree, with no allocation
//! for column references, literals and parameters beyond cloning the [`Value`] (text up to
//! 24 bytes lives inline in a `CompactString`). Compiling to closures or columnar kernels
//! would be faster still, but the executor filters and groups whole batches and calls this
//! once per tuple per expression, which measured fast enough for now.
//!
//! ```ignore
//! use tcq::expr::{eval, EvalContext};
//! use tcq::sql::{BinaryOp, Expr};
//! use tcq::types::Value;
//! let e = Expr::Binary {
//!     op: BinaryOp::Div,
//!     left: Box::new(Expr::Column(0)),
//!     right: Box::new(Expr::Literal(Value::Int4(2))),
//! };
//! let row = [Value::Int4(7)];
//! assert_eq!(eval(&e, &EvalContext::new(&row, &[], None)).unwrap(), Value::Int4(3));
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;

use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::{Error, Result};
use crate::sql::{BinaryOp, Expr, ScalarFunc, UnaryOp, WindowMeta};
use crate::time::{self, US_PER_DAY, US_PER_HOUR, US_PER_MIN, US_PER_SEC};
use crate::types::{format_value, parse_value, DataType, Interval, Value};

/// The window instance a row is emitted for, as [`Expr::WindowMeta`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowMetaValues {
    /// Start of the instance (inclusive), microseconds since the epoch: `wstart(*)`.
    pub lower_us: i64,
    /// End of the instance (exclusive), microseconds since the epoch: `wtime(*)`.
    pub upper_us: i64,
    /// The window's RANGE BY, microseconds: `wrange(*)`.
    pub range_us: i64,
    /// The window's SLIDE BY, microseconds: `wslide(*)`.
    pub slide_us: i64,
    /// True when wtime/wstart are `timestamptz` (the stream's time column is timestamptz,
    /// or the stream is stamped on arrival); false for `timestamp`.
    pub tz: bool,
}

/// Facts about the client session that some functions read (`current_user`,
/// `current_setting`, `pg_backend_pid`). Implemented by the engine's session.
pub(crate) trait SessionInfo {
    /// The user name of the connection.
    fn user(&self) -> &str;
    /// The database name of the connection.
    fn database(&self) -> &str;
    /// The backend process id reported to the client.
    fn pid(&self) -> i32;
    /// The current value of a setting, `None` when there is no such setting.
    fn setting(&self, name: &str) -> Option<String>;
}

/// Everything an expression may read besides its own literals.
#[derive(Clone, Copy)]
pub(crate) struct EvalContext<'a> {
    /// The row in context (input row or aggregate row, see [`crate::sql::Query`]).
    pub(crate) row: &'a [Value],
    /// Values of `$1..$n`.
    pub(crate) params: &'a [Value],
    /// The instance being emitted, for wtime(*) and friends.
    pub(crate) window: Option<WindowMetaValues>,
    /// The statement's start time for `now()`, microseconds since the epoch.
    pub(crate) now_us: i64,
    /// The session, for `current_user` and friends; defaults are used without one.
    pub(crate) session: Option<&'a dyn SessionInfo>,
    /// Columns computed on demand: `Some(value)` for column `i` when it is one, read in
    /// place of `row[i]` (a relational template's subquery or call, evaluated only when
    /// its CASE branch or operand is reached, as PostgreSQL does).
    pub(crate) lazy: Option<&'a LazyColumns<'a>>,
}

/// Column `i` of a row computed when it is read: `None` when the row holds it.
pub(crate) type LazyColumns<'a> = dyn Fn(usize) -> Option<Result<Value>> + 'a;

impl<'a> EvalContext<'a> {
    /// A context over `row`, `params` and the instance being emitted (if any), with no
    /// session and `now()` = the wall clock at this call.
    pub(crate) fn new(
        row: &'a [Value],
        params: &'a [Value],
        window: Option<WindowMetaValues>,
    ) -> Self {
        EvalContext {
            row,
            params,
            window,
            now_us: time::now_us(),
            session: None,
            lazy: None,
        }
    }

    #[cfg(test)]
    /// The same context with `window` set.
    pub(crate) fn with_window(mut self, window: WindowMetaValues) -> Self {
        self.window = Some(window);
        self
    }

    /// The same context with the statement time set.
    pub(crate) fn with_now(mut self, now_us: i64) -> Self {
        self.now_us = now_us;
        self
    }

    /// The same context with columns computed on demand.
    pub(crate) fn with_lazy(mut self, lazy: &'a LazyColumns<'a>) -> Self {
        self.lazy = Some(lazy);
        self
    }

    /// Column `i` of the row, computed if it is a lazy one.
    fn column(&self, i: usize) -> Result<Cow<'a, Value>> {
        if let Some(v) = self.lazy.and_then(|f| f(i)) {
            return v.map(Cow::Owned);
        }
        self.row.get(i).map(Cow::Borrowed).ok_or_else(|| {
            Error::Internal(format!(
                "column {i} is outside a row of {} values",
                self.row.len()
            ))
        })
    }

    /// The same context with a session.
    pub(crate) fn with_session(mut self, session: &'a dyn SessionInfo) -> Self {
        self.session = Some(session);
        self
    }
}

/// The text `version()` returns.
pub(crate) fn version_string() -> String {
    format!(
        "PostgreSQL 15.0 (tcq {}) on {}-{}, a TelegraphCQ-style continuous query server",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH,
        std::env::consts::OS
    )
}

/// Evaluate `expr` over `ctx`.
pub(crate) fn eval(expr: &Expr, ctx: &EvalContext) -> Result<Value> {
    match expr {
        // Leaves need no stack check; anything that recurses gets one.
        Expr::Column(_) | Expr::Literal(_) | Expr::Param(_) | Expr::WindowMeta(_) => {
            eval_node(expr, ctx)
        }
        _ => crate::sql::deep(|| eval_node(expr, ctx)),
    }
}

fn eval_node(expr: &Expr, ctx: &EvalContext) -> Result<Value> {
    match expr {
        Expr::Column(i) => ctx.column(*i).map(Cow::into_owned),
        Expr::Literal(v) => Ok(v.clone()),
        Expr::Param(i) => ctx.params.get(*i).cloned().ok_or_else(|| {
            Error::ProtocolViolation(format!(
                "parameter ${} has no value ({} given)",
                i + 1,
                ctx.params.len()
            ))
        }),
        Expr::Unary { op, expr } => {
            let v = eval(expr, ctx)?;
            match op {
                UnaryOp::Not => Ok(match v {
                    Value::Bool(b) => Value::Bool(!b),
                    Value::Null => Value::Null,
                    other => return Err(type_error("NOT", &other)),
                }),
                UnaryOp::Neg => negate(v),
            }
        }
        Expr::Binary { op, left, right } => binary(*op, left, right, ctx),
        Expr::Cast { expr, to } => cast_value(eval(expr, ctx)?, *to),
        Expr::Func { func, args } => function(*func, args, ctx),
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let op = operand.as_deref().map(|o| eval(o, ctx)).transpose()?;
            for (when, then) in branches {
                let hit = match &op {
                    Some(o) => {
                        let w = eval(when, ctx)?;
                        !o.is_null() && !w.is_null() && compare(o, &w)? == Ordering::Equal
                    }
                    None => eval_predicate(when, ctx)?,
                };
                if hit {
                    return eval(then, ctx);
                }
            }
            match otherwise {
                Some(e) => eval(e, ctx),
                None => Ok(Value::Null),
            }
        }
        Expr::IsNull { expr, negated } => Ok(Value::Bool(eval(expr, ctx)?.is_null() != *negated)),
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let v = operand(expr, ctx)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            for item in list {
                let x = eval(item, ctx)?;
                if x.is_null() {
                    saw_null = true;
                } else if compare(&v, &x)? == Ordering::Equal {
                    return Ok(Value::Bool(!negated));
                }
            }
            Ok(if saw_null {
                Value::Null
            } else {
                Value::Bool(*negated)
            })
        }
        Expr::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => {
            let v = operand(expr, ctx)?;
            let p = operand(pattern, ctx)?;
            match (v.as_str(), p.as_str()) {
                (Some(s), Some(p)) => {
                    let m = if *case_insensitive {
                        like(&s.to_lowercase(), &p.to_lowercase())?
                    } else {
                        like(s, p)?
                    };
                    Ok(Value::Bool(m != *negated))
                }
                _ if v.is_null() || p.is_null() => Ok(Value::Null),
                _ => Err(type_error("LIKE", &v)),
            }
        }
        Expr::WindowMeta(m) => {
            let w = ctx.window.ok_or_else(|| {
                Error::Internal("window function evaluated outside a window instance".into())
            })?;
            let ts = |us| {
                if w.tz {
                    Value::TimestampTz(us)
                } else {
                    Value::Timestamp(us)
                }
            };
            Ok(match m {
                WindowMeta::Wtime => ts(w.upper_us),
                WindowMeta::Wstart => ts(w.lower_us),
                WindowMeta::Wrange => Value::Interval(interval_from_us(w.range_us)),
                WindowMeta::Wslide => Value::Interval(interval_from_us(w.slide_us)),
            })
        }
    }
}

/// An operand that is only read: column references, literals and parameters are borrowed,
/// so comparing a long text column clones nothing.
fn operand<'x>(expr: &'x Expr, ctx: &EvalContext<'x>) -> Result<Cow<'x, Value>> {
    Ok(match expr {
        Expr::Column(i) => ctx.column(*i)?,
        Expr::Literal(v) => Cow::Borrowed(v),
        other => Cow::Owned(eval(other, ctx)?),
    })
}

/// Evaluate a WHERE/HAVING condition: true only for boolean true (NULL is false).
pub(crate) fn eval_predicate(expr: &Expr, ctx: &EvalContext) -> Result<bool> {
    match eval(expr, ctx)? {
        Value::Bool(b) => Ok(b),
        Value::Null => Ok(false),
        other => Err(type_error("WHERE", &other)),
    }
}

/// A fixed length as an interval of whole days and the remaining time (`2 days`,
/// `1 day 02:00:00`, `00:10:00`).
pub(crate) fn interval_from_us(us: i64) -> Interval {
    let days = us / US_PER_DAY;
    Interval {
        months: 0,
        days: days.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        micros: us - days * US_PER_DAY,
    }
}

fn type_error(what: &str, v: &Value) -> Error {
    Error::DatatypeMismatch(format!(
        "{what} cannot take a value of type {}",
        v.data_type()
            .map(|t| t.name())
            .unwrap_or_else(|| "unknown".into())
    ))
}

fn int_out_of_range(t: DataType) -> Error {
    Error::NumericValueOutOfRange(format!("{} out of range", t.name()))
}

fn float_overflow() -> Error {
    Error::NumericValueOutOfRange("value out of range: overflow".into())
}

fn float_underflow() -> Error {
    Error::NumericValueOutOfRange("value out of range: underflow".into())
}

fn numeric_overflow() -> Error {
    Error::NumericValueOutOfRange("value overflows numeric format".into())
}

fn negate(v: Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int2(i) => Value::Int2(
            i.checked_neg()
                .ok_or_else(|| int_out_of_range(DataType::Int2))?,
        ),
        Value::Int4(i) => Value::Int4(
            i.checked_neg()
                .ok_or_else(|| int_out_of_range(DataType::Int4))?,
        ),
        Value::Int8(i) => Value::Int8(
            i.checked_neg()
                .ok_or_else(|| int_out_of_range(DataType::Int8))?,
        ),
        Value::Float4(f) => Value::Float4(-f),
        Value::Float8(f) => Value::Float8(-f),
        Value::Numeric(d) => Value::Numeric(-d),
        Value::WideNumeric(mut w) => {
            w.mantissa = -w.mantissa;
            Value::WideNumeric(w)
        }
        Value::Interval(i) => Value::Interval(Interval {
            months: i.months.checked_neg().ok_or_else(interval_overflow)?,
            days: i.days.checked_neg().ok_or_else(interval_overflow)?,
            micros: i.micros.checked_neg().ok_or_else(interval_overflow)?,
        }),
        other => return Err(type_error("unary minus", &other)),
    })
}

fn interval_overflow() -> Error {
    Error::DatetimeFieldOverflow("interval out of range".into())
}

/// The numeric kind two operands are computed in.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Int2,
    Int4,
    Int8,
    Numeric,
    Float4,
    Float8,
}

/// Whether numeric `v` lies beyond float type `to` (`Float4` or `Float8`): too large for
/// it, or so small that it rounds to zero though it is not zero, as the float's input
/// function finds when PostgreSQL converts the numeric's text.
fn numeric_beyond_float(v: &Value, to: DataType) -> bool {
    let Some(f) = v.as_f64() else {
        return false;
    };
    let f = if to == DataType::Float4 {
        f64::from(f as f32)
    } else {
        f
    };
    let zero = matches!(v, Value::Numeric(d) if d.is_zero());
    let suspect = f.is_infinite() || (f == 0.0 && !zero);
    suspect
        && v.to_text().is_some_and(|t| {
            !t.contains("Infinity") && (f != 0.0 || t.bytes().any(|c| matches!(c, b'1'..=b'9')))
        })
}

fn kind(v: &Value) -> Option<Kind> {
    Some(match v {
        Value::Int2(_) => Kind::Int2,
        Value::Int4(_) => Kind::Int4,
        Value::Int8(_) => Kind::Int8,
        Value::Numeric(_) | Value::WideNumeric(_) => Kind::Numeric,
        Value::Float4(_) => Kind::Float4,
        Value::Float8(_) => Kind::Float8,
        _ => return None,
    })
}

/// PostgreSQL's promotion: the wider integer; numeric with integers; float8 with anything
/// but float4 + float4.
fn common_kind(a: Kind, b: Kind) -> Kind {
    use Kind::*;
    match (a, b) {
        _ if a == b => a,
        (Int2 | Int4 | Int8, Int2 | Int4 | Int8) => a.max(b),
        (Float4 | Float8, _) | (_, Float4 | Float8) => Float8,
        _ => Numeric,
    }
}

fn to_decimal(v: &Value) -> Result<Decimal> {
    Ok(match v {
        Value::Int2(i) => Decimal::from(*i),
        Value::Int4(i) => Decimal::from(*i),
        Value::Int8(i) => Decimal::from(*i),
        Value::Numeric(d) => *d,
        Value::WideNumeric(_) => return Err(crate::types_wide::too_wide()),
        Value::Float4(f) => float_to_decimal(*f as f64, 6)?,
        Value::Float8(f) => float_to_decimal(*f, 15)?,
        other => return Err(type_error("numeric", other)),
    })
}

/// A float as numeric the way PostgreSQL 15 converts it: rounded to `digits` significant
/// digits (FLT_DIG = 6 for real, DBL_DIG = 15 for double precision, as its `%.*g`), so
/// `421.36::real::numeric` is `421.36` and `(1/3::float8)::numeric` `0.333333333333333`.
fn float_to_decimal(f: f64, digits: usize) -> Result<Decimal> {
    if !f.is_finite() {
        return Err(Error::FeatureNotSupported(format!(
            "cannot convert {} to numeric (tcq's numeric is finite)",
            Value::Float8(f).to_text().unwrap_or_default()
        )));
    }
    let text = format!("{:.*e}", digits - 1, f);
    Decimal::from_scientific(&text)
        .map(|d| d.normalize())
        .or_else(|_| Decimal::from_f64(f).ok_or_else(numeric_overflow))
}

/// A float cast to numeric as PostgreSQL casts it: its first 15 (real: 6) significant
/// digits, read back as a numeric, wide when a Decimal cannot hold them (`1e300`,
/// `1e-30`). Errors: 0A000 for infinities, which tcq's numeric does not hold.
fn float_to_numeric(v: &Value) -> Result<Value> {
    let (f, digits) = match v {
        Value::Float4(f) => (f64::from(*f), 6),
        _ => (v.as_f64().unwrap_or(f64::NAN), 15),
    };
    if !f.is_finite() {
        return float_to_decimal(f, digits).map(Value::Numeric);
    }
    if let Ok(d) = float_to_decimal(f, digits) {
        // Exact only when it kept every significant digit (no rounding past 28 places).
        if d.is_zero() == (f == 0.0) && d.scale() < 28 {
            return Ok(Value::Numeric(d));
        }
    }
    // %.*g's digits without trailing zeros, read as an exact numeric.
    let text = format!("{:.*e}", digits - 1, f);
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let mantissa = match mantissa.split_once('.') {
        Some((i, frac)) => {
            let frac = frac.trim_end_matches('0');
            if frac.is_empty() {
                i.to_string()
            } else {
                format!("{i}.{frac}")
            }
        }
        None => mantissa.to_string(),
    };
    crate::types_wide::parse_wide(&format!("{mantissa}e{exp}")).ok_or_else(numeric_overflow)
}

fn int_value(k: Kind, v: i64) -> Result<Value> {
    Ok(match k {
        Kind::Int2 => Value::Int2(i16::try_from(v).map_err(|_| int_out_of_range(DataType::Int2))?),
        Kind::Int4 => Value::Int4(i32::try_from(v).map_err(|_| int_out_of_range(DataType::Int4))?),
        _ => Value::Int8(v),
    })
}

fn int_type(k: Kind) -> DataType {
    match k {
        Kind::Int2 => DataType::Int2,
        Kind::Int4 => DataType::Int4,
        _ => DataType::Int8,
    }
}

fn numeric_arith(op: BinaryOp, l: &Value, r: &Value, k: Kind) -> Result<Value> {
    match k {
        Kind::Int2 | Kind::Int4 | Kind::Int8 => {
            let (a, b) = (l.as_i64().expect("integer"), r.as_i64().expect("integer"));
            let overflow = || int_out_of_range(int_type(k));
            let v = match op {
                BinaryOp::Add => a.checked_add(b).ok_or_else(overflow)?,
                BinaryOp::Sub => a.checked_sub(b).ok_or_else(overflow)?,
                BinaryOp::Mul => a.checked_mul(b).ok_or_else(overflow)?,
                BinaryOp::Div => {
                    if b == 0 {
                        return Err(Error::DivisionByZero);
                    }
                    a.checked_div(b).ok_or_else(overflow)?
                }
                BinaryOp::Mod => {
                    if b == 0 {
                        return Err(Error::DivisionByZero);
                    }
                    a.checked_rem(b).unwrap_or(0)
                }
                _ => unreachable!("arithmetic operator"),
            };
            int_value(k, v)
        }
        Kind::Numeric if crate::types_wide::is_nan(l) || crate::types_wide::is_nan(r) => {
            // NaN absorbs every operation, division by zero included (PostgreSQL).
            Ok(crate::types_wide::WideNumeric::nan())
        }
        Kind::Numeric => {
            // Past Decimal's 28 digits (an operand, or the result at PostgreSQL's scale),
            // exactly in big integers.
            let wide = |v: &Value| matches!(v, Value::WideNumeric(_));
            let narrow = (!wide(l) && !wide(r))
                .then(|| decimal_arith(op, l, r))
                .transpose()?
                .flatten();
            match narrow {
                Some(v) => Ok(v),
                None => {
                    use crate::types_wide::WideNumeric;
                    match (WideNumeric::exact_of(l), WideNumeric::exact_of(r)) {
                        (Some(a), Some(b)) => crate::types_wide::arith(op, &a, &b),
                        _ => Err(crate::types_wide::too_wide()),
                    }
                }
            }
        }
        Kind::Float4 | Kind::Float8 => {
            let (a, b) = (l.as_f64().expect("numeric"), r.as_f64().expect("numeric"));
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => {
                    if b == 0.0 {
                        return Err(Error::DivisionByZero);
                    }
                    a / b
                }
                BinaryOp::Mod => {
                    if b == 0.0 {
                        return Err(Error::DivisionByZero);
                    }
                    a % b
                }
                _ => unreachable!("arithmetic operator"),
            };
            // PostgreSQL's float8_mul/float8_div (and float4's): a zero from nonzero
            // operands (a finite divisor) is an underflow.
            let underflow = |zero: bool| {
                zero && a != 0.0
                    && match op {
                        BinaryOp::Mul => b != 0.0,
                        BinaryOp::Div => b.is_finite(),
                        _ => false,
                    }
            };
            if k == Kind::Float4 {
                let f = v as f32;
                if f.is_infinite() && a.is_finite() && b.is_finite() {
                    return Err(float_overflow());
                }
                if underflow(f == 0.0) {
                    return Err(float_underflow());
                }
                Ok(Value::Float4(f))
            } else {
                if v.is_infinite() && a.is_finite() && b.is_finite() {
                    return Err(float_overflow());
                }
                if underflow(v == 0.0) {
                    return Err(float_underflow());
                }
                Ok(Value::Float8(v))
            }
        }
    }
}

/// Numeric `l op r` in [`Decimal`] at PostgreSQL's display scale; `None` when the result
/// leaves Decimal's range or 28 places (the caller computes it in big integers).
fn decimal_arith(op: BinaryOp, l: &Value, r: &Value) -> Result<Option<Value>> {
    use crate::agg::numeric::{div_at_scale, select_div_scale};
    let (a, b) = (to_decimal(l)?, to_decimal(r)?);
    // Exact in 128-bit mantissas at PostgreSQL's display scale: max(s1, s2) for + - %,
    // s1 + s2 for *, select_div_scale for / (a zero operand keeps it: 0.00 + 1 is 1.00).
    let (ma, sa, mb, sb) = (a.mantissa(), a.scale(), b.mantissa(), b.scale());
    let s = sa.max(sb);
    let aligned = |m: i128, from: u32| 10i128.checked_pow(s - from).and_then(|k| m.checked_mul(k));
    let exact: Option<(i128, u32)> = match op {
        BinaryOp::Add => aligned(ma, sa)
            .zip(aligned(mb, sb))
            .and_then(|(x, y)| x.checked_add(y))
            .map(|m| (m, s)),
        BinaryOp::Sub => aligned(ma, sa)
            .zip(aligned(mb, sb))
            .and_then(|(x, y)| x.checked_sub(y))
            .map(|m| (m, s)),
        BinaryOp::Mul => ma.checked_mul(mb).map(|m| (m, sa + sb)),
        BinaryOp::Div | BinaryOp::Mod if b.is_zero() => return Err(Error::DivisionByZero),
        BinaryOp::Div => {
            let rscale = select_div_scale((ma, sa), (mb, sb));
            div_at_scale((ma, sa), (mb, sb), rscale).map(|m| (m, rscale))
        }
        BinaryOp::Mod => {
            return Ok(Some(Value::Numeric(
                a.checked_rem(b).ok_or_else(numeric_overflow)?,
            )))
        }
        _ => unreachable!("arithmetic operator"),
    };
    Ok(exact
        .filter(|&(_, scale)| scale <= 28)
        .and_then(|(m, scale)| Decimal::try_from_i128_with_scale(m, scale).ok())
        .map(Value::Numeric))
}

/// `sqrt(numeric)` at PostgreSQL 15's result scale (numeric_sqrt): at least 16 significant
/// digits (`15 - 2 * weight` places, weight the base-10000 exponent of the argument's first
/// digit group), at least the argument's own scale, rounded half away from zero, trailing
/// zeros kept. The scale is capped at 28, the most tcq's numeric holds. The argument is not
/// negative (the caller's 2201F).
fn numeric_sqrt(d: Decimal) -> Result<Decimal> {
    use rust_decimal::MathematicalOps;
    if d.is_zero() {
        return Ok(Decimal::new(0, d.scale().max(15)));
    }
    // Base-10000 weight: floor(log10(d) / 4), log10 from the digits' count and the scale.
    let digits = d.mantissa().unsigned_abs().to_string().len() as i64;
    let log10 = digits - 1 - i64::from(d.scale());
    let weight = log10.div_euclid(4);
    let rscale = (15 - 2 * weight).max(i64::from(d.scale())).clamp(0, 28) as u32;
    let mut r = d
        .sqrt()
        .ok_or_else(numeric_overflow)?
        .round_dp_with_strategy(rscale, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    r.rescale(rscale);
    Ok(r)
}

/// PostgreSQL 15's `interval_mul(span, factor)`: as [`interval_div`], each field multiplied.
fn interval_mul(span: Interval, factor: f64) -> Result<Interval> {
    if !factor.is_finite() {
        return Err(interval_overflow());
    }
    interval_scaled(span, |x| x * factor)
}

/// PostgreSQL 15's `interval_div(span, factor)`: each field divided, the fractions of
/// months cascaded into days (30 a month) and of days into time, rounded to the
/// microsecond as PostgreSQL's TSROUND does. `avg(interval)` is the sum divided by N.
pub(crate) fn interval_div(span: Interval, factor: f64) -> Result<Interval> {
    if factor == 0.0 {
        return Err(Error::DivisionByZero);
    }
    interval_scaled(span, |x| x / factor)
}

/// Each field of `span` through `op` (a multiplication or division), the fractions of
/// months cascaded into days (30 a month) and of days into time, the remainders rounded to
/// the microsecond (TSROUND), as PostgreSQL 15's `interval_mul` and `interval_div`.
/// Errors: 22008 when a field leaves its range.
fn interval_scaled(span: Interval, op: impl Fn(f64) -> f64) -> Result<Interval> {
    let tsround = |x: f64| (x * 1e6).round_ties_even() / 1e6;
    let months = op(f64::from(span.months));
    let days = op(f64::from(span.days));
    if !months.is_finite()
        || !days.is_finite()
        || months.abs() > f64::from(i32::MAX)
        || days.abs() > f64::from(i32::MAX)
    {
        return Err(interval_overflow());
    }
    let (month, mut day) = (months as i32, days as i32);
    let month_remainder_days = tsround((months - f64::from(month)) * 30.0);
    let mut sec_remainder = tsround(
        (days - f64::from(day) + month_remainder_days - month_remainder_days.trunc()) * 86_400.0,
    );
    if sec_remainder.abs() >= 86_400.0 {
        let whole = (sec_remainder / 86_400.0).trunc();
        day = day.saturating_add(whole as i32);
        sec_remainder -= whole * 86_400.0;
    }
    day = day.saturating_add(month_remainder_days as i32);
    let time = (op(span.micros as f64) + sec_remainder * 1e6).round_ties_even();
    if !time.is_finite() || time.abs() > 9.2e18 {
        return Err(interval_overflow());
    }
    Ok(Interval {
        months: month,
        days: day,
        micros: time as i64,
    })
}

/// `a + sign * b` of two intervals, field by field. Errors: 22008 on overflow.
pub(crate) fn interval_add(a: Interval, b: Interval, sign: i32) -> Result<Interval> {
    Ok(Interval {
        months: a
            .months
            .checked_add(b.months.checked_mul(sign).ok_or_else(interval_overflow)?)
            .ok_or_else(interval_overflow)?,
        days: a
            .days
            .checked_add(b.days.checked_mul(sign).ok_or_else(interval_overflow)?)
            .ok_or_else(interval_overflow)?,
        micros: a
            .micros
            .checked_add(
                b.micros
                    .checked_mul(sign as i64)
                    .ok_or_else(interval_overflow)?,
            )
            .ok_or_else(interval_overflow)?,
    })
}

/// `l op r` for `+ - * /` over numbers, timestamps and intervals, NULL if either is.
/// Errors: 22003/22008 out of range, 22012 division by zero, 42883 for other types.
pub(crate) fn arith(op: BinaryOp, l: Value, r: Value) -> Result<Value> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    if let (Some(a), Some(b)) = (kind(&l), kind(&r)) {
        return numeric_arith(op, &l, &r, common_kind(a, b));
    }
    let neg = |iv: Interval| interval_mul(iv, -1.0);
    Ok(match (op, &l, &r) {
        (BinaryOp::Add, Value::Timestamp(t), Value::Interval(i))
        | (BinaryOp::Add, Value::Interval(i), Value::Timestamp(t)) => {
            Value::Timestamp(time::timestamp_add_interval(*t, i)?)
        }
        (BinaryOp::Add, Value::TimestampTz(t), Value::Interval(i))
        | (BinaryOp::Add, Value::Interval(i), Value::TimestampTz(t)) => {
            Value::TimestampTz(time::timestamp_add_interval(*t, i)?)
        }
        (BinaryOp::Sub, Value::Timestamp(t), Value::Interval(i)) => {
            Value::Timestamp(time::timestamp_add_interval(*t, &neg(*i)?)?)
        }
        (BinaryOp::Sub, Value::TimestampTz(t), Value::Interval(i)) => {
            Value::TimestampTz(time::timestamp_add_interval(*t, &neg(*i)?)?)
        }
        (
            BinaryOp::Sub,
            Value::Timestamp(a) | Value::TimestampTz(a),
            Value::Timestamp(b) | Value::TimestampTz(b),
        ) => Value::Interval(time::timestamp_diff(*a, *b)?),
        (BinaryOp::Add, Value::Date(d), n) | (BinaryOp::Add, n, Value::Date(d))
            if n.as_i64().is_some() =>
        {
            Value::Date(crate::date::date_add_days(
                *d,
                n.as_i64().expect("integer"),
            )?)
        }
        (BinaryOp::Sub, Value::Date(d), n) if n.as_i64().is_some() => Value::Date(
            crate::date::date_add_days(*d, -n.as_i64().expect("integer"))?,
        ),
        (BinaryOp::Sub, Value::Date(a), Value::Date(b)) => {
            Value::Int4(crate::date::date_diff(*a, *b)?)
        }
        (BinaryOp::Add, Value::Date(d), Value::Time(t))
        | (BinaryOp::Add, Value::Time(t), Value::Date(d)) => {
            let midnight = crate::date::date_to_timestamp(*d)?;
            Value::Timestamp(if time::is_infinite(midnight) {
                midnight
            } else {
                midnight + t
            })
        }
        (BinaryOp::Add, Value::Time(t), Value::Interval(i))
        | (BinaryOp::Add, Value::Interval(i), Value::Time(t)) => {
            Value::Time(crate::date::time_add_interval(*t, i, 1))
        }
        (BinaryOp::Sub, Value::Time(t), Value::Interval(i)) => {
            Value::Time(crate::date::time_add_interval(*t, i, -1))
        }
        (BinaryOp::Sub, Value::Time(a), Value::Time(b)) => Value::Interval(Interval {
            months: 0,
            days: 0,
            micros: a - b,
        }),
        (BinaryOp::Add, Value::Interval(a), Value::Interval(b)) => {
            Value::Interval(interval_add(*a, *b, 1)?)
        }
        (BinaryOp::Sub, Value::Interval(a), Value::Interval(b)) => {
            Value::Interval(interval_add(*a, *b, -1)?)
        }
        (BinaryOp::Mul, Value::Interval(i), n) | (BinaryOp::Mul, n, Value::Interval(i))
            if n.as_f64().is_some() =>
        {
            Value::Interval(interval_mul(*i, n.as_f64().expect("numeric"))?)
        }
        (BinaryOp::Div, Value::Interval(i), n) if n.as_f64().is_some() => {
            Value::Interval(interval_div(*i, n.as_f64().expect("numeric"))?)
        }
        _ => {
            let name = |v: &Value| v.data_type().map(|t| t.name()).unwrap_or_default();
            let sym = match op {
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                _ => "%",
            };
            return Err(Error::UndefinedFunction(format!(
                "operator does not exist: {} {sym} {}",
                name(&l),
                name(&r)
            )));
        }
    })
}

fn binary(op: BinaryOp, left: &Expr, right: &Expr, ctx: &EvalContext) -> Result<Value> {
    match op {
        BinaryOp::And => {
            let l = eval(left, ctx)?;
            if l == Value::Bool(false) {
                return Ok(l);
            }
            let r = eval(right, ctx)?;
            Ok(match (l, r) {
                (_, Value::Bool(false)) => Value::Bool(false),
                (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
                (Value::Null | Value::Bool(_), Value::Null | Value::Bool(_)) => Value::Null,
                (other, _) => return Err(type_error("AND", &other)),
            })
        }
        BinaryOp::Or => {
            let l = eval(left, ctx)?;
            if l == Value::Bool(true) {
                return Ok(l);
            }
            let r = eval(right, ctx)?;
            Ok(match (l, r) {
                (_, Value::Bool(true)) => Value::Bool(true),
                (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
                (Value::Null | Value::Bool(_), Value::Null | Value::Bool(_)) => Value::Null,
                (other, _) => return Err(type_error("OR", &other)),
            })
        }
        BinaryOp::Concat => {
            let l = eval(left, ctx)?;
            let r = eval(right, ctx)?;
            if l.is_null() || r.is_null() {
                return Ok(Value::Null);
            }
            let mut s = compact_str::CompactString::default();
            push_text(&mut s, &l);
            push_text(&mut s, &r);
            Ok(Value::Text(s))
        }
        BinaryOp::Eq
        | BinaryOp::NotEq
        | BinaryOp::Lt
        | BinaryOp::LtEq
        | BinaryOp::Gt
        | BinaryOp::GtEq => {
            let l = operand(left, ctx)?;
            let r = operand(right, ctx)?;
            if l.is_null() || r.is_null() {
                return Ok(Value::Null);
            }
            let o = compare(&l, &r)?;
            Ok(Value::Bool(op.holds(o).unwrap_or(false)))
        }
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
            arith(op, eval(left, ctx)?, eval(right, ctx)?)
        }
    }
}

fn push_text(s: &mut compact_str::CompactString, v: &Value) {
    match v {
        Value::Text(t) => s.push_str(t),
        other => {
            let mut buf = String::new();
            format_value(other, &mut buf);
            s.push_str(&buf);
        }
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    // PostgreSQL: NaN equals NaN and sorts above every other value.
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).expect("not NaN"),
    }
}

/// Compare two non-NULL values of comparable types (numbers across types, text with text,
/// timestamps, intervals by their length with a month as 30 days, booleans).
/// Errors: 42883 for values that cannot be compared.
pub(crate) fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    if let (Some(ka), Some(kb)) = (kind(a), kind(b)) {
        return Ok(match common_kind(ka, kb) {
            Kind::Int2 | Kind::Int4 | Kind::Int8 => a
                .as_i64()
                .expect("integer")
                .cmp(&b.as_i64().expect("integer")),
            Kind::Numeric => match (a, b) {
                (Value::WideNumeric(_), _) | (_, Value::WideNumeric(_)) => {
                    crate::agg::compare_values(a, b)
                }
                _ => to_decimal(a)?.cmp(&to_decimal(b)?),
            },
            _ => float_cmp(a.as_f64().expect("numeric"), b.as_f64().expect("numeric")),
        });
    }
    Ok(match (a, b) {
        (Value::Text(x), Value::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (
            Value::Timestamp(x) | Value::TimestampTz(x),
            Value::Timestamp(y) | Value::TimestampTz(y),
        ) => x.cmp(y),
        (Value::Interval(x), Value::Interval(y)) => {
            time::interval_span_us(x).cmp(&time::interval_span_us(y))
        }
        (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (Value::Time(x), Value::Time(y)) => x.cmp(y),
        // A date meets a timestamp as its midnight (PostgreSQL's date_cmp_timestamp).
        (Value::Date(d), ts @ (Value::Timestamp(_) | Value::TimestampTz(_))) => {
            let wide = cast_value(Value::Date(*d), ts.data_type().expect("typed"))?;
            return compare(&wide, ts);
        }
        (ts @ (Value::Timestamp(_) | Value::TimestampTz(_)), Value::Date(d)) => {
            let wide = cast_value(Value::Date(*d), ts.data_type().expect("typed"))?;
            return compare(ts, &wide);
        }
        _ => {
            let name = |v: &Value| {
                v.data_type()
                    .map(|t| t.name())
                    .unwrap_or_else(|| "unknown".into())
            };
            return Err(Error::UndefinedFunction(format!(
                "operator does not exist: {} = {}",
                name(a),
                name(b)
            )));
        }
    })
}

/// A total order for sorting (ORDER BY, min/max): [`compare`] where it applies, NULLs after
/// every value (PostgreSQL's default for ascending order), and values of incomparable types
/// ordered by type so that sorting never fails.
pub(crate) fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    compare(a, b).unwrap_or_else(|_| {
        let rank = |v: &Value| v.data_type().map(|t| t.oid()).unwrap_or(0);
        rank(a).cmp(&rank(b))
    })
}

fn round_half_even_i64(f: f64, to: DataType) -> Result<i64> {
    let r = f.round_ties_even();
    if !r.is_finite() || r < i64::MIN as f64 || r >= i64::MAX as f64 {
        return Err(int_out_of_range(to));
    }
    Ok(r as i64)
}

/// Cast a value to `to` with PostgreSQL's rules: numbers between numeric types (range
/// checked, floats rounded half to even, numerics half away from zero), text through the
/// target's input function and anything to text through its output function, booleans to
/// and from integers, timestamp to and from timestamptz (the session zone is UTC).
/// `varchar(n)` refuses longer text with 22001.
pub(crate) fn cast_value(v: Value, to: DataType) -> Result<Value> {
    use DataType as T;
    if v.is_null() {
        return Ok(Value::Null);
    }
    if to.is_text() {
        let s = match v {
            Value::Text(s) => s,
            // PostgreSQL's boolean-to-text cast spells the word out (booltext), unlike boolout.
            Value::Bool(b) => (if b { "true" } else { "false" }).into(),
            other => {
                let mut buf = String::new();
                format_value(&other, &mut buf);
                buf.into()
            }
        };
        if let T::Varchar(Some(n)) = to {
            if s.chars().count() > n as usize {
                return parse_value(&s, to);
            }
        }
        if let T::Bpchar(n) = to {
            return Ok(Value::Text(crate::types::bpchar(&s, n, false)?.into()));
        }
        return Ok(Value::Text(s));
    }
    if let Value::Text(s) = &v {
        return parse_value(s, to);
    }
    if v.data_type() == Some(to) {
        return Ok(v);
    }
    let out = match (&v, to) {
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), T::Int2 | T::Int4 | T::Int8) => {
            int_value(
                match to {
                    T::Int2 => Kind::Int2,
                    T::Int4 => Kind::Int4,
                    _ => Kind::Int8,
                },
                v.as_i64().expect("integer"),
            )?
        }
        (Value::Float4(_) | Value::Float8(_), T::Int2 | T::Int4 | T::Int8) => {
            let i = round_half_even_i64(v.as_f64().expect("float"), to)?;
            cast_value(Value::Int8(i), to).map_err(|_| int_out_of_range(to))?
        }
        (Value::WideNumeric(w), T::Int2 | T::Int4 | T::Int8) if w.is_nan() => {
            return Err(Error::FeatureNotSupported(format!(
                "cannot convert NaN to {}",
                match to {
                    T::Int2 => "smallint",
                    T::Int4 => "integer",
                    _ => "bigint",
                }
            )))
        }
        (Value::WideNumeric(w), T::Int2 | T::Int4 | T::Int8) => {
            let i = i64::try_from(w.round_to_integer()).map_err(|_| int_out_of_range(to))?;
            cast_value(Value::Int8(i), to)?
        }
        (Value::Numeric(d), T::Int2 | T::Int4 | T::Int8) => {
            let r = d.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
            let i = r.to_i64().ok_or_else(|| int_out_of_range(to))?;
            cast_value(Value::Int8(i), to)?
        }
        // A numeric too large for the float is refused by the float's input function
        // reading the numeric's text, as PostgreSQL converts it.
        (Value::Numeric(_) | Value::WideNumeric(_), T::Float4 | T::Float8)
            if numeric_beyond_float(&v, to) =>
        {
            return Err(Error::NumericValueOutOfRange(format!(
                "\"{}\" is out of range for type {}",
                v.to_text().unwrap_or_default(),
                to.name()
            )));
        }
        (_, T::Float4) if kind(&v).is_some() => {
            let f = v.as_f64().expect("numeric");
            let g = f as f32;
            if g.is_infinite() && f.is_finite() {
                return Err(Error::NumericValueOutOfRange(
                    "value out of range: overflow".into(),
                ));
            }
            Value::Float4(g)
        }
        (_, T::Float8) if kind(&v).is_some() => Value::Float8(v.as_f64().expect("numeric")),
        (Value::Float4(_) | Value::Float8(_), T::Numeric)
            if v.as_f64().is_some_and(f64::is_nan) =>
        {
            crate::types_wide::WideNumeric::nan()
        }
        (Value::Float4(_) | Value::Float8(_), T::Numeric) => float_to_numeric(&v)?,
        (_, T::Numeric) if kind(&v).is_some() => Value::Numeric(to_decimal(&v)?),
        (Value::Bool(b), T::Int4) => Value::Int4(*b as i32),
        (Value::Int4(i), T::Bool) => Value::Bool(*i != 0),
        // The session zone's wall time, as PostgreSQL's casts (see `tz`).
        (Value::Timestamp(t), T::TimestampTz) if time::is_infinite(*t) => Value::TimestampTz(*t),
        (Value::Timestamp(t), T::TimestampTz) => {
            Value::TimestampTz(crate::tz::current_local_to_utc(*t))
        }
        (Value::TimestampTz(t), T::Timestamp) => Value::Timestamp(local_wall(*t)),
        (Value::Timestamp(t), T::Date) => Value::Date(crate::date::timestamp_to_date(*t)?),
        (Value::TimestampTz(t), T::Date) => {
            Value::Date(crate::date::timestamp_to_date(local_wall(*t))?)
        }
        (Value::Date(d), T::Timestamp) => Value::Timestamp(crate::date::date_to_timestamp(*d)?),
        (Value::Date(d), T::TimestampTz) => {
            let t = crate::date::date_to_timestamp(*d)?;
            Value::TimestampTz(if time::is_infinite(t) {
                t
            } else {
                crate::tz::current_local_to_utc(t)
            })
        }
        // An infinite timestamp has no time of day: NULL, as PostgreSQL gives it.
        (Value::Timestamp(t) | Value::TimestampTz(t), T::Time) if time::is_infinite(*t) => {
            Value::Null
        }
        (Value::Timestamp(t), T::Time) => Value::Time(crate::date::timestamp_to_time(*t)),
        (Value::TimestampTz(t), T::Time) => {
            Value::Time(crate::date::timestamp_to_time(local_wall(*t)))
        }
        (Value::Interval(iv), T::Time) => Value::Time(crate::date::interval_to_time(iv)),
        (Value::Time(t), T::Interval) => Value::Interval(Interval {
            months: 0,
            days: 0,
            micros: *t,
        }),
        _ => {
            return Err(Error::CannotCoerce(format!(
                "cannot cast type {} to {}",
                v.data_type().map(|t| t.name()).unwrap_or_default(),
                to.name()
            )))
        }
    };
    Ok(out)
}

/// The wall-clock time in the session zone of the `timestamptz` `t` (infinities stay).
fn local_wall(t: i64) -> i64 {
    if time::is_infinite(t) {
        return t;
    }
    t.saturating_add(crate::tz::current_offset_at(t) as i64 * crate::time::US_PER_SEC)
}

/// A draw in [0, 1) for `random()`: the hash of a per-process counter under a key drawn
/// once at random, so calls differ without a random-number crate.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
    use std::sync::OnceLock;
    static KEY: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = KEY.get_or_init(Default::default).build_hasher();
    h.write_u64(COUNTER.fetch_add(1, AtomicOrdering::Relaxed));
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// `s LIKE p` (`ILIKE` when `case_insensitive`) with `%`, `_` and backslash escapes.
/// Errors: 22025 for a pattern ending in its escape.
pub(crate) fn like_match(s: &str, p: &str, case_insensitive: bool) -> Result<bool> {
    if case_insensitive {
        like(&s.to_lowercase(), &p.to_lowercase())
    } else {
        like(s, p)
    }
}

/// SQL LIKE with `%`, `_` and backslash escapes, on characters.
fn like(s: &str, p: &str) -> Result<bool> {
    let s: Vec<char> = s.chars().collect();
    // Tokenise the pattern: None = %, Some(None) = _, Some(Some(c)) = literal.
    let mut pat: Vec<Option<Option<char>>> = Vec::new();
    let mut it = p.chars();
    while let Some(c) = it.next() {
        match c {
            '%' => pat.push(None),
            '_' => pat.push(Some(None)),
            '\\' => match it.next() {
                Some(e) => pat.push(Some(Some(e))),
                None => {
                    return Err(Error::InvalidEscapeSequence(
                        "LIKE pattern must not end with escape character".into(),
                    ))
                }
            },
            c => pat.push(Some(Some(c))),
        }
    }
    // Iterative wildcard matching with one backtrack point (the last %).
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match pat.get(pi) {
            Some(None) => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(Some(None)) => {
                si += 1;
                pi += 1;
            }
            Some(Some(Some(c))) if *c == s[si] => {
                si += 1;
                pi += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return Ok(false),
            },
        }
    }
    Ok(pat[pi..].iter().all(|t| t.is_none()))
}

fn text_arg(v: &Value) -> Option<&str> {
    v.as_str()
}

fn function(func: ScalarFunc, args: &[Expr], ctx: &EvalContext) -> Result<Value> {
    if let Some(v) = unevaluated_args(func, args, ctx) {
        return v;
    }
    let vals: Vec<Value> = args.iter().map(|a| eval(a, ctx)).collect::<Result<_>>()?;
    if let Some(v) = wide_math(func, &vals) {
        return v;
    }
    if let Some(v) = crate::expr_funcs::strict(func, &vals) {
        return v;
    }
    if let Some(v) = crate::expr_funcs_misc::function(func, &vals) {
        return v;
    }
    // Functions that see NULL arguments.
    match func {
        ScalarFunc::Greatest | ScalarFunc::Least => return extreme(func, vals),
        ScalarFunc::NullIf => return null_if(func, &vals),
        ScalarFunc::Concat => return Ok(concat(&vals)),
        ScalarFunc::CurrentSetting => return current_setting(&vals, ctx),
        ScalarFunc::Quantified(spec) => return crate::expr_quantified::quantified(spec, &vals),
        _ => {}
    }
    // Strict functions: NULL in, NULL out.
    if vals.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    strict_function(func, &vals)
}

/// Functions that look at their arguments lazily (`coalesce`) or not at all (`now()`,
/// session facts); `None` for every other function.
#[inline]
fn unevaluated_args(func: ScalarFunc, args: &[Expr], ctx: &EvalContext) -> Option<Result<Value>> {
    let v = match func {
        ScalarFunc::Coalesce => return Some(coalesce(args, ctx)),
        ScalarFunc::Now => Value::TimestampTz(ctx.now_us),
        ScalarFunc::Version => Value::Text(version_string().into()),
        ScalarFunc::CurrentDatabase => {
            Value::Text(ctx.session.map(|s| s.database()).unwrap_or("tcq").into())
        }
        ScalarFunc::CurrentSchema => Value::Text("public".into()),
        ScalarFunc::CurrentUser => {
            Value::Text(ctx.session.map(|s| s.user()).unwrap_or("tcq").into())
        }
        ScalarFunc::BackendPid => Value::Int4(ctx.session.map(|s| s.pid()).unwrap_or(0)),
        ScalarFunc::Random => Value::Float8(random_unit()),
        ScalarFunc::ClockTimestamp => Value::TimestampTz(time::now_us()),
        _ => return None,
    };
    Some(Ok(v))
}

/// `coalesce`: the first non-NULL argument, evaluating no further.
fn coalesce(args: &[Expr], ctx: &EvalContext) -> Result<Value> {
    for a in args {
        let v = eval(a, ctx)?;
        if !v.is_null() {
            return Ok(v);
        }
    }
    Ok(Value::Null)
}

/// Math on a numeric too wide for `rust_decimal`: handled by `types_wide`, or refused;
/// `None` when no argument is wide (or the function is not math, or an argument is NULL).
#[inline]
fn wide_math(func: ScalarFunc, vals: &[Value]) -> Option<Result<Value>> {
    let math = matches!(
        func,
        ScalarFunc::Abs
            | ScalarFunc::Round
            | ScalarFunc::Floor
            | ScalarFunc::Ceil
            | ScalarFunc::Sqrt
            | ScalarFunc::Trunc
            | ScalarFunc::Sign
            | ScalarFunc::ToChar
    );
    if !math || vals.iter().any(Value::is_null) {
        return None;
    }
    if let Value::WideNumeric(w) = &vals[0] {
        let places = vals.get(1).and_then(Value::as_i64);
        return Some(
            crate::types_wide::function(func, w, places)
                .unwrap_or_else(|| Err(crate::types_wide::too_wide())),
        );
    }
    if vals.iter().any(|v| matches!(v, Value::WideNumeric(_))) {
        return Some(Err(crate::types_wide::too_wide()));
    }
    None
}

/// `greatest` / `least`: the extreme non-NULL argument, NULL when all are NULL.
fn extreme(func: ScalarFunc, vals: Vec<Value>) -> Result<Value> {
    let want = if func == ScalarFunc::Greatest {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let mut best: Option<Value> = None;
    for v in vals.into_iter().filter(|v| !v.is_null()) {
        best = Some(match best {
            Some(b) if compare(&v, &b)? != want => b,
            _ => v,
        });
    }
    Ok(best.unwrap_or(Value::Null))
}

/// `nullif(a, b)`: NULL when `a = b`, else `a`.
fn null_if(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    let [a, b] = vals else {
        return Err(arity(func));
    };
    if !a.is_null() && !b.is_null() && compare(a, b)? == Ordering::Equal {
        return Ok(Value::Null);
    }
    Ok(a.clone())
}

/// `concat(...)`: the text of every non-NULL argument, in order.
fn concat(vals: &[Value]) -> Value {
    let mut s = compact_str::CompactString::default();
    for v in vals.iter().filter(|v| !v.is_null()) {
        push_text(&mut s, v);
    }
    Value::Text(s)
}

/// `current_setting(name [, missing_ok])`: the session's setting; 42704 when unknown
/// unless `missing_ok` is true (then NULL).
fn current_setting(vals: &[Value], ctx: &EvalContext) -> Result<Value> {
    let name = vals
        .first()
        .and_then(text_arg)
        .unwrap_or_default()
        .to_lowercase();
    let missing_ok = matches!(vals.get(1), Some(Value::Bool(true)));
    match ctx.session.and_then(|s| s.setting(&name)) {
        Some(v) => Ok(Value::Text(v.into())),
        None if missing_ok => Ok(Value::Null),
        None => Err(Error::UndefinedObject(format!(
            "unrecognized configuration parameter \"{name}\""
        ))),
    }
}

/// The two text arguments of `to_date`/`to_timestamp(text, text)`.
fn two_texts<'v>(name: &str, vals: &'v [Value]) -> Result<(&'v str, &'v str)> {
    let text = |v: &'v Value| text_arg(v).ok_or_else(|| type_error(name, v));
    Ok((text(&vals[0])?, text(&vals[1])?))
}

/// The strict functions not in `expr_funcs::strict`, on arguments known to be non-NULL.
fn strict_function(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    match func {
        ScalarFunc::NumericTypmod => numeric_typmod(vals),
        ScalarFunc::TimeTypmod => time_typmod(vals),
        ScalarFunc::Abs => abs(&vals[0]),
        ScalarFunc::Round | ScalarFunc::Floor | ScalarFunc::Ceil => rounding(func, vals),
        ScalarFunc::Sqrt => sqrt(&vals[0]),
        ScalarFunc::Lower | ScalarFunc::Upper | ScalarFunc::Length | ScalarFunc::OctetLength => {
            let s = text_arg(&vals[0]).ok_or_else(|| type_error("text function", &vals[0]))?;
            Ok(match func {
                ScalarFunc::Lower => Value::Text(crate::expr_funcs::case_mapped(s, false).into()),
                ScalarFunc::Upper => Value::Text(crate::expr_funcs::case_mapped(s, true).into()),
                ScalarFunc::OctetLength => Value::Int4(s.len().min(i32::MAX as usize) as i32),
                _ => Value::Int4(s.chars().count().min(i32::MAX as usize) as i32),
            })
        }
        ScalarFunc::Substr => substr(vals),
        ScalarFunc::Timezone => timezone(&vals[0], &vals[1]),
        ScalarFunc::DateTrunc if vals.len() == 3 => date_trunc_zone(&vals[0], &vals[1], &vals[2]),
        ScalarFunc::DateTrunc => date_trunc_value(&vals[0], &vals[1]),
        ScalarFunc::DatePart => date_part_value(&vals[0], &vals[1]),
        ScalarFunc::ToTimestamp if vals.len() == 2 => {
            let (s, f) = two_texts("to_timestamp", vals)?;
            crate::expr_format_parse::to_timestamp(s, f).map(Value::TimestampTz)
        }
        ScalarFunc::ToTimestamp => to_timestamp(&vals[0]),
        ScalarFunc::ToDate => {
            let (s, f) = two_texts("to_date", vals)?;
            crate::expr_format_parse::to_date(s, f).map(Value::Date)
        }
        _ => Err(Error::Internal(format!(
            "function {func:?} reached the strict path"
        ))),
    }
}

/// `numeric_typmod(v, precision, scale)`: `v` cast to `numeric(precision, scale)`.
fn numeric_typmod(vals: &[Value]) -> Result<Value> {
    let (Some(p), Some(s)) = (vals[1].as_i64(), vals[2].as_i64()) else {
        return Err(type_error("numeric type modifier", &vals[1]));
    };
    let tm = crate::types::NumericTypmod {
        precision: p as u16,
        scale: s as u16,
    };
    let mut v = cast_value(vals[0].clone(), DataType::Numeric)?;
    crate::types::conform(&mut v, Some(crate::types::Typmod::Numeric(tm)))?;
    Ok(v)
}

/// `time_typmod(v, p)`: a timestamp, timestamptz or time rounded half away from zero to
/// `p` (0 to 5) fractional digits, as PostgreSQL's AdjustTimestampForTypmod and
/// AdjustTimeForTypmod: timestamps on their microseconds since 2000-01-01 (so negative ones
/// round away from zero too), infinities unchanged. Errors: 22008 when rounding leaves
/// the timestamp range.
pub(crate) fn time_typmod(vals: &[Value]) -> Result<Value> {
    /// 2000-01-01 in Unix microseconds: PostgreSQL's timestamp epoch.
    const PG_EPOCH_US: i64 = 946_684_800_000_000;
    let p = vals[1].as_i64().unwrap_or(6).clamp(0, 6) as u32;
    let scale = 10i64.pow(6 - p);
    let round = |t: i64| -> Option<i64> {
        let half = scale / 2;
        Some(if t >= 0 {
            t.checked_add(half)? / scale * scale
        } else {
            -(t.checked_neg()?.checked_add(half)? / scale * scale)
        })
    };
    let out_of_range = || Error::DatetimeFieldOverflow("timestamp out of range".into());
    Ok(match vals[0] {
        Value::Timestamp(t) | Value::TimestampTz(t) if crate::time::is_infinite(t) => {
            vals[0].clone()
        }
        Value::Timestamp(t) | Value::TimestampTz(t) => {
            let r = t
                .checked_sub(PG_EPOCH_US)
                .and_then(round)
                .and_then(|r| r.checked_add(PG_EPOCH_US))
                .ok_or_else(out_of_range)?;
            match vals[0] {
                Value::Timestamp(_) => Value::Timestamp(r),
                _ => Value::TimestampTz(r),
            }
        }
        Value::Time(t) => Value::Time(round(t).ok_or_else(out_of_range)?),
        ref v => return Err(type_error("time type modifier", v)),
    })
}

/// `abs(x)`; 22003 for the most negative integer of its width.
fn abs(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Int2(i) => Value::Int2(
            i.checked_abs()
                .ok_or_else(|| int_out_of_range(DataType::Int2))?,
        ),
        Value::Int4(i) => Value::Int4(
            i.checked_abs()
                .ok_or_else(|| int_out_of_range(DataType::Int4))?,
        ),
        Value::Int8(i) => Value::Int8(
            i.checked_abs()
                .ok_or_else(|| int_out_of_range(DataType::Int8))?,
        ),
        Value::Float4(f) => Value::Float4(f.abs()),
        Value::Float8(f) => Value::Float8(f.abs()),
        Value::Numeric(d) => Value::Numeric(d.abs()),
        other => return Err(type_error("abs", other)),
    })
}

/// `sqrt(x)`: numeric stays numeric, everything else is double; 2201F when negative.
fn sqrt(v: &Value) -> Result<Value> {
    match v {
        Value::Numeric(d) => {
            if d.is_sign_negative() && !d.is_zero() {
                return Err(negative_sqrt());
            }
            Ok(Value::Numeric(numeric_sqrt(*d)?))
        }
        v => {
            let f = v.as_f64().ok_or_else(|| type_error("sqrt", v))?;
            if f < 0.0 {
                return Err(negative_sqrt());
            }
            Ok(Value::Float8(f.sqrt()))
        }
    }
}

/// `substr(s, from [, len])` in characters, 1-based; 22011 for a negative length.
fn substr(vals: &[Value]) -> Result<Value> {
    let s = text_arg(&vals[0]).ok_or_else(|| type_error("substr", &vals[0]))?;
    let from = vals[1]
        .as_i64()
        .ok_or_else(|| type_error("substr", &vals[1]))?;
    let end = match vals.get(2) {
        Some(l) => {
            let len = l.as_i64().ok_or_else(|| type_error("substr", l))?;
            if len < 0 {
                return Err(Error::SubstringError(
                    "negative substring length not allowed".into(),
                ));
            }
            from.saturating_add(len)
        }
        None => i64::MAX,
    };
    let start = from.max(1);
    if end <= start {
        return Ok(Value::Text("".into()));
    }
    let out: String = s
        .chars()
        .skip((start - 1) as usize)
        .take(usize::try_from(end - start).unwrap_or(usize::MAX))
        .collect();
    Ok(Value::Text(out.into()))
}

/// `timezone(zone, t)` (`t AT TIME ZONE zone`): timestamptz to the zone's wall clock, or a
/// wall clock in the zone to timestamptz; 22023 for an unknown zone, 22008 for a wall
/// clock outside the timestamp range.
fn timezone(zone: &Value, t: &Value) -> Result<Value> {
    let name = text_arg(zone).unwrap_or_default();
    let zone = crate::tz::Zone::parse_arg(name).map_err(|_| {
        Error::InvalidParameterValue(format!("time zone \"{name}\" not recognized"))
    })?;
    match t {
        // Infinity stays itself; a wall clock past either end is 22008, as in PostgreSQL.
        Value::TimestampTz(t) if time::is_infinite(*t) => Ok(Value::Timestamp(*t)),
        Value::TimestampTz(t) => Ok(Value::Timestamp(wall_clock(&zone, *t)?)),
        Value::Timestamp(t) => Ok(Value::TimestampTz(zone.local_to_utc(*t))),
        other => Err(type_error("timezone", other)),
    }
}

/// The finite instant `t` (Unix microseconds) on `zone`'s wall clock. Errors: 22008 when
/// that falls outside the timestamp range.
fn wall_clock(zone: &crate::tz::Zone, t: i64) -> Result<i64> {
    t.checked_add(i64::from(zone.offset_at(t)) * time::US_PER_SEC)
        .filter(|w| (time::MIN_TIMESTAMP_US..time::END_TIMESTAMP_US).contains(w))
        .ok_or_else(|| Error::DatetimeFieldOverflow("timestamp out of range".into()))
}

/// `date_trunc(unit, t)` on a timestamp, timestamptz (on the session zone's wall clock, as
/// PostgreSQL does) or interval; infinity truncates to itself. Units as
/// [`crate::expr_units::unit`] reads them.
fn date_trunc_value(unit: &Value, t: &Value) -> Result<Value> {
    use crate::expr_units::{self as units, TRUNC};
    let raw = text_arg(unit).unwrap_or_default();
    let unit = |ty: &str| units::unit(raw, ty, TRUNC, &[], true);
    match t {
        v @ (Value::Timestamp(t) | Value::TimestampTz(t)) if time::is_infinite(*t) => Ok(v.clone()),
        Value::Timestamp(t) => {
            let ty = "timestamp without time zone";
            Ok(Value::Timestamp(date_trunc(unit(ty)?, *t, ty)?))
        }
        Value::TimestampTz(t) => {
            let ty = "timestamp with time zone";
            let local =
                t.saturating_add(crate::tz::current_offset_at(*t) as i64 * time::US_PER_SEC);
            let truncated = date_trunc(unit(ty)?, local, ty)?;
            Ok(Value::TimestampTz(crate::tz::current_local_to_utc(
                truncated,
            )))
        }
        Value::Interval(iv) => Ok(Value::Interval(interval_trunc(unit("interval")?, *iv)?)),
        other => Err(type_error("date_trunc", other)),
    }
}

/// `date_trunc(unit, t, zone)`: a timestamptz truncated on `zone`'s wall clock (PostgreSQL
/// 12+), infinity to itself. Errors: 22023 for an unknown zone, 22008 for a wall clock or a
/// result before the timestamp range, units as [`date_trunc_value`].
fn date_trunc_zone(unit: &Value, t: &Value, zone: &Value) -> Result<Value> {
    use crate::expr_units::{self as units, TRUNC};
    let name = text_arg(zone).unwrap_or_default();
    let zone = crate::tz::Zone::parse_arg(name).map_err(|_| {
        Error::InvalidParameterValue(format!("time zone \"{name}\" not recognized"))
    })?;
    let ty = "timestamp with time zone";
    let unit = units::unit(text_arg(unit).unwrap_or_default(), ty, TRUNC, &[], true)?;
    match t {
        Value::TimestampTz(t) if time::is_infinite(*t) => Ok(Value::TimestampTz(*t)),
        Value::TimestampTz(t) => {
            let truncated = date_trunc(unit, wall_clock(&zone, *t)?, ty)?;
            let utc = zone.local_to_utc(truncated);
            if utc < time::MIN_TIMESTAMP_US {
                return Err(Error::DatetimeFieldOverflow(
                    "timestamp out of range".into(),
                ));
            }
            Ok(Value::TimestampTz(utc))
        }
        other => Err(type_error("date_trunc", other)),
    }
}

/// `date_part(field, t)`: fields of a timestamptz are those of the session zone's wall
/// clock; the epoch is absolute. A date (extract's) has no time of day or zone fields.
/// Units as [`crate::expr_units::unit`] reads them: 0A000 for one the type has not,
/// 22023 for no unit.
fn date_part_value(field: &Value, t: &Value) -> Result<Value> {
    use crate::expr_units::{self as units, DATE, INTERVAL, TIME, TIMESTAMP, ZONE};
    let raw = text_arg(field).unwrap_or_default();
    let unit = |ty: &str, has: &[&'static str], also: &[&'static str]| {
        units::unit(raw, ty, has, also, false)
    };
    match t {
        Value::Timestamp(t) if time::is_infinite(*t) => Ok(infinite_part(
            unit("timestamp without time zone", TIMESTAMP, ZONE)?,
            *t,
        )),
        Value::TimestampTz(t) if time::is_infinite(*t) => Ok(infinite_part(
            unit("timestamp with time zone", TIMESTAMP, ZONE)?,
            *t,
        )),
        Value::Timestamp(t) => Ok(Value::Float8(date_part(
            unit("timestamp without time zone", TIMESTAMP, &[])?,
            *t,
        )?)),
        Value::Date(d) => {
            let field = unit("date", DATE, &[])?;
            if crate::date::date_is_infinite(*d) {
                return Ok(infinite_part(
                    field,
                    if *d > 0 { i64::MAX } else { i64::MIN },
                ));
            }
            Ok(Value::Float8(date_part(
                field,
                i64::from(*d) * time::US_PER_DAY,
            )?))
        }
        Value::TimestampTz(t) => {
            let field = unit("timestamp with time zone", TIMESTAMP, ZONE)?;
            let offset = crate::tz::current_offset_at(*t);
            Ok(Value::Float8(match field {
                "epoch" => date_part(field, *t)?,
                "timezone" => offset as f64,
                "timezone_hour" => (offset / 3600) as f64,
                "timezone_minute" => ((offset / 60) % 60) as f64,
                _ => date_part(field, t.saturating_add(offset as i64 * time::US_PER_SEC))?,
            }))
        }
        Value::Interval(iv) => Ok(Value::Float8(interval_part(
            unit("interval", INTERVAL, &[])?,
            iv,
        )?)),
        Value::Time(t) => Ok(Value::Float8(crate::date::time_part(
            unit("time without time zone", TIME, &[])?,
            *t,
        )?)),
        other => Err(type_error("date_part", other)),
    }
}

/// `to_timestamp(seconds)`: seconds since the epoch to timestamptz; 22008 for NaN or out
/// of range.
fn to_timestamp(v: &Value) -> Result<Value> {
    let f = v.as_f64().ok_or_else(|| type_error("to_timestamp", v))?;
    if f.is_nan() {
        return Err(Error::DatetimeFieldOverflow(
            "timestamp cannot be NaN".into(),
        ));
    }
    let us = (f * 1e6).round();
    if !(time::MIN_TIMESTAMP_US as f64..time::END_TIMESTAMP_US as f64).contains(&us) {
        return Err(Error::DatetimeFieldOverflow(format!(
            "timestamp out of range: \"{}\"",
            Value::Float8(f).to_text().unwrap_or_default()
        )));
    }
    Ok(Value::TimestampTz(us as i64))
}

fn negative_sqrt() -> Error {
    Error::InvalidArgumentForPowerFunction("cannot take square root of a negative number".into())
}

fn arity(func: ScalarFunc) -> Error {
    Error::Internal(format!(
        "function {func:?} called with the wrong number of arguments"
    ))
}

fn rounding(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    match &vals[0] {
        Value::Numeric(d) => {
            let places = match vals.get(1) {
                Some(v) => v.as_i64().ok_or_else(|| type_error("round", v))?,
                None => 0,
            };
            let r = match func {
                ScalarFunc::Round if places >= 0 => {
                    // PostgreSQL pads to the requested scale: round(3, 2) is 3.00.
                    let places = places.min(28) as u32;
                    let mut r =
                        d.round_dp_with_strategy(places, RoundingStrategy::MidpointAwayFromZero);
                    r.rescale(places);
                    r
                }
                ScalarFunc::Round => {
                    let factor = Decimal::from_i128_with_scale(
                        10i128.pow(places.checked_neg().unwrap_or(i64::MAX).min(28) as u32),
                        0,
                    );
                    let q = (d / factor)
                        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
                    q.checked_mul(factor).ok_or_else(numeric_overflow)?
                }
                ScalarFunc::Floor => d.floor(),
                _ => d.ceil(),
            };
            Ok(Value::Numeric(r))
        }
        v => {
            let f = v.as_f64().ok_or_else(|| type_error("round", v))?;
            Ok(Value::Float8(match func {
                ScalarFunc::Round => f.round_ties_even(),
                ScalarFunc::Floor => f.floor(),
                _ => f.ceil(),
            }))
        }
    }
}

fn bad_unit(unit: &str, ty: &str) -> Error {
    Error::InvalidParameterValue(format!("unit \"{unit}\" not recognized for type {ty}"))
}

/// `date_trunc(unit, ts)`.
pub(crate) fn date_trunc(unit: &str, ts: i64, ty: &str) -> Result<i64> {
    let floor = |step: i64| ts.div_euclid(step) * step;
    let days = ts.div_euclid(US_PER_DAY);
    let (y, m, _) = time::civil_from_days(days);
    let month_start = |y: i64, m: u32| time::days_from_civil(y, m, 1) * US_PER_DAY;
    // Years before 1 AD are astronomical here (0 = 1 BC); PostgreSQL truncates the BC year
    // number the same way for year, and rounds decades/centuries away from the common era
    // boundary, which we mirror only for positive years.
    Ok(match unit {
        "microsecond" | "microseconds" => ts,
        "millisecond" | "milliseconds" => floor(1000),
        "second" | "seconds" => floor(US_PER_SEC),
        "minute" | "minutes" => floor(US_PER_MIN),
        "hour" | "hours" => floor(US_PER_HOUR),
        "day" | "days" => floor(US_PER_DAY),
        "week" | "weeks" => {
            // ISO weeks start on Monday; 1970-01-01 was a Thursday.
            let dow = (days + 3).rem_euclid(7);
            (days - dow) * US_PER_DAY
        }
        "month" | "months" => month_start(y, m),
        "quarter" => month_start(y, (m - 1) / 3 * 3 + 1),
        "year" | "years" => month_start(y, 1),
        "decade" | "decades" => month_start(y.div_euclid(10) * 10, 1),
        "century" | "centuries" => month_start((y - 1).div_euclid(100) * 100 + 1, 1),
        "millennium" | "millennia" => month_start((y - 1).div_euclid(1000) * 1000 + 1, 1),
        _ => return Err(bad_unit(unit, ty)),
    })
}

fn interval_trunc(unit: &str, iv: Interval) -> Result<Interval> {
    let t = |step: i64| iv.micros - iv.micros % step;
    // Whole multiples of `n` years, truncated toward zero as PostgreSQL's interval_trunc.
    let years = |n: i32| Interval {
        months: iv.months - iv.months % (12 * n),
        days: 0,
        micros: 0,
    };
    Ok(match unit {
        "microsecond" | "microseconds" => iv,
        "millisecond" | "milliseconds" => Interval {
            micros: t(1000),
            ..iv
        },
        "second" | "seconds" => Interval {
            micros: t(US_PER_SEC),
            ..iv
        },
        "minute" | "minutes" => Interval {
            micros: t(US_PER_MIN),
            ..iv
        },
        "hour" | "hours" => Interval {
            micros: t(US_PER_HOUR),
            ..iv
        },
        "day" | "days" => Interval { micros: 0, ..iv },
        "month" | "months" => Interval {
            months: iv.months,
            days: 0,
            micros: 0,
        },
        "year" | "years" => years(1),
        "decade" | "decades" => years(10),
        "century" | "centuries" => years(100),
        "millennium" | "millennia" => years(1000),
        "quarter" => Interval {
            months: iv.months - iv.months % 3,
            days: 0,
            micros: 0,
        },
        // Units PostgreSQL knows but an interval has not: 0A000, as it says.
        "week" | "weeks" => {
            return Err(Error::FeatureNotSupported(format!(
                "unit \"{unit}\" not supported for type interval"
            )))
        }
        _ => return Err(bad_unit(unit, "interval")),
    })
}

/// `date_part(field, ts)` / `extract(field FROM ts)` as double precision.
/// A field of `infinity` or `-infinity` as PostgreSQL 15 gives it: the signed infinity for
/// the fields that grow without bound (epoch, years and longer, julian), NULL for the rest.
fn infinite_part(field: &str, ts: i64) -> Value {
    match field {
        "epoch" | "year" | "years" | "decade" | "decades" | "century" | "centuries"
        | "millennium" | "millennia" | "julian" | "isoyear" => Value::Float8(if ts > 0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        }),
        _ => Value::Null,
    }
}

pub(crate) fn date_part(field: &str, ts: i64) -> Result<f64> {
    let days = ts.div_euclid(US_PER_DAY);
    let tod = ts.rem_euclid(US_PER_DAY);
    let (y, m, d) = time::civil_from_days(days);
    let sec_us = tod % US_PER_MIN;
    let doy = days - time::days_from_civil(y, 1, 1) + 1;
    let year_out = if y <= 0 { y - 1 } else { y } as f64;
    Ok(match field {
        "epoch" => ts as f64 / 1e6,
        "year" | "years" => year_out,
        "month" | "months" => m as f64,
        "day" | "days" => d as f64,
        "hour" | "hours" => (tod / US_PER_HOUR) as f64,
        "minute" | "minutes" => ((tod % US_PER_HOUR) / US_PER_MIN) as f64,
        // Whole seconds and the fraction apart, as PostgreSQL's float8 results.
        "second" | "seconds" => (sec_us / US_PER_SEC) as f64 + (sec_us % US_PER_SEC) as f64 / 1e6,
        "millisecond" | "milliseconds" => {
            (sec_us / US_PER_SEC) as f64 * 1000.0 + (sec_us % US_PER_SEC) as f64 / 1000.0
        }
        "microsecond" | "microseconds" => sec_us as f64,
        "dow" => (days + 4).rem_euclid(7) as f64,
        "isodow" => ((days + 3).rem_euclid(7) + 1) as f64,
        "doy" => doy as f64,
        // Julian day number (day 0 = 4714-11-24 BC) plus the fraction of the day elapsed.
        "julian" => {
            let secs = (tod / US_PER_SEC) as f64 + (tod % US_PER_SEC) as f64 / 1e6;
            (days + 2_440_588) as f64 + secs / 86_400.0
        }
        "quarter" => ((m - 1) / 3 + 1) as f64,
        "decade" => y.div_euclid(10) as f64,
        "century" => {
            (if y > 0 {
                (y + 99) / 100
            } else {
                -((99 - (y - 1)) / 100)
            }) as f64
        }
        "millennium" => {
            (if y > 0 {
                (y + 999) / 1000
            } else {
                -((999 - (y - 1)) / 1000)
            }) as f64
        }
        "week" | "isoyear" => {
            let (iso_year, week) = iso_week(days);
            if field == "week" {
                week as f64
            } else {
                iso_year as f64
            }
        }
        "timezone" | "timezone_hour" | "timezone_minute" => 0.0,
        _ => return Err(bad_unit(field, "timestamp")),
    })
}

fn iso_week(days: i64) -> (i64, i64) {
    // The ISO year is that of the Thursday of the date's week.
    let dow = (days + 3).rem_euclid(7); // Monday = 0
    let thursday = days - dow + 3;
    let (y, _, _) = time::civil_from_days(thursday);
    let jan1 = time::days_from_civil(y, 1, 1);
    (y, (thursday - jan1) / 7 + 1)
}

/// `date_part(field, iv)` of an interval, `field` canonical: the fields of PostgreSQL's
/// interval2tm (each truncated toward zero, so negative with a negative interval) and
/// its float8 arithmetic, the epoch counting a year as 365.25 days and a month as 30.
fn interval_part(field: &str, iv: &Interval) -> Result<f64> {
    let (years, months) = (iv.months / 12, iv.months % 12);
    let in_minute = iv.micros % US_PER_MIN;
    let (sec, fsec) = (in_minute / US_PER_SEC, in_minute % US_PER_SEC);
    Ok(match field {
        "epoch" => {
            iv.micros as f64 / 1e6
                + (365.25 * 86_400.0) * years as f64
                + (30.0 * 86_400.0) * months as f64
                + 86_400.0 * iv.days as f64
        }
        "year" => years as f64,
        "decade" => (years / 10) as f64,
        "century" => (years / 100) as f64,
        "millennium" => (years / 1000) as f64,
        "quarter" => (months / 3 + 1) as f64,
        "month" => months as f64,
        "day" => iv.days as f64,
        "hour" => (iv.micros / US_PER_HOUR) as f64,
        "minute" => ((iv.micros % US_PER_HOUR) / US_PER_MIN) as f64,
        "second" => sec as f64 + fsec as f64 / 1e6,
        "milliseconds" => sec as f64 * 1000.0 + fsec as f64 / 1000.0,
        "microseconds" => in_minute as f64,
        _ => return Err(bad_unit(field, "interval")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(v: Value) -> Expr {
        Expr::Literal(v)
    }

    fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }
    }

    fn ev(e: &Expr) -> Result<Value> {
        eval(e, &EvalContext::new(&[], &[], None))
    }

    fn func(f: ScalarFunc, args: Vec<Expr>) -> Expr {
        Expr::Func { func: f, args }
    }

    fn text(s: &str) -> Expr {
        lit(Value::Text(s.into()))
    }

    #[test]
    fn integer_arithmetic() {
        assert_eq!(
            ev(&bin(
                BinaryOp::Div,
                lit(Value::Int4(7)),
                lit(Value::Int4(2))
            ))
            .unwrap(),
            Value::Int4(3)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Div,
                lit(Value::Int4(-7)),
                lit(Value::Int4(2))
            ))
            .unwrap(),
            Value::Int4(-3)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Mod,
                lit(Value::Int4(-7)),
                lit(Value::Int4(2))
            ))
            .unwrap(),
            Value::Int4(-1)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Add,
                lit(Value::Int4(1)),
                lit(Value::Int8(2))
            ))
            .unwrap(),
            Value::Int8(3)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Add,
                lit(Value::Int2(1)),
                lit(Value::Int2(2))
            ))
            .unwrap(),
            Value::Int2(3)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Add,
                lit(Value::Int4(i32::MAX)),
                lit(Value::Int4(1))
            )),
            Err(Error::NumericValueOutOfRange("integer out of range".into()))
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Mul,
                lit(Value::Int8(i64::MAX)),
                lit(Value::Int4(2))
            )),
            Err(Error::NumericValueOutOfRange("bigint out of range".into()))
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Div,
                lit(Value::Int4(1)),
                lit(Value::Int4(0))
            )),
            Err(Error::DivisionByZero)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Mod,
                lit(Value::Int4(1)),
                lit(Value::Int4(0))
            )),
            Err(Error::DivisionByZero)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Mod,
                lit(Value::Int4(i32::MIN)),
                lit(Value::Int4(-1))
            ))
            .unwrap(),
            Value::Int4(0)
        );
        assert_eq!(
            ev(&Expr::Unary {
                op: UnaryOp::Neg,
                expr: Box::new(lit(Value::Int4(i32::MIN)))
            }),
            Err(Error::NumericValueOutOfRange("integer out of range".into()))
        );
        assert_eq!(
            ev(&bin(BinaryOp::Add, lit(Value::Int4(1)), lit(Value::Null))).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn numeric_and_float_arithmetic() {
        let d = |s: &str| Value::Numeric(s.parse().unwrap());
        assert_eq!(
            ev(&bin(BinaryOp::Add, lit(Value::Int4(1)), lit(d("1.5")))).unwrap(),
            d("2.5")
        );
        assert_eq!(
            ev(&bin(BinaryOp::Div, lit(d("1")), lit(Value::Int4(3)))).unwrap(),
            d("0.33333333333333333333")
        );
        assert_eq!(
            ev(&bin(BinaryOp::Div, lit(d("10")), lit(Value::Int4(3)))).unwrap(),
            d("3.3333333333333333")
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Mul,
                lit(Value::Float8(1.5)),
                lit(Value::Int4(2))
            ))
            .unwrap(),
            Value::Float8(3.0)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Add,
                lit(Value::Float4(1.5)),
                lit(Value::Float4(1.0))
            ))
            .unwrap(),
            Value::Float4(2.5)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Add,
                lit(Value::Float4(1.5)),
                lit(Value::Int4(1))
            ))
            .unwrap(),
            Value::Float8(2.5)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Div,
                lit(Value::Float8(1.0)),
                lit(Value::Float8(0.0))
            )),
            Err(Error::DivisionByZero)
        );
        assert!(matches!(
            ev(&bin(
                BinaryOp::Mul,
                lit(Value::Float8(1e300)),
                lit(Value::Float8(1e300))
            )),
            Err(Error::NumericValueOutOfRange(_))
        ));
        assert_eq!(
            ev(&bin(BinaryOp::Div, lit(d("1.0")), lit(d("0")))),
            Err(Error::DivisionByZero)
        );
    }

    #[test]
    fn comparisons_and_logic() {
        let t = Value::Bool(true);
        let f = Value::Bool(false);
        let n = Value::Null;
        let and =
            |a: &Value, b: &Value| ev(&bin(BinaryOp::And, lit(a.clone()), lit(b.clone()))).unwrap();
        let or =
            |a: &Value, b: &Value| ev(&bin(BinaryOp::Or, lit(a.clone()), lit(b.clone()))).unwrap();
        assert_eq!(and(&n, &f), f);
        assert_eq!(and(&f, &n), f);
        assert_eq!(and(&t, &n), n);
        assert_eq!(or(&n, &t), t);
        assert_eq!(or(&f, &n), n);
        assert_eq!(or(&f, &f), f);
        assert_eq!(
            ev(&Expr::Unary {
                op: UnaryOp::Not,
                expr: Box::new(lit(n.clone()))
            })
            .unwrap(),
            n
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Lt,
                lit(Value::Int4(1)),
                lit(Value::Float8(1.5))
            ))
            .unwrap(),
            t
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Eq,
                lit(Value::Int8(2)),
                lit(Value::Numeric(Decimal::new(20, 1)))
            ))
            .unwrap(),
            t
        );
        assert_eq!(ev(&bin(BinaryOp::Gt, text("b"), text("a"))).unwrap(), t);
        assert_eq!(
            ev(&bin(
                BinaryOp::Eq,
                lit(Value::Float8(f64::NAN)),
                lit(Value::Float8(f64::NAN))
            ))
            .unwrap(),
            t
        );
        assert_eq!(
            ev(&bin(BinaryOp::Eq, lit(Value::Int4(1)), lit(n.clone()))).unwrap(),
            n
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Lt,
                lit(Value::Timestamp(1)),
                lit(Value::TimestampTz(2))
            ))
            .unwrap(),
            t
        );
        assert!(
            eval_predicate(&lit(n.clone()), &EvalContext::new(&[], &[], None)).is_ok_and(|b| !b)
        );
        let inl = |v: Value, list: Vec<Value>, negated| {
            ev(&Expr::InList {
                expr: Box::new(lit(v)),
                list: list.into_iter().map(lit).collect(),
                negated,
            })
            .unwrap()
        };
        assert_eq!(
            inl(Value::Int4(1), vec![Value::Int4(2), Value::Int4(1)], false),
            t
        );
        assert_eq!(
            inl(Value::Int4(3), vec![Value::Int4(2), Value::Null], false),
            n
        );
        assert_eq!(inl(Value::Int4(3), vec![Value::Int4(2)], true), t);
        assert_eq!(
            inl(Value::Int4(2), vec![Value::Int4(2), Value::Null], true),
            f
        );
        assert_eq!(cmp_values(&Value::Null, &Value::Int4(1)), Ordering::Greater);
    }

    #[test]
    fn like_patterns() {
        let l = |s: &str, p: &str, ci| {
            ev(&Expr::Like {
                expr: Box::new(text(s)),
                pattern: Box::new(text(p)),
                negated: false,
                case_insensitive: ci,
            })
            .unwrap()
        };
        assert_eq!(l("SFO", "S%", false), Value::Bool(true));
        assert_eq!(l("SFO", "s%", false), Value::Bool(false));
        assert_eq!(l("SFO", "s%", true), Value::Bool(true));
        assert_eq!(l("SFO", "_F_", false), Value::Bool(true));
        assert_eq!(l("SFO", "%O%O", false), Value::Bool(false));
        assert_eq!(l("a%b", "a\\%b", false), Value::Bool(true));
        assert_eq!(l("axb", "a\\%b", false), Value::Bool(false));
        assert_eq!(l("", "%", false), Value::Bool(true));
        assert_eq!(l("abcabd", "%abd", false), Value::Bool(true));
    }

    #[test]
    fn float_to_numeric_keeps_the_shortest_digits() {
        let v = cast_value(Value::Float8(978_307_200.123456), DataType::Numeric).unwrap();
        assert_eq!(v.to_text().unwrap(), "978307200.123456");
        let v = cast_value(Value::Float8(0.1), DataType::Numeric).unwrap();
        assert_eq!(v.to_text().unwrap(), "0.1");
        // PostgreSQL keeps 15 significant digits of a double and 6 of a real.
        let v = cast_value(Value::Float8(1.0 / 3.0), DataType::Numeric).unwrap();
        assert_eq!(v.to_text().unwrap(), "0.333333333333333");
        let v = cast_value(Value::Float4(421.36), DataType::Numeric).unwrap();
        assert_eq!(v.to_text().unwrap(), "421.36");
    }

    #[test]
    fn casts() {
        assert_eq!(
            cast_value(Value::Text("42".into()), DataType::Int4).unwrap(),
            Value::Int4(42)
        );
        assert!(matches!(
            cast_value(Value::Text("abc".into()), DataType::Int4),
            Err(Error::InvalidTextRepresentation(_))
        ));
        assert_eq!(
            cast_value(Value::Float8(2.5), DataType::Int4).unwrap(),
            Value::Int4(2)
        );
        assert_eq!(
            cast_value(Value::Float8(3.5), DataType::Int4).unwrap(),
            Value::Int4(4)
        );
        assert_eq!(
            cast_value(Value::Numeric(Decimal::new(25, 1)), DataType::Int4).unwrap(),
            Value::Int4(3)
        );
        assert_eq!(
            cast_value(Value::Int8(1 << 40), DataType::Int4),
            Err(Error::NumericValueOutOfRange("integer out of range".into()))
        );
        assert_eq!(
            cast_value(Value::Float8(1.5), DataType::Text).unwrap(),
            Value::Text("1.5".into())
        );
        assert_eq!(
            cast_value(Value::Timestamp(0), DataType::Text).unwrap(),
            Value::Text("1970-01-01 00:00:00".into())
        );
        assert_eq!(
            cast_value(Value::Int4(1), DataType::Numeric).unwrap(),
            Value::Numeric(Decimal::ONE)
        );
        assert_eq!(
            cast_value(Value::Bool(true), DataType::Int4).unwrap(),
            Value::Int4(1)
        );
        assert!(matches!(
            cast_value(Value::Text("abcd".into()), DataType::Varchar(Some(3))),
            Err(Error::StringDataRightTruncation(_))
        ));
        // 42846, PostgreSQL's cannot_coerce.
        assert!(matches!(
            cast_value(Value::Bool(true), DataType::Timestamp),
            Err(Error::CannotCoerce(_))
        ));
        assert_eq!(
            cast_value(Value::Null, DataType::Int4).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn time_arithmetic_and_functions() {
        let ts = time::parse_timestamp("2001-01-01 00:05:00").unwrap();
        let hour = Value::Interval(Interval {
            months: 0,
            days: 0,
            micros: US_PER_HOUR,
        });
        assert_eq!(
            ev(&bin(
                BinaryOp::Add,
                lit(Value::Timestamp(ts)),
                lit(hour.clone())
            ))
            .unwrap(),
            Value::Timestamp(ts + US_PER_HOUR)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Sub,
                lit(Value::TimestampTz(ts)),
                lit(hour.clone())
            ))
            .unwrap(),
            Value::TimestampTz(ts - US_PER_HOUR)
        );
        assert_eq!(
            ev(&bin(
                BinaryOp::Sub,
                lit(Value::Timestamp(ts + US_PER_DAY + 5)),
                lit(Value::Timestamp(ts))
            ))
            .unwrap(),
            Value::Interval(Interval {
                months: 0,
                days: 1,
                micros: 5
            })
        );
        assert_eq!(
            ev(&bin(BinaryOp::Mul, lit(hour.clone()), lit(Value::Int4(2)))).unwrap(),
            Value::Interval(Interval {
                months: 0,
                days: 0,
                micros: 2 * US_PER_HOUR
            })
        );
        let trunc = ev(&func(
            ScalarFunc::DateTrunc,
            vec![text("hour"), lit(Value::Timestamp(ts))],
        ))
        .unwrap();
        assert_eq!(
            trunc,
            Value::Timestamp(time::parse_timestamp("2001-01-01").unwrap())
        );
        let part = |f: &str| {
            ev(&func(
                ScalarFunc::DatePart,
                vec![text(f), lit(Value::Timestamp(ts))],
            ))
            .unwrap()
        };
        assert_eq!(part("minute"), Value::Float8(5.0));
        assert_eq!(part("year"), Value::Float8(2001.0));
        assert_eq!(part("dow"), Value::Float8(1.0));
        assert_eq!(part("epoch"), Value::Float8(978_307_500.0));
        assert!(matches!(
            ev(&func(
                ScalarFunc::DatePart,
                vec![text("fortnight"), lit(Value::Timestamp(ts))]
            )),
            Err(Error::InvalidParameterValue(_))
        ));
        assert_eq!(
            ev(&func(
                ScalarFunc::ToTimestamp,
                vec![lit(Value::Float8(1.5))]
            ))
            .unwrap(),
            Value::TimestampTz(1_500_000)
        );
        let w = WindowMetaValues {
            lower_us: 0,
            upper_us: 10,
            range_us: 2 * US_PER_DAY,
            slide_us: US_PER_HOUR,
            tz: false,
        };
        let ctx = EvalContext::new(&[], &[], None).with_window(w);
        assert_eq!(
            eval(&Expr::WindowMeta(WindowMeta::Wtime), &ctx).unwrap(),
            Value::Timestamp(10)
        );
        assert_eq!(
            eval(&Expr::WindowMeta(WindowMeta::Wstart), &ctx).unwrap(),
            Value::Timestamp(0)
        );
        assert_eq!(
            eval(&Expr::WindowMeta(WindowMeta::Wrange), &ctx).unwrap(),
            Value::Interval(Interval {
                months: 0,
                days: 2,
                micros: 0
            })
        );
        assert_eq!(
            eval(&Expr::WindowMeta(WindowMeta::Wslide), &ctx).unwrap(),
            hour
        );
    }

    #[test]
    fn scalar_functions() {
        let i = |v| lit(Value::Int4(v));
        assert_eq!(
            ev(&func(
                ScalarFunc::Coalesce,
                vec![lit(Value::Null), i(2), i(3)]
            ))
            .unwrap(),
            Value::Int4(2)
        );
        assert_eq!(
            ev(&func(ScalarFunc::NullIf, vec![i(2), i(2)])).unwrap(),
            Value::Null
        );
        assert_eq!(
            ev(&func(
                ScalarFunc::Greatest,
                vec![i(2), lit(Value::Null), i(5)]
            ))
            .unwrap(),
            Value::Int4(5)
        );
        assert_eq!(
            ev(&func(ScalarFunc::Least, vec![i(2), i(5)])).unwrap(),
            Value::Int4(2)
        );
        assert_eq!(
            ev(&func(ScalarFunc::Abs, vec![i(-2)])).unwrap(),
            Value::Int4(2)
        );
        assert_eq!(
            ev(&func(
                ScalarFunc::Round,
                vec![lit(Value::Numeric(Decimal::new(25, 1)))]
            ))
            .unwrap(),
            Value::Numeric(Decimal::new(3, 0))
        );
        assert_eq!(
            ev(&func(
                ScalarFunc::Round,
                vec![lit(Value::Numeric(Decimal::new(12345, 3))), i(2)]
            ))
            .unwrap(),
            Value::Numeric(Decimal::new(1235, 2))
        );
        assert_eq!(
            ev(&func(ScalarFunc::Round, vec![lit(Value::Float8(2.5))])).unwrap(),
            Value::Float8(2.0)
        );
        assert_eq!(
            ev(&func(ScalarFunc::Floor, vec![lit(Value::Float8(-1.5))])).unwrap(),
            Value::Float8(-2.0)
        );
        assert_eq!(
            ev(&func(ScalarFunc::Sqrt, vec![lit(Value::Float8(4.0))])).unwrap(),
            Value::Float8(2.0)
        );
        assert!(matches!(
            ev(&func(ScalarFunc::Sqrt, vec![lit(Value::Float8(-4.0))])),
            Err(Error::InvalidArgumentForPowerFunction(_))
        ));
        // numeric sqrt at PostgreSQL 15's scale (its outputs for the same inputs).
        for (x, pg) in [
            ("0", "0.000000000000000"),
            ("2", "1.414213562373095"),
            ("1e20", "10000000000.00000"),
            ("0.0001", "0.01000000000000000"),
            ("12345678.9", "3513.6418286444622"),
            ("0.00000000123456", "0.000035136306009596399"),
            ("10000", "100.0000000000000"),
        ] {
            let d = Decimal::from_scientific(x).or_else(|_| x.parse()).unwrap();
            let r = ev(&func(ScalarFunc::Sqrt, vec![lit(Value::Numeric(d))])).unwrap();
            assert_eq!(r.to_text().unwrap(), pg, "sqrt({x})");
        }
        assert_eq!(
            ev(&func(ScalarFunc::Upper, vec![text("sfo")])).unwrap(),
            Value::Text("SFO".into())
        );
        assert_eq!(
            ev(&func(ScalarFunc::Length, vec![text("héllo")])).unwrap(),
            Value::Int4(5)
        );
        assert_eq!(
            ev(&func(ScalarFunc::Substr, vec![text("abcdef"), i(2), i(3)])).unwrap(),
            Value::Text("bcd".into())
        );
        assert_eq!(
            ev(&func(ScalarFunc::Substr, vec![text("abcdef"), i(0), i(2)])).unwrap(),
            Value::Text("a".into())
        );
        assert_eq!(
            ev(&func(ScalarFunc::Substr, vec![text("abcdef"), i(4)])).unwrap(),
            Value::Text("def".into())
        );
        assert_eq!(
            ev(&func(
                ScalarFunc::Concat,
                vec![text("a"), lit(Value::Null), i(1)]
            ))
            .unwrap(),
            Value::Text("a1".into())
        );
        assert_eq!(
            ev(&bin(BinaryOp::Concat, text("a"), lit(Value::Int4(1)))).unwrap(),
            Value::Text("a1".into())
        );
        assert!(
            matches!(ev(&func(ScalarFunc::Version, vec![])).unwrap(), Value::Text(s) if s.starts_with("PostgreSQL 15.0 (tcq"))
        );
        assert!(matches!(
            ev(&func(ScalarFunc::CurrentSetting, vec![text("nope")])),
            Err(Error::UndefinedObject(_))
        ));
        assert_eq!(
            ev(&func(
                ScalarFunc::CurrentSetting,
                vec![text("nope"), lit(Value::Bool(true))]
            ))
            .unwrap(),
            Value::Null
        );
        let case = Expr::Case {
            operand: None,
            branches: vec![(lit(Value::Null), i(1)), (lit(Value::Bool(true)), i(2))],
            otherwise: Some(Box::new(i(3))),
        };
        assert_eq!(ev(&case).unwrap(), Value::Int4(2));
        let row = [Value::Int4(7)];
        let params = [Value::Text("x".into())];
        let ctx = EvalContext::new(&row, &params, None);
        assert_eq!(eval(&Expr::Column(0), &ctx).unwrap(), Value::Int4(7));
        assert_eq!(
            eval(&Expr::Param(0), &ctx).unwrap(),
            Value::Text("x".into())
        );
        assert!(matches!(
            eval(&Expr::Param(1), &ctx),
            Err(Error::ProtocolViolation(_))
        ));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::expr::{eval, EvalContext};
        use crate::sql::{BinaryOp, Expr};
        use crate::types::Value;
        let e = Expr::Binary {
            op: BinaryOp::Div,
            left: Box::new(Expr::Column(0)),
            right: Box::new(Expr::Literal(Value::Int4(2))),
        };
        let row = [Value::Int4(7)];
        assert_eq!(
            eval(&e, &EvalContext::new(&row, &[], None)).unwrap(),
            Value::Int4(3)
        );
    }
}
