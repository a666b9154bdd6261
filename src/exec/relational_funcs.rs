//! The functions of finite relational queries that PostgreSQL clients call on the
//! catalogs: `format_type`, `pg_get_userbyid`, the `pg_*_is_visible` family, descriptions,
//! privileges (tcq has one privilege level: everything is allowed), sizes (streams keep no
//! table files: 0), function signatures from `pg_proc`, array helpers, and the
//! set-returning functions of FROM (`generate_series`, `unnest`, `pg_options_to_table`,
//! `pg_get_keywords`).
//!
//! Catalog facts are read from the catalog relations themselves (through the statement's
//! provider), so a function and a join over `pg_type` always agree.

use super::relational::{format_array, int_of, parse_array, quote_ident, text_of, Ev};
use crate::error::{Error, Result};
use crate::sql::{Privileges, RegKind};
use crate::types::Value;

/// OID of schema `pg_catalog`.
pub(crate) const PG_CATALOG_OID: i64 = 11;
/// OID of schema `public`.
pub(crate) const PUBLIC_OID: i64 = 2200;
/// OID of schema `information_schema`.
pub(crate) const INFORMATION_SCHEMA_OID: i64 = 13000;

// Column positions in the catalog relations (PostgreSQL 15's order).
const TYP_NAME: usize = 1;
const TYP_ELEM: usize = 13;
const PRO_RETSET: usize = 13;
const PRO_RETTYPE: usize = 18;
const PRO_ARGTYPES: usize = 19;
const PRO_ARGNAMES: usize = 22;

type Row = Vec<Value>;

/// The SQL name PostgreSQL's `format_type` prints for a built-in type name.
fn sql_name(typname: &str) -> Option<&'static str> {
    Some(match typname {
        "bool" => "boolean",
        "int2" => "smallint",
        "int4" => "integer",
        "int8" => "bigint",
        "float4" => "real",
        "float8" => "double precision",
        "varchar" => "character varying",
        "bpchar" => "character",
        "timestamp" => "timestamp without time zone",
        "timestamptz" => "timestamp with time zone",
        "time" => "time without time zone",
        "timetz" => "time with time zone",
        "char" => "\"char\"",
        // Names PostgreSQL's format_type prints as they are, keywords though they are.
        "numeric" => "numeric",
        "interval" => "interval",
        "bit" => "bit",
        "varbit" => "bit varying",
        _ => return None,
    })
}

/// The `pg_type.typname` for a type name as a user writes it (`integer` -> `int4`,
/// `text[]` -> `_text`).
pub(crate) fn canonical_type_name(written: &str) -> String {
    let w = written.trim().to_lowercase();
    let w = w.strip_prefix("pg_catalog.").unwrap_or(&w).to_string();
    if let Some(elem) = w.strip_suffix("[]") {
        return format!("_{}", canonical_type_name(elem));
    }
    let base = w.split('(').next().unwrap_or(&w).trim().to_string();
    let base = base.split_whitespace().collect::<Vec<_>>().join(" ");
    match base.as_str() {
        "boolean" => "bool",
        "smallint" => "int2",
        "integer" | "int" => "int4",
        "bigint" => "int8",
        "real" => "float4",
        "double precision" | "float" => "float8",
        "character varying" | "char varying" => "varchar",
        "character" => "bpchar",
        "decimal" => "numeric",
        "timestamp without time zone" | "timestamp" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "time without time zone" => "time",
        "time with time zone" => "timetz",
        "\"char\"" => "char",
        other => return other.trim_matches('"').to_string(),
    }
    .to_string()
}

/// `format_type(oid, typmod)`.
pub(crate) fn format_type_name(ev: &Ev, oid: i64, typmod: Option<i64>) -> Result<String> {
    let rows = ev.catalog("pg_type")?;
    let Some(row) = rows.iter().find(|r| int_of(&r[0]) == Some(oid)) else {
        return Ok("???".into());
    };
    let name = text_of(&row[TYP_NAME]);
    let elem = int_of(&row[TYP_ELEM]).unwrap_or(0);
    if name.starts_with('_') && elem != 0 {
        return Ok(format!("{}[]", format_type_name(ev, elem, typmod)?));
    }
    let base = sql_name(&name).map_or_else(|| quote_ident(&name), str::to_string);
    let m = typmod.filter(|&m| m >= 0);
    Ok(match (name.as_str(), m) {
        ("varchar", Some(m)) => format!("character varying({})", m - 4),
        ("bpchar", Some(m)) => format!("character({})", m - 4),
        ("numeric", Some(m)) => format!("numeric({},{})", (m - 4) >> 16, (m - 4) & 0xffff),
        ("timestamp", Some(m)) => format!("timestamp({m}) without time zone"),
        ("timestamptz", Some(m)) => format!("timestamp({m}) with time zone"),
        ("time", Some(m)) => format!("time({m}) without time zone"),
        _ => base,
    })
}

fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into().into())
}

fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Null)
}

/// The privilege names `has_table_privilege` accepts, with tcq's privilege (`None`:
/// REFERENCES and TRIGGER, which tcq never grants, so only owners and superusers hold them).
const TABLE_PRIVILEGES: &[(&str, Option<Privileges>)] = &[
    ("SELECT", Some(Privileges::SELECT)),
    ("INSERT", Some(Privileges::INSERT)),
    ("UPDATE", Some(Privileges::UPDATE)),
    ("DELETE", Some(Privileges::DELETE)),
    ("TRUNCATE", Some(Privileges::TRUNCATE)),
    ("REFERENCES", None),
    ("TRIGGER", None),
];

/// The privilege names `has_any_column_privilege` accepts (those columns can have).
const COLUMN_PRIVILEGES: &[(&str, Option<Privileges>)] = &[
    ("SELECT", Some(Privileges::SELECT)),
    ("INSERT", Some(Privileges::INSERT)),
    ("UPDATE", Some(Privileges::UPDATE)),
    ("REFERENCES", None),
];

