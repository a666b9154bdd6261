//! One SELECT: its FROM, WHERE, select list, GROUP BY and HAVING, ORDER BY and
//! DISTINCT [ON].

use super::*;

impl RelBinder<'_> {
    /// Bind a SELECT block with the ORDER BY of its query.
    #[allow(clippy::type_complexity)]
    pub(super) fn select(
        &mut self,
        sel: &ast::Select,
        order: &[&ast::OrderByExpr],
    ) -> Result<(RelSelect, Vec<(String, RType)>, Vec<(usize, bool, bool)>)> {
        if sel.into.is_some() {
            return Err(unsupported("SELECT INTO is not supported"));
        }
        let distinct = match &sel.distinct {
            None | Some(ast::Distinct::All) => Distinct::No,
            Some(ast::Distinct::Distinct) => Distinct::Rows,
            Some(ast::Distinct::On(on)) => Distinct::On(on),
        };
        let mut level = Level::default();
        let from = self.bind_from_list(&sel.from, &mut level)?;
        self.levels.push(level);
        let r = self.select_body(sel, order, from, distinct);
        self.levels.pop();
        r
    }

    #[allow(clippy::type_complexity)]
    pub(super) fn select_body(
        &mut self,
        sel: &ast::Select,
        order: &[&ast::OrderByExpr],
        from: Option<RelFrom>,
        distinct_kind: Distinct,
    ) -> Result<(RelSelect, Vec<(String, RType)>, Vec<(usize, bool, bool)>)> {
        let distinct = matches!(distinct_kind, Distinct::Rows);
        let filter = match &sel.selection {
            Some(e) => {
                let e = self.refusing_srf(SRF_IN_WHERE, |b| b.expr(e))?;
                Some(self.condition(e, "WHERE")?)
            }
            None => None,
        };
        let group_exprs: Vec<&ast::Expr> = match &sel.group_by {
            ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => v.iter().collect(),
            _ => {
                return Err(unsupported(
                    "GROUP BY ALL / ROLLUP / CUBE are not supported",
                ))
            }
        };
        let items = self.select_items(sel)?;
        let keys = self.group_keys(&group_exprs, &items)?;
        // Select list, HAVING and ORDER BY may hold aggregates.
        self.levels.last_mut().expect("level").agg_ok = true;
        let mut projection = Vec::new();
        let mut columns = Vec::new();
        for (e, idx, name) in &items {
            let bound = match (e, idx) {
                (Some(e), _) => {
                    if let Some(refused) = srf::conditional_srf(e) {
                        return Err(refused);
                    }
                    self.levels.last_mut().expect("level").srf_ok = true;
                    let bound = self.expr(e);
                    self.levels.last_mut().expect("level").srf_ok = false;
                    bound?
                }
                (None, Some(idx)) => RExpr::Col { up: 0, idx: *idx },
                _ => unreachable!("a select item is an expression or a column"),
            };
            columns.push((name.clone(), self.static_type(&bound)));
            projection.push(bound);
        }
        let having = match &sel.having {
            Some(h) => {
                let h = self.refusing_srf(SRF_IN_HAVING, |b| b.expr(h))?;
                Some(self.condition(h, "HAVING")?)
            }
            None => None,
        };
        let (mut sort_keys, order_by) = self.order_keys(order, distinct, &columns, &projection)?;
        let distinct_on = match distinct_kind {
            Distinct::On(on) => {
                Some(self.distinct_on(on, &columns, &projection, &mut sort_keys, &order_by)?)
            }
            _ => None,
        };
        if !keys.is_empty() || !self.levels.last().expect("level").aggs.is_empty() {
            for e in projection.iter().chain(&having).chain(&sort_keys) {
                self.check_grouped(&keys, e)?;
            }
            self.check_sub_refs(&keys)?;
        }
        let arrays = (columns.iter().map(|c| c.1))
            .chain(sort_keys.iter().map(|k| self.static_type(k)))
            .map(array_elem)
            .collect();
        let key_arrays = keys
            .iter()
            .map(|k| array_elem(self.static_type(k)))
            .collect();
        let level = self.levels.last_mut().expect("level");
        level.agg_ok = false;
        let aggs = std::mem::take(&mut level.aggs);
        let windows = std::mem::take(&mut level.windows);
        let set_funcs = std::mem::take(&mut level.set_funcs);
        let group = (!keys.is_empty() || !aggs.is_empty()).then(|| RelGroup {
            keys,
            arrays: key_arrays,
            aggs,
            width: level.width,
        });
        let (from, filter) = crate::sql::relational_pushdown::push_down(from, filter);
        Ok((
            RelSelect {
                from,
                filter,
                group,
                having,
                projection,
                distinct,
                distinct_on,
                sort_keys,
                windows,
                arrays,
                set_funcs,
            },
            columns,
            order_by,
        ))
    }

    /// The select list of `sel` as items (expression or column index, and output name),
    /// `*` and `rel.*` expanded to this level's visible columns. Errors: 42601 for `*`
    /// without FROM, 42P01 for an unknown `rel.*`.
    pub(super) fn select_items<'s>(&self, sel: &'s ast::Select) -> Result<Vec<SelectItem<'s>>> {
        let mut items: Vec<SelectItem<'s>> = Vec::new();
        let level = self.levels.last().expect("level");
        for item in &sel.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push((Some(e), None, default_name(e))),
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((Some(expr), None, norm(alias)))
                }
                ast::SelectItem::Wildcard(_) => {
                    if level.rels.is_empty() {
                        return Err(Error::Syntax(
                            "SELECT * with no tables specified is not valid".into(),
                        ));
                    }
                    for r in &level.rels {
                        for (i, c) in r.columns.iter().enumerate() {
                            if !r.hidden[i] {
                                items.push((None, Some(r.offset + i), c.clone()));
                            }
                        }
                    }
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let q = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                            n.0.iter()
                                .filter_map(|p| p.as_ident().map(norm))
                                .collect::<Vec<_>>()
                                .join(".")
                        }
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                    };
                    let r = level
                        .rels
                        .iter()
                        .find(|r| {
                            r.alias == q
                                || r.schema.as_deref().map(|s| format!("{s}.{}", r.alias))
                                    == Some(q.clone())
                        })
                        .ok_or_else(|| Error::UndefinedTable(q.clone()))?;
                    for (i, c) in r.columns.iter().enumerate() {
                        items.push((None, Some(r.offset + i), c.clone()));
                    }
                }
                ast::SelectItem::ExprWithAliases { .. } => {
                    return Err(unsupported("multiple aliases are not supported"))
                }
            }
        }
        Ok(items)
    }

    /// The GROUP BY keys: an ordinal or an output name means that select item. Errors:
    /// 42P10 for an ordinal past the select list.
    pub(super) fn group_keys(
        &mut self,
        group_exprs: &[&ast::Expr],
        items: &[SelectItem<'_>],
    ) -> Result<Vec<RExpr>> {
        let mut keys = Vec::new();
        for g in group_exprs {
            if matches!(
                g,
                ast::Expr::GroupingSets(_) | ast::Expr::Rollup(_) | ast::Expr::Cube(_)
            ) || matches!(g, ast::Expr::Tuple(t) if t.is_empty())
            {
                return Err(unsupported(
                    "GROUPING SETS, ROLLUP, CUBE and GROUP BY () are not supported",
                ));
            }
            if ordinal(g).is_none() && matches!(g, ast::Expr::Value(_)) {
                return Err(Error::Syntax("non-integer constant in GROUP BY".into()));
            }
            let e = match ordinal(g) {
                Some(n) => match items.get(n.wrapping_sub(1)) {
                    Some((Some(e), _, _)) => self.expr(e)?,
                    Some((None, Some(idx), _)) => RExpr::Col { up: 0, idx: *idx },
                    _ => {
                        return Err(Error::InvalidColumnReference(format!(
                            "GROUP BY position {n} is not in select list"
                        )))
                    }
                },
                None => match self.expr(g) {
                    Ok(e) => e,
                    Err(err) => match bare_name(g).and_then(|n| items.iter().find(|i| i.2 == n)) {
                        Some((Some(e), _, _)) => self.expr(e)?,
                        _ => return Err(err),
                    },
                },
            };
            keys.push(e);
        }
        Ok(keys)
    }

    /// The ORDER BY keys as output column indexes (with DESC and NULLS FIRST), and the
    /// hidden sort keys appended after the projected columns. Errors: 42P10 for a key
    /// outside the select list of a SELECT DISTINCT or an ordinal past it.
    #[allow(clippy::type_complexity)]
    pub(super) fn order_keys(
        &mut self,
        order: &[&ast::OrderByExpr],
        distinct: bool,
        columns: &[(String, RType)],
        projection: &[RExpr],
    ) -> Result<(Vec<RExpr>, Vec<(usize, bool, bool)>)> {
        let mut sort_keys = Vec::new();
        let mut order_by = Vec::new();
        for o in order {
            check_ordinal(&o.expr, columns.len(), "ORDER BY")?;
            let i = match output_index(&o.expr, columns) {
                Some(i) => i,
                None => {
                    let e = self.expr(&o.expr)?;
                    match projection.iter().position(|p| *p == e) {
                        Some(i) => i,
                        None if distinct => return Err(Error::InvalidColumnReference(
                            "for SELECT DISTINCT, ORDER BY expressions must appear in select list"
                                .into(),
                        )),
                        None => {
                            sort_keys.push(e);
                            columns.len() + sort_keys.len() - 1
                        }
                    }
                }
            };
            let (descending, nulls_first) = direction(o)?;
            order_by.push((i, descending, nulls_first));
        }
        Ok((sort_keys, order_by))
    }

    /// `DISTINCT ON (keys)`: each key as a column of the projected row (an output column,
    /// or a hidden sort key added), and the order its first rows are taken in. As in
    /// PostgreSQL, the ORDER BY must begin with the keys (in any order): 42P10 otherwise.
    pub(super) fn distinct_on(
        &mut self,
        on: &[ast::Expr],
        columns: &[(String, RType)],
        projection: &[RExpr],
        sort_keys: &mut Vec<RExpr>,
        order_by: &[(usize, bool, bool)],
    ) -> Result<DistinctOn> {
        let mut keys = Vec::new();
        for e in on {
            check_ordinal(e, columns.len(), "DISTINCT ON")?;
            let i = match output_index(e, columns) {
                Some(i) => i,
                None => {
                    let e = self.expr(e)?;
                    let hidden = sort_keys.iter().position(|k| *k == e);
                    match (projection.iter().position(|p| *p == e), hidden) {
                        (Some(i), _) => i,
                        (None, Some(h)) => columns.len() + h,
                        (None, None) => {
                            sort_keys.push(e);
                            columns.len() + sort_keys.len() - 1
                        }
                    }
                }
            };
            keys.push(i);
        }
        let lead = order_by.iter().take(keys.len());
        if lead.clone().any(|(i, _, _)| !keys.contains(i)) {
            return Err(Error::InvalidColumnReference(
                "SELECT DISTINCT ON expressions must match initial ORDER BY expressions".into(),
            ));
        }
        let order = if order_by.is_empty() {
            keys.iter().map(|&i| (i, false, false)).collect()
        } else {
            order_by.to_vec()
        };
        Ok((keys, order))
    }
}

