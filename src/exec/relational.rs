//! Evaluation of finite relational queries ([`RelQuery`]) row at a time.
//!
//! Scans read a [`RelationProvider`] (the system catalogs now, stored tables later), once
//! per statement and relation. Joins hash on an equality of their condition (else try every
//! pair) and pad for LEFT/RIGHT/FULL; conditions were pushed down to the scans they read
//! by [`crate::sql`]'s predicate pushdown;
//! subqueries run per outer row with the outer rows on a stack ([`RExpr::Col`]'s `up`);
//! CTEs are evaluated once and shared. Values are checked at run time: comparisons coerce a
//! text literal to the other side's type, arrays travel as PostgreSQL's text form
//! (`{a,"b c"}`), and `reg*` values are oids that print as names.
//!
//! Every statement has a budget of values ([`VALUES_MAX`], about 64 MiB) over everything
//! it builds (scans, join rows, results), so a cross
//! join of catalogs cannot exhaust memory: beyond it the statement fails with 54000.
//!
//! A statement may take long (a correlated subquery per row of a nested join): with
//! [`run_cancellable`], its evaluation reads a cancel flag every few thousand expression
//! evaluations, join probes and merged sort elements ([`CancelCheck`]) and fails with
//! 57014 once the flag is raised.
//!
//! ```ignore
//! use tcq::exec::relational::run;
//! use tcq::sql::{bind_relational as parse, RelationProvider};
//! use tcq::types::{Column, DataType, Value};
//! struct P;
//! impl RelationProvider for P {
//!     fn relation(&self, _: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
//!         (name == "t").then(|| (vec![Column::new("a", DataType::Int4)],
//!             vec![vec![Value::Int4(1)], vec![Value::Int4(2)]]))
//!     }
//! }
//! let q = parse("SELECT count(*) FROM t a JOIN t b ON a.a < b.a", &P).unwrap();
//! let (_, rows) = run(&q, &P, &[], None).unwrap();
//! assert_eq!(rows, vec![vec![Value::Int8(1)]]);
//! ```

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

use super::cancel::CancelCheck;
use crate::error::{Error, Result};
use crate::expr::{cast_value, cmp_values, compare, eval, EvalContext, SessionInfo};
use crate::sql::{
    AnyOp, CmpOp, JoinKind, Privileges, RExpr, RType, RegKind, RelAgg, RelBody, RelFrom, RelQuery,
    RelSelect, RelationProvider, SetOp,
};
use crate::types::{CatalogType, Column, DataType, ElemType, Value};

/// Values (row cells) one statement may build in all: scans, join rows, results, subquery
/// results. A value takes 32 bytes, so this bounds a statement to about 64 MiB.
pub(crate) const VALUES_MAX: usize = 2_000_000;

type Row = Vec<Value>;
/// Relations read so far in a statement, by (schema, name).
type Scans = HashMap<(String, String), Rc<Vec<Row>>>;
/// Groups by key: the first row and each aggregate's argument lists.
type Groups = HashMap<Vec<String>, (Row, Vec<Vec<Vec<Value>>>)>;

/// Evaluate `q`: its result columns and rows.
#[cfg(test)]
pub(crate) fn run(
    q: &RelQuery,
    provider: &dyn RelationProvider,
    params: &[Value],
    session: Option<&dyn SessionInfo>,
) -> Result<(Vec<Column>, Vec<Row>)> {
    run_cancellable(q, provider, params, session, None)
}

/// [`run`], stopping with 57014 ([`Error::QueryCanceled`]) soon after `cancel` turns
/// `true` (`None`: never).
pub(crate) fn run_cancellable(
    q: &RelQuery,
    provider: &dyn RelationProvider,
    params: &[Value],
    session: Option<&dyn SessionInfo>,
    cancel: Option<&AtomicBool>,
) -> Result<(Vec<Column>, Vec<Row>)> {
    let ev = Ev {
        provider,
        params,
        session,
        cancel: CancelCheck::new(cancel),
        now_us: crate::time::now_us(),
        scans: RefCell::new(HashMap::new()),
        ctes: RefCell::new(HashMap::new()),
        outer: RefCell::new(Vec::new()),
        set_values: RefCell::new(Vec::new()),
        budget: RefCell::new(VALUES_MAX),
    };
    let rows = ev.query(q)?;
    let types: Vec<RType> = q.columns.iter().map(|c| c.1).collect();
    // Every value leaves with the type its column announces, so binary-format clients
    // decode what RowDescription says (a text column of numbers is sent as text).
    let rows = rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .zip(&types)
                .map(|(v, t)| match t {
                    RType::Catalog(c) => conform_catalog(ev.output(v, *t)?, *c),
                    _ => conform(ev.output(v, *t)?, t.data_type()),
                })
                .collect::<Result<Row>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let columns = q.columns.iter().map(|(n, t)| t.column(n.clone())).collect();
    Ok((columns, rows))
}

/// `v` as a value of catalog type `ty`, held as [`CatalogType::held_as`]: an oid as a
/// `bigint` in `0..2^32` (PostgreSQL's input wraps negative 32-bit numbers), an array or
/// vector as its canonical text form, each element parsed as its type (an array converts
/// to a vector and back). Fails with 22P02 or 22003 as PostgreSQL's input functions do.
/// A value a set-returning function gave, as the type it is declared to return: its
/// elements come as text (`unnest('{1,2}'::int2vector)`), series as bigints.
fn declared(v: Value, ty: crate::sql::RType) -> Result<Value> {
    use crate::sql::RType;
    match ty {
        RType::Base(d) if !d.is_text() => cast_value(v, d),
        RType::Catalog(c) => conform_catalog(v, c),
        _ => Ok(v),
    }
}

pub(crate) fn conform_catalog(v: Value, ty: CatalogType) -> Result<Value> {
    if v.is_null() {
        return Ok(v);
    }
    if ty == CatalogType::Name {
        // `namein` keeps at most 63 bytes (NAMEDATALEN - 1), cut at a character boundary.
        let mut text = text_of(&v);
        let mut end = text.len().min(63);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        return Ok(Value::Text(text.into()));
    }
    if ty == CatalogType::Record {
        return Ok(Value::Text(text_of(&v).into()));
    }
    if ty == CatalogType::Char {
        return char_value(&v);
    }
    let text = text_of(&v);
    let Some(elem) = ty.elem() else {
        return Ok(Value::Int8(oid_of(&v, &text)?));
    };
    if matches!(ty, CatalogType::Array(_)) && super::array_nd::is_nd(&text) {
        let nd = super::array_nd::parse_nd(&text)?;
        let mut out = Vec::with_capacity(nd.elems.len());
        for e in nd.elems {
            out.push(match e {
                None => Value::Null,
                Some(e) => conform_elem(elem, &e)?,
            });
        }
        return Ok(Value::Text(
            super::array_nd::format_nd(&nd.dims, &out).into(),
        ));
    }
    // A vector may come from an array (`{1,2}`); an array must be one (`'abc'::text[]` is
    // a malformed array literal, 22P02).
    let elems = if matches!(ty, CatalogType::Array(_)) || text.trim_start().starts_with('{') {
        parse_array(&text)?
    } else {
        text.split_whitespace()
            .map(|e| Some(e.to_string()))
            .collect()
    };
    let mut out = Vec::with_capacity(elems.len());
    for e in elems {
        out.push(match e {
            None if matches!(ty, CatalogType::Array(_)) => Value::Null,
            None => {
                return Err(Error::InvalidTextRepresentation(format!(
                    "an {} cannot hold NULL",
                    ty.name()
                )))
            }
            Some(e) => conform_elem(elem, &e)?,
        });
    }
    Ok(Value::Text(
        match ty {
            CatalogType::Array(_) => format_array(&out),
            _ => out.iter().map(text_of).collect::<Vec<_>>().join(" "),
        }
        .into(),
    ))
}

/// `v` as a `"char"` (held as `charout`'s text): text as `charin` reads it (its first
/// byte), an integer as the byte of that signed value, as PostgreSQL's `int4` to
/// `"char"` cast. Errors: 22003 for an integer outside -128..=127.
fn char_value(v: &Value) -> Result<Value> {
    use crate::types::{char_byte, char_text};
    let byte = match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            let n = int_of(v).unwrap_or(0);
            i8::try_from(n)
                .map_err(|_| Error::NumericValueOutOfRange("\"char\" out of range".into()))?
                as u8
        }
        other => char_byte(&text_of(other)),
    };
    Ok(Value::Text(char_text(byte).into()))
}

/// An element of an array of `elem` read from its text `e`. Errors: its type's input's.
fn conform_elem(elem: ElemType, e: &str) -> Result<Value> {
    Ok(match elem {
        ElemType::Oid => Value::Int8(oid_of(&Value::Text(e.into()), e)?),
        ElemType::Char => char_value(&Value::Text(e.into()))?,
        other => crate::types::parse_value(e, other.held_as())?,
    })
}

/// An oid from an integer or its text, as `oidin` reads it: `-1` is 4294967295.
fn oid_of(v: &Value, text: &str) -> Result<i64> {
    let n = int_of(v).ok_or_else(|| {
        Error::InvalidTextRepresentation(format!("invalid input syntax for type oid: \"{text}\""))
    })?;
    match n {
        0..=0xFFFF_FFFF => Ok(n),
        -0x8000_0000..=-1 => Ok(n + 0x1_0000_0000),
        _ => Err(Error::NumericValueOutOfRange(format!(
            "value \"{text}\" is out of range for type oid"
        ))),
    }
}

/// `v` as a value of `ty`: unchanged when it already is one (text and varchar alike).
fn conform(v: Value, ty: DataType) -> Result<Value> {
    match v.data_type() {
        None => Ok(v),
        Some(d) if d == ty => Ok(v),
        Some(DataType::Text | DataType::Varchar(_))
            if matches!(ty, DataType::Text | DataType::Varchar(_)) =>
        {
            Ok(v)
        }
        Some(_) if matches!(ty, DataType::Text | DataType::Varchar(_)) => {
            Ok(Value::Text(text_of(&v).into()))
        }
        Some(_) => cast_value(v, ty),
    }
}

/// The state of one statement's evaluation.
pub(crate) struct Ev<'a> {
    provider: &'a dyn RelationProvider,
    params: &'a [Value],
    session: Option<&'a dyn SessionInfo>,
    /// Reads the flag raised to stop the statement (see [`run_cancellable`]).
    cancel: CancelCheck<'a>,
    now_us: i64,
    scans: RefCell<Scans>,
    ctes: RefCell<HashMap<usize, Rc<Vec<Row>>>>,
    outer: RefCell<Vec<Row>>,
    /// The current values of the select lists' set-returning calls, innermost last.
    set_values: RefCell<Vec<Row>>,
    budget: RefCell<usize>,
}

