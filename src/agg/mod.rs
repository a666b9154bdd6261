//! Aggregate functions as partial states: `update`, `merge`, `evaluate`.
//!
//! The contract (after DataFusion's `Accumulator`): [`Acc::update`] folds one input value,
//! [`Acc::merge`] folds another partial state of the same call, and [`Acc::evaluate`]
//! computes the result without consuming the state (a partial is handed to child windows
//! after its own window has emitted). `avg` keeps `(sum, count)`; `variance` and `stddev`
//! keep `(n, sum, sum of squares)` exactly for integers and numerics, and PostgreSQL's
//! Youngs-Cramer triple for floats, so that results print as PostgreSQL prints them.
//!
//! Which coverage relation each aggregate may share along (paper Theorems 5 and 6):
//! - count, sum, avg, stddev, variance are distributive or algebraic: a partial may be
//!   merged only once, so they use "partitioned by" edges ([`Sharing::PartitionedBy`]);
//! - min and max (and bool_and, bool_or: min and max of booleans) are idempotent under
//!   overlap: "covered by" edges ([`Sharing::CoveredBy`]);
//! - `DISTINCT` aggregates are holistic here and are computed without sharing.
//!
//! ```ignore
//! use tcq::agg::AggSpec;
//! use tcq::sql::AggFunc;
//! use tcq::types::{DataType, Value};
//! let spec = AggSpec::new(AggFunc::Avg, DataType::Int4, false);
//! let mut a = spec.init();
//! a.update(&spec, &Value::Int4(1)).unwrap();
//! let mut b = spec.init();
//! b.update(&spec, &Value::Int4(2)).unwrap();
//! a.merge(&spec, &b).unwrap();
//! assert_eq!(a.evaluate(&spec).unwrap().to_text().unwrap(), "1.5000000000000000");
//! ```

pub(crate) mod numeric;
pub(crate) mod ordered;
pub(crate) mod regr;

use std::cmp::Ordering;

use hashbrown::HashSet;
use num_bigint::BigInt;
use rust_decimal::Decimal;

use crate::error::{Error, Result};
use crate::sql::AggFunc;
use crate::types::{DataType, Value};
use crate::wcg::Sharing;
use numeric::{
    div_at_scale, div_scaled, from_decimal, select_div_scale, sqrt_at_scale, to_decimal,
};

/// How one aggregate call accumulates, fixed at plan time from its function and argument type.
#[derive(Clone, Debug, PartialEq)]
pub struct AggSpec {
    /// The function.
    pub(crate) func: AggFunc,
    /// The argument's type.
    pub(crate) arg_type: DataType,
    /// DISTINCT.
    pub(crate) distinct: bool,
    /// Distinct values one DISTINCT state keeps; one more is 54000 (`distinct_values_max`).
    /// `usize::MAX` (no bound) unless the executor sets it from its limits.
    pub(crate) distinct_values_max: usize,
}

/// A partial aggregate state.
#[derive(Clone, Debug)]
pub enum Acc {
    /// count(*) / count(x).
    Count(i64),
    /// sum/avg over integers: exact sum and count of non-NULL inputs.
    IntSum {
        /// Exact sum.
        sum: i128,
        /// Inputs folded.
        n: i64,
    },
    /// sum/avg over numeric.
    NumSum {
        /// Exact sum (28 digits).
        sum: Decimal,
        /// Inputs folded.
        n: i64,
    },
    /// sum/avg over floats.
    FloatSum {
        /// Sum.
        sum: f64,
        /// Inputs folded.
        n: i64,
        /// An input was infinite or NaN: a sum that is not finite is then no overflow.
        nonfinite: bool,
    },
    /// sum/avg over intervals: the field-wise sum (PostgreSQL's interval_pl, overflow
    /// checked) and count of non-NULL inputs.
    IntervalSum {
        /// Sum.
        sum: crate::types::Interval,
        /// Inputs folded.
        n: i64,
    },
    /// min/max: the extreme so far, `Null` before any input.
    Extreme(Value),
    /// bit_and/bit_or/bit_xor: the bits so far (as a bigint), `None` before any input.
    Bits(Option<i64>),
    /// variance/stddev over integers and numerics: exact moments, as scaled integers;
    /// boxed, so that the common states (count, sum, avg, min, max) take 32 bytes, not 48.
    Moments(Box<Moments>),
    /// [`Acc::Moments`] whose sum or sum of squares left i128's range (bigint inputs
    /// from about 4e18, numerics of many digits): the same state with exact big
    /// integers, boxed so that the common states stay small.
    WideMoments(Box<WideMoments>),
    /// variance/stddev over floats: PostgreSQL's (N, Sx, Sxx) Youngs-Cramer state.
    FloatMoments {
        /// N
        n: f64,
        /// Sum of x
        sx: f64,
        /// Sum of squared deviations
        sxx: f64,
        /// Finite inputs gave an infinite sum or sum of squares (PostgreSQL's
        /// float8_accum raises 22003 there; the error waits for the result).
        overflow: bool,
    },
    /// DISTINCT: the set of distinct non-NULL inputs; evaluated by the plain aggregate.
    Distinct(Box<HashSet<GroupValue>>),
    /// sum/avg/variance/stddev over numerics that folded a `NaN`: every result is NaN,
    /// as PostgreSQL's NaNcount makes it.
    NumNaN {
        /// Inputs folded.
        n: i64,
    },
}

/// The exact moments of [`Acc::Moments`].
#[derive(Clone, Debug, Default)]
pub struct Moments {
    /// Inputs folded.
    pub(crate) n: i64,
    /// Sum of x, exact, scaled by 10^scale.
    pub(crate) sum: i128,
    /// Sum of x^2, exact, scaled by 10^(2*scale).
    pub(crate) sumsq: i128,
    /// Decimal scale of the inputs seen (the largest).
    pub(crate) scale: u32,
}

impl Moments {
    /// Fold in one integer input `m` at scale 0 (smallint and integer inputs only: their
    /// squares stay far below i128's range).
    #[inline(always)]
    pub(crate) fn add_small_int(&mut self, m: i128) {
        self.n += 1;
        self.sum += m;
        self.sumsq += m * m;
    }