impl RelBinder<'_> {
    /// Checks that the subqueries of a grouped SELECT's list, HAVING and ORDER BY read
    /// this level's columns only as group keys, as PostgreSQL requires; the same columns
    /// as [`Self::check_grouped`] are checked. Errors: 42803 naming the column.
    fn check_sub_refs(&self, keys: &[RExpr]) -> Result<()> {
        let level = self.levels.last().expect("level");
        for &idx in level.sub_refs.borrow().iter() {
            if keys.contains(&RExpr::Col { up: 0, idx }) {
                continue;
            }
            let rel = level
                .rels
                .iter()
                .find(|r| (r.offset..r.offset + r.columns.len()).contains(&idx));
            if let Some(r) = rel.filter(|r| idx < level.width && r.table.is_none()) {
                return Err(Error::Grouping(format!(
                    "subquery uses ungrouped column \"{}.{}\" from outer query",
                    r.alias,
                    r.columns[idx - r.offset]
                )));
            }
        }
        Ok(())
    }

    /// Checks that `e`, an expression of a grouped SELECT's list, HAVING or ORDER BY,
    /// reads this level's columns only inside a group key or an aggregate, as PostgreSQL
    /// requires. Only the columns of a derived table, VALUES list or CTE are checked: a
    /// stored relation's may be functionally dependent on its grouped primary key, which
    /// PostgreSQL allows. Subqueries are not looked into. Errors: 42803 naming the column.
    pub(super) fn check_grouped(&self, keys: &[RExpr], e: &RExpr) -> Result<()> {
        if keys.contains(e) {
            return Ok(());
        }
        let each = |es: &[RExpr]| es.iter().try_for_each(|x| self.check_grouped(keys, x));
        match e {
            RExpr::Col { up: 0, idx } => {
                let level = self.levels.last().expect("level");
                let rel = level
                    .rels
                    .iter()
                    .find(|r| (r.offset..r.offset + r.columns.len()).contains(idx));
                match rel {
                    Some(r) if *idx < level.width && r.table.is_none() => {
                        Err(Error::Grouping(format!(
                            "column \"{}.{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                            r.alias,
                            r.columns[idx - r.offset]
                        )))
                    }
                    _ => Ok(()),
                }
            }
            RExpr::Template { args, .. } | RExpr::Func(_, args) | RExpr::ArrayFunc(_, _, args) => {
                each(args)
            }
            RExpr::And(es) | RExpr::Array(es) => each(es),
            RExpr::Cmp { left, right, .. }
            | RExpr::Subscript(left, right)
            | RExpr::ArrayConcat(left, right)
            | RExpr::AnyArray {
                left, array: right, ..
            } => {
                self.check_grouped(keys, left)?;
                self.check_grouped(keys, right)
            }
            RExpr::Cast(x, _) | RExpr::AnySub { left: x, .. } => self.check_grouped(keys, x),
            RExpr::Col { .. }
            | RExpr::Lit(_)
            | RExpr::Param(_)
            | RExpr::Exists(..)
            | RExpr::ScalarSub(_)
            | RExpr::ArraySub(_)
            | RExpr::SetFunc(_)
            | RExpr::Window(_) => Ok(()),
        }
    }
}