impl Ev<'_> {
    /// Count one step of work; every [`CHECK_EVERY`] steps, fail with 57014 if the
    /// statement was cancelled. Called by every expression evaluation and join probe.
    fn check(&self) -> Result<()> {
        self.cancel.check()
    }

    fn spend(&self, n: usize) -> Result<()> {
        let mut b = self.budget.borrow_mut();
        if *b < n {
            return Err(Error::ProgramLimitExceeded(format!(
                "a catalog query may build at most {VALUES_MAX} values (rows times columns)"
            )));
        }
        *b -= n;
        Ok(())
    }

    /// A value as the client sees it: reg* as names.
    fn output(&self, v: Value, t: RType) -> Result<Value> {
        match (t, &v) {
            (RType::Reg(k), v) if !v.is_null() => self.reg_name(k, v),
            _ => Ok(v),
        }
    }

    fn query(&self, q: &RelQuery) -> Result<Vec<Row>> {
        crate::sql::deep(|| self.query_inner(q))
    }

    fn query_inner(&self, q: &RelQuery) -> Result<Vec<Row>> {
        for (id, cte) in &q.ctes {
            let rows = self.query(cte)?;
            self.ctes.borrow_mut().insert(*id, Rc::new(rows));
        }
        let mut rows = match &q.body {
            RelBody::Select(s) => self.select(s)?,
            RelBody::Values(v) => v
                .iter()
                .map(|r| r.iter().map(|e| self.eval(e, &[])).collect())
                .collect::<Result<_>>()?,
            RelBody::SetOp {
                op,
                all,
                left,
                right,
            } => {
                let blank: Vec<bool> = (left.columns.iter())
                    .map(|c| matches!(c.1, crate::sql::RType::Base(DataType::Bpchar(_))))
                    .collect();
                let arrays = column_arrays(&left.columns);
                let rows = (self.query(left)?, self.query(right)?);
                set_op(*op, *all, rows.0, rows.1, &blank, &arrays)
            }
            RelBody::Recursive {
                id,
                all,
                anchor,
                step,
            } => self.recursive(*id, *all, anchor, step)?,
        };
        if !q.order_by.is_empty() {
            let columns;
            let arrays = match &q.body {
                RelBody::Select(s) => &s.arrays,
                _ => {
                    columns = column_arrays(&q.columns);
                    &columns
                }
            };
            sort_rows(&self.cancel, &mut rows, &q.order_by, arrays)?;
        }
        let width = q.columns.len();
        let offset = match &q.offset {
            Some(e) => count_value(self.eval(e, &[])?, "OFFSET")?.unwrap_or(0),
            None => 0,
        };
        let limit = match &q.limit {
            Some(e) => count_value(self.eval(e, &[])?, "LIMIT")?,
            None => None,
        };
        let mut take = limit.unwrap_or(usize::MAX);
        if q.with_ties && take > 0 {
            // The rows after the limit that sort equal to its last row.
            let last = offset.saturating_add(take) - 1;
            if let Some(tied) = rows.get(last) {
                let extra = rows[last + 1..]
                    .iter()
                    .take_while(|r| sort_equal(r, tied, &q.order_by))
                    .count();
                take = take.saturating_add(extra);
            }
        }
        Ok(rows
            .into_iter()
            .skip(offset)
            .take(take)
            .map(|mut r| {
                r.truncate(width);
                r
            })
            .collect())
    }

    /// WITH RECURSIVE: the anchor's rows, then each round's new rows, until a round adds
    /// none (the row budget bounds a recursion that never ends).
    fn recursive(
        &self,
        id: usize,
        all: bool,
        anchor: &RelQuery,
        step: &RelQuery,
    ) -> Result<Vec<Row>> {
        let arrays = column_arrays(&anchor.columns);
        let key = |r: &Row| row_key(r, &arrays);
        let mut result = self.query(anchor)?;
        if !all {
            dedupe(&mut result, &arrays);
        }
        let mut seen: std::collections::HashSet<Vec<String>> = if all {
            Default::default()
        } else {
            result.iter().map(key).collect()
        };
        let mut working = result.clone();
        while !working.is_empty() {
            self.ctes.borrow_mut().insert(id, Rc::new(working));
            let mut new = self.query(step)?;
            if !all {
                new.retain(|r| seen.insert(key(r)));
            }
            self.spend(new.iter().map(Vec::len).sum())?;
            result.extend(new.iter().cloned());
            working = new;
        }
        Ok(result)
    }

    fn select(&self, s: &RelSelect) -> Result<Vec<Row>> {
        let input = match &s.from {
            Some(f) => self.from(f)?,
            None => vec![vec![]],
        };
        let mut kept = Vec::new();
        for row in input {
            if let Some(f) = &s.filter {
                if !truthy(&self.eval(f, &row)?) {
                    continue;
                }
            }
            kept.push(row);
        }
        let mut rows = match &s.group {
            None => kept,
            Some(g) => self.group(g, kept)?,
        };
        for w in s.windows.iter().rev() {
            let values = self.window_values(w, &rows)?;
            for (r, v) in rows.iter_mut().zip(values) {
                r.push(v);
            }
        }
        let mut out = Vec::new();
        for row in &rows {
            if let Some(h) = &s.having {
                if !truthy(&self.eval(h, row)?) {
                    continue;
                }
            }
            if s.set_funcs.is_empty() {
                out.push(self.project(s, row)?);
                continue;
            }
            let sets = self.set_rows(s, row)?;
            let n = sets.iter().map(Vec::len).max().unwrap_or(0);
            for k in 0..n {
                let values = sets
                    .iter()
                    .map(|v| v.get(k).cloned().unwrap_or(Value::Null))
                    .collect();
                self.set_values.borrow_mut().push(values);
                let r = self.project(s, row);
                self.set_values.borrow_mut().pop();
                out.push(r?);
            }
        }
        if s.distinct {
            dedupe(&mut out, &s.arrays);
        }
        if let Some((keys, order)) = &s.distinct_on {
            first_of_each_key(&self.cancel, &mut out, keys, order, &s.arrays)?;
        }
        self.spend(out.iter().map(Vec::len).sum())?;
        Ok(out)
    }

    /// The select list and hidden sort keys of `s` over `row`.
    fn project(&self, s: &RelSelect, row: &[Value]) -> Result<Row> {
        let mut r = Vec::with_capacity(s.projection.len() + s.sort_keys.len());
        for e in s.projection.iter().chain(&s.sort_keys) {
            r.push(self.eval(e, row)?);
        }
        Ok(r)
    }

    /// Each set-returning call of the select list over `row`: its values, one per output
    /// row (a record's text form for a call returning several columns).
    fn set_rows(&self, s: &RelSelect, row: &[Value]) -> Result<Vec<Vec<Value>>> {
        let mut out = Vec::with_capacity(s.set_funcs.len());
        for (name, args) in &s.set_funcs {
            let args = args
                .iter()
                .map(|a| self.eval(a, row))
                .collect::<Result<Vec<_>>>()?;
            let rows = super::relational_funcs::table_function(name, &args)?;
            self.spend(rows.iter().map(Vec::len).sum())?;
            out.push(
                rows.into_iter()
                    .map(|mut r| match r.len() {
                        1 => r.pop().expect("one column"),
                        _ => Value::Text(super::relational_funcs::format_record(&r).into()),
                    })
                    .collect(),
            );
        }
        Ok(out)
    }

    /// The window function `w` at each row of `rows` (in `rows`' order): the rows sorted
    /// by partition and ORDER BY keys, each partition cut into peer groups, and the
    /// function computed over each row's frame.
    fn window_values(&self, w: &crate::sql::RelWindow, rows: &[Row]) -> Result<Vec<Value>> {
        let mut keyed = Vec::with_capacity(rows.len());
        let np = w.partition_by.len();
        let array = |k: usize| w.arrays.get(k).copied().flatten();
        for (i, r) in rows.iter().enumerate() {
            let part = (w.partition_by.iter().enumerate())
                .map(|(k, e)| self.eval(e, r).map(|v| typed_key(&v, array(k))))
                .collect::<Result<Vec<_>>>()?;
            let order = w
                .order_by
                .iter()
                .map(|(e, ..)| self.eval(e, r))
                .collect::<Result<Vec<_>>>()?;
            keyed.push((part, order, i));
        }
        let order_cmp = |a: &[Value], b: &[Value]| {
            for (k, (_, desc, nulls_first)) in w.order_by.iter().enumerate() {
                let o = sort_cmp_typed(&a[k], &b[k], *desc, *nulls_first, array(np + k));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        };
        self.cancel.sort_by(&mut keyed, |a, b| {
            a.0.cmp(&b.0)
                .then_with(|| order_cmp(&a.1, &b.1))
                .then_with(|| a.2.cmp(&b.2))
        })?;
        let mut out = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < keyed.len() {
            let end = start
                + keyed[start..]
                    .iter()
                    .take_while(|k| k.0 == keyed[start].0)
                    .count();
            let part: Vec<usize> = keyed[start..end].iter().map(|k| k.2).collect();
            // Peer groups: [from, to) ranges of rows equal on the ORDER BY keys.
            let mut peers = Vec::new();
            let mut from = 0;
            for j in 1..=part.len() {
                let o = &keyed[start..end];
                if j == part.len() || order_cmp(&o[j].1, &o[from].1) != Ordering::Equal {
                    peers.push((from, j));
                    from = j;
                }
            }
            let keys: Vec<Value> = match w.range_offsets {
                [None, None] => Vec::new(),
                _ => keyed[start..end].iter().map(|k| k.1[0].clone()).collect(),
            };
            let values = self.window_partition(w, rows, &part, &peers, &keys)?;
            for (i, v) in part.into_iter().zip(values) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }

    /// `w`'s function at each row of one partition (`part`: row indices in window order,
    /// `peers`: its peer groups as ranges of `part`, `keys`: the ORDER BY key of each row
    /// when the frame is RANGE with an offset).
    fn window_partition(
        &self,
        w: &crate::sql::RelWindow,
        rows: &[Row],
        part: &[usize],
        peers: &[(usize, usize)],
        keys: &[Value],
    ) -> Result<Vec<Value>> {
        use crate::sql::RelWindowFunc as F;
        let mut out = vec![Value::Null; part.len()];
        if let F::Agg(a) = &w.func {
            if w.frame == crate::sql::RelFrame::DEFAULT {
                self.window_aggregate(a, rows, part, peers, &mut out)?;
            } else {
                self.framed_aggregate(a, w, rows, (part, peers, keys), &mut out)?;
            }
            return Ok(out);
        }
        let at = |e: &RExpr, j: usize| self.eval(e, &rows[part[j]]);
        let n = part.len();
        for (g, &(from, to)) in peers.iter().enumerate() {
            for (j, slot) in out.iter_mut().enumerate().take(to).skip(from) {
                let frame = || frame_of(w, j, g, peers, keys);
                *slot = match &w.func {
                    F::RowNumber => Value::Int8(j as i64 + 1),
                    F::Rank => Value::Int8(from as i64 + 1),
                    F::DenseRank => Value::Int8(g as i64 + 1),
                    F::PercentRank if n == 1 => Value::Float8(0.0),
                    F::PercentRank => Value::Float8(from as f64 / (n - 1) as f64),
                    F::CumeDist => Value::Float8(to as f64 / n as f64),
                    F::Ntile(b) => ntile(&at(b, j)?, j, n)?,
                    F::NthValue(e, k) => match (nth_of(&at(k, j)?)?, frame()) {
                        (Some(k), (lo, hi)) if k <= hi - lo => at(e, lo + k - 1)?,
                        _ => Value::Null,
                    },
                    F::FirstValue(e) => match frame() {
                        (lo, hi) if lo < hi => at(e, lo)?,
                        _ => Value::Null,
                    },
                    F::LastValue(e) => match frame() {
                        (lo, hi) if lo < hi => at(e, hi - 1)?,
                        _ => Value::Null,
                    },
                    F::Shift {
                        lead,
                        value,
                        offset,
                        default,
                    } => self.shifted(rows, part, j, *lead, value, offset, default, w.ty)?,
                    F::Agg(_) => unreachable!("aggregates are computed above"),
                };
            }
        }
        Ok(out)
    }

    /// An aggregate OVER a window with a frame of its own: recomputed over each row's
    /// frame (the arguments evaluated once per row), the last value reused while the
    /// frame stays the same.
    fn framed_aggregate(
        &self,
        a: &crate::sql::RelAgg,
        w: &crate::sql::RelWindow,
        rows: &[Row],
        (part, peers, keys): (&[usize], &[(usize, usize)], &[Value]),
        out: &mut [Value],
    ) -> Result<()> {
        let mut args: Vec<Option<Vec<Value>>> = Vec::with_capacity(part.len());
        for &i in part {
            let row = &rows[i];
            if let Some(f) = &a.filter {
                if !truthy(&self.eval(f, row)?) {
                    args.push(None);
                    continue;
                }
            }
            let exprs = a.args.iter().chain(a.order_by.iter().map(|o| &o.0));
            args.push(Some(
                exprs.map(|e| self.eval(e, row)).collect::<Result<_>>()?,
            ));
        }
        let mut last: Option<((usize, usize), Value)> = None;
        for (g, &(from, to)) in peers.iter().enumerate() {
            for (j, slot) in out.iter_mut().enumerate().take(to).skip(from) {
                let range = frame_of(w, j, g, peers, keys);
                let v = match &last {
                    Some((r, v)) if *r == range => v.clone(),
                    _ => {
                        let vals = args[range.0..range.1].iter().flatten().cloned().collect();
                        aggregate(&self.cancel, a, vals)?
                    }
                };
                *slot = v.clone();
                last = Some((range, v));
            }
        }
        Ok(())
    }

    /// `lag`/`lead` at row `j` of a partition: `value` at `j` -/+ `offset` (1 by default),
    /// else `default` (NULL by default) cast to the call's type.
    #[allow(clippy::too_many_arguments)]
    fn shifted(
        &self,
        rows: &[Row],
        part: &[usize],
        j: usize,
        lead: bool,
        value: &RExpr,
        offset: &Option<RExpr>,
        default: &Option<RExpr>,
        ty: crate::sql::types::RType,
    ) -> Result<Value> {
        let row = &rows[part[j]];
        let k = match offset {
            None => 1,
            Some(e) => match self.eval(e, row)? {
                Value::Null => return Ok(Value::Null),
                v => int_of(&v).ok_or_else(|| {
                    Error::DatatypeMismatch("the offset of lag/lead must be an integer".into())
                })?,
            },
        };
        // An offset a client gives may be any bigint: past the partition either way.
        let target = if lead {
            (j as i64).checked_add(k)
        } else {
            (j as i64).checked_sub(k)
        };
        if let Some(t) = target.filter(|t| (0..part.len() as i64).contains(t)) {
            return self.eval(value, &rows[part[t as usize]]);
        }
        let Some(d) = default else {
            return Ok(Value::Null);
        };
        let v = self.eval(d, row)?;
        match ty {
            crate::sql::types::RType::Base(t) if !v.is_null() => cast_value(v, t),
            _ => Ok(v),
        }
    }

    /// An aggregate OVER a window at each row of a partition: over the rows up to the
    /// row's last peer. A partial state is updated row by row and evaluated at each peer
    /// group's end; DISTINCT, ORDER BY inside the call, string_agg and array_agg recompute
    /// over the frame.
    fn window_aggregate(
        &self,
        a: &crate::sql::RelAgg,
        rows: &[Row],
        part: &[usize],
        peers: &[(usize, usize)],
        out: &mut [Value],
    ) -> Result<()> {
        use crate::sql::functions::AggKernel;
        let mut running = match a.kernel {
            AggKernel::Partial(func) if !a.distinct && a.order_by.is_empty() => {
                let func = match (func, a.args.is_empty()) {
                    (crate::sql::AggFunc::Count, true) => crate::sql::AggFunc::CountStar,
                    (f, _) => f,
                };
                let spec = crate::agg::AggSpec::new(func, a.arg_type, false);
                let acc = spec.init();
                Some((spec, acc))
            }
            _ => None,
        };
        let mut frame: Vec<Vec<Value>> = Vec::new();
        for &(from, to) in peers {
            for &i in &part[from..to] {
                let row = &rows[i];
                if let Some(f) = &a.filter {
                    if !truthy(&self.eval(f, row)?) {
                        continue;
                    }
                }
                let args = a
                    .args
                    .iter()
                    .chain(a.order_by.iter().map(|o| &o.0))
                    .map(|e| self.eval(e, row))
                    .collect::<Result<Vec<_>>>()?;
                match &mut running {
                    Some((spec, acc)) => {
                        let x = match args.into_iter().next() {
                            None => Value::Bool(true),
                            Some(v) => cast_value(v, a.arg_type)?,
                        };
                        acc.update(spec, &x)?;
                    }
                    None => frame.push(args),
                }
            }
            if let Some((spec, acc)) = &running {
                out[from..to].fill(acc.evaluate(spec)?);
                continue;
            }
            let v = aggregate(&self.cancel, a, frame.clone())?;
            out[from..to].fill(v);
        }
        Ok(())
    }

    fn group(&self, g: &crate::sql::RelGroup, rows: Vec<Row>) -> Result<Vec<Row>> {
        let mut order: Vec<Vec<String>> = Vec::new();
        let mut groups: Groups = HashMap::new();
        for row in rows {
            let key = (g.keys.iter().enumerate())
                .map(|(i, k)| {
                    let array = g.arrays.get(i).copied().flatten();
                    self.eval(k, &row).map(|v| typed_key(&v, array))
                })
                .collect::<Result<Vec<_>>>()?;
            let mut args = Vec::with_capacity(g.aggs.len());
            for a in &g.aggs {
                // FILTER (WHERE ...): a row it does not hold for reaches no value.
                if let Some(f) = &a.filter {
                    if !truthy(&self.eval(f, &row)?) {
                        args.push(None);
                        continue;
                    }
                }
                // The call's ORDER BY keys ride after its arguments until `aggregate`.
                args.push(Some(
                    a.args
                        .iter()
                        .chain(a.order_by.iter().map(|o| &o.0))
                        .map(|e| self.eval(e, &row))
                        .collect::<Result<Vec<_>>>()?,
                ));
            }
            let entry = groups.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                (row, vec![Vec::new(); g.aggs.len()])
            });
            for (acc, a) in entry.1.iter_mut().zip(args) {
                acc.extend(a);
            }
        }
        if groups.is_empty() && g.keys.is_empty() {
            order.push(vec![]);
            let empty = vec![Value::Null; g.width];
            let accs = (g.aggs.iter())
                .map(|a| self.direct_args_alone(a, &empty))
                .collect::<Result<_>>()?;
            groups.insert(vec![], (empty, accs));
        }
        let mut out = Vec::new();
        for k in order {
            let (mut rep, accs) = groups.remove(&k).expect("group");
            rep.resize(g.width, Value::Null);
            for (a, vals) in g.aggs.iter().zip(accs) {
                rep.push(aggregate(&self.cancel, a, vals)?);
            }
            out.push(rep);
        }
        Ok(out)
    }

    /// The values an aggregate over no rows reads: none, but for an ordered-set
    /// aggregate one row of its direct arguments (evaluated over `empty`, the group's
    /// row of NULLs) and a NULL value, as PostgreSQL's final functions still read and
    /// check the fraction (`percentile_cont(-0.1)` over no rows is 22003).
    fn direct_args_alone(&self, a: &RelAgg, empty: &[Value]) -> Result<Vec<Vec<Value>>> {
        let crate::sql::functions::AggKernel::OrderedSet(f) = a.kernel else {
            return Ok(Vec::new());
        };
        let n = f.direct_args();
        let mut row = Vec::with_capacity(a.args.len() + a.order_by.len());
        for e in a.args.iter().take(n) {
            row.push(self.eval(e, empty)?);
        }
        row.resize(a.args.len() + a.order_by.len(), Value::Null);
        Ok(vec![row])
    }

    fn from(&self, f: &RelFrom) -> Result<Vec<Row>> {
        self.item_rows(f, &[])
    }

    /// The rows of FROM item `f`, whose function arguments and subqueries read `lat` as
    /// the row of the items before it (a LATERAL item's; empty for any other).
    fn item_rows(&self, f: &RelFrom, lat: &[Value]) -> Result<Vec<Row>> {
        match f {
            RelFrom::Scan { schema, name } => Ok(self.scan(schema, name)?.as_ref().clone()),
            RelFrom::Cte(id) => Ok(self
                .ctes
                .borrow()
                .get(id)
                .map(|r| r.as_ref().clone())
                .unwrap_or_default()),
            RelFrom::Sub(q) => self.sub(lat, || self.query(q)),
            RelFrom::Func {
                name,
                args,
                types,
                ordinality,
            } => {
                let args = args
                    .iter()
                    .map(|a| self.eval(a, lat))
                    .collect::<Result<Vec<_>>>()?;
                let rows = super::relational_funcs::table_function(name, &args)?;
                self.spend(rows.iter().map(Vec::len).sum())?;
                (rows.into_iter().enumerate())
                    .map(|(n, r)| {
                        let mut row = (r.into_iter().enumerate())
                            .map(|(i, v)| match types.get(i) {
                                Some(t) => declared(v, *t),
                                None => Ok(v),
                            })
                            .collect::<Result<Row>>()?;
                        if *ordinality {
                            row.push(Value::Int8(n as i64 + 1));
                        }
                        Ok(row)
                    })
                    .collect()
            }
            RelFrom::Filter { input, cond } => {
                let mut rows = self.item_rows(input, lat)?;
                let mut keep = Vec::with_capacity(rows.len());
                for r in &rows {
                    keep.push(truthy(&self.eval(cond, r)?));
                }
                let mut k = keep.into_iter();
                rows.retain(|_| k.next().unwrap_or(false));
                Ok(rows)
            }
            RelFrom::Join {
                kind,
                left,
                right,
                on,
                left_width,
                right_width,
                lateral,
            } => {
                let l = self.item_rows(left, lat)?;
                let widths = (*left_width, *right_width);
                let Some(pad) = *lateral else {
                    let r = self.item_rows(right, lat)?;
                    return self.join(*kind, &l, &r, on.as_ref(), widths.0, widths.1);
                };
                let mut prefix: Row = lat.iter().take(pad).cloned().collect();
                prefix.resize(pad, Value::Null);
                self.lateral_join((*kind, right, on.as_ref()), l, widths, prefix)
            }
        }
    }

    /// A LATERAL join: the right item once per left row, with the row `prefix` (what
    /// the join's own row has of the columns before its left row: a parenthesised
    /// join's outer row) followed by that left row. The right rows are freed before the
    /// next left row, so their spending is given back; the joined rows are spent.
    fn lateral_join(
        &self,
        (kind, right, on): (JoinKind, &RelFrom, Option<&RExpr>),
        l: Vec<Row>,
        (left_width, right_width): (usize, usize),
        mut row: Row,
    ) -> Result<Vec<Row>> {
        let pad = row.len();
        let mut out = Vec::new();
        for lr in l {
            row.truncate(pad);
            row.extend(lr.iter().cloned());
            let before = *self.budget.borrow();
            let r = self.item_rows(right, &row);
            *self.budget.borrow_mut() = before;
            out.extend(self.join(kind, &[lr], &r?, on, left_width, right_width)?);
        }
        Ok(out)
    }

    /// Join `l` and `r`: the pairs for which `on` holds, padded with NULLs for the outer
    /// kinds. Pairs are found by hashing when `on` has an equality between a left-only and
    /// a right-only expression whose values are all of one kind (integers, text, ...);
    /// `on` is still evaluated on every candidate, so hashing only skips pairs that
    /// cannot match. Otherwise every pair is tried.
    fn join(
        &self,
        kind: JoinKind,
        l: &[Row],
        r: &[Row],
        on: Option<&RExpr>,
        left_width: usize,
        right_width: usize,
    ) -> Result<Vec<Row>> {
        let candidates = match on {
            Some(c) => self.hash_candidates(c, l, r, left_width)?,
            None => None,
        };
        let all: Vec<usize> = if candidates.is_none() {
            (0..r.len()).collect()
        } else {
            Vec::new()
        };
        let mut out = Vec::new();
        let mut right_hit = vec![false; r.len()];
        for (i, lr) in l.iter().enumerate() {
            let mut hit = false;
            let tries = match &candidates {
                Some(c) => &c[i],
                None => &all,
            };
            for &j in tries {
                self.check()?;
                let rr = &r[j];
                let mut row = Vec::with_capacity(left_width + right_width);
                row.extend(lr.iter().cloned());
                row.resize(left_width, Value::Null);
                row.extend(rr.iter().cloned());
                let ok = match on {
                    Some(c) => truthy(&self.eval(c, &row)?),
                    None => true,
                };
                if ok {
                    hit = true;
                    right_hit[j] = true;
                    self.spend(row.len())?;
                    out.push(row);
                }
            }
            if !hit && matches!(kind, JoinKind::Left | JoinKind::Full) {
                let mut row = lr.clone();
                row.resize(left_width + right_width, Value::Null);
                out.push(row);
            }
        }
        if matches!(kind, JoinKind::Right | JoinKind::Full) {
            for (j, rr) in r.iter().enumerate() {
                if !right_hit[j] {
                    let mut row = vec![Value::Null; left_width];
                    row.extend(rr.iter().cloned());
                    out.push(row);
                }
            }
        }
        Ok(out)
    }

    /// For each left row, the right rows whose key equals its key under the first
    /// hashable equality of `on`; `None` when `on` has none or its keys mix kinds of
    /// values (a text and a number may compare equal after coercion yet hash apart).
    fn hash_candidates(
        &self,
        on: &RExpr,
        l: &[Row],
        r: &[Row],
        left_width: usize,
    ) -> Result<Option<Vec<Vec<usize>>>> {
        let Some((lk, rk, elem)) = equi_keys(on, left_width) else {
            return Ok(None);
        };
        let mut kinds = std::collections::HashSet::new();
        let mut table: HashMap<String, Vec<usize>> = HashMap::new();
        for (j, rr) in r.iter().enumerate() {
            if let Some((kind, key)) = hash_key(&self.eval(&rk, rr)?, elem) {
                kinds.insert(kind);
                table.entry(key).or_default().push(j);
            }
        }
        let mut out = Vec::with_capacity(l.len());
        for lr in l {
            match hash_key(&self.eval(&lk, lr)?, elem) {
                Some((kind, key)) => {
                    kinds.insert(kind);
                    out.push(table.get(&key).cloned().unwrap_or_default());
                }
                None => out.push(Vec::new()),
            }
        }
        Ok((kinds.len() <= 1).then_some(out))
    }

    /// The rows of a relation the query names, once the session may read it.
    fn scan(&self, schema: &str, name: &str) -> Result<Rc<Vec<Row>>> {
        // Checked at every scan, not once per cached relation: the functions read
        // catalogs the session may not name itself (`pg_get_userbyid` reads pg_authid).
        self.provider.check_read(schema, name)?;
        self.scan_unchecked(schema, name)
    }

    /// The rows of a provider's relation, read once per statement, without the session's
    /// read check: for the catalog reads of functions and reg* casts.
    fn scan_unchecked(&self, schema: &str, name: &str) -> Result<Rc<Vec<Row>>> {
        let key = (schema.to_string(), name.to_string());
        if let Some(r) = self.scans.borrow().get(&key) {
            return Ok(r.clone());
        }
        let (_, rows) = self
            .provider
            .relation(schema, name)
            .ok_or_else(|| Error::UndefinedTable(format!("{schema}.{name}")))?;
        self.spend(rows.iter().map(Vec::len).sum())?;
        let rows = Rc::new(rows);
        self.scans.borrow_mut().insert(key, rows.clone());
        Ok(rows)
    }

    /// Run a subquery of FROM with `row` as its outer row.
    fn sub<T>(&self, row: &[Value], f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.outer.borrow_mut().push(row.to_vec());
        let r = f();
        self.outer.borrow_mut().pop();
        r
    }

    /// Run a subquery of an expression (once per outer row when correlated): what it
    /// builds is freed when it returns its few values, so its spending is given back and
    /// the budget bounds what is alive at once, not the sum over outer rows.
    fn sub_expr<T>(&self, row: &[Value], f: impl FnOnce() -> Result<T>) -> Result<T> {
        let before = *self.budget.borrow();
        let r = self.sub(row, f);
        *self.budget.borrow_mut() = before;
        r
    }

    /// A template over its arguments: columns, literals and parameters are read first;
    /// any other argument (a subquery, a call) only when the expression reaches it, once,
    /// so a CASE branch not taken runs nothing, as in PostgreSQL.
    fn template(&self, expr: &crate::sql::Expr, args: &[RExpr], row: &[Value]) -> Result<Value> {
        let direct = |a: &RExpr| {
            matches!(
                a,
                RExpr::Col { .. }
                    | RExpr::Lit(_)
                    | RExpr::Param(_)
                    | RExpr::SetFunc(_)
                    | RExpr::Window(_)
            )
        };
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(if direct(a) {
                self.eval(a, row)?
            } else {
                Value::Null
            });
        }
        let computed: RefCell<Vec<Option<Value>>> = RefCell::new(vec![None; args.len()]);
        let lazy = |i: usize| -> Option<Result<Value>> {
            let a = args.get(i).filter(|a| !direct(a))?;
            if let Some(v) = computed.borrow().get(i).cloned().flatten() {
                return Some(Ok(v));
            }
            let v = self.eval(a, row);
            if let Ok(v) = &v {
                computed.borrow_mut()[i] = Some(v.clone());
            }
            Some(v)
        };
        let mut ctx = EvalContext::new(&vals, self.params, None).with_now(self.now_us);
        if !args.iter().all(direct) {
            ctx = ctx.with_lazy(&lazy);
        }
        if let Some(s) = self.session {
            ctx = ctx.with_session(s);
        }
        eval(expr, &ctx)
    }

    fn eval(&self, e: &RExpr, row: &[Value]) -> Result<Value> {
        self.check()?;
        match e {
            RExpr::Col { up: 0, idx } => Ok(row.get(*idx).cloned().unwrap_or(Value::Null)),
            RExpr::Col { up, idx } => {
                let outer = self.outer.borrow();
                let n = outer.len();
                Ok(n.checked_sub(*up)
                    .and_then(|i| outer.get(i))
                    .and_then(|r| r.get(*idx))
                    .cloned()
                    .unwrap_or(Value::Null))
            }
            RExpr::Lit(v) => Ok(v.clone()),
            RExpr::SetFunc(j) => Ok(self
                .set_values
                .borrow()
                .last()
                .and_then(|v| v.get(*j))
                .cloned()
                .unwrap_or(Value::Null)),
            RExpr::Window(j) => Ok(row
                .len()
                .checked_sub(1 + j)
                .and_then(|i| row.get(i))
                .cloned()
                .unwrap_or(Value::Null)),
            RExpr::Param(i) => self.params.get(*i).cloned().ok_or_else(|| {
                Error::ProtocolViolation(format!("parameter ${} has no value", i + 1))
            }),
            RExpr::Template { expr, args } => self.template(expr, args, row),
            RExpr::Cmp {
                op,
                arrays,
                left,
                right,
            } => {
                let l = self.eval(left, row)?;
                let r = self.eval(right, row)?;
                match arrays {
                    Some((ta, tb)) => array_cmp_op(*op, *ta, &l, *tb, &r),
                    None => cmp_op(*op, &l, &r),
                }
            }
            RExpr::And(list) => {
                let mut null = false;
                for x in list {
                    match self.eval(x, row)? {
                        Value::Bool(false) => return Ok(Value::Bool(false)),
                        Value::Null => null = true,
                        _ => {}
                    }
                }
                Ok(if null { Value::Null } else { Value::Bool(true) })
            }
            RExpr::AnyArray {
                left,
                op,
                array,
                all,
            } => self.any_array(left, *op, array, *all, row),
            RExpr::AnySub {
                left,
                op,
                query,
                all,
                negated,
            } => self.any_sub(left, *op, query, *all, *negated, row),
            RExpr::Exists(q, negated) => {
                let rows = self.sub_expr(row, || self.query(q))?;
                Ok(Value::Bool(rows.is_empty() == *negated))
            }
            RExpr::ScalarSub(q) => self.scalar_sub(q, row),
            RExpr::ArraySub(q) => self.array_sub(q, row),
            RExpr::Array(list) => {
                let vals = list
                    .iter()
                    .map(|x| self.eval(x, row))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Value::Text(format_array(&vals).into()))
            }
            RExpr::Subscript(a, i) => self.subscript(a, i, row),
            RExpr::ArrayConcat(l, r) => self.array_concat(l, r, row),
            RExpr::Cast(x, t) => {
                let v = self.eval(x, row)?;
                self.cast(v, *t, x)
            }
            RExpr::Func(name, args) => {
                let vals = args
                    .iter()
                    .map(|a| self.eval(a, row))
                    .collect::<Result<Vec<_>>>()?;
                super::relational_funcs::call(self, name, &vals)
            }
            RExpr::ArrayFunc(name, elems, args) => {
                let vals = args
                    .iter()
                    .map(|a| self.eval(a, row))
                    .collect::<Result<Vec<_>>>()?;
                Ok(super::array_funcs::call_typed(name, *elems, &vals)?.unwrap_or(Value::Null))
            }
        }
    }

    /// `left op ANY|ALL (array)`.
    fn any_array(
        &self,
        left: &RExpr,
        op: AnyOp,
        array: &RExpr,
        all: bool,
        row: &[Value],
    ) -> Result<Value> {
        let v = self.eval(left, row)?;
        let a = self.eval(array, row)?;
        if a.is_null() {
            return Ok(Value::Null);
        }
        // A multidimensional array's elements in row-major order: ANY and ALL read them
        // all, whatever the dimensions.
        let text = text_of(&a);
        let parsed = match super::array_nd::is_nd(&text) {
            true => super::array_nd::parse_nd(&text)?.elems,
            false => parse_array(&text)?,
        };
        let elems: Vec<Value> = parsed
            .into_iter()
            .map(|e| e.map_or(Value::Null, |s| Value::Text(s.into())))
            .collect();
        match op {
            AnyOp::Cmp(op) => any(op, &v, &elems, all, false, None),
            AnyOp::Like {
                negated,
                case_insensitive,
            } => any_by(&v, &elems, all, false, |v, p| {
                if v.is_null() || p.is_null() {
                    return Ok(Value::Null);
                }
                let m = crate::expr::like_match(&text_of(v), &text_of(p), case_insensitive)?;
                Ok(Value::Bool(m != negated))
            }),
        }
    }

    /// `left op ANY|ALL (subquery)`, and `[NOT] IN (subquery)`.
    fn any_sub(
        &self,
        left: &RExpr,
        op: CmpOp,
        query: &RelQuery,
        all: bool,
        negated: bool,
        row: &[Value],
    ) -> Result<Value> {
        let v = self.eval(left, row)?;
        let rows = self.sub_expr(row, || self.query(query))?;
        let vals: Vec<Value> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect();
        let array = query
            .columns
            .first()
            .and_then(|c| crate::sql::array_elem(c.1));
        any(op, &v, &vals, all, negated, array)
    }

    /// A scalar subquery: its one value, NULL without rows. Errors: 21000 for more
    /// than one row.
    fn scalar_sub(&self, q: &RelQuery, row: &[Value]) -> Result<Value> {
        let rows = self.sub_expr(row, || self.query(q))?;
        if rows.len() > 1 {
            return Err(Error::CardinalityViolation(
                "more than one row returned by a subquery used as an expression".into(),
            ));
        }
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null))
    }

    /// ARRAY(subquery): its first column's values as an array literal.
    fn array_sub(&self, q: &RelQuery, row: &[Value]) -> Result<Value> {
        let rows = self.sub_expr(row, || self.query(q))?;
        let t = q.columns.first().map_or(RType::Unknown, |c| c.1);
        let mut elems = Vec::new();
        for r in rows {
            let v = r.into_iter().next().unwrap_or(Value::Null);
            elems.push(self.output(v, t)?);
        }
        Ok(Value::Text(format_array(&elems).into()))
    }

    /// `a[i]`: arrays are subscripted from 1; int2vector and oidvector (pg_index.indkey,
    /// indoption), which print as `1 2`, from 0. NULL out of range.
    fn subscript(&self, a: &RExpr, i: &RExpr, row: &[Value]) -> Result<Value> {
        // `a[i][j]...`: one subscript per dimension of an array of several.
        let mut base = a;
        let mut index = vec![i];
        while let RExpr::Subscript(inner, j) = base {
            index.push(j);
            base = inner;
        }
        if index.len() > 1 {
            let v = self.eval(base, row)?;
            let text = text_of(&v);
            if !v.is_null() && super::array_nd::is_nd(&text) {
                let mut at = Vec::with_capacity(index.len());
                for j in index.iter().rev() {
                    match int_of(&self.eval(j, row)?) {
                        Some(j) => at.push(j),
                        None => return Ok(Value::Null),
                    }
                }
                return super::array_nd::element_at(&text, &at);
            }
        }
        let a = self.eval(a, row)?;
        let i = self.eval(i, row)?;
        let (Some(i), false) = (int_of(&i), a.is_null()) else {
            return Ok(Value::Null);
        };
        let text = text_of(&a);
        if !text.starts_with('{') {
            return Ok(usize::try_from(i)
                .ok()
                .and_then(|i| text.split_whitespace().nth(i))
                .map_or(Value::Null, |s| Value::Text(s.into())));
        }
        if super::array_nd::is_nd(&text) {
            // Too few subscripts for its dimensions: NULL, as in PostgreSQL.
            return super::array_nd::element_at(&text, &[i]);
        }
        let elems = parse_array(&text)?;
        Ok(usize::try_from(i.saturating_sub(1))
            .ok()
            .and_then(|i| elems.get(i).cloned())
            .flatten()
            .map_or(Value::Null, |s| Value::Text(s.into())))
    }

    /// `l || r` on arrays; a NULL side leaves the other.
    fn array_concat(&self, l: &RExpr, r: &RExpr, row: &[Value]) -> Result<Value> {
        let l = self.eval(l, row)?;
        let r = self.eval(r, row)?;
        if l.is_null() {
            return Ok(r);
        }
        if r.is_null() {
            return Ok(l);
        }
        let mut a = parse_array(&text_of(&l))?;
        a.extend(parse_array(&text_of(&r))?);
        let vals: Vec<Value> = a
            .into_iter()
            .map(|e| e.map_or(Value::Null, |s| Value::Text(s.into())))
            .collect();
        Ok(Value::Text(format_array(&vals).into()))
    }

    /// Cast `v` (of the static type of `from`) to `to`.
    fn cast(&self, v: Value, to: RType, from: &RExpr) -> Result<Value> {
        if v.is_null() {
            return Ok(v);
        }
        match (to, from) {
            (RType::Base(d), RExpr::Cast(_, RType::Reg(k))) if d.is_text() => {
                return self.reg_name(*k, &v)
            }
            (RType::Base(DataType::Int4), RExpr::Cast(_, RType::Catalog(CatalogType::Char))) => {
                let byte = crate::types::char_byte(&text_of(&v));
                return Ok(Value::Int4(i32::from(byte as i8)));
            }
            _ => {}
        }
        match to {
            // Catalog columns of type regproc hold function names, so a regproc is its
            // name: `typinput = 'array_in'::regproc` compares names.
            RType::Reg(RegKind::Proc) => match &v {
                Value::Text(s) if s.trim().parse::<i64>().is_err() => {
                    let s = s.trim();
                    Ok(Value::Text(
                        s.strip_prefix("pg_catalog.").unwrap_or(s).into(),
                    ))
                }
                other => self.reg_name(RegKind::Proc, other),
            },
            RType::Reg(k) => match &v {
                Value::Text(s) => match s.trim().parse::<i64>() {
                    Ok(n) => Ok(Value::Int8(n)),
                    Err(_) => self.reg_oid(k, s, true),
                },
                other => Ok(Value::Int8(int_of(other).ok_or_else(|| {
                    Error::DatatypeMismatch(format!("cannot cast {other:?} to an oid"))
                })?)),
            },
            RType::Catalog(c) => conform_catalog(v, c),
            RType::Unknown | RType::Record(_) => Ok(v),
            RType::Base(d) => cast_value(v, d),
        }
    }

    /// The session's current value of setting `name`, as `current_setting` reads it.
    pub(crate) fn setting(&self, name: &str) -> Option<String> {
        self.session.and_then(|s| s.setting(name))
    }

    /// The name of object `v` of kind `k`, as a `reg*` value prints.
    pub(crate) fn reg_name(&self, k: RegKind, v: &Value) -> Result<Value> {
        let Some(oid) = int_of(v) else {
            return Ok(v.clone());
        };
        let (rel, name_col, ns_col) = reg_relation(k);
        let rows = self.scan_unchecked("pg_catalog", rel)?;
        for r in rows.iter() {
            if int_of(&r[0]) == Some(oid) {
                let name = text_of(&r[name_col]);
                if k == RegKind::Type {
                    return Ok(Value::Text(
                        super::relational_funcs::format_type_name(self, oid, None)?.into(),
                    ));
                }
                let visible = ns_col.is_none_or(|c| {
                    let ns = int_of(&r[c]).unwrap_or(0);
                    ns == super::relational_funcs::PG_CATALOG_OID
                        || ns == super::relational_funcs::PUBLIC_OID
                });
                if !visible {
                    let ns = self.reg_name(RegKind::Namespace, &r[ns_col.expect("ns")])?;
                    return Ok(Value::Text(
                        format!("{}.{}", text_of(&ns), quote_ident(&name)).into(),
                    ));
                }
                return Ok(Value::Text(quote_ident(&name).into()));
            }
        }
        Ok(Value::Text(oid.to_string().into()))
    }

    /// The oid of the object named `name` of kind `k`; with `strict`, a missing one is an
    /// error (as a cast), else NULL (as `to_regclass`).
    pub(crate) fn reg_oid(&self, k: RegKind, name: &str, strict: bool) -> Result<Value> {
        let name = name.trim();
        let (rel, name_col, ns_col) = reg_relation(k);
        let (schema, bare) = split_qualified(name);
        let wanted = if k == RegKind::Type {
            super::relational_funcs::canonical_type_name(&bare)
        } else {
            bare.clone()
        };
        let rows = self.scan_unchecked("pg_catalog", rel)?;
        let ns_oid = match &schema {
            Some(s) => Some(int_of(&self.reg_oid(RegKind::Namespace, s, strict)?).unwrap_or(-1)),
            None => None,
        };
        for r in rows.iter() {
            if text_of(&r[name_col]) != wanted {
                continue;
            }
            let ns = ns_col.and_then(|c| int_of(&r[c])).unwrap_or(0);
            let ok = match ns_oid {
                Some(n) => ns == n,
                None => {
                    ns_col.is_none()
                        || ns == super::relational_funcs::PG_CATALOG_OID
                        || ns == super::relational_funcs::PUBLIC_OID
                }
            };
            if ok {
                return Ok(r[0].clone());
            }
        }
        if !strict {
            return Ok(Value::Null);
        }
        Err(match k {
            RegKind::Class => Error::UndefinedTable(name.to_string()),
            RegKind::Type => Error::UndefinedObject(format!("type \"{name}\" does not exist")),
            RegKind::Proc => {
                Error::UndefinedFunction(format!("function \"{name}\" does not exist"))
            }
            RegKind::Namespace => {
                Error::UndefinedSchema(format!("schema \"{name}\" does not exist"))
            }
            RegKind::Role => Error::UndefinedObject(format!("role \"{name}\" does not exist")),
        })
    }

    /// What `role` holds on relation `schema.name` (see
    /// [`RelationProvider::table_privileges`]).
    pub(crate) fn table_privileges(
        &self,
        role: &str,
        schema: &str,
        name: &str,
    ) -> (Privileges, bool) {
        self.provider.table_privileges(role, schema, name)
    }

    /// The session's user, when there is a session.
    pub(crate) fn session_user(&self) -> Option<&str> {
        self.session.map(|s| s.user())
    }

    /// Rows of a catalog relation, for the functions.
    pub(crate) fn catalog(&self, name: &str) -> Result<Rc<Vec<Row>>> {
        self.scan_unchecked("pg_catalog", name)
    }
}

