//! The expression binder: operators, literals, casts, CASE, with PostgreSQL's typing of
//! unknown literals and parameters by context. [`Binder::expr`] dispatches a node by its
//! family: names, literals and operators here, predicates in `predicates.rs`, casts,
//! CASE and the SQL-syntax functions in `forms.rs`, calls in `call.rs`.

use sqlparser::ast;

use super::*;

/// `extract(field FROM x)`: numeric, as PostgreSQL 14 and later give it, with its scale:
/// six digits for epoch and seconds (`978343200.000000`), three for milliseconds, none
/// for the other fields. A date (`of_date`) has no fraction of a second: scale 0 for every
/// field, as PostgreSQL's extract over date gives.
pub(super) fn extract_expr(field: &str, x: Expr, of_date: bool) -> Expr {
    let field = field.to_lowercase();
    let scale = match crate::expr_units::canonical_unit(&field).unwrap_or_default() {
        _ if of_date => 0,
        "epoch" | "second" => 6,
        "milliseconds" => 3,
        // PostgreSQL divides the day's microseconds by 86 400 000 000 as numeric.
        "julian" => 20,
        _ => 0,
    };
    let value = Expr::Cast {
        expr: Box::new(Expr::Func {
            func: ScalarFunc::DatePart,
            args: vec![Expr::Literal(Value::Text(field.into())), x],
        }),
        to: DataType::Numeric,
    };
    Expr::Func {
        func: ScalarFunc::NumericTypmod,
        args: vec![
            value,
            Expr::Literal(Value::Int4(1000)),
            Expr::Literal(Value::Int4(scale)),
        ],
    }
}

/// The bit operator `op` is, with its symbol.
pub(crate) fn bit_operator(op: &ast::BinaryOperator) -> Option<(ScalarFunc, &'static str)> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::BitwiseAnd => (ScalarFunc::BitAnd, "&"),
        B::BitwiseOr => (ScalarFunc::BitOr, "|"),
        B::PGBitwiseXor => (ScalarFunc::BitXor, "#"),
        B::PGBitwiseShiftLeft => (ScalarFunc::ShiftLeft, "<<"),
        B::PGBitwiseShiftRight => (ScalarFunc::ShiftRight, ">>"),
        _ => return None,
    })
}

/// The regular expression operator `op` is: its function, symbol and negation.
pub(crate) fn regex_operator(op: &ast::BinaryOperator) -> Option<(ScalarFunc, &'static str, bool)> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::PGRegexMatch => (ScalarFunc::RegexMatch, "~", false),
        B::PGRegexIMatch => (ScalarFunc::RegexIMatch, "~*", false),
        B::PGRegexNotMatch => (ScalarFunc::RegexMatch, "!~", true),
        B::PGRegexNotIMatch => (ScalarFunc::RegexIMatch, "!~*", true),
        B::PGCustomBinaryOperator(parts) => match parts.last().map(String::as_str) {
            Some("~") => (ScalarFunc::RegexMatch, "~", false),
            Some("~*") => (ScalarFunc::RegexIMatch, "~*", false),
            Some("!~") => (ScalarFunc::RegexMatch, "!~", true),
            Some("!~*") => (ScalarFunc::RegexIMatch, "!~*", true),
            _ => return None,
        },
        _ => return None,
    })
}

/// Whether `op` is one of PostgreSQL's LIKE operators, as (negated, case-insensitive):
/// `~~` is LIKE, `!~~` NOT LIKE, `~~*` ILIKE, `!~~*` NOT ILIKE (also spelled
/// `OPERATOR(pg_catalog.~~)`).
pub(crate) fn like_operator(op: &ast::BinaryOperator) -> Option<(bool, bool)> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::PGLikeMatch => (false, false),
        B::PGNotLikeMatch => (true, false),
        B::PGILikeMatch => (false, true),
        B::PGNotILikeMatch => (true, true),
        B::PGCustomBinaryOperator(parts) => match parts.last().map(String::as_str) {
            Some("~~") => (false, false),
            Some("!~~") => (true, false),
            Some("~~*") => (false, true),
            Some("!~~*") => (true, true),
            _ => return None,
        },
        _ => return None,
    })
}

/// `left op right` written as the LIKE or ILIKE it stands for, when `op` is a LIKE
/// operator (see [`like_operator`]); both binders bind that instead.
pub(crate) fn like_of_operator(
    left: &ast::Expr,
    op: &ast::BinaryOperator,
    right: &ast::Expr,
) -> Option<ast::Expr> {
    let (negated, ci) = like_operator(op)?;
    let (expr, pattern) = (Box::new(left.clone()), Box::new(right.clone()));
    Some(if ci {
        ast::Expr::ILike {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        }
    } else {
        ast::Expr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        }
    })
}

pub(super) fn op_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Mod => "%",
        BinaryOp::Eq => "=",
        BinaryOp::NotEq => "<>",
        BinaryOp::Lt => "<",
        BinaryOp::LtEq => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::GtEq => ">=",
        BinaryOp::And => "AND",
        BinaryOp::Or => "OR",
        BinaryOp::Concat => "||",
    }
}

pub(super) fn type_label(t: Option<DataType>) -> String {
    t.map(|t| t.name()).unwrap_or_else(|| "unknown".into())
}

/// 42883 for a call of `name` with arguments of no overload PostgreSQL has.
pub(super) fn no_function(name: &str, args: &[Bound]) -> Error {
    let types: Vec<String> = args.iter().map(|b| type_label(b.ty)).collect();
    Error::UndefinedFunction(format!(
        "function {name}({}) does not exist",
        types.join(", ")
    ))
}

