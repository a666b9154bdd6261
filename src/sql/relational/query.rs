//! Queries as wholes: WITH (recursive too), LIMIT/OFFSET/FETCH, set operations
//! (UNION, INTERSECT, EXCEPT and their branch types) and VALUES lists.

use super::*;

impl RelBinder<'_> {
    pub(super) fn query(&mut self, q: &ast::Query) -> Result<RelQuery> {
        self.query_depth += 1;
        if self.query_depth > 64 {
            return Err(Error::StatementTooComplex(
                "query nesting is deeper than 64 levels".into(),
            ));
        }
        let r = crate::sql::deep(|| self.query_inner(q));
        self.query_depth -= 1;
        r
    }

    pub(super) fn query_inner(&mut self, q: &ast::Query) -> Result<RelQuery> {
        let (q, with_ties) = crate::sql::parse::fetch_as_limit_ties(q)?;
        let q = &*q;
        if !q.locks.is_empty() {
            return Err(unsupported("FOR UPDATE is not supported"));
        }
        let ctes_before = self.ctes.len();
        let mut ctes = Vec::new();
        if let Some(with) = &q.with {
            let mut seen = std::collections::HashSet::new();
            for c in &with.cte_tables {
                let name = norm(&c.alias.name);
                if !seen.insert(name.clone()) {
                    return Err(Error::DuplicateCteName(name));
                }
                if with.recursive {
                    if let Some((id, plan)) = self.recursive_cte(c, &name)? {
                        ctes.push((id, plan));
                        continue;
                    }
                }
                let mut plan = self
                    .query(&c.query)
                    .map_err(|e| self_reference(e, &name, with.recursive, NO_UNION))?;
                let names = cte_column_names(c, &name, &plan.columns)?;
                for (col, n) in plan.columns.iter_mut().zip(&names) {
                    col.0 = n.clone();
                }
                let types = plan.columns.iter().map(|(_, t)| *t).collect();
                let id = self.next_cte;
                self.next_cte += 1;
                self.ctes.push((name, id, names, types));
                ctes.push((id, plan));
            }
        }
        let order: Vec<&ast::OrderByExpr> = match &q.order_by {
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(v) => v.iter().collect(),
                ast::OrderByKind::All(_) => return Err(unsupported("ORDER BY ALL")),
            },
            None => vec![],
        };
        let (body, columns, order_by) = match &*q.body {
            ast::SetExpr::Select(sel) => {
                let (s, cols, ob) = self.select(sel, &order)?;
                (RelBody::Select(Box::new(s)), cols, ob)
            }
            other => {
                let (body, cols) = self.set_expr(other)?;
                let mut ob = Vec::new();
                for o in &order {
                    check_ordinal(&o.expr, cols.len(), "ORDER BY")?;
                    let i = output_index(&o.expr, &cols).ok_or_else(|| match &o.expr {
                        // A name that is no output column names nothing here (a
                        // branch's own column cannot be referenced), as PostgreSQL says.
                        ast::Expr::Identifier(id) => Error::UndefinedColumn(format!(
                            "column \"{}\" does not exist",
                            norm(id)
                        )),
                        _ => unsupported("invalid UNION/INTERSECT/EXCEPT ORDER BY clause")
                            .with_detail(
                                "Only result column names can be used, not expressions or functions.",
                            )
                            .with_hint(
                                "Add the expression/function to every SELECT, or move the UNION into a FROM clause.",
                            ),
                    })?;
                    let (descending, nulls_first) = direction(o)?;
                    ob.push((i, descending, nulls_first));
                }
                (body, cols, ob)
            }
        };
        let (limit, offset) = self.limit_clause(q)?;
        self.ctes.truncate(ctes_before);
        Ok(RelQuery {
            ctes,
            body,
            order_by,
            limit,
            with_ties,
            offset,
            columns,
            catalog_params: Vec::new(),
        })
    }

    /// `name AS (anchor UNION [ALL] step)` of a WITH RECURSIVE, where `step` may read
    /// `name`; `None` when the CTE has another shape (then it is an ordinary one). The CTE
    /// is registered (visible to what follows) when this returns.
    pub(super) fn recursive_cte(
        &mut self,
        c: &ast::Cte,
        name: &str,
    ) -> Result<Option<(usize, RelQuery)>> {
        let ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = &*c.query.body
        else {
            return Ok(None);
        };
        if c.query.order_by.is_some() || c.query.limit_clause.is_some() {
            return Err(unsupported(
                "ORDER BY and LIMIT in a recursive query are not supported",
            ));
        }
        let all = matches!(set_quantifier, ast::SetQuantifier::All);
        let (anchor, anchor_cols) = self
            .set_expr(left)
            .map_err(|e| self_reference(e, name, true, IN_ANCHOR))?;
        let names = cte_column_names(c, name, &anchor_cols)?;
        let columns: Vec<(String, RType)> = names
            .iter()
            .zip(&anchor_cols)
            .map(|(n, (_, t))| (n.clone(), *t))
            .collect();
        let id = self.next_cte;
        self.next_cte += 1;
        self.ctes.push((
            name.to_string(),
            id,
            names,
            columns.iter().map(|c| c.1).collect(),
        ));
        let (step, step_cols) = self.set_expr(right)?;
        if step_cols.len() != columns.len() {
            return Err(Error::Syntax(
                "each UNION query must have the same number of columns".into(),
            ));
        }
        let plan = RelQuery::of_body(
            RelBody::Recursive {
                id,
                all,
                anchor: Box::new(RelQuery::of_body(anchor, anchor_cols)),
                step: Box::new(RelQuery::of_body(step, step_cols)),
            },
            columns,
        );
        Ok(Some((id, plan)))
    }

    pub(super) fn limit_clause(
        &mut self,
        q: &ast::Query,
    ) -> Result<(Option<RExpr>, Option<RExpr>)> {
        let saved = std::mem::take(&mut self.levels);
        let r = (|| -> Result<_> {
            Ok(match &q.limit_clause {
                None => (None, None),
                Some(ast::LimitClause::LimitOffset {
                    limit,
                    offset,
                    limit_by,
                }) => {
                    if !limit_by.is_empty() {
                        return Err(unsupported("LIMIT BY"));
                    }
                    let l = match limit {
                        Some(e) => Some(self.refusing_srf(SRF_IN_LIMIT, |b| b.expr(e))?),
                        None => None,
                    };
                    let o = match offset {
                        Some(o) => Some(self.refusing_srf(SRF_IN_OFFSET, |b| b.expr(&o.value))?),
                        None => None,
                    };
                    (l, o)
                }
                Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                    (Some(self.expr(limit)?), Some(self.expr(offset)?))
                }
            })
        })();
        self.levels = saved;
        // A column of the query's own FROM: PostgreSQL resolves it, then refuses it (42P10);
        // a name no FROM has stays 42703.
        let r = match r {
            Err(e) if matches!(e.kind(), Error::UndefinedColumn(_)) => {
                Err(self.limit_variable(q).unwrap_or(e))
            }
            r => r,
        };
        // A parameter of LIMIT or OFFSET is a bigint, as PostgreSQL infers it.
        if let Ok((l, o)) = &r {
            for e in [l, o].into_iter().flatten() {
                if let RExpr::Param(i) = e {
                    if let Some(slot @ None) = self.params.get_mut(*i) {
                        *slot = Some(crate::types::DataType::Int8);
                    }
                }
            }
        }
        r
    }

    /// 42P10 `argument of LIMIT must not contain variables` (or OFFSET) when that clause
    /// of `q` binds among the query's own columns; `None` when it does not either.
    fn limit_variable(&mut self, q: &ast::Query) -> Option<Error> {
        let Some(ast::LimitClause::LimitOffset { limit, offset, .. }) = &q.limit_clause else {
            return None;
        };
        let ast::SetExpr::Select(sel) = &*q.body else {
            return None;
        };
        let clauses = [
            ("LIMIT", limit.as_ref()),
            ("OFFSET", offset.as_ref().map(|o| &o.value)),
        ];
        clauses.into_iter().find_map(|(word, e)| {
            // The clause's expression as the select list of the query's own FROM.
            let mut probe = (**sel).clone();
            probe.projection = e
                .map(|e| vec![ast::SelectItem::UnnamedExpr(e.clone())])
                .unwrap_or_default();
            probe.group_by = ast::GroupByExpr::Expressions(vec![], vec![]);
            probe.having = None;
            let saved = self.levels.len();
            let bound = e.is_some() && self.select(&probe, &[]).is_ok();
            self.levels.truncate(saved);
            bound.then(|| {
                Error::InvalidColumnReference(format!(
                    "argument of {word} must not contain variables"
                ))
            })
        })
    }

    pub(super) fn set_expr(&mut self, s: &ast::SetExpr) -> Result<(RelBody, Vec<(String, RType)>)> {
        // A chain of set operations nests one level per operation.
        crate::sql::deep(|| self.set_expr_inner(s))
    }

    pub(super) fn set_expr_inner(
        &mut self,
        s: &ast::SetExpr,
    ) -> Result<(RelBody, Vec<(String, RType)>)> {
        match s {
            ast::SetExpr::Select(sel) => {
                let (s, cols, _) = self.select(sel, &[])?;
                Ok((RelBody::Select(Box::new(s)), cols))
            }
            ast::SetExpr::Query(q) => {
                self.levels.push(Level::default());
                let inner = self.query(q);
                self.levels.pop();
                let inner = inner?;
                let cols = inner.columns.clone();
                Ok((
                    RelBody::Select(Box::new(RelSelect {
                        from: Some(RelFrom::Sub(Box::new(inner))),
                        filter: None,
                        group: None,
                        having: None,
                        projection: (0..cols.len())
                            .map(|idx| RExpr::Col { up: 0, idx })
                            .collect(),
                        distinct: false,
                        distinct_on: None,
                        sort_keys: vec![],
                        windows: vec![],
                        arrays: cols.iter().map(|c| array_elem(c.1)).collect(),
                        set_funcs: vec![],
                    })),
                    cols,
                ))
            }
            ast::SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let op = match op {
                    ast::SetOperator::Union => SetOp::Union,
                    ast::SetOperator::Intersect => SetOp::Intersect,
                    ast::SetOperator::Except | ast::SetOperator::Minus => SetOp::Except,
                };
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                let (lb, lc) = self.set_expr(left)?;
                let (rb, rc) = self.set_expr(right)?;
                if lc.len() != rc.len() {
                    return Err(Error::Syntax(format!(
                        "each {} query must have the same number of columns",
                        match op {
                            SetOp::Union => "UNION",
                            SetOp::Intersect => "INTERSECT",
                            SetOp::Except => "EXCEPT",
                        }
                    )));
                }
                let word = match op {
                    SetOp::Union => "UNION",
                    SetOp::Intersect => "INTERSECT",
                    SetOp::Except => "EXCEPT",
                };
                let cols: Vec<(String, RType)> = lc
                    .iter()
                    .zip(&rc)
                    .map(|((n, lt), (_, rt))| Ok((n.clone(), set_op_type(word, *lt, *rt)?)))
                    .collect::<Result<_>>()?;
                let lb = conform_branch(lb, &lc, &cols);
                let rb = conform_branch(rb, &rc, &cols);
                Ok((
                    RelBody::SetOp {
                        op,
                        all,
                        left: Box::new(RelQuery::of_body(lb, cols.clone())),
                        right: Box::new(RelQuery::of_body(rb, cols.clone())),
                    },
                    cols,
                ))
            }
            ast::SetExpr::Values(v) => {
                self.levels.push(Level::default());
                let bound = self.refusing_srf(SRF_IN_VALUES, |b| b.values(v));
                self.levels.pop();
                let (rows, types) = bound?;
                let cols = types
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| (format!("column{}", i + 1), t))
                    .collect();
                Ok((RelBody::Values(rows), cols))
            }
            _ => Err(unsupported("this kind of query is not supported")),
        }
    }

    /// The rows of a VALUES list (bound in a level of their own, so a subquery's list
    /// reads the outer query's columns), each cell cast to its column's type, resolved
    /// over all rows (see [`Self::resolved_type`]; a column of unknown literals only is
    /// text). Errors: 42601 for rows of different lengths, 42804 for types that cannot
    /// be matched.
    pub(super) fn values(&mut self, v: &ast::Values) -> Result<(Vec<Vec<RExpr>>, Vec<RType>)> {
        let mut rows: Vec<Vec<RExpr>> = Vec::new();
        for r in &v.rows {
            rows.push(r.iter().map(|e| self.expr(e)).collect::<Result<Vec<_>>>()?);
        }
        let n = rows.first().map_or(0, Vec::len);
        if rows.iter().any(|r| r.len() != n) {
            return Err(Error::Syntax(
                "VALUES lists must all be the same length".into(),
            ));
        }
        let types = (0..n)
            .map(|i| {
                let t = self.resolved_type("VALUES", rows.iter().map(|r| &r[i]))?;
                Ok(if t == RType::Unknown {
                    RType::Base(DataType::Text)
                } else {
                    t
                })
            })
            .collect::<Result<Vec<_>>>()?;
        for row in &mut rows {
            for (cell, to) in row.iter_mut().zip(&types) {
                let e = std::mem::replace(cell, RExpr::Lit(Value::Null));
                *cell = self.conformed(e, *to);
            }
        }
        Ok((rows, types))
    }

    /// The one type a VALUES column or the elements of an `ARRAY[...]` resolve to, as
    /// PostgreSQL's select_common_type does over all of them (`VALUES (1), (2.5)` and
    /// `ARRAY[1, 2.5]` are numeric; unknown literals take the others' type; unknown when
    /// all are). Errors: 42804 (`{word} types integer and text cannot be matched`).
    pub(super) fn resolved_type<'e>(
        &self,
        word: &str,
        es: impl Iterator<Item = &'e RExpr>,
    ) -> Result<RType> {
        let mut t = RType::Unknown;
        for e in es {
            match self.static_type(e) {
                RType::Unknown => {}
                c if t == RType::Unknown => t = c,
                c => t = set_op_type(word, t, c)?,
            }
        }
        Ok(t)
    }

    /// `e` cast to the resolved type `to` of its VALUES column or array, when it is a
    /// plain type `e` is not of already.
    pub(super) fn conformed(&mut self, e: RExpr, to: RType) -> RExpr {
        if self.static_type(&e) != to && matches!(to, RType::Base(_)) {
            self.cast(e, to)
        } else {
            e
        }
    }

    /// `ARRAY[a, b, ...]` of arrays: an array of one more dimension, of the common type
    /// of theirs (`integer[]` and `bigint[]` are `bigint[]`), each cast to it. Errors:
    /// 42804 for arrays of types without one (`integer[]` and `text[]`).
    pub(super) fn nested_array(&mut self, elems: Vec<RExpr>) -> Result<RExpr> {
        let mut common: Option<ElemType> = None;
        for e in &elems {
            let t = self.static_type(e);
            let Some(x) = array_elem(t) else { continue };
            common = Some(match common {
                None => x,
                Some(c) if c == x => c,
                Some(c) => crate::sql::types::select_common_type(c.held_as(), x.held_as())
                    .map(ElemType::of)
                    .ok_or_else(|| {
                        Error::DatatypeMismatch(format!(
                            "ARRAY types {} and {} cannot be matched",
                            RType::Catalog(CatalogType::Array(c)).name(),
                            t.name()
                        ))
                    })?,
            });
        }
        let e = common.unwrap_or(ElemType::Text);
        let to = RType::Catalog(CatalogType::Array(e));
        let elems = (elems.into_iter())
            .map(|x| match self.static_type(&x) == to {
                true => x,
                false => RExpr::Cast(Box::new(x), to),
            })
            .collect();
        Ok(RExpr::ArrayFunc("array_nest".into(), (e, e), elems))
    }

    /// `f` with set-returning calls refused with `refusal` (0A000), as PostgreSQL refuses
    /// them outside the select list; the refusal in force before is restored after.
    pub(super) fn refusing_srf<T>(
        &mut self,
        refusal: &'static str,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let before = self.srf_refusal.replace(refusal);
        let r = f(self);
        self.srf_refusal = before;
        r
    }
}

/// The column names of CTE `c` (called `name`) over a query of `columns`: the names its
/// alias lists, the query's own names for the columns past them (PostgreSQL renames
/// only as many as are listed). Errors: 42P10 for more names than columns.
fn cte_column_names(c: &ast::Cte, name: &str, columns: &[(String, RType)]) -> Result<Vec<String>> {
    let listed = &c.alias.columns;
    if listed.len() > columns.len() {
        return Err(Error::InvalidColumnReference(format!(
            "WITH query \"{name}\" has {} columns available but {} columns specified",
            columns.len(),
            listed.len()
        )));
    }
    Ok(columns
        .iter()
        .enumerate()
        .map(|(i, (own, _))| {
            listed
                .get(i)
                .map_or_else(|| own.clone(), |cd| norm(&cd.name))
        })
        .collect())
}