/// `has_table_privilege([role,] relation, privileges)`: whether the role (the session's
/// user with two arguments), named or given by oid, holds any of the comma-separated
/// `privileges` on the relation, named (`'s'`, `'network.tcpdump'`) or given by oid.
/// `... WITH GRANT OPTION` is held by owners and superusers only (tcq grants no grant
/// option). NULL for a NULL argument or a relation oid that is no relation. Errors: 42704
/// for an unknown role, 42P01 for an unknown relation name, 22023 for an unknown privilege.
fn table_privilege(ev: &Ev, args: &[Value], names: &[(&str, Option<Privileges>)]) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let (role, relation, wanted) = match args {
        [relation, wanted] => (session_user(ev), relation, wanted),
        [role, relation, wanted] => (role_name(ev, role)?, relation, wanted),
        _ => {
            return Err(Error::UndefinedFunction(format!(
                "function has_table_privilege with {} arguments does not exist",
                args.len()
            )))
        }
    };
    let wanted = privilege_list(&text_of(wanted), names)?;
    let Some((schema, name)) = relation_name(ev, relation)? else {
        return Ok(Value::Null);
    };
    let (held, everything) = ev.table_privileges(&role, &schema, &name);
    Ok(Value::Bool(wanted.iter().any(|(p, grant_option)| {
        everything || (!grant_option && p.is_some_and(|p| held.contains(p)))
    })))
}

/// `has_schema_privilege([role,] schema, privileges)`: whether the role holds any of the
/// comma-separated privileges (USAGE, CREATE) on the schema, named or given by oid. tcq
/// keeps no schema privileges: every role may use every schema and create streams and
/// tables in any but the system schemas (`pg_catalog`, `information_schema`, `pg_toast`),
/// where nobody may; `WITH GRANT OPTION` asks the same. NULL for a NULL argument or an
/// oid that is no schema. Errors: 42704 for an unknown role, 3F000 for an unknown schema
/// name, 22023 for an unknown privilege.
fn schema_privilege(ev: &Ev, args: &[Value]) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let (schema, wanted) = match args {
        [schema, wanted] => (schema, wanted),
        [role, schema, wanted] => {
            role_name(ev, role)?;
            (schema, wanted)
        }
        _ => {
            return Err(Error::UndefinedFunction(format!(
                "function has_schema_privilege with {} arguments does not exist",
                args.len()
            )))
        }
    };
    let wanted = privilege_list(&text_of(wanted), &[("USAGE", false), ("CREATE", true)])?;
    let oid = match schema {
        Value::Text(name) => int_of(&ev.reg_oid(RegKind::Namespace, name, true)?),
        other => int_of(other),
    };
    let spaces = ev.catalog("pg_namespace")?;
    let Some(space) = spaces.iter().find(|r| int_of(&r[0]) == oid) else {
        return Ok(Value::Null);
    };
    let system = matches!(
        text_of(&space[1]).as_str(),
        "pg_catalog" | "information_schema" | "pg_toast"
    );
    Ok(Value::Bool(
        wanted.iter().any(|(create, _)| !create || !system),
    ))
}

/// The session's user (`tcq` without a session, as `current_user` answers).
fn session_user(ev: &Ev) -> String {
    ev.session_user().unwrap_or("tcq").to_string()
}

/// The role named by `v` (a name, or an oid) as pg_authid lists it, or `public`.
/// Errors: 42704.
fn role_name(ev: &Ev, v: &Value) -> Result<String> {
    let rows = ev.catalog("pg_authid")?;
    if let Value::Text(name) = v {
        let name: &str = name;
        if name == "public" || rows.iter().any(|r| text_of(&r[1]) == name) {
            return Ok(name.to_string());
        }
        return Err(Error::UndefinedObject(format!(
            "role \"{name}\" does not exist"
        )));
    }
    let oid = int_of(v);
    rows.iter()
        .find(|r| int_of(&r[0]) == oid)
        .map(|r| text_of(&r[1]))
        .ok_or_else(|| {
            Error::UndefinedObject(format!("role with OID {} does not exist", oid.unwrap_or(0)))
        })
}

/// The (schema, name) of the relation `v` names (text, resolved as a regclass cast is) or
/// gives by oid; `None` for an oid that is no relation. Errors: 42P01.
fn relation_name(ev: &Ev, v: &Value) -> Result<Option<(String, String)>> {
    let oid = match v {
        Value::Text(name) => int_of(&ev.reg_oid(RegKind::Class, name, true)?),
        other => int_of(other),
    };
    let classes = ev.catalog("pg_class")?;
    let Some(class) = classes.iter().find(|r| int_of(&r[0]) == oid) else {
        return Ok(None);
    };
    let ns = int_of(&class[2]);
    let spaces = ev.catalog("pg_namespace")?;
    let schema = spaces
        .iter()
        .find(|r| int_of(&r[0]) == ns)
        .map_or_else(|| "public".to_string(), |r| text_of(&r[1]));
    Ok(Some((schema, text_of(&class[1]))))
}

/// The privileges of a comma-separated list (`'SELECT, INSERT WITH GRANT OPTION'`, any
/// case), each with whether it asks for the grant option. Errors: 22023 for a name that
/// is not in `names`.
fn privilege_list<T: Copy>(list: &str, names: &[(&str, T)]) -> Result<Vec<(T, bool)>> {
    list.split(',')
        .map(|item| {
            let item = item.trim();
            let upper = item.to_ascii_uppercase();
            let (name, grant_option) = match upper.strip_suffix(" WITH GRANT OPTION") {
                Some(name) => (name.trim_end(), true),
                None => (upper.as_str(), false),
            };
            names
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, p)| (*p, grant_option))
                .ok_or_else(|| {
                    Error::InvalidParameterValue(format!("unrecognized privilege type: \"{item}\""))
                })
        })
        .collect()
}

