//! Predicates of the expression binder: IS [NOT] NULL, IS [NOT] TRUE/FALSE/UNKNOWN,
//! IS [NOT] DISTINCT FROM, BETWEEN, SIMILAR TO, LIKE/ILIKE (with ESCAPE), IN lists and
//! `op ANY|ALL (ARRAY[...])`, typed as PostgreSQL types them (unknown operands take the
//! other side's type).

use sqlparser::ast;

use super::*;

impl Binder<'_> {
    /// `x IS [NOT] NULL`, `a IS [NOT] DISTINCT FROM b`: boolean, never NULL.
    pub(super) fn is_null_or_distinct(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::IsNull(x) | E::IsNotNull(x) => {
                let b = self.expr(x, scope)?;
                let b = if b.ty.is_none() {
                    self.coerce(b, DataType::Text, "IS NULL")?
                } else {
                    b.expr
                };
                Ok(Bound::new(
                    Expr::IsNull {
                        expr: Box::new(b),
                        negated: matches!(e, E::IsNotNull(_)),
                    },
                    DataType::Bool,
                ))
            }
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let l = self.expr(a, scope)?;
                let r = self.expr(b, scope)?;
                let eq = self.binary(BinaryOp::NotEq, l.clone(), r.clone())?.expr;
                let (le, re) = match eq {
                    Expr::Binary {
                        ref left,
                        ref right,
                        ..
                    } => ((**left).clone(), (**right).clone()),
                    _ => unreachable!("binary() of a comparison returns a comparison"),
                };
                let isnull = |x: &Expr, negated| Expr::IsNull {
                    expr: Box::new(x.clone()),
                    negated,
                };
                let distinct = Expr::Case {
                    operand: None,
                    branches: vec![
                        (isnull(&le, false), isnull(&re, true)),
                        (isnull(&re, false), Expr::Literal(Value::Bool(true))),
                    ],
                    otherwise: Some(Box::new(eq)),
                };
                let expr = if matches!(e, E::IsDistinctFrom(..)) {
                    distinct
                } else {
                    Expr::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(distinct),
                    }
                };
                Ok(Bound::new(expr, DataType::Bool))
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// `x IS [NOT] TRUE|FALSE|UNKNOWN` of a boolean: boolean, never NULL. Errors: 42804
    /// for a non-boolean operand.
    pub(super) fn is_truth(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::IsTrue(x)
            | E::IsFalse(x)
            | E::IsNotTrue(x)
            | E::IsNotFalse(x)
            | E::IsUnknown(x)
            | E::IsNotUnknown(x) => {
                let b = self.expr(x, scope)?;
                let c = self.boolean(b, "IS")?;
                let t = |v: bool| Expr::Literal(Value::Bool(v));
                let expr = match e {
                    E::IsTrue(_) => Expr::Case {
                        operand: None,
                        branches: vec![(c, t(true))],
                        otherwise: Some(Box::new(t(false))),
                    },
                    E::IsNotTrue(_) => Expr::Case {
                        operand: None,
                        branches: vec![(c, t(false))],
                        otherwise: Some(Box::new(t(true))),
                    },
                    E::IsFalse(_) => Expr::Case {
                        operand: None,
                        branches: vec![(
                            Expr::Unary {
                                op: UnaryOp::Not,
                                expr: Box::new(c),
                            },
                            t(true),
                        )],
                        otherwise: Some(Box::new(t(false))),
                    },
                    E::IsNotFalse(_) => Expr::Case {
                        operand: None,
                        branches: vec![(
                            Expr::Unary {
                                op: UnaryOp::Not,
                                expr: Box::new(c),
                            },
                            t(false),
                        )],
                        otherwise: Some(Box::new(t(true))),
                    },
                    E::IsUnknown(_) => Expr::IsNull {
                        expr: Box::new(c),
                        negated: false,
                    },
                    _ => Expr::IsNull {
                        expr: Box::new(c),
                        negated: true,
                    },
                };
                Ok(Bound::new(expr, DataType::Bool))
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// `x [NOT] BETWEEN [SYMMETRIC] a AND b` (the comparisons' typing) and
    /// `x [NOT] SIMILAR TO pattern`.
    pub(super) fn between_or_similar(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                if let Some(e) = crate::sql::parse::unmark_between_symmetric(e) {
                    return self.expr(&e, scope);
                }
                let x = self.expr(expr, scope)?;
                let lo = self.expr(low, scope)?;
                let hi = self.expr(high, scope)?;
                let a = self.binary(BinaryOp::GtEq, x.clone(), lo)?;
                let b = self.binary(BinaryOp::LtEq, x, hi)?;
                let both = self.binary(BinaryOp::And, a, b)?;
                Ok(if *negated {
                    Bound::new(
                        Expr::Unary {
                            op: UnaryOp::Not,
                            expr: Box::new(both.expr),
                        },
                        DataType::Bool,
                    )
                } else {
                    both
                })
            }
            E::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char: None,
            } => {
                let x = self.expr(expr, scope)?;
                let p = self.expr(pattern, scope)?;
                self.pattern_match(ScalarFunc::SimilarTo, "SIMILAR TO", *negated, x, p)
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// `x [NOT] LIKE|ILIKE pattern [ESCAPE esc]` of text operands (42883 otherwise).
    pub(super) fn like(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Like {
                negated,
                expr,
                pattern,
                escape_char,
                ..
            }
            | E::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                ..
            } => {
                let case_insensitive = matches!(e, E::ILike { .. });
                if let Some((all, array)) = like_quantifier(e) {
                    if let Some(esc) = escape_char {
                        // PostgreSQL's grammar has no ESCAPE after LIKE ANY|ALL (...).
                        return Err(Error::Syntax(format!("syntax error at or near \"{esc}\"")));
                    }
                    let op = Quantified::Like {
                        negated: *negated,
                        case_insensitive,
                    };
                    return self.quantified(expr, op, array, all, scope);
                }
                let x = self.expr(expr, scope)?;
                let mut p = self.expr(pattern, scope)?;
                if let Some(esc) = escape_char {
                    // The evaluator's LIKE escapes with a backslash, PostgreSQL's default.
                    let esc = self.expr(esc, scope)?;
                    p = self.scalar(ScalarFunc::LikeEscape, vec![p, esc])?;
                }
                let symbol = Quantified::Like {
                    negated: *negated,
                    case_insensitive,
                }
                .symbol();
                let (x, p) = self.text_operands(x, p, symbol)?;
                Ok(Bound::new(
                    Expr::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        negated: *negated,
                        case_insensitive,
                    },
                    DataType::Bool,
                ))
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// `x [NOT] IN (a, b, ...)`: the operand and the items unified to one type (42804
    /// when none exists); a single item is `x = a` (`x <> a`), as PostgreSQL reads it.
    pub(super) fn in_list(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::In {
                expr,
                target,
                negated,
                ..
            } => {
                let ast::InTarget::List(list) = target else {
                    return Err(unsupported("IN (subquery) is not supported"));
                };
                let param = |e: &ast::Expr| matches!(e, E::Value(v) if matches!(v.value, ast::Value::Placeholder(_)));
                match list.as_slice() {
                    // PostgreSQL reads `x IN (y)` as `x = y` (and NOT IN as `<>`): the
                    // operator's own rules, as for `'abc '::varchar IN ('abc'::char(5))`.
                    // A parameter keeps the list's typing (its declared type unified with
                    // the operand's), which clients' catalog queries bind against.
                    [only] if !param(only) && !param(expr) => {
                        let op = if *negated {
                            ast::BinaryOperator::NotEq
                        } else {
                            ast::BinaryOperator::Eq
                        };
                        let eq = E::BinaryOp {
                            left: expr.clone(),
                            op,
                            right: Box::new(only.clone()),
                        };
                        return self.expr(&eq, scope);
                    }
                    _ => {}
                }
                let x = self.expr(expr, scope)?;
                let items: Vec<Bound> = list
                    .iter()
                    .map(|i| self.expr(i, scope))
                    .collect::<Result<_>>()?;
                let mut ty = x.ty;
                for i in &items {
                    ty = self.unify(ty, i.ty, "IN")?;
                }
                let ty = match ty.unwrap_or(DataType::Text) {
                    // character(n) compares without its trailing blanks, as do the
                    // literals read as one.
                    DataType::Bpchar(_) => DataType::Bpchar(None),
                    t => t,
                };
                let x = bpchar_as_text(self.coerce(x, ty, "IN")?, Some(ty));
                let list = items
                    .into_iter()
                    .map(|i| Ok(bpchar_as_text(self.coerce(i, ty, "IN")?, Some(ty))))
                    .collect::<Result<_>>()?;
                Ok(Bound::new(
                    Expr::InList {
                        expr: Box::new(x),
                        list,
                        negated: *negated,
                    },
                    DataType::Bool,
                ))
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// `x op ANY|ALL (ARRAY[a, b, ...])`: the elements (nested constructors flattened: a
    /// multidimensional array, whose scalars ANY and ALL read) unified to one type (text
    /// when all are unknown), as PostgreSQL types the array, each compared with `x` by
    /// `op`, ANY their OR and ALL their AND (SQL's NULL rules are those of ANY and ALL).
    /// Errors: 42P18 for an empty array, 42804 for elements of no common type or of mixed
    /// dimensions, 2202E for sub-arrays of different lengths, 42883 for `x` and elements
    /// of no common comparison (an array `x`: no operator compares an array with its
    /// elements), 0A000 for an array that is not a constructor (a plan builder with arrays
    /// claims those as leaves), for an element that is an array value and for other
    /// operators.
    pub(super) fn any_all(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        let (left, compare_op, right, all) = match e {
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => (left, compare_op, right, false),
            E::AllOp {
                left,
                compare_op,
                right,
            } => (left, compare_op, right, true),
            other => return Err(unsupported(format!("expression is not supported: {other}"))),
        };
        let quantifier = if all { "ALL" } else { "ANY" };
        let op = quantified_operator(compare_op)
            .ok_or_else(|| unsupported(format!("{compare_op} {quantifier} is not supported")))?;
        self.quantified(left, op, right, all, scope)
    }

    /// `left op ANY|ALL (right)` ([`Self::any_all`]), also for `LIKE ANY|ALL (...)`.
    fn quantified(
        &mut self,
        left: &ast::Expr,
        op: Quantified,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
    ) -> Result<Bound> {
        use ast::Expr as E;
        let quantifier = if all { "ALL" } else { "ANY" };
        let array = match unnested(right) {
            E::Array(a) => Ok(a),
            // `x LIKE ALL (SELECT ...)` reaches here as ALL (ARRAY(SELECT ...)).
            E::Subquery(_) => return Err(unsupported("subqueries are not supported")),
            E::Function(f) if matches!(f.args, ast::FunctionArguments::Subquery(_)) => {
                return Err(unsupported("subqueries are not supported"))
            }
            E::Cast {
                expr,
                data_type: ast::DataType::Array(elem),
                ..
            } if matches!(unnested(expr), E::Array(a) if a.elem.is_empty()) => {
                // `ARRAY[]::t[]`: ANY over no element is false and ALL true, whatever
                // `left` is (NULL too), once `op` applies to `left` and a `t`.
                let x = self.expr(left, scope)?;
                let t = type_from_name(&elem_name(elem).unwrap_or_default())?;
                self.empty_array_operand(x, op, t)?;
                return Ok(Bound::new(Expr::Literal(Value::Bool(all)), DataType::Bool));
            }
            other => match constant_array(other) {
                Some(c) => Err(c),
                None => {
                    if let Some(b) = self.row_array_quantified(left, op, other, all, scope)? {
                        return Ok(b);
                    }
                    return Err(unsupported(format!(
                    "{quantifier} over an array value other than ARRAY[...] or a constant ('{{a,b}}'::text[]) is not supported"
                )));
                }
            },
        };
        let symbol = op.symbol();
        // PostgreSQL transforms both operands before it looks the operator up.
        let (x, x_array) = match unnested(left) {
            E::Array(a) => {
                let (_, t) = self.array_scalars(a, scope)?;
                (None, Some(format!("{}[]", t.name())))
            }
            _ => {
                let x = self.expr(left, scope)?;
                let t = self.array_leaf_type(&x);
                (Some(x), t)
            }
        };
        let (elems, ty) = match array {
            Ok(a) => self.array_scalars(a, scope)?,
            Err((text, elem)) => {
                let elem = match elem {
                    Some(name) => Some(type_from_name(&name)?),
                    None => None,
                };
                // An untyped literal is an array of the left operand's type.
                let ty = elem
                    .or(x.as_ref().and_then(|x| x.ty))
                    .unwrap_or(DataType::Text);
                let elems = crate::exec::array_nd::parse_nd(&text)?.elems;
                if elems.is_empty() {
                    if let Some(x) = x {
                        self.empty_array_operand(x, op, ty)?;
                    }
                    return Ok(Bound::new(Expr::Literal(Value::Bool(all)), DataType::Bool));
                }
                let elems = elems.into_iter().map(|e| Bound {
                    expr: Expr::Literal(e.map_or(Value::Null, |s| Value::Text(s.into()))),
                    ty: None,
                });
                (elems.collect(), ty)
            }
        };
        let x = match (x, x_array) {
            (Some(x), None) => x,
            (_, Some(array_type)) => {
                return Err(Error::UndefinedFunction(format!(
                    "operator does not exist: {array_type} {symbol} {}",
                    ty.name()
                ))
                .with_hint(
                    "No operator matches the given name and argument types. You might need to add explicit type casts.",
                ))
            }
            (None, None) => unreachable!("an operand that is no constructor is bound"),
        };
        let join = if all { BinaryOp::And } else { BinaryOp::Or };
        let mut out: Option<Bound> = None;
        for el in elems {
            let el = Bound::new(self.coerce(el, ty, "ARRAY")?, ty);
            let cmp = match op {
                Quantified::Cmp(op, _) => self.binary(op, x.clone(), el)?,
                Quantified::Like {
                    negated,
                    case_insensitive,
                } => {
                    if x.ty.is_some_and(|t| !t.is_text()) || !ty.is_text() {
                        return Err(no_operator(x.ty, symbol, Some(ty)));
                    }
                    Bound::new(
                        Expr::Like {
                            expr: Box::new(self.text_operand(x.clone(), symbol)?),
                            pattern: Box::new(self.text_operand(el, symbol)?),
                            negated,
                            case_insensitive,
                        },
                        DataType::Bool,
                    )
                }
            };
            out = Some(match out {
                None => cmp,
                Some(acc) => self.binary(join, acc, cmp)?,
            });
        }
        Ok(out.expect("a non-empty array"))
    }

    /// Checks that `op` applies to `x` and an element of type `elem` of an empty array
    /// (`x op ANY (ARRAY[]::elem[])`), as PostgreSQL resolves the operator before it
    /// reads the array. Errors: 42883 when it does not (`1 LIKE ANY (ARRAY[]::text[])`),
    /// 42704 for an unknown type name.
    fn empty_array_operand(&mut self, x: Bound, op: Quantified, ty: DataType) -> Result<()> {
        let el = Bound::new(Expr::Literal(Value::Null), ty);
        match op {
            Quantified::Cmp(op, _) => self.binary(op, x, el).map(|_| ()),
            Quantified::Like { .. } => self.text_operands(x, el, op.symbol()).map(|_| ()),
        }
    }

    /// The scalars of the constructor `a` in order, nested constructors flattened (the
    /// elements of a multidimensional array), each bound, and their common type (text
    /// when all are unknown). Errors: 42P18 for no scalar at all, 42804 for scalars of no
    /// common type or elements of mixed dimensions (`ARRAY[ARRAY[1], 2]`), 2202E for
    /// sub-arrays of different shapes, 0A000 for an element that is an array value (a
    /// multidimensional array tcq does not build).
    fn array_scalars(&mut self, a: &ast::Array, scope: &Scope) -> Result<(Vec<Bound>, DataType)> {
        let mut elems = Vec::new();
        self.flatten_array(a, scope, &mut elems)?;
        if elems.is_empty() {
            return Err(Error::IndeterminateDatatype(
                "cannot determine type of empty array".into(),
            )
            .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."));
        }
        let mut ty = None;
        for el in &elems {
            ty = self.unify(ty, el.ty, "ARRAY")?;
        }
        Ok((elems, ty.unwrap_or(DataType::Text)))
    }

    /// Appends the scalars of constructor `a` to `out` (see [`Self::array_scalars`]) and
    /// gives its shape: its length, then the shape of its sub-arrays.
    fn flatten_array(
        &mut self,
        a: &ast::Array,
        scope: &Scope,
        out: &mut Vec<Bound>,
    ) -> Result<Vec<usize>> {
        // The shape of the elements so far, and the first element's first scalar.
        let mut inner: Option<(Vec<usize>, usize)> = None;
        for el in &a.elem {
            let start = out.len();
            let shape = match unnested(el) {
                ast::Expr::Array(sub) => self.flatten_array(sub, scope, out)?,
                _ => {
                    let b = self.expr(el, scope)?;
                    if self.array_leaf_type(&b).is_some() {
                        return Err(unsupported("multidimensional arrays are not supported"));
                    }
                    out.push(b);
                    Vec::new()
                }
            };
            match &inner {
                None => inner = Some((shape, start)),
                Some((first, at)) if first.len() != shape.len() => {
                    let name = |i: usize, dims: usize| {
                        let t = out.get(i).and_then(|b| b.ty).unwrap_or(DataType::Text);
                        format!("{}{}", t.name(), "[]".repeat(dims))
                    };
                    return Err(Error::DatatypeMismatch(format!(
                        "ARRAY types {} and {} cannot be matched",
                        name(*at, first.len()),
                        name(start, shape.len())
                    )));
                }
                Some((first, _)) if *first != shape => return Err(Error::ArraySubscript(
                    "multidimensional arrays must have array expressions with matching dimensions"
                        .into(),
                )),
                Some(_) => {}
            }
        }
        let mut shape = vec![a.elem.len()];
        shape.extend(inner.map(|(s, _)| s).unwrap_or_default());
        Ok(shape)
    }
}

/// `e` without its parentheses.
fn unnested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(x) => unnested(x),
        other => other,
    }
}

/// The operator of `x op ANY|ALL (ARRAY[...])`, applied to `x` and each element.
#[derive(Clone, Copy)]
pub(super) enum Quantified {
    /// A comparison and its symbol.
    Cmp(BinaryOp, &'static str),
    /// `[NOT] LIKE` (`~~`, `!~~`) or `[NOT] ILIKE` (`~~*`, `!~~*`).
    Like {
        negated: bool,
        case_insensitive: bool,
    },
}

impl Quantified {
    /// The operator's symbol in PostgreSQL's messages.
    pub(super) fn symbol(self) -> &'static str {
        match self {
            Quantified::Cmp(_, s) => s,
            Quantified::Like {
                negated,
                case_insensitive,
            } => match (negated, case_insensitive) {
                (false, false) => "~~",
                (true, false) => "!~~",
                (false, true) => "~~*",
                (true, true) => "!~~*",
            },
        }
    }
}

/// The operator `op` applies to each element of `x op ANY|ALL (...)`, if it is one tcq
/// quantifies: a comparison, or LIKE's and ILIKE's operators (`~~`, `!~~*`, ...).
fn quantified_operator(op: &ast::BinaryOperator) -> Option<Quantified> {
    use ast::BinaryOperator as B;
    let like = |negated, case_insensitive| {
        Some(Quantified::Like {
            negated,
            case_insensitive,
        })
    };
    match op {
        B::PGLikeMatch => like(false, false),
        B::PGNotLikeMatch => like(true, false),
        B::PGILikeMatch => like(false, true),
        B::PGNotILikeMatch => like(true, true),
        _ => comparison_operator(op).map(|(op, symbol)| Quantified::Cmp(op, symbol)),
    }
}

/// Whether `e` is `x [NOT] LIKE|ILIKE ANY|SOME|ALL (array)`: whether it is ALL, and the
/// array expression. (The parser reads `LIKE ANY (a)` itself and `LIKE ALL (a)` as a
/// call of a function `all`, a name PostgreSQL reserves.)
pub(crate) fn like_quantifier(e: &ast::Expr) -> Option<(bool, &ast::Expr)> {
    let (ast::Expr::Like { any, pattern, .. } | ast::Expr::ILike { any, pattern, .. }) = e else {
        return None;
    };
    if *any {
        return Some((false, pattern));
    }
    let ast::Expr::Function(f) = &**pattern else {
        return None;
    };
    let [ast::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return None;
    };
    let all = match name.value.to_ascii_lowercase().as_str() {
        _ if name.quote_style.is_some() => return None,
        "all" => true,
        "any" | "some" => false,
        _ => return None,
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let plain = list.duplicate_treatment.is_none()
        && list.clauses.is_empty()
        && f.filter.is_none()
        && f.over.is_none()
        && f.within_group.is_empty();
    match list.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(array))] if plain => {
            Some((all, array))
        }
        _ => None,
    }
}