/// The catalog relation, name column and namespace column of each reg* kind (oid is
/// column 0 in each).
fn reg_relation(k: RegKind) -> (&'static str, usize, Option<usize>) {
    match k {
        RegKind::Class => ("pg_class", 1, Some(2)),
        RegKind::Type => ("pg_type", 1, Some(2)),
        RegKind::Proc => ("pg_proc", 1, Some(2)),
        RegKind::Namespace => ("pg_namespace", 1, None),
        RegKind::Role => ("pg_authid", 1, None),
    }
}

fn split_qualified(name: &str) -> (Option<String>, String) {
    let unquote = |s: &str| {
        let s = s.trim();
        if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
            s[1..s.len() - 1].replace("\"\"", "\"")
        } else {
            s.to_lowercase()
        }
    };
    // Split on the first dot outside quotes.
    let mut quoted = false;
    for (i, c) in name.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => {
                return (Some(unquote(&name[..i])), unquote(&name[i + 1..]));
            }
            _ => {}
        }
    }
    (None, unquote(name))
}

/// PostgreSQL 15's keywords that are not unreserved (reserved, type/function-name and
/// column-name keywords, from its kwlist.h), sorted: `quote_ident` quotes them.
const QUOTED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// `quote_ident`: double quotes unless the name is a lower-case identifier and no keyword
/// PostgreSQL reserves.
pub(crate) fn quote_ident(name: &str) -> String {
    let plain = QUOTED_KEYWORDS.binary_search(&name).is_err()
        && !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::Text(s) => s.to_string(),
        Value::Null => String::new(),
        other => {
            let mut s = String::new();
            crate::types::format_value(other, &mut s);
            s
        }
    }
}