    /// Fold in `n2` inputs of sums `s2`, `q2` at scale `sc2`; false (and nothing
    /// changed) when a sum would leave i128's range.
    fn add(&mut self, n2: i64, s2: i128, q2: i128, sc2: u32) -> bool {
        let target = self.scale.max(sc2);
        let sums = (|| {
            let (a, aq) = rescale_moments(self.sum, self.sumsq, self.scale, target).ok()?;
            let (b, bq) = rescale_moments(s2, q2, sc2, target).ok()?;
            Some((a.checked_add(b)?, aq.checked_add(bq)?))
        })();
        match sums {
            Some((s, q)) => {
                (self.sum, self.sumsq, self.scale) = (s, q, target);
                self.n += n2;
                true
            }
            None => false,
        }
    }
}

/// The exact moments of [`Acc::WideMoments`]: as [`Acc::Moments`], in big integers.
#[derive(Clone, Debug)]
pub struct WideMoments {
    /// Inputs folded.
    pub(crate) n: i64,
    /// Sum of x, scaled by 10^scale.
    pub(crate) sum: BigInt,
    /// Sum of x^2, scaled by 10^(2*scale).
    pub(crate) sumsq: BigInt,
    /// Decimal scale of the inputs seen (the largest).
    pub(crate) scale: u32,
}

impl WideMoments {
    fn of(n: i64, sum: i128, sumsq: i128, scale: u32) -> WideMoments {
        WideMoments {
            n,
            sum: BigInt::from(sum),
            sumsq: BigInt::from(sumsq),
            scale,
        }
    }

    /// A moments state, narrow or wide, as big integers.
    fn from_acc(a: &Acc) -> WideMoments {
        match a {
            Acc::Moments(m) => WideMoments::of(m.n, m.sum, m.sumsq, m.scale),
            Acc::WideMoments(w) => (**w).clone(),
            other => unreachable!("widening {other:?}: only moments widen"),
        }
    }

    /// The state at scale `to` (>= its own): sums multiplied by 10^(to - scale).
    fn rescaled(mut self, to: u32) -> WideMoments {
        if to > self.scale {
            let k = BigInt::from(10u8).pow(to - self.scale);
            self.sumsq *= &k * &k;
            self.sum *= k;
            self.scale = to;
        }
        self
    }

    /// Fold another state in.
    fn merge(self, other: WideMoments) -> WideMoments {
        let to = self.scale.max(other.scale);
        let (a, b) = (self.rescaled(to), other.rescaled(to));
        WideMoments {
            n: a.n + b.n,
            sum: a.sum + b.sum,
            sumsq: a.sumsq + b.sumsq,
            scale: to,
        }
    }
}

/// A value usable as a hash key: floats by bit pattern (NaN equals NaN, as PostgreSQL
/// groups them), -0.0 folded into 0.0.
#[derive(Clone, Debug)]
pub struct GroupValue(pub(crate) Value);

impl PartialEq for GroupValue {
    fn eq(&self, other: &Self) -> bool {
        group_eq(&self.0, &other.0)
    }
}
impl Eq for GroupValue {}
impl std::hash::Hash for GroupValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state)
    }
}

/// Equality for grouping: NULL equals NULL, NaN equals NaN.
pub(crate) fn group_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float8(x), Value::Float8(y)) => canonical_f64(*x) == canonical_f64(*y),
        (Value::Float4(x), Value::Float4(y)) => {
            canonical_f64(*x as f64) == canonical_f64(*y as f64)
        }
        (Value::Numeric(x), Value::Numeric(y)) => x == y,
        (Value::WideNumeric(_), _) | (_, Value::WideNumeric(_)) => {
            compare_values(a, b) == Ordering::Equal
        }
        _ => a == b,
    }
}

/// The bits a float groups and hashes by: one NaN, -0.0 folded into 0.0.
pub(crate) fn canonical_f64(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

/// Hash consistent with [`group_eq`].
pub(crate) fn hash_value<H: std::hash::Hasher>(v: &Value, state: &mut H) {
    use std::hash::Hash;
    if let Value::WideNumeric(w) = v {
        // Equal to a narrow numeric when its value is one: hashed as that.
        match w.normalized() {
            Ok(d) => return hash_value(&Value::Numeric(d), state),
            Err((m, s)) => {
                std::mem::discriminant(v).hash(state);
                return (m, s).hash(state);
            }
        }
    }
    std::mem::discriminant(v).hash(state);
    match v {
        Value::Null => {}
        Value::Bool(b) => b.hash(state),
        Value::Int2(i) => i.hash(state),
        Value::Int4(i) => i.hash(state),
        Value::Int8(i) => i.hash(state),
        Value::Float4(f) => canonical_f64(*f as f64).hash(state),
        Value::Float8(f) => canonical_f64(*f).hash(state),
        Value::Numeric(d) => d.normalize().hash(state),
        Value::WideNumeric(_) => unreachable!("hashed above"),
        Value::Text(s) => s.as_bytes().hash(state),
        Value::Timestamp(t) | Value::TimestampTz(t) | Value::Time(t) => t.hash(state),
        Value::Date(d) => d.hash(state),
        Value::Interval(i) => i.hash(state),
    }
}

/// SQL ordering of two non-NULL values of one type (NaN sorts above all floats, as in
/// PostgreSQL; text compares bytewise, the C collation).
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Greater,
        (_, Null) => Ordering::Less,
        (Bool(x), Bool(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Timestamp(x), Timestamp(y)) | (TimestampTz(x), TimestampTz(y)) => x.cmp(y),
        (Interval(x), Interval(y)) => interval_key(x).cmp(&interval_key(y)),
        (Numeric(x), Numeric(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Time(x), Time(y)) => x.cmp(y),
        _ => compare_numbers(a, b),
    }
}

fn compare_numbers(a: &Value, b: &Value) -> Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    use crate::types_wide::WideNumeric;
    if matches!(a, Value::WideNumeric(_)) || matches!(b, Value::WideNumeric(_)) {
        if let (Some(x), Some(y)) = (WideNumeric::exact_of(a), WideNumeric::exact_of(b)) {
            return WideNumeric::cmp_exact(&x, &y);
        }
    }
    let exact = |v: &Value| matches!(v, Value::Numeric(_)) || v.as_i64().is_some();
    if exact(a) && exact(b) {
        if let (Some(x), Some(y)) = (decimal_of(a), decimal_of(b)) {
            return x.cmp(&y);
        }
    }
    nan_order(
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    )
}

