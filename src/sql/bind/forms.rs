//! Special forms of the expression binder: casts, typed literals, INTERVAL, COLLATE, CASE,
//! function calls and the SQL-syntax functions (EXTRACT, CEIL/FLOOR, AT TIME ZONE,
//! SUBSTRING, TRIM, POSITION).

use sqlparser::ast;

use super::*;

impl Binder<'_> {
    /// `x::type`, `CAST(x AS type)`, `type 'literal'`, `INTERVAL '...'` and
    /// `x COLLATE c`.
    pub(super) fn cast_form(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Cast {
                expr,
                data_type,
                kind,
                ..
            } => self.explicit_cast(expr, data_type, kind, scope),
            E::TypedString(ts) => {
                let to = type_from_name(&ts.data_type.to_string())?;
                let b = self.value(&ts.value.value)?;
                self.cast(b, to)
            }
            E::Interval(iv) => {
                let b = self.expr(&iv.value, scope)?;
                match (&b.expr, &iv.leading_field, &iv.last_field) {
                    (Expr::Literal(Value::Text(s)), Some(f), None) if b.ty.is_none() => {
                        let text = format!("{s} {}", f.to_string().to_lowercase());
                        Ok(Bound::new(
                            Expr::Literal(parse_value(&text, DataType::Interval)?),
                            DataType::Interval,
                        ))
                    }
                    (_, None, None) => self.cast(b, DataType::Interval),
                    _ => Err(unsupported(
                        "INTERVAL field qualifiers are not supported; write INTERVAL '1 hour'",
                    )),
                }
            }
            // The collation changes no comparison here (text compares by code point, as
            // under "C"); the operand must be of a collatable type, as in PostgreSQL.
            E::Collate { expr, .. } => {
                let x = self.expr(expr, scope)?;
                match x.ty {
                    None => Ok(Bound::new(
                        self.coerce(x, DataType::Text, "COLLATE")?,
                        DataType::Text,
                    )),
                    Some(t) if t.is_text() => Ok(x),
                    Some(t) => Err(Error::DatatypeMismatch(format!(
                        "collations are not supported by type {}",
                        t.name()
                    ))),
                }
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// `expr::data_type`, `CAST(expr AS data_type)`: the written type's modifier applied
    /// as PostgreSQL applies it in an explicit cast: `varchar(n)` and `char(n)` cut the
    /// text to n characters (where an assignment refuses it), `numeric(p, s)` rounds to s
    /// digits and checks p (22003). A plan builder's leaf of a type this binder does not
    /// know (a reg* value) is cast by the builder ([`ExprScope::cast_leaf`]). Errors:
    /// 42846 for a cast PostgreSQL has not, 42704 for an unknown type name.
    pub(super) fn explicit_cast(
        &mut self,
        expr: &ast::Expr,
        data_type: &ast::DataType,
        kind: &ast::CastKind,
        scope: &Scope,
    ) -> Result<Bound> {
        if matches!(kind, ast::CastKind::TryCast | ast::CastKind::SafeCast) {
            return Err(unsupported("TRY_CAST is not supported"));
        }
        let written = data_type.to_string();
        let to = type_from_name(&written)?;
        let b = self.expr(expr, scope)?;
        if let Some(cast) = self.cast_leaf(&b, &written)? {
            return Ok(cast);
        }
        if let DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) = to {
            let text = self.cast(b, DataType::Text)?;
            let cut = Expr::Func {
                func: ScalarFunc::Substr,
                args: vec![
                    text.expr,
                    Expr::Literal(Value::Int4(1)),
                    Expr::Literal(Value::Int4(n as i32)),
                ],
            };
            return Ok(Bound::new(
                Expr::Cast {
                    expr: Box::new(cut),
                    to,
                },
                to,
            ));
        }
        let cast = self.cast(b, to)?;
        // A type modifier (numeric(p, s), timestamp(p)): the type carries none, so the cast
        // applies it.
        Ok(match typmod_applied(&written, cast.expr.clone())? {
            Some((expr, ty)) => Bound::new(expr, ty),
            None => cast,
        })
    }

    /// CASE, a function call, EXTRACT, CEIL/FLOOR and AT TIME ZONE.
    pub(super) fn special_call(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(
                operand.as_deref(),
                conditions,
                else_result.as_deref(),
                scope,
            ),
            E::Function(f) => self.function(f, scope),
            E::Extract { field, expr, .. } => {
                let x = self.expr(expr, scope)?;
                let of_date = x.ty == Some(DataType::Date);
                let x = self.time_operand(x)?;
                // A unit given as a string (`extract('day' FROM t)`) is its text, unquoted.
                let name = match field {
                    ast::DateTimeField::Custom(id) => id.value.clone(),
                    f => f.to_string(),
                };
                Ok(Bound::new(
                    extract_expr(&name, x, of_date),
                    DataType::Numeric,
                ))
            }
            E::Ceil { expr, field } | E::Floor { expr, field } => {
                if !matches!(
                    field,
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
                ) {
                    return Err(unsupported("CEIL/FLOOR with a field are not supported"));
                }
                let func = if matches!(e, E::Ceil { .. }) {
                    ScalarFunc::Ceil
                } else {
                    ScalarFunc::Floor
                };
                let x = self.expr(expr, scope)?;
                self.scalar(func, vec![x])
            }
            E::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let zone = self.expr(time_zone, scope)?;
                let ts = self.expr(timestamp, scope)?;
                self.scalar(ScalarFunc::Timezone, vec![zone, ts])
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// SUBSTRING(s FROM a FOR b), TRIM([where] [chars FROM] s) and POSITION(sub IN s): the
    /// text functions they call (substr, btrim/ltrim/rtrim, strpos).
    pub(super) fn text_syntax(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(expr, scope)?];
                args.push(match substring_from {
                    Some(f) => self.expr(f, scope)?,
                    None => Bound::new(Expr::Literal(Value::Int4(1)), DataType::Int4),
                });
                if let Some(f) = substring_for {
                    args.push(self.expr(f, scope)?);
                }
                // A text pattern (or an unknown literal, read as text as PostgreSQL
                // prefers) makes it the regular expression forms.
                let textual = |b: &Bound| match b.ty {
                    Some(t) => t.is_text(),
                    None => matches!(b.expr, Expr::Literal(Value::Text(_))),
                };
                if !args[1..].iter().all(textual) {
                    // No overload: PostgreSQL names the call as written, with its hint.
                    let written = match e {
                        E::Substring {
                            shorthand: true, ..
                        } => "substr",
                        _ => "pg_catalog.substring",
                    };
                    let no_overload = super::expr::no_function(written, &args);
                    return self.scalar(ScalarFunc::Substr, args).map_err(|err| {
                        match err.kind() {
                            Error::UndefinedFunction(_) => no_overload.with_hint(
                                "No function matches the given name and argument types. You might need to add explicit type casts.",
                            ),
                            _ => err,
                        }
                    });
                }
                let func = if args.len() == 3 {
                    ScalarFunc::SimilarSubstr
                } else {
                    ScalarFunc::RegexSubstr
                };
                let args = args
                    .into_iter()
                    .map(|a| self.text_arg(a, "substring"))
                    .collect::<Result<_>>()?;
                Ok(Bound::new(Expr::Func { func, args }, DataType::Text))
            }
            E::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters,
            } => {
                let func = match trim_where {
                    Some(ast::TrimWhereField::Leading) => ScalarFunc::Ltrim,
                    Some(ast::TrimWhereField::Trailing) => ScalarFunc::Rtrim,
                    _ => ScalarFunc::Btrim,
                };
                // TRIM([where] [what FROM] s) and TRIM([where] [FROM] s, what): PostgreSQL
                // calls btrim/ltrim/rtrim(s, what).
                let mut args = vec![self.expr(expr, scope)?];
                for w in trim_what
                    .iter()
                    .map(|w| &**w)
                    .chain(trim_characters.iter().flatten())
                {
                    args.push(self.expr(w, scope)?);
                }
                self.scalar(func, args)
            }
            E::Overlay {
                expr,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                let spliced = overlay_as_substr(expr, overlay_what, overlay_from, overlay_for)?;
                self.expr(&spliced, scope)
            }
            E::Position { expr, r#in } => {
                let s = self.expr(r#in, scope)?;
                let sub = self.expr(expr, scope)?;
                self.scalar(ScalarFunc::Strpos, vec![s, sub])
            }
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }
}

/// `OVERLAY(s PLACING r FROM a [FOR n])` as PostgreSQL's textoverlay computes it:
/// `substr(s, 1, a - 1) || r || substr(s, a + n)`, `n` defaulting to `char_length(r)`.
/// A start below 1 gives 22011 (negative substring length) from the first `substr`, as
/// PostgreSQL does.
fn overlay_as_substr(
    s: &ast::Expr,
    r: &ast::Expr,
    from: &ast::Expr,
    count: &Option<Box<ast::Expr>>,
) -> Result<ast::Expr> {
    let count = match count {
        Some(n) => format!("({n})"),
        None => format!("char_length({r})"),
    };
    let sql =
        format!("substr(({s}), 1, ({from}) - 1) || ({r}) || substr(({s}), ({from}) + {count})");
    sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| Error::Syntax(e.to_string()))
}