pub(crate) fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Text(s) => s.trim().parse().ok(),
        other => other.as_i64(),
    }
}

fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

fn count_value(v: Value, what: &str) -> Result<Option<usize>> {
    match v {
        Value::Null => Ok(None),
        v => match int_of(&v) {
            Some(n) if n >= 0 => Ok(Some(n as usize)),
            // A numeric or float count is cast to bigint, rounding (`LIMIT 1.5` is 2).
            None if matches!(v, Value::Numeric(_) | Value::Float4(_) | Value::Float8(_)) => {
                let n = crate::expr::cast_value(v, crate::types::DataType::Int8)?;
                count_value(n, what)
            }
            _ => Err(if what == "LIMIT" {
                Error::InvalidRowCountInLimit("LIMIT must not be negative".into())
            } else {
                Error::InvalidRowCountInResultOffset("OFFSET must not be negative".into())
            }),
        },
    }
}

/// Compare with PostgreSQL's coercion of an untyped literal: a text operand meets a number
/// or boolean as that type.
fn coerce_pair(l: &Value, r: &Value) -> Result<(Value, Value)> {
    let l2 = match (l, r) {
        (Value::Text(_), Value::Text(_)) => return Ok((l.clone(), r.clone())),
        (Value::Text(_), other) => match other.data_type() {
            Some(d) => cast_value(l.clone(), d)?,
            None => l.clone(),
        },
        _ => l.clone(),
    };
    let r2 = match (l, r) {
        (other, Value::Text(_)) if !matches!(other, Value::Text(_)) => match other.data_type() {
            Some(d) => cast_value(r.clone(), d)?,
            None => r.clone(),
        },
        _ => r.clone(),
    };
    Ok((l2, r2))
}

