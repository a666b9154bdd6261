//! `(start1, end1) OVERLAPS (start2, end2)` in the expression binder, typed as PostgreSQL 15
//! resolves its `overlaps` overloads: four values of one of `timestamptz`, `timestamp` or
//! `time` (a date is read as a timestamp), an end may be an interval (`(start, interval)` is
//! `(start, start + interval)`; a time of day ending a date/timestamp pair is one too),
//! unknown literals take the others' type.

use sqlparser::ast;

use super::*;

impl Binder<'_> {
    /// Bind `left OVERLAPS right`: boolean. Errors: 42601 for a row of other than two
    /// values, 42883 for types no overload takes (`(1, 2) OVERLAPS (3, 4)`, times beside
    /// timestamps), 42725 when every start is an unknown literal.
    pub(super) fn overlaps(
        &mut self,
        left: &ast::Expr,
        right: &ast::Expr,
        scope: &Scope,
    ) -> Result<Bound> {
        let mut ends: Vec<Bound> = Vec::with_capacity(4);
        for (side, e) in [("left", left), ("right", right)] {
            let ast::Expr::Tuple(pair) = e else {
                return Err(Error::Syntax("syntax error at or near \"OVERLAPS\"".into()));
            };
            let [start, end] = pair.as_slice() else {
                return Err(Error::Syntax(format!(
                    "wrong number of parameters on {side} side of OVERLAPS expression"
                )));
            };
            ends.push(self.expr(start, scope)?);
            ends.push(self.expr(end, scope)?);
        }
        let shown: Vec<String> = ends.iter().map(|b| type_label(b.ty)).collect();
        let shown = shown.join(", ");
        let to = overlaps_type(&ends).map_err(|unique| {
            if unique {
                Error::UndefinedFunction(format!(
                    "function pg_catalog.overlaps({shown}) does not exist"
                ))
                .with_hint(
                    "No function matches the given name and argument types. You might need to add explicit type casts.",
                )
            } else {
                Error::AmbiguousFunction(format!(
                    "function pg_catalog.overlaps({shown}) is not unique"
                ))
                .with_hint(
                    "Could not choose a best candidate function. You might need to add explicit type casts.",
                )
            }
        })?;
        let mut args = Vec::with_capacity(4);
        let mut it = ends.into_iter();
        while let (Some(start), Some(end)) = (it.next(), it.next()) {
            let start = Bound::new(self.coerce(start, to, "OVERLAPS")?, to);
            // A time of day ending a date/timestamp pair is read as an interval (the
            // implicit cast PostgreSQL's resolution takes).
            let end = if end.ty == Some(DataType::Time) && to != DataType::Time {
                self.cast(end, DataType::Interval)?
            } else {
                end
            };
            let end = if end.ty == Some(DataType::Interval) {
                let sum = self.binary(BinaryOp::Add, start.clone(), end)?;
                self.coerce(sum, to, "OVERLAPS")?
            } else {
                self.coerce(end, to, "OVERLAPS")?
            };
            args.push(start.expr);
            args.push(end);
        }
        Ok(Bound::new(
            Expr::Func {
                func: ScalarFunc::Overlaps,
                args,
            },
            DataType::Bool,
        ))
    }
}

/// The type the four values of OVERLAPS are compared in. `Err(true)` when no overload
/// takes them, `Err(false)` when unknown literals leave the choice open.
fn overlaps_type(ends: &[Bound]) -> std::result::Result<DataType, bool> {
    use DataType as T;
    // Only an end (the 2nd or 4th value) may be an interval.
    if ends[0].ty == Some(T::Interval) || ends[2].ty == Some(T::Interval) {
        return Err(true);
    }
    let known: Vec<DataType> = ends
        .iter()
        .filter_map(|b| b.ty)
        .filter(|t| *t != T::Interval)
        .collect();
    if known.is_empty() {
        return Err(false);
    }
    if known.iter().all(|t| *t == T::Time) {
        return Ok(T::Time);
    }
    // Otherwise an end that is a time of day is an interval.
    let known: Vec<DataType> = ends
        .iter()
        .enumerate()
        .filter(|(i, b)| !(i % 2 == 1 && b.ty == Some(T::Time)))
        .filter_map(|(_, b)| b.ty)
        .filter(|t| *t != T::Interval)
        .collect();
    if !known
        .iter()
        .all(|t| matches!(t, T::Date | T::Timestamp | T::TimestampTz))
    {
        return Err(true);
    }
    Ok(if known.contains(&T::TimestampTz) {
        T::TimestampTz
    } else {
        T::Timestamp
    })
}