/// PostgreSQL's float order: NaN above every other value and equal to itself.
pub(crate) fn nan_order(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// Intervals compare as PostgreSQL does: months as 30 days, days as 24 hours.
fn interval_key(i: &crate::types::Interval) -> i128 {
    (i.months as i128 * 30 + i.days as i128) * 86_400_000_000 + i.micros as i128
}

/// The sharing class of a list of aggregate calls: the strictest among them.
pub fn sharing_of(specs: &[AggSpec]) -> Sharing {
    let mut class = Sharing::CoveredBy;
    for s in specs {
        let c = if s.distinct {
            Sharing::None
        } else {
            match s.func {
                AggFunc::Min | AggFunc::Max | AggFunc::BoolAnd | AggFunc::BoolOr => {
                    Sharing::CoveredBy
                }
                _ => Sharing::PartitionedBy,
            }
        };
        class = class.min(c);
    }
    class
}

/// True when merging `spec`'s partial states is exactly associative, so a sliding
/// aggregator may group the merges as it likes (Two-Stacks, [`crate::wcg::Slider`]) and
/// still give the window computed by panes: counts, sums and averages of integers, min and
/// max (and bool_and, bool_or) of any type (a total order), variances of integers and
/// numerics (exact moments). Not
/// floats (rounding depends on the order of additions), numeric sums (28 digits round when a
/// scale grows) or DISTINCT.
pub(crate) fn merges_associatively(spec: &AggSpec) -> bool {
    if spec.distinct {
        return false;
    }
    let t = spec.arg_type;
    match spec.func {
        AggFunc::CountStar
        | AggFunc::Count
        | AggFunc::Min
        | AggFunc::Max
        | AggFunc::BoolAnd
        | AggFunc::BoolOr
        | AggFunc::BitAnd
        | AggFunc::BitOr
        | AggFunc::BitXor => true,
        AggFunc::Sum | AggFunc::Avg => t.is_integer(),
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            t.is_integer() || t == DataType::Numeric
        }
    }
}

/// True when a merged partial state of `spec` can be taken out again exactly
/// ([`Acc::subtract`]): counts, and sums and averages of integers. Never floats.
pub(crate) fn subtracts_exactly(spec: &AggSpec) -> bool {
    !spec.distinct
        && match spec.func {
            AggFunc::CountStar | AggFunc::Count => true,
            AggFunc::Sum | AggFunc::Avg => spec.arg_type.is_integer(),
            _ => false,
        }
}

/// The sliding aggregators a list of aggregate calls allows ([`crate::wcg::Sliders`]):
/// Two-Stacks when every state merges associatively, subtract-on-evict when every state
/// subtracts exactly.
pub fn sliders_of(specs: &[AggSpec]) -> crate::wcg::Sliders {
    crate::wcg::Sliders {
        two_stacks: specs.iter().all(merges_associatively),
        subtract: specs.iter().all(subtracts_exactly),
    }
}

/// PostgreSQL's float_overflow_error: finite inputs gave an infinite float sum.
fn float_overflow() -> Error {
    Error::NumericValueOutOfRange("value out of range: overflow".into())
}

pub(crate) fn out_of_range(ty: &str) -> Error {
    Error::NumericValueOutOfRange(format!("{ty} out of range"))
}

fn decimal_of(v: &Value) -> Option<Decimal> {
    match v {
        Value::Numeric(d) => Some(*d),
        _ => v.as_i64().map(Decimal::from),
    }
}

/// 54000 once a DISTINCT state holds more than `spec.distinct_values_max` values.
fn check_distinct(spec: &AggSpec, len: usize) -> Result<()> {
    if len > spec.distinct_values_max {
        return Err(crate::Error::ProgramLimitExceeded(format!(
            "an aggregate over DISTINCT values holds more than {} distinct values in one group of one window instance (distinct_values_max)",
            spec.distinct_values_max
        )));
    }
    Ok(())
}

impl AggSpec {
    /// The accumulation for `func` over `arg_type`.
    pub fn new(func: AggFunc, arg_type: DataType, distinct: bool) -> AggSpec {
        AggSpec {
            func,
            arg_type,
            distinct,
            distinct_values_max: usize::MAX,
        }
    }

    /// A fresh, empty state.
    pub(crate) fn init(&self) -> Acc {
        if self.distinct {
            return Acc::Distinct(Box::default());
        }
        self.init_plain()
    }

    fn init_plain(&self) -> Acc {
        let t = self.arg_type;
        match self.func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(0),
            AggFunc::Sum | AggFunc::Avg => {
                if t.is_integer() {
                    Acc::IntSum { sum: 0, n: 0 }
                } else if t == DataType::Interval {
                    Acc::IntervalSum {
                        sum: Default::default(),
                        n: 0,
                    }
                } else if t == DataType::Numeric {
                    Acc::NumSum {
                        sum: Decimal::ZERO,
                        n: 0,
                    }
                } else {
                    Acc::FloatSum {
                        sum: 0.0,
                        n: 0,
                        nonfinite: false,
                    }
                }
            }
            AggFunc::Min | AggFunc::Max | AggFunc::BoolAnd | AggFunc::BoolOr => {
                Acc::Extreme(Value::Null)
            }
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => Acc::Bits(None),
            AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
                if t.is_integer() || t == DataType::Numeric {
                    Acc::Moments(Box::default())
                } else {
                    Acc::FloatMoments {
                        n: 0.0,
                        sx: 0.0,
                        sxx: 0.0,
                        overflow: false,
                    }
                }
            }
        }
    }
}