fn cmp_op(op: CmpOp, l: &Value, r: &Value) -> Result<Value> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let (l, r) = coerce_pair(l, r)?;
    Ok(holds(op, compare(&l, &r)?))
}

/// `l op r` of arrays (elements of `tl` and `tr`) held as their text forms, element by
/// element as PostgreSQL's `array_cmp`; NULL when either array is NULL.
fn array_cmp_op(op: CmpOp, tl: ElemType, l: &Value, tr: ElemType, r: &Value) -> Result<Value> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let (l, r) = (array_text(l), array_text(r));
    Ok(holds(op, super::array_cmp::array_cmp(tl, &l, tr, &r)?))
}

/// An array value's text form, borrowed when it is held as text (as arrays are).
pub(crate) fn array_text(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::Text(s) => std::borrow::Cow::Borrowed(s.as_str()),
        other => std::borrow::Cow::Owned(text_of(other)),
    }
}

/// Whether `op` holds of two values that compare as `o`.
fn holds(op: CmpOp, o: Ordering) -> Value {
    Value::Bool(match op {
        CmpOp::Eq => o == Ordering::Equal,
        CmpOp::Ne => o != Ordering::Equal,
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::Ge => o != Ordering::Less,
    })
}

/// `v op ANY|ALL (vals)` with SQL's NULL rules; `negated` inverts the result (NOT IN);
/// arrays of `array` compare element by element.
fn any(
    op: CmpOp,
    v: &Value,
    vals: &[Value],
    all: bool,
    negated: bool,
    array: Option<ElemType>,
) -> Result<Value> {
    any_by(v, vals, all, negated, |v, x| match array {
        Some(e) => array_cmp_op(op, e, v, e, x),
        None => cmp_op(op, v, x),
    })
}

/// `v op ANY|ALL (vals)` with SQL's NULL rules, `holds` answering `v op x` (true, false
/// or NULL); `negated` inverts the result.
fn any_by(
    v: &Value,
    vals: &[Value],
    all: bool,
    negated: bool,
    holds: impl Fn(&Value, &Value) -> Result<Value>,
) -> Result<Value> {
    let mut null = v.is_null() && !vals.is_empty();
    let mut hit = false;
    for x in vals {
        let holds = holds(v, x)?;
        match holds {
            Value::Bool(b) if b != all => {
                hit = true;
                break;
            }
            Value::Null => null = true,
            _ => {}
        }
    }
    let r = if hit {
        Value::Bool(!all)
    } else if null {
        Value::Null
    } else {
        Value::Bool(all)
    };
    Ok(match r {
        Value::Bool(b) => Value::Bool(b != negated),
        other => other,
    })
}

fn sort_cmp(a: &Value, b: &Value, desc: bool, nulls_first: bool) -> Ordering {
    sort_cmp_typed(a, b, desc, nulls_first, None)
}

