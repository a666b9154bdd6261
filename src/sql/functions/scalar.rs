//! Scalar functions of the expression binder: one row per function with its aliases and
//! the `pg_proc` oid of its first PostgreSQL overload. The binder types a call by the
//! function's enum ([`ScalarFunc`]); [`crate::expr`] evaluates it.

use crate::sql::ScalarFunc;

/// One scalar function: name, aliases, the evaluator's enum, pg_proc oid (0: tcq's own).
#[derive(Debug)]
pub(crate) struct ScalarDef {
    /// The name.
    pub(crate) name: &'static str,
    /// Other names for the same function (`ceiling` for `ceil`).
    pub(crate) aliases: &'static [&'static str],
    /// What the evaluator runs.
    pub(crate) func: ScalarFunc,
    /// PostgreSQL's pg_proc oid of its first overload. Kept with each row so that a pg_proc
    /// listing of scalar functions has it; nothing reads it yet.
    #[allow(dead_code)]
    pub(crate) oid: u32,
}

const fn row(
    name: &'static str,
    aliases: &'static [&'static str],
    func: ScalarFunc,
    oid: u32,
) -> ScalarDef {
    ScalarDef {
        name,
        aliases,
        func,
        oid,
    }
}

use crate::expr_trig::Trig;
use ScalarFunc as F;

