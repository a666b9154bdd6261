//! Typed fold kernels: group ids and aggregate arguments read straight from columns.
//!
//! The columnar path of [`super::QueryExec::push_columns`] cuts a batch into runs of
//! in-order tuples that close no instance, computes the group ids of a whole run at once
//! ([`intern_keys`]: keys hashed and compared in their columns, text from Arrow's shared
//! buffer, a [`Value`] built only for a key seen for the first time), then folds each
//! aggregate's argument column into each instance's partial states with one loop per
//! (aggregate, instance) ([`fold_column`]): no `Value` per tuple for counts, and for sums,
//! averages, extremes, variances and standard deviations over smallint, integer, bigint,
//! real and double precision.
//!
//! Design decision: the kernels take only aggregates that cannot fail ([`infallible`]), so
//! folding a column at a time gives the same first error, at the same tuple, as folding a
//! tuple at a time: the only errors left are the group and instance limits, which
//! [`super::windowed::SharedWindows::fold_in_order`] checks before any kernel runs. A sum
//! over bigint is exact in an `i128` (every input below 2^63 in magnitude, fewer than 2^63
//! inputs), so it cannot overflow there, and is turned into numeric when finalised as the
//! row evaluator does. Sums over numeric, variances over bigint or numeric (whose squares can
//! leave `i128`) and DISTINCT aggregates stay on the tuple-at-a-time fold.
//!
//! ```ignore
//! use tcq::agg::AggSpec;
//! use tcq::exec::columns::ColumnBatchBuilder;
//! use tcq::exec::kernels::fold_column;
//! use tcq::sql::AggFunc;
//! use tcq::types::{DataType, Value};
//! let mut b = ColumnBatchBuilder::new(&[DataType::Int4], 3);
//! for v in [Value::Int4(4), Value::Null, Value::Int4(-9)] {
//!     b.push_row(&mut [v], 0);
//! }
//! let batch = b.finish();
//! let views = batch.views();
//! let spec = AggSpec::new(AggFunc::Max, DataType::Int4, false);
//! // Two groups: rows 0 and 1 in slot 0, row 2 in slot 1; one aggregate per slot.
//! let mut accs = vec![spec.init(), spec.init()];
//! fold_column(&spec, 0, 1, &mut accs, &[0, 0, 1], Some(&views[0]), &[0, 1, 2]);
//! assert_eq!(accs[0].evaluate(&spec).unwrap(), Value::Int4(4));
//! assert_eq!(accs[1].evaluate(&spec).unwrap(), Value::Int4(-9));
//! ```

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, PrimitiveArray};
use compact_str::CompactString;

use super::columns::ColumnView;
use super::group::{GroupDict, KeyHasher, ShortTextIds};
use super::windowed::SharedWindows;
use crate::agg::{canonical_f64, float_accum, group_eq, hash_value, nan_order, Acc, AggSpec};
use crate::sql::{AggFunc, BinaryOp, Expr};
use crate::types::{DataType, Value};