/// Call function `name` of the relational evaluator on evaluated `args`.
pub(crate) fn call(ev: &Ev, name: &str, args: &[Value]) -> Result<Value> {
    let a0 = arg(args, 0);
    let strict = matches!(
        name,
        "format_type"
            | "pg_get_userbyid"
            | "pg_encoding_to_char"
            | "quote_ident"
            | "bit_length"
            | "quote_literal"
            | "pg_get_function_result"
            | "pg_get_function_arguments"
            | "pg_get_function_identity_arguments"
            | "array_upper"
            | "array_lower"
            | "array_length"
            | "cardinality"
            | "to_regclass"
            | "to_regtype"
            | "to_regproc"
            | "to_regnamespace"
            | "string_to_array"
            | "regexp_match"
            | "regexp_split_to_array"
            | "replace"
            | "split_part"
            | "left"
            | "right"
            | "starts_with"
            | "pg_size_pretty"
            | "pg_table_is_visible"
            | "pg_type_is_visible"
            | "pg_function_is_visible"
    );
    if strict && a0.is_null() {
        return Ok(Value::Null);
    }
    // Strict in every argument too (`left('abc', NULL)` is NULL); string_to_array is not
    // (a NULL delimiter splits into characters), nor format_type.
    let strict_all = matches!(
        name,
        "replace"
            | "split_part"
            | "left"
            | "right"
            | "starts_with"
            | "regexp_match"
            | "regexp_split_to_array"
    );
    if strict_all && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(v) = catalog_call(ev, name, args)? {
        return Ok(v);
    }
    if let Some(v) = text_call(name, args)? {
        return Ok(v);
    }
    if let Some(v) = super::array_funcs::call(name, args)? {
        return Ok(v);
    }
    if let Some(v) = collection_call(name, args)? {
        return Ok(v);
    }
    Err(match name {
        "generate_series"
        | "unnest"
        | "pg_options_to_table"
        | "pg_get_keywords"
        | "_pg_expandarray"
        | "regexp_matches"
        | "regexp_split_to_table"
        | "generate_subscripts" => {
            Error::FeatureNotSupported(format!("{name}() returns a set: call it in FROM"))
        }
        other => Error::UndefinedFunction(format!("function {other} does not exist")),
    })
}

/// The catalog and introspection functions of [`call`] (`format_type`, `pg_get_*`,
/// `has_*_privilege`, `to_reg*`, ...): `None` for a name that is none of them.
fn catalog_call(ev: &Ev, name: &str, args: &[Value]) -> Result<Option<Value>> {
    let a0 = arg(args, 0);
    Ok(Some(match name {
        // Catalog queries cannot change the session: set_config(name, value, is_local)
        // only answers for a parameter that already has that value (asyncpg's type
        // introspection sends `set_config('jit', 'off', false)`, and tcq's jit is off);
        // any change is refused.
        "set_config" => {
            let name = text_of(a0).to_ascii_lowercase();
            let value = text_of(arg(args, 1));
            let current = ev.setting(&name).ok_or_else(|| {
                Error::UndefinedObject(format!("unrecognized configuration parameter \"{name}\""))
            })?;
            if current != value {
                return Err(Error::FeatureNotSupported(format!(
                    "set_config() cannot change \"{name}\" from a query; use SET"
                )));
            }
            text(value)
        }
        "format_type" => text(format_type_name(
            ev,
            int_of(a0).unwrap_or(0),
            int_of(arg(args, 1)),
        )?),
        "pg_get_userbyid" => {
            let oid = int_of(a0).unwrap_or(0);
            let rows = ev.catalog("pg_authid")?;
            match rows.iter().find(|r| int_of(&r[0]) == Some(oid)) {
                Some(r) => r[1].clone(),
                None => text(format!("unknown (OID={oid})")),
            }
        }
        "pg_table_is_visible" => visible(ev, "pg_class", a0)?,
        "pg_type_is_visible" => visible(ev, "pg_type", a0)?,
        "pg_function_is_visible" => visible(ev, "pg_proc", a0)?,
        "obj_description" | "shobj_description" => description(ev, int_of(a0), Some(0))?,
        "col_description" => description(ev, int_of(a0), int_of(arg(args, 1)))?,
        "pg_encoding_to_char" => text(match int_of(a0) {
            Some(6) => "UTF8",
            Some(0) => "SQL_ASCII",
            _ => "",
        }),
        "pg_char_to_encoding" => Value::Int4(if text_of(a0).eq_ignore_ascii_case("utf8") {
            6
        } else {
            -1
        }),
        "current_schemas" => {
            let implicit = matches!(a0, Value::Bool(true));
            text(if implicit {
                "{pg_catalog,public}"
            } else {
                "{public}"
            })
        }
        "pg_get_indexdef" => index_def(ev, int_of(a0), int_of(arg(args, 1)).unwrap_or(0))?,
        "pg_get_constraintdef" => constraint_def(ev, int_of(a0))?,
        // pg_attrdef.adbin holds the expression's SQL text already.
        "pg_get_expr" => a0.clone(),
        "pg_get_viewdef"
        | "pg_get_triggerdef"
        | "pg_get_ruledef"
        | "pg_get_partkeydef"
        | "pg_get_statisticsobjdef_columns"
        | "pg_get_function_sqlbody"
        | "pg_get_serial_sequence"
        | "pg_tablespace_location"
        | "inet_server_addr"
        | "inet_client_addr"
        | "inet_server_port" => Value::Null,
        "pg_relation_size"
        | "pg_total_relation_size"
        | "pg_table_size"
        | "pg_indexes_size"
        | "pg_database_size" => Value::Int8(0),
        "pg_size_pretty" => text(size_pretty(int_of(a0).unwrap_or(0))),
        "has_table_privilege" => table_privilege(ev, args, TABLE_PRIVILEGES)?,
        "has_any_column_privilege" => table_privilege(ev, args, COLUMN_PRIVILEGES)?,
        "has_schema_privilege" => schema_privilege(ev, args)?,
        "has_database_privilege"
        | "has_function_privilege"
        | "has_column_privilege"
        | "has_type_privilege"
        | "pg_has_role" => Value::Bool(true),
        "pg_relation_is_publishable" | "pg_is_in_recovery" => Value::Bool(false),
        "pg_collation_is_visible"
        | "pg_opclass_is_visible"
        | "pg_opfamily_is_visible"
        | "pg_statistics_obj_is_visible"
        | "pg_operator_is_visible"
        | "pg_conversion_is_visible"
        | "pg_ts_config_is_visible"
        | "pg_ts_parser_is_visible"
        | "pg_ts_dict_is_visible"
        | "pg_ts_template_is_visible" => Value::Bool(!a0.is_null()),
        "pg_get_function_result" => {
            let Some(p) = proc_row(ev, a0)? else {
                return Ok(Some(Value::Null));
            };
            let ret = format_type_name(ev, int_of(&p[PRO_RETTYPE]).unwrap_or(0), None)?;
            text(if matches!(p[PRO_RETSET], Value::Bool(true)) {
                format!("SETOF {ret}")
            } else {
                ret
            })
        }
        "pg_get_function_arguments" | "pg_get_function_identity_arguments" => {
            let Some(p) = proc_row(ev, a0)? else {
                return Ok(Some(Value::Null));
            };
            let types: Vec<i64> = text_of(&p[PRO_ARGTYPES])
                .split_whitespace()
                .filter_map(|t| t.parse().ok())
                .collect();
            let names = if p[PRO_ARGNAMES].is_null() {
                vec![]
            } else {
                parse_array(&text_of(&p[PRO_ARGNAMES]))?
            };
            let mut out = Vec::new();
            for (i, t) in types.iter().enumerate() {
                let ty = format_type_name(ev, *t, None)?;
                match names.get(i).cloned().flatten().filter(|n| !n.is_empty()) {
                    Some(n) => out.push(format!("{n} {ty}")),
                    None => out.push(ty),
                }
            }
            text(out.join(", "))
        }
        "to_regclass" => ev.reg_oid(RegKind::Class, &text_of(a0), false)?,
        "to_regtype" => ev.reg_oid(RegKind::Type, &text_of(a0), false)?,
        "to_regproc" => ev.reg_oid(RegKind::Proc, &text_of(a0), false)?,
        "to_regnamespace" => ev.reg_oid(RegKind::Namespace, &text_of(a0), false)?,
        "pg_postmaster_start_time" | "pg_conf_load_time" => {
            Value::TimestampTz(crate::time::now_us())
        }
        "txid_current" | "pg_current_xact_id" => Value::Int8(1),
        "getdatabaseencoding" => text("UTF8"),
        "pg_typeof" => text("unknown"),
        _ => return Ok(None),
    }))
}