/// The element type's name of an array type (`text` of `text[]`), if written.
pub(super) fn elem_name(elem: &ast::ArrayElemTypeDef) -> Option<String> {
    match elem {
        ast::ArrayElemTypeDef::AngleBracket(t)
        | ast::ArrayElemTypeDef::SquareBracket(t, _)
        | ast::ArrayElemTypeDef::Parenthesis(t)
        | ast::ArrayElemTypeDef::ParenthesisNotNull(t)
        | ast::ArrayElemTypeDef::Qualified(t, _) => Some(t.to_string()),
        ast::ArrayElemTypeDef::None => None,
    }
}

/// A constant array the right side of `x op ANY|ALL (...)` may be: its text form and
/// element type's name, if written: `'{a,b}'::text[]`, `CAST('{1,2}' AS integer[])`,
/// or an untyped `'{a,b}'` (of the left operand's type). `None` for any
/// other expression.
fn constant_array(e: &ast::Expr) -> Option<(String, Option<String>)> {
    let text = |e: &ast::Expr| match unnested(e) {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                Some(s.clone())
            }
            _ => None,
        },
        _ => None,
    };
    match e {
        ast::Expr::Cast {
            expr,
            data_type: ast::DataType::Array(elem),
            ..
        } => Some((text(expr)?, Some(elem_name(elem)?))),
        e => Some((text(e)?, None)),
    }
}

/// The comparison `op` is, if it is one, and its symbol in PostgreSQL's messages.
fn comparison_operator(op: &ast::BinaryOperator) -> Option<(BinaryOp, &'static str)> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::Eq => (BinaryOp::Eq, "="),
        B::NotEq => (BinaryOp::NotEq, "<>"),
        B::Lt => (BinaryOp::Lt, "<"),
        B::LtEq => (BinaryOp::LtEq, "<="),
        B::Gt => (BinaryOp::Gt, ">"),
        B::GtEq => (BinaryOp::GtEq, ">="),
        _ => return None,
    })
}