/// True when folding `spec` can never fail, so the kernels may fold it a column at a time
/// (see the module documentation).
pub(crate) fn infallible(spec: &AggSpec) -> bool {
    if spec.distinct {
        return false;
    }
    // An aggregate not named here is folded row by row (correct for every aggregate; the
    // column-at-a-time folds below are a speed-up an aggregate opts into).
    let t = spec.arg_type;
    match spec.func {
        AggFunc::CountStar
        | AggFunc::Count
        | AggFunc::Min
        | AggFunc::Max
        | AggFunc::BoolAnd
        | AggFunc::BoolOr => true,
        AggFunc::Sum | AggFunc::Avg => t != DataType::Numeric,
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            matches!(
                t,
                DataType::Int2 | DataType::Int4 | DataType::Float4 | DataType::Float8
            )
        }
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

/// Hash row `i` of `view` into `h` exactly as [`hash_value`] hashes the row's [`Value`].
#[inline]
fn hash_cell<H: Hasher>(view: &ColumnView, i: usize, h: &mut H) {
    use std::mem::discriminant;
    match view {
        ColumnView::Int2(a) if a.is_valid(i) => {
            discriminant(&Value::Int2(0)).hash(h);
            a.value(i).hash(h);
        }
        ColumnView::Int4(a) if a.is_valid(i) => {
            discriminant(&Value::Int4(0)).hash(h);
            a.value(i).hash(h);
        }
        ColumnView::Int8(a) if a.is_valid(i) => {
            discriminant(&Value::Int8(0)).hash(h);
            a.value(i).hash(h);
        }
        ColumnView::Float8(a) if a.is_valid(i) => {
            discriminant(&Value::Float8(0.0)).hash(h);
            canonical_f64(a.value(i)).hash(h);
        }
        ColumnView::Text(a) if a.is_valid(i) => {
            discriminant(&Value::Text(CompactString::const_new(""))).hash(h);
            a.value(i).as_bytes().hash(h);
        }
        ColumnView::Timestamp(a, tz) if a.is_valid(i) => {
            let d = if *tz {
                discriminant(&Value::TimestampTz(0))
            } else {
                discriminant(&Value::Timestamp(0))
            };
            d.hash(h);
            a.value(i).hash(h);
        }
        _ => hash_value(&view.value(i), h),
    }
}

/// [`group_eq`] of `stored` and row `i` of `view`, without building the row's [`Value`]
/// for the common key types.
#[inline]
fn cell_eq(stored: &Value, view: &ColumnView, i: usize) -> bool {
    match (view, stored) {
        (ColumnView::Int2(a), Value::Int2(x)) => a.is_valid(i) && a.value(i) == *x,
        (ColumnView::Int4(a), Value::Int4(x)) => a.is_valid(i) && a.value(i) == *x,
        (ColumnView::Int8(a), Value::Int8(x)) => a.is_valid(i) && a.value(i) == *x,
        (ColumnView::Text(a), Value::Text(x)) => a.is_valid(i) && a.value(i) == x.as_str(),
        (ColumnView::Timestamp(a, false), Value::Timestamp(x))
        | (ColumnView::Timestamp(a, true), Value::TimestampTz(x)) => {
            a.is_valid(i) && a.value(i) == *x
        }
        _ => group_eq(stored, &view.value(i)),
    }
}

/// The group ids of rows `rows` (indices, in order) of a batch whose key columns are
/// `keys` (indices into `views`), into `out` in the same order: the ids
/// [`GroupDict::intern`] gives for the same keys as rows of [`Value`]s, hashed with `hasher`
/// as [`KeyHasher::hash`] hashes them.
pub fn intern_keys(
    dict: &mut GroupDict,
    hasher: &KeyHasher,
    views: &[ColumnView],
    keys: &[usize],
    rows: &[u32],
    out: &mut Vec<u32>,
) {
    out.clear();
    if keys.is_empty() {
        if !rows.is_empty() {
            let gid = dict.empty_key_id(hasher);
            out.resize(rows.len(), gid);
        }
        return;
    }
    // A key of one text column: short keys seen before are found in the dictionary's
    // memo by their bytes, without hashing them or probing its index.
    let text = match (keys, views.get(keys[0])) {
        ([_], Some(ColumnView::Text(a))) => Some(*a),
        _ => None,
    };
    for &i in rows {
        let i = i as usize;
        let packed = text
            .filter(|a| a.is_valid(i))
            .and_then(|a| ShortTextIds::pack(a.value(i).as_bytes()));
        if let Some(gid) = packed.and_then(|p| dict.short_text_id(p)) {
            out.push(gid);
            continue;
        }
        let mut h = hasher.start();
        for &c in keys {
            hash_cell(&views[c], i, &mut h);
        }
        let gid = dict.intern_with(
            h.finish(),
            |stored| {
                stored
                    .iter()
                    .zip(keys)
                    .all(|(v, &c)| cell_eq(v, &views[c], i))
            },
            |keys_out| keys_out.extend(keys.iter().map(|&c| views[c].value(i))),
        );
        if let Some(p) = packed {
            dict.remember_short_text(p, gid);
        }
        out.push(gid);
    }
}

/// Call `f(slot, value)` for each non-NULL row `rows[k]` of `a`, `slot = slots[k]`.
#[inline]
fn each_valid<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    rows: &[u32],
    slots: &[u32],
    mut f: impl FnMut(usize, T::Native),
) {
    let values = a.values();
    match a.nulls().filter(|n| n.null_count() > 0) {
        None => {
            for (&s, &i) in slots.iter().zip(rows) {
                f(s as usize, values[i as usize]);
            }
        }
        Some(nulls) => {
            for (&s, &i) in slots.iter().zip(rows) {
                if nulls.is_valid(i as usize) {
                    f(s as usize, values[i as usize]);
                }
            }
        }
    }
}

/// True when row `i` of `view` is NULL.
#[inline]
fn is_null(view: &ColumnView, i: usize) -> bool {
    match view {
        ColumnView::Bool(a) => a.is_null(i),
        ColumnView::Int2(a) => a.is_null(i),
        ColumnView::Int4(a) => a.is_null(i),
        ColumnView::Int8(a) => a.is_null(i),
        ColumnView::Float4(a) => a.is_null(i),
        ColumnView::Float8(a) => a.is_null(i),
        ColumnView::Text(a) => a.is_null(i),
        ColumnView::Timestamp(a, _) => a.is_null(i),
        ColumnView::Values(v) => v[i].is_null(),
    }
}

