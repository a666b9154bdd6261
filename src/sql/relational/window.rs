//! Window function calls: PARTITION BY, ORDER BY, frames (ROWS, RANGE, GROUPS with
//! their offsets) and each window function's arguments.

use super::*;

impl RelBinder<'_> {
    /// `f(...) OVER (PARTITION BY .. ORDER BY ..)`: a window function of [`RelWindowFunc`]
    /// or an aggregate. Errors: 0A000 for a frame clause, a named window or another
    /// function; 42803 where window functions are not allowed.
    pub(super) fn window_function(&mut self, f: &ast::Function, name: &str) -> Result<RExpr> {
        let over = f.over.as_ref().expect("a window function has OVER");
        let ast::WindowType::WindowSpec(spec) = over else {
            return Err(unsupported("named windows are not supported"));
        };
        if !self.levels.last().is_some_and(|l| l.agg_ok) {
            return Err(Error::Windowing(
                "window functions are not allowed here".into(),
            ));
        }
        if self.in_window {
            return Err(Error::Windowing(
                "window function calls cannot be nested".into(),
            ));
        }
        self.in_window = true;
        let call = self.window_call(f, name);
        self.in_window = false;
        let (func, ty) = call?;
        let partition_by: Vec<RExpr> = spec
            .partition_by
            .iter()
            .map(|e| self.expr(e))
            .collect::<Result<_>>()?;
        let order_by: Vec<(RExpr, bool, bool)> = spec
            .order_by
            .iter()
            .map(|o| {
                let (descending, nulls_first) = direction(o)?;
                Ok((self.expr(&o.expr)?, descending, nulls_first))
            })
            .collect::<Result<_>>()?;
        let key = match order_by.as_slice() {
            [(k, ..)] => Some(self.static_type(k)),
            _ => None,
        };
        let (frame, range_offsets) = match &spec.window_frame {
            None => (RelFrame::DEFAULT, [None, None]),
            Some(f) => self.frame(f, key)?,
        };
        let arrays = (partition_by.iter().chain(order_by.iter().map(|o| &o.0)))
            .map(|e| array_elem(self.static_type(e)))
            .collect();
        let level = self.levels.last_mut().expect("level");
        level.windows.push(RelWindow {
            func,
            partition_by,
            order_by,
            arrays,
            frame,
            range_offsets,
            ty,
        });
        Ok(RExpr::Window(level.windows.len() - 1))
    }

    /// A frame clause, and its RANGE offsets (start, end) given the single ORDER BY key's
    /// type `key`. Errors: 42P20 for bounds PostgreSQL refuses (a frame starting at
    /// UNBOUNDED FOLLOWING or after its end), 22013 for a negative offset, 0A000 for
    /// EXCLUDE or a ROWS/GROUPS offset that is not an integer constant, and
    /// [`Self::range_offset`]'s errors.
    pub(super) fn frame(
        &mut self,
        f: &ast::WindowFrame,
        key: Option<RType>,
    ) -> Result<(RelFrame, [Option<Value>; 2])> {
        use ast::WindowFrameBound as B;
        let units = match f.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        let mut range_offsets = [None, None];
        let mut bound = |b: &B, what: &str| -> Result<FrameBound> {
            let mut offset = |binder: &mut Self, e: &ast::Expr| -> Result<u64> {
                if units == FrameUnits::Range {
                    let v = binder.range_offset(e, key.as_ref(), what)?;
                    range_offsets[usize::from(what == "ending")] = Some(v);
                    return Ok(0);
                }
                let RExpr::Lit(v) = binder.expr(e)? else {
                    return Err(unsupported("a frame offset must be an integer constant"));
                };
                match crate::exec::relational::int_of(&v) {
                    Some(n) if n >= 0 => Ok(n as u64),
                    Some(_) => Err(Error::InvalidPrecedingOrFollowingSize(format!(
                        "frame {what} offset must not be negative"
                    ))),
                    None => Err(unsupported("a frame offset must be an integer constant")),
                }
            };
            Ok(match b {
                B::CurrentRow => FrameBound::CurrentRow,
                B::Preceding(None) => FrameBound::UnboundedPreceding,
                B::Following(None) => FrameBound::UnboundedFollowing,
                B::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
                B::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
            })
        };
        let start = bound(&f.start_bound, "starting")?;
        let end = match &f.end_bound {
            None => FrameBound::CurrentRow,
            Some(b) => bound(b, "ending")?,
        };
        let refused = match (start, end) {
            (FrameBound::UnboundedFollowing, _) => {
                Some("frame start cannot be UNBOUNDED FOLLOWING")
            }
            (_, FrameBound::UnboundedPreceding) => Some("frame end cannot be UNBOUNDED PRECEDING"),
            (FrameBound::CurrentRow, FrameBound::Preceding(_)) => {
                Some("frame starting from current row cannot have preceding rows")
            }
            (FrameBound::Following(_), FrameBound::Preceding(_) | FrameBound::CurrentRow) => {
                Some("frame starting from following row cannot have preceding rows")
            }
            _ => None,
        };
        match refused {
            Some(m) => Err(Error::Windowing(m.into())),
            None => Ok((RelFrame { units, start, end }, range_offsets)),
        }
    }

    /// The offset of a RANGE frame bound, as PostgreSQL's `in_range` support functions
    /// take it: an integer for integer keys, a number for numeric and float keys (as the
    /// key's kind), an interval for dates, timestamps and intervals. Errors: 42P20 without
    /// exactly one ORDER BY key, 0A000 for another key or offset type or an offset that
    /// is not a constant, 22004 for NULL, 22013 for a negative offset.
    pub(super) fn range_offset(
        &mut self,
        e: &ast::Expr,
        key: Option<&RType>,
        what: &str,
    ) -> Result<Value> {
        let Some(key) = key else {
            return Err(Error::Windowing(
                "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column".into(),
            ));
        };
        let bound = self.expr(e)?;
        let offset_type = self.static_type(&bound);
        // A literal, or a cast of one (`interval '1 day'`).
        let v = match bound {
            RExpr::Lit(v) => v,
            RExpr::Template { expr, args } => {
                let args: Vec<Value> = args
                    .into_iter()
                    .map(|a| match a {
                        RExpr::Lit(v) => Ok(v),
                        _ => Err(unsupported("a frame offset must be a constant")),
                    })
                    .collect::<Result<_>>()?;
                crate::expr::eval(&expr, &crate::expr::EvalContext::new(&args, &[], None))?
            }
            _ => return Err(unsupported("a frame offset must be a constant")),
        };
        use DataType as D;
        let key_type = key.data_type();
        let is_int = |t: DataType| matches!(t, D::Int2 | D::Int4 | D::Int8);
        let is_num = |t: DataType| is_int(t) || matches!(t, D::Numeric | D::Float4 | D::Float8);
        let off = offset_type.data_type();
        let unknown = offset_type == RType::Unknown;
        let to = match key_type {
            k if is_int(k) && is_int(off) => Some(off),
            D::Numeric if is_num(off) && !matches!(off, D::Float4 | D::Float8) => Some(D::Numeric),
            D::Float4 | D::Float8 if is_num(off) => Some(D::Float8),
            D::Date | D::Timestamp | D::TimestampTz | D::Interval
                if off == D::Interval || unknown =>
            {
                Some(D::Interval)
            }
            k if is_num(k)
                || matches!(k, D::Date | D::Timestamp | D::TimestampTz | D::Interval) =>
            {
                None
            }
            _ => {
                return Err(unsupported(format!(
                    "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                    key.name()
                )))
            }
        };
        let Some(to) = to else {
            return Err(unsupported(format!(
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} \
                 and offset type {}",
                key.name(),
                offset_type.name()
            )));
        };
        let v = crate::expr::cast_value(v, to)?;
        let negative = match &v {
            Value::Null => {
                return Err(Error::NullValueNotAllowed(format!(
                    "frame {what} offset must not be null"
                )))
            }
            Value::Interval(iv) => iv.months < 0 || iv.days < 0 || iv.micros < 0,
            v => crate::expr::cmp_values(v, &Value::Int4(0)) == std::cmp::Ordering::Less,
        };
        if negative {
            return Err(Error::InvalidPrecedingOrFollowingSize(
                "invalid preceding or following size in window function".into(),
            ));
        }
        Ok(v)
    }

    /// The function of a window call and its result type.
    pub(super) fn window_call(
        &mut self,
        f: &ast::Function,
        name: &str,
    ) -> Result<(RelWindowFunc, RType)> {
        if crate::sql::functions::aggregate(name).is_some() {
            // Bound as the same call without OVER, then taken back out of the block's
            // GROUP BY aggregates (unless the block computes that call too).
            let mut call = f.clone();
            call.over = None;
            let before = self.levels.last().map_or(0, |l| l.aggs.len());
            self.window_agg = true;
            let bound = self.function(&call);
            self.window_agg = false;
            let RExpr::Col { idx, .. } = bound? else {
                unreachable!("an aggregate call binds to its column")
            };
            let level = self.levels.last_mut().expect("level");
            let j = idx - level.width;
            let agg = if j < before {
                level.aggs[j].clone()
            } else {
                level.aggs.remove(j)
            };
            let ty = agg.ty;
            return Ok((RelWindowFunc::Agg(agg), ty));
        }
        let args = self.window_args(f)?;
        let int8 = RType::Base(DataType::Int8);
        let arity = |lo: usize, hi: usize| {
            if (lo..=hi).contains(&args.len()) {
                Ok(())
            } else {
                Err(Error::UndefinedFunction(format!(
                    "function {name} with {} arguments does not exist",
                    args.len()
                )))
            }
        };
        match name {
            "percent_rank" | "cume_dist" | "rank" | "dense_rank" if !args.is_empty() => {
                Err(Error::WrongObjectType(format!(
                    "WITHIN GROUP is required for ordered-set aggregate {name}"
                )))
            }
            "row_number" | "rank" | "dense_rank" => {
                arity(0, 0)?;
                let func = match name {
                    "row_number" => RelWindowFunc::RowNumber,
                    "rank" => RelWindowFunc::Rank,
                    _ => RelWindowFunc::DenseRank,
                };
                Ok((func, int8))
            }
            "percent_rank" | "cume_dist" => {
                arity(0, 0)?;
                let func = if name == "cume_dist" {
                    RelWindowFunc::CumeDist
                } else {
                    RelWindowFunc::PercentRank
                };
                Ok((func, RType::Base(DataType::Float8)))
            }
            "ntile" | "nth_value" | "lag" | "lead"
                if !self.int4_arg(&args, if name == "ntile" { 0 } else { 1 }) =>
            {
                Err(Error::UndefinedFunction(format!(
                    "function {name} does not exist for these argument types (its row count is an integer)"
                )))
            }
            "ntile" => {
                arity(1, 1)?;
                let n = args.into_iter().next().expect("one argument");
                Ok((RelWindowFunc::Ntile(n), RType::Base(DataType::Int4)))
            }
            "nth_value" => {
                arity(2, 2)?;
                let mut it = args.into_iter();
                let value = it.next().expect("two arguments");
                let ty = self.static_type(&value);
                let n = it.next().expect("two arguments");
                Ok((RelWindowFunc::NthValue(value, n), ty))
            }
            "lag" | "lead" => {
                arity(1, 3)?;
                let mut it = args.into_iter();
                let value = it.next().expect("one argument");
                let ty = self.static_type(&value);
                let (offset, default) = (it.next(), it.next());
                let lead = name == "lead";
                Ok((
                    RelWindowFunc::Shift {
                        lead,
                        value,
                        offset,
                        default,
                    },
                    ty,
                ))
            }
            "first_value" | "last_value" => {
                arity(1, 1)?;
                let value = args.into_iter().next().expect("one argument");
                let ty = self.static_type(&value);
                let func = if name == "first_value" {
                    RelWindowFunc::FirstValue(value)
                } else {
                    RelWindowFunc::LastValue(value)
                };
                Ok((func, ty))
            }
            _ if crate::sql::functions::scalar(name).is_some() => Err(Error::WrongObjectType(format!(
                "OVER specified, but {name} is not a window function nor an aggregate function"
            ))),
            _ => Err(unsupported(format!(
                "window function {name}(...) OVER is not supported (row_number, rank, \
                 dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value, \
                 last_value, nth_value and aggregates are)"
            ))),
        }
    }

    /// Whether argument `i` of a window function, when given, is of a type an `integer`
    /// parameter takes (smallint, integer, or an untyped literal or parameter), as
    /// PostgreSQL's `lag(anyelement, integer)` and `ntile(integer)` require.
    pub(super) fn int4_arg(&self, args: &[RExpr], i: usize) -> bool {
        args.get(i).is_none_or(|a| {
            matches!(
                self.static_type(a),
                RType::Base(DataType::Int2 | DataType::Int4) | RType::Unknown
            )
        })
    }

    /// The plain arguments of a window function call.
    pub(super) fn window_args(&mut self, f: &ast::Function) -> Result<Vec<RExpr>> {
        let ast::FunctionArguments::List(l) = &f.args else {
            return Ok(Vec::new());
        };
        if f.filter.is_some() || !l.clauses.is_empty() || l.duplicate_treatment.is_some() {
            return Err(unsupported(
                "FILTER, DISTINCT and ORDER BY in a window function's arguments are not supported",
            ));
        }
        l.args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => self.expr(e),
                other => Err(Error::Syntax(format!(
                    "syntax error at or near \"{other}\""
                ))),
            })
            .collect()
    }

    /// Best-effort static type of a bound expression.
    /// The type an aggregate's partial state or kernel reads its key as: double precision
    /// for the two-argument statistics and for `percentile_cont` of numbers (PostgreSQL's
    /// implicit casts), `arg_type` otherwise. Checks the arguments that are no key: the
    /// second of a statistic, the fraction (or array of fractions) of a percentile.
    /// Errors: 42883 for an argument that is no number.
    pub(super) fn float8_args(
        &self,
        def: &crate::sql::functions::AggDef,
        name: &str,
        args: &[RExpr],
        arg_type: DataType,
    ) -> Result<DataType> {
        use crate::sql::functions::AggKernel;
        let number = |t: RType| match t {
            RType::Base(d) => d.is_numeric(),
            RType::Unknown => true,
            _ => false,
        };
        let undefined = |types: Vec<RType>| {
            let names: Vec<String> = types.iter().map(|t| t.name()).collect();
            Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                names.join(", ")
            ))
        };
        let types: Vec<RType> = args.iter().map(|a| self.static_type(a)).collect();
        match def.kernel {
            AggKernel::Regr(_) => {
                if types.len() != 2 || !types.iter().all(|t| number(*t)) {
                    return Err(undefined(types));
                }
                Ok(DataType::Float8)
            }
            AggKernel::OrderedSet(f) if f != OrderedSetFunc::Mode => {
                let fractions = match types[0] {
                    RType::Catalog(CatalogType::Array(e)) => Some(e.held_as()),
                    _ => None,
                };
                if fractions.is_some_and(|e| !e.is_numeric()) {
                    return Err(undefined(types));
                }
                if fractions.is_none() && !number(types[0]) {
                    return Err(undefined(types));
                }
                Ok(match f {
                    OrderedSetFunc::PercentileCont if arg_type.is_numeric() => DataType::Float8,
                    _ => arg_type,
                })
            }
            _ => Ok(arg_type),
        }
    }
}