/// Every scalar function a name calls (casts make [`ScalarFunc::NumericTypmod`]).
pub(crate) static SCALARS: &[ScalarDef] = &[
    row("abs", &[], F::Abs, 1394),
    row("round", &[], F::Round, 1342),
    row("floor", &[], F::Floor, 1712),
    row("ceil", &["ceiling"], F::Ceil, 1711),
    row("sqrt", &[], F::Sqrt, 1344),
    row("coalesce", &[], F::Coalesce, 0),
    row("nullif", &[], F::NullIf, 0),
    row("greatest", &[], F::Greatest, 0),
    row("least", &[], F::Least, 0),
    row("lower", &[], F::Lower, 870),
    row("upper", &[], F::Upper, 871),
    row(
        "length",
        &["char_length", "character_length"],
        F::Length,
        1317,
    ),
    row("octet_length", &[], F::OctetLength, 720),
    row("substr", &["substring"], F::Substr, 877),
    row("concat", &[], F::Concat, 3058),
    row("date_trunc", &[], F::DateTrunc, 1217),
    row("date_part", &[], F::DatePart, 1171),
    row("to_timestamp", &[], F::ToTimestamp, 1158),
    row("to_date", &[], F::ToDate, 1780),
    row(
        "now",
        &[
            "current_timestamp",
            "transaction_timestamp",
            "statement_timestamp",
            "localtimestamp",
        ],
        F::Now,
        1299,
    ),
    row("version", &[], F::Version, 89),
    row(
        "current_database",
        &["current_catalog"],
        F::CurrentDatabase,
        861,
    ),
    row("current_schema", &[], F::CurrentSchema, 1402),
    row(
        "current_user",
        &["session_user", "user", "current_role"],
        F::CurrentUser,
        745,
    ),
    row("current_setting", &[], F::CurrentSetting, 2077),
    row("pg_backend_pid", &[], F::BackendPid, 2026),
    row("timezone", &[], F::Timezone, 1026),
    row("trunc", &[], F::Trunc, 753),
    row("sign", &[], F::Sign, 1706),
    row("power", &["pow"], F::Power, 1368),
    row("exp", &[], F::Exp, 1347),
    row("ln", &[], F::Ln, 1341),
    row("log", &["log10"], F::Log10, 1340),
    row("random", &[], F::Random, 1598),
    row("clock_timestamp", &[], F::ClockTimestamp, 2649),
    row("lpad", &[], F::Lpad, 873),
    row("rpad", &[], F::Rpad, 874),
    row("reverse", &[], F::Reverse, 3062),
    row("repeat", &[], F::Repeat, 1622),
    row("strpos", &[], F::Strpos, 868),
    row("initcap", &[], F::Initcap, 872),
    row("ascii", &[], F::Ascii, 1620),
    row("chr", &[], F::Chr, 1621),
    row("to_hex", &[], F::ToHex, 2089),
    row("md5", &[], F::Md5, 2311),
    row("regexp_replace", &[], F::RegexpReplace, 2284),
    row("to_char", &[], F::ToChar, 1768),
    row("age", &[], F::Age, 1181),
    row("date_bin", &[], F::DateBin, 6177),
    row("justify_hours", &[], F::JustifyHours, 1175),
    row("justify_days", &[], F::JustifyDays, 1295),
    row("justify_interval", &[], F::JustifyInterval, 2711),
    row("width_bucket", &[], F::WidthBucket, 320),
    row("translate", &[], F::Translate, 878),
    row("isfinite", &[], F::IsFinite, 1373),
    row("cbrt", &[], F::Cbrt, 1345),
    row("degrees", &[], F::Degrees, 1608),
    row("radians", &[], F::Radians, 1609),
    row("pi", &[], F::Pi, 1610),
    row("gcd", &[], F::Gcd, 5044),
    row("lcm", &[], F::Lcm, 5046),
    row("div", &[], F::Div, 1973),
    row("scale", &[], F::Scale, 3281),
    row("num_nulls", &[], F::NumNulls, 438),
    row("num_nonnulls", &[], F::NumNonNulls, 440),
    row("make_date", &[], F::MakeDate, 3846),
    row("make_time", &[], F::MakeTime, 3847),
    row("make_timestamp", &[], F::MakeTimestamp, 3461),
    row("make_interval", &[], F::MakeInterval, 3455),
    row("make_timestamptz", &[], F::MakeTimestampTz, 3462),
    row("btrim", &[], F::Btrim, 884),
    row("ltrim", &[], F::Ltrim, 875),
    row("rtrim", &[], F::Rtrim, 876),
    row("like_escape", &[], F::LikeEscape, 1637),
    row("factorial", &[], F::Factorial, 1376),
    row("to_number", &[], F::ToNumber, 1777),
    row("sin", &[], F::Trig(Trig::Sin), 1604),
    row("cos", &[], F::Trig(Trig::Cos), 1605),
    row("tan", &[], F::Trig(Trig::Tan), 1606),
    row("cot", &[], F::Trig(Trig::Cot), 1607),
    row("asin", &[], F::Trig(Trig::Asin), 1600),
    row("acos", &[], F::Trig(Trig::Acos), 1601),
    row("atan", &[], F::Trig(Trig::Atan), 1602),
    row("atan2", &[], F::Trig(Trig::Atan2), 1603),
    row("sind", &[], F::Trig(Trig::Sind), 2735),
    row("cosd", &[], F::Trig(Trig::Cosd), 2736),
    row("tand", &[], F::Trig(Trig::Tand), 2737),
    row("cotd", &[], F::Trig(Trig::Cotd), 2738),
    row("asind", &[], F::Trig(Trig::Asind), 2731),
    row("acosd", &[], F::Trig(Trig::Acosd), 2732),
    row("atand", &[], F::Trig(Trig::Atand), 2733),
    row("atan2d", &[], F::Trig(Trig::Atan2d), 2734),
    row("sinh", &[], F::Trig(Trig::Sinh), 2462),
    row("cosh", &[], F::Trig(Trig::Cosh), 2463),
    row("tanh", &[], F::Trig(Trig::Tanh), 2464),
    row("asinh", &[], F::Trig(Trig::Asinh), 2465),
    row("acosh", &[], F::Trig(Trig::Acosh), 2466),
    row("atanh", &[], F::Trig(Trig::Atanh), 2467),
    row("regexp_count", &[], F::RegexpCount, 6254),
    row("regexp_instr", &[], F::RegexpInstr, 6257),
    row("regexp_like", &[], F::RegexpLike, 6263),
    row("regexp_substr", &[], F::RegexpSubstr, 6265),
    row("min_scale", &[], F::MinScale, 5042),
    row("trim_scale", &[], F::TrimScale, 5043),
];

/// The scalar function `name` (lower-cased) calls, if any.
pub(crate) fn scalar(name: &str) -> Option<&'static ScalarDef> {
    SCALARS
        .iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
}

/// Where the argument for one parameter of a call comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgSlot {
    /// The call's argument at this index.
    Given(usize),
    /// The parameter's default.
    Default(crate::types::Value),
}