/// Fold aggregate `j` (of `naggs` per slot, folding `spec`, which must be [`infallible`])
/// over rows `rows` (indices, in order) of its argument column `arg` (`None` for
/// `count(*)`) into `accs`, row `rows[k]` into slot `slots[k]` (states
/// `accs[slot * naggs + j]`), or every row into slot `slots[0]` when `slots` holds one
/// slot (an ungrouped query's one group). The states are those [`Acc::update`] leaves for
/// the same rows.
pub fn fold_column(
    spec: &AggSpec,
    j: usize,
    naggs: usize,
    accs: &mut [Acc],
    slots: &[u32],
    arg: Option<&ColumnView>,
    rows: &[u32],
) {
    debug_assert!(
        rows.len() == slots.len() || slots.len() == 1,
        "one slot per row, or one for every row"
    );
    debug_assert!(
        infallible(spec),
        "the kernels fold only aggregates that cannot fail"
    );
    if let ([s], true) = (slots, rows.len() > 1) {
        fold_one(spec, &mut accs[*s as usize * naggs + j], arg, rows);
        return;
    }
    let at = |s: usize| s * naggs + j;
    let Some(view) = arg.filter(|_| spec.func != AggFunc::CountStar) else {
        for &s in slots {
            if let Acc::Count(c) = &mut accs[at(s as usize)] {
                *c += 1;
            }
        }
        return;
    };
    if spec.func == AggFunc::Count {
        for (&s, &i) in slots.iter().zip(rows) {
            if !is_null(view, i as usize) {
                if let Acc::Count(c) = &mut accs[at(s as usize)] {
                    *c += 1;
                }
            }
        }
        return;
    }
    let states = States {
        accs: &mut *accs,
        naggs,
        j,
    };
    if fold_typed(spec.func, view, states, slots, rows) {
        return;
    }
    // Min and max over other types, which clone their extreme.
    for (&s, &i) in slots.iter().zip(rows) {
        let v = view.value(i as usize);
        let r = accs[s as usize * naggs + j].update(spec, &v);
        debug_assert!(r.is_ok(), "min and max cannot fail");
    }
}

/// [`fold_column`] of every row of `rows` into the one state `acc`: counts add the rows
/// at once, extremes compare natives and build one [`Value`], sums add into locals. The
/// state is the one folding the rows one at a time leaves (floating-point sums and
/// moments add in row order; an extreme keeps the first of equal values, as
/// [`keep_extreme`] does).
fn fold_one(spec: &AggSpec, acc: &mut Acc, arg: Option<&ColumnView>, rows: &[u32]) {
    let Some(view) = arg.filter(|_| spec.func != AggFunc::CountStar) else {
        if let Acc::Count(c) = acc {
            *c += rows.len() as i64;
        }
        return;
    };
    if spec.func == AggFunc::Count {
        if let Acc::Count(c) = acc {
            *c += rows.iter().filter(|&&i| !is_null(view, i as usize)).count() as i64;
        }
        return;
    }
    let typed = match view {
        ColumnView::Int2(a) => ints_one(spec.func, a, rows, acc),
        ColumnView::Int4(a) => ints_one(spec.func, a, rows, acc),
        ColumnView::Int8(a) => ints_one(spec.func, a, rows, acc),
        ColumnView::Float4(a) => floats_one(spec.func, a, rows, acc),
        ColumnView::Float8(a) => floats_one(spec.func, a, rows, acc),
        _ => false,
    };
    if !typed {
        for &i in rows {
            let r = acc.update(spec, &view.value(i as usize));
            debug_assert!(r.is_ok(), "min and max cannot fail");
        }
    }
}

/// Call `f(value)` for each non-NULL row `rows[k]` of `a`, in order.
#[inline]
fn each_valid_one<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    rows: &[u32],
    mut f: impl FnMut(T::Native),
) {
    let values = a.values();
    match a.nulls().filter(|n| n.null_count() > 0) {
        None => rows.iter().for_each(|&i| f(values[i as usize])),
        Some(nulls) => rows
            .iter()
            .filter(|&&i| nulls.is_valid(i as usize))
            .for_each(|&i| f(values[i as usize])),
    }
}

/// The first of the extreme non-NULL values of rows `rows` of `a` (`better(x, best)`: `x`
/// replaces the extreme so far), `None` when every row is NULL.
#[inline]
fn extreme_one<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    rows: &[u32],
    better: impl Fn(T::Native, T::Native) -> bool,
) -> Option<T::Native> {
    let mut best: Option<T::Native> = None;
    each_valid_one(a, rows, |x| match best {
        Some(b) if !better(x, b) => {}
        _ => best = Some(x),
    });
    best
}

