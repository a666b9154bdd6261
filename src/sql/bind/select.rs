//! SELECT: the select list, GROUP BY, HAVING, ORDER BY, LIMIT and OFFSET of a query, and
//! the choice between the streaming plan and the relational one.

use sqlparser::ast;

use super::*;

/// A select-list entry after `*` expansion.
pub(super) enum Item<'q> {
    Ast(&'q ast::Expr, Option<String>),
    Column(usize),
}

/// LIMIT and OFFSET as written: constants, or the indexes of the parameters giving them.
struct RowCounts {
    limit: Option<u64>,
    offset: Option<u64>,
    limit_param: Option<usize>,
    offset_param: Option<usize>,
}

pub(super) fn literal_u64(e: &ast::Expr, what: &str) -> Result<Option<u64>> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            // A numeric constant is cast to bigint, rounding half away from zero.
            ast::Value::Number(n, _) if n.contains(['.', 'e', 'E']) => {
                match n.parse::<f64>().map(f64::round) {
                    Ok(r) if (0.0..9.2e18).contains(&r) => Ok(Some(r as u64)),
                    _ => Err(Error::InvalidParameterValue(format!(
                        "{what} must be a non-negative integer, got {n}"
                    ))),
                }
            }
            ast::Value::Number(n, _) => n.parse::<u64>().map(Some).map_err(|_| {
                Error::InvalidParameterValue(format!(
                    "{what} must be a non-negative integer, got {n}"
                ))
            }),
            ast::Value::Null => Ok(None),
            // A quoted literal is read as bigint, as PostgreSQL coerces an unknown literal.
            ast::Value::SingleQuotedString(t) => match t.trim().parse::<i64>() {
                Ok(n) if n < 0 => literal_u64(
                    &ast::Expr::UnaryOp {
                        op: ast::UnaryOperator::Minus,
                        expr: Box::new(ast::Expr::value(ast::Value::Number(
                            n.unsigned_abs().to_string(),
                            false,
                        ))),
                    },
                    what,
                ),
                Ok(n) => Ok(Some(n as u64)),
                Err(_) => Err(Error::InvalidTextRepresentation(format!(
                    "invalid input syntax for type bigint: \"{t}\""
                ))),
            },
            _ => Err(Error::DatatypeMismatch(format!(
                "argument of {what} must be type bigint, not type unknown"
            ))),
        },
        // A negative constant that rounds to zero (`-0.4`, `-0`) is zero.
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } if matches!(&**expr, ast::Expr::Value(v) if matches!(&v.value,
            ast::Value::Number(n, _) if n.parse::<f64>().is_ok_and(|f| (-f).round() == 0.0))) =>
        {
            Ok(Some(0))
        }
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            ..
        } if what == "LIMIT" => Err(Error::InvalidRowCountInLimit(
            "LIMIT must not be negative".into(),
        )),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            ..
        } if what == "OFFSET" => Err(Error::InvalidRowCountInResultOffset(
            "OFFSET must not be negative".into(),
        )),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            ..
        } => Err(Error::InvalidParameterValue(format!(
            "{what} must not be negative"
        ))),
        ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => literal_u64(expr, what),
        _ => Err(unsupported(format!("{what} must be an integer constant"))),
    }
}

/// Parse `EVENT_RATE '<n> per <unit>'` into events per second.
pub(super) fn event_rate(text: &str) -> Result<f64> {
    let bad = || {
        Error::InvalidParameterValue(format!("invalid EVENT_RATE \"{text}\": expected '<number> per <interval>', e.g. '1 per minute'"))
    };
    let lower = text.trim().to_lowercase();
    let (n, unit) = match lower.split_once(" per ") {
        Some((n, u)) => (n.trim(), u.trim()),
        None => (lower.as_str(), "second"),
    };
    let n: f64 = n.parse().map_err(|_| bad())?;
    if !(n.is_finite() && n > 0.0) {
        return Err(bad());
    }
    let unit_iv = if unit.starts_with(|c: char| c.is_ascii_digit()) {
        crate::time::parse_interval(unit)
    } else {
        crate::time::parse_interval(&format!("1 {unit}"))
    }
    .map_err(|_| bad())?;
    let us = crate::time::fixed_length_us(&unit_iv)?;
    if us <= 0 {
        return Err(bad());
    }
    Ok(n * 1e6 / us as f64)
}