pub(super) fn no_operator(l: Option<DataType>, op: &str, r: Option<DataType>) -> Error {
    Error::UndefinedFunction(format!(
        "operator does not exist: {} {op} {}",
        type_label(l),
        type_label(r)
    ))
}

/// 42725 for an operator whose operands are all of unknown type where several of its
/// candidates fit (`'a' + 'b'`, `- NULL`), with PostgreSQL's message and hint; `infix`
/// is false for a prefix operator.
pub(super) fn operator_not_unique(op: &str, infix: bool) -> Error {
    let operands = if infix {
        format!("unknown {op} unknown")
    } else {
        format!("{op} unknown")
    };
    Error::AmbiguousFunction(format!("operator is not unique: {operands}")).with_hint(
        "Could not choose a best candidate operator. You might need to add explicit type casts.",
    )
}

/// True when `e` contains an aggregate call (outside subqueries).
pub(super) fn contains_aggregate(e: &ast::Expr) -> bool {
    crate::sql::deep(|| contains_aggregate_in(e))
}

pub(super) fn contains_aggregate_in(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    let any = |v: &[&ast::Expr]| v.iter().any(|x| contains_aggregate(x));
    match e {
        E::Function(f) => {
            if agg_func_of(&func_name(f)).is_some() && f.over.is_none() {
                return true;
            }
            func_arg_exprs(f).iter().any(|x| contains_aggregate(x))
        }
        E::BinaryOp { left, right, .. } => any(&[left, right]),
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::Cast { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr)
        | E::IsNotTrue(expr)
        | E::IsNotFalse(expr)
        | E::IsUnknown(expr)
        | E::IsNotUnknown(expr)
        | E::Extract { expr, .. }
        | E::Ceil { expr, .. }
        | E::Floor { expr, .. }
        | E::Collate { expr, .. } => contains_aggregate(expr),
        E::IsDistinctFrom(a, b)
        | E::IsNotDistinctFrom(a, b)
        | E::AnyOp {
            left: a, right: b, ..
        }
        | E::AllOp {
            left: a, right: b, ..
        } => any(&[a, b]),
        E::Array(a) => a.elem.iter().any(contains_aggregate),
        E::Between {
            expr, low, high, ..
        } => any(&[expr, low, high]),
        E::Like {
            expr,
            pattern,
            escape_char,
            ..
        }
        | E::ILike {
            expr,
            pattern,
            escape_char,
            ..
        } => any(&[expr, pattern]) || escape_char.as_deref().is_some_and(contains_aggregate),
        E::Trim {
            expr,
            trim_what,
            trim_characters,
            ..
        } => {
            contains_aggregate(expr)
                || trim_what.as_deref().is_some_and(contains_aggregate)
                || trim_characters.iter().flatten().any(contains_aggregate)
        }
        E::In {
            expr,
            target: ast::InTarget::List(list),
            ..
        } => contains_aggregate(expr) || list.iter().any(contains_aggregate),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || conditions
                    .iter()
                    .any(|c| contains_aggregate(&c.condition) || contains_aggregate(&c.result))
                || else_result.as_deref().is_some_and(contains_aggregate)
        }
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            contains_aggregate(expr)
                || substring_from.as_deref().is_some_and(contains_aggregate)
                || substring_for.as_deref().is_some_and(contains_aggregate)
        }
        _ => false,
    }
}

pub(super) fn expr_has_column(e: &Expr) -> bool {
    expr_uses_column(e, &|_| true)
}

/// Whether `e` reads a column `c` for which `which(c)` holds.
pub(crate) fn expr_uses_column(e: &Expr, which: &dyn Fn(usize) -> bool) -> bool {
    crate::sql::deep(|| uses_column_in(e, which))
}

fn uses_column_in(e: &Expr, which: &dyn Fn(usize) -> bool) -> bool {
    let expr_has_column = |e: &Expr| expr_uses_column(e, which);
    match e {
        Expr::Column(c) => which(*c),
        Expr::Literal(_) | Expr::Param(_) | Expr::WindowMeta(_) => false,
        Expr::Unary { expr, .. } | Expr::Cast { expr, .. } | Expr::IsNull { expr, .. } => {
            expr_has_column(expr)
        }
        Expr::Binary { left, right, .. } => expr_has_column(left) || expr_has_column(right),
        Expr::Func { args, .. } => args.iter().any(&expr_has_column),
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            operand.as_deref().is_some_and(&expr_has_column)
                || branches
                    .iter()
                    .any(|(a, b)| expr_has_column(a) || expr_has_column(b))
                || otherwise.as_deref().is_some_and(&expr_has_column)
        }
        Expr::InList { expr, list, .. } => {
            expr_has_column(expr) || list.iter().any(&expr_has_column)
        }
        Expr::Like { expr, pattern, .. } => expr_has_column(expr) || expr_has_column(pattern),
    }
}