/// [`fold_ints`] of every row into `acc`; false when `func` has no typed fold here.
fn ints_one<T>(func: AggFunc, a: &PrimitiveArray<T>, rows: &[u32], acc: &mut Acc) -> bool
where
    T: ArrowPrimitiveType,
    T::Native: Native + Into<i64> + Ord,
{
    match func {
        AggFunc::Sum | AggFunc::Avg => {
            if let Acc::IntSum { sum, n } = acc {
                let (mut s, mut k) = (0i128, 0i64);
                each_valid_one(a, rows, |x| {
                    // Exact: see the module documentation.
                    s += x.into() as i128;
                    k += 1;
                });
                *sum += s;
                *n += k;
            }
        }
        AggFunc::Min | AggFunc::Max => {
            let min = func == AggFunc::Min;
            let better = |x: T::Native, c: T::Native| if min { x < c } else { x > c };
            if let (Acc::Extreme(cur), Some(x)) = (acc, extreme_one(a, rows, better)) {
                keep_extreme(cur, x, better);
            }
        }
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            if let Acc::Moments(st) = acc {
                each_valid_one(a, rows, |x| st.add_small_int(x.into() as i128));
            }
        }
        _ => return false,
    }
    true
}

/// [`fold_floats`] of every row into `acc`; false when `func` has no typed fold here.
fn floats_one<T>(func: AggFunc, a: &PrimitiveArray<T>, rows: &[u32], acc: &mut Acc) -> bool
where
    T: ArrowPrimitiveType,
    T::Native: Native + Into<f64>,
{
    match func {
        AggFunc::Sum | AggFunc::Avg => {
            if let Acc::FloatSum { sum, n, nonfinite } = acc {
                // In row order from the sum so far: the rounding of one add at a time.
                let (mut s, mut k, mut nf) = (*sum, 0i64, false);
                each_valid_one(a, rows, |x| {
                    let x: f64 = x.into();
                    s += x;
                    k += 1;
                    nf |= !x.is_finite();
                });
                *sum = s;
                *n += k;
                *nonfinite |= nf;
            }
        }
        AggFunc::Min | AggFunc::Max => {
            let want = if func == AggFunc::Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let better = |x: T::Native, c: T::Native| nan_order(x.into(), c.into()) == want;
            if let (Acc::Extreme(cur), Some(x)) = (acc, extreme_one(a, rows, better)) {
                keep_extreme(cur, x, better);
            }
        }
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            if let Acc::FloatMoments {
                n,
                sx,
                sxx,
                overflow,
            } = acc
            {
                each_valid_one(a, rows, |x| float_accum(n, sx, sxx, overflow, x.into()));
            }
        }
        _ => return false,
    }
    true
}

/// The states of aggregate `j` among `naggs` per slot.
struct States<'a> {
    accs: &'a mut [Acc],
    naggs: usize,
    j: usize,
}

impl States<'_> {
    #[inline]
    fn at(&mut self, slot: usize) -> &mut Acc {
        &mut self.accs[slot * self.naggs + self.j]
    }
}

/// The typed loops over a primitive column; false when `view`'s type has none for `func`.
fn fold_typed(func: AggFunc, view: &ColumnView, st: States, slots: &[u32], rows: &[u32]) -> bool {
    match view {
        ColumnView::Int2(a) => fold_ints(func, a, rows, slots, st),
        ColumnView::Int4(a) => fold_ints(func, a, rows, slots, st),
        ColumnView::Int8(a) => fold_ints(func, a, rows, slots, st),
        ColumnView::Float4(a) => fold_floats(func, a, rows, slots, st),
        ColumnView::Float8(a) => fold_floats(func, a, rows, slots, st),
        _ => false,
    }
}

/// A native integer or float and the [`Value`] it is read as.
trait Native: Copy {
    fn value(self) -> Value;
    fn extreme(v: &Value) -> Option<Self>;
}

macro_rules! native {
    ($t:ty, $variant:path) => {
        impl Native for $t {
            #[inline]
            fn value(self) -> Value {
                $variant(self)
            }
            #[inline]
            fn extreme(v: &Value) -> Option<Self> {
                match v {
                    $variant(x) => Some(*x),
                    _ => None,
                }
            }
        }
    };
}
native!(i16, Value::Int2);
native!(i32, Value::Int4);
native!(i64, Value::Int8);
native!(f32, Value::Float4);
native!(f64, Value::Float8);

/// Keep `x` in `cur` when it is better than the extreme so far (or there is none).
#[inline]
fn keep_extreme<N: Native>(cur: &mut Value, x: N, better: impl Fn(N, N) -> bool) {
    match N::extreme(cur) {
        Some(c) if !better(x, c) => {}
        _ => *cur = x.value(),
    }
}