/// The text functions of [`call`] (`replace`, `split_part`, `format`,
/// `quote_*`, ...): `None` for a name that is none of them.
fn text_call(name: &str, args: &[Value]) -> Result<Option<Value>> {
    let a0 = arg(args, 0);
    Ok(Some(match name {
        "quote_ident" => text(quote_ident(&text_of(a0))),
        // Bits of the UTF-8 encoding, as PostgreSQL counts them.
        "bit_length" => Value::Int4((text_of(a0).len() as i32).saturating_mul(8)),
        "quote_literal" => text(quote_literal(&text_of(a0))),
        "quote_nullable" => {
            if a0.is_null() {
                text("NULL")
            } else {
                text(quote_literal(&text_of(a0)))
            }
        }
        "replace" => {
            // An empty search string matches nothing (PostgreSQL's replace()).
            let from = text_of(arg(args, 1));
            if from.is_empty() {
                text(text_of(a0))
            } else {
                text(text_of(a0).replace(&from, &text_of(arg(args, 2))))
            }
        }
        "split_part" => {
            let s = text_of(a0);
            let sep = text_of(arg(args, 1));
            let n = int_of(arg(args, 2)).unwrap_or(1);
            if n == 0 {
                return Err(Error::InvalidParameterValue(
                    "field position must not be zero".into(),
                ));
            }
            let parts: Vec<&str> = if sep.is_empty() {
                vec![s.as_str()]
            } else {
                s.split(sep.as_str()).collect()
            };
            let idx = if n > 0 { n - 1 } else { parts.len() as i64 + n };
            text(
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| parts.get(i))
                    .copied()
                    .unwrap_or(""),
            )
        }
        "left" | "right" => {
            let s: Vec<char> = text_of(a0).chars().collect();
            let n = int_of(arg(args, 1)).unwrap_or(0);
            let len = s.len() as i64;
            let k = if n >= 0 { n.min(len) } else { (len + n).max(0) } as usize;
            text(if name == "left" {
                s[..k].iter().collect::<String>()
            } else {
                s[s.len() - k..].iter().collect::<String>()
            })
        }
        "starts_with" => Value::Bool(text_of(a0).starts_with(&text_of(arg(args, 1)))),
        "concat_ws" => {
            if a0.is_null() {
                return Ok(Some(Value::Null));
            }
            let sep = text_of(a0);
            let parts: Vec<String> = args[1..]
                .iter()
                .filter(|v| !v.is_null())
                .map(text_of)
                .collect();
            text(parts.join(&sep))
        }
        "format" => {
            if a0.is_null() {
                return Ok(Some(Value::Null));
            }
            text(format_string(&text_of(a0), &args[1..])?)
        }
        _ => return Ok(None),
    }))
}

