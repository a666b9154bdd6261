//! Function calls: scalar and catalog functions with their argument types, aggregate
//! calls (FILTER, DISTINCT, ORDER BY, ordered-set) and set-returning calls.

use super::*;

impl RelBinder<'_> {
    pub(super) fn function(&mut self, f: &ast::Function) -> Result<RExpr> {
        use crate::sql::ScalarFunc;
        let parts: Vec<String> = f
            .name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(norm))
            .collect();
        let name = parts.last().cloned().unwrap_or_default();
        if parts.len() > 1 && parts[0] != "pg_catalog" && parts[0] != "information_schema" {
            return Err(Error::UndefinedFunction(format!(
                "function {} does not exist",
                f.name
            )));
        }
        if f.over.is_some() {
            return self.window_function(f, &name);
        }
        // CURRENT_DATE (parsed as a call without parentheses): the transaction's day in
        // the session's time zone.
        if name == "current_date" && matches!(f.args, ast::FunctionArguments::None) {
            let today = Expr::Cast {
                expr: Box::new(Expr::Func {
                    func: ScalarFunc::Now,
                    args: vec![],
                }),
                to: DataType::Date,
            };
            return Ok(self.typed_template(today, DataType::Date, vec![]));
        }
        if SELECT_LIST_SET_FUNCTIONS.contains(&name.as_str()) {
            let level = self.levels.last();
            if level.is_some_and(|l| l.srf_ok && !l.in_agg) {
                return self.set_function(&name, f);
            }
            let hint =
                "You might be able to move the set-returning function into a LATERAL FROM item.";
            if level.is_some_and(|l| l.in_agg) {
                return Err(unsupported(
                    "aggregate function calls cannot contain set-returning function calls",
                )
                .with_hint(hint));
            }
            if let Some(refusal) = self.srf_refusal {
                return Err(unsupported(refusal));
            }
        }
        if let ast::FunctionArguments::Subquery(q) = &f.args {
            if name == "array" {
                let q = self.subquery(q)?;
                if q.columns.len() != 1 {
                    return Err(Error::Syntax("subquery must return only one column".into()));
                }
                return Ok(RExpr::ArraySub(Box::new(q)));
            }
            return Err(unsupported(format!("{name}(subquery) is not supported")));
        }
        let call = Self::call_args(f)?;
        if call.names.iter().any(Option::is_some) {
            if crate::sql::functions::aggregate(&name).is_some() {
                // No aggregate has parameter names; its arguments are not bound outside
                // an aggregate's context.
                return Err(no_named_parameters(&name));
            }
            let args: Vec<RExpr> = (call.args.iter())
                .map(|a| self.expr(a))
                .collect::<Result<_>>()?;
            let args = self.ordered_args(&name, args, &call.names)?;
            return self.scalar_call(&name, args);
        }
        if let Some(def) = crate::sql::functions::aggregate(&name) {
            return self.aggregate_call(def, name, f, &call);
        }
        if !call.order.is_empty() {
            return Err(Error::WrongObjectType(format!(
                "ORDER BY specified, but {name} is not an aggregate function"
            )));
        }
        if !f.within_group.is_empty() {
            return Err(Error::WrongObjectType(format!(
                "WITHIN GROUP specified, but {name} is not an aggregate function"
            )));
        }
        if f.filter.is_some() {
            return Err(Error::WrongObjectType(format!(
                "FILTER specified, but {name} is not an aggregate function"
            )));
        }
        let args: Vec<RExpr> = (call.args.iter())
            .map(|a| self.expr(a))
            .collect::<Result<_>>()?;
        // Omitted parameters with defaults (make_interval's) filled in.
        let args = self.ordered_args(&name, args, &call.names)?;
        self.scalar_call(&name, args)
    }

    /// The bound arguments of a call put in parameter order (named ones moved, omitted
    /// ones with defaults filled in: `make_interval(days => 10)`), for the scalar
    /// functions that have parameter names. Errors: 42883 for names that match no
    /// function, as PostgreSQL.
    pub(super) fn ordered_args(
        &mut self,
        name: &str,
        args: Vec<RExpr>,
        names: &[Option<String>],
    ) -> Result<Vec<RExpr>> {
        let func = crate::sql::functions::scalar(name).map(|d| d.func);
        let named = names.iter().any(Option::is_some);
        let slots = match func {
            Some(f) => crate::sql::functions::parameter_slots(f, names),
            None => (!named).then(|| {
                (0..args.len())
                    .map(crate::sql::functions::ArgSlot::Given)
                    .collect()
            }),
        };
        let Some(slots) = slots else {
            let shown: Vec<String> = args
                .iter()
                .zip(names)
                .map(|(a, n)| {
                    let t = self.static_type(a).name();
                    n.as_ref().map_or(t.clone(), |n| format!("{n} => {t}"))
                })
                .collect();
            return Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                shown.join(", ")
            ))
            .with_hint(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            ));
        };
        // Moved, not cloned: a clone would copy (recursively) each nested argument again.
        let mut args: Vec<Option<RExpr>> = args.into_iter().map(Some).collect();
        Ok(slots
            .into_iter()
            .map(|s| match s {
                crate::sql::functions::ArgSlot::Given(i) => {
                    args[i].take().expect("each argument is used once")
                }
                crate::sql::functions::ArgSlot::Default(v) => RExpr::Lit(v),
            })
            .collect())
    }

    /// A call of `name` that is no aggregate: `mod` as the `%` operator, a scalar function
    /// typed by the expression binder, `pg_typeof`, or a function of the relational
    /// evaluator. Errors: 42883 for a name or argument types of no function.
    pub(super) fn scalar_call(&mut self, name: &str, args: Vec<RExpr>) -> Result<RExpr> {
        if let ("mod", [_, _]) = (name, args.as_slice()) {
            // mod(a, b) is the % operator, with its types.
            let mut ops = self.operands(&args).into_iter();
            let (a, b) = (ops.next().expect("two"), ops.next().expect("two"));
            let (expr, ty) =
                crate::sql::bind::type_binary(crate::sql::BinaryOp::Mod, a, b, &mut self.params)?;
            return Ok(self.typed_template(expr, ty, args));
        }
        if matches!(name, "greatest" | "least" | "nullif")
            && args
                .iter()
                .any(|a| array_elem(self.static_type(a)).is_some())
        {
            return self.array_choice(name, args);
        }
        let args = match name {
            "coalesce" | "greatest" | "least" => self.unknowns_as_oid(args),
            _ => args,
        };
        let scalar = crate::sql::functions::scalar(name).map(|d| d.func);
        if let Some(func) = scalar {
            // Typed by the expression binder's rules, as the same call over a stream.
            let ops = self.operands(&args);
            let (expr, ty) = crate::sql::bind::type_scalar(func, ops, &mut self.params)?;
            return Ok(self.chosen_template(expr, Some(ty), args));
        }
        // The static type, as PostgreSQL's pg_typeof names it (a regtype printed as text).
        if let ("pg_typeof", [a]) = (name, args.as_slice()) {
            let t = match self.static_type(a) {
                RType::Reg(k) => match k {
                    RegKind::Class => "regclass",
                    RegKind::Type => "regtype",
                    RegKind::Proc => "regproc",
                    RegKind::Namespace => "regnamespace",
                    RegKind::Role => "regrole",
                }
                .to_string(),
                other => other.name(),
            };
            return Ok(RExpr::Cast(
                Box::new(RExpr::Lit(Value::Text(t.into()))),
                RType::Reg(RegKind::Type),
            ));
        }
        if arrays::ARRAY_CONCAT_FUNCTIONS.contains(&name) {
            return self.array_concat_call(name, args);
        }
        if ELEM_COMPARING.contains(&name) {
            let ty = |i: usize| args.get(i).map_or(RType::Unknown, |a| self.static_type(a));
            // The second argument is an array or, for the search functions, an element.
            let second = match (ty(1), name.starts_with("array_")) {
                (RType::Base(d), true) => RType::Base(d).array_of(),
                (t, _) => t,
            };
            let elems = match name {
                "arraycontains" => array_operands(ty(0), second, "@>")?,
                "arraycontained" => array_operands(ty(0), second, "<@")?,
                "arrayoverlap" => array_operands(ty(0), second, "&&")?,
                _ => array_elems(ty(0), second),
            };
            if let Some(elems) = elems {
                return Ok(RExpr::ArrayFunc(name.to_string(), elems, args));
            }
        }
        if crate::sql::functions::catalog_function(name).is_some() {
            if !self.text_params_fit(name, &args) {
                return Err(self.no_such_function(name, &args));
            }
            return Ok(RExpr::Func(name.to_string(), args));
        }
        Err(self.no_such_function(name, &args))
    }

    /// 42883 for `name` called with `args`: PostgreSQL's message (the arguments' types)
    /// and hint.
    fn no_such_function(&self, name: &str, args: &[RExpr]) -> Error {
        Error::UndefinedFunction(format!(
            "function {name}({}) does not exist",
            args.iter()
                .map(|a| self.static_type(a).name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        )
    }

    /// Whether `args` fit the parameters of the relational text function `name` that has
    /// one overload of fixed parameters (`left(text, integer)`, `split_part(text, text,
    /// integer)`, ...): a `text` parameter takes a string type or an untyped literal, an
    /// `integer` one a `smallint`, an `integer` or an untyped literal, as PostgreSQL's
    /// implicit casts allow (no `bigint` or `numeric`: `left('abc', 2::bigint)` is 42883).
    /// `concat_ws` takes a separator and at least one value. True for the other functions.
    fn text_params_fit(&self, name: &str, args: &[RExpr]) -> bool {
        const T: bool = true;
        const I: bool = false;
        let params: &[bool] = match name {
            "left" | "right" => &[T, I],
            "split_part" => &[T, T, I],
            "replace" => &[T, T, T],
            "starts_with" => &[T, T],
            "concat_ws" => return args.len() >= 2,
            _ => return true,
        };
        let fits = |is_text: bool, a: &RExpr| match self.static_type(a) {
            RType::Unknown => true,
            RType::Base(d) if is_text => d.is_text(),
            RType::Base(d) => matches!(d, DataType::Int2 | DataType::Int4),
            RType::Catalog(CatalogType::Name | CatalogType::Char) => is_text,
            _ => false,
        };
        params.len() == args.len() && params.iter().zip(args).all(|(p, a)| fits(*p, a))
    }

    /// `greatest`, `least` or `nullif` of arrays: their elements compared by type (see
    /// [`crate::exec::array_cmp`]); GREATEST and LEAST fold their arguments two at a
    /// time, of the arrays' common type (`integer[]` and `numeric[]` are `numeric[]`).
    /// Errors: 42883 for NULLIF of two array types (no `=` between them), 42846 for
    /// GREATEST or LEAST of arrays whose elements have no common type.
    pub(super) fn array_choice(&mut self, name: &str, args: Vec<RExpr>) -> Result<RExpr> {
        let ty = |s: &Self, a: &RExpr| s.static_type(a);
        if name == "nullif" {
            let [a, b] = <[RExpr; 2]>::try_from(args).map_err(|a| {
                Error::UndefinedFunction(format!(
                    "function nullif with {} arguments does not exist",
                    a.len()
                ))
            })?;
            let elems = array_operands(ty(self, &a), ty(self, &b), "=")?.expect("an array");
            return Ok(RExpr::ArrayFunc(name.into(), elems, vec![a, b]));
        }
        let word = name.to_uppercase();
        let mut acc: Option<RExpr> = None;
        for a in args {
            acc = Some(match acc {
                None => a,
                Some(prev) => {
                    let (pt, at) = (ty(self, &prev), ty(self, &a));
                    let common = match (array_elem(pt), array_elem(at)) {
                        (Some(x), Some(y)) if x != y => {
                            let common =
                                crate::sql::types::select_common_type(x.held_as(), y.held_as());
                            common.map(ElemType::of).ok_or_else(|| {
                                Error::CannotCoerce(format!(
                                    "{word} could not convert type {} to {}",
                                    at.name(),
                                    pt.name()
                                ))
                            })?
                        }
                        (Some(x), _) | (None, Some(x)) => x,
                        (None, None) => ElemType::Text,
                    };
                    let elems = (
                        array_elem(pt).unwrap_or(common),
                        array_elem(at).unwrap_or(common),
                    );
                    let out = RType::Catalog(CatalogType::Array(common));
                    let pair = RExpr::ArrayFunc(name.into(), elems, vec![prev, a]);
                    match out == ty(self, &pair) {
                        true => pair,
                        false => RExpr::Cast(Box::new(pair), out),
                    }
                }
            });
        }
        Ok(acc.expect("GREATEST has arguments"))
    }

    /// The arguments of call `f`: its expressions, `*`, DISTINCT and the ORDER BY of an
    /// aggregate's arguments. Errors: 0A000 for other clauses, 42601 for other arguments.
    pub(super) fn call_args(f: &ast::Function) -> Result<CallArgs<'_>> {
        let mut distinct = false;
        let mut star = false;
        let mut args_ast: Vec<&ast::Expr> = Vec::new();
        let mut order_ast: Vec<&ast::OrderByExpr> = Vec::new();
        let mut names: Vec<Option<String>> = Vec::new();
        match &f.args {
            ast::FunctionArguments::None | ast::FunctionArguments::Subquery(_) => {}
            ast::FunctionArguments::List(l) => {
                distinct = matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                for c in &l.clauses {
                    match c {
                        ast::FunctionArgumentClause::OrderBy(keys) => order_ast.extend(keys),
                        other => {
                            return Err(unsupported(format!(
                                "{other} in a function call is not supported"
                            )))
                        }
                    }
                }
                for (a, named) in l
                    .args
                    .iter()
                    .zip(crate::sql::functions::named_args(&l.args)?)
                {
                    if let Some((name, e)) = named {
                        args_ast.push(e);
                        names.push(name);
                        continue;
                    }
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        other => {
                            return Err(Error::Syntax(format!(
                                "syntax error at or near \"{other}\""
                            )))
                        }
                    }
                }
            }
        }
        Ok(CallArgs {
            distinct,
            star,
            args: args_ast,
            order: order_ast,
            names,
        })
    }

    /// Aggregate call `f` of `name` (its row `def`): bound in this level's aggregate list
    /// (one slot per distinct call), read as the column after the level's row. Errors:
    /// 42803 where aggregates are not allowed, 42883 for argument types PostgreSQL has no
    /// overload for.
    pub(super) fn aggregate_call(
        &mut self,
        def: &crate::sql::functions::AggDef,
        name: String,
        f: &ast::Function,
        call: &CallArgs<'_>,
    ) -> Result<RExpr> {
        let (distinct, star) = (call.distinct, call.star);
        let args_ast = &call.args;
        let agg_ok = self.levels.last().is_some_and(|l| l.agg_ok && !l.in_agg);
        if !agg_ok {
            return Err(Error::Grouping(format!(
                "aggregate functions are not allowed here ({name})"
            )));
        }
        let window_agg = std::mem::take(&mut self.window_agg);
        let ordered_set = ordered_set_call(def, f, &name, window_agg, args_ast.len())?;
        // An ordered-set aggregate reads its values in the WITHIN GROUP order.
        let order_ast: Vec<&ast::OrderByExpr> = match ordered_set {
            Some(_) => f.within_group.iter().collect(),
            None => call.order.clone(),
        };
        self.levels.last_mut().expect("level").in_agg = !window_agg;
        let args: Result<Vec<RExpr>> = args_ast.iter().map(|a| self.expr(a)).collect();
        let order_by: Result<Vec<(RExpr, bool, bool)>> = order_ast
            .iter()
            .map(|o| {
                let (descending, nulls_first) = direction(o)?;
                Ok((self.expr(&o.expr)?, descending, nulls_first))
            })
            .collect();
        let filter = (f.filter.as_deref())
            .map(|e| self.expr(e).and_then(|e| self.condition(e, "FILTER")))
            .transpose();
        self.levels.last_mut().expect("level").in_agg = false;
        let (mut args, order_by, filter) = (args?, order_by?, filter?);
        if distinct && order_by.iter().any(|(e, _, _)| !args.contains(e)) {
            return Err(Error::InvalidColumnReference(
                "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"
                    .into(),
            ));
        }
        if ordered_set.is_some() {
            // The WITHIN GROUP key rides after the direct arguments.
            args.push(order_by[0].0.clone());
        }
        if !star && args.is_empty() {
            return Err(Error::UndefinedFunction(format!(
                "function {name}() does not exist"
            )));
        }
        let (ty, arg_type) = self.aggregate_types(def, &name, ordered_set, star, &args)?;
        let arrays = (args.iter().chain(order_by.iter().map(|o| &o.0)))
            .map(|e| array_elem(self.static_type(e)))
            .collect();
        let level = self.levels.last_mut().expect("level");
        let agg = RelAgg {
            func: name,
            kernel: def.kernel,
            arg_type,
            filter,
            args,
            distinct,
            order_by,
            arrays,
            ty,
        };
        let j = match level.aggs.iter().position(|a| *a == agg) {
            Some(j) => j,
            None => {
                level.aggs.push(agg);
                level.aggs.len() - 1
            }
        };
        Ok(RExpr::Col {
            up: 0,
            idx: level.width + j,
        })
    }

    /// The result type of aggregate call `name` over `args` and the type its kernel reads
    /// the key as: typed by the first argument, an ordered-set aggregate by its WITHIN
    /// GROUP key (the last), with [`Self::float8_args`]'s checks. Errors: 42883 for
    /// argument types PostgreSQL has no overload for.
    pub(super) fn aggregate_types(
        &self,
        def: &crate::sql::functions::AggDef,
        name: &str,
        ordered_set: Option<OrderedSetFunc>,
        star: bool,
        args: &[RExpr],
    ) -> Result<(RType, DataType)> {
        let key = if ordered_set.is_some() {
            args.last()
        } else {
            args.first()
        };
        let arg = key.filter(|_| !star).map(|k| self.static_type(k));
        let (ty, arg_type) = agg_result_type(def, arg)?;
        let arg_type = self.float8_args(def, name, args, arg_type)?;
        let ty = match (ordered_set, arg) {
            // anyelement: the key's own type (varchar stays varchar, where min and max
            // of varchar are text).
            (
                Some(OrderedSetFunc::PercentileDisc | OrderedSetFunc::Mode),
                Some(RType::Base(DataType::Varchar(_))),
            ) => RType::Base(DataType::Varchar(None)),
            _ => ty,
        };
        // An array of fractions gives an array of percentiles.
        let ty = match ordered_set.map(|_| self.static_type(&args[0])) {
            Some(RType::Catalog(CatalogType::Array(_))) => ty.array_of(),
            _ => ty,
        };
        Ok((ty, arg_type))
    }

    /// A set-returning call of the select list: its arguments are bound like the select
    /// list's other expressions (not inside another set-returning call).
    pub(super) fn set_function(&mut self, name: &str, f: &ast::Function) -> Result<RExpr> {
        let ast::FunctionArguments::List(l) = &f.args else {
            return Err(Error::UndefinedFunction(format!(
                "function {name}() does not exist"
            )));
        };
        self.levels.last_mut().expect("level").srf_ok = false;
        let args: Result<Vec<RExpr>> = self.refusing_srf(SRF_IN_SRF_ARGS, |b| {
            l.args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => b.expr(e),
                    ast::FunctionArg::Named { .. } | ast::FunctionArg::ExprNamed { .. } => {
                        Err(no_named_parameters(name))
                    }
                    other => Err(Error::Syntax(format!(
                        "syntax error at or near \"{other}\""
                    ))),
                })
                .collect()
        });
        self.levels.last_mut().expect("level").srf_ok = true;
        let args = match args {
            Ok(a) if name == "generate_series" => self.series_args(a)?,
            other => other?,
        };
        // unnest of several arrays is FROM's alone, as in PostgreSQL.
        if name == "unnest" && args.len() != 1 {
            let types: Vec<String> = args.iter().map(|a| self.static_type(a).name()).collect();
            return Err(Error::UndefinedFunction(format!(
                "function unnest({}) does not exist",
                types.join(", ")
            ))
            .with_hint(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            ));
        }
        let level = self.levels.last_mut().expect("level");
        level.set_funcs.push((name.to_string(), args));
        let call = RExpr::SetFunc(level.set_funcs.len() - 1);
        // Its values are converted to the type it is declared to return (`unnest(indkey)`
        // gives smallints, not the text of the vector's elements).
        Ok(match self.static_type(&call) {
            t @ RType::Catalog(_) => RExpr::Cast(Box::new(call), t),
            RType::Base(d) if !d.is_text() => RExpr::Cast(Box::new(call), RType::Base(d)),
            _ => call,
        })
    }
}
