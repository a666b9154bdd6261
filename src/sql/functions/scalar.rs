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
    row("btrim", &[], F::Btrim, 884),
    row("ltrim", &[], F::Ltrim, 875),
    row("rtrim", &[], F::Rtrim, 876),
    row("like_escape", &[], F::LikeEscape, 1637),
];

/// The scalar function `name` (lower-cased) calls, if any.
pub(crate) fn scalar(name: &str) -> Option<&'static ScalarDef> {
    SCALARS
        .iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
}