pub(super) fn default_column_name(e: &ast::Expr) -> String {
    use ast::Expr as E;
    match e {
        E::Identifier(id) => ident_name(id),
        E::CompoundIdentifier(ids) => ids.last().map(ident_name).unwrap_or_default(),
        E::Function(f) => func_name(f),
        E::Nested(inner) => default_column_name(inner),
        // A cast names its column after the operand, unless the operand's own name is
        // only a type's (another cast's) or none: then after its type, as PostgreSQL's
        // FigureColname does (`'x'::date::text` is `text`).
        E::Cast {
            expr, data_type, ..
        } => {
            let mut inner = expr.as_ref();
            while let E::Nested(e) = inner {
                inner = e;
            }
            match default_column_name(expr).as_str() {
                name if name != "?column?"
                    && !matches!(inner, E::Cast { .. } | E::TypedString(_)) =>
                {
                    name.to_string()
                }
                _ => type_from_name(&data_type.to_string())
                    .map(|t| short_type_name(t).to_string())
                    .unwrap_or_else(|_| "?column?".into()),
            }
        }
        E::TypedString(ts) => type_from_name(&ts.data_type.to_string())
            .map(|t| short_type_name(t).to_string())
            .unwrap_or_else(|_| "?column?".into()),
        E::Interval(_) => "interval".into(),
        E::Extract { .. } => "extract".into(),
        E::Ceil { .. } => "ceil".into(),
        E::Floor { .. } => "floor".into(),
        E::Substring { .. } => "substring".into(),
        E::Overlay { .. } => "overlay".into(),
        // TRIM is a call of the function it names (PostgreSQL's FigureColname).
        E::Trim { trim_where, .. } => match trim_where {
            Some(ast::TrimWhereField::Leading) => "ltrim",
            Some(ast::TrimWhereField::Trailing) => "rtrim",
            _ => "btrim",
        }
        .into(),
        E::Case { .. } => "case".into(),
        E::AtTimeZone { .. } => "timezone".into(),
        E::BinaryOp {
            op: ast::BinaryOperator::Overlaps,
            ..
        } => "overlaps".into(),
        E::Value(v) if matches!(v.value, ast::Value::Boolean(_)) => "bool".into(),
        _ => "?column?".into(),
    }
}

impl Bound {
    /// A numeric literal typed as PostgreSQL types it: integer, bigint, else numeric.
    pub(super) fn new_number(n: &str) -> Result<Bound> {
        let v = number_literal(n)?;
        let ty = v.data_type().expect("a number literal has a type");
        Ok(Bound::new(Expr::Literal(v), ty))
    }
}

/// The text of a number literal under minus signs and parentheses, the signs folded in
/// as PostgreSQL's grammar folds them before typing the constant: `-(-2147483648)` is the
/// bigint 2147483648, `-(-9223372036854775808)` a numeric. None for anything else.
fn signed_number(expr: &ast::Expr) -> Option<String> {
    match expr {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => Some(n.clone()),
            _ => None,
        },
        ast::Expr::Nested(e) => signed_number(e),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => signed_number(expr).map(|n| negate_text(&n)),
        _ => None,
    }
}

/// `n` with its leading minus sign dropped, or one added.
fn negate_text(n: &str) -> String {
    match n.strip_prefix('-') {
        Some(positive) => positive.to_string(),
        None => format!("-{n}"),
    }
}

/// The value of a number literal, typed as PostgreSQL types it: `integer`, `bigint`, else
/// `numeric`. Beyond a Decimal's 28 digits (1e300, 1e-30) the literal is a wide numeric
/// ([`crate::types_wide`]), exact as in PostgreSQL, up to 1,000 digits on either side of
/// the point; beyond that a double, and past a double numeric's own error (22003 for
/// `1e400`). Both binders read number literals through it.
pub(crate) fn number_literal(n: &str) -> Result<Value> {
    if !n.contains(['.', 'e', 'E']) {
        if let Ok(v) = n.parse::<i32>() {
            return Ok(Value::Int4(v));
        }
        if let Ok(v) = n.parse::<i64>() {
            return Ok(Value::Int8(v));
        }
    }
    // Exact at every digit written, as PostgreSQL keeps it (a Decimal would round past
    // 28 significant digits), wide when a Decimal cannot hold it, within numeric's range.
    if let Some(v) = crate::types_wide::parse_wide(n) {
        return Ok(v);
    }
    let exact = if n.contains(['e', 'E']) {
        // parse_numeric would round `1e-30` to numeric's 28 places; a literal keeps it.
        rust_decimal::Decimal::from_scientific(n).ok()
    } else {
        crate::types::parse_numeric(n).ok()
    };
    if let Some(d) = exact {
        return Ok(Value::Numeric(d));
    }
    match n.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Value::Float8(f)),
        _ => crate::types::parse_numeric(n).map(Value::Numeric),
    }
}

