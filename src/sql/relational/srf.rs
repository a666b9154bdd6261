//! Where PostgreSQL refuses a set-returning call inside a select-list expression: within
//! CASE and COALESCE, whose branches run conditionally (0A000 "set-returning functions are
//! not allowed in CASE", 42804 in a WHEN condition). Subqueries are their own queries and
//! are not looked into.

use sqlparser::ast;

use super::SELECT_LIST_SET_FUNCTIONS;
use crate::error::Error;

/// PostgreSQL's error for a set-returning call of [`SELECT_LIST_SET_FUNCTIONS`] in a
/// branch of a CASE or COALESCE of `e`, if there is one: 42804 "argument of CASE/WHEN must
/// not return a set" in a WHEN condition, otherwise 0A000 "set-returning functions are not
/// allowed in CASE" (or COALESCE).
pub(super) fn conditional_srf(e: &ast::Expr) -> Option<Error> {
    use ast::Expr as E;
    let not_allowed = |construct: &str| {
        Error::FeatureNotSupported(format!(
            "set-returning functions are not allowed in {construct}"
        ))
        .with_hint("You might be able to move the set-returning function into a LATERAL FROM item.")
    };
    match e {
        E::Case { conditions, .. } if conditions.iter().any(|c| has_srf(&c.condition)) => Some(
            Error::DatatypeMismatch("argument of CASE/WHEN must not return a set".into()),
        ),
        E::Case { .. } if children(e).any(has_srf) => Some(not_allowed("CASE")),
        E::Function(f) if function_name(f) == "coalesce" && args(f).any(has_srf) => {
            Some(not_allowed("COALESCE"))
        }
        _ => children(e).find_map(conditional_srf),
    }
}

/// True when `e` calls a set-returning function outside subqueries.
fn has_srf(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Function(f)
            if SELECT_LIST_SET_FUNCTIONS.contains(&function_name(f).as_str()) =>
        {
            true
        }
        e => children(e).any(has_srf),
    }
}

fn function_name(f: &ast::Function) -> String {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map_or(String::new(), |i| i.value.to_lowercase())
}

/// The expression arguments of a call.
fn args(f: &ast::Function) -> impl Iterator<Item = &ast::Expr> + Clone {
    let list = match &f.args {
        ast::FunctionArguments::List(l) => &l.args[..],
        _ => &[],
    };
    list.iter().filter_map(|a| match a {
        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))
        | ast::FunctionArg::Named {
            arg: ast::FunctionArgExpr::Expr(e),
            ..
        } => Some(e),
        _ => None,
    })
}

/// The operands of the expressions a select list commonly nests (operators, casts,
/// calls, CASE, IS, BETWEEN); other nodes are leaves here.
fn children(e: &ast::Expr) -> Box<dyn Iterator<Item = &ast::Expr> + '_> {
    use ast::Expr as E;
    match e {
        E::BinaryOp { left, right, .. } => Box::new([&**left, &**right].into_iter()),
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::Cast { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr) => Box::new(std::iter::once(&**expr)),
        E::Function(f) => Box::new(args(f)),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => Box::new(
            operand
                .iter()
                .map(|o| &**o)
                .chain(conditions.iter().flat_map(|c| [&c.condition, &c.result]))
                .chain(else_result.iter().map(|x| &**x)),
        ),
        E::Between {
            expr, low, high, ..
        } => Box::new([&**expr, &**low, &**high].into_iter()),
        _ => Box::new(std::iter::empty()),
    }
}
