//! Scalar expression evaluation (a minimal first cut; the full PostgreSQL semantics land
//! with the SQL layer).
//!
//! Contract used by the executor (keep it): `EvalContext::new(row, params, window)` and
//! `eval(&Expr, &EvalContext) -> Result<Value>`; `WindowMetaValues` carries the instance
//! being emitted.

use crate::error::{Error, Result};
use crate::sql::{Expr, WindowMeta};
use crate::types::{Interval, Value};

/// The instance being emitted, for wtime(*), wstart(*), wrange(*), wslide(*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowMetaValues {
    /// Instance start, microseconds since the epoch.
    pub lower_us: i64,
    /// Instance end (exclusive), microseconds since the epoch: wtime.
    pub upper_us: i64,
    /// RANGE, microseconds.
    pub range_us: i64,
    /// SLIDE, microseconds.
    pub slide_us: i64,
    /// wtime/wstart are timestamptz (else timestamp).
    pub tz: bool,
}

/// What an expression can see.
pub struct EvalContext<'a> {
    /// The row in context.
    pub row: &'a [Value],
    /// Bound parameters `$1..`.
    pub params: &'a [Value],
    /// The instance being emitted, if any.
    pub window: Option<WindowMetaValues>,
}

impl<'a> EvalContext<'a> {
    /// A context over `row` with `params` and the emitted instance `window`.
    pub fn new(row: &'a [Value], params: &'a [Value], window: Option<WindowMetaValues>) -> Self {
        EvalContext { row, params, window }
    }
}

/// Evaluate `expr` in `ctx`.
pub fn eval(expr: &Expr, ctx: &EvalContext) -> Result<Value> {
    match expr {
        Expr::Column(i) => Ok(ctx.row[*i].clone()),
        Expr::Literal(v) => Ok(v.clone()),
        Expr::Param(i) => Ok(ctx.params.get(*i).cloned().unwrap_or(Value::Null)),
        Expr::WindowMeta(m) => {
            let w = ctx.window.ok_or_else(|| Error::FeatureNotSupported("window functions need a window clause".into()))?;
            let ts = |t| if w.tz { Value::TimestampTz(t) } else { Value::Timestamp(t) };
            Ok(match m {
                WindowMeta::Wtime => ts(w.upper_us),
                WindowMeta::Wstart => ts(w.lower_us),
                WindowMeta::Wrange => Value::Interval(Interval { months: 0, days: 0, micros: w.range_us }),
                WindowMeta::Wslide => Value::Interval(Interval { months: 0, days: 0, micros: w.slide_us }),
            })
        }
        _ => Err(Error::FeatureNotSupported("expression not supported yet".into())),
    }
}