/// The array, JSON and record functions of [`call`]: `None` for a name that is none of
/// them.
fn collection_call(name: &str, args: &[Value]) -> Result<Option<Value>> {
    let a0 = arg(args, 0);
    Ok(Some(match name {
        "array_to_string" => {
            if a0.is_null() || arg(args, 1).is_null() {
                return Ok(Some(Value::Null));
            }
            let sep = text_of(arg(args, 1));
            let null = arg(args, 2);
            let parts: Vec<String> = parse_array(&text_of(a0))?
                .into_iter()
                .filter_map(|e| match e {
                    Some(s) => Some(s),
                    None if !null.is_null() => Some(text_of(null)),
                    None => None,
                })
                .collect();
            text(parts.join(&sep))
        }
        // A NULL separator splits into characters; elements equal to the third argument
        // are NULL.
        "string_to_array" => {
            let s = text_of(a0);
            let null = arg(args, 2);
            let null = (!null.is_null()).then(|| text_of(null));
            let parts: Vec<String> = match arg(args, 1) {
                _ if s.is_empty() => vec![],
                Value::Null => s.chars().map(String::from).collect(),
                sep => match text_of(sep) {
                    sep if sep.is_empty() => vec![s.clone()],
                    sep => s.split(sep.as_str()).map(String::from).collect(),
                },
            };
            let parts: Vec<Value> = parts
                .into_iter()
                .map(|p| match &null {
                    Some(n) if *n == p => Value::Null,
                    _ => text(p),
                })
                .collect();
            text(format_array(&parts))
        }
        "regexp_split_to_array" => {
            if args.iter().any(Value::is_null) {
                return Ok(Some(Value::Null));
            }
            let flags = args.get(2).map(text_of).unwrap_or_default();
            let pieces =
                crate::expr_regex::split(&text_of(a0), &text_of(arg(args, 1)), &flags, name)?;
            text(format_array(
                &pieces.into_iter().map(text).collect::<Vec<_>>(),
            ))
        }
        "regexp_match" => {
            if args.iter().any(Value::is_null) {
                return Ok(Some(Value::Null));
            }
            let flags = args.get(2).map(text_of).unwrap_or_default();
            match crate::expr_regex::first_match(&text_of(a0), &text_of(arg(args, 1)), &flags)? {
                None => Value::Null,
                Some(groups) => {
                    let groups: Vec<Value> = groups
                        .into_iter()
                        .map(|g| g.map_or(Value::Null, text))
                        .collect();
                    text(format_array(&groups))
                }
            }
        }
        "row" => text(format_record(args)),
        "json_build_object" => {
            let fields: Vec<String> = args
                .chunks(2)
                .map(|kv| {
                    format!(
                        "\"{}\" : {}",
                        json_escape(&text_of(&kv[0])),
                        json(kv.get(1))
                    )
                })
                .collect();
            text(format!("{{{}}}", fields.join(", ")))
        }
        "json_build_array" => {
            let items: Vec<String> = args.iter().map(|v| json(Some(v))).collect();
            text(format!("[{}]", items.join(", ")))
        }
        "array_upper" | "array_length" | "cardinality" | "array_lower"
            if super::array_nd::is_nd(&text_of(a0)) =>
        {
            let nd = super::array_nd::parse_nd(&text_of(a0))?;
            let dim = (int_of(arg(args, 1)))
                .and_then(|d| usize::try_from(d).ok())
                .and_then(|d| d.checked_sub(1))
                .and_then(|d| nd.dims.get(d));
            match (name, dim) {
                ("cardinality", _) => Value::Int4(nd.elems.len() as i32),
                ("array_lower", Some(_)) => Value::Int4(1),
                (_, Some(n)) => Value::Int4(*n as i32),
                (_, None) => Value::Null,
            }
        }
        "array_upper" | "array_length" | "cardinality" => {
            let n = parse_array(&text_of(a0))?.len() as i32;
            // Arrays here have one dimension: any other dimension has no bounds.
            let other_dim = name != "cardinality" && int_of(arg(args, 1)) != Some(1);
            if (n == 0 || other_dim) && name != "cardinality" {
                Value::Null
            } else {
                Value::Int4(n)
            }
        }
        "array_lower" => {
            if parse_array(&text_of(a0))?.is_empty() || int_of(arg(args, 1)) != Some(1) {
                Value::Null
            } else {
                Value::Int4(1)
            }
        }
        "record_field" => {
            if a0.is_null() {
                return Ok(Some(Value::Null));
            }
            let i = int_of(arg(args, 1)).unwrap_or(0) as usize;
            record_fields(&text_of(a0))
                .into_iter()
                .nth(i)
                .flatten()
                .map_or(Value::Null, text)
        }
        _ => return Ok(None),
    }))
}

/// `pg_get_indexdef(index oid, column, pretty)`: with column 0 the index's CREATE
/// statement as PostgreSQL prints it (`CREATE UNIQUE INDEX airports_pkey ON
/// public.airports USING btree (code)`), else that column's name; NULL for an unknown oid.
fn index_def(ev: &Ev, oid: Option<i64>, column: i64) -> Result<Value> {
    let indexes = ev.catalog("pg_index")?;
    let Some(ix) = indexes.iter().find(|r| int_of(&r[0]) == oid) else {
        return Ok(Value::Null);
    };
    let table = int_of(&ix[1]);
    let attnums: Vec<i64> = text_of(&ix[15])
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let names = column_names(ev, table, &attnums)?;
    if column > 0 {
        return Ok(names
            .get(column as usize - 1)
            .map_or(Value::Null, |n| text(n.clone())));
    }
    let classes = ev.catalog("pg_class")?;
    let class = |o: Option<i64>| classes.iter().find(|r| int_of(&r[0]) == o).cloned();
    let (Some(index), Some(rel)) = (class(oid), class(table)) else {
        return Ok(Value::Null);
    };
    let spaces = ev.catalog("pg_namespace")?;
    let schema = spaces
        .iter()
        .find(|r| int_of(&r[0]) == int_of(&rel[2]))
        .map_or(String::new(), |r| text_of(&r[1]));
    let unique = if matches!(ix[4], Value::Bool(true)) {
        "UNIQUE "
    } else {
        ""
    };
    Ok(text(format!(
        "CREATE {unique}INDEX {} ON {}.{} USING btree ({})",
        quote_ident(&text_of(&index[1])),
        quote_ident(&schema),
        quote_ident(&text_of(&rel[1])),
        names.join(", ")
    )))
}