/// Min (`func` is [`AggFunc::Min`]) or max over a primitive column, `order` comparing a
/// value with the extreme so far.
#[inline]
fn fold_extreme<T>(
    func: AggFunc,
    a: &PrimitiveArray<T>,
    rows: &[u32],
    slots: &[u32],
    mut st: States,
    order: impl Fn(T::Native, T::Native) -> Ordering,
) where
    T: ArrowPrimitiveType,
    T::Native: Native,
{
    let better = if func == AggFunc::Min {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    each_valid(a, rows, slots, |s, x| {
        if let Acc::Extreme(cur) = st.at(s) {
            keep_extreme(cur, x, |x, c| order(x, c) == better);
        }
    })
}

fn fold_ints<T>(
    func: AggFunc,
    a: &PrimitiveArray<T>,
    rows: &[u32],
    slots: &[u32],
    mut st: States,
) -> bool
where
    T: ArrowPrimitiveType,
    T::Native: Native + Into<i64> + Ord,
{
    match func {
        AggFunc::Sum | AggFunc::Avg => each_valid(a, rows, slots, |s, x| {
            if let Acc::IntSum { sum, n } = st.at(s) {
                // Exact: see the module documentation.
                *sum += x.into() as i128;
                *n += 1;
            }
        }),
        AggFunc::Min | AggFunc::Max => fold_extreme(func, a, rows, slots, st, |x, c| x.cmp(&c)),
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            each_valid(a, rows, slots, |s, x| {
                if let Acc::Moments(st) = st.at(s) {
                    // Integer moments keep scale 0 (only smallint and integer reach here).
                    st.add_small_int(x.into() as i128);
                }
            })
        }
        // Counts and Boolean aggregates fold elsewhere; an aggregate without a typed fold
        // here is folded row by row.
        _ => return false,
    }
    true
}

fn fold_floats<T>(
    func: AggFunc,
    a: &PrimitiveArray<T>,
    rows: &[u32],
    slots: &[u32],
    mut st: States,
) -> bool
where
    T: ArrowPrimitiveType,
    T::Native: Native + Into<f64>,
{
    match func {
        AggFunc::Sum | AggFunc::Avg => each_valid(a, rows, slots, |s, x| {
            if let Acc::FloatSum { sum, n, nonfinite } = st.at(s) {
                let x: f64 = x.into();
                *sum += x;
                *n += 1;
                *nonfinite |= !x.is_finite();
            }
        }),
        AggFunc::Min | AggFunc::Max => fold_extreme(func, a, rows, slots, st, |x, c| {
            nan_order(x.into(), c.into())
        }),
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            each_valid(a, rows, slots, |s, x| {
                if let Acc::FloatMoments {
                    n,
                    sx,
                    sxx,
                    overflow,
                } = st.at(s)
                {
                    float_accum(n, sx, sxx, overflow, x.into());
                }
            })
        }
        // Counts and Boolean aggregates fold elsewhere; an aggregate without a typed fold
        // here is folded row by row.
        _ => return false,
    }
    true
}

/// A WHERE clause the columnar path evaluates on its column, a batch at a time:
/// `column op constant` (or `constant op column`) with a comparison operator, a non-NULL
/// constant, and a column and constant that [`crate::expr::compare`] always compares
/// (numbers with numbers, text with text, booleans, timestamps, intervals). Its selection
/// vectors hold exactly the rows the row evaluator's WHERE keeps.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColumnFilter {
    /// The column compared.
    pub(crate) column: usize,
    /// The comparison, with the column on its left.
    pub(crate) op: BinaryOp,
    /// The constant on its right.
    pub(crate) constant: Value,
}

impl ColumnFilter {
    /// The filter `filter` stands for over a stream of `columns`, if it has that shape.
    pub(crate) fn of(filter: &Expr, columns: &[DataType]) -> Option<ColumnFilter> {
        let Expr::Binary { op, left, right } = filter else {
            return None;
        };
        let (column, constant, op) = match (&**left, &**right) {
            (Expr::Column(c), Expr::Literal(v)) => (*c, v, *op),
            (Expr::Literal(v), Expr::Column(c)) => (*c, v, op.flipped()?),
            _ => return None,
        };
        op.flipped()?;
        let ty = *columns.get(column)?;
        comparable(ty, constant).then(|| ColumnFilter {
            column,
            op,
            constant: constant.clone(),
        })
    }