/// `date` and `time` arithmetic, as PostgreSQL's operators type it: `date ± integer` is a
/// date, `date - date` an integer, `date ± interval` a timestamp (the date read as its
/// midnight), `date + time` a timestamp, `time ± interval` a time, `time - time` an
/// interval; a date meeting a timestamp is read as its midnight, a time meeting a
/// timestamp (`ts ± time`, `time + ts`) or after `interval -` as an interval. Errors:
/// 42725 for `time + time`, 42883 for other operand types.
fn date_arithmetic(op: BinaryOp, l: (Expr, DataType), r: (Expr, DataType)) -> Result<Bound> {
    use DataType as T;
    let ((le, lt), (re, rt)) = (l, r);
    let small_int = |t: T| matches!(t, T::Int2 | T::Int4);
    let to = |e: Expr, t: T| Expr::Cast {
        expr: Box::new(e),
        to: t,
    };
    let (le, re, result) = match (lt, rt, op) {
        (T::Date, n, BinaryOp::Add | BinaryOp::Sub) | (n, T::Date, BinaryOp::Add)
            if small_int(n) =>
        {
            (le, re, T::Date)
        }
        (T::Date, T::Date, BinaryOp::Sub) => (le, re, T::Int4),
        (T::Date, T::Interval, BinaryOp::Add | BinaryOp::Sub) => {
            (to(le, T::Timestamp), re, T::Timestamp)
        }
        (T::Interval, T::Date, BinaryOp::Add) => (le, to(re, T::Timestamp), T::Timestamp),
        (T::Date, ts, BinaryOp::Sub) if ts.is_timestamp() => (to(le, ts), re, T::Interval),
        (ts, T::Date, BinaryOp::Sub) if ts.is_timestamp() => (le, to(re, ts), T::Interval),
        (T::Date, T::Time, BinaryOp::Add) | (T::Time, T::Date, BinaryOp::Add) => {
            (le, re, T::Timestamp)
        }
        (T::Time, T::Interval, BinaryOp::Add | BinaryOp::Sub)
        | (T::Interval, T::Time, BinaryOp::Add) => (le, re, T::Time),
        (T::Time, T::Time, BinaryOp::Sub) => (le, re, T::Interval),
        // A time meeting a timestamp or subtracted from an interval is read as an
        // interval (PostgreSQL's implicit cast), as no operator takes it as it is.
        (ts, T::Time, BinaryOp::Add | BinaryOp::Sub) if ts.is_timestamp() => {
            (le, to(re, T::Interval), ts)
        }
        (T::Time, ts, BinaryOp::Add) if ts.is_timestamp() => (to(le, T::Interval), re, ts),
        (T::Interval, T::Time, BinaryOp::Sub) => (le, to(re, T::Interval), T::Interval),
        (T::Time, T::Time, BinaryOp::Add) => {
            return Err(Error::AmbiguousFunction(
                "operator is not unique: time without time zone + time without time zone".into(),
            )
            .with_hint(
                "Could not choose a best candidate operator. You might need to add explicit type casts.",
            ))
        }
        _ => return Err(no_operator(Some(lt), op_symbol(op), Some(rt))),
    };
    Ok(Bound::new(
        Expr::Binary {
            op,
            left: Box::new(le),
            right: Box::new(re),
        },
        result,
    ))
}

/// `e` of type `ty` as text: a `character(n)` value loses its trailing blanks.
pub(crate) fn bpchar_as_text(e: Expr, ty: Option<DataType>) -> Expr {
    match ty {
        Some(DataType::Bpchar(_)) => Expr::Func {
            func: ScalarFunc::BpcharText,
            args: vec![e],
        },
        _ => e,
    }
}

