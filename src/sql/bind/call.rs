//! Function calls: scalar functions, aggregates, and the functions run for their effect
//! (`tcq_advance`, advisory locks, `pg_notify`).

use sqlparser::ast;

use super::*;

pub(super) fn session_func_of(name: &str) -> Option<SessionFunc> {
    crate::sql::functions::session_function(name)
}

/// The aggregate `name` calls, from the function table.
pub(super) fn agg_func_of(name: &str) -> Option<&'static functions::AggDef> {
    functions::aggregate(name)
}

pub(super) fn func_name(f: &ast::Function) -> String {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(ident_name)
        .unwrap_or_default()
}

pub(super) fn func_arg_exprs(f: &ast::Function) -> Vec<&ast::Expr> {
    match &f.args {
        ast::FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                ast::FunctionArg::Named {
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                } => Some(e),
                _ => None,
            })
            .collect(),
        _ => vec![],
    }
}

/// 42883 for a call whose named arguments match no function, shown as PostgreSQL shows it
/// (`make_interval(dayz => integer)`).
fn no_named_function(name: &str, args: &[Bound], names: &[Option<String>]) -> Error {
    let shown: Vec<String> = args
        .iter()
        .zip(names)
        .map(|(a, n)| match n {
            Some(n) => format!("{n} => {}", type_label(a.ty)),
            None => type_label(a.ty),
        })
        .collect();
    Error::UndefinedFunction(format!(
        "function {name}({}) does not exist",
        shown.join(", ")
    ))
}

/// The arguments of a call in parameter order ([`functions::parameter_slots`]).
/// Errors: 42883 when the names match no overload.
fn positional(
    func: ScalarFunc,
    name: &str,
    args: Vec<Bound>,
    names: &[Option<String>],
) -> Result<Vec<Bound>> {
    let Some(slots) = functions::parameter_slots(func, names) else {
        return Err(no_named_function(name, &args, names));
    };
    // Moved, not cloned: a clone would copy (recursively) each nested argument again.
    let mut args: Vec<Option<Bound>> = args.into_iter().map(Some).collect();
    Ok(slots
        .into_iter()
        .map(|s| match s {
            functions::ArgSlot::Given(i) => args[i].take().expect("each argument is used once"),
            functions::ArgSlot::Default(v) => {
                let ty = v.data_type();
                Bound {
                    expr: Expr::Literal(v),
                    ty,
                }
            }
        })
        .collect())
}

/// Function arguments: the expressions, whether the list is `*`, whether DISTINCT.
pub(super) struct Args<'e> {
    pub(super) exprs: Vec<&'e ast::Expr>,
    pub(super) star: bool,
    pub(super) distinct: bool,
    pub(super) none: bool,
    /// The name of each argument given by name (`days => 10`), `None` for positional ones.
    pub(super) names: Vec<Option<String>>,
}

pub(super) fn func_args(f: &ast::Function) -> Result<Args<'_>> {
    let name = func_name(f);
    if f.over.is_some() {
        return Err(unsupported(format!("window function {name}(...) OVER is not supported; use a window clause after the stream")));
    }
    if !f.within_group.is_empty() {
        return Err(unsupported(format!(
            "{name}(...) WITHIN GROUP is computed by finite queries only; continuous queries \
             do not compute ordered-set aggregates"
        )));
    }
    if f.filter.is_some() {
        return Err(unsupported(format!(
            "FILTER and WITHIN GROUP are not supported ({name})"
        )));
    }
    let mut a = Args {
        exprs: vec![],
        star: false,
        distinct: false,
        none: false,
        names: vec![],
    };
    match &f.args {
        ast::FunctionArguments::None => a.none = true,
        ast::FunctionArguments::Subquery(_) => {
            return Err(unsupported("subqueries are not supported"))
        }
        ast::FunctionArguments::List(l) => {
            a.distinct = matches!(
                l.duplicate_treatment,
                Some(ast::DuplicateTreatment::Distinct)
            );
            if !l.clauses.is_empty() {
                return Err(unsupported(format!(
                    "clauses inside {name}(...) are not supported"
                )));
            }
            for (arg, named) in l.args.iter().zip(functions::named_args(&l.args)?) {
                if let Some((name, e)) = named {
                    a.exprs.push(e);
                    a.names.push(name);
                    continue;
                }
                match arg {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => a.star = true,
                    _ => return Err(Error::Syntax(format!("syntax error at or near \"{arg}\""))),
                }
            }
            if a.star && !a.exprs.is_empty() {
                return Err(Error::Syntax("syntax error at or near \"*\"".into()));
            }
        }
    }
    Ok(a)
}