/// `pg_get_constraintdef(constraint oid, pretty)`: `PRIMARY KEY (code)` or `UNIQUE
/// (city, state)`; NULL for an unknown oid.
fn constraint_def(ev: &Ev, oid: Option<i64>) -> Result<Value> {
    let constraints = ev.catalog("pg_constraint")?;
    let Some(con) = constraints.iter().find(|r| int_of(&r[0]) == oid) else {
        return Ok(Value::Null);
    };
    let attnums: Vec<i64> = parse_array(&text_of(&con[18]))?
        .iter()
        .filter_map(|v| v.as_ref().and_then(|s| s.parse().ok()))
        .collect();
    let names = column_names(ev, int_of(&con[7]), &attnums)?;
    let kind = if text_of(&con[3]) == "p" {
        "PRIMARY KEY"
    } else {
        "UNIQUE"
    };
    Ok(text(format!("{kind} ({})", names.join(", "))))
}

/// The quoted names of columns `attnums` of relation `rel`.
fn column_names(ev: &Ev, rel: Option<i64>, attnums: &[i64]) -> Result<Vec<String>> {
    let attrs = ev.catalog("pg_attribute")?;
    Ok(attnums
        .iter()
        .map(|&n| {
            attrs
                .iter()
                .find(|r| int_of(&r[0]) == rel && int_of(&r[5]) == Some(n))
                .map_or(String::new(), |r| quote_ident(&text_of(&r[1])))
        })
        .collect())
}

/// True when the object's namespace is on the search path (pg_catalog, public).
fn visible(ev: &Ev, rel: &str, oid: &Value) -> Result<Value> {
    let oid = int_of(oid);
    let rows = ev.catalog(rel)?;
    Ok(match rows.iter().find(|r| int_of(&r[0]) == oid) {
        Some(r) => {
            let ns = int_of(&r[2]).unwrap_or(0);
            Value::Bool(ns == PG_CATALOG_OID || ns == PUBLIC_OID)
        }
        None => Value::Null,
    })
}

fn description(ev: &Ev, oid: Option<i64>, sub: Option<i64>) -> Result<Value> {
    let rows = ev.catalog("pg_description")?;
    Ok(rows
        .iter()
        .find(|r| int_of(&r[0]) == oid && int_of(&r[2]) == sub)
        .map_or(Value::Null, |r| r[3].clone()))
}

fn proc_row(ev: &Ev, oid: &Value) -> Result<Option<Row>> {
    let oid = int_of(oid);
    Ok(ev
        .catalog("pg_proc")?
        .iter()
        .find(|r| int_of(&r[0]) == oid)
        .cloned())
}

/// `format(fmt, args...)` as PostgreSQL's `text_format`: `%[n$][-][width]type` with type
/// `s` (text, NULL as empty), `I` (an identifier, quoted where needed; NULL is 22004), `L`
/// (a literal, NULL as `NULL`) and `%%`; `width` is digits, `*` (the next argument) or
/// `*n$`, padding with blanks on the left (on the right with `-` or a negative width), in
/// characters. An argument position moves the next unpositioned argument after it.
/// Errors (22023): too few arguments, argument 0, an unterminated or unknown specifier.
fn format_string(fmt: &str, args: &[Value]) -> Result<String> {
    let bad = |m: &str| Error::InvalidParameterValue(m.into());
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let (mut i, mut next) = (0, 0usize);
    while i < chars.len() {
        if chars[i] != '%' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let spec = format_spec(&chars, &mut i)?;
        let mut take = |pos: Option<usize>| -> Result<&Value> {
            let at = pos.unwrap_or(next);
            next = at + 1;
            args.get(at)
                .ok_or_else(|| bad("too few arguments for format()"))
        };
        let mut width = spec.width;
        if let Some(star) = spec.star {
            let w = take(star)?;
            width = match w {
                Value::Null => 0,
                v => v
                    .as_i64()
                    .ok_or_else(|| bad("width argument must be an integer"))?,
            };
        }
        let v = take(spec.position)?;
        let piece = match spec.kind {
            's' => text_of(v),
            'I' if v.is_null() => {
                return Err(Error::NullValueNotAllowed(
                    "null values cannot be formatted as an SQL identifier".into(),
                ))
            }
            'I' => quote_ident(&text_of(v)),
            'L' if v.is_null() => "NULL".into(),
            _ => quote_literal(&text_of(v)),
        };
        let pad = (width.unsigned_abs() as usize).saturating_sub(piece.chars().count());
        if out.len() + piece.len() + pad > crate::expr_funcs::TEXT_BYTES_MAX {
            return Err(crate::expr_funcs::too_long());
        }
        if spec.left || width < 0 {
            out.push_str(&piece);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&piece);
        }
    }
    Ok(out)
}

/// One `format()` conversion after its `%`.
struct FormatSpec {
    /// `n$`: the argument (0-based), else the next one.
    position: Option<usize>,
    /// The `-` flag.
    left: bool,
    /// A written width (0: none).
    width: i64,
    /// `*` (`Some(None)`) or `*n$` (`Some(Some(n - 1))`): the width is an argument.
    star: Option<Option<usize>>,
    /// `s`, `I` or `L`.
    kind: char,
}