impl Binder<'_> {
    pub(super) fn boolean(&mut self, b: Bound, clause: &str) -> Result<Expr> {
        match b.ty {
            Some(DataType::Bool) => Ok(b.expr),
            None => self.coerce(b, DataType::Bool, clause),
            Some(t) => Err(Error::DatatypeMismatch(format!(
                "argument of {clause} must be type boolean, not type {}",
                t.name()
            ))),
        }
    }

    /// Give an expression type `to` where PostgreSQL would cast implicitly; unknown literals
    /// are converted now (22P02 etc. for bad text), parameters take the type.
    pub(super) fn coerce(&mut self, b: Bound, to: DataType, ctx: &str) -> Result<Expr> {
        match b.ty {
            Some(t) if t == to => Ok(b.expr),
            Some(t) if castable(t, to, false) || (t.is_numeric() && to.is_numeric()) => {
                Ok(Expr::Cast {
                    expr: Box::new(b.expr),
                    to,
                })
            }
            Some(t) => Err(Error::DatatypeMismatch(format!(
                "{ctx}: expression of type {} cannot be used as type {}",
                t.name(),
                to.name()
            ))),
            None => match b.expr {
                // Outside assignment, an unknown literal meeting varchar(n) is read as text:
                // varchar has text's operators, and PostgreSQL checks no length there.
                Expr::Literal(Value::Text(s)) => Ok(Expr::Literal(parse_value(
                    &s,
                    if to.is_text() { DataType::Text } else { to },
                )?)),
                Expr::Literal(Value::Null) => Ok(Expr::Literal(Value::Null)),
                Expr::Param(i) => {
                    if self.params.len() <= i {
                        self.params.resize(i + 1, None);
                    }
                    match self.params[i] {
                        None => {
                            self.params[i] = Some(to);
                            Ok(Expr::Param(i))
                        }
                        Some(t) if t == to => Ok(Expr::Param(i)),
                        Some(_) => Ok(Expr::Cast {
                            expr: Box::new(Expr::Param(i)),
                            to,
                        }),
                    }
                }
                other => Ok(Expr::Cast {
                    expr: Box::new(other),
                    to,
                }),
            },
        }
    }

    /// Bind an expression in the current mode.
    pub(super) fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        if self.depth >= EXPRESSION_DEPTH_MAX {
            return Err(Error::StatementTooComplex(format!(
                "stack depth limit exceeded: expressions may nest at most {EXPRESSION_DEPTH_MAX} levels deep"
            )));
        }
        self.depth += 1;
        let bound = crate::sql::deep(|| self.expr_in_mode(e, scope));
        self.depth -= 1;
        bound
    }

    pub(super) fn expr_in_mode(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        if self.agg_mode
            && !self.in_agg_arg
            && !contains_aggregate(e)
            && !matches!(
                e,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            )
        {
            // Try the whole subexpression as a group key first.
            self.agg_mode = false;
            let input = self.expr(e, scope);
            self.agg_mode = true;
            let input = input?;
            let st = self
                .agg
                .as_ref()
                .expect("aggregate mode has an aggregate state");
            if let Some(k) = st.keys.iter().position(|k| *k == input.expr) {
                return Ok(Bound::new(Expr::Column(k), st.key_types[k]));
            }
            if !expr_has_column(&input.expr) {
                return Ok(input);
            }
        }
        self.expr_inner(e, scope)
    }

    /// `e` bound: a plan builder's leaf when it claims `e`, else by the node's family.
    /// Errors: 0A000 for a construct the binder has not (subqueries, LIKE ANY, ...).
    pub(super) fn expr_inner(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        if let Some(b) = self.claimed_leaf(e)? {
            return Ok(b);
        }
        match e {
            E::Identifier(_) | E::CompoundIdentifier(_) | E::Value(_) | E::Nested(_) => {
                self.name_or_value(e, scope)
            }
            E::UnaryOp { op, expr } => self.unary(*op, expr, scope),
            E::BinaryOp { .. } => self.binary_op(e, scope),
            E::Cast { .. } | E::TypedString(_) | E::Interval(_) | E::Collate { .. } => {
                self.cast_form(e, scope)
            }
            E::IsNull(_) | E::IsNotNull(_) | E::IsDistinctFrom(..) | E::IsNotDistinctFrom(..) => {
                self.is_null_or_distinct(e, scope)
            }
            E::IsTrue(_)
            | E::IsFalse(_)
            | E::IsNotTrue(_)
            | E::IsNotFalse(_)
            | E::IsUnknown(_)
            | E::IsNotUnknown(_) => self.is_truth(e, scope),
            E::Between { .. } | E::SimilarTo { .. } => self.between_or_similar(e, scope),
            E::Like { .. } | E::ILike { .. } => self.like(e, scope),
            E::In { .. } => self.in_list(e, scope),
            E::AnyOp { .. } | E::AllOp { .. } => self.any_all(e, scope),
            E::Case { .. }
            | E::Function(_)
            | E::Extract { .. }
            | E::Ceil { .. }
            | E::Floor { .. }
            | E::AtTimeZone { .. } => self.special_call(e, scope),
            E::Substring { .. } | E::Trim { .. } | E::Position { .. } | E::Overlay { .. } => {
                self.text_syntax(e, scope)
            }
            E::Subquery(_) | E::Exists { .. } => Err(unsupported("subqueries are not supported")),
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// A column reference (a keyword value such as CURRENT_USER first), a literal or a
    /// parenthesized expression.
    pub(super) fn name_or_value(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Identifier(id) => {
                if id.quote_style.is_none() {
                    let lower = id.value.to_lowercase();
                    if let Some(b) = self.keyword_value(&lower, scope)? {
                        return Ok(b);
                    }
                }
                let i = self.resolve_column(&[id], scope)?;
                self.column_ref(i, scope)
            }
            E::CompoundIdentifier(ids) => {
                let parts: Vec<&ast::Ident> = ids.iter().collect();
                let i = self.resolve_column(&parts, scope)?;
                self.column_ref(i, scope)
            }
            E::Value(v) => self.value(&v.value),
            E::Nested(inner) => self.expr(inner, scope),
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// A binary operator: arithmetic, comparison, AND/OR, `||`, `^`, the bit and regular
    /// expression operators. Errors: 42883 for an operator PostgreSQL has not for the
    /// operand types.
    pub(super) fn binary_op(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::BinaryOp { left, op, right } if like_operator(op).is_some() => {
                let like = like_of_operator(left, op, right).expect("a LIKE operator");
                self.expr(&like, scope)
            }
            E::BinaryOp { left, op, right } => {
                let op = match op {
                    ast::BinaryOperator::Plus => BinaryOp::Add,
                    ast::BinaryOperator::Minus => BinaryOp::Sub,
                    ast::BinaryOperator::Multiply => BinaryOp::Mul,
                    ast::BinaryOperator::Divide => BinaryOp::Div,
                    ast::BinaryOperator::Modulo => BinaryOp::Mod,
                    ast::BinaryOperator::Eq => BinaryOp::Eq,
                    ast::BinaryOperator::NotEq => BinaryOp::NotEq,
                    ast::BinaryOperator::Lt => BinaryOp::Lt,
                    ast::BinaryOperator::LtEq => BinaryOp::LtEq,
                    ast::BinaryOperator::Gt => BinaryOp::Gt,
                    ast::BinaryOperator::GtEq => BinaryOp::GtEq,
                    ast::BinaryOperator::And => BinaryOp::And,
                    ast::BinaryOperator::Or => BinaryOp::Or,
                    ast::BinaryOperator::StringConcat => BinaryOp::Concat,
                    ast::BinaryOperator::Overlaps => return self.overlaps(left, right, scope),
                    ast::BinaryOperator::PGExp => {
                        let l = self.expr(left, scope)?;
                        let r = self.expr(right, scope)?;
                        return self.scalar(ScalarFunc::Power, vec![l, r]);
                    }
                    other => {
                        if let Some((func, sym)) = bit_operator(other) {
                            let l = self.expr(left, scope)?;
                            let r = self.expr(right, scope)?;
                            return self.bit_operator(func, sym, l, r);
                        }
                        if let Some((func, sym, negated)) = regex_operator(other) {
                            let l = self.expr(left, scope)?;
                            let r = self.expr(right, scope)?;
                            return self.pattern_match(func, sym, negated, l, r);
                        }
                        return Err(Error::UndefinedFunction(format!(
                            "operator is not supported: {other}"
                        )));
                    }
                };
                let l = self.expr(left, scope)?;
                let r = self.expr(right, scope)?;
                if op == BinaryOp::Concat {
                    if let Some(b) = self.concat_leaves(&l, &r)? {
                        return Ok(b);
                    }
                }
                self.binary(op, l, r)
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// Keywords that parse as identifiers: CURRENT_USER and friends.
    pub(super) fn keyword_value(&mut self, lower: &str, _scope: &Scope) -> Result<Option<Bound>> {
        let func = match lower {
            "current_user" | "session_user" | "user" | "current_role" => ScalarFunc::CurrentUser,
            "current_timestamp" | "localtimestamp" => ScalarFunc::Now,
            "current_schema" => ScalarFunc::CurrentSchema,
            "current_catalog" => ScalarFunc::CurrentDatabase,
            // The transaction's day in the session's time zone.
            "current_date" => {
                let now = self.scalar(ScalarFunc::Now, vec![])?;
                return self.cast(now, DataType::Date).map(Some);
            }
            _ => return Ok(None),
        };
        self.scalar(func, vec![]).map(Some)
    }

    pub(super) fn value(&mut self, v: &ast::Value) -> Result<Bound> {
        Ok(match v {
            ast::Value::Number(n, _) => Bound::new_number(n)?,
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::UnicodeStringLiteral(s)
            | ast::Value::NationalStringLiteral(s)
            | ast::Value::TripleSingleQuotedString(s) => Bound {
                expr: Expr::Literal(Value::Text(no_nul(s)?.into())),
                ty: None,
            },
            ast::Value::DollarQuotedString(d) => Bound {
                expr: Expr::Literal(Value::Text(no_nul(&d.value)?.into())),
                ty: None,
            },
            ast::Value::Boolean(b) => Bound::new(Expr::Literal(Value::Bool(*b)), DataType::Bool),
            ast::Value::Null => Bound {
                expr: Expr::Literal(Value::Null),
                ty: None,
            },
            ast::Value::Placeholder(p) => {
                let i = crate::sql::placeholder_index(p)?;
                if self.params.len() <= i {
                    self.params.resize(i + 1, None);
                }
                Bound {
                    expr: Expr::Param(i),
                    ty: self.params[i],
                }
            }
            other => return Err(unsupported(format!("literal is not supported: {other}"))),
        })
    }

    pub(super) fn unary(
        &mut self,
        op: ast::UnaryOperator,
        expr: &ast::Expr,
        scope: &Scope,
    ) -> Result<Bound> {
        match op {
            ast::UnaryOperator::Minus => {
                if let Some(n) = signed_number(expr) {
                    return Bound::new_number(&negate_text(&n));
                }
                let b = self.expr(expr, scope)?;
                let b = match b.ty {
                    None => return Err(operator_not_unique("-", false)),
                    Some(t) if t.is_numeric() || t == DataType::Interval => b,
                    Some(t) => {
                        return Err(Error::UndefinedFunction(format!(
                            "operator does not exist: - {}",
                            t.name()
                        )))
                    }
                };
                let ty = b.ty;
                Ok(Bound {
                    expr: Expr::Unary {
                        op: UnaryOp::Neg,
                        expr: Box::new(b.expr),
                    },
                    ty,
                })
            }
            ast::UnaryOperator::Plus => self.expr(expr, scope),
            ast::UnaryOperator::BitwiseNot => {
                let b = self.expr(expr, scope)?;
                self.bit_not(b)
            }
            ast::UnaryOperator::Not => {
                let b = self.expr(expr, scope)?;
                let c = self.boolean(b, "NOT")?;
                Ok(Bound::new(
                    Expr::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(c),
                    },
                    DataType::Bool,
                ))
            }
            // PostgreSQL's prefix operators `|/` (square root) and `||/` (cube root) of a
            // double precision, and `@` (absolute value) of any number.
            ast::UnaryOperator::PGSquareRoot | ast::UnaryOperator::PGCubeRoot => {
                let b = self.expr(expr, scope)?;
                let sym = if op == ast::UnaryOperator::PGSquareRoot {
                    "|/"
                } else {
                    "||/"
                };
                if b.ty.is_some_and(|t| !t.is_numeric()) {
                    return Err(Error::UndefinedFunction(format!(
                        "operator does not exist: {sym} {}",
                        type_label(b.ty)
                    )));
                }
                let x = Bound::new(self.coerce(b, DataType::Float8, sym)?, DataType::Float8);
                let func = if op == ast::UnaryOperator::PGSquareRoot {
                    ScalarFunc::Sqrt
                } else {
                    ScalarFunc::Cbrt
                };
                self.scalar(func, vec![x])
            }
            ast::UnaryOperator::PGAbs => {
                let b = self.expr(expr, scope)?;
                let b = match b.ty {
                    None => Bound::new(self.coerce(b, DataType::Float8, "@")?, DataType::Float8),
                    Some(t) if t.is_numeric() => b,
                    Some(t) => {
                        return Err(Error::UndefinedFunction(format!(
                            "operator does not exist: @ {}",
                            t.name()
                        )))
                    }
                };
                self.scalar(ScalarFunc::Abs, vec![b])
            }
            // PostgreSQL 14 removed postfix operators: `5!` no longer parses there.
            ast::UnaryOperator::PGPostfixFactorial => {
                Err(Error::Syntax("syntax error at or near \"!\"".into()))
            }
            other => Err(Error::UndefinedFunction(format!(
                "operator is not supported: {other}"
            ))),
        }
    }

    pub(super) fn unify(
        &mut self,
        a: Option<DataType>,
        b: Option<DataType>,
        ctx: &str,
    ) -> Result<Option<DataType>> {
        Ok(match (a, b) {
            (None, x) | (x, None) => x,
            (Some(x), Some(y)) => Some(select_common_type(x, y).ok_or_else(|| {
                Error::DatatypeMismatch(format!(
                    "{ctx} types {} and {} cannot be matched",
                    x.name(),
                    y.name()
                ))
            })?),
        })
    }

    pub(super) fn text_operand(&mut self, b: Bound, op: &str) -> Result<Expr> {
        match b.ty {
            None => self.coerce(b, DataType::Text, op),
            Some(t) if t.is_text() => Ok(b.expr),
            Some(t) => Err(no_operator(Some(t), op, Some(DataType::Text))),
        }
    }

    /// The two text operands of operator `op` (LIKE's `~~`, `!~~*`, the regular
    /// expression operators), unknown literals read as text. Errors: 42883 naming both
    /// operands' types as written (`integer ~~ unknown`, `unknown ~ integer`) when either
    /// is of another type.
    pub(super) fn text_operands(&mut self, l: Bound, r: Bound, op: &str) -> Result<(Expr, Expr)> {
        let other = |b: &Bound| b.ty.is_some_and(|t| !t.is_text());
        if other(&l) || other(&r) {
            return Err(no_operator(l.ty, op, r.ty));
        }
        Ok((self.text_operand(l, op)?, self.text_operand(r, op)?))
    }

    pub(super) fn time_operand(&mut self, b: Bound) -> Result<Expr> {
        match b.ty {
            None => self.coerce(b, DataType::TimestampTz, "extract"),
            Some(t) if t.is_timestamp() || t == DataType::Interval || t == DataType::Time => {
                Ok(b.expr)
            }
            // extract(field from date) reads the date's fields (none of a time of day).
            Some(DataType::Date) => Ok(b.expr),
            Some(t) => Err(Error::UndefinedFunction(format!(
                "function extract(unknown, {}) does not exist",
                t.name()
            ))),
        }
    }

    pub(super) fn binary(&mut self, op: BinaryOp, l: Bound, r: Bound) -> Result<Bound> {
        let mk = |l: Expr, r: Expr| Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        };
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let name = if op == BinaryOp::And { "AND" } else { "OR" };
                let l = self.boolean(l, name)?;
                let r = self.boolean(r, name)?;
                Ok(Bound::new(mk(l, r), DataType::Bool))
            }
            BinaryOp::Concat => {
                // PostgreSQL's `||` has text || text, text || anynonarray and
                // anynonarray || text (an unknown literal reads as text): two typed
                // operands of which neither is text have no operator.
                let typed_other = |b: &Bound| b.ty.is_some_and(|t| !t.is_text());
                if typed_other(&l) && typed_other(&r) {
                    return Err(no_operator(l.ty, "||", r.ty).with_hint(
                        "No operator matches the given name and argument types. You might need to add explicit type casts.",
                    ));
                }
                // A boolean is cast to text (`true`), as PostgreSQL's textanycat casts
                // its non-text operand; concat() renders it with its output function.
                let bool_text = |b: Bound| match b.ty {
                    Some(DataType::Bool) => Bound::new(
                        Expr::Cast {
                            expr: Box::new(b.expr),
                            to: DataType::Text,
                        },
                        DataType::Text,
                    ),
                    _ => b,
                };
                let l = self.text_cast(bool_text(l))?;
                let r = self.text_cast(bool_text(r))?;
                Ok(Bound::new(mk(l, r), DataType::Text))
            }
            BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq => {
                let ty = match (l.ty, r.ty) {
                    (None, None) => DataType::Text,
                    (Some(t), None) | (None, Some(t)) => t,
                    (Some(a), Some(b)) => common_type(a, b)
                        .ok_or_else(|| no_operator(Some(a), op_symbol(op), Some(b)))?,
                };
                // A literal compared with a character(n) is a bpchar of any length.
                let ty = match ty {
                    DataType::Bpchar(_) => DataType::Bpchar(None),
                    t => t,
                };
                // character(n) compares without its trailing blanks, as does an unknown
                // literal or a varchar beside one (PostgreSQL picks bpchar's operators for
                // them, and text's, the bpchar converted to text, against text).
                let bp = |t: Option<DataType>| matches!(t, Some(DataType::Bpchar(_)));
                let beside = |t: Option<DataType>| matches!(t, None | Some(DataType::Varchar(_)));
                let as_bpchar = (bp(l.ty) && beside(r.ty)) || (bp(r.ty) && beside(l.ty));
                let blank_padded = matches!(ty, DataType::Bpchar(_));
                let trim = |b: &Bound| match b.ty {
                    None if blank_padded => Some(ty),
                    Some(DataType::Varchar(_)) if as_bpchar => Some(DataType::Bpchar(None)),
                    t => t,
                };
                let (lt, rt) = (trim(&l), trim(&r));
                let l = bpchar_as_text(self.coerce_operand(l, ty)?, lt);
                let r = bpchar_as_text(self.coerce_operand(r, ty)?, rt);
                Ok(Bound::new(mk(l, r), DataType::Bool))
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                self.arithmetic(op, l, r)
            }
        }
    }

    /// Coerce a comparison operand: same-category values keep their own type (eval compares
    /// across numeric types); unknowns take the other side's.
    pub(super) fn coerce_operand(&mut self, b: Bound, ty: DataType) -> Result<Expr> {
        match b.ty {
            Some(t) if common_type(t, ty).is_some() => Ok(b.expr),
            _ => self.coerce(b, ty, "operator"),
        }
    }

    /// An operand of `||` or `concat()`: PostgreSQL renders non-text operands with their
    /// output function (`concat('a', true)` is `at`), which the evaluator does itself, so
    /// a typed operand stays as it is and only unknowns become text.
    pub(super) fn text_cast(&mut self, b: Bound) -> Result<Expr> {
        match b.ty {
            None => self.coerce(b, DataType::Text, "||"),
            t => Ok(bpchar_as_text(b.expr, t)),
        }
    }

    pub(super) fn arithmetic(&mut self, op: BinaryOp, l: Bound, r: Bound) -> Result<Bound> {
        use DataType as T;
        let sym = op_symbol(op);
        // Unknown operands take a type from the other side.
        let guess = |other: Option<T>| match other {
            Some(t) if t.is_datetime() || t == T::Time => Some(T::Interval),
            Some(T::Interval) if matches!(op, BinaryOp::Mul | BinaryOp::Div) => Some(T::Float8),
            Some(t) => Some(t),
            None => None,
        };
        let (lt, rt) = match (l.ty, r.ty) {
            (None, None) => return Err(operator_not_unique(sym, true)),
            (None, Some(b)) => (
                if (b.is_datetime() || b == T::Time) && op == BinaryOp::Sub {
                    Some(b)
                } else {
                    guess(Some(b))
                },
                Some(b),
            ),
            // `ts - 'text'` reads the text as the same timestamp type: PostgreSQL prefers
            // the operator whose operands match (timestamp - timestamp).
            (Some(a), None) if (a.is_datetime() || a == T::Time) && op == BinaryOp::Sub => {
                (Some(a), Some(a))
            }
            (Some(a), None) => (Some(a), guess(Some(a))),
            (a, b) => (a, b),
        };
        let (lt, rt) = (lt.expect("typed"), rt.expect("typed"));
        let l = self.coerce(l, lt, sym)?;
        let r = self.coerce(r, rt, sym)?;
        if [lt, rt].iter().any(|t| matches!(t, T::Date | T::Time)) {
            return date_arithmetic(op, (l, lt), (r, rt));
        }
        let float = |t: DataType| matches!(t, T::Float4 | T::Float8);
        let result = match (lt, rt, op) {
            // PostgreSQL has no % for floats (mod() neither).
            (a, b, BinaryOp::Mod) if float(a) || float(b) => {
                return Err(no_operator(Some(lt), sym, Some(rt)))
            }
            (a, b, _) if a.is_numeric() && b.is_numeric() => promote_numeric(a, b),
            (a, T::Interval, BinaryOp::Add | BinaryOp::Sub) if a.is_timestamp() => a,
            (T::Interval, b, BinaryOp::Add) if b.is_timestamp() => b,
            (a, b, BinaryOp::Sub) if a.is_timestamp() && b.is_timestamp() => T::Interval,
            (T::Interval, T::Interval, BinaryOp::Add | BinaryOp::Sub) => T::Interval,
            (T::Interval, b, BinaryOp::Mul | BinaryOp::Div) if b.is_numeric() => T::Interval,
            (a, T::Interval, BinaryOp::Mul) if a.is_numeric() => T::Interval,
            _ => return Err(no_operator(Some(lt), sym, Some(rt))),
        };
        Ok(Bound::new(
            Expr::Binary {
                op,
                left: Box::new(l),
                right: Box::new(r),
            },
            result,
        ))
    }

    pub(super) fn cast(&mut self, b: Bound, to: DataType) -> Result<Bound> {
        match (&b.ty, &b.expr) {
            (None, Expr::Literal(Value::Text(s))) => {
                Ok(Bound::new(Expr::Literal(parse_value(s, to)?), to))
            }
            (None, _) => Ok(Bound::new(self.coerce(b, to, "CAST")?, to)),
            (Some(t), _) if *t == to => Ok(b),
            (Some(t), _) if castable(*t, to, true) => Ok(Bound::new(
                Expr::Cast {
                    expr: Box::new(if to.is_text() && !matches!(to, DataType::Bpchar(_)) {
                        bpchar_as_text(b.expr, b.ty)
                    } else {
                        b.expr
                    }),
                    to,
                },
                to,
            )),
            (Some(t), _) => Err(Error::CannotCoerce(format!(
                "cannot cast type {} to {}",
                t.name(),
                to.name()
            ))),
        }
    }

    pub(super) fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<Bound> {
        let operand_b = operand.map(|o| self.expr(o, scope)).transpose()?;
        // PostgreSQL reads an unknown operand as text before it compares it with each
        // WHEN (`CASE 'a' WHEN 1` is text = integer: 42883).
        let operand_b = match operand_b {
            Some(b) if b.ty.is_none() => Some(Bound::new(
                self.coerce(b, DataType::Text, "CASE")?,
                DataType::Text,
            )),
            other => other,
        };
        let mut whens = Vec::new();
        let mut results = Vec::new();
        for c in conditions {
            let w = self.expr(&c.condition, scope)?;
            let w = match &operand_b {
                Some(op) => self.binary(BinaryOp::Eq, op.clone(), w)?.expr,
                None => self.boolean(w, "CASE/WHEN")?,
            };
            whens.push(w);
            results.push(self.expr(&c.result, scope)?);
        }
        let otherwise = else_result.map(|e| self.expr(e, scope)).transpose()?;
        let mut ty = None;
        // PostgreSQL resolves the ELSE result first.
        for r in otherwise.iter().chain(results.iter()) {
            ty = self.unify(ty, r.ty, "CASE")?;
        }
        let ty = ty.unwrap_or(DataType::Text);
        let mut branches = Vec::new();
        for (w, r) in whens.into_iter().zip(results) {
            branches.push((w, self.coerce(r, ty, "CASE")?));
        }
        let otherwise = otherwise
            .map(|o| self.coerce(o, ty, "CASE"))
            .transpose()?
            .map(Box::new);
        // A simple CASE was rewritten into searched form above, so no operand remains.
        Ok(Bound::new(
            Expr::Case {
                operand: None,
                branches,
                otherwise,
            },
            ty,
        ))
    }
}