/// PostgreSQL's result type of an aggregate over `arg`.
/// The result type of aggregate `def` over `arg` (`None`: `count(*)`), from its row of the
/// function table. Errors: 42883 when PostgreSQL has no such overload.
pub(crate) fn agg_result_type(
    def: &functions::AggDef,
    name: &str,
    arg: Option<DataType>,
) -> Result<DataType> {
    if let Some(t) = def.result(arg) {
        return Ok(t);
    }
    let shown = arg.map_or("*".to_string(), |t| t.name());
    Err(Error::UndefinedFunction(format!(
        "function {name}({shown}) does not exist"
    )))
}

impl Binder<'_> {
    /// `SELECT f(args) [AS name]` without FROM for a function the engine runs for its
    /// effect: `tcq_advance(stream, time)`, the advisory lock family, `pg_notify`. Their
    /// arguments are ordinary expressions, bound parameters included.
    pub(super) fn try_session_call(&mut self, q: &ast::Query) -> Result<Option<Plan>> {
        let ast::SetExpr::Select(sel) = &*q.body else {
            return Ok(None);
        };
        let (f, alias) = match &sel.projection[..] {
            [ast::SelectItem::UnnamedExpr(ast::Expr::Function(f))] => (f, None),
            [ast::SelectItem::ExprWithAlias {
                expr: ast::Expr::Function(f),
                alias,
            }] => (f, Some(ident_name(alias))),
            _ => return Ok(None),
        };
        let name = func_name(f);
        let func = match session_func_of(&name) {
            Some(func) => Some(func),
            None if name == "tcq_advance" => None,
            None => return Ok(None),
        };
        if !sel.from.is_empty() {
            return Err(unsupported(format!(
                "{name}() must be called without FROM: SELECT {name}(...)"
            )));
        }
        let args = func_args(f)?;
        let scope = Scope::default();
        self.clause = "a function argument";
        let Some(func) = func else {
            return self.advance(&args.exprs, &scope).map(Some);
        };
        let bound: Vec<Bound> = args
            .exprs
            .iter()
            .map(|e| self.expr(e, &scope))
            .collect::<Result<_>>()?;
        let wanted: &[DataType] = match (func, bound.len()) {
            (SessionFunc::AdvisoryUnlockAll, 0) => &[],
            (SessionFunc::Notify, 2) => &[DataType::Text, DataType::Text],
            (SessionFunc::FlinkAttach, 4) => &[
                DataType::Int8,
                DataType::Text,
                DataType::Text,
                DataType::Text,
            ],
            (SessionFunc::CancelBackend | SessionFunc::TerminateBackend, 1) => &[DataType::Int4],
            (
                SessionFunc::AdvisoryUnlockAll
                | SessionFunc::FlinkAttach
                | SessionFunc::Notify
                | SessionFunc::CancelBackend
                | SessionFunc::TerminateBackend,
                _,
            ) => &[DataType::Bool; 9],
            (_, 1) => &[DataType::Int8],
            (_, 2) => &[DataType::Int4, DataType::Int4],
            _ => &[DataType::Bool; 9],
        };
        if wanted.len() != bound.len() {
            let types: Vec<String> = bound.iter().map(|b| type_label(b.ty)).collect();
            return Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                types.join(", ")
            )));
        }
        let args = bound
            .into_iter()
            .zip(wanted)
            .map(|(b, &ty)| self.coerce(b, ty, &name))
            .collect::<Result<Vec<_>>>()?;
        let ty = match func {
            SessionFunc::TryAdvisoryLock
            | SessionFunc::TryAdvisoryLockShared
            | SessionFunc::TryAdvisoryXactLock
            | SessionFunc::TryAdvisoryXactLockShared
            | SessionFunc::AdvisoryUnlock
            | SessionFunc::AdvisoryUnlockShared
            | SessionFunc::CancelBackend
            | SessionFunc::TerminateBackend => DataType::Bool,
            // PostgreSQL's `void` shows as an empty string; tcq has no void type and sends
            // an empty text value, which every client shows the same way.
            _ => DataType::Text,
        };
        Ok(Some(Plan::SessionCall {
            func,
            args,
            column: Column::new(alias.unwrap_or(name), ty),
            param_types: self.finish_params(),
        }))
    }

    /// `tcq_advance(stream, time)`: a literal stream name is checked now, and the time
    /// coerced to its time type; a stream given as a parameter is resolved at execution.
    pub(super) fn advance(&mut self, args: &[&ast::Expr], scope: &Scope) -> Result<Plan> {
        let [name_arg, time_arg] = args else {
            return Err(Error::UndefinedFunction("function tcq_advance with these arguments does not exist; call tcq_advance('stream', timestamp)".into()));
        };
        let name = self.expr(name_arg, scope)?;
        let literal = match &name.expr {
            Expr::Literal(Value::Text(s)) => Some(s.clone()),
            _ => None,
        };
        let stream = self.coerce(name, DataType::Text, "tcq_advance")?;
        let time = self.expr(time_arg, scope)?;
        let mut result_type = DataType::Timestamp;
        let time_expr = match literal {
            Some(s) => {
                let name = stream_name_of(&s);
                let (columns, ts) = self.schema.stream(&name).ok_or_else(|| {
                    if self.schema.table(&name).is_some()
                        || self.schema.system_view(&name).is_some()
                    {
                        advance_of_no_stream(&name)
                    } else {
                        Error::UndefinedTable(name.clone())
                    }
                })?;
                let time_type = ts
                    .map(|i| columns[i].data_type)
                    .unwrap_or(DataType::TimestampTz);
                result_type = time_type;
                self.coerce(time, time_type, "tcq_advance")?
            }
            None if time.ty.is_none() => self.coerce(time, DataType::Text, "tcq_advance")?,
            None => time.expr,
        };
        Ok(Plan::Advance {
            stream,
            time_expr,
            param_types: self.finish_params(),
            result_type,
        })
    }

    /// A function call. An unknown function (or argument types) is reported at the call,
    /// with PostgreSQL's hint.
    pub(super) fn function(&mut self, f: &ast::Function, scope: &Scope) -> Result<Bound> {
        self.function_call(f, scope).map_err(|e| match e.kind() {
            Error::UndefinedFunction(_) if e.position().is_none() => {
                let at = f
                    .name
                    .0
                    .first()
                    .and_then(|p| p.as_ident())
                    .map(|i| self.position(i.span.start));
                let no_such = e.to_string().ends_with("does not exist");
                let e = match at {
                    Some(p) => e.at(p),
                    None => e,
                };
                if !no_such {
                    return e;
                }
                e.with_hint(
                    "No function matches the given name and argument types. You might need to add explicit type casts.",
                )
            }
            _ => e,
        })
    }

    pub(super) fn function_call(&mut self, f: &ast::Function, scope: &Scope) -> Result<Bound> {
        let name = func_name(f);
        if f.name.0.len() > 1 {
            let schema = f.name.0[0].as_ident().map(ident_name).unwrap_or_default();
            if schema != "pg_catalog" {
                return Err(Error::UndefinedFunction(format!(
                    "function {} does not exist",
                    f.name
                )));
            }
        }
        // CURRENT_DATE (parsed as a call without parentheses).
        if name == "current_date" && matches!(f.args, ast::FunctionArguments::None) {
            return Ok(self
                .keyword_value(&name, scope)?
                .expect("current_date is a keyword value"));
        }
        let args = func_args(f)?;
        if args.names.iter().any(Option::is_some) && functions::scalar(&name).is_none() {
            // Only the scalar functions below have parameter names.
            if agg_func_of(&name).is_some() {
                // An aggregate's arguments are not bound outside its context.
                return Err(Error::UndefinedFunction(format!(
                    "function {name} with named arguments does not exist"
                )));
            }
            let bound: Vec<Bound> = args
                .exprs
                .iter()
                .map(|e| self.expr(e, scope))
                .collect::<Result<_>>()?;
            return Err(no_named_function(&name, &bound, &args.names));
        }
        if let Some(def) = agg_func_of(&name) {
            return self.aggregate(def, &name, &args, scope);
        }
        if args.distinct {
            return Err(Error::Syntax(format!(
                "DISTINCT specified, but {name} is not an aggregate function"
            )));
        }
        let meta = match name.as_str() {
            "wtime" => Some(WindowMeta::Wtime),
            "wstart" => Some(WindowMeta::Wstart),
            "wrange" => Some(WindowMeta::Wrange),
            "wslide" => Some(WindowMeta::Wslide),
            _ => None,
        };
        if let Some(m) = meta {
            if !args.exprs.is_empty() {
                return Err(Error::UndefinedFunction(format!(
                    "function {name} takes no arguments; write {name}(*)"
                )));
            }
            let Some(time_type) = scope.window_time else {
                return Err(unsupported(format!("{name}(*) is only valid in a query with a window clause ([RANGE BY ...] after the stream)")));
            };
            let ty = match m {
                WindowMeta::Wtime | WindowMeta::Wstart => time_type,
                _ => DataType::Interval,
            };
            return Ok(Bound::new(Expr::WindowMeta(m), ty));
        }
        if args.star {
            return Err(Error::UndefinedFunction(format!(
                "function {name}(*) does not exist"
            )));
        }
        if name == "tcq_advance" {
            return Err(unsupported("tcq_advance(stream, time) must be called alone: SELECT tcq_advance('stream', '<timestamp>')"));
        }
        if session_func_of(&name).is_some() {
            return Err(unsupported(format!(
                "{name}() must be called alone, without FROM: SELECT {name}(...)"
            )));
        }
        if name == "mod" {
            // mod(a, b) is the % operator, with its types.
            let [a, b] = &args.exprs[..] else {
                return Err(Error::UndefinedFunction(format!(
                    "function mod with {} arguments does not exist",
                    args.exprs.len()
                )));
            };
            let (a, b) = (self.expr(a, scope)?, self.expr(b, scope)?);
            return self.binary(BinaryOp::Mod, a, b);
        }
        let func = match functions::scalar(&name) {
            Some(def) => def.func,
            None => {
                let bound: Vec<Bound> = args
                    .exprs
                    .iter()
                    .map(|e| self.expr(e, scope))
                    .collect::<Result<_>>()?;
                let types: Vec<String> = bound.iter().map(|b| type_label(b.ty)).collect();
                return Err(Error::UndefinedFunction(format!(
                    "function {name}({}) does not exist",
                    types.join(", ")
                )));
            }
        };
        let bound: Vec<Bound> = args
            .exprs
            .iter()
            .map(|e| self.expr(e, scope))
            .collect::<Result<_>>()?;
        let bound = positional(func, &name, bound, &args.names)?;
        self.scalar(func, bound)
    }

    pub(super) fn aggregate(
        &mut self,
        def: &functions::AggDef,
        name: &str,
        args: &Args,
        scope: &Scope,
    ) -> Result<Bound> {
        if self.in_agg_arg {
            return Err(Error::Grouping(
                "aggregate function calls cannot be nested".into(),
            ));
        }
        let func = match def.kernel {
            functions::AggKernel::Partial(func) => func,
            functions::AggKernel::Regr(_) | functions::AggKernel::OrderedSet(_) => {
                return Err(unsupported(format!(
                    "{name}() is computed by finite queries only; continuous queries do not \
                     compute it"
                )))
            }
            _ => {
                return Err(unsupported(format!(
                    "{name}() keeps its values in order: finite queries over joins compute it, \
                     continuous queries and queries over one stream or table do not"
                )))
            }
        };
        if !self.agg_mode {
            return Err(Error::Grouping(format!(
                "aggregate functions are not allowed in {}",
                if self.clause.is_empty() {
                    "this context"
                } else {
                    self.clause
                }
            )));
        }
        let (func, arg, arg_type) = if args.star || (func == AggFunc::Count && args.none) {
            if func != AggFunc::Count || args.distinct {
                return Err(Error::UndefinedFunction(format!(
                    "function {name}(*) does not exist"
                )));
            }
            (AggFunc::CountStar, None, None)
        } else {
            let [arg] = &args.exprs[..] else {
                return Err(Error::UndefinedFunction(format!(
                    "function {name} takes exactly one argument"
                )));
            };
            self.in_agg_arg = true;
            self.agg_mode = false;
            let b = self.expr(arg, scope);
            self.agg_mode = true;
            self.in_agg_arg = false;
            let b = b?;
            let ty = b.ty.unwrap_or(DataType::Text);
            let e = if b.ty.is_none() {
                self.coerce(b, ty, name)?
            } else {
                b.expr
            };
            (func, Some(e), Some(ty))
        };
        let result_type = agg_result_type(def, name, arg_type)?;
        let call = AggCall {
            func,
            arg,
            arg_type: arg_type.unwrap_or(DataType::Int8),
            distinct: args.distinct,
            result_type,
        };
        let st = self
            .agg
            .as_mut()
            .expect("aggregate mode has an aggregate state");
        let idx = match st.calls.iter().position(|c| *c == call) {
            Some(i) => i,
            None => {
                st.calls.push(call);
                st.calls.len() - 1
            }
        };
        Ok(Bound::new(Expr::Column(st.keys.len() + idx), result_type))
    }

    pub(super) fn scalar(&mut self, func: ScalarFunc, args: Vec<Bound>) -> Result<Bound> {
        use ScalarFunc as F;
        let name = functions::SCALARS
            .iter()
            .find(|s| s.func == func)
            .map_or_else(
                || format!("{func:?}").to_lowercase(),
                |s| s.name.to_string(),
            );
        // A parameter's type error names the whole call, as PostgreSQL's message does
        // (`function lpad(text, bigint, unknown) does not exist`).
        let no_overload = no_function(&name, &args);
        let bound = match func {
            F::Abs
            | F::Round
            | F::Floor
            | F::Ceil
            | F::Sqrt
            | F::Trunc
            | F::Sign
            | F::Exp
            | F::Ln
            | F::Log10 => self.math_scalar(func, args, &name),
            F::Coalesce | F::Greatest | F::Least | F::NullIf => {
                self.conditional_scalar(func, args, &name)
            }
            F::Lower
            | F::Upper
            | F::Length
            | F::OctetLength
            | F::Substr
            | F::Concat
            | F::CurrentSetting
            // Bound from `x op ANY (...)` only; no name calls it (an arity error here).
            | F::Quantified(_) => self.text_scalar(func, args, &name),
            F::Timezone | F::DateTrunc | F::DatePart | F::ToTimestamp | F::ToDate => {
                self.time_scalar(func, args, &name)
            }
            F::Now
            | F::Version
            | F::CurrentDatabase
            | F::CurrentSchema
            | F::CurrentUser
            | F::BackendPid => self.niladic_scalar(func, args, &name),
            F::Power
            | F::Random
            | F::ClockTimestamp
            | F::Lpad
            | F::Rpad
            | F::Reverse
            | F::Initcap
            | F::Ascii
            | F::Repeat
            | F::Strpos
            | F::Chr
            | F::ToHex => self.added_scalar(func, args, &name),
            F::Md5
            | F::RegexpReplace
            | F::ToChar
            | F::Age
            | F::DateBin
            | F::JustifyHours
            | F::JustifyDays
            | F::JustifyInterval
            | F::WidthBucket
            | F::RegexpCount
            | F::RegexpInstr
            | F::RegexpLike
            | F::RegexpSubstr => self.format_or_date_scalar(func, args, &name),
            F::Translate
            | F::IsFinite
            | F::Cbrt
            | F::Degrees
            | F::Radians
            | F::Pi
            | F::Gcd
            | F::Lcm
            | F::Div
            | F::Scale
            | F::NumNulls
            | F::NumNonNulls
            | F::MakeDate
            | F::MakeTime
            | F::MakeTimestamp
            | F::MakeInterval
            | F::MakeTimestampTz
            | F::Btrim
            | F::Ltrim
            | F::Rtrim
            | F::LikeEscape
            | F::Factorial
            | F::ToNumber
            | F::Trig(_)
            | F::MinScale
            | F::TrimScale => self.math_more_scalar(func, args, &name),
            // Made by casts (numeric_typmod) or operators only; no name calls them.
            F::NumericTypmod
            | F::TimeTypmod
            | F::BitAnd
            | F::BitOr
            | F::BitXor
            | F::BitNot
            | F::ShiftLeft
            | F::ShiftRight
            | F::RegexMatch
            | F::RegexIMatch
            | F::SimilarTo
            | F::RegexSubstr
            | F::SimilarSubstr
            | F::Overlaps
            | F::BpcharText => return Err(no_overload),
        };
        let (expr_args, ty) = bound.map_err(|e| match e {
            Error::UndefinedFunction(m) if m.starts_with(&format!("function {name}(")) => {
                no_overload
            }
            e => e,
        })?;
        Ok(Bound::new(
            Expr::Func {
                func,
                args: expr_args,
            },
            ty,
        ))
    }

    /// `abs` and the rounding/transcendental functions: their argument types and result
    /// type. Errors: 42883 for arguments PostgreSQL has no overload for.
    fn math_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        let n = args.len();
        Ok(match func {
            ScalarFunc::Abs => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                let t = a.ty.unwrap_or(T::Float8);
                if !t.is_numeric() {
                    return Err(arity_err(&[a]));
                }
                (vec![self.coerce(a, t, "abs")?], t)
            }
            // log(b, x) is numeric only: a float is 42883 (no implicit cast to numeric).
            ScalarFunc::Log10 if n == 2 => {
                let float = |t: T| !t.is_numeric() || matches!(t, T::Float4 | T::Float8);
                if args.iter().any(|a| a.ty.is_some_and(float)) {
                    return Err(arity_err(&args));
                }
                let v = args
                    .into_iter()
                    .map(|a| self.coerce(a, T::Numeric, name))
                    .collect::<Result<_>>()?;
                (v, T::Numeric)
            }
            ScalarFunc::Round
            | ScalarFunc::Floor
            | ScalarFunc::Ceil
            | ScalarFunc::Sqrt
            | ScalarFunc::Trunc
            | ScalarFunc::Sign
            | ScalarFunc::Exp
            | ScalarFunc::Ln
            | ScalarFunc::Log10 => {
                let scaled = matches!(func, ScalarFunc::Round | ScalarFunc::Trunc);
                if n == 0 || n > 2 || (n == 2 && !scaled) {
                    return Err(arity_err(&args));
                }
                let t0 = args[0].ty.unwrap_or(T::Float8);
                if !t0.is_numeric() {
                    return Err(arity_err(&args));
                }
                // PostgreSQL has round/floor/ceil/sqrt of double precision and of numeric,
                // and round(numeric, integer) only (a bigint or numeric scale finds no
                // overload, 42883): integers take double precision (the
                // preferred numeric type) unless a scale is given.
                if n == 2 && matches!(t0, T::Float4 | T::Float8) {
                    return Err(arity_err(&args));
                }
                let t = if n == 2 || t0 == T::Numeric {
                    T::Numeric
                } else {
                    T::Float8
                };
                let mut it = args.into_iter();
                let mut v = vec![self.coerce(it.next().expect("one argument"), t, name)?];
                if let Some(s) = it.next() {
                    v.push(self.int_arg(s, name)?);
                }
                (v, t)
            }
            _ => return Err(arity_err(&args)),
        })
    }

    /// `coalesce`, `greatest`, `least`, `nullif`: the arguments unified to one type.
    /// Errors: 42883 for a wrong argument count, 42804 for types that do not unify.
    fn conditional_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        let n = args.len();
        Ok(match func {
            ScalarFunc::NullIf if n == 2 && args[0].ty.is_some() => {
                // nullif(a, b) is a's type (varchar resolves to text, the polymorphic
                // argument's category type); b is compared with it as `a = b` would.
                let ty = match (args[0].ty.expect("typed"), args[1].ty) {
                    (T::Varchar(_), _) => T::Text,
                    // The `=` PostgreSQL resolves promotes the first argument where no
                    // cross-type operator takes it: integer = numeric is numeric's.
                    (a, Some(T::Numeric)) if a.is_integer() => T::Numeric,
                    (a, Some(T::Float4 | T::Float8)) if a.is_integer() || a == T::Numeric => {
                        T::Float8
                    }
                    (t, _) => t,
                };
                let mut it = args.into_iter();
                let a = it.next().expect("two arguments");
                let a = if a.ty == Some(ty) || ty == T::Text {
                    a.expr
                } else {
                    self.coerce(a, ty, name)?
                };
                let b = it.next().expect("two arguments");
                let b = match b.ty {
                    Some(t) if t != ty && t.is_numeric() && ty.is_numeric() => b.expr,
                    _ => self.coerce(b, ty, name)?,
                };
                (vec![a, b], ty)
            }
            ScalarFunc::Coalesce
            | ScalarFunc::Greatest
            | ScalarFunc::Least
            | ScalarFunc::NullIf => {
                if n == 0 || (func == ScalarFunc::NullIf && n != 2) {
                    return Err(arity_err(&args));
                }
                let mut ty = None;
                for a in &args {
                    ty = self.unify(ty, a.ty, &name.to_uppercase())?;
                }
                let ty = ty.unwrap_or(T::Text);
                let v = args
                    .into_iter()
                    .map(|a| self.coerce(a, ty, name))
                    .collect::<Result<_>>()?;
                (v, ty)
            }
            _ => return Err(arity_err(&args)),
        })
    }

    /// The text functions of [`crate::expr`] (`lower`, `substr`, `concat`,
    /// `current_setting`, ...): text arguments, their result type. Errors: 42883.
    fn text_scalar(
        &mut self,
        func: ScalarFunc,
        mut args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        let n = args.len();
        Ok(match func {
            ScalarFunc::Lower
            | ScalarFunc::Upper
            | ScalarFunc::Length
            | ScalarFunc::OctetLength => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                // octet_length(character(n)) counts the padding (PostgreSQL's
                // bpcharoctetlen); the other functions read the text without it.
                let e = match a.ty {
                    Some(DataType::Bpchar(_)) if func == ScalarFunc::OctetLength => a.expr,
                    _ => self.text_arg(a, name)?,
                };
                (
                    vec![e],
                    if matches!(func, ScalarFunc::Length | ScalarFunc::OctetLength) {
                        T::Int4
                    } else {
                        T::Text
                    },
                )
            }
            ScalarFunc::Substr => {
                if !(2..=3).contains(&n) {
                    return Err(arity_err(&args));
                }
                let mut it = args.into_iter();
                let mut v = vec![self.text_arg(it.next().expect("2 args"), name)?];
                for a in it {
                    v.push(self.int_arg(a, name)?);
                }
                (v, T::Text)
            }
            ScalarFunc::Concat => {
                // concat(VARIADIC "any") takes at least one argument.
                if n == 0 {
                    return Err(arity_err(&args));
                }
                let v = args
                    .into_iter()
                    .map(|a| self.text_cast(a))
                    .collect::<Result<_>>()?;
                (v, T::Text)
            }
            ScalarFunc::CurrentSetting => {
                if n == 0 || n > 2 {
                    return Err(arity_err(&args));
                }
                let first = args.remove(0);
                let mut v = vec![self.text_arg(first, name)?];
                if let Some(missing_ok) = args.pop() {
                    v.push(self.boolean(missing_ok, "current_setting")?);
                }
                (v, T::Text)
            }
            _ => return Err(arity_err(&args)),
        })
    }

    /// `timezone`, `date_trunc` (also with a zone: `(text, timestamptz, text)`), `date_part`,
    /// `to_timestamp`: an unknown literal reads as timestamptz, a date as PostgreSQL casts
    /// it. Errors: 42883.
    fn time_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        Ok(match func {
            ScalarFunc::Timezone => {
                let [zone, ts] = <[Bound; 2]>::try_from(args).map_err(|a| arity_err(&a))?;
                let zone = self.text_arg(zone, "timezone")?;
                let (ts_e, out) = match ts.ty {
                    // An unknown literal reads as timestamptz, as in PostgreSQL.
                    None | Some(T::TimestampTz) => {
                        (self.coerce(ts, T::TimestampTz, "timezone")?, T::Timestamp)
                    }
                    Some(T::Timestamp) => (ts.expr, T::TimestampTz),
                    Some(t) => {
                        return Err(Error::UndefinedFunction(format!(
                            "function timezone(unknown, {}) does not exist",
                            t.name()
                        )))
                    }
                };
                (vec![zone, ts_e], out)
            }
            ScalarFunc::DateTrunc if args.len() == 3 => {
                // date_trunc(text, timestamptz, text) only: truncation on that zone's clock.
                let [unit, ts, zone] = <[Bound; 3]>::try_from(args).map_err(|a| arity_err(&a))?;
                let ok = |b: &Bound, t: T| b.ty.is_none_or(|x| x == t || x.is_text());
                if !ok(&unit, T::Text)
                    || !ok(&zone, T::Text)
                    || !ts.ty.is_none_or(|t| t.is_timestamp() || t == T::Date)
                {
                    return Err(arity_err(&[unit, ts, zone]));
                }
                let unit = self.text_arg(unit, name)?;
                let zone = self.text_arg(zone, name)?;
                let ts = self.coerce(ts, T::TimestampTz, name)?;
                (vec![unit, ts, zone], T::TimestampTz)
            }
            ScalarFunc::DateTrunc | ScalarFunc::DatePart => {
                let [unit, ts] = <[Bound; 2]>::try_from(args).map_err(|a| arity_err(&a))?;
                let unit = self.text_arg(unit, name)?;
                let (ts_e, ts_t) = match ts.ty {
                    None => (self.coerce(ts, T::TimestampTz, name)?, T::TimestampTz),
                    Some(t) if t.is_timestamp() || t == T::Interval => (ts.expr, t),
                    Some(T::Time) if func == ScalarFunc::DatePart => (ts.expr, T::Time),
                    // date_part(text, date) reads the date's midnight; date_trunc takes the
                    // date as a timestamptz (date's preferred implicit cast) and gives one.
                    Some(T::Date) => {
                        let to = if func == ScalarFunc::DatePart {
                            T::Timestamp
                        } else {
                            T::TimestampTz
                        };
                        (self.coerce(ts, to, name)?, to)
                    }
                    Some(_) => {
                        return Err(arity_err(&[
                            Bound {
                                expr: unit,
                                ty: Some(T::Text),
                            },
                            ts,
                        ]))
                    }
                };
                (
                    vec![unit, ts_e],
                    if func == ScalarFunc::DatePart {
                        T::Float8
                    } else {
                        ts_t
                    },
                )
            }
            ScalarFunc::ToTimestamp | ScalarFunc::ToDate if args.len() == 2 => {
                let text = |a: &Bound| a.ty.is_none_or(|t| t.is_text());
                if !args.iter().all(text) {
                    return Err(arity_err(&args));
                }
                let v = args
                    .into_iter()
                    .map(|a| self.text_arg(a, name))
                    .collect::<Result<_>>()?;
                let ty = if func == ScalarFunc::ToDate {
                    T::Date
                } else {
                    T::TimestampTz
                };
                (v, ty)
            }
            ScalarFunc::ToTimestamp => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                if a.ty.is_some_and(|t| !t.is_numeric()) {
                    return Err(arity_err(&[a]));
                }
                (vec![self.coerce(a, T::Float8, name)?], T::TimestampTz)
            }
            _ => return Err(arity_err(&args)),
        })
    }

    /// The functions of no argument (`now()`, `version()`, `current_user`, ...) and their
    /// result type. Errors: 42883 when called with arguments.
    fn niladic_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        let n = args.len();
        Ok(match func {
            ScalarFunc::Now => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                (vec![], T::TimestampTz)
            }
            ScalarFunc::Version
            | ScalarFunc::CurrentDatabase
            | ScalarFunc::CurrentSchema
            | ScalarFunc::CurrentUser => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                (vec![], T::Text)
            }
            ScalarFunc::BackendPid => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                (vec![], T::Int4)
            }
            _ => return Err(arity_err(&args)),
        })
    }

    /// The arguments and result type of the math and text functions of
    /// [`crate::expr_funcs`] (`power`, `lpad`, `strpos`, `to_hex`, ...), as `scalar` types
    /// the others. Errors: 42883 for arguments PostgreSQL has no overload for.
    fn added_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        let n = args.len();
        Ok(match func {
            ScalarFunc::Power => {
                if n != 2 || args.iter().any(|a| a.ty.is_some_and(|t| !t.is_numeric())) {
                    return Err(arity_err(&args));
                }
                // power(numeric, numeric) when an operand is numeric and none a float;
                // double precision (the preferred numeric type) otherwise.
                let numeric = args.iter().any(|a| a.ty == Some(T::Numeric))
                    && !args
                        .iter()
                        .any(|a| matches!(a.ty, Some(T::Float4 | T::Float8)));
                let t = if numeric { T::Numeric } else { T::Float8 };
                let v = args
                    .into_iter()
                    .map(|a| self.coerce(a, t, name))
                    .collect::<Result<_>>()?;
                (v, t)
            }
            ScalarFunc::Random | ScalarFunc::ClockTimestamp => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                let t = if func == ScalarFunc::Random {
                    T::Float8
                } else {
                    T::TimestampTz
                };
                (vec![], t)
            }
            ScalarFunc::Lpad | ScalarFunc::Rpad => {
                if !(2..=3).contains(&n) {
                    return Err(arity_err(&args));
                }
                let mut it = args.into_iter();
                let mut v = vec![self.text_arg(it.next().expect("2 args"), name)?];
                v.push(self.int_arg(it.next().expect("2 args"), name)?);
                if let Some(fill) = it.next() {
                    v.push(self.text_arg(fill, name)?);
                }
                (v, T::Text)
            }
            ScalarFunc::Reverse | ScalarFunc::Initcap | ScalarFunc::Ascii => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                let t = if func == ScalarFunc::Ascii {
                    T::Int4
                } else {
                    T::Text
                };
                (vec![self.text_arg(a, name)?], t)
            }
            ScalarFunc::Repeat => {
                let [s, k] = <[Bound; 2]>::try_from(args).map_err(|a| arity_err(&a))?;
                (
                    vec![self.text_arg(s, name)?, self.int_arg(k, name)?],
                    T::Text,
                )
            }
            ScalarFunc::Strpos => {
                let [s, sub] = <[Bound; 2]>::try_from(args).map_err(|a| arity_err(&a))?;
                (
                    vec![self.text_arg(s, name)?, self.text_arg(sub, name)?],
                    T::Int4,
                )
            }
            ScalarFunc::Chr => {
                let [k] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                (vec![self.int_arg(k, name)?], T::Text)
            }
            ScalarFunc::ToHex => {
                let [k] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                let t = match k.ty {
                    Some(T::Int8) => T::Int8,
                    Some(t) if t.is_integer() => T::Int4,
                    None => T::Int4,
                    Some(_) => return Err(arity_err(&[k])),
                };
                (vec![self.coerce(k, t, name)?], T::Text)
            }
            _ => return Err(arity_err(&args)),
        })
    }

    pub(super) fn text_arg(&mut self, a: Bound, name: &str) -> Result<Expr> {
        match a.ty {
            None => self.coerce(a, DataType::Text, name),
            Some(t) if t.is_text() => Ok(super::expr::bpchar_as_text(a.expr, a.ty)),
            Some(t) => Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                t.name()
            ))),
        }
    }

    /// An `integer` parameter's argument: a `smallint`, an `integer` or an untyped
    /// literal, as PostgreSQL's implicit casts allow. Errors: 42883 for any other type (a
    /// `bigint` too: `repeat('a', 3::bigint)` has no overload in PostgreSQL).
    pub(super) fn int_arg(&mut self, a: Bound, name: &str) -> Result<Expr> {
        match a.ty {
            Some(DataType::Int2 | DataType::Int4) => self.coerce(a, DataType::Int4, name),
            None => self.coerce(a, DataType::Int4, name),
            Some(t) => Err(Error::UndefinedFunction(format!(
                "function {name}(text, {}) does not exist",
                t.name()
            ))),
        }
    }
}