/// Parse `[n$][-][width | * | *n$]type` from `chars[*i..]`, leaving `*i` after it.
fn format_spec(chars: &[char], i: &mut usize) -> Result<FormatSpec> {
    let unterminated =
        || Error::InvalidParameterValue("unterminated format() type specifier".into());
    let number = |i: &mut usize| -> Result<Option<i64>> {
        let start = *i;
        while chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        if *i == start {
            return Ok(None);
        }
        let digits: String = chars[start..*i].iter().collect();
        digits
            .parse::<i64>()
            .ok()
            .filter(|n| *n <= i32::MAX as i64)
            .map(Some)
            .ok_or_else(|| Error::InvalidParameterValue("number is out of range".into()))
    };
    let position = |n: i64| -> Result<usize> {
        if n == 0 {
            return Err(Error::InvalidParameterValue(
                "format specifies argument 0, but arguments are numbered from 1".into(),
            ));
        }
        Ok(n as usize - 1)
    };
    let mut spec = FormatSpec {
        position: None,
        left: false,
        width: 0,
        star: None,
        kind: ' ',
    };
    let save = *i;
    if let Some(n) = number(i)? {
        if chars.get(*i) == Some(&'$') {
            *i += 1;
            spec.position = Some(position(n)?);
        } else {
            *i = save;
        }
    }
    while chars.get(*i) == Some(&'-') {
        spec.left = true;
        *i += 1;
    }
    if chars.get(*i) == Some(&'*') {
        *i += 1;
        let save = *i;
        spec.star = Some(None);
        if let Some(n) = number(i)? {
            if chars.get(*i) == Some(&'$') {
                *i += 1;
                spec.star = Some(Some(position(n)?));
            } else {
                *i = save;
            }
        }
    } else if let Some(n) = number(i)? {
        spec.width = n;
    }
    let kind = *chars.get(*i).ok_or_else(unterminated)?;
    *i += 1;
    if !matches!(kind, 's' | 'I' | 'L') {
        return Err(Error::InvalidParameterValue(format!(
            "unrecognized format() type specifier \"{kind}\""
        )));
    }
    spec.kind = kind;
    Ok(spec)
}

fn json_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A value as JSON, as PostgreSQL's `to_json` writes it.
fn json(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(
            v @ (Value::Int2(_)
            | Value::Int4(_)
            | Value::Int8(_)
            | Value::Float4(_)
            | Value::Float8(_)
            | Value::Numeric(_)
            | Value::WideNumeric(_)),
        ) => text_of(v),
        Some(v) => format!("\"{}\"", json_escape(&text_of(v))),
    }
}

fn quote_literal(s: &str) -> String {
    if s.contains('\\') {
        format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

fn size_pretty(n: i64) -> String {
    let units = ["bytes", "kB", "MB", "GB", "TB"];
    let mut v = n;
    let mut u = 0;
    while v.abs() >= 10 * 1024 && u < units.len() - 1 {
        v = (v + 512) / 1024;
        u += 1;
    }
    format!("{v} {}", units[u])
}

/// The elements of an array's text form (`{a,b}`) or of an int2vector's or oidvector's
/// (`1 2`).
fn elements(s: &str) -> Result<Vec<Option<String>>> {
    if super::array_nd::is_nd(s) {
        // unnest flattens an array of several dimensions.
        Ok(super::array_nd::parse_nd(s)?.elems)
    } else if s.starts_with('{') {
        parse_array(s)
    } else {
        Ok(s.split_whitespace().map(|e| Some(e.to_string())).collect())
    }
}

/// A record's text form (`(1,"a b",)`) as its fields; an empty field is NULL.
pub(crate) fn record_fields(s: &str) -> Vec<Option<String>> {
    let inner = s.trim().trim_start_matches('(').trim_end_matches(')');
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => cur.extend(chars.next()),
            ',' if !quoted => {
                out.push((any || !cur.is_empty()).then(|| std::mem::take(&mut cur)));
                any = false;
            }
            c => cur.push(c),
        }
    }
    out.push((any || !cur.is_empty()).then_some(cur));
    out
}

/// A record's text form from its fields, as PostgreSQL prints one.
pub(crate) fn format_record(fields: &[Value]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|v| {
            if v.is_null() {
                return String::new();
            }
            let t = text_of(v);
            if t.is_empty() || t.contains([',', '(', ')', '"', '\\', ' ']) {
                format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\"\""))
            } else {
                t
            }
        })
        .collect();
    format!("({})", parts.join(","))
}

/// The rows of `generate_series(lo, hi, step)` over numerics (step 1 when NULL: the
/// two-argument call) or timestamps (an interval step): `lo`, `lo + step`, ... while not
/// past `hi`, each value the one before plus the step, as PostgreSQL adds them (a month
/// step from January 31 gives February 28, then March 28). Errors: 22023 for a zero step,
/// 54000 past the statement's value budget, and the addition's own (22008, 22003).
fn stepped_series(lo: &Value, hi: &Value, step: &Value) -> Result<Vec<Row>> {
    use std::cmp::Ordering;
    if hi.is_null() || (step.is_null() && matches!(lo, Value::Timestamp(_) | Value::TimestampTz(_)))
    {
        return Ok(vec![]);
    }
    let step = match step {
        Value::Null => Value::Numeric(1.into()),
        s => s.clone(),
    };
    let direction = match &step {
        Value::Interval(iv) => crate::time::interval_span_us(iv).cmp(&0),
        s => crate::expr::compare(s, &Value::Numeric(0.into()))?,
    };
    if direction == Ordering::Equal {
        return Err(Error::InvalidParameterValue(
            "step size cannot equal zero".into(),
        ));
    }
    let mut out = Vec::new();
    let mut cur = lo.clone();
    while crate::expr::compare(&cur, hi)? != direction {
        if out.len() >= super::relational::VALUES_MAX {
            return Err(Error::ProgramLimitExceeded(format!(
                "a catalog query may build at most {} values (rows times columns)",
                super::relational::VALUES_MAX
            )));
        }
        let next = crate::expr::arith(crate::sql::BinaryOp::Add, cur.clone(), step.clone())?;
        out.push(vec![cur]);
        cur = next;
    }
    Ok(out)
}