impl Acc {
    /// Fold one input. `count(*)` passes any value (use `Value::Bool(true)`); other
    /// aggregates ignore NULL, as SQL does.
    ///
    /// Errors: 22003 when an exact sum leaves its range.
    pub(crate) fn update(&mut self, spec: &AggSpec, v: &Value) -> Result<()> {
        if spec.func == AggFunc::CountStar {
            if let Acc::Count(n) = self {
                *n += 1;
            }
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        // A numeric NaN makes a numeric sum or moments NaN for good.
        if crate::types_wide::is_nan(v) || matches!(self, Acc::NumNaN { .. }) {
            if let Some(n) = self.numeric_inputs() {
                *self = Acc::NumNaN { n: n + 1 };
                return Ok(());
            }
        }
        // Sums and moments are kept in Decimals and 128-bit integers: a wide numeric input
        // is refused (min, max and count take it).
        if matches!(v, Value::WideNumeric(_))
            && matches!(
                self,
                Acc::NumSum { .. } | Acc::Moments(_) | Acc::WideMoments(_)
            )
        {
            return Err(crate::types_wide::too_wide());
        }
        match self {
            Acc::Count(n) | Acc::NumNaN { n } => *n += 1,
            Acc::IntSum { sum, n } => {
                *sum = sum
                    .checked_add(v.as_i64().unwrap_or(0) as i128)
                    .ok_or_else(|| out_of_range("numeric"))?;
                *n += 1;
            }
            Acc::NumSum { sum, n } => {
                let d = decimal_of(v).unwrap_or_default();
                *sum = sum.checked_add(d).ok_or_else(|| out_of_range("numeric"))?;
                *n += 1;
            }
            Acc::IntervalSum { sum, n } => {
                if let Value::Interval(iv) = v {
                    *sum = crate::expr::interval_add(*sum, *iv, 1)?;
                }
                *n += 1;
            }
            Acc::FloatSum { sum, n, nonfinite } => {
                let x = v.as_f64().unwrap_or(0.0);
                *sum += x;
                *n += 1;
                *nonfinite |= !x.is_finite();
            }
            Acc::Extreme(cur) => {
                let better = cur.is_null()
                    || if spec.func.keeps_least() {
                        compare_values(v, cur) == Ordering::Less
                    } else {
                        compare_values(v, cur) == Ordering::Greater
                    };
                if better {
                    *cur = v.clone();
                }
            }
            Acc::Bits(cur) => {
                let x = v.as_i64().unwrap_or(0);
                *cur = Some(cur.map_or(x, |c| combine_bits(spec.func, c, x)));
            }
            Acc::Moments(_) | Acc::WideMoments(_) => {
                let (m, s) = match v {
                    Value::Numeric(d) => from_decimal(d),
                    _ => (v.as_i64().unwrap_or(0) as i128, 0),
                };
                if let Acc::Moments(st) = self {
                    if m.checked_mul(m).is_some_and(|sq| st.add(1, m, sq, s)) {
                        return Ok(());
                    }
                }
                // Past i128 (or already wide): in big integers.
                let big = BigInt::from(m);
                let one = Acc::WideMoments(Box::new(WideMoments {
                    n: 1,
                    sumsq: &big * &big,
                    sum: big,
                    scale: s,
                }));
                self.merge(spec, &one)?;
            }
            Acc::FloatMoments {
                n,
                sx,
                sxx,
                overflow,
            } => float_accum(n, sx, sxx, overflow, v.as_f64().unwrap_or(0.0)),
            Acc::Distinct(set) => {
                set.insert(GroupValue(v.clone()));
                check_distinct(spec, set.len())?;
            }
        }
        Ok(())
    }

    /// Fold another partial state of the same aggregate call into this one.
    ///
    /// Errors: 22003 when an exact sum leaves its range.
    pub(crate) fn merge(&mut self, spec: &AggSpec, other: &Acc) -> Result<()> {
        // Moments past i128's range continue in big integers (after the match, which
        // borrows `self`).
        let mut widen = false;
        match (&mut *self, other) {
            (Acc::Count(a), Acc::Count(b)) => *a += b,
            (Acc::Bits(a), Acc::Bits(Some(b))) => {
                *a = Some(a.map_or(*b, |c| combine_bits(spec.func, c, *b)));
            }
            (Acc::Bits(_), Acc::Bits(None)) => {}
            (Acc::IntSum { sum, n }, Acc::IntSum { sum: s2, n: n2 }) => {
                *sum = sum
                    .checked_add(*s2)
                    .ok_or_else(|| out_of_range("numeric"))?;
                *n += n2;
            }
            (Acc::IntervalSum { sum, n }, Acc::IntervalSum { sum: s2, n: n2 }) => {
                *sum = crate::expr::interval_add(*sum, *s2, 1)?;
                *n += n2;
            }
            (Acc::NumSum { sum, n }, Acc::NumSum { sum: s2, n: n2 }) => {
                *sum = sum
                    .checked_add(*s2)
                    .ok_or_else(|| out_of_range("numeric"))?;
                *n += n2;
            }
            (
                Acc::FloatSum { sum, n, nonfinite },
                Acc::FloatSum {
                    sum: s2,
                    n: n2,
                    nonfinite: f2,
                },
            ) => {
                *sum += s2;
                *n += n2;
                *nonfinite |= f2;
            }
            (Acc::Extreme(cur), Acc::Extreme(v)) => {
                if v.is_null() {
                    return Ok(());
                }
                // As `update(v)`, comparing integers directly and replacing them in place
                // (panes merge into hopping windows' instances once per group and slide).
                let min = spec.func.keeps_least();
                macro_rules! keep_extreme {
                    ($c:expr, $x:expr) => {{
                        if (min && $x < *$c) || (!min && $x > *$c) {
                            *$c = $x;
                        }
                        return Ok(());
                    }};
                }
                match (&mut *cur, v) {
                    (Value::Int2(c), &Value::Int2(x)) => keep_extreme!(c, x),
                    (Value::Int4(c), &Value::Int4(x)) => keep_extreme!(c, x),
                    (Value::Int8(c), &Value::Int8(x)) => keep_extreme!(c, x),
                    _ => {}
                }
                let o = match (&*cur, v) {
                    (Value::Null, _) => None,
                    (Value::Int2(c), Value::Int2(x)) => Some(x.cmp(c)),
                    (Value::Int4(c), Value::Int4(x)) => Some(x.cmp(c)),
                    (Value::Int8(c), Value::Int8(x)) => Some(x.cmp(c)),
                    (c, x) => Some(compare_values(x, c)),
                };
                let better = match (o, spec.func) {
                    (None, _) => true,
                    (Some(o), f) if f.keeps_least() => o == Ordering::Less,
                    (Some(o), _) => o == Ordering::Greater,
                };
                if better {
                    *cur = v.clone();
                }
            }
            // Past i128: the same sums in big integers from here on.
            (Acc::Moments(a), Acc::Moments(b)) => widen = !a.add(b.n, b.sum, b.sumsq, b.scale),
            (Acc::WideMoments(_), Acc::Moments(_) | Acc::WideMoments(_))
            | (Acc::Moments(_), Acc::WideMoments(_)) => widen = true,
            (
                Acc::FloatMoments {
                    n,
                    sx,
                    sxx,
                    overflow,
                },
                Acc::FloatMoments {
                    n: n2,
                    sx: sx2,
                    sxx: sxx2,
                    overflow: o2,
                },
            ) => {
                // PostgreSQL's float8_combine, its overflow checks included.
                *overflow |= o2;
                if *n == 0.0 {
                    (*n, *sx, *sxx) = (*n2, *sx2, *sxx2);
                } else if *n2 != 0.0 {
                    let total = *n + n2;
                    let tmp = *sx / *n - sx2 / n2;
                    let new_sx = *sx + sx2;
                    let new_sxx = *sxx + sxx2 + *n * n2 * tmp * tmp / total;
                    *overflow |= (new_sx.is_infinite() && sx.is_finite() && sx2.is_finite())
                        || (new_sxx.is_infinite() && sxx.is_finite() && sxx2.is_finite());
                    (*n, *sx, *sxx) = (total, new_sx, new_sxx);
                }
            }
            (a @ Acc::NumNaN { .. }, b) | (a, b @ Acc::NumNaN { .. })
                if a.numeric_inputs().is_some() && b.numeric_inputs().is_some() =>
            {
                let n = a.numeric_inputs().unwrap_or(0) + b.numeric_inputs().unwrap_or(0);
                *a = Acc::NumNaN { n };
            }
            (Acc::Distinct(a), Acc::Distinct(b)) => {
                a.extend(b.iter().cloned());
                check_distinct(spec, a.len())?;
            }
            (a, b) => {
                debug_assert!(
                    false,
                    "merging unlike partial states {a:?} and {b:?} is a planner bug"
                );
                return Err(Error::Internal(
                    "merging unlike partial aggregate states".into(),
                ));
            }
        }
        if widen {
            let wide = WideMoments::from_acc(self).merge(WideMoments::from_acc(other));
            *self = Acc::WideMoments(Box::new(wide));
        }
        Ok(())
    }

    /// The inputs a numeric sum or moments state has folded; `None` for other states.
    fn numeric_inputs(&self) -> Option<i64> {
        match self {
            Acc::NumSum { n, .. } | Acc::NumNaN { n } => Some(*n),
            Acc::Moments(m) => Some(m.n),
            Acc::WideMoments(w) => Some(w.n),
            _ => None,
        }
    }

    /// Take out a partial state `other` that was merged into this one earlier
    /// (subtract-on-evict): `a.merge(b)` then `a.subtract(b)` leaves `a` as it was. Exact
    /// for counts and integer sums only ([`subtracts_exactly`]).
    ///
    /// Errors: 22003 when an exact sum leaves its range; an internal error for any other
    /// state (a planner bug).
    pub(crate) fn subtract(&mut self, other: &Acc) -> Result<()> {
        match (&mut *self, other) {
            (Acc::Count(a), Acc::Count(b)) => *a -= b,
            (Acc::IntSum { sum, n }, Acc::IntSum { sum: s2, n: n2 }) => {
                *sum = sum
                    .checked_sub(*s2)
                    .ok_or_else(|| out_of_range("numeric"))?;
                *n -= n2;
            }
            (a, b) => {
                debug_assert!(false, "subtracting {b:?} from {a:?} is a planner bug");
                return Err(Error::Internal(
                    "subtracting a partial aggregate state that is not invertible".into(),
                ));
            }
        }
        Ok(())
    }

    /// The aggregate's result, typed as PostgreSQL types it; the state is left as it was.
    ///
    /// Errors: 22003 when a bigint sum overflows.
    pub(crate) fn evaluate(&self, spec: &AggSpec) -> Result<Value> {
        if let Acc::Distinct(set) = self {
            let plain = AggSpec {
                distinct: false,
                ..spec.clone()
            };
            let mut acc = plain.init_plain();
            for v in set.iter() {
                acc.update(&plain, &v.0)?;
            }
            return acc.evaluate(&plain);
        }
        let t = spec.arg_type;
        Ok(match (spec.func, self) {
            (_, Acc::Count(n)) => Value::Int8(*n),
            (
                _,
                Acc::IntSum { n: 0, .. }
                | Acc::NumSum { n: 0, .. }
                | Acc::FloatSum { n: 0, .. }
                | Acc::IntervalSum { n: 0, .. },
            ) => Value::Null,
            (AggFunc::Sum, Acc::IntervalSum { sum, .. }) => Value::Interval(*sum),
            (_, Acc::IntervalSum { sum, n }) => {
                Value::Interval(crate::expr::interval_div(*sum, *n as f64)?)
            }
            (AggFunc::Sum, Acc::IntSum { sum, .. }) => {
                if t == DataType::Int8 {
                    Value::Numeric(to_decimal(*sum, 0).ok_or_else(|| out_of_range("numeric"))?)
                } else {
                    Value::Int8(i64::try_from(*sum).map_err(|_| out_of_range("bigint"))?)
                }
            }
            (AggFunc::Sum, Acc::NumSum { sum, .. }) => Value::Numeric(*sum),
            (
                _,
                Acc::FloatSum {
                    sum,
                    nonfinite: false,
                    ..
                },
            ) if !sum.is_finite() => return Err(float_overflow()),
            (_, Acc::FloatMoments { overflow: true, .. }) => return Err(float_overflow()),
            (AggFunc::Sum, Acc::FloatSum { sum, .. }) => {
                if t == DataType::Float4 {
                    Value::Float4(*sum as f32)
                } else {
                    Value::Float8(*sum)
                }
            }
            (_, Acc::IntSum { sum, n }) => int_avg(*sum, *n)?,
            (_, Acc::NumSum { sum, n }) => numeric_quotient(from_decimal(sum), (*n as i128, 0))?,
            (_, Acc::FloatSum { sum, n, .. }) => Value::Float8(*sum / *n as f64),
            (_, Acc::Extreme(v)) => v.clone(),
            (_, Acc::Bits(None)) => Value::Null,
            (_, Acc::Bits(Some(b))) => match t {
                DataType::Int2 => Value::Int2(*b as i16),
                DataType::Int4 => Value::Int4(*b as i32),
                _ => Value::Int8(*b),
            },
            (f, Acc::Moments(m)) => numeric_variance(f, m.n, m.sum, m.sumsq, m.scale)?,
            (f, Acc::WideMoments(w)) => wide_variance(f, w)?,
            (f, Acc::FloatMoments { n, sxx, .. }) => float_variance(f, *n, *sxx),
            (_, Acc::Distinct(_)) => unreachable!("handled above"),
            // A sample statistic of one input is NULL before it is NaN (PostgreSQL).
            (AggFunc::VarSamp | AggFunc::StddevSamp, Acc::NumNaN { n }) if *n <= 1 => Value::Null,
            (_, Acc::NumNaN { .. }) => crate::types_wide::WideNumeric::nan(),
        })
    }
}

/// Two partial results of bit_and, bit_or or bit_xor combined.
fn combine_bits(func: AggFunc, a: i64, b: i64) -> i64 {
    match func {
        AggFunc::BitAnd => a & b,
        AggFunc::BitOr => a | b,
        _ => a ^ b,
    }
}

#[inline]
/// PostgreSQL's float8_accum: fold `x` into the Youngs-Cramer state (N, Sx, Sxx). Finite
/// inputs that make Sx or Sxx infinite set `overflow` (PostgreSQL raises 22003 at once;
/// [`Acc::evaluate`] raises it for the instance).
pub(crate) fn float_accum(n: &mut f64, sx: &mut f64, sxx: &mut f64, overflow: &mut bool, x: f64) {
    let (old_n, old_sx) = (*n, *sx);
    *n += 1.0;
    *sx += x;
    if old_n > 0.0 {
        let tmp = x * *n - *sx;
        *sxx += tmp * tmp / (*n * old_n);
        if sx.is_infinite() || sxx.is_infinite() {
            if !old_sx.is_infinite() && !x.is_infinite() {
                *overflow = true;
            }
            *sxx = f64::NAN;
        }
    } else if x.is_nan() || x.is_infinite() {
        *sxx = f64::NAN;
    }
}

fn rescale_moments(sum: i128, sumsq: i128, from: u32, to: u32) -> Result<(i128, i128)> {
    let k = 10i128
        .checked_pow(to - from)
        .ok_or_else(|| out_of_range("numeric"))?;
    let k2 = k.checked_mul(k).ok_or_else(|| out_of_range("numeric"))?;
    Ok((
        sum.checked_mul(k).ok_or_else(|| out_of_range("numeric"))?,
        sumsq
            .checked_mul(k2)
            .ok_or_else(|| out_of_range("numeric"))?,
    ))
}

/// `avg` of integers from its exact sum and count (`n > 0`): the numeric quotient at
/// PostgreSQL's scale, as [`Acc::evaluate`] gives it.
///
/// Errors: 22003 when the quotient leaves numeric's 28 digits.
#[inline]
pub(crate) fn int_avg(sum: i128, n: i64) -> Result<Value> {
    if let Some(d) = numeric::avg_scaled(sum, n).and_then(|(m, s)| to_decimal(m, s)) {
        return Ok(Value::Numeric(d));
    }
    numeric_quotient((sum, 0), (n as i128, 0))
}

fn numeric_quotient(num: numeric::Scaled, den: numeric::Scaled) -> Result<Value> {
    match div_scaled(num, den).and_then(|(m, s)| to_decimal(m, s)) {
        Some(d) => Ok(Value::Numeric(d)),
        None => Err(out_of_range("numeric")),
    }
}

/// PostgreSQL's numeric_stddev_internal over exact moments.
fn numeric_variance(func: AggFunc, n: i64, sum: i128, sumsq: i128, scale: u32) -> Result<Value> {
    let sample = matches!(func, AggFunc::VarSamp | AggFunc::StddevSamp);
    if n == 0 || (sample && n == 1) {
        return Ok(Value::Null);
    }
    // numerator = n * sumsq - sum^2, at scale 2*scale; in big integers past i128.
    match (n as i128)
        .checked_mul(sumsq)
        .and_then(|a| sum.checked_mul(sum).and_then(|b| a.checked_sub(b)))
    {
        Some(numerator) => numeric_variance_of_numerator(func, n, numerator, scale),
        None => wide_variance(func, &WideMoments::of(n, sum, sumsq, scale)),
    }
}

/// The rest of [`numeric_variance`] from its numerator `n * sumsq - sum^2` (at scale
/// `2 * scale`), in big integers.
fn numeric_variance_of_numerator(
    func: AggFunc,
    n: i64,
    numerator: i128,
    scale: u32,
) -> Result<Value> {
    // The common case in 128-bit arithmetic; in big integers when a step leaves it or
    // the result is wider than a Decimal.
    let narrow = || -> Option<Value> {
        if numerator <= 0 {
            return Some(Value::Numeric(Decimal::ZERO));
        }
        let sample = matches!(func, AggFunc::VarSamp | AggFunc::StddevSamp);
        let n = n as i128;
        let den = (if sample { n * (n - 1) } else { n * n }, 0);
        let num = (numerator, 2 * scale);
        let rscale = select_div_scale(num, den);
        let var = div_at_scale(num, den, rscale)?;
        let result = match func {
            AggFunc::VarSamp | AggFunc::VarPop => var,
            _ => sqrt_at_scale((var, rscale), rscale)?,
        };
        (rscale <= 28)
            .then(|| Decimal::try_from_i128_with_scale(result, rscale).ok())
            .flatten()
            .map(Value::Numeric)
    };
    match narrow() {
        Some(v) => Ok(v),
        None => variance_of_numerator(func, n, &BigInt::from(numerator), scale),
    }
}

/// PostgreSQL's numeric_stddev_internal from the numerator `n * sumsq - sum^2` (at scale
/// `2 * scale`): the quotient by `n * (n - 1)` (sample) or `n * n` at
/// `select_div_scale`'s scale, and for stddev its square root at that scale. Exact at
/// any width: a result past [`Decimal`]'s 28 digits is a wide numeric
/// ([`crate::types_wide`]), as PostgreSQL prints it.
fn variance_of_numerator(func: AggFunc, n: i64, numerator: &BigInt, scale: u32) -> Result<Value> {
    let sample = matches!(func, AggFunc::VarSamp | AggFunc::StddevSamp);
    let is_var = matches!(func, AggFunc::VarSamp | AggFunc::VarPop);
    if *numerator <= BigInt::ZERO {
        return Ok(Value::Numeric(Decimal::ZERO));
    }
    let n = BigInt::from(n);
    let denominator = if sample { &n * (&n - 1u8) } else { &n * &n };
    let num = (numerator, 2 * scale);
    let den = (&denominator, 0);
    let rscale = numeric::big_select_div_scale(num, den);
    let err = || out_of_range("numeric");
    let var = numeric::big_div_at_scale(num, den, rscale).ok_or_else(err)?;
    let result = if is_var {
        var
    } else {
        numeric::big_sqrt_at_scale((&var, rscale), rscale).ok_or_else(err)?
    };
    Ok(crate::types_wide::WideNumeric::value(result, rscale))
}

/// [`numeric_variance`] of big-integer moments: the numerator `n * sumsq - sum^2` is
/// exact (identical inputs of any size give 0).
fn wide_variance(func: AggFunc, w: &WideMoments) -> Result<Value> {
    let sample = matches!(func, AggFunc::VarSamp | AggFunc::StddevSamp);
    if w.n == 0 || (sample && w.n == 1) {
        return Ok(Value::Null);
    }
    let numerator = BigInt::from(w.n) * &w.sumsq - &w.sum * &w.sum;
    variance_of_numerator(func, w.n, &numerator, w.scale)
}

fn float_variance(func: AggFunc, n: f64, sxx: f64) -> Value {
    let sample = matches!(func, AggFunc::VarSamp | AggFunc::StddevSamp);
    let is_var = matches!(func, AggFunc::VarSamp | AggFunc::VarPop);
    let denom = if sample { n - 1.0 } else { n };
    if n == 0.0 || (sample && n <= 1.0) {
        return Value::Null;
    }
    let var = sxx / denom;
    Value::Float8(if is_var { var } else { var.sqrt() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(func: AggFunc, t: DataType, vals: &[Value]) -> Value {
        let spec = AggSpec::new(func, t, false);
        let mut a = spec.init();
        for v in vals {
            a.update(&spec, v).unwrap();
        }
        a.evaluate(&spec).unwrap()
    }

    fn ints(v: &[i32]) -> Vec<Value> {
        v.iter().map(|x| Value::Int4(*x)).collect()
    }

    /// Variance and stddev of bigints whose squares leave i128's range: exact, as
    /// PostgreSQL 15 computes them (its output for the same inputs), folded one by one
    /// and merged from partials.
    #[test]
    fn moments_of_huge_bigints_are_exact() {
        let big = |v: &[i64]| v.iter().map(|x| Value::Int8(*x)).collect::<Vec<_>>();
        // Epoch nanoseconds a second or two apart: squares past i128, spread small.
        const NANOS: [i64; 3] = [
            1_700_000_000_000_000_000,
            1_700_000_000_001_000_000,
            1_700_000_000_003_000_000,
        ];
        let cases: [(&[i64], AggFunc, &str); 6] = [
            (&[i64::MAX, i64::MAX], AggFunc::StddevSamp, "0"),
            (&[1 << 62; 5], AggFunc::VarSamp, "0"),
            (&[1 << 62; 5], AggFunc::StddevPop, "0"),
            (&NANOS, AggFunc::StddevSamp, "1527525.2317"),
            (&NANOS, AggFunc::VarSamp, "2333333333333.3333"),
            (&NANOS, AggFunc::VarPop, "1555555555555.5556"),
        ];
        for (vals, func, pg) in cases {
            let got = run(func, DataType::Int8, &big(vals));
            assert_eq!(got.to_text().unwrap(), pg, "{func:?} of {vals:?}");
            // The same from two partials, each narrow or already wide.
            let spec = AggSpec::new(func, DataType::Int8, false);
            for cut in 0..=vals.len() {
                let (mut a, mut b) = (spec.init(), spec.init());
                for v in big(&vals[..cut]) {
                    a.update(&spec, &v).unwrap();
                }
                for v in big(&vals[cut..]) {
                    b.update(&spec, &v).unwrap();
                }
                a.merge(&spec, &b).unwrap();
                assert_eq!(
                    a.evaluate(&spec).unwrap().to_text().unwrap(),
                    pg,
                    "cut {cut}"
                );
            }
        }
    }

    /// merge(update(a), update(b)) == update(a ++ b) for splits of size 0, 1, 5, many, with
    /// NULLs, for every aggregate over integers, numerics and floats.
    #[test]
    fn merge_of_splits_equals_update_of_all() {
        let funcs = [
            AggFunc::CountStar,
            AggFunc::Count,
            AggFunc::Sum,
            AggFunc::Avg,
            AggFunc::Min,
            AggFunc::Max,
            AggFunc::StddevSamp,
            AggFunc::StddevPop,
            AggFunc::VarSamp,
            AggFunc::VarPop,
        ];
        let mut vals: Vec<Value> = (0..40).map(|i| Value::Int4((i * 37) % 23 - 7)).collect();
        vals[3] = Value::Null;
        vals[17] = Value::Null;
        let variants: Vec<(DataType, Vec<Value>)> = vec![
            (DataType::Int4, vals.clone()),
            (
                DataType::Numeric,
                vals.iter()
                    .map(|v| {
                        v.as_i64()
                            .map_or(Value::Null, |i| Value::Numeric(Decimal::new(i * 25, 1)))
                    })
                    .collect(),
            ),
            (
                DataType::Float8,
                vals.iter()
                    .map(|v| {
                        v.as_i64()
                            .map_or(Value::Null, |i| Value::Float8(i as f64 * 0.5))
                    })
                    .collect(),
            ),
        ];
        for (t, vals) in &variants {
            for f in funcs {
                for distinct in [false, true] {
                    let spec = AggSpec::new(f, *t, distinct && f != AggFunc::CountStar);
                    let mut whole = spec.init();
                    for v in vals {
                        whole.update(&spec, v).unwrap();
                    }
                    for split in [0, 1, 5, 39, 40] {
                        let (mut a, mut b) = (spec.init(), spec.init());
                        for v in &vals[..split] {
                            a.update(&spec, v).unwrap();
                        }
                        for v in &vals[split..] {
                            b.update(&spec, v).unwrap();
                        }
                        a.merge(&spec, &b).unwrap();
                        let (x, y) = (a.evaluate(&spec).unwrap(), whole.evaluate(&spec).unwrap());
                        match (&x, &y) {
                            (Value::Float8(p), Value::Float8(q)) => {
                                assert!(
                                    (p - q).abs() <= 1e-9 * q.abs().max(1.0),
                                    "{f:?} {t:?} split {split}: {p} vs {q}"
                                )
                            }
                            _ => assert_eq!(x, y, "{f:?} {t:?} distinct {distinct} split {split}"),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn results_match_postgresql() {
        // Each expectation is PostgreSQL 15's output for the same input.
        assert_eq!(
            run(AggFunc::Sum, DataType::Int4, &ints(&[1, 2])),
            Value::Int8(3)
        );
        assert_eq!(run(AggFunc::Sum, DataType::Int4, &[]), Value::Null);
        assert_eq!(
            run(AggFunc::Count, DataType::Int4, &[Value::Null]),
            Value::Int8(0)
        );
        assert_eq!(
            run(AggFunc::Avg, DataType::Int4, &ints(&[1, 2, 4]))
                .to_text()
                .unwrap(),
            "2.3333333333333333"
        );
        assert_eq!(
            run(AggFunc::VarSamp, DataType::Int4, &ints(&[1, 2, 3, 4]))
                .to_text()
                .unwrap(),
            "1.6666666666666667"
        );
        assert_eq!(
            run(AggFunc::StddevSamp, DataType::Int4, &ints(&[1, 2, 3, 4]))
                .to_text()
                .unwrap(),
            "1.2909944487358056"
        );
        assert_eq!(
            run(AggFunc::VarPop, DataType::Int4, &ints(&[1, 2, 3, 4]))
                .to_text()
                .unwrap(),
            "1.2500000000000000"
        );
        assert_eq!(
            run(AggFunc::StddevPop, DataType::Int4, &ints(&[5]))
                .to_text()
                .unwrap(),
            "0"
        );
        assert_eq!(
            run(AggFunc::StddevSamp, DataType::Int4, &ints(&[5])),
            Value::Null
        );
        assert_eq!(
            run(
                AggFunc::Sum,
                DataType::Int8,
                &[Value::Int8(i64::MAX), Value::Int8(1)]
            )
            .to_text()
            .unwrap(),
            "9223372036854775808"
        );
        assert!(matches!(
            AggSpec::new(AggFunc::Sum, DataType::Int8, false).init(),
            Acc::IntSum { .. }
        ));
        assert_eq!(
            run(
                AggFunc::Max,
                DataType::Text,
                &[Value::Text("b".into()), Value::Text("a".into())]
            ),
            Value::Text("b".into())
        );
        assert_eq!(
            run(
                AggFunc::Avg,
                DataType::Float8,
                &[Value::Float8(1.0), Value::Float8(2.0)]
            ),
            Value::Float8(1.5)
        );
    }

    #[test]
    fn sharing_class_is_the_strictest() {
        let s = |f, d| AggSpec::new(f, DataType::Int4, d);
        assert_eq!(
            sharing_of(&[s(AggFunc::Min, false), s(AggFunc::Max, false)]),
            Sharing::CoveredBy
        );
        assert_eq!(
            sharing_of(&[s(AggFunc::Min, false), s(AggFunc::Avg, false)]),
            Sharing::PartitionedBy
        );
        assert_eq!(
            sharing_of(&[s(AggFunc::Count, true), s(AggFunc::Avg, false)]),
            Sharing::None
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::agg::AggSpec;
        use crate::sql::AggFunc;
        use crate::types::{DataType, Value};
        let spec = AggSpec::new(AggFunc::Avg, DataType::Int4, false);
        let mut a = spec.init();
        a.update(&spec, &Value::Int4(1)).unwrap();
        let mut b = spec.init();
        b.update(&spec, &Value::Int4(2)).unwrap();
        a.merge(&spec, &b).unwrap();
        assert_eq!(
            a.evaluate(&spec).unwrap().to_text().unwrap(),
            "1.5000000000000000"
        );
    }
}