    /// True when row `i` of `view` (this filter's column) passes: NULL never does.
    #[inline]
    pub(crate) fn holds(&self, view: &ColumnView, i: usize) -> bool {
        let o = match (view, &self.constant) {
            (ColumnView::Int2(a), c) if c.as_i64().is_some() => a
                .is_valid(i)
                .then(|| (a.value(i) as i64).cmp(&c.as_i64().unwrap_or(0))),
            (ColumnView::Int4(a), c) if c.as_i64().is_some() => a
                .is_valid(i)
                .then(|| (a.value(i) as i64).cmp(&c.as_i64().unwrap_or(0))),
            (ColumnView::Int8(a), c) if c.as_i64().is_some() => a
                .is_valid(i)
                .then(|| a.value(i).cmp(&c.as_i64().unwrap_or(0))),
            (ColumnView::Float8(a), Value::Float8(c)) => {
                a.is_valid(i).then(|| nan_order(a.value(i), *c))
            }
            (ColumnView::Text(a), Value::Text(c)) => a
                .is_valid(i)
                .then(|| a.value(i).as_bytes().cmp(c.as_bytes())),
            (ColumnView::Timestamp(a, _), Value::Timestamp(c) | Value::TimestampTz(c)) => {
                a.is_valid(i).then(|| a.value(i).cmp(c))
            }
            (view, c) => {
                let v = view.value(i);
                if v.is_null() {
                    None
                } else {
                    crate::expr::compare(&v, c).ok()
                }
            }
        };
        o.is_some_and(|o| self.op.holds(o).unwrap_or(false))
    }

    /// The selection vector of rows `rows` of `view` (this filter's column): the indices
    /// of the rows that pass, ascending, appended to `out`.
    pub(crate) fn select(&self, view: &ColumnView, rows: Range<usize>, out: &mut Vec<u32>) {
        out.extend(rows.filter(|&i| self.holds(view, i)).map(|i| i as u32));
    }
}

/// True when a column of type `ty` and the constant `c` always compare without error.
fn comparable(ty: DataType, c: &Value) -> bool {
    use DataType as T;
    let number = c.data_type().is_some_and(|t| t.is_numeric());
    match ty {
        T::Int2 | T::Int4 | T::Int8 | T::Float4 | T::Float8 | T::Numeric => number,
        T::Text | T::Varchar(_) | T::Bpchar(_) => matches!(c, Value::Text(_)),
        T::Date => matches!(c, Value::Date(_)),
        T::Time => matches!(c, Value::Time(_)),
        T::Bool => matches!(c, Value::Bool(_)),
        T::Timestamp | T::TimestampTz => {
            matches!(c, Value::Timestamp(_) | Value::TimestampTz(_))
        }
        T::Interval => matches!(c, Value::Interval(_)),
    }
}

/// How an aggregate reads columnar batches directly: every group key and argument a plain
/// column, and no WHERE or one a [`ColumnFilter`] evaluates.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColumnarPlan {
    /// The group key columns.
    pub(crate) keys: Vec<usize>,
    /// Each aggregate state's argument column (`None` for `count(*)`).
    pub(crate) args: Vec<Option<usize>>,
    /// The WHERE clause as a column filter, if there is one.
    pub(crate) filter: Option<ColumnFilter>,
}

