//! Predicate pushdown for finite relational queries: the one optimizer step of
//! [`super::relational`].
//!
//! Clients' catalog queries (psql's `\d index`, pgjdbc's metadata calls) join four or five
//! catalogs with commas and put every condition in WHERE. Evaluated as written, that is a
//! cross product of the catalogs before the first condition runs, which the statement's
//! value budget refuses. [`push_down`] splits WHERE into its AND-ed conjuncts and moves each
//! to the lowest place in the FROM tree that sees every column it reads: a conjunct of one
//! relation becomes a [`RelFrom::Filter`] over it, a conjunct of both sides of a join goes
//! into the join's condition, where [`crate::exec::relational`] turns equalities into a
//! hash join. What no join can take stays in WHERE.
//!
//! Design decision: only conjuncts whose meaning does not depend on where they run move. A
//! conjunct with a subquery (whose outer references would need renumbering) or a window
//! function stays put, and a conjunct moves into the nullable side of an outer join only
//! when it came from that join's own ON clause, as PostgreSQL's planner does.

use super::relational::{JoinKind, RExpr, RelFrom};

/// Push WHERE's conjuncts (`filter`, over the FROM row) into `from`; returns the FROM tree
/// and what is left of WHERE.
pub(crate) fn push_down(
    from: Option<RelFrom>,
    filter: Option<RExpr>,
) -> (Option<RelFrom>, Option<RExpr>) {
    let Some(from) = from else {
        return (None, filter);
    };
    let mut from = push_tree(from);
    let Some(filter) = filter else {
        return (Some(from), None);
    };
    let mut rest = Vec::new();
    for c in conjuncts(filter) {
        match cols(&c) {
            Some(used) => {
                if let Err(c) = place(&mut from, c, &used) {
                    rest.push(c);
                }
            }
            None => rest.push(c),
        }
    }
    (Some(from), and_of(rest))
}

/// Push the ON conditions of the joins inside `f` down the same way.
fn push_tree(mut f: RelFrom) -> RelFrom {
    if let RelFrom::Join {
        kind,
        left,
        right,
        on,
        left_width,
        right_width,
        ..
    } = &mut f
    {
        **left = push_tree(std::mem::replace(left.as_mut(), RelFrom::Cte(0)));
        **right = push_tree(std::mem::replace(right.as_mut(), RelFrom::Cte(0)));
        if let Some(cond) = on.take() {
            let (lw, rw) = (*left_width, *right_width);
            let mut keep = Vec::new();
            for c in conjuncts(cond) {
                let used = cols(&c);
                // An ON conjunct of one side filters that side's rows before matching,
                // except on a side the join preserves (its unmatched rows are padded).
                let into_left = matches!(kind, JoinKind::Inner | JoinKind::Right);
                let into_right = matches!(kind, JoinKind::Inner | JoinKind::Left);
                match used {
                    Some(u) if into_left && !u.is_empty() && u.iter().all(|&i| i < lw) => {
                        if let Err(c) = place(left, c, &u) {
                            keep.push(c);
                        }
                    }
                    Some(u)
                        if into_right
                            && !u.is_empty()
                            && u.iter().all(|&i| i >= lw && i < lw + rw) =>
                    {
                        let u: Vec<usize> = u.iter().map(|i| i - lw).collect();
                        if let Err(c) = place(right, shift(&c, lw), &u) {
                            keep.push(shift_back(&c, lw));
                        }
                    }
                    _ => keep.push(c),
                }
            }
            *on = and_of(keep);
        }
    }
    f
}

/// Put conjunct `c` (reading row columns `used` of `from`) as low as it can go in `from`;
/// gives it back when `from` cannot take it.
fn place(from: &mut RelFrom, c: RExpr, used: &[usize]) -> Result<(), RExpr> {
    if let RelFrom::Join {
        kind,
        left,
        right,
        on,
        left_width,
        ..
    } = from
    {
        {
            let lw = *left_width;
            let all_left = used.iter().all(|&i| i < lw);
            let all_right = used.iter().all(|&i| i >= lw);
            // A WHERE conjunct may filter a preserved side before the join (its rows and
            // padding are kept or dropped alike), never the nullable side.
            if all_left && matches!(kind, JoinKind::Inner | JoinKind::Left) {
                return place(left, c, used);
            }
            if all_right && matches!(kind, JoinKind::Inner | JoinKind::Right) {
                let u: Vec<usize> = used.iter().map(|i| i - lw).collect();
                return place(right, shift(&c, lw), &u).map_err(|c| shift_back(&c, lw));
            }
            if *kind == JoinKind::Inner {
                *on = and_of(on.take().into_iter().chain([c]).collect());
                return Ok(());
            }
            return Err(c);
        }
    }
    let inner = std::mem::replace(from, RelFrom::Cte(0));
    *from = match inner {
        RelFrom::Filter { input, cond } => RelFrom::Filter {
            input,
            cond: and_of(vec![cond, c]).expect("two conjuncts"),
        },
        other => RelFrom::Filter {
            input: Box::new(other),
            cond: c,
        },
    };
    Ok(())
}

