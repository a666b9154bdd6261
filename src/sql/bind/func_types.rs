//! Argument and result typing of the bit operators and of the pattern, formatting and
//! date functions (`&`, `|`, `#`, `~`, `<<`, `>>`, `md5`, `regexp_replace`, `~`,
//! `SIMILAR TO`, `to_char`, `age`, `date_bin`, `justify_*`, `width_bucket`), by
//! PostgreSQL 15's overloads. Errors: 42883 for argument types PostgreSQL has no
//! overload for, with its message.

use super::*;

/// The integer type PostgreSQL's bit operators resolve two operands to: the wider one
/// (`smallint & integer` is `int4and`).
fn wider_integer(a: DataType, b: DataType) -> DataType {
    use DataType as T;
    match (a, b) {
        (T::Int8, _) | (_, T::Int8) => T::Int8,
        (T::Int4, _) | (_, T::Int4) => T::Int4,
        _ => T::Int2,
    }
}

impl Binder<'_> {
    /// `l op r` of the bit operators (`op` its symbol). Shifts keep the left operand's
    /// type and take an integer count; the others work on one integer type.
    pub(super) fn bit_operator(
        &mut self,
        func: ScalarFunc,
        op: &str,
        l: Bound,
        r: Bound,
    ) -> Result<Bound> {
        use DataType as T;
        let integer = |t: Option<T>| t.is_none_or(|t| t.is_integer());
        if !integer(l.ty) || !integer(r.ty) {
            return Err(no_operator(l.ty, op, r.ty));
        }
        let shift = matches!(func, ScalarFunc::ShiftLeft | ScalarFunc::ShiftRight);
        let (lt, rt) = match (l.ty, r.ty) {
            (None, None) => return Err(operator_not_unique(op, true)),
            (Some(a), None) => (a, if shift { T::Int4 } else { a }),
            (None, Some(b)) => (if shift { T::Int4 } else { b }, b),
            (Some(a), Some(b)) if shift => (a, b),
            (Some(a), Some(b)) => (wider_integer(a, b), wider_integer(a, b)),
        };
        if shift && rt == T::Int8 {
            return Err(no_operator(Some(lt), op, Some(rt)));
        }
        let rt = if shift { T::Int4 } else { rt };
        let args = vec![self.coerce(l, lt, op)?, self.coerce(r, rt, op)?];
        Ok(Bound::new(Expr::Func { func, args }, lt))
    }

    /// `~x`: bitwise NOT of an integer.
    pub(super) fn bit_not(&mut self, x: Bound) -> Result<Bound> {
        let t = match x.ty {
            None => return Err(operator_not_unique("~", false)),
            Some(t) if t.is_integer() => t,
            Some(t) => {
                return Err(Error::UndefinedFunction(format!(
                    "operator does not exist: ~ {}",
                    t.name()
                )))
            }
        };
        let args = vec![self.coerce(x, t, "~")?];
        Ok(Bound::new(
            Expr::Func {
                func: ScalarFunc::BitNot,
                args,
            },
            t,
        ))
    }

    /// A regular expression operator or `SIMILAR TO`: two text operands, a boolean.
    pub(super) fn pattern_match(
        &mut self,
        func: ScalarFunc,
        op: &str,
        negated: bool,
        s: Bound,
        pattern: Bound,
    ) -> Result<Bound> {
        // SIMILAR TO is `~` of a pattern similar_to_escape made text.
        let (s, pattern) = match op {
            "SIMILAR TO" => {
                if pattern.ty.is_some_and(|t| !t.is_text()) {
                    return Err(no_function("similar_to_escape", &[pattern]));
                }
                let pattern = Bound::new(self.text_operand(pattern, op)?, DataType::Text);
                self.text_operands(s, pattern, "~")?
            }
            _ => self.text_operands(s, pattern, op)?,
        };
        let args = vec![s, pattern];
        let m = Expr::Func { func, args };
        Ok(Bound::new(
            if negated {
                Expr::Unary {
                    op: UnaryOp::Not,
                    expr: Box::new(m),
                }
            } else {
                m
            },
            DataType::Bool,
        ))
    }

    /// The pattern, formatting and date functions: their coerced arguments and result.
    pub(super) fn format_or_date_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let no_such = |args: &[Bound]| no_function(name, args);
        let n = args.len();
        Ok(match func {
            ScalarFunc::Md5 if n == 1 => {
                let a = args.into_iter().next().expect("one");
                (vec![self.text_arg(a, name)?], T::Text)
            }
            ScalarFunc::RegexpReplace
            | ScalarFunc::RegexpCount
            | ScalarFunc::RegexpInstr
            | ScalarFunc::RegexpLike
            | ScalarFunc::RegexpSubstr => self.regexp_args(func, args, name)?,
            ScalarFunc::ToChar if n == 2 => {
                let [x, f] = <[Bound; 2]>::try_from(args).map_err(|a| no_such(&a))?;
                let x = match x.ty {
                    Some(t) if t.is_numeric() || t.is_timestamp() || t == T::Interval => x.expr,
                    // A date is formatted as its midnight (date's preferred cast).
                    Some(T::Date) => self.coerce(x, T::TimestampTz, name)?,
                    _ => return Err(no_such(&[x, f])),
                };
                (vec![x, self.text_arg(f, name)?], T::Text)
            }
            ScalarFunc::JustifyHours | ScalarFunc::JustifyDays | ScalarFunc::JustifyInterval
                if n == 1 =>
            {
                let a = args.into_iter().next().expect("one");
                if a.ty.is_some_and(|t| t != T::Interval) {
                    return Err(no_such(&[a]));
                }
                (vec![self.coerce(a, T::Interval, name)?], T::Interval)
            }
            ScalarFunc::Age if (1..=2).contains(&n) => self.age_args(args, &no_such)?,
            ScalarFunc::DateBin if n == 3 => {
                let [stride, src, origin] =
                    <[Bound; 3]>::try_from(args).map_err(|a| no_such(&a))?;
                let t = match (src.ty, origin.ty) {
                    (Some(t), _) | (None, Some(t)) if t.is_timestamp() => t,
                    (None, None) => T::TimestampTz,
                    _ => return Err(no_such(&[stride, src, origin])),
                };
                if stride.ty.is_some_and(|s| s != T::Interval) {
                    return Err(no_such(&[stride, src, origin]));
                }
                let v = vec![
                    self.coerce(stride, T::Interval, name)?,
                    self.coerce(src, t, name)?,
                    self.coerce(origin, t, name)?,
                ];
                (v, t)
            }
            ScalarFunc::WidthBucket if n == 4 => {
                let numbers = args[..3]
                    .iter()
                    .all(|a| a.ty.is_none_or(|t| t.is_numeric()));
                if !numbers || args[3].ty.is_some_and(|t| !t.is_integer()) {
                    return Err(no_such(&args));
                }
                // width_bucket(numeric, ...) when an operand is numeric and none a float;
                // double precision otherwise, as PostgreSQL resolves it.
                let numeric = args[..3].iter().any(|a| a.ty == Some(T::Numeric))
                    && !args[..3]
                        .iter()
                        .any(|a| matches!(a.ty, Some(T::Float4 | T::Float8)));
                let t = if numeric { T::Numeric } else { T::Float8 };
                let mut it = args.into_iter();
                let mut v = Vec::with_capacity(4);
                for a in it.by_ref().take(3) {
                    v.push(self.coerce(a, t, name)?);
                }
                v.push(self.int_arg(it.next().expect("four"), name)?);
                (v, T::Int4)
            }
            _ => return Err(no_such(&args)),
        })
    }

    /// The arguments of the regular expression functions by PostgreSQL 15's overloads, text
    /// (`t`) and integer (`i`) parameters in order: regexp_replace `tttt` (flags) or
    /// `ttti`, `tttii`, `tttiit` (start, n, flags: an integer fourth argument is a start,
    /// an untyped one flags); regexp_count `tt`..`ttit`; regexp_instr `tt`..`ttiiiti`;
    /// regexp_like `tt`, `ttt`; regexp_substr `tt`..`ttiiti`. Errors: 42883 otherwise.
    fn regexp_args(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let fourth_int = args
            .get(3)
            .and_then(|a| a.ty)
            .is_some_and(|t| t.is_integer());
        let (params, min, ty) = match func {
            ScalarFunc::RegexpReplace if args.len() == 4 && !fourth_int => ("tttt", 3, T::Text),
            ScalarFunc::RegexpReplace => ("tttiit", 3, T::Text),
            ScalarFunc::RegexpCount => ("ttit", 2, T::Int4),
            ScalarFunc::RegexpInstr => ("ttiiiti", 2, T::Int4),
            ScalarFunc::RegexpLike => ("ttt", 2, T::Bool),
            _ => ("ttiiti", 2, T::Text),
        };
        if args.len() < min || args.len() > params.len() {
            return Err(no_function(name, &args));
        }
        let mut v = Vec::with_capacity(args.len());
        for (a, p) in args.into_iter().zip(params.chars()) {
            v.push(if p == 't' {
                self.text_arg(a, name)?
            } else {
                self.int_arg(a, name)?
            });
        }
        Ok((v, ty))
    }

    /// `age(a, b)` of two timestamps of one type, and `age(a)`, which is `age` from
    /// today's midnight (of the session's zone for a timestamptz).
    fn age_args(
        &mut self,
        args: Vec<Bound>,
        no_such: &dyn Fn(&[Bound]) -> Error,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        // PostgreSQL's resolution among age(timestamp, timestamp) and age(timestamptz,
        // timestamptz): the timestamp overload when a timestamp argument matches it exactly
        // and nothing needs a timestamptz (dates cast implicitly to either); the timestamptz
        // one otherwise (a timestamp casts implicitly to it, not back).
        let types: Vec<T> = args.iter().filter_map(|a| a.ty).collect();
        if types.iter().any(|u| !u.is_timestamp() && *u != T::Date) {
            return Err(no_such(&args));
        }
        let t = if types.contains(&T::Timestamp) && !types.contains(&T::TimestampTz) {
            T::Timestamp
        } else {
            T::TimestampTz
        };
        let mut v = args
            .into_iter()
            .map(|a| self.coerce(a, t, "age"))
            .collect::<Result<Vec<_>>>()?;
        if v.len() == 1 {
            let midnight = Expr::Func {
                func: ScalarFunc::DateTrunc,
                args: vec![
                    Expr::Literal(Value::Text("day".into())),
                    Expr::Cast {
                        expr: Box::new(Expr::Func {
                            func: ScalarFunc::Now,
                            args: vec![],
                        }),
                        to: t,
                    },
                ],
            };
            v.insert(0, midnight);
        }
        Ok((v, T::Interval))
    }
}