/// [`sort_cmp`] of values that are arrays of `array` when given: element by element.
fn sort_cmp_typed(
    a: &Value,
    b: &Value,
    desc: bool,
    nulls_first: bool,
    array: Option<ElemType>,
) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => {
            if nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (false, true) => {
            if nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        _ => {
            let o = match array {
                Some(e) => array_order(e, a, b),
                None => cmp_values(a, b),
            };
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// The two sides of the first equality conjunct of `on` that compares an expression of
/// the left row with one of the right row: the left one over the left row, the right one
/// over the right row (its columns renumbered from 0).
fn equi_keys(on: &RExpr, left_width: usize) -> Option<(RExpr, RExpr, Option<ElemType>)> {
    let parts: Vec<&RExpr> = match on {
        RExpr::And(ps) => ps.iter().collect(),
        e => vec![e],
    };
    let side = |e: &RExpr| {
        let c = crate::sql::relational_cols(e)?;
        if c.is_empty() {
            None
        } else if c.iter().all(|&i| i < left_width) {
            Some(true)
        } else if c.iter().all(|&i| i >= left_width) {
            Some(false)
        } else {
            None
        }
    };
    parts.into_iter().find_map(|p| {
        let RExpr::Cmp {
            op: CmpOp::Eq,
            arrays,
            left,
            right,
        } = p
        else {
            return None;
        };
        // Arrays hash by their elements' keys only when both sides have one element
        // type (equal values of two types may print apart).
        let elem = match arrays {
            Some((a, b)) if a != b => return None,
            a => a.map(|p| p.0),
        };
        let (a, b) = match (side(left)?, side(right)?) {
            (true, false) => (left, right),
            (false, true) => (right, left),
            _ => return None,
        };
        let b = crate::sql::relational_map_cols(b, &|i| i - left_width);
        Some((a.as_ref().clone(), b, elem))
    })
}

/// A value's kind and hash key for a hash join; `None` for NULL, which equals nothing.
/// Integers of every width are one kind; any other type is its own.
fn hash_key(v: &Value, array: Option<ElemType>) -> Option<(String, String)> {
    let v: &Value = &canonical(v);
    match v {
        Value::Null => None,
        v if array.is_some() => Some((
            "array".into(),
            super::array_cmp::array_key(array.expect("checked"), &array_text(v)),
        )),
        Value::Text(s) => Some(("text".into(), s.to_string())),
        other => match other.as_i64() {
            Some(i) => Some(("int".into(), i.to_string())),
            None => Some((format!("{:?}", other.data_type()), format!("{other:?}"))),
        },
    }
}

/// Arrays of `e` in PostgreSQL's `array_cmp` order (a malformed one, which a typed
/// array never is, after the others by its text).
fn array_order(e: ElemType, a: &Value, b: &Value) -> Ordering {
    let (x, y) = (array_text(a), array_text(b));
    super::array_cmp::array_cmp(e, &x, e, &y).unwrap_or_else(|_| x.cmp(&y))
}

/// The element type of each array column of `columns` (`None` for other columns).
fn column_arrays(columns: &[(String, crate::sql::RType)]) -> Vec<Option<ElemType>> {
    columns
        .iter()
        .map(|c| crate::sql::array_elem(c.1))
        .collect()
}

/// [`group_key`] of a value that is an array of `array` when given: equal for arrays
/// whose elements are equal ([`super::array_cmp::array_key`]).
fn typed_key(v: &Value, array: Option<ElemType>) -> String {
    match (array, v) {
        (Some(e), Value::Text(s)) => format!("a{}", super::array_cmp::array_key(e, s)),
        _ => group_key(v),
    }
}

/// The key of a row for DISTINCT and set operations, its array columns (`arrays`) by
/// their elements.
fn row_key(r: &Row, arrays: &[Option<ElemType>]) -> Vec<String> {
    (r.iter().enumerate())
        .map(|(i, v)| typed_key(v, arrays.get(i).copied().flatten()))
        .collect()
}

/// A hashable key for grouping and DISTINCT: NULLs group together; numbers by value.
fn group_key(v: &Value) -> String {
    let v: &Value = &canonical(v);
    match v {
        Value::Null => "\u{0}null".into(),
        Value::Text(s) => format!("t{s}"),
        other => match other.as_i64() {
            Some(i) => format!("n{i}"),
            None => format!("v{}", text_of(other)),
        },
    }
}

/// The representative of `v`'s class of equal values, as PostgreSQL's equality sees
/// them: -0.0 is 0.0 and a numeric's trailing zeros do not count (`1.50` = `1.5`).
fn canonical(v: &Value) -> std::borrow::Cow<'_, Value> {
    use std::borrow::Cow;
    match v {
        Value::Float8(x) if *x == 0.0 => Cow::Owned(Value::Float8(0.0)),
        Value::Float4(x) if *x == 0.0 => Cow::Owned(Value::Float4(0.0)),
        Value::Numeric(d) => Cow::Owned(Value::Numeric(d.normalize())),
        Value::WideNumeric(w) => Cow::Owned(match w.normalized() {
            Ok(d) => Value::Numeric(d),
            Err((m, s)) => crate::types_wide::WideNumeric::value(m, s),
        }),
        other => Cow::Borrowed(other),
    }
}

/// DISTINCT ON: the first row of each key in `order` (column, descending, nulls first),
/// kept in that order; keys compare as GROUP BY compares them (NULLs equal).
fn first_of_each_key(
    cancel: &CancelCheck,
    rows: &mut Vec<Row>,
    keys: &[usize],
    order: &[(usize, bool, bool)],
    arrays: &[Option<ElemType>],
) -> Result<()> {
    sort_rows(cancel, rows, order, arrays)?;
    let key = |r: &Row| {
        (keys.iter())
            .map(|&k| typed_key(&r[k], arrays.get(k).copied().flatten()))
            .collect::<Vec<_>>()
    };
    let mut last = None;
    rows.retain(|r| {
        let k = key(r);
        let new = last.as_ref() != Some(&k);
        last = Some(k);
        new
    });
    Ok(())
}

/// Sort rows stably by columns (column, descending, nulls first), the array columns
/// (`arrays`, by column) element by element. Errors: 57014 when `cancel` sees its flag.
/// Whether rows `a` and `b` sort equal by `order` (NULLs equal to each other), as FETCH
/// ... WITH TIES compares them.
fn sort_equal(a: &Row, b: &Row, order: &[(usize, bool, bool)]) -> bool {
    order.iter().all(|&(i, desc, nulls_first)| {
        sort_cmp_typed(&a[i], &b[i], desc, nulls_first, None) == Ordering::Equal
    })
}

fn sort_rows(
    cancel: &CancelCheck,
    rows: &mut Vec<Row>,
    order: &[(usize, bool, bool)],
    arrays: &[Option<ElemType>],
) -> Result<()> {
    cancel.sort_by(rows, |a, b| {
        for &(i, desc, nulls_first) in order {
            let array = arrays.get(i).copied().flatten();
            let o = sort_cmp_typed(&a[i], &b[i], desc, nulls_first, array);
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    })
}

/// `left op right` ([ALL]); rows are equal as GROUP BY compares them, the `blank` columns
/// (character(n)) without their trailing blanks; a duplicate keeps the first row met.
fn set_op(
    op: SetOp,
    all: bool,
    left: Vec<Row>,
    right: Vec<Row>,
    blank: &[bool],
    arrays: &[Option<ElemType>],
) -> Vec<Row> {
    let key = |r: &Row| {
        r.iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Text(s) if blank.get(i) == Some(&true) => {
                    group_key(&Value::Text(s.trim_end_matches(' ').into()))
                }
                v => typed_key(v, arrays.get(i).copied().flatten()),
            })
            .collect::<Vec<_>>()
    };
    match op {
        SetOp::Union => {
            let mut out = left;
            out.extend(right);
            if !all {
                dedupe_by(&mut out, key);
            }
            out
        }
        SetOp::Intersect | SetOp::Except => {
            let mut counts: HashMap<Vec<String>, usize> = HashMap::new();
            for r in &right {
                *counts.entry(key(r)).or_default() += 1;
            }
            let mut out = Vec::new();
            for r in left {
                let k = key(&r);
                let c = counts.get(&k).copied().unwrap_or(0);
                let keep = (op == SetOp::Intersect) == (c > 0);
                // ALL is a multiset operation: each right row matches one left row, so
                // INTERSECT ALL keeps min(m, n) copies and EXCEPT ALL max(m - n, 0).
                if all && c > 0 {
                    counts.insert(k, c - 1);
                }
                if keep {
                    out.push(r);
                }
            }
            if !all {
                dedupe_by(&mut out, key);
            }
            out
        }
    }
}

/// Keep the first row of each `key`.
fn dedupe_by(rows: &mut Vec<Row>, key: impl Fn(&Row) -> Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert(key(r)));
}

/// Keep the first of each set of equal rows, the array columns (`arrays`) compared by
/// their elements.
fn dedupe(rows: &mut Vec<Row>, arrays: &[Option<ElemType>]) {
    dedupe_by(rows, |r| row_key(r, arrays));
}

/// The rows `[lo, hi)` of a partition of `n` rows in frame `f` of row `j` (0-based), whose
/// peer group is `g` of `peers` (ranges of the partition).
fn frame_rows(
    f: &crate::sql::RelFrame,
    j: usize,
    g: usize,
    peers: &[(usize, usize)],
    n: usize,
) -> (usize, usize) {
    use crate::sql::{FrameBound as B, FrameUnits as U};
    let k = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
    let last = peers.len() - 1;
    let lo = match (f.units, f.start) {
        (_, B::UnboundedPreceding) => 0,
        (U::Rows, B::Preceding(x)) => j.saturating_sub(k(x)),
        (U::Rows, B::CurrentRow) => j,
        (U::Rows, B::Following(x)) => j.saturating_add(k(x)),
        (_, B::Preceding(x)) => peers[g.saturating_sub(k(x))].0,
        (_, B::CurrentRow) => peers[g].0,
        (_, B::Following(x)) => peers.get(g.saturating_add(k(x))).map_or(n, |p| p.0),
        (_, B::UnboundedFollowing) => n,
    };
    let hi = match (f.units, f.end) {
        (_, B::UnboundedFollowing) => n,
        (U::Rows, B::Preceding(x)) => (j + 1).saturating_sub(k(x)),
        (U::Rows, B::CurrentRow) => j + 1,
        (U::Rows, B::Following(x)) => j.saturating_add(k(x)).saturating_add(1),
        (_, B::Preceding(x)) => g.checked_sub(k(x)).map_or(0, |h| peers[h].1),
        (_, B::CurrentRow) => peers[g].1,
        (_, B::Following(x)) => peers[g.saturating_add(k(x)).min(last)].1,
        (_, B::UnboundedPreceding) => 0,
    };
    let hi = hi.min(n);
    (lo.min(hi), hi)
}

/// The frame `[lo, hi)` of row `j` (peer group `g`) of a partition: [`frame_rows`], but
/// for the bounds of a RANGE frame with an offset, which hold the rows whose ORDER BY key
/// (`keys`, in window order) lies within the offset of row `j`'s key. A NULL key's frame
/// bound is its peer group's; beside a non-null key NULLs lie infinitely far, as
/// PostgreSQL's window code places them.
fn frame_of(
    w: &crate::sql::RelWindow,
    j: usize,
    g: usize,
    peers: &[(usize, usize)],
    keys: &[Value],
) -> (usize, usize) {
    let (lo, hi) = frame_rows(&w.frame, j, g, peers, peers.last().map_or(0, |p| p.1));
    let [start, end] = &w.range_offsets;
    if start.is_none() && end.is_none() {
        return (lo, hi);
    }
    let (desc, nulls_first) = w.order_by.first().map_or((false, false), |o| (o.1, o.2));
    let preceding = |b: crate::sql::FrameBound| matches!(b, crate::sql::FrameBound::Preceding(_));
    // The rows before the first whose key is at or past `v ± x` in the window's order
    // (`past`: after the last at or before it).
    let cut = |x: &Value, back: bool, past: bool| -> usize {
        let v = &keys[j];
        if v.is_null() {
            return if past { peers[g].1 } else { peers[g].0 };
        }
        // Moving back in the window's order subtracts for ASC and adds for DESC.
        let op = if back != desc {
            crate::sql::BinaryOp::Sub
        } else {
            crate::sql::BinaryOp::Add
        };
        // A date moves by an interval as a timestamp (PostgreSQL's in_range for date).
        let base = match v {
            Value::Date(_) => crate::expr::cast_value(v.clone(), DataType::Timestamp).ok(),
            v => Some(v.clone()),
        };
        let edge = base.and_then(|b| crate::expr::arith(op, b, x.clone()).ok());
        keys.partition_point(|k| {
            let o = match (&edge, k.is_null()) {
                (_, true) => sort_cmp(k, v, desc, nulls_first),
                // Past the type's range: beyond every key on that side.
                (None, false) if back => Ordering::Greater,
                (None, false) => Ordering::Less,
                (Some(e), false) => sort_cmp(k, e, desc, nulls_first),
            };
            if past {
                o != Ordering::Greater
            } else {
                o == Ordering::Less
            }
        })
    };
    let lo = match start {
        Some(x) => cut(x, preceding(w.frame.start), false),
        None => lo,
    };
    let hi = match end {
        Some(x) => cut(x, preceding(w.frame.end), true),
        None => hi,
    };
    (lo.min(hi), hi)
}

/// `ntile(buckets)` at row `j` (0-based) of a partition of `n` rows: the rows cut into
/// `buckets` runs, the first `n % buckets` of them one row longer. Errors: 22014 for a
/// count below 1.
fn ntile(buckets: &Value, j: usize, n: usize) -> Result<Value> {
    let b = match buckets {
        Value::Null => return Ok(Value::Null),
        v => int_of(v).unwrap_or(0),
    };
    if b < 1 {
        return Err(Error::InvalidArgumentForNtile(
            "argument of ntile must be greater than zero".into(),
        ));
    }
    let (n, j, b) = (n as i64, j as i64, b.min(n.max(1) as i64));
    let (small, big) = (n / b, n % b);
    // The first `big` buckets hold `small + 1` rows.
    let bucket = if j < big * (small + 1) {
        j / (small + 1)
    } else {
        big + (j - big * (small + 1)) / small.max(1)
    };
    Ok(Value::Int4(bucket as i32 + 1))
}

/// The row number of `nth_value(x, n)`: `None` for NULL. Errors: 22016 below 1.
fn nth_of(n: &Value) -> Result<Option<usize>> {
    match n {
        Value::Null => Ok(None),
        v => match int_of(v) {
            Some(k) if k >= 1 => Ok(Some(k as usize)),
            _ => Err(Error::InvalidArgumentForNthValue(
                "argument of nth_value must be greater than zero".into(),
            )),
        },
    }
}

