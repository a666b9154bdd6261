//! Finite queries: system views and SELECT without FROM, computed in one pass.

use std::sync::atomic::AtomicBool;

use super::cancel::CancelCheck;
use super::group::{GroupDict, GroupTable, KeyHasher};
use super::query::compare_sort_keys;
use crate::agg::AggSpec;
use crate::error::Result;
use crate::expr::{eval, EvalContext, SessionInfo};
use crate::sql::Query;
use crate::types::Value;

/// Run a finite `query` over `rows` (the input rows of its source): WHERE, GROUP BY and
/// aggregates over all rows as one instance, HAVING, projection, ORDER BY, OFFSET, LIMIT.
///
/// `session` answers `current_user`, `current_setting(...)` and friends. Errors: the
/// expressions'; 57014 ([`crate::error::Error::QueryCanceled`]) soon after `cancel` turns
/// `true` (`None`: never).
pub(crate) fn run_finite(
    query: &Query,
    rows: Vec<Vec<Value>>,
    params: &[Value],
    session: Option<&dyn SessionInfo>,
    cancel: Option<&AtomicBool>,
) -> Result<Vec<Vec<Value>>> {
    let cancel = CancelCheck::new(cancel);
    let now_us = crate::time::now_us();
    let mut kept = Vec::new();
    for row in rows {
        cancel.check()?;
        if let Some(f) = &query.filter {
            if !matches!(
                eval(f, &context(&row, params, session, now_us))?,
                Value::Bool(true)
            ) {
                continue;
            }
        }
        kept.push(row);
    }
    let inputs: Vec<Vec<Value>> = match &query.aggregate {
        None => kept,
        Some(agg) => {
            let specs: Vec<AggSpec> = agg
                .calls
                .iter()
                .map(|c| AggSpec::new(c.func, c.arg_type, c.distinct))
                .collect();
            let hasher = KeyHasher::new();
            let mut dict = GroupDict::new(agg.group_by.len());
            let mut table = GroupTable::new();
            for row in &kept {
                cancel.check()?;
                let c = context(row, params, session, now_us);
                let key = agg
                    .group_by
                    .iter()
                    .map(|e| eval(e, &c))
                    .collect::<Result<Vec<_>>>()?;
                let args = agg
                    .calls
                    .iter()
                    .map(|call| {
                        call.arg
                            .as_ref()
                            .map_or(Ok(Value::Bool(true)), |e| eval(e, &c))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let gid = dict.intern(hasher.hash(&key), &key);
                let g = table.slot(gid, &specs, usize::MAX)?;
                table.update(g, &specs, &args)?;
            }
            let mut out = Vec::new();
            if table.is_empty() && agg.group_by.is_empty() {
                out.push(
                    specs
                        .iter()
                        .map(|s| s.init().evaluate(s))
                        .collect::<Result<Vec<_>>>()?,
                );
            }
            for g in 0..table.len() {
                let (key, accs) = table.group(g, specs.len());
                let mut row = dict.key(key).to_vec();
                for (a, s) in accs.iter().zip(&specs) {
                    row.push(a.evaluate(s)?);
                }
                out.push(row);
            }
            out
        }
    };
    let mut rows = Vec::new();
    for row in &inputs {
        cancel.check()?;
        let c = context(row, params, session, now_us);
        if let Some(h) = &query.having {
            if !matches!(eval(h, &c)?, Value::Bool(true)) {
                continue;
            }
        }
        let projected = query
            .projection
            .iter()
            .map(|e| eval(e, &c))
            .collect::<Result<Vec<_>>>()?;
        let keys = query
            .order_by
            .iter()
            .map(|k| eval(&k.expr, &c))
            .collect::<Result<Vec<_>>>()?;
        rows.push((projected, keys));
    }
    if !query.order_by.is_empty() {
        cancel.sort_by(&mut rows, |a, b| {
            compare_sort_keys(&query.order_by, &a.1, &b.1)
        })?;
    }
    let offset = query.offset.unwrap_or(0) as usize;
    let limit = query.limit.map_or(usize::MAX, |l| l as usize);
    Ok(rows
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(r, _)| r)
        .collect())
}

fn context<'a>(
    row: &'a [Value],
    params: &'a [Value],
    session: Option<&'a dyn SessionInfo>,
    now_us: i64,
) -> EvalContext<'a> {
    EvalContext {
        row,
        params,
        window: None,
        now_us,
        session,
        lazy: None,
    }
}
