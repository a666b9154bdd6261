//! Which plan builder takes a finite SELECT, decided from what the statement is.
//!
//! A SELECT that reads a stream is continuous and goes to the streaming plan; one that
//! reads a catalog relation, or has a shape only the relational plan has (joins,
//! subqueries, WITH, set operations, DISTINCT, VALUES), goes to the relational plan
//! ([`crate::sql::relational`]'s route). The rest — one stored table, a system view, or
//! no FROM — goes to the streaming plan's finite path when every expression is one its
//! binder has (the operators, casts to column types, the scalar functions and partial
//! aggregates of the function table, window functions of a window clause), and to the
//! relational plan otherwise (`pg_typeof`, `FILTER`, `string_agg`, `OVER`, arrays,
//! casts to `regclass`, ...). The decision is made once, before binding: a statement is
//! bound by one binder and its error is that binder's.

use sqlparser::ast;

use super::*;

/// True when the streaming binder has every construct of `q`'s expressions.
pub(super) fn expressible(q: &ast::Query) -> bool {
    let ast::SetExpr::Select(sel) = &*q.body else {
        return false;
    };
    let items = sel.projection.iter().all(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            expr_ok(e)
        }
        ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => true,
        _ => false,
    });
    let group = match &sel.group_by {
        ast::GroupByExpr::Expressions(v, _) => v.iter().all(expr_ok),
        ast::GroupByExpr::All(_) => true,
    };
    let order = q.order_by.as_ref().is_none_or(|ob| match &ob.kind {
        ast::OrderByKind::Expressions(v) => v.iter().all(|o| expr_ok(&o.expr)),
        ast::OrderByKind::All(_) => true,
    });
    let limit = match &q.limit_clause {
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            limit.as_ref().is_none_or(row_count_ok)
                && offset.as_ref().is_none_or(|o| row_count_ok(&o.value))
        }
        _ => true,
    };
    // FETCH ... WITH TIES is the relational plan's, and so are column aliases in FROM.
    let ties = q.fetch.as_ref().is_some_and(|f| f.with_ties);
    let renames = sel.from.iter().any(|t| {
        matches!(&t.relation, ast::TableFactor::Table { alias: Some(a), .. } if !a.columns.is_empty())
    });
    items
        && !renames
        && group
        && order
        && limit
        && !ties
        && sel.selection.as_ref().is_none_or(expr_ok)
        && sel.having.as_ref().is_none_or(expr_ok)
}

/// LIMIT and OFFSET: a constant or a parameter (the streaming plan's row counts).
fn row_count_ok(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Value(_) => true,
        ast::Expr::Cast { expr, .. }
        | ast::Expr::Nested(expr)
        | ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => row_count_ok(expr),
        _ => false,
    }
}

fn all(v: &[&ast::Expr]) -> bool {
    v.iter().all(|e| expr_ok(e))
}

fn expr_ok(e: &ast::Expr) -> bool {
    crate::sql::deep(|| expr_ok_in(e))
}