/// PostgreSQL's parameter names of the scalar functions that have them, and how many
/// trailing parameters have a default (each 0, as `make_interval`'s).
fn parameter_names(func: ScalarFunc) -> Option<(&'static [&'static str], usize)> {
    Some(match func {
        F::MakeInterval => (
            &["years", "months", "weeks", "days", "hours", "mins", "secs"],
            7,
        ),
        F::MakeDate => (&["year", "month", "day"], 0),
        F::MakeTime => (&["hour", "min", "sec"], 0),
        F::MakeTimestamp => (&["year", "month", "mday", "hour", "min", "sec"], 0),
        F::MakeTimestampTz => (
            &["year", "month", "mday", "hour", "min", "sec", "timezone"],
            0,
        ),
        _ => return None,
    })
}

/// The arguments of a call of `func` in parameter order, given each argument's name
/// (`None` for a positional one): named ones go to their parameter's place, omitted ones
/// with a default take it (`make_interval(days => 10)`). `None` when the names match no
/// overload (an unknown name, a parameter given twice, one without a default left out):
/// 42883 for the caller, as PostgreSQL.
pub(crate) fn parameter_slots(func: ScalarFunc, names: &[Option<String>]) -> Option<Vec<ArgSlot>> {
    use crate::types::Value;
    let named = names.iter().any(Option::is_some);
    let given = || (0..names.len()).map(ArgSlot::Given).collect();
    let Some((params, defaults)) = parameter_names(func) else {
        return (!named).then(given);
    };
    if !named && (names.len() >= params.len() || defaults == 0) {
        return Some(given());
    }
    let mut slots: Vec<Option<ArgSlot>> = vec![None; params.len()];
    for (i, n) in names.iter().enumerate() {
        let at = match n {
            Some(n) => params.iter().position(|p| p == n)?,
            None => i,
        };
        if slots.get(at)?.is_some() {
            return None;
        }
        slots[at] = Some(ArgSlot::Given(i));
    }
    // make_timestamptz's zone belongs to its seven-parameter overload only.
    if func == F::MakeTimestampTz && slots[6].is_none() {
        slots.pop();
    }
    let first_default = params.len() - defaults;
    slots
        .into_iter()
        .enumerate()
        .map(|(i, slot)| match slot {
            Some(s) => Some(s),
            // make_interval's last parameter, secs, is double precision.
            None if i >= first_default && i + 1 == params.len() => {
                Some(ArgSlot::Default(Value::Float8(0.0)))
            }
            None if i >= first_default => Some(ArgSlot::Default(Value::Int4(0))),
            None => None,
        })
        .collect()
}

/// One argument of a call: its name (`None` when positional) and expression.
pub(crate) type NamedArg<'a> = (Option<String>, &'a sqlparser::ast::Expr);

/// The arguments of a call's list with their names (`days => 10` and `days := 10`; `None`
/// for a positional one); `None` for an argument of another form (`*`, `name = value`).
/// Errors: 42601 for a positional argument after a named one and for a name given twice,
/// as PostgreSQL.
pub(crate) fn named_args(
    args: &[sqlparser::ast::FunctionArg],
) -> crate::error::Result<Vec<Option<NamedArg<'_>>>> {
    use sqlparser::ast::{Expr, FunctionArg as A, FunctionArgExpr as X, FunctionArgOperator as O};
    let mut out: Vec<Option<NamedArg<'_>>> = Vec::with_capacity(args.len());
    for a in args {
        let (name, e) = match a {
            A::Unnamed(X::Expr(e)) => (None, e),
            A::Named {
                name,
                arg: X::Expr(e),
                operator: O::RightArrow | O::Assignment,
            }
            | A::ExprNamed {
                name: Expr::Identifier(name),
                arg: X::Expr(e),
                operator: O::RightArrow | O::Assignment,
            } => {
                let n = match name.quote_style {
                    None => name.value.to_lowercase(),
                    Some(_) => name.value.clone(),
                };
                (Some(n), e)
            }
            _ => {
                out.push(None);
                continue;
            }
        };
        let named_before = out.iter().flatten().any(|(n, _)| n.is_some());
        match &name {
            None if named_before => {
                return Err(crate::error::Error::Syntax(
                    "positional argument cannot follow named argument".into(),
                ))
            }
            Some(n) if out.iter().flatten().any(|(m, _)| m.as_ref() == Some(n)) => {
                return Err(crate::error::Error::Syntax(format!(
                    "argument name \"{n}\" used more than once"
                )))
            }
            _ => {}
        }
        out.push(Some((name, e)));
    }
    Ok(out)
}