/// The AND-ed parts of `e`.
fn conjuncts(e: RExpr) -> Vec<RExpr> {
    match e {
        RExpr::And(parts) => parts.into_iter().flat_map(conjuncts).collect(),
        e => vec![e],
    }
}

/// AND of `parts`; `None` when there are none.
fn and_of(mut parts: Vec<RExpr>) -> Option<RExpr> {
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(RExpr::And(parts)),
    }
}

/// The columns of this level's row that `e` reads, or `None` when `e` may not move
/// (subqueries, window functions).
pub(crate) fn cols(e: &RExpr) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    collect(e, &mut out).then_some(out)
}

fn collect(e: &RExpr, out: &mut Vec<usize>) -> bool {
    let all = |es: &[RExpr], out: &mut Vec<usize>| es.iter().all(|e| collect(e, out));
    match e {
        RExpr::Col { up: 0, idx } => {
            out.push(*idx);
            true
        }
        RExpr::Col { .. } | RExpr::Lit(_) | RExpr::Param(_) => true,
        RExpr::Template { args, .. } | RExpr::Func(_, args) | RExpr::ArrayFunc(_, _, args) => {
            all(args, out)
        }
        RExpr::And(es) | RExpr::Array(es) => all(es, out),
        RExpr::Cmp { left, right, .. }
        | RExpr::Subscript(left, right)
        | RExpr::ArrayConcat(left, right)
        | RExpr::AnyArray {
            left, array: right, ..
        } => collect(left, out) && collect(right, out),
        RExpr::Cast(e, _) => collect(e, out),
        RExpr::AnySub { .. }
        | RExpr::Exists(..)
        | RExpr::ScalarSub(_)
        | RExpr::ArraySub(_)
        | RExpr::Window(_)
        | RExpr::SetFunc(_) => false,
    }
}

/// `e` with this level's column indices lowered by `by` (for a join's right input).
fn shift(e: &RExpr, by: usize) -> RExpr {
    map_cols(e, &|i| i - by)
}

/// The inverse of [`shift`].
fn shift_back(e: &RExpr, by: usize) -> RExpr {
    map_cols(e, &|i| i + by)
}

/// `e` with `f` applied to this level's column indices. Only for expressions [`cols`]
/// accepts.
pub(crate) fn map_cols(e: &RExpr, f: &dyn Fn(usize) -> usize) -> RExpr {
    let m = |e: &RExpr| Box::new(map_cols(e, f));
    let ms = |es: &[RExpr]| es.iter().map(|e| map_cols(e, f)).collect::<Vec<_>>();
    match e {
        RExpr::Col { up: 0, idx } => RExpr::Col {
            up: 0,
            idx: f(*idx),
        },
        RExpr::Template { expr, args } => RExpr::Template {
            expr: expr.clone(),
            args: ms(args),
        },
        RExpr::Func(n, args) => RExpr::Func(n.clone(), ms(args)),
        RExpr::ArrayFunc(n, t, args) => RExpr::ArrayFunc(n.clone(), *t, ms(args)),
        RExpr::And(es) => RExpr::And(ms(es)),
        RExpr::Array(es) => RExpr::Array(ms(es)),
        RExpr::Cmp {
            op,
            arrays,
            left,
            right,
        } => RExpr::Cmp {
            op: *op,
            arrays: *arrays,
            left: m(left),
            right: m(right),
        },
        RExpr::Subscript(a, b) => RExpr::Subscript(m(a), m(b)),
        RExpr::ArrayConcat(a, b) => RExpr::ArrayConcat(m(a), m(b)),
        RExpr::AnyArray {
            left,
            op,
            array,
            all,
        } => RExpr::AnyArray {
            left: m(left),
            op: *op,
            array: m(array),
            all: *all,
        },
        RExpr::Cast(e, t) => RExpr::Cast(m(e), *t),
        other => other.clone(),
    }
}
