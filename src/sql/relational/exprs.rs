//! The leaves of expressions this plan builder binds itself (the expression binder
//! walks the rest): column references by level, subqueries (IN, EXISTS, scalar, ANY/ALL),
//! casts to catalog types, field access, row comparisons and typed templates.

use super::*;

impl RelBinder<'_> {
    /// Bind a scalar expression in the innermost level.
    pub(super) fn expr(&mut self, e: &ast::Expr) -> Result<RExpr> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(Error::StatementTooComplex(
                "stack depth limit exceeded: the expression is nested too deeply".into(),
            ));
        }
        let r = crate::sql::deep(|| self.expr_inner(e));
        self.depth -= 1;
        r
    }

    /// [`Self::resolve`], with PostgreSQL's hint for a misspelled column.
    pub(super) fn resolve_hinted(&self, parts: &[String]) -> Result<RExpr> {
        self.resolve(parts).map_err(|e| {
            if !matches!(e, Error::UndefinedColumn(_)) {
                return e;
            }
            let col = parts.last().map(String::as_str).unwrap_or("");
            let qual = (parts.len() > 1).then(|| parts[parts.len() - 2].as_str());
            let candidates: Vec<(String, String)> = self
                .levels
                .iter()
                .flat_map(|l| l.rels.iter())
                .filter(|r| qual.is_none_or(|q| q == r.alias))
                .flat_map(|r| r.columns.iter().map(|c| (r.alias.clone(), c.clone())))
                .collect();
            let near = crate::sql::bind::closest(col, candidates.iter().map(|(_, c)| c.as_str()));
            match near.and_then(|n| candidates.iter().find(|(_, c)| c == n)) {
                Some((alias, c)) if !alias.is_empty() => e.with_hint(format!(
                    "Perhaps you meant to reference the column \"{alias}.{c}\"."
                )),
                Some((_, c)) => e.with_hint(format!(
                    "Perhaps you meant to reference the column \"{c}\"."
                )),
                None => e,
            }
        })
    }

    pub(super) fn resolve(&self, parts: &[String]) -> Result<RExpr> {
        let (qual, col) = match parts {
            [c] => (None, c.as_str()),
            [q, c] => (Some(q.as_str()), c.as_str()),
            [_, q, c] => (Some(q.as_str()), c.as_str()),
            _ => {
                return Err(Error::UndefinedColumn(format!(
                    "improper qualified name: {}",
                    parts.join(".")
                )))
            }
        };
        for (up, level) in self.levels.iter().rev().enumerate() {
            // A name two columns of one level answer to is ambiguous (42702): two
            // relations' columns, or two of one subquery's (`SELECT 1 AS a, 2 AS a`).
            let owners: usize = level
                .rels
                .iter()
                .filter(|r| qual.is_none_or(|q| q == r.alias))
                .map(|r| {
                    r.columns
                        .iter()
                        .enumerate()
                        .filter(|(i, c)| *c == col && (qual.is_some() || !r.hidden[*i]))
                        .count()
                })
                .sum();
            if owners > 1 {
                return Err(Error::AmbiguousColumn(format!(
                    "column reference \"{col}\" is ambiguous"
                )));
            }
            for r in &level.rels {
                if qual.is_some_and(|q| q != r.alias) {
                    continue;
                }
                if let Some(i) = r.columns.iter().position(|c| c == col) {
                    if qual.is_none() && r.hidden[i] {
                        continue;
                    }
                    let idx = r.offset + i;
                    let span = level
                        .refs
                        .get()
                        .map_or((idx, idx), |(a, b)| (a.min(idx), b.max(idx)));
                    level.refs.set(Some(span));
                    // Read by a subquery of a grouped list (not inside one of the
                    // subquery's aggregates, which makes an outer aggregate).
                    let in_agg = self.levels.iter().rev().take(up + 1).any(|l| l.in_agg);
                    if up > 0 && level.agg_ok && !in_agg {
                        level.sub_refs.borrow_mut().push(idx);
                    }
                    return Ok(RExpr::Col { up, idx });
                }
                if let (Some(t), "tableoid") = (&r.table, col) {
                    return Ok(RExpr::Cast(
                        Box::new(RExpr::Lit(Value::Text(t.as_str().into()))),
                        RType::Reg(RegKind::Class),
                    ));
                }
            }
            if let Some(q) = qual {
                if level.rels.iter().any(|r| r.alias == q) {
                    return Err(Error::UndefinedColumn(format!(
                        "column {q}.{col} does not exist"
                    )));
                }
            }
        }
        match qual {
            Some(q)
                if !self
                    .levels
                    .iter()
                    .any(|l| l.rels.iter().any(|r| r.alias == q)) =>
            {
                Err(Error::MissingFromEntry(q.to_string()))
            }
            _ => Err(Error::UndefinedColumn(format!(
                "column \"{}\" does not exist",
                parts.join(".")
            ))),
        }
    }

    pub(super) fn subquery(&mut self, q: &ast::Query) -> Result<RelQuery> {
        self.query(q)
    }

    pub(super) fn template(&self, expr: Expr, args: Vec<RExpr>) -> RExpr {
        RExpr::Template { expr, args }
    }

    /// `args` as operands of the expression binder ([`crate::sql::bind::type_scalar`]): a
    /// literal or parameter as written (so an unknown literal takes its type from the
    /// call, as in PostgreSQL), anything else as column `i` of the template's argument
    /// row, typed by its static type (catalog types as the type they are held as).
    pub(super) fn operands(&self, args: &[RExpr]) -> Vec<crate::sql::bind::Operand> {
        args.iter()
            .enumerate()
            .map(|(i, a)| self.operand(a, i))
            .collect()
    }

    /// The type of `generate_series(args)` over arguments [`Self::series_args`] cast:
    /// its start's.
    pub(super) fn series_type(&self, args: &[RExpr]) -> RType {
        args.first()
            .map_or(RType::Base(DataType::Int8), |a| self.static_type(a))
    }

    /// The arguments of `generate_series` cast to the overload they resolve to
    /// (`generate_series('2001-01-01'::timestamp, '2001-01-03', '1 day')` is the timestamp
    /// one). Errors: 42883 and 42725 as [`series::series_signature`] gives them.
    pub(super) fn series_args(&mut self, args: Vec<RExpr>) -> Result<Vec<RExpr>> {
        let types: Vec<RType> = args.iter().map(|a| self.static_type(a)).collect();
        let sig = series::series_signature(&types)?;
        Ok(args
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let to = if i < 2 { sig.values } else { sig.step };
                self.conformed(a, RType::Base(to))
            })
            .collect())
    }

    /// A template whose result the expression binder typed `ty`: a cast to `ty` on top
    /// (a no-op at run time) carries the type to [`Self::static_type`].
    pub(super) fn typed_template(&self, expr: Expr, ty: DataType, args: Vec<RExpr>) -> RExpr {
        let expr = match expr {
            e @ Expr::Cast { .. } => e,
            e => Expr::Cast {
                expr: Box::new(e),
                to: ty,
            },
        };
        RExpr::Template { expr, args }
    }

    /// `e` bound by the expression binder when it walks `e` (see `walk`), else as one of
    /// this builder's own nodes, a leaf of the walked expressions: column references,
    /// subqueries (scalar, EXISTS, IN, ANY/ALL, ARRAY(...)), ANY/ALL over an array value,
    /// casts to catalog types, ARRAY[...], subscripts and field selections, row
    /// comparisons and function calls.
    pub(super) fn expr_inner(&mut self, e: &ast::Expr) -> Result<RExpr> {
        if let ast::Expr::BinaryOp { left, op, right } = e {
            if let Some(like) = crate::sql::bind::like_of_operator(left, op, right) {
                return self.expr(&like);
            }
        }
        if let Some(any) = like_as_any(e)? {
            return self.expr(&any);
        }
        if let Some(or) = row_in_list(e) {
            return self.expr(&or);
        }
        if Self::is_walked(e) {
            return self.walk(e);
        }
        Ok(match e {
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => self.column(e)?,
            ast::Expr::AnyOp { .. } | ast::Expr::AllOp { .. } => self.any_all(e)?,
            ast::Expr::Cast { .. } | ast::Expr::TypedString(_) => self.catalog_cast(e)?,
            ast::Expr::CompoundFieldAccess { .. } => self.field_access(e)?,
            ast::Expr::In {
                expr,
                target,
                negated,
                ..
            } => {
                let l = self.expr(expr)?;
                match target {
                    ast::InTarget::Subquery(q) => self.any_sub(l, CmpOp::Eq, q, false, *negated)?,
                    other => return Err(unsupported(format!("IN {other:?}"))),
                }
            }
            ast::Expr::BinaryOp { left, op, right } => self.binary(left, op, right)?,
            ast::Expr::Exists { subquery, negated } => {
                RExpr::Exists(Box::new(self.subquery(subquery)?), *negated)
            }
            ast::Expr::Subquery(q) => {
                let q = self.subquery(q)?;
                if q.columns.len() != 1 {
                    return Err(Error::Syntax("subquery must return only one column".into()));
                }
                RExpr::ScalarSub(Box::new(q))
            }
            ast::Expr::Array(a) => {
                let elems: Vec<RExpr> =
                    a.elem.iter().map(|x| self.expr(x)).collect::<Result<_>>()?;
                let to = self.resolved_type("ARRAY", elems.iter())?;
                match array_elem(to) {
                    // Arrays of arrays: one more dimension, of their common type.
                    Some(_) => self.nested_array(elems)?,
                    None => {
                        RExpr::Array(elems.into_iter().map(|e| self.conformed(e, to)).collect())
                    }
                }
            }
            ast::Expr::Function(f) => self.function(f)?,
            // A row constructor as a value (`count(DISTINCT (a, b))`) is ROW(a, b).
            ast::Expr::Tuple(items) if items.len() > 1 => self.function(&row_call(items))?,
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// A column reference, resolved through the levels (with a hint for a near miss);
    /// errors carry the name's position.
    pub(super) fn column(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            ast::Expr::Identifier(id) => {
                let at = crate::sql::parse::Lines::new(self.source).position(id.span.start);
                self.resolve_hinted(&[norm(id)]).map_err(|e| e.at(at))?
            }
            ast::Expr::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(norm).collect();
                let at = ids
                    .first()
                    .map(|i| crate::sql::parse::Lines::new(self.source).position(i.span.start));
                self.resolve_hinted(&parts).map_err(|e| match at {
                    Some(p) => e.at(p),
                    None => e,
                })?
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// `x op ANY|ALL (subquery)` (`RExpr::AnySub`), or over an array value
    /// (`RExpr::AnyArray`; over ARRAY[...] the expression binder binds it).
    pub(super) fn any_all(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            ast::Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | ast::Expr::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, ast::Expr::AllOp { .. });
                let op = any_op(compare_op)
                    .ok_or_else(|| unsupported(format!("{compare_op} ANY is not supported")))?;
                let l = self.expr(left)?;
                let inner = match &**right {
                    ast::Expr::Nested(x) => &**x,
                    x => x,
                };
                match (inner, op) {
                    (ast::Expr::Subquery(q), AnyOp::Cmp(op)) => {
                        self.any_sub(l, op, q, all, false)?
                    }
                    // LIKE has no subquery form of its own: ANY|ALL over the
                    // array of the subquery's rows is the same test.
                    (ast::Expr::Subquery(q), AnyOp::Like { .. }) => {
                        let query = self.subquery(q)?;
                        one_column(&query)?;
                        let array = RExpr::ArraySub(Box::new(query));
                        RExpr::AnyArray {
                            left: Box::new(self.like_array_operand(l, compare_op, &array)?),
                            op,
                            array: Box::new(array),
                            all,
                        }
                    }
                    (other, _) => {
                        let array = self.expr(other)?;
                        let l = match op {
                            AnyOp::Cmp(c) => self.any_array_operand(l, c, &array)?,
                            AnyOp::Like { .. } => self.like_array_operand(l, compare_op, &array)?,
                        };
                        RExpr::AnyArray {
                            left: Box::new(l),
                            op,
                            array: Box::new(array),
                            all,
                        }
                    }
                }
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// The left operand of `l op ANY|ALL (array)` over an array value, checked as
    /// PostgreSQL resolves the operator between `l` and the array's element type: an
    /// unknown literal `l` is read as the element type (22P02 when evaluated, for text that is
    /// no such value). Errors: 42809 for a right side that is no array, 42883 for an `l`
    /// no `op` compares with the elements (an array `l` among them: no operator
    /// compares an array with its elements).
    fn any_array_operand(&mut self, l: RExpr, op: CmpOp, array: &RExpr) -> Result<RExpr> {
        let (lt, at) = (self.static_type(&l), self.static_type(array));
        if at == RType::Unknown {
            // An array literal is read as an array of the left side's type now, every
            // element checked (22P02), as PostgreSQL reads a constant before any row.
            if let (RExpr::Lit(Value::Text(s)), RType::Base(d)) = (array, lt) {
                for el in crate::exec::array_nd::parse_nd(s)?
                    .elems
                    .into_iter()
                    .flatten()
                {
                    crate::expr::cast_value(Value::Text(el.into()), d)?;
                }
            }
            return Ok(l);
        }
        let Some(et) = at.elem() else {
            return Err(Error::WrongObjectType(
                "op ANY/ALL (array) requires array on right side".into(),
            ));
        };
        if let (RExpr::Lit(_), RType::Unknown, RType::Base(d)) = (&l, lt, et) {
            return Ok(self.cast(l, RType::Base(d)));
        }
        let comparable = match (lt, et) {
            (RType::Unknown, _) => true,
            (l, _) if l.is_array() => false,
            (RType::Base(a), RType::Base(b)) => crate::sql::types::common_type(a, b).is_some(),
            // Catalog scalars (oid, name, "char", reg*) compare as they are held.
            _ => true,
        };
        if comparable {
            return Ok(l);
        }
        Err(Error::UndefinedFunction(format!(
            "operator does not exist: {} {} {}",
            lt.name(),
            op.symbol(),
            et.name()
        ))
        .with_hint(
            "No operator matches the given name and argument types. You might need to add explicit type casts.",
        ))
    }

    /// The left operand of `l [NOT] LIKE|ILIKE ANY|ALL (array)` (`op` its operator) over
    /// an array value: both sides are text (an unknown literal reads as text, a `name`
    /// as its text). Errors:
    /// 42883 for an operand of another type, 42809 for a right side that is no array.
    fn like_array_operand(
        &mut self,
        l: RExpr,
        op: &ast::BinaryOperator,
        array: &RExpr,
    ) -> Result<RExpr> {
        let (lt, at) = (self.static_type(&l), self.static_type(array));
        let et = match at {
            RType::Unknown => RType::Unknown,
            at => at.elem().ok_or_else(|| {
                Error::WrongObjectType("op ANY/ALL (array) requires array on right side".into())
            })?,
        };
        // Text, an unknown literal, or a catalog scalar (`name` has LIKE too).
        let text = |t: RType| !t.is_array() && !matches!(t, RType::Base(d) if !d.is_text());
        if text(lt) && text(et) {
            return Ok(l);
        }
        Err(Error::UndefinedFunction(format!(
            "operator does not exist: {} {op} {}",
            lt.name(),
            et.name()
        ))
        .with_hint(
            "No operator matches the given name and argument types. You might need to add explicit type casts.",
        ))
    }

    /// A cast or typed literal of a catalog type (reg*, oid, arrays, name): the
    /// expression binder casts to the plain types.
    pub(super) fn catalog_cast(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            // Casts to a catalog type (reg*, oid, arrays, name): the expression binder
            // casts to the plain types (see `walk::plain_type`).
            ast::Expr::Cast {
                expr, data_type, ..
            } => {
                let written = data_type.to_string();
                let to = rtype_of_name(&written)?;
                let inner = self.expr(expr)?;
                self.explicit_cast(inner, to, &written)?
            }
            ast::Expr::TypedString(ts) => {
                let to = rtype_of_name(&ts.data_type.to_string())?;
                let inner = self.value(&ts.value.value)?;
                self.cast(inner, to)
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// `a[i]` and `(record).field`, after the leading dots of a qualified column name.
    pub(super) fn field_access(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            ast::Expr::CompoundFieldAccess { root, access_chain } => {
                // `tmp.col[i]` arrives as root `tmp` with `.col` then `[i]`: the leading
                // dots of a name are a qualified column, not field selections.
                let names = match root.as_ref() {
                    ast::Expr::Identifier(id) => vec![id.clone()],
                    ast::Expr::CompoundIdentifier(ids) => ids.clone(),
                    _ => vec![],
                };
                let dots = access_chain
                    .iter()
                    .take_while(|a| matches!(a, ast::AccessExpr::Dot(ast::Expr::Identifier(_))))
                    .count();
                let (mut acc, rest) = if names.is_empty() || dots == 0 {
                    (self.expr(root)?, &access_chain[..])
                } else {
                    let mut ids = names;
                    for a in &access_chain[..dots] {
                        if let ast::AccessExpr::Dot(ast::Expr::Identifier(id)) = a {
                            ids.push(id.clone());
                        }
                    }
                    let compound = ast::Expr::CompoundIdentifier(ids);
                    (self.expr(&compound)?, &access_chain[dots..])
                };
                for a in rest {
                    match a {
                        ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => {
                            acc = RExpr::Subscript(Box::new(acc), Box::new(self.expr(index)?));
                        }
                        // `a[lo:hi]`, either bound left out: the evaluator's array_slice.
                        ast::AccessExpr::Subscript(ast::Subscript::Slice {
                            lower_bound,
                            upper_bound,
                            stride: None,
                        }) => {
                            let mut bound = |b: &Option<ast::Expr>, open: i64| match b {
                                Some(e) => self.expr(e),
                                None => Ok(RExpr::Lit(Value::Int8(open))),
                            };
                            let lo = bound(lower_bound, i64::MIN)?;
                            let hi = bound(upper_bound, i64::MAX)?;
                            acc = RExpr::Func("array_slice".into(), vec![acc, lo, hi]);
                        }
                        // `(record).field` of a record whose fields are known (pgjdbc's
                        // key queries read `(_pg_expandarray(indkey)).n`).
                        ast::AccessExpr::Dot(ast::Expr::Identifier(field)) => {
                            let name = norm(field);
                            let RType::Record(fields) = self.static_type(&acc) else {
                                return Err(Error::FeatureNotSupported(format!(
                                    "field selection (.{name}) is only supported on the \
                                     records of _pg_expandarray()"
                                )));
                            };
                            let Some(i) = fields.iter().position(|f| f.0 == name) else {
                                return Err(Error::UndefinedColumn(format!(
                                    "could not identify column \"{name}\" in record data type"
                                )));
                            };
                            let get = RExpr::Func(
                                "record_field".into(),
                                vec![acc, RExpr::Lit(Value::Int4(i as i32))],
                            );
                            acc = self.cast(get, RType::Base(fields[i].1));
                        }
                        _ => return Err(unsupported("this field access is not supported")),
                    }
                }
                acc
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// `l op ANY|ALL (q)`, `l [NOT] IN (q)`: the operand and the subquery's column compare
    /// by PostgreSQL's bpchar rules ([`Self::bpchar_operand`]); a subquery column to trim
    /// is trimmed in its SELECT list (a set operation's column is compared as it is).
    pub(super) fn any_sub(
        &mut self,
        l: RExpr,
        op: CmpOp,
        q: &ast::Query,
        all: bool,
        negated: bool,
    ) -> Result<RExpr> {
        let mut query = self.subquery(q)?;
        one_column(&query)?;
        let lt = self.static_type(&l);
        let rt = query.columns.first().map_or(RType::Unknown, |c| c.1);
        sub_comparable(lt, op, rt)?;
        let left = self.bpchar_operand(l, lt, rt);
        if let RelBody::Select(sel) = &mut query.body {
            if let [only] = &mut sel.projection[..] {
                let e = std::mem::replace(only, RExpr::Lit(Value::Null));
                *only = self.bpchar_operand(e, rt, lt);
            }
        }
        Ok(RExpr::AnySub {
            left: Box::new(left),
            op,
            query: Box::new(query),
            all,
            negated,
        })
    }

    /// A comparison operand beside one of type `o`: a `character(n)` value, or an unknown
    /// literal or a varchar meeting one, compares without its trailing blanks (PostgreSQL
    /// picks bpchar's operators for bpchar against bpchar, varchar or unknown, and text's,
    /// with the bpchar side converted to text, against text).
    pub(super) fn bpchar_operand(&self, e: RExpr, t: RType, o: RType) -> RExpr {
        let bpchar = |t: RType| matches!(t, RType::Base(DataType::Bpchar(_)));
        let beside_bpchar = matches!(t, RType::Unknown | RType::Base(DataType::Varchar(_)));
        if !(bpchar(t) || (beside_bpchar && bpchar(o))) {
            return e;
        }
        let trim = Expr::Func {
            func: crate::sql::ScalarFunc::BpcharText,
            args: vec![Expr::Column(0)],
        };
        self.typed_template(trim, DataType::Text, vec![e])
    }

    /// An explicit cast as PostgreSQL applies the written type's modifier: `varchar(n)`
    /// and `char(n)` cut the text to n characters (`char(n)` then pads it) (an assignment would refuse it), `numeric(p, s)`
    /// rounds to s digits and checks p (22003), as the streaming binder's casts do.
    pub(super) fn explicit_cast(
        &mut self,
        inner: RExpr,
        to: RType,
        written: &str,
    ) -> Result<RExpr> {
        use crate::sql::ScalarFunc;
        check_static_cast(self.static_type(&inner), to)?;
        if let RType::Base(d @ (DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)))) = to {
            let text = self.cast(inner, RType::Base(DataType::Text));
            let cut = Expr::Func {
                func: ScalarFunc::Substr,
                args: vec![
                    Expr::Column(0),
                    Expr::Literal(Value::Int4(1)),
                    Expr::Literal(Value::Int4(n as i32)),
                ],
            };
            return Ok(self.template(
                Expr::Cast {
                    expr: Box::new(cut),
                    to: d,
                },
                vec![text],
            ));
        }
        let cast = self.cast(inner, to);
        Ok(
            match crate::sql::types::typmod_applied(written, Expr::Column(0))? {
                Some((expr, ty)) => self.typed_template(expr, ty, vec![cast]),
                None => cast,
            },
        )
    }

    /// `e` as the condition of `clause` (`WHERE`, `JOIN/ON`, `HAVING`, `FILTER`), as
    /// PostgreSQL's coerce_to_boolean takes it: an unknown literal is read as a boolean
    /// (`'t'`; 22P02 when evaluated for text that is none). Errors: 42804 for an
    /// expression of another type whose type is known exactly ([`Self::exact_type`]:
    /// `WHERE a.i`, `WHERE abs(x)`, `ON x + y`, `HAVING sum(x)`), which would otherwise
    /// hold for no row. Other expressions pass as they are.
    pub(super) fn condition(&mut self, e: RExpr, clause: &str) -> Result<RExpr> {
        if let RExpr::Lit(Value::Text(_)) = &e {
            return Ok(self.cast(e, RType::Base(DataType::Bool)));
        }
        let Some(t) = self.exact_type(&e) else {
            return Ok(e);
        };
        match t {
            RType::Base(DataType::Bool) | RType::Unknown => Ok(e),
            t => Err(Error::DatatypeMismatch(format!(
                "argument of {clause} must be type boolean, not type {}",
                t.name()
            ))),
        }
    }

    /// The static type of `e` when it is exact: a column, a literal, a template the
    /// expression binder typed (a cast on top: calls, arithmetic, CASE, explicit casts),
    /// a cast to a catalog type, a comparison or a scalar subquery's column; `None` where
    /// [`Self::static_type`] guesses (catalog functions, window functions).
    fn exact_type(&self, e: &RExpr) -> Option<RType> {
        let exact = match e {
            RExpr::Col { .. } | RExpr::Lit(_) | RExpr::Cast(..) | RExpr::ScalarSub(_) => true,
            RExpr::Template { expr, .. } => matches!(expr, Expr::Cast { .. }),
            RExpr::Cmp { .. }
            | RExpr::And(_)
            | RExpr::AnyArray { .. }
            | RExpr::AnySub { .. }
            | RExpr::Exists(..) => true,
            _ => false,
        };
        exact.then(|| self.static_type(e))
    }

    pub(super) fn cast(&mut self, inner: RExpr, to: RType) -> RExpr {
        // A parameter takes the type it is cast to, as PostgreSQL infers it: SQLAlchemy
        // writes `$1::INTEGER`, asyncpg's type introspection `$1::oid[]`, and asyncpg
        // refuses to bind an int to a parameter described as text.
        if let RExpr::Param(i) = &inner {
            if let Some(slot @ None) = self.params.get_mut(*i) {
                match to {
                    RType::Catalog(t) => {
                        *slot = Some(t.held_as());
                        self.catalog_params.push((*i, t));
                    }
                    RType::Base(d) => *slot = Some(d),
                    _ => {}
                }
            }
        }
        match (to, self.static_type(&inner)) {
            (RType::Base(d), from @ (RType::Base(_) | RType::Unknown)) => RExpr::Template {
                expr: Expr::Cast {
                    expr: Box::new(if d.is_text() && !matches!(d, DataType::Bpchar(_)) {
                        crate::sql::bind::bpchar_as_text(Expr::Column(0), Some(from.data_type()))
                    } else {
                        Expr::Column(0)
                    }),
                    to: d,
                },
                args: vec![inner],
            },
            // A reg* value cast to text is the object's name (`atttypid::regtype::text`):
            // the evaluator sees the reg* cast beneath and prints the name.
            (RType::Base(d), RType::Reg(k)) if d.is_text() => {
                RExpr::Cast(Box::new(RExpr::Cast(Box::new(inner), RType::Reg(k))), to)
            }
            // A "char" cast to integer is its byte, signed (`'a'::"char"::int` is 97):
            // the evaluator sees the "char" cast beneath.
            (RType::Base(DataType::Int4), c @ RType::Catalog(CatalogType::Char)) => {
                RExpr::Cast(Box::new(RExpr::Cast(Box::new(inner), c)), to)
            }
            _ => RExpr::Cast(Box::new(inner), to),
        }
    }

    /// The arguments of COALESCE, GREATEST or LEAST, where one is a reg* value or
    /// an oid, with each unknown literal cast to that type, as PostgreSQL resolves them:
    /// `coalesce(atttypid::regtype, 'text')` reads `'text'` as a regtype. Errors of the
    /// cast (an unknown name) come at run time, as the cast's own.
    pub(super) fn unknowns_as_oid(&mut self, args: Vec<RExpr>) -> Vec<RExpr> {
        let oid = |t: &RType| matches!(t, RType::Reg(_) | RType::Catalog(CatalogType::Oid));
        let Some(to) = args.iter().map(|a| self.static_type(a)).find(oid) else {
            return args;
        };
        args.into_iter()
            .map(|a| match (&a, self.static_type(&a)) {
                (RExpr::Lit(_), RType::Unknown) => self.cast(a, to),
                _ => a,
            })
            .collect()
    }

    pub(super) fn number(&self, n: &str) -> Result<RExpr> {
        Ok(RExpr::Lit(crate::sql::bind::number_literal(n)?))
    }

    pub(super) fn value(&mut self, v: &ast::Value) -> Result<RExpr> {
        Ok(match v {
            ast::Value::Number(n, _) => self.number(n)?,
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::UnicodeStringLiteral(s)
            | ast::Value::NationalStringLiteral(s) => {
                RExpr::Lit(Value::Text(crate::sql::bind::no_nul(s)?.into()))
            }
            ast::Value::DollarQuotedString(d) => {
                RExpr::Lit(Value::Text(crate::sql::bind::no_nul(&d.value)?.into()))
            }
            ast::Value::Boolean(b) => RExpr::Lit(Value::Bool(*b)),
            ast::Value::Null => RExpr::Lit(Value::Null),
            ast::Value::Placeholder(p) => {
                let i = crate::sql::placeholder_index(p)?;
                if self.params.len() <= i {
                    self.params.resize(i + 1, None);
                }
                RExpr::Param(i)
            }
            other => return Err(unsupported(format!("literal {other} is not supported"))),
        })
    }

    /// `(a1, a2, ...) op (b1, b2, ...)` as PostgreSQL compares rows: `=` is the AND of the
    /// pairs' equalities, `<>` the OR of their inequalities, and `<`, `<=`, `>`, `>=` order
    /// the rows by their first unequal pair (`a1 < b1 OR (a1 = b1 AND (a2, ...) op (b2,
    /// ...))`), which gives NULL where a NULL pair decides, as PostgreSQL does. Errors: 42601
    /// for rows of different lengths.
    pub(super) fn row_comparison(
        &mut self,
        op: &ast::BinaryOperator,
        ls: &[ast::Expr],
        rs: &[ast::Expr],
    ) -> Result<RExpr> {
        use ast::BinaryOperator as B;
        if ls.len() != rs.len() || ls.is_empty() {
            return Err(Error::Syntax(
                "unequal number of entries in row expressions".into(),
            ));
        }
        if ls.len() == 1 {
            return self.binary(&ls[0], op, &rs[0]);
        }
        let pairs = || ls.iter().zip(rs);
        match op {
            B::Eq | B::NotEq => {
                let parts = pairs()
                    .map(|(l, r)| self.binary(l, op, r))
                    .collect::<Result<Vec<_>>>()?;
                Ok(if *op == B::Eq {
                    RExpr::And(parts)
                } else {
                    or(parts)
                })
            }
            _ => {
                let strict = match op {
                    B::Lt | B::LtEq => B::Lt,
                    _ => B::Gt,
                };
                let first = self.binary(&ls[0], &strict, &rs[0])?;
                let equal = self.binary(&ls[0], &B::Eq, &rs[0])?;
                let rest = self.row_comparison(op, &ls[1..], &rs[1..])?;
                Ok(or(vec![first, RExpr::And(vec![equal, rest])]))
            }
        }
    }

    pub(super) fn binary(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<RExpr> {
        use ast::BinaryOperator as B;
        // A comparison of two values (one part of a row comparison, or spelled
        // OPERATOR(pg_catalog.=)) is the expression binder's (see `walk`).
        let plain = match op {
            B::PGCustomBinaryOperator(parts) => match parts.last().map(String::as_str) {
                Some("=") => Some(B::Eq),
                Some("<>") => Some(B::NotEq),
                Some("<") => Some(B::Lt),
                Some(">") => Some(B::Gt),
                Some("<=") => Some(B::LtEq),
                Some(">=") => Some(B::GtEq),
                _ => return Err(unsupported(format!("operator {op} is not supported"))),
            },
            op => cmp_op(op).map(|_| op.clone()),
        };
        if let Some(op) = plain {
            match (row_items(left), row_items(right)) {
                (Some(ls), Some(rs)) => return self.row_comparison(&op, &ls, &rs),
                (Some(_), _) | (_, Some(_)) => {
                    return Err(unsupported(format!(
                        "comparing a row with a value ({left} {op} {right}) is not supported"
                    )))
                }
                _ => {}
            }
            return self.walk(&ast::Expr::BinaryOp {
                left: Box::new(left.clone()),
                op,
                right: Box::new(right.clone()),
            });
        }
        // Operands first: an unknown column is reported before the operator.
        let (l, r) = (self.expr(left)?, self.expr(right)?);
        // The array operators @>, <@ and && and text's ^@ are PostgreSQL's functions of
        // those names.
        let func = match op {
            B::AtArrow => "arraycontains",
            B::ArrowAt => "arraycontained",
            B::PGOverlap => "arrayoverlap",
            B::PGStartsWith => "starts_with",
            _ => return Err(unsupported(format!("operator {op} is not supported"))),
        };
        if *op == B::PGStartsWith {
            let (lt, rt) = (self.static_type(&l), self.static_type(&r));
            let text = |t: RType| {
                matches!(t, RType::Unknown) || matches!(t, RType::Base(d) if d.is_text())
            };
            if !text(lt) || !text(rt) {
                return Err(Error::UndefinedFunction(format!(
                    "operator does not exist: {} ^@ {}",
                    lt.name(),
                    rt.name()
                ))
                .with_hint(
                    "No operator matches the given name and argument types. You might need to add explicit type casts.",
                ));
            }
        }
        self.scalar_call(func, vec![l, r])
    }
}

/// `row IN (row1, row2, ...)` as PostgreSQL reads it: `row = row1 OR row = row2 ...`
/// (`NOT IN`: `row <> row1 AND ...`), row comparisons with their NULL rules; `None` for any
/// other expression.
fn row_in_list(e: &ast::Expr) -> Option<ast::Expr> {
    use ast::BinaryOperator as B;
    let ast::Expr::In {
        expr,
        target: ast::InTarget::List(items),
        negated,
        ..
    } = e
    else {
        return None;
    };
    row_items(expr)?;
    let (cmp, join) = if *negated {
        (B::NotEq, B::And)
    } else {
        (B::Eq, B::Or)
    };
    items
        .iter()
        .map(|item| ast::Expr::BinaryOp {
            left: expr.clone(),
            op: cmp.clone(),
            right: Box::new(item.clone()),
        })
        .reduce(|a, b| ast::Expr::BinaryOp {
            left: Box::new(a),
            op: join.clone(),
            right: Box::new(b),
        })
}

/// `ROW(items)` as sqlparser reads a call of it.
fn row_call(items: &[ast::Expr]) -> ast::Function {
    ast::Function {
        name: ast::ObjectName::from(vec![ast::Ident::new("row")]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: items
                .iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
                .collect(),
            clauses: vec![],
        }),
        within_group: vec![],
        filter: None,
        null_treatment: None,
        over: None,
    }
}

/// The items of a row constructor, `(a, b, ...)` or `ROW(a, ...)` (an unquoted `row` call
/// of plain arguments, as sqlparser reads it); `None` for any other expression.
pub(super) fn row_items(e: &ast::Expr) -> Option<Vec<ast::Expr>> {
    match e {
        ast::Expr::Tuple(items) => Some(items.clone()),
        ast::Expr::Function(f)
            if f.name.0.len() == 1
                && f.name.0[0].as_ident().is_some_and(|i| {
                    i.quote_style.is_none() && i.value.eq_ignore_ascii_case("row")
                })
                && f.filter.is_none()
                && f.over.is_none()
                && f.within_group.is_empty() =>
        {
            let ast::FunctionArguments::List(l) = &f.args else {
                return matches!(f.args, ast::FunctionArguments::None).then(Vec::new);
            };
            if l.duplicate_treatment.is_some() || !l.clauses.is_empty() {
                return None;
            }
            l.args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
                    _ => None,
                })
                .collect()
        }
        _ => None,
    }
}

/// `x [NOT] LIKE|ILIKE ANY|ALL (array)` as `x op ANY|ALL (array)` with LIKE's operator
/// (`~~`, `!~~`, `~~*`, `!~~*`), as PostgreSQL's grammar reads it; `None` for any other
/// expression. Errors: 42601 for an ESCAPE clause, which that grammar has not there.
/// Checks that the subquery of `x op ANY|ALL (subquery)` or `x IN (subquery)` gives one
/// column. Errors: 42601 `subquery has too many columns` (or too few), as PostgreSQL's.
/// Checks that `op` compares an operand of type `lt` with a subquery's column of type
/// `rt`, as PostgreSQL resolves the operator of `l op ANY|ALL (q)` and `l IN (q)`: a
/// subquery's unknown column (`SELECT 'a'`, `SELECT NULL`) is text by then. Errors: 42883
/// for types of no common comparison (`1 = ANY (SELECT 'a')`).
fn sub_comparable(lt: RType, op: CmpOp, rt: RType) -> Result<()> {
    let rt = match rt {
        RType::Unknown => RType::Base(DataType::Text),
        t => t,
    };
    let comparable = match (lt, rt) {
        (RType::Base(a), RType::Base(b)) => crate::sql::types::common_type(a, b).is_some(),
        // Unknown literals take the column's type; catalog scalars and arrays compare
        // as they are held.
        _ => true,
    };
    if comparable {
        return Ok(());
    }
    Err(Error::UndefinedFunction(format!(
        "operator does not exist: {} {} {}",
        lt.name(),
        op.symbol(),
        rt.name()
    ))
    .with_hint(
        "No operator matches the given name and argument types. You might need to add explicit type casts.",
    ))
}

fn one_column(q: &RelQuery) -> Result<()> {
    match q.columns.len() {
        1 => Ok(()),
        0 => Err(Error::Syntax("subquery has too few columns".into())),
        _ => Err(Error::Syntax("subquery has too many columns".into())),
    }
}

fn like_as_any(e: &ast::Expr) -> Result<Option<ast::Expr>> {
    use ast::BinaryOperator as B;
    let Some((all, array)) = crate::sql::bind::like_quantifier(e) else {
        return Ok(None);
    };
    let (ast::Expr::Like {
        negated,
        expr,
        escape_char,
        ..
    }
    | ast::Expr::ILike {
        negated,
        expr,
        escape_char,
        ..
    }) = e
    else {
        return Ok(None);
    };
    if let Some(esc) = escape_char {
        return Err(Error::Syntax(format!("syntax error at or near \"{esc}\"")));
    }
    let compare_op = match (matches!(e, ast::Expr::ILike { .. }), *negated) {
        (false, false) => B::PGLikeMatch,
        (false, true) => B::PGNotLikeMatch,
        (true, false) => B::PGILikeMatch,
        (true, true) => B::PGNotILikeMatch,
    };
    let (left, right) = (expr.clone(), Box::new(array.clone()));
    Ok(Some(if all {
        ast::Expr::AllOp {
            left,
            compare_op,
            right,
        }
    } else {
        ast::Expr::AnyOp {
            left,
            compare_op,
            right,
            is_some: false,
        }
    }))
}
