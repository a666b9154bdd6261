//! Argument and result typing of `translate`, `isfinite`, `cbrt`, `degrees`, `radians`,
//! `pi`, `gcd`, `lcm`, `div`, `scale`, `num_nulls`, `num_nonnulls`, `make_date`,
//! `make_time`, `btrim`, `ltrim`, `rtrim`, `like_escape`, `factorial` and `to_number`, by
//! PostgreSQL 15's overloads. Errors: 42883 for argument types PostgreSQL has no overload for, with its
//! message.

use super::*;

impl Binder<'_> {
    /// The arguments (coerced) and result type of one of this module's functions.
    pub(super) fn math_more_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        use ScalarFunc as F;
        let arity_err = |args: &[Bound]| no_function(name, args);
        let numeric_arg = |a: &Bound| a.ty.is_none_or(|t| t.is_numeric());
        Ok(match func {
            F::Translate => {
                let [s, from, to] = <[Bound; 3]>::try_from(args).map_err(|a| arity_err(&a))?;
                let v = vec![
                    self.text_arg(s, name)?,
                    self.text_arg(from, name)?,
                    self.text_arg(to, name)?,
                ];
                (v, T::Text)
            }
            F::IsFinite => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                match a.ty {
                    Some(T::Date | T::Timestamp | T::TimestampTz | T::Interval) => {
                        (vec![a.expr], T::Bool)
                    }
                    _ => return Err(arity_err(&[a])),
                }
            }
            F::Cbrt | F::Degrees | F::Radians => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                if !numeric_arg(&a) {
                    return Err(arity_err(&[a]));
                }
                (vec![self.coerce(a, T::Float8, name)?], T::Float8)
            }
            F::Pi => {
                if !args.is_empty() {
                    return Err(arity_err(&args));
                }
                (vec![], T::Float8)
            }
            F::Gcd | F::Lcm | F::Div => {
                if args.len() != 2 || !args.iter().all(numeric_arg) {
                    return Err(arity_err(&args));
                }
                let t = common_exact(func, &args).ok_or_else(|| arity_err(&args))?;
                let v = args
                    .into_iter()
                    .map(|a| self.coerce(a, t, name))
                    .collect::<Result<_>>()?;
                (v, t)
            }
            F::Scale | F::MinScale | F::TrimScale => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                // numeric parameters: a float has no implicit cast to numeric.
                if !numeric_arg(&a) || matches!(a.ty, Some(T::Float4 | T::Float8)) {
                    return Err(arity_err(&[a]));
                }
                let t = if func == F::TrimScale {
                    T::Numeric
                } else {
                    T::Int4
                };
                (vec![self.coerce(a, T::Numeric, name)?], t)
            }
            F::Trig(f) => {
                let arity = if f.binary() { 2 } else { 1 };
                if args.len() != arity || !args.iter().all(numeric_arg) {
                    return Err(arity_err(&args));
                }
                let v = args
                    .into_iter()
                    .map(|a| self.coerce(a, T::Float8, name))
                    .collect::<Result<_>>()?;
                (v, T::Float8)
            }
            F::NumNulls | F::NumNonNulls => {
                if args.is_empty() {
                    return Err(arity_err(&args));
                }
                let v = args
                    .into_iter()
                    .map(|a| match a.ty {
                        None => self.coerce(a, T::Text, name),
                        Some(_) => Ok(a.expr),
                    })
                    .collect::<Result<_>>()?;
                (v, T::Int4)
            }
            F::MakeDate | F::MakeTime => {
                let [a, b, c] = <[Bound; 3]>::try_from(args).map_err(|a| arity_err(&a))?;
                let mut v = vec![self.int_arg(a, name)?, self.int_arg(b, name)?];
                if func == F::MakeDate {
                    v.push(self.int_arg(c, name)?);
                    (v, T::Date)
                } else {
                    if !numeric_arg(&c) {
                        return Err(arity_err(&[c]));
                    }
                    v.push(self.coerce(c, T::Float8, name)?);
                    (v, T::Time)
                }
            }
            F::MakeTimestamp | F::MakeTimestampTz => {
                let arity = if func == F::MakeTimestamp {
                    6..=6
                } else {
                    6..=7
                };
                let zone_ok = args.get(6).is_none_or(|z| z.ty.is_none_or(|t| t.is_text()));
                if !arity.contains(&args.len()) || !numeric_arg(&args[5]) || !zone_ok {
                    return Err(arity_err(&args));
                }
                let mut v = Vec::with_capacity(7);
                for (i, a) in args.into_iter().enumerate() {
                    v.push(match i {
                        5 => self.coerce(a, T::Float8, name)?,
                        6 => self.text_arg(a, name)?,
                        _ => self.int_arg(a, name)?,
                    });
                }
                let ty = if func == F::MakeTimestamp {
                    T::Timestamp
                } else {
                    T::TimestampTz
                };
                (v, ty)
            }
            F::MakeInterval => {
                // int4 for all but secs (double precision); a bigint finds no overload.
                let small = |a: &Bound| a.ty.is_none_or(|t| matches!(t, T::Int2 | T::Int4));
                if args.len() != 7 || !args[..6].iter().all(small) || !numeric_arg(&args[6]) {
                    return Err(arity_err(&args));
                }
                let mut v = Vec::with_capacity(7);
                for (i, a) in args.into_iter().enumerate() {
                    v.push(match i {
                        6 => self.coerce(a, T::Float8, name)?,
                        _ => self.coerce(a, T::Int4, name)?,
                    });
                }
                (v, T::Interval)
            }
            F::ToNumber | F::Factorial => return self.numeric_io_scalar(func, args, name),
            F::Btrim | F::Ltrim | F::Rtrim | F::LikeEscape => {
                let arity = if func == F::LikeEscape { 2..=2 } else { 1..=2 };
                let text = |a: &Bound| a.ty.is_none_or(|t| t.is_text());
                if !arity.contains(&args.len()) || !args.iter().all(text) {
                    return Err(arity_err(&args));
                }
                let v = args
                    .into_iter()
                    .map(|a| self.text_arg(a, name))
                    .collect::<Result<_>>()?;
                (v, T::Text)
            }
            _ => return Err(arity_err(&args)),
        })
    }
}