fn expr_ok_in(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    match e {
        E::Identifier(id) => id.quote_style.is_some() || !session_name(&id.value.to_lowercase()),
        E::CompoundIdentifier(_) | E::Value(_) | E::Interval(_) => true,
        E::Nested(x)
        | E::IsNull(x)
        | E::IsNotNull(x)
        | E::IsTrue(x)
        | E::IsFalse(x)
        | E::IsNotTrue(x)
        | E::IsNotFalse(x)
        | E::IsUnknown(x)
        | E::IsNotUnknown(x)
        | E::Extract { expr: x, .. } => expr_ok(x),
        E::UnaryOp { op, expr } => {
            matches!(
                op,
                ast::UnaryOperator::Minus
                    | ast::UnaryOperator::Plus
                    | ast::UnaryOperator::Not
                    | ast::UnaryOperator::BitwiseNot
            ) && expr_ok(expr)
        }
        E::BinaryOp {
            left,
            op: ast::BinaryOperator::Overlaps,
            right,
        } => [left, right].iter().all(|side| match &***side {
            E::Tuple(pair) => pair.iter().all(expr_ok),
            _ => false,
        }),
        E::BinaryOp { left, op, right } => binary_op_ok(op) && all(&[left, right]),
        E::Cast {
            expr, data_type, ..
        } => type_ok(&data_type.to_string()) && expr_ok(expr),
        E::TypedString(ts) => type_ok(&ts.data_type.to_string()),
        E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => all(&[a, b]),
        E::Between {
            expr, low, high, ..
        } => match crate::sql::parse::unmark_between_symmetric(e) {
            Some(e) => expr_ok(&e),
            None => all(&[expr, low, high]),
        },
        E::Like {
            expr,
            pattern,
            escape_char: None,
            any: false,
            ..
        }
        | E::ILike {
            expr,
            pattern,
            escape_char: None,
            any: false,
            ..
        } => all(&[expr, pattern]),
        E::In {
            expr,
            target: ast::InTarget::List(list),
            ..
        } => expr_ok(expr) && list.iter().all(expr_ok),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_none_or(expr_ok)
                && conditions
                    .iter()
                    .all(|c| expr_ok(&c.condition) && expr_ok(&c.result))
                && else_result.as_deref().is_none_or(expr_ok)
        }
        E::Ceil { expr, field } | E::Floor { expr, field } => {
            matches!(
                field,
                ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
            ) && expr_ok(expr)
        }
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            expr_ok(expr)
                && substring_from.as_deref().is_none_or(expr_ok)
                && substring_for.as_deref().is_none_or(expr_ok)
        }
        E::AtTimeZone {
            timestamp,
            time_zone,
        } => all(&[timestamp, time_zone]),
        E::Overlay {
            expr,
            overlay_what,
            overlay_from,
            overlay_for,
        } => all(&[expr, overlay_what, overlay_from]) && overlay_for.as_deref().is_none_or(expr_ok),
        E::SimilarTo {
            expr,
            pattern,
            escape_char: None,
            ..
        } => all(&[expr, pattern]),
        E::Function(f) => function_ok(f),
        _ => false,
    }
}

fn binary_op_ok(op: &ast::BinaryOperator) -> bool {
    use ast::BinaryOperator as B;
    matches!(
        op,
        B::Plus
            | B::Minus
            | B::Multiply
            | B::Divide
            | B::Modulo
            | B::Eq
            | B::NotEq
            | B::Lt
            | B::LtEq
            | B::Gt
            | B::GtEq
            | B::And
            | B::Or
            | B::StringConcat
            | B::PGExp
    ) || super::expr::bit_operator(op).is_some()
        || super::expr::regex_operator(op).is_some()
        || super::expr::like_operator(op).is_some()
}

/// A cast target the streaming binder knows, or one it refuses as the relational binder
/// would (a bad `varchar(0)`): not a catalog type (`regclass`, `oid`, arrays, `name`).
fn type_ok(written: &str) -> bool {
    !matches!(
        type_from_name(written).map_err(|e| e.kind().clone()),
        Err(Error::UndefinedObject(_) | Error::FeatureNotSupported(_))
    )
}

/// A call of a scalar function or partial aggregate of the function table, or of a
/// window function of a window clause (`wtime(*)`), without `OVER`, `FILTER`, `WITHIN
/// GROUP` or clauses inside the parentheses.
/// The functions and keywords naming the session's user, schema or database: they are of
/// type `name`, which only the relational plan types.
fn session_name(name: &str) -> bool {
    matches!(
        name,
        "current_user"
            | "session_user"
            | "user"
            | "current_role"
            | "current_schema"
            | "current_database"
            | "current_catalog"
    )
}

fn function_ok(f: &ast::Function) -> bool {
    if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
        return false;
    }
    let name = func_name(f);
    if session_name(&name) {
        return false;
    }
    let known = functions::scalar(&name).is_some()
        || matches!(
            functions::aggregate(&name).map(|a| a.kernel),
            Some(functions::AggKernel::Partial(_))
        )
        || matches!(
            name.as_str(),
            "wtime" | "wstart" | "wrange" | "wslide" | "mod"
        );
    if !known {
        return false;
    }
    match &f.args {
        ast::FunctionArguments::None => true,
        ast::FunctionArguments::Subquery(_) => false,
        ast::FunctionArguments::List(l) => {
            l.clauses.is_empty()
                && l.args.iter().all(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))
                    | ast::FunctionArg::Named {
                        arg: ast::FunctionArgExpr::Expr(e),
                        ..
                    }
                    | ast::FunctionArg::ExprNamed {
                        arg: ast::FunctionArgExpr::Expr(e),
                        ..
                    } => expr_ok(e),
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => true,
                    _ => false,
                })
        }
    }
}