pub(super) fn ordinal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            // An integer constant: one past int4 is numeric, no position.
            ast::Value::Number(n, _) => n.parse::<i32>().ok().and_then(|n| usize::try_from(n).ok()),
            _ => None,
        },
        _ => None,
    }
}

/// 42601 for a GROUP BY or ORDER BY item (`clause` names which) that is a constant other
/// than a position (`'a'`, `1.5`, `NULL`), as PostgreSQL refuses it.
pub(super) fn non_integer_constant(e: &ast::Expr, clause: &str) -> Result<()> {
    match e {
        ast::Expr::Value(_) if ordinal(e).is_none() => {
            Err(Error::Syntax(format!("non-integer constant in {clause}")))
        }
        _ => Ok(()),
    }
}

/// The bound options of an EXPLAIN whose FORMAT is `format`: the export's options only
/// with FORMAT FLINK (22023 otherwise).
pub(super) fn explain_options(raw: &RawExplain, format: ExplainFormat) -> Result<ExplainOptions> {
    if let (Some((name, _)), false) = (raw.flink.first(), format == ExplainFormat::Flink) {
        return Err(Error::InvalidParameterValue(format!(
            "EXPLAIN option \"{name}\" needs FORMAT FLINK"
        )));
    }
    Ok(ExplainOptions {
        format,
        analyze: raw.analyze,
        verbose: raw.verbose,
        event_rate_per_sec: raw.event_rate.as_deref().map(event_rate).transpose()?,
        flink: raw.flink.clone(),
    })
}

/// `EXPLAIN (FORMAT FLINK, ...) QUERIES ...`: only the Flink format exports a set.
pub(super) fn explain_queries(raw: &RawExplain, ids: &Option<Vec<u64>>) -> Result<Plan> {
    if raw.format.as_deref() != Some("flink") || raw.analyze {
        return Err(Error::FeatureNotSupported(
            "EXPLAIN ... QUERIES exports registered queries with FORMAT FLINK (without ANALYZE)"
                .into(),
        ));
    }
    Ok(Plan::ExplainQueries {
        ids: ids.clone(),
        options: explain_options(raw, ExplainFormat::Flink)?,
    })
}