/// Aggregate `a` over its groups' values (each the call's arguments, then its ORDER BY
/// keys): a partial state of [`crate::agg`] for the kernels every executor shares, the
/// values in order for `string_agg` and `array_agg`.
///
/// Errors: the aggregate's; 57014 when `cancel` sees its flag.
fn aggregate(cancel: &CancelCheck, a: &RelAgg, mut vals: Vec<Vec<Value>>) -> Result<Value> {
    use crate::sql::functions::AggKernel;
    cancel.check_n(vals.len())?;
    let array = |k: usize| a.arrays.get(k).copied().flatten();
    if a.distinct && a.order_by.is_empty() {
        // PostgreSQL sorts a DISTINCT aggregate's input by its arguments (NULLs last).
        cancel.sort_by(&mut vals, |x, y| {
            (x.iter().zip(y).enumerate())
                .map(|(k, (p, q))| sort_cmp_typed(p, q, false, false, array(k)))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        })?;
    }
    if a.distinct && a.arrays.iter().any(Option::is_some) {
        // Arrays equal element by element are one value (`{1.0}` and `{1.00}`).
        dedupe(&mut vals, &a.arrays);
    }
    if !a.order_by.is_empty() {
        let n = a.args.len();
        cancel.sort_by(&mut vals, |x, y| {
            for (k, (_, desc, nulls_first)) in a.order_by.iter().enumerate() {
                let o = sort_cmp_typed(&x[n + k], &y[n + k], *desc, *nulls_first, array(n + k));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        })?;
        for v in &mut vals {
            v.truncate(n);
        }
    }
    let first = |v: &Vec<Value>| v.first().cloned().unwrap_or(Value::Null);
    let func = match a.kernel {
        AggKernel::Partial(func) => func,
        AggKernel::StringAgg => {
            if a.distinct {
                dedupe(&mut vals, &[]);
            }
            return Ok(string_agg(&vals));
        }
        AggKernel::Regr(f) => {
            for v in &mut vals {
                for x in v.iter_mut().take(2) {
                    *x = cast_value(std::mem::replace(x, Value::Null), DataType::Float8)?;
                }
            }
            if a.distinct {
                dedupe(&mut vals, &[]);
            }
            return crate::agg::regr::aggregate(f, &vals);
        }
        AggKernel::OrderedSet(f) => {
            let key = f.direct_args();
            let array = matches!(
                a.ty,
                crate::sql::RType::Catalog(crate::types::CatalogType::Array(_))
            );
            for v in &mut vals {
                if key == 1 && !array {
                    v[0] = cast_value(std::mem::replace(&mut v[0], Value::Null), DataType::Float8)?;
                }
                v[key] = cast_value(std::mem::replace(&mut v[key], Value::Null), a.arg_type)?;
            }
            return crate::agg::ordered::aggregate(f, &vals);
        }
        AggKernel::ArrayAgg => {
            if a.distinct {
                dedupe(&mut vals, &[]);
            }
            return Ok(if vals.is_empty() {
                Value::Null
            } else {
                Value::Text(format_array(&vals.iter().map(first).collect::<Vec<_>>()).into())
            });
        }
    };
    let func = match (func, a.args.is_empty()) {
        (crate::sql::AggFunc::Count, true) => crate::sql::AggFunc::CountStar,
        (f, _) => f,
    };
    if let (Some(e), crate::sql::AggFunc::Min | crate::sql::AggFunc::Max) =
        (crate::sql::array_elem(a.ty), func)
    {
        return Ok(array_extreme(e, func == crate::sql::AggFunc::Max, &vals));
    }
    let spec = crate::agg::AggSpec::new(func, a.arg_type, a.distinct);
    let mut acc = spec.init();
    for v in &vals {
        let x = if func == crate::sql::AggFunc::CountStar {
            Value::Bool(true)
        } else {
            cast_value(first(v), a.arg_type)?
        };
        acc.update(&spec, &x)?;
    }
    acc.evaluate(&spec)
}

/// `min` (`max: false`) or `max` of arrays of `e` (the first argument of each of
/// `vals`), element by element as PostgreSQL's `array_smaller`/`array_larger`; NULL
/// arrays are skipped, NULL when none is left.
fn array_extreme(e: ElemType, max: bool, vals: &[Vec<Value>]) -> Value {
    let mut best: Option<&Value> = None;
    for v in vals
        .iter()
        .filter_map(|v| v.first())
        .filter(|v| !v.is_null())
    {
        let better = best.is_none_or(|b| {
            let o = array_order(e, v, b);
            if max {
                o == Ordering::Greater
            } else {
                o == Ordering::Less
            }
        });
        if better {
            best = Some(v);
        }
    }
    best.cloned().unwrap_or(Value::Null)
}

/// `string_agg(value, delimiter)` over `vals` in order: NULL values are skipped, each
/// delimiter is the one given with the value after it.
fn string_agg(vals: &[Vec<Value>]) -> Value {
    let mut out = String::new();
    let mut any = false;
    for v in vals {
        let x = v.first().cloned().unwrap_or(Value::Null);
        if x.is_null() {
            continue;
        }
        if any {
            out.push_str(&text_of(v.get(1).unwrap_or(&Value::Null)));
        }
        out.push_str(&text_of(&x));
        any = true;
    }
    if any {
        Value::Text(out.into())
    } else {
        Value::Null
    }
}

/// PostgreSQL's array text form of `vals`: `{a,"b c",NULL}`.
pub(crate) fn format_array(vals: &[Value]) -> String {
    let mut out = String::from("{");
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if v.is_null() {
            out.push_str("NULL");
            continue;
        }
        let s = text_of(v);
        let plain = !s.is_empty()
            && !s.eq_ignore_ascii_case("null")
            && !s
                .chars()
                .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
        if plain {
            out.push_str(&s);
        } else {
            out.push('"');
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        }
    }
    out.push('}');
    out
}