impl ColumnarPlan {
    /// The plan for group keys `group_by`, arguments `args` and WHERE `filter` over a stream
    /// of `columns`; `None` when some key or argument is no plain column, or the WHERE is
    /// no column-constant comparison.
    pub(crate) fn new(
        group_by: &[Expr],
        args: &[Option<&Expr>],
        filter: Option<&Expr>,
        columns: &[DataType],
    ) -> Option<ColumnarPlan> {
        let filter = match filter {
            None => None,
            Some(f) => Some(ColumnFilter::of(f, columns)?),
        };
        let column = |e: &Expr| match e {
            Expr::Column(c) => Some(*c),
            _ => None,
        };
        let keys = group_by.iter().map(column).collect::<Option<Vec<_>>>()?;
        let args = args
            .iter()
            .map(|a| match a {
                None => Some(None),
                Some(e) => column(e).map(Some),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(ColumnarPlan { keys, args, filter })
    }
}

/// How many tuples at the head of `times` are in order (at or past current time `now_us`
/// as it moves with them: the highest timestamp less `slack_us`) and keep current time
/// below `next_end_us`, so that they close no instance.
pub(crate) fn in_order_run(times: &[i64], now_us: i64, slack_us: i64, next_end_us: i64) -> usize {
    let mut now = now_us;
    let mut k = 0;
    for &t in times {
        let time = t.saturating_sub(slack_us);
        if t < now || time >= next_end_us {
            break;
        }
        now = now.max(time);
        k += 1;
    }
    k
}

/// The vectors one run of the kernels fills, kept between runs to reuse their allocations.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunBuffers {
    /// The rows WHERE keeps (batch indices, ascending).
    pub(crate) sel: Vec<u32>,
    /// Their times.
    pub(crate) sel_times: Vec<i64>,
    /// Their group ids.
    pub(crate) gids: Vec<u32>,
    /// Their slots in one instance.
    pub(crate) slots: Vec<u32>,
}

/// Fold the run `rows` of a batch (found by [`in_order_run`]) into `windows` with the
/// kernels: the selection vector of `plan`'s filter into `bufs.sel`, the selected rows'
/// group ids, then each aggregate's column into each instance
/// ([`SharedWindows::fold_in_order`]). Every state of `windows` must be [`infallible`].
///
/// Errors: the first limit hit, with the index into `bufs.sel` of the tuple it came at.
pub(crate) fn fold_run(
    windows: &mut SharedWindows,
    hasher: &KeyHasher,
    plan: &ColumnarPlan,
    views: &[ColumnView],
    times: &[i64],
    rows: Range<usize>,
    bufs: &mut RunBuffers,
) -> std::result::Result<(), (usize, crate::error::Error)> {
    let RunBuffers {
        sel,
        sel_times,
        gids,
        slots,
    } = bufs;
    sel.clear();
    match &plan.filter {
        Some(f) => f.select(&views[f.column], rows, sel),
        None => sel.extend(rows.map(|i| i as u32)),
    }
    sel_times.clear();
    sel_times.extend(sel.iter().map(|&i| times[i as usize]));
    intern_keys(windows.dict_mut(), hasher, views, &plan.keys, sel, gids);
    let naggs = plan.args.len();
    let sel: &[u32] = sel;
    let mut kernel = |accs: &mut [Acc], specs: &[AggSpec], slots: &[u32], piece: Range<usize>| {
        for (j, (spec, arg)) in specs.iter().zip(&plan.args).enumerate() {
            let col = arg.map(|c| &views[c]);
            fold_column(spec, j, naggs, accs, slots, col, &sel[piece.clone()]);
        }
    };
    let one_group = plan.keys.is_empty();
    windows.fold_in_order(sel_times, gids, one_group, slots, &mut kernel)
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::agg::AggSpec;
        use crate::exec::columns::ColumnBatchBuilder;
        use crate::exec::kernels::fold_column;
        use crate::sql::AggFunc;
        use crate::types::{DataType, Value};
        let mut b = ColumnBatchBuilder::new(&[DataType::Int4], 3);
        for v in [Value::Int4(4), Value::Null, Value::Int4(-9)] {
            b.push_row(&mut [v], 0);
        }
        let batch = b.finish();
        let views = batch.views();
        let spec = AggSpec::new(AggFunc::Max, DataType::Int4, false);
        // Two groups: rows 0 and 1 in slot 0, row 2 in slot 1; one aggregate per slot.
        let mut accs = vec![spec.init(), spec.init()];
        fold_column(
            &spec,
            0,
            1,
            &mut accs,
            &[0, 0, 1],
            Some(&views[0]),
            &[0, 1, 2],
        );
        assert_eq!(accs[0].evaluate(&spec).unwrap(), Value::Int4(4));
        assert_eq!(accs[1].evaluate(&spec).unwrap(), Value::Int4(-9));
    }
}

#[cfg(test)]
mod intern_tests {
    use super::*;
    use crate::exec::columns::ColumnBatchBuilder;
    use crate::types::{DataType, Value};

    /// Ids of one text key column, through the memo of short keys, are those the row
    /// path gives: short, long (past the memo), empty and NULL keys, seen again in later
    /// batches and after a compaction renumbered them.
    #[test]
    fn short_text_keys_get_the_row_paths_ids() {
        let hasher = KeyHasher::new();
        let keys = [
            Value::Text("ATL".into()),
            Value::Text("a-very-long-origin".into()),
            Value::Null,
            Value::Text("".into()),
            Value::Text("ATL".into()),
            Value::Text("ATL\0".into()),
            Value::Text("SFO".into()),
            Value::Text("a-very-long-origin".into()),
            Value::Null,
        ];
        let mut b = ColumnBatchBuilder::new(&[DataType::Text], keys.len());
        for k in &keys {
            b.push_row(&mut [k.clone()], 0);
        }
        let batch = b.finish();
        let views = batch.views();
        let rows: Vec<u32> = (0..keys.len() as u32).collect();
        let mut cols = GroupDict::new(1);
        let mut gids = Vec::new();
        // Twice: the second pass finds the short keys in the memo.
        for _ in 0..2 {
            intern_keys(&mut cols, &hasher, &views, &[0], &rows, &mut gids);
            let mut by_row = GroupDict::new(1);
            let expected: Vec<u32> = keys
                .iter()
                .map(|k| {
                    by_row.intern(
                        hasher.hash(std::slice::from_ref(k)),
                        std::slice::from_ref(k),
                    )
                })
                .collect();
            assert_eq!(gids, expected);
            assert_eq!(gids, [0, 1, 2, 3, 0, 4, 5, 1, 2]);
            assert_eq!(cols.len(), 6);
        }
        // After a compaction keeping "SFO" and "ATL" (ids 5 and 0 become 1 and 0), the
        // memo must not hand out the old ids.
        cols.compact(&[0, 5]);
        intern_keys(&mut cols, &hasher, &views, &[0], &[6, 0, 3], &mut gids);
        assert_eq!(gids, [1, 0, 2]);
        assert_eq!(cols.key(2), &[Value::Text("".into())]);
    }
}