impl Binder<'_> {
    pub(super) fn explain(
        &mut self,
        raw: &RawExplain,
        statement: &ast::Statement,
        text: &str,
    ) -> Result<Plan> {
        let ast::Statement::Query(q) = statement else {
            return Err(unsupported("EXPLAIN is supported for SELECT only"));
        };
        let format = match raw.format.as_deref() {
            None | Some("text") => ExplainFormat::Text,
            Some("json") => ExplainFormat::Json,
            Some("dot") => ExplainFormat::Dot,
            Some("flink") => ExplainFormat::Flink,
            Some(other) => {
                return Err(Error::InvalidParameterValue(format!(
                    "unrecognized value for EXPLAIN option \"format\": \"{other}\""
                )))
            }
        };
        let options = explain_options(raw, format)?;
        Ok(Plan::Explain {
            query: Box::new(self.query(q, text)?),
            options,
        })
    }

    /// Bind a SELECT: continuous queries and the finite ones whose every construct this
    /// binder has are bound here; finite relational queries (catalogs, joins, subqueries,
    /// CTEs, set operations, and expressions only the relational plan has) go to
    /// [`crate::sql::relational`]. The route is decided before binding (`route.rs`).
    pub(super) fn query(&mut self, q: &ast::Query, text: &str) -> Result<Query> {
        let Some(provider) = self.schema.relations() else {
            return self.query_simple(q, text);
        };
        let schema = self.schema;
        let streams = |n: &str| schema.stream(n).is_some();
        // A stored table read alone stays with this binder (its finite path); in a join
        // or subquery the relational engine reads it through the provider.
        let relations = |s: &str, n: &str| {
            let whole = if s.is_empty() || s == "public" {
                n.to_string()
            } else {
                format!("{s}.{n}")
            };
            if schema.table(&whole).is_some() {
                return false;
            }
            if s.is_empty() {
                provider.relation("pg_catalog", n).is_some()
                    || provider.relation("public", n).is_some()
            } else {
                provider.relation(s, n).is_some()
            }
        };
        match crate::sql::relational::route(q, &streams, &relations) {
            crate::sql::relational::Route::Relational => self.relational(q, text, provider),
            crate::sql::relational::Route::Continuous => self.query_simple(q, text),
            crate::sql::relational::Route::Finite => {
                // Decided by what the statement is (see route.rs), never by which binder
                // fails first: one binder binds it, and its error is the answer.
                if route::expressible(q) {
                    self.query_simple(q, text)
                } else {
                    self.relational(q, text, provider)
                }
            }
        }
    }

    pub(super) fn relational(
        &mut self,
        q: &ast::Query,
        text: &str,
        provider: &dyn crate::sql::RelationProvider,
    ) -> Result<Query> {
        if !self.windows.is_empty() {
            return Err(Error::Syntax(
                "a window clause must follow a stream in FROM".into(),
            ));
        }
        let (rq, param_types) =
            crate::sql::relational::bind_query(q, provider, &self.params, self.source)?;
        let columns = rq
            .columns
            .iter()
            .map(|(n, t)| t.column(n.clone()))
            .collect();
        Ok(Query {
            source: Source::Relational(Box::new(rq)),
            windows: vec![],
            filter: None,
            aggregate: None,
            having: None,
            projection: vec![],
            columns,
            order_by: vec![],
            limit: None,
            offset: None,
            limit_param: None,
            offset_param: None,
            param_types,
            text: text.to_string(),
        })
    }

    pub(super) fn query_simple(&mut self, q: &ast::Query, text: &str) -> Result<Query> {
        if q.with.is_some() {
            return Err(unsupported("WITH is not supported"));
        }
        let q = &*crate::sql::parse::fetch_as_limit(q)?;
        if !q.locks.is_empty() {
            return Err(unsupported("FOR UPDATE is not supported"));
        }
        let sel = match &*q.body {
            ast::SetExpr::Select(s) => s,
            ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
                return self.query_simple(inner, text)
            }
            other => return Err(unsupported_body(other)),
        };
        if sel.distinct.is_some() {
            return Err(unsupported("SELECT DISTINCT is not supported"));
        }
        if sel.into.is_some() {
            return Err(unsupported("SELECT INTO is not supported"));
        }
        self.join_conds.clear();
        self.left_conds.clear();
        let (mut source, scope, windows) = self.from(&sel.from)?;
        self.agg = None;
        self.agg_mode = false;
        let filter = self.filter(sel, &mut source, &scope)?;
        // Select list with `*` expanded.
        let items = select_items(&sel.projection, &source, &scope)?;
        let group_exprs = group_exprs(sel)?;
        let order_exprs = order_exprs(q)?;
        let is_agg = !group_exprs.is_empty()
            || sel.having.is_some()
            || items
                .iter()
                .any(|i| matches!(i, Item::Ast(e, _) if contains_aggregate(e)))
            || order_exprs.iter().any(|o| contains_aggregate(&o.expr));
        if is_agg {
            self.group_by(group_exprs, &items, &scope)?;
        }
        let (projection, columns) = self.select_list(&items, &scope)?;
        let having = match &sel.having {
            Some(h) => {
                self.clause = "HAVING";
                let b = self.expr(h, &scope)?;
                Some(self.boolean(b, "HAVING")?)
            }
            None => None,
        };
        let order_by = self.order_by(&order_exprs, &items, &projection, &columns, &scope)?;
        let RowCounts {
            limit,
            offset,
            limit_param,
            offset_param,
        } = self.limit_offset(&q.limit_clause)?;
        self.agg_mode = false;
        let aggregate = self.agg.take().map(|st| Aggregate {
            group_by: st.keys,
            group_types: st.key_types,
            calls: st.calls,
        });
        Ok(Query {
            source,
            windows,
            filter,
            aggregate,
            having,
            projection,
            columns,
            order_by,
            limit,
            offset,
            limit_param,
            offset_param,
            param_types: self.finish_params(),
            text: text.to_string(),
        })
    }

    /// The join conditions, then WHERE, over the input row, ANDed; a LEFT JOIN's ON
    /// conditions go to its table in `source` instead.
    fn filter(
        &mut self,
        sel: &ast::Select,
        source: &mut Source,
        scope: &Scope,
    ) -> Result<Option<Expr>> {
        let mut conjuncts = Vec::new();
        for cond in std::mem::take(&mut self.join_conds) {
            conjuncts.push(self.join_cond(cond, scope)?);
        }
        for (t, cond) in std::mem::take(&mut self.left_conds) {
            let e = self.join_cond(cond, scope)?;
            if let Source::Join { tables, .. } = source {
                tables[t].on.push(e);
            }
        }
        if let Some(e) = &sel.selection {
            self.clause = "WHERE";
            let b = self.expr(e, scope)?;
            conjuncts.push(self.boolean(b, "WHERE")?);
        }
        Ok(conjuncts.into_iter().reduce(|l, r| Expr::Binary {
            op: BinaryOp::And,
            left: Box::new(l),
            right: Box::new(r),
        }))
    }

    /// Starts an aggregate query: its GROUP BY keys bound (an untyped key reads as text)
    /// into a fresh [`AggState`] that the select list, HAVING and ORDER BY add calls to.
    fn group_by(&mut self, group_exprs: &[ast::Expr], items: &[Item], scope: &Scope) -> Result<()> {
        let mut st = AggState::default();
        self.clause = "GROUP BY";
        for g in group_exprs {
            let b = self.group_key(g, items, scope)?;
            let ty = b.ty.unwrap_or(DataType::Text);
            let e = if b.ty.is_none() {
                self.coerce(b, DataType::Text, "GROUP BY")?
            } else {
                b.expr
            };
            st.keys.push(e);
            st.key_types.push(ty);
        }
        self.agg = Some(st);
        self.agg_mode = true;
        Ok(())
    }

    /// The select list's expressions and output columns; an untyped item reads as text.
    fn select_list(&mut self, items: &[Item], scope: &Scope) -> Result<(Vec<Expr>, Vec<Column>)> {
        self.clause = "SELECT";
        let mut projection = Vec::with_capacity(items.len());
        let mut columns = Vec::with_capacity(items.len());
        for item in items {
            let (b, name) = match item {
                Item::Ast(e, alias) => (
                    self.expr(e, scope)?,
                    alias.clone().unwrap_or_else(|| default_column_name(e)),
                ),
                Item::Column(i) => (self.column_ref(*i, scope)?, scope.columns[*i].name.clone()),
            };
            let ty = b.ty.unwrap_or(DataType::Text);
            let e = if b.ty.is_none() {
                self.coerce(b, DataType::Text, "SELECT")?
            } else {
                b.expr
            };
            projection.push(e);
            columns.push(Column::new(name, ty));
        }
        Ok((projection, columns))
    }

    /// ORDER BY's sort keys (output column names and positions, or expressions); NULLS
    /// FIRST by default when descending, as in PostgreSQL. Errors: those of `sort_order`
    /// (an operator after USING other than `<` or `>`).
    fn order_by(
        &mut self,
        order_exprs: &[&ast::OrderByExpr],
        items: &[Item],
        projection: &[Expr],
        columns: &[Column],
        scope: &Scope,
    ) -> Result<Vec<SortKey>> {
        self.clause = "ORDER BY";
        let mut order_by = Vec::with_capacity(order_exprs.len());
        for o in order_exprs {
            let expr = self.order_key(&o.expr, items, projection, columns, scope)?;
            let (descending, nulls_first) = crate::sql::sort_order(&o.options)?;
            order_by.push(SortKey {
                expr,
                descending,
                nulls_first,
            });
        }
        Ok(order_by)
    }

    /// LIMIT and OFFSET: each a constant or a parameter's index. Errors: LIMIT BY and
    /// `LIMIT #,#` (PostgreSQL's own message), a count that is no non-negative integer.
    fn limit_offset(&mut self, clause: &Option<ast::LimitClause>) -> Result<RowCounts> {
        let (mut limit, mut offset) = (None, None);
        let (mut limit_param, mut offset_param) = (None, None);
        match clause {
            Some(ast::LimitClause::LimitOffset {
                limit: l,
                offset: o,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return Err(unsupported("LIMIT BY is not supported"));
                }
                if let Some(l) = l {
                    match self.row_count_param(l) {
                        Some(i) => limit_param = Some(i),
                        None => limit = literal_u64(l, "LIMIT")?,
                    }
                }
                if let Some(o) = o {
                    match self.row_count_param(&o.value) {
                        Some(i) => offset_param = Some(i),
                        None => offset = literal_u64(&o.value, "OFFSET")?,
                    }
                }
            }
            Some(ast::LimitClause::OffsetCommaLimit { .. }) => {
                return Err(Error::Syntax(
                    "LIMIT #,# syntax is not supported; use separate LIMIT and OFFSET clauses"
                        .into(),
                ))
            }
            None => {}
        }

        Ok(RowCounts {
            limit,
            offset,
            limit_param,
            offset_param,
        })
    }

    /// The index of `$n` when a LIMIT or OFFSET is that parameter (maybe cast to an
    /// integer type), which is then a `bigint`, as PostgreSQL infers it.
    pub(super) fn row_count_param(&mut self, e: &ast::Expr) -> Option<usize> {
        let e = match e {
            ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => expr,
            e => e,
        };
        let ast::Expr::Value(v) = e else {
            return None;
        };
        let ast::Value::Placeholder(p) = &v.value else {
            return None;
        };
        let i = crate::sql::placeholder_index(p).ok()?;
        if self.params.len() <= i {
            self.params.resize(i + 1, None);
        }
        self.params[i].get_or_insert(DataType::Int8);
        Some(i)
    }

    pub(super) fn group_key(
        &mut self,
        g: &ast::Expr,
        items: &[Item],
        scope: &Scope,
    ) -> Result<Bound> {
        if contains_aggregate(g) {
            return Err(Error::Grouping(
                "aggregate functions are not allowed in GROUP BY".into(),
            ));
        }
        // An input column name wins over an output alias, as in PostgreSQL.
        if let ast::Expr::Identifier(id) = g {
            let name = ident_name(id);
            if !scope.columns.iter().any(|c| c.name == name) {
                if let Some(item) = items
                    .iter()
                    .find(|i| matches!(i, Item::Ast(_, Some(a)) if *a == name))
                {
                    return self.item_input(item, scope);
                }
            }
        }
        non_integer_constant(g, "GROUP BY")?;
        if let Some(n) = ordinal(g) {
            let item = items.get(n.wrapping_sub(1)).ok_or_else(|| {
                Error::InvalidColumnReference(format!(
                    "GROUP BY position {n} is not in select list"
                ))
            })?;
            if let Item::Ast(e, _) = item {
                if contains_aggregate(e) {
                    return Err(Error::Grouping(
                        "aggregate functions are not allowed in GROUP BY".into(),
                    ));
                }
            }
            return self.item_input(item, scope);
        }
        self.expr(g, scope)
    }

    pub(super) fn item_input(&mut self, item: &Item, scope: &Scope) -> Result<Bound> {
        match item {
            Item::Ast(e, _) => self.expr(e, scope),
            Item::Column(i) => Ok(Bound::new(Expr::Column(*i), scope.columns[*i].data_type)),
        }
    }

    pub(super) fn order_key(
        &mut self,
        e: &ast::Expr,
        items: &[Item],
        projection: &[Expr],
        columns: &[Column],
        scope: &Scope,
    ) -> Result<Expr> {
        if let ast::Expr::Identifier(id) = e {
            let name = ident_name(id);
            let hits: Vec<usize> = columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.name == name)
                .map(|(i, _)| i)
                .collect();
            if hits.len() > 1 && !hits.iter().all(|&h| projection[h] == projection[hits[0]]) {
                return Err(Error::Syntax(format!("ORDER BY \"{name}\" is ambiguous")));
            }
            if let Some(&h) = hits.first() {
                return Ok(projection[h].clone());
            }
        }
        non_integer_constant(e, "ORDER BY")?;
        if let Some(n) = ordinal(e) {
            return projection.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                Error::InvalidColumnReference(format!(
                    "ORDER BY position {n} is not in select list"
                ))
            });
        }
        let _ = items;
        let b = self.expr(e, scope)?;
        if b.ty.is_none() {
            return self.coerce(b, DataType::Text, "ORDER BY");
        }
        Ok(b.expr)
    }
}