/// Parse a one-dimensional array's text form (`{a,"b c",NULL}`); `None` elements are NULL.
/// Errors: 22P02 for a malformed literal (no braces, an empty or unterminated element,
/// a stray quote or brace, text after a quoted element); 0A000 for a nested
/// (multidimensional) array.
pub(crate) fn parse_array(s: &str) -> Result<Vec<Option<String>>> {
    let s = s.trim();
    let bad = || Error::InvalidTextRepresentation(format!("malformed array literal: \"{s}\""));
    let inner = s
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .ok_or_else(bad)?;
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Ok(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        let quoted = chars.peek() == Some(&'"');
        if quoted {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => item.push(chars.next().ok_or_else(bad)?),
                    Some('"') => break,
                    Some(c) => item.push(c),
                    None => return Err(bad()),
                }
            }
            // Only blanks may follow the closing quote.
            while let Some(&c) = chars.peek() {
                match c {
                    ',' => break,
                    c if c.is_whitespace() => {
                        chars.next();
                    }
                    _ => return Err(bad()),
                }
            }
        } else {
            if chars.peek() == Some(&'{') {
                return Err(Error::FeatureNotSupported(
                    "multidimensional arrays are not supported".into(),
                ));
            }
            // Escaped characters are kept even when blank; trailing blanks are not.
            let mut kept = 0;
            while let Some(&c) = chars.peek() {
                match c {
                    ',' => break,
                    '{' | '}' | '"' => return Err(bad()),
                    '\\' => {
                        chars.next();
                        item.push(chars.next().ok_or_else(bad)?);
                        kept = item.len();
                    }
                    c => {
                        chars.next();
                        item.push(c);
                        if !c.is_whitespace() {
                            kept = item.len();
                        }
                    }
                }
            }
            item.truncate(kept);
            if item.is_empty() {
                return Err(bad());
            }
        }
        out.push((quoted || !item.eq_ignore_ascii_case("null")).then_some(item));
        if chars.next().is_none() {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::bind_relational as parse;

    struct P;
    impl RelationProvider for P {
        fn relation(&self, _: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
            let i = |v: i32| Value::Int4(v);
            let t = |s: &str| Value::Text(s.into());
            match name {
                "l" => Some((
                    vec![
                        Column::new("k", DataType::Int4),
                        Column::new("a", DataType::Text),
                    ],
                    vec![
                        vec![i(1), t("one")],
                        vec![i(2), t("two")],
                        vec![Value::Null, t("null")],
                    ],
                )),
                "r" => Some((
                    vec![
                        Column::new("k", DataType::Int4),
                        Column::new("b", DataType::Text),
                    ],
                    vec![
                        vec![i(2), t("deux")],
                        vec![i(3), t("trois")],
                        vec![Value::Null, t("nul")],
                    ],
                )),
                // 500 rows: (n, n % 7, text of n), for joins whose cross product would
                // exceed the value budget.
                "big" => Some((
                    vec![
                        Column::new("n", DataType::Int8),
                        Column::new("m", DataType::Int4),
                        Column::new("s", DataType::Text),
                    ],
                    (0..500)
                        .map(|n| vec![Value::Int8(n), i((n % 7) as i32), t(&n.to_string())])
                        .collect(),
                )),
                _ => None,
            }
        }
    }

    fn rows(sql: &str) -> Vec<Vec<String>> {
        let q = parse(sql, &P).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let (_, rows) = run(&q, &P, &[], None).unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter()
            .map(|r| {
                r.iter()
                    .map(|v| {
                        if v.is_null() {
                            "NULL".into()
                        } else {
                            text_of(v)
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn flat(sql: &str) -> Vec<String> {
        rows(sql).into_iter().map(|r| r.join("|")).collect()
    }

    /// Regression test for psql's `\d index`, which failed with 54000: its query joins
    /// four catalogs with commas and filters in WHERE, so evaluated as written it built the
    /// cross product first. Three copies of a 500-row relation are 125 million rows; with
    /// WHERE's conjuncts pushed to the scans and joins, and the equalities hashed, it is
    /// cheap.
    /// `array_agg(x ORDER BY k)`: the ORDER BY inside the call was ignored, so
    /// SQLAlchemy's reflection of a UNIQUE (city, name) constraint, which orders the
    /// key's columns by their subscripts this way, listed them in table order.
    #[test]
    fn ordered_aggregates_take_their_values_in_order() {
        assert_eq!(
            flat(
                "SELECT array_agg(a ORDER BY k DESC), string_agg(a, ',' ORDER BY k), \
                        array_agg(a ORDER BY k NULLS FIRST) FROM l"
            ),
            // l's third row has k NULL and the text 'null', which an array quotes.
            vec!["{\"null\",two,one}|one,two,null|{\"null\",one,two}"]
        );
        assert_eq!(
            flat(
                "SELECT m, array_agg(n ORDER BY n DESC) FROM big WHERE n < 9 GROUP BY m ORDER BY m"
            ),
            vec!["0|{7,0}", "1|{8,1}", "2|{2}", "3|{3}", "4|{4}", "5|{5}", "6|{6}"]
        );
    }

    #[test]
    fn comma_joins_filter_early_and_hash_their_equalities() {
        assert_eq!(
            flat(
                "SELECT a.n, b.s, c.m FROM big a, big b, big c \
                 WHERE a.n = b.n AND b.s = c.s AND a.n < 10 AND c.m = 3 ORDER BY 1"
            ),
            vec!["3|3|3"]
        );
        // Text against a number has no operator, as in PostgreSQL (42883).
        let e = parse(
            "SELECT a.n FROM big a JOIN big b ON a.s = b.n WHERE b.m = 4 AND b.n < 12",
            &P,
        )
        .unwrap_err();
        assert!(
            matches!(e.kind(), Error::UndefinedFunction(m) if m.contains("text = bigint")),
            "{e}"
        );
        // A WHERE conjunct over the nullable side of a LEFT JOIN stays above the join
        // (it removes the padded rows); one of its ON clause filters that side first.
        assert_eq!(
            flat("SELECT l.k, r.b FROM l LEFT JOIN r ON l.k = r.k WHERE r.b IS NULL"),
            vec!["1|NULL", "NULL|NULL"]
        );
        assert_eq!(
            flat("SELECT l.k, r.b FROM l LEFT JOIN r ON l.k = r.k AND r.b = 'x' ORDER BY 1"),
            vec!["1|NULL", "2|NULL", "NULL|NULL"]
        );
        assert_eq!(
            flat("SELECT l.a, r.b FROM l RIGHT JOIN r ON l.k = r.k AND l.a = 'two' ORDER BY 2"),
            vec!["two|deux", "NULL|nul", "NULL|trois"]
        );
    }

    /// pgjdbc's getPrimaryKeys and getIndexInfo select `(_pg_expandarray(indkey)).n` and
    /// filter on `(keys).x` a level up: set-returning calls of a select list run in
    /// lockstep (the shorter padded with NULL), their records print as `(x,n)`, and a
    /// field of one is typed.
    #[test]
    fn select_list_set_functions_and_record_fields() {
        assert_eq!(
            flat(
                "SELECT information_schema._pg_expandarray('3 1'), \
                 (information_schema._pg_expandarray('3 1')).n, generate_series(1, 3)"
            ),
            vec!["(3,1)|1|1", "(1,2)|2|2", "NULL|NULL|3"]
        );
        assert_eq!(
            flat(
                "SELECT r.k FROM (SELECT l.k, information_schema._pg_expandarray('{2,1}') AS e \
                 FROM l) r WHERE r.k = (r.e).x AND (r.e).n + 0 > 0 ORDER BY (r.e).n"
            ),
            vec!["2", "1"]
        );
        // SQLAlchemy's key reflection: an int2vector's elements with their subscripts,
        // which start at 0 (an array's start at 1).
        assert_eq!(
            flat("SELECT unnest('3 1'), generate_subscripts('3 1', 1), generate_subscripts('{a}', 1)"),
            vec!["3|0|1", "1|1|NULL"]
        );
        let q = parse("SELECT (information_schema._pg_expandarray('1')).n", &P).unwrap();
        assert_eq!(q.columns[0].0, "n");
        assert_eq!(q.columns[0].1, RType::Base(DataType::Int4));
        let e = parse("SELECT (information_schema._pg_expandarray('1')).y", &P).unwrap_err();
        assert_eq!(
            e.to_string(),
            Error::UndefinedColumn("could not identify column \"y\" in record data type".into())
                .to_string()
        );
    }

    /// Set-returning functions give values of the types they are declared to return, in
    /// the select list and in FROM: an int2vector's elements are smallints (SQLAlchemy's
    /// key reflection compares them with `pg_attribute.attnum`), an oidvector's oids, a
    /// series over integers integers.
    #[test]
    fn set_functions_return_their_declared_types() {
        let values = |sql: &str| {
            let q = parse(sql, &P).unwrap_or_else(|e| panic!("{sql}: {e}"));
            run(&q, &P, &[], None)
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .1
        };
        let col = |vs: &[Value]| vs.iter().map(|v| vec![v.clone()]).collect::<Vec<_>>();
        let two = col(&[Value::Int2(3), Value::Int2(1)]);
        assert_eq!(values("SELECT unnest('3 1'::int2vector)"), two);
        assert_eq!(values("SELECT k FROM unnest('3 1'::int2vector) AS k"), two);
        assert_eq!(
            values("SELECT unnest('{7,8}'::int4[])"),
            col(&[Value::Int4(7), Value::Int4(8)])
        );
        assert_eq!(
            values("SELECT g FROM generate_series(1, 2) AS g"),
            col(&[Value::Int4(1), Value::Int4(2)])
        );
        assert_eq!(
            values("SELECT generate_series(1, 2)"),
            col(&[Value::Int4(1), Value::Int4(2)])
        );
        assert_eq!(
            flat("SELECT k FROM unnest('3 1'::int2vector) AS k WHERE k = 1::smallint"),
            vec!["1"]
        );
    }

    /// OR is the expression binder's: three-valued, its operands boolean (42804
    /// otherwise); a row comparison's OR of the parts evaluates the same way.
    #[test]
    fn or_is_three_valued_and_typed() {
        assert_eq!(
            flat("SELECT NULL::boolean OR true, NULL::boolean OR false, false OR false"),
            vec!["t|NULL|f"]
        );
        assert_eq!(
            flat("SELECT (1, 2) <> (1, 3), (1, 2) < (1, NULL), (1, 2) > (0, NULL)"),
            vec!["t|NULL|t"]
        );
        // Each part of a row comparison, and OPERATOR(pg_catalog.=), is typed as a
        // comparison of two values is.
        assert_eq!(
            flat("SELECT 1 OPERATOR(pg_catalog.=) 1, (1, 'x') = (1, 'x'), (2, 'b') > (2, 'a')"),
            vec!["t|t|t"]
        );
        let e = parse("SELECT (1, 'a'::text) = (1, 2)", &P).unwrap_err();
        assert!(
            matches!(e.kind(), Error::UndefinedFunction(m) if m.contains("text = integer")),
            "{e}"
        );
        let e = parse("SELECT 1 OR true", &P).unwrap_err();
        assert!(
            matches!(e.kind(), Error::DatatypeMismatch(m) if m.contains("argument of OR")),
            "{e}"
        );
    }

    /// AND is typed by the expression binder (42804 for a non-boolean operand) and kept
    /// as a conjunction: three-valued, and a join's key equality under it still matches.
    #[test]
    fn and_is_three_valued_and_typed() {
        assert_eq!(
            flat("SELECT NULL::boolean AND true, NULL::boolean AND false, true AND 't'"),
            vec!["NULL|f|t"]
        );
        assert_eq!(
            flat("SELECT l.a, r.b FROM l JOIN r ON l.k = r.k AND r.b <> 'x' AND (l.a = 'two')"),
            vec!["two|deux"]
        );
        assert_eq!(
            flat("SELECT a FROM l WHERE k > 0 AND (a = 'one' OR a = 'two') ORDER BY a"),
            vec!["one", "two"]
        );
        for sql in ["SELECT 1 AND true", "SELECT a FROM l WHERE k > 0 AND a"] {
            let e = parse(sql, &P).unwrap_err();
            assert!(
                matches!(e.kind(), Error::DatatypeMismatch(m) if m.contains("argument of AND")),
                "{sql}: {e}"
            );
        }
    }

    /// COLLATE is the expression binder's: the operand as it is (a catalog name stays a
    /// name), 42804 for a non-collatable type.
    #[test]
    fn collate_is_typed_by_the_expression_binder() {
        assert_eq!(
            flat("SELECT a FROM l WHERE a COLLATE \"C\" = 'two' COLLATE pg_catalog.default"),
            vec!["two"]
        );
        let e = parse("SELECT k COLLATE \"C\" FROM l", &P).unwrap_err();
        assert!(
            matches!(e.kind(), Error::DatatypeMismatch(m) if m.contains("not supported by type integer")),
            "{e}"
        );
    }

    /// TRIM and LIKE ... ESCAPE are the expression binder's: btrim/ltrim/rtrim of text,
    /// the escape character rewritten for LIKE, 42883 for a non-text operand.
    #[test]
    fn trim_and_like_escape_are_bound_by_the_expression_binder() {
        assert_eq!(
            flat(
                "SELECT trim(both 'o' from a), trim(trailing a, 'e'), a LIKE 'o#%' ESCAPE '#', \
                 a LIKE 'tw_' ESCAPE '' FROM l ORDER BY k"
            ),
            vec!["ne|on|f|f", "tw|two|f|t", "null|null|f|f"]
        );
        let e = parse("SELECT trim(k) FROM l", &P).unwrap_err();
        assert!(
            matches!(e.kind(), Error::UndefinedFunction(m) if m == "function btrim(integer) does not exist"),
            "{e}"
        );
    }

    #[test]
    fn joins_pad_and_never_match_nulls() {
        assert_eq!(
            flat("SELECT l.a, r.b FROM l JOIN r ON l.k = r.k"),
            vec!["two|deux"]
        );
        assert_eq!(
            flat("SELECT l.a, r.b FROM l LEFT JOIN r ON l.k = r.k ORDER BY l.a"),
            vec!["null|NULL", "one|NULL", "two|deux"]
        );
        assert_eq!(
            flat("SELECT l.a, r.b FROM l RIGHT JOIN r ON l.k = r.k ORDER BY r.b"),
            vec!["two|deux", "NULL|nul", "NULL|trois"]
        );
        assert_eq!(
            flat("SELECT coalesce(l.a, '-'), coalesce(r.b, '-') FROM l FULL JOIN r USING (k) ORDER BY 1, 2"),
            vec!["-|nul", "-|trois", "null|-", "one|-", "two|deux"]
        );
        assert_eq!(flat("SELECT count(*) FROM l, r"), vec!["9"]);
        assert_eq!(
            flat("SELECT count(*) FROM l CROSS JOIN r WHERE l.k < r.k"),
            vec!["3"]
        );
    }

    #[test]
    fn correlated_subqueries() {
        assert_eq!(
            flat("SELECT a, (SELECT b FROM r WHERE r.k = l.k) FROM l ORDER BY a"),
            vec!["null|NULL", "one|NULL", "two|deux"]
        );
        assert_eq!(
            flat("SELECT a FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k > l.k) ORDER BY a"),
            vec!["one", "two"]
        );
        assert_eq!(
            flat("SELECT a FROM l WHERE k IN (SELECT k FROM r)"),
            vec!["two"]
        );
        // NOT IN over a set with a NULL is never true.
        assert!(flat("SELECT a FROM l WHERE k NOT IN (SELECT k FROM r)").is_empty());
        assert_eq!(
            flat("SELECT a FROM l WHERE k = ANY (ARRAY[1, 3]) ORDER BY 1"),
            vec!["one"]
        );
        assert_eq!(
            flat("SELECT a FROM l WHERE k = ANY ('{2,5}') ORDER BY 1"),
            vec!["two"]
        );
        assert_eq!(
            flat("SELECT array_to_string(ARRAY(SELECT b FROM r WHERE k IS NOT NULL ORDER BY b DESC), ',')"),
            vec!["trois,deux"]
        );
    }

    #[test]
    fn ctes_unions_grouping_and_order() {
        assert_eq!(
            flat("WITH x AS (SELECT k FROM l UNION SELECT k FROM r) SELECT count(*), count(k) FROM x"),
            vec!["4|3"]
        );
        assert_eq!(
            flat(
                "SELECT k FROM l UNION ALL SELECT k FROM r ORDER BY 1 NULLS FIRST LIMIT 3 OFFSET 1"
            ),
            vec!["NULL", "1", "2"]
        );
        assert_eq!(
            flat("SELECT k % 2 AS parity, count(*) FROM (SELECT k FROM l UNION ALL SELECT k FROM r) s WHERE k IS NOT NULL GROUP BY 1 HAVING min(k) > 1 ORDER BY parity"),
            vec!["0|2"]
        );
        assert_eq!(
            flat("SELECT DISTINCT k IS NULL FROM l ORDER BY 1"),
            vec!["f", "t"]
        );
        assert_eq!(
            flat("SELECT a FROM l ORDER BY k DESC"),
            vec!["null", "two", "one"]
        );
        assert_eq!(
            flat("SELECT a FROM l WHERE a ~ '^t' OR a OPERATOR(pg_catalog.~) 'n.$' COLLATE pg_catalog.default ORDER BY upper(a)"),
            vec!["one", "two"]
        );
        assert_eq!(
            flat("SELECT CASE WHEN k > 1 THEN 'big' ELSE 'small' END FROM l WHERE k IS NOT NULL ORDER BY k"),
            vec!["small", "big"]
        );
        assert_eq!(
            flat("SELECT sum(k), min(a), max(a), string_agg(a, '+') FROM l"),
            vec!["3|null|two|one+two+null"]
        );
    }

    #[test]
    fn recursive_ctes_run_until_a_round_adds_nothing() {
        assert_eq!(
            flat("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 4) SELECT string_agg(n::text, ',') FROM r"),
            vec!["1,2,3,4"]
        );
        // UNION drops rows seen before, so a cycle ends.
        assert_eq!(
            flat("WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT 3 - n FROM r) SELECT count(*) FROM r"),
            vec!["2"]
        );
        let q = parse(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM r) SELECT count(*) FROM r",
            &P,
        )
        .unwrap();
        let e = run(&q, &P, &[], None).unwrap_err();
        assert!(matches!(e, Error::ProgramLimitExceeded(_)), "{e}");
    }

    /// Binary-format clients decode a value by the type RowDescription announced, so each
    /// value must have its column's type.
    #[test]
    fn values_have_their_columns_types() {
        let q = parse(
            "SELECT sum(k), max(a), min(k), CASE WHEN k > 1 THEN k ELSE 0 END, k::text, ARRAY[k], 'x' FROM l GROUP BY k",
            &P,
        )
        .unwrap();
        let (cols, rows) = run(&q, &P, &[], None).unwrap();
        assert_eq!(
            cols.iter().map(|c| c.data_type).collect::<Vec<_>>(),
            vec![
                DataType::Int8,
                DataType::Text,
                DataType::Int4,
                DataType::Int4,
                DataType::Text,
                DataType::Text,
                DataType::Text
            ]
        );
        for r in rows {
            for (v, c) in r.iter().zip(&cols) {
                assert!(
                    v.is_null() || v.data_type() == Some(c.data_type),
                    "{v:?} in {c:?}"
                );
            }
        }
    }

    #[test]
    fn arrays_round_trip() {
        let vals = vec![
            Value::Text("a b".into()),
            Value::Null,
            Value::Text("c".into()),
        ];
        let s = format_array(&vals);
        assert_eq!(s, "{\"a b\",NULL,c}");
        assert_eq!(
            parse_array(&s).unwrap(),
            vec![Some("a b".to_string()), None, Some("c".to_string())]
        );
        assert!(parse_array("{}").unwrap().is_empty());
        assert_eq!(
            parse_array(r#"{ a b , "x" ,\ ,c\,d}"#).unwrap(),
            ["a b", "x", " ", "c,d"].map(|e| Some(e.to_string()))
        );
    }

    /// A subscript is any bigint a client writes; the extremes find no element.
    #[test]
    fn extreme_subscripts_are_null() {
        assert_eq!(
            flat(
                "SELECT (ARRAY['a','b'])[-9223372036854775808], (ARRAY['a','b'])[2], \
                        (ARRAY['a','b'])[9223372036854775807]"
            ),
            ["NULL|b|NULL"]
        );
    }

    #[test]
    fn malformed_array_literals_are_errors() {
        for bad in [
            "{1", "1}", "{1,,2}", "{1,}", "{,1}", "{\"a\"b}", "{a\"b}", "{a{b}", "{a}b}", "{\"a",
            "{a\\}",
        ] {
            let e = parse_array(bad).unwrap_err();
            assert!(
                matches!(e, Error::InvalidTextRepresentation(_)),
                "{bad}: {e:?}"
            );
        }
        for nested in ["{{1,2},{3,4}}", "{{}}", "{ {1}}"] {
            let e = parse_array(nested).unwrap_err();
            assert!(
                matches!(e, Error::FeatureNotSupported(_)),
                "{nested}: {e:?}"
            );
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::exec::relational::run;
        use crate::sql::{bind_relational as parse, RelationProvider};
        use crate::types::{Column, DataType, Value};
        struct P;
        impl RelationProvider for P {
            fn relation(&self, _: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
                (name == "t").then(|| {
                    (
                        vec![Column::new("a", DataType::Int4)],
                        vec![vec![Value::Int4(1)], vec![Value::Int4(2)]],
                    )
                })
            }
        }
        let q = parse("SELECT count(*) FROM t a JOIN t b ON a.a < b.a", &P).unwrap();
        let (_, rows) = run(&q, &P, &[], None).unwrap();
        assert_eq!(rows, vec![vec![Value::Int8(1)]]);
    }
}