#[cfg(test)]
mod one_slot_tests {
    use super::*;
    use crate::exec::columns::ColumnBatchBuilder;

    /// A column of `t` holding `vals` (`None`: NULL).
    fn column(t: DataType, vals: &[Option<f64>]) -> Vec<Value> {
        vals.iter()
            .map(|v| match (t, v) {
                (_, None) => Value::Null,
                (DataType::Int2, Some(x)) => Value::Int2(*x as i16),
                (DataType::Int4, Some(x)) => Value::Int4(*x as i32),
                (DataType::Int8, Some(x)) => Value::Int8(*x as i64),
                (DataType::Float4, Some(x)) => Value::Float4(*x as f32),
                (DataType::Float8, Some(x)) => Value::Float8(*x),
                (DataType::Bool, Some(x)) => Value::Bool(*x > 0.0),
                (_, Some(x)) => Value::Text(format!("{x}").into()),
            })
            .collect()
    }

    /// Every row into one slot (`slots == [0]`) leaves the state the row-at-a-time fold
    /// leaves, from a fresh state and from one that already holds values, for every
    /// aggregate the kernels take over every column type they read: NULLs, ties of equal
    /// values (0 and -0), NaN and infinities, integer limits, and a run of only NULLs.
    #[test]
    fn one_slot_equals_the_row_fold() {
        let big = [i16::MAX as f64, i16::MIN as f64, 7.0, -7.0];
        let floats = [
            0.0,
            -0.0,
            f64::NAN,
            1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -2.25,
        ];
        let mut cases: Vec<Vec<Option<f64>>> = vec![
            big.iter().map(|&x| Some(x)).collect(),
            vec![None, Some(3.0), None, Some(-4.0), Some(3.0), None],
            vec![None, None, None],
            floats.iter().map(|&x| Some(x)).collect(),
            vec![Some(-0.0), Some(0.0), Some(-0.0), None, Some(0.0)],
        ];
        cases.push(
            (0..40)
                .map(|k| Some(((k * 37) % 23) as f64 - 11.0))
                .collect(),
        );
        let funcs = [
            AggFunc::CountStar,
            AggFunc::Count,
            AggFunc::Sum,
            AggFunc::Avg,
            AggFunc::Min,
            AggFunc::Max,
            AggFunc::StddevSamp,
            AggFunc::VarPop,
            AggFunc::BoolAnd,
        ];
        let types = [
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float4,
            DataType::Float8,
            DataType::Bool,
            DataType::Text,
        ];
        let mut checked = 0;
        for t in types {
            for func in funcs {
                let spec = AggSpec::new(func, t, false);
                if !infallible(&spec) || (func == AggFunc::BoolAnd) != (t == DataType::Bool) {
                    continue;
                }
                let is_float = matches!(t, DataType::Float4 | DataType::Float8);
                for vals in cases
                    .iter()
                    .filter(|c| is_float || !c.iter().any(|v| v.is_some_and(|x| !x.is_finite())))
                {
                    let vals = column(t, vals);
                    let mut b = ColumnBatchBuilder::new(&[t], vals.len());
                    for v in &vals {
                        b.push_row(&mut [v.clone()], 0);
                    }
                    let batch = b.finish();
                    let views = batch.views();
                    let all: Vec<u32> = (0..vals.len() as u32).collect();
                    let odd: Vec<u32> = all.iter().copied().filter(|i| i % 2 == 1).collect();
                    for (prefix, rows) in [(0, &all), (2, &odd), (vals.len(), &all)] {
                        let mut expected = spec.init();
                        for v in vals.iter().take(prefix) {
                            expected.update(&spec, v).unwrap();
                        }
                        let mut got = vec![spec.init(), expected.clone()];
                        for &i in rows.iter() {
                            expected.update(&spec, &vals[i as usize]).unwrap();
                        }
                        fold_column(&spec, 0, 1, &mut got, &[1], Some(&views[0]), rows);
                        assert_eq!(
                            format!("{:?}", got[1]),
                            format!("{expected:?}"),
                            "{func:?} over {t:?} {vals:?} rows {rows:?} after {prefix}"
                        );
                        assert_eq!(format!("{:?}", got[0]), format!("{:?}", spec.init()));
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 300, "{checked} cases");
    }
}