/// Rows of a set-returning function in FROM.
pub(crate) fn table_function(name: &str, args: &[Value]) -> Result<Vec<Row>> {
    let a0 = arg(args, 0);
    Ok(match name {
        // Strict: a NULL argument (a NULL step included) gives no rows.
        "generate_series" if args.iter().any(Value::is_null) => vec![],
        "generate_series"
            if matches!(
                a0,
                Value::Numeric(_)
                    | Value::WideNumeric(_)
                    | Value::Timestamp(_)
                    | Value::TimestampTz(_)
            ) =>
        {
            stepped_series(a0, arg(args, 1), arg(args, 2))?
        }
        "generate_series" => integer_series(args)?,
        "regexp_matches" | "regexp_split_to_table" => regexp_rows(name, args)?,
        "unnest" => unnest_rows(args)?,
        "generate_subscripts" => subscript_rows(args)?,
        "_pg_expandarray" => expanded_array(a0)?,
        "pg_options_to_table" => option_rows(a0)?,
        "pg_get_keywords" => keyword_rows(),
        other => {
            return Err(Error::UndefinedFunction(format!(
                "function {other} does not exist"
            )))
        }
    })
}

/// `generate_series` of integers (bigint rows), `lo` to `hi` by `step` (default 1).
/// Errors: 22023 for a zero step; 54000 past the relational value limit.
fn integer_series(args: &[Value]) -> Result<Vec<Row>> {
    let a0 = arg(args, 0);
    let (Some(lo), Some(hi)) = (int_of(a0), int_of(arg(args, 1))) else {
        return Ok(vec![]);
    };
    let step = int_of(arg(args, 2)).unwrap_or(1);
    if step == 0 {
        return Err(Error::InvalidParameterValue(
            "step size cannot equal zero".into(),
        ));
    }
    let n = if (step > 0 && hi < lo) || (step < 0 && hi > lo) {
        0
    } else {
        ((hi as i128 - lo as i128) / step as i128 + 1) as u128
    };
    if n > super::relational::VALUES_MAX as u128 {
        return Err(Error::ProgramLimitExceeded(format!(
            "a catalog query may build at most {} values (rows times columns)",
            super::relational::VALUES_MAX
        )));
    }
    Ok((0..n as i64)
        .map(|i| vec![Value::Int8(lo + i * step)])
        .collect())
}

/// `regexp_matches` (one text[] row per match) or `regexp_split_to_table` (one
/// text row per piece). Errors: the pattern's or flags' (2201B, 22023).
fn regexp_rows(name: &str, args: &[Value]) -> Result<Vec<Row>> {
    let a0 = arg(args, 0);
    if args.iter().any(Value::is_null) {
        return Ok(vec![]);
    }
    let (s, pattern) = (text_of(a0), text_of(arg(args, 1)));
    let flags = args.get(2).map(text_of).unwrap_or_default();
    Ok(if name == "regexp_matches" {
        crate::expr_regex::all_matches(&s, &pattern, &flags)?
            .into_iter()
            .map(|g| {
                let g: Vec<Value> = g.into_iter().map(|x| x.map_or(Value::Null, text)).collect();
                vec![text(format_array(&g))]
            })
            .collect()
    } else {
        crate::expr_regex::split(&s, &pattern, &flags, name)?
            .into_iter()
            .map(|p| vec![text(p)])
            .collect()
    })
}

/// unnest(a, b, ...) in FROM: the arrays side by side, the shorter ones (and a NULL
/// array) giving NULL.
fn unnest_rows(args: &[Value]) -> Result<Vec<Row>> {
    let arrays = args
        .iter()
        .map(|a| match a {
            Value::Null => Ok(vec![]),
            a => elements(&text_of(a)),
        })
        .collect::<Result<Vec<_>>>()?;
    let n = arrays.iter().map(Vec::len).max().unwrap_or(0);
    Ok((0..n)
        .map(|i| {
            arrays
                .iter()
                .map(|a| a.get(i).cloned().flatten().map_or(Value::Null, text))
                .collect()
        })
        .collect())
}

/// The subscripts of dimension 1 (the only one): from 1 for an array, from 0 for an
/// int2vector or oidvector (`pg_index.indkey`), as PostgreSQL numbers them.
fn subscript_rows(args: &[Value]) -> Result<Vec<Row>> {
    let a0 = arg(args, 0);
    if a0.is_null() || int_of(arg(args, 1)) != Some(1) {
        return Ok(vec![]);
    }
    let s = text_of(a0);
    let first = if s.starts_with('{') { 1 } else { 0 };
    Ok((0..elements(&s)?.len() as i32)
        .map(|i| vec![Value::Int4(first + i)])
        .collect())
}

/// An int2vector (`1 2`, as pg_index.indkey) or an array, element by element
/// with its 1-based position.
/// Errors: 22P02 for an element that is no integer.
fn expanded_array(a0: &Value) -> Result<Vec<Row>> {
    if a0.is_null() {
        return Ok(vec![]);
    }
    elements(&text_of(a0))?
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let x = match e {
                None => Value::Null,
                Some(e) => Value::Int4(e.trim().parse().map_err(|_| {
                    Error::InvalidTextRepresentation(format!(
                        "invalid input syntax for type integer: \"{e}\""
                    ))
                })?),
            };
            Ok(vec![x, Value::Int4(i as i32 + 1)])
        })
        .collect()
}

/// `pg_options_to_table`: each `key=value` option of a text[] as a row.
fn option_rows(a0: &Value) -> Result<Vec<Row>> {
    if a0.is_null() {
        return Ok(vec![]);
    }
    Ok(parse_array(&text_of(a0))?
        .into_iter()
        .flatten()
        .map(|o| match o.split_once('=') {
            Some((k, v)) => vec![text(k), text(v)],
            None => vec![text(o), Value::Null],
        })
        .collect())
}

/// `pg_get_keywords`: each SQL keyword tcq's parser knows, as PostgreSQL lists them.
fn keyword_rows() -> Vec<Row> {
    crate::sql::keywords()
        .iter()
        .map(|(word, reserved)| {
            let (code, desc) = if *reserved {
                ("R", "reserved")
            } else {
                ("U", "unreserved")
            };
            vec![
                text(word.to_lowercase()),
                text(code),
                Value::Bool(true),
                text(desc),
                text("can be bare label"),
            ]
        })
        .collect()
}