impl Binder<'_> {
    /// The arguments and result type of `to_number(text, text)` and `factorial(bigint)`,
    /// both numeric. Errors: 42883 for other argument types or counts.
    fn numeric_io_scalar(
        &mut self,
        func: ScalarFunc,
        args: Vec<Bound>,
        name: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        use DataType as T;
        let arity_err = |args: &[Bound]| no_function(name, args);
        if func == ScalarFunc::ToNumber {
            let text = |a: &Bound| a.ty.is_none_or(|t| t.is_text());
            if args.len() != 2 || !args.iter().all(text) {
                return Err(arity_err(&args));
            }
            let v = args
                .into_iter()
                .map(|a| self.text_arg(a, name))
                .collect::<Result<_>>()?;
            return Ok((v, T::Numeric));
        }
        let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
        if a.ty.is_some_and(|t| !t.is_integer()) {
            return Err(arity_err(&[a]));
        }
        Ok((vec![self.coerce(a, T::Int8, name)?], T::Numeric))
    }
}

/// The one type `gcd`, `lcm` (int4, int8, numeric) or `div` (numeric only) resolves its
/// two arguments to; `None` when a float makes PostgreSQL find no overload.
fn common_exact(func: ScalarFunc, args: &[Bound]) -> Option<DataType> {
    use DataType as T;
    if args
        .iter()
        .any(|a| matches!(a.ty, Some(T::Float4 | T::Float8)))
    {
        return None;
    }
    Some(
        if func == ScalarFunc::Div || args.iter().any(|a| a.ty == Some(T::Numeric)) {
            T::Numeric
        } else if args.iter().any(|a| a.ty == Some(T::Int8)) {
            T::Int8
        } else {
            T::Int4
        },
    )
}
