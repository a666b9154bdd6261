//! `x op ANY|ALL (array)` in a continuous query over an array built from the row:
//! `string_to_array(...)`, `regexp_split_to_array(...)` and a text value cast to an
//! array type (`col::integer[]`), bound to [`ScalarFunc::Quantified`] (evaluated by
//! `expr_quantified`). Plain SELECTs reach these through the relational plan builder.

use sqlparser::ast;

use super::predicates::Quantified;
use super::*;
use crate::sql::{ArraySource, QuantOp, QuantSpec};

impl Binder<'_> {
    /// `left op ANY|ALL (right)` when `right` is an array the row builds (see the module
    /// docs), `None` for any other `right` (or under a plan builder, which binds arrays
    /// itself). Errors: 42883 for a function call of arguments that are not text and
    /// for an `x` that `op` does not compare with the elements (`1 = ANY
    /// (string_to_array(s, ','))`: integer = text), 42846 for a cast of a value that is
    /// not text, 42704 for an unknown element type.
    pub(super) fn row_array_quantified(
        &mut self,
        left: &ast::Expr,
        op: Quantified,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
    ) -> Result<Option<Bound>> {
        if self.leaves.is_some() {
            return Ok(None);
        }
        let (source, arg_exprs, name) = match right {
            ast::Expr::Function(f) => {
                let name = func_name(f);
                let args = func_arg_exprs(f);
                let source = match (name.as_str(), args.len()) {
                    ("string_to_array", 2 | 3) => ArraySource::Split,
                    ("regexp_split_to_array", 2 | 3) => ArraySource::RegexSplit,
                    _ => return Ok(None),
                };
                (source, args, name)
            }
            ast::Expr::Cast {
                expr,
                data_type: ast::DataType::Array(elem),
                ..
            } => {
                let Some(elem) = super::predicates::elem_name(elem) else {
                    return Ok(None);
                };
                let t = crate::sql::types::type_from_name(&elem)?;
                (
                    ArraySource::Text(t),
                    vec![&**expr],
                    format!("{}[]", t.name()),
                )
            }
            _ => return Ok(None),
        };
        let bound: Vec<Bound> = arg_exprs
            .into_iter()
            .map(|a| self.expr(a, scope))
            .collect::<Result<_>>()?;
        if bound.iter().any(|b| b.ty.is_some_and(|t| !t.is_text())) {
            return Err(match source {
                ArraySource::Text(_) => Error::CannotCoerce(format!(
                    "cannot cast type {} to {name}",
                    type_label(bound[0].ty)
                )),
                _ => no_function(&name, &bound)
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
            });
        }
        let mut args = Vec::with_capacity(bound.len() + 1);
        let elem = match source {
            ArraySource::Text(t) => t,
            _ => DataType::Text,
        };
        let x = self.expr(left, scope)?;
        let op = match op {
            Quantified::Cmp(cmp, _) => {
                let x = match x.ty {
                    None => Bound::new(self.coerce(x, elem, "ARRAY")?, elem),
                    Some(_) => x,
                };
                // Resolves the operator as for any element: 42883 when there is none.
                self.binary(cmp, x.clone(), Bound::new(Expr::Literal(Value::Null), elem))?;
                let ty = x.ty;
                args.push(match elem.is_text() {
                    true => bpchar_as_text(x.expr, ty),
                    false => x.expr,
                });
                QuantOp::Cmp(cmp)
            }
            Quantified::Like {
                negated,
                case_insensitive,
            } => {
                if x.ty.is_some_and(|t| !t.is_text()) || !elem.is_text() {
                    return Err(no_operator(x.ty, op.symbol(), Some(elem)));
                }
                args.push(self.text_operand(x, op.symbol())?);
                QuantOp::Like {
                    negated,
                    case_insensitive,
                }
            }
        };
        for b in bound {
            let ty = b.ty;
            let e = self.text_operand(b, &name)?;
            args.push(bpchar_as_text(e, ty));
        }
        let spec = QuantSpec { op, all, source };
        Ok(Some(Bound::new(
            Expr::Func {
                func: ScalarFunc::Quantified(spec),
                args,
            },
            DataType::Bool,
        )))
    }
}