/// The 0A000 for a query body this binder has no plan for (set operations, VALUES, ...).
fn unsupported_body(body: &ast::SetExpr) -> Error {
    match body {
        ast::SetExpr::SetOperation { op, .. } => unsupported(format!("{op} is not supported")),
        ast::SetExpr::Values(_) => unsupported("VALUES lists as queries are not supported"),
        _ => unsupported("this kind of query is not supported"),
    }
}

/// GROUP BY's expressions. Errors: 0A000 for GROUP BY ALL, ROLLUP, CUBE.
fn group_exprs(sel: &ast::Select) -> Result<&[ast::Expr]> {
    match &sel.group_by {
        ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => Ok(v),
        _ => Err(unsupported(
            "GROUP BY ALL / ROLLUP / CUBE are not supported",
        )),
    }
}

/// ORDER BY's items, none without ORDER BY. Errors: 0A000 for ORDER BY ALL.
fn order_exprs(q: &ast::Query) -> Result<Vec<&ast::OrderByExpr>> {
    match &q.order_by {
        Some(ob) => match &ob.kind {
            ast::OrderByKind::Expressions(v) => Ok(v.iter().collect()),
            ast::OrderByKind::All(_) => Err(unsupported("ORDER BY ALL is not supported")),
        },
        None => Ok(vec![]),
    }
}

/// The select list's items, `*` and `t.*` expanded to the columns of `scope` they name.
/// Errors: `SELECT *` without a FROM (42601), `t.*` of no relation (42P01).
fn select_items<'q>(
    projection: &'q [ast::SelectItem],
    source: &Source,
    scope: &Scope,
) -> Result<Vec<Item<'q>>> {
    let mut items: Vec<Item> = Vec::new();
    for item in projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) => items.push(Item::Ast(e, None)),
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                items.push(Item::Ast(expr, Some(ident_name(alias))))
            }
            ast::SelectItem::Wildcard(_) => {
                if matches!(source, Source::Nothing) {
                    return Err(Error::Syntax(
                        "SELECT * with no tables specified is not valid".into(),
                    ));
                }
                items.extend(scope.star.iter().copied().map(Item::Column));
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n)?,
                    ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                };
                let Some(rel) = scope.rel_by_qualifier(&q) else {
                    return Err(Error::UndefinedTable(q));
                };
                items.extend((rel.offset..rel.offset + rel.ncols).map(Item::Column));
            }
            ast::SelectItem::ExprWithAliases { .. } => {
                return Err(unsupported("multiple aliases are not supported"))
            }
        }
    }
    Ok(items)
}
