//! SQL types: the names a statement writes (`double precision`, `varchar(3)`,
//! `int4[]`, `regclass`), the static types of expressions ([`RType`]: a column type, a
//! `reg*` type, a catalog type, or PostgreSQL's *unknown*), and PostgreSQL's rules for
//! combining them: the type two numeric operands are promoted to, the common type of
//! CASE, COALESCE, IN and set operations, and which casts are allowed.
//!
//! Both plan builders read these rules, so a column is typed the same way whether the
//! statement is a continuous query or a finite one.

use crate::error::{Error, Result};
use crate::types::{CatalogType, Column, DataType, ElemType};

/// Static types of the relational plan, beyond [`DataType`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RType {
    /// A plain type.
    Base(DataType),
    /// `regclass`, `regtype`, `regproc`, `regnamespace`, `regrole`: an oid that prints
    /// as the object's name.
    Reg(RegKind),
    /// A catalog type: `oid` (held as `bigint`), an array of an element type or a vector
    /// (held as their PostgreSQL text form); sent to clients as that type.
    Catalog(CatalogType),
    /// A literal or parameter whose type the context has not fixed (text at run time).
    Unknown,
    /// A composite (record) value with these fields, held as its PostgreSQL text form
    /// (`(1,2)`) and sent to clients as `text`; `(value).field` reads a field.
    Record(&'static [(&'static str, DataType)]),
}

/// The fields of the records `information_schema._pg_expandarray(array)` returns: each
/// element `x` with its 1-based position `n`.
pub(crate) const EXPANDARRAY_FIELDS: &[(&str, DataType)] =
    &[("x", DataType::Int4), ("n", DataType::Int4)];

impl RType {
    /// The type values are held as (and, but for catalog types, the type clients see).
    pub(crate) fn data_type(&self) -> DataType {
        match self {
            RType::Base(d) => *d,
            RType::Catalog(t) => t.held_as(),
            _ => DataType::Text,
        }
    }

    /// A result column of this type named `name`, as RowDescription announces it.
    pub(crate) fn column(&self, name: impl Into<String>) -> Column {
        match self {
            RType::Catalog(t) => Column::catalog(name, *t),
            // A regtype (pg_typeof) is announced as one, its value the type's name, which
            // gives the oid back in binary. Other reg* results stay text: their oids need
            // the catalog, which encoding a row has not.
            RType::Reg(RegKind::Type) => Column::catalog(name, CatalogType::Reg(RegKind::Type)),
            RType::Record(_) => Column::catalog(name, CatalogType::Record),
            other => Column::new(name, other.data_type()),
        }
    }

    /// The static type of a provider's column.
    pub(crate) fn of_column(c: &Column) -> RType {
        c.catalog_type
            .map_or(RType::Base(c.data_type), RType::Catalog)
    }

    /// True for arrays and vectors.
    pub(crate) fn is_array(&self) -> bool {
        matches!(self, RType::Catalog(t) if t.elem().is_some())
    }

    /// The type of an array's or vector's elements.
    pub(crate) fn elem(&self) -> Option<RType> {
        match self {
            RType::Catalog(t) => t.elem().map(RType::of_elem),
            _ => None,
        }
    }

    /// The static type of an array element of type `e`.
    pub(crate) fn of_elem(e: ElemType) -> RType {
        match e {
            ElemType::Oid => RType::Catalog(CatalogType::Oid),
            ElemType::Name => RType::Catalog(CatalogType::Name),
            ElemType::Char => RType::Catalog(CatalogType::Char),
            other => RType::Base(other.held_as()),
        }
    }

    /// The array type whose elements are of this type (`text[]` when unknown).
    pub(crate) fn array_of(&self) -> RType {
        RType::Catalog(CatalogType::Array(match self {
            RType::Base(d) => ElemType::of(*d),
            RType::Catalog(CatalogType::Oid) | RType::Reg(_) => ElemType::Oid,
            RType::Catalog(CatalogType::Name) => ElemType::Name,
            RType::Catalog(CatalogType::Char) => ElemType::Char,
            _ => ElemType::Text,
        }))
    }

    /// The type's name in messages and `pg_typeof` (`integer`, `text[]`, `int2vector`).
    pub(crate) fn name(&self) -> String {
        match self {
            RType::Base(d) => d.name(),
            RType::Unknown => "unknown".into(),
            RType::Catalog(t) => t.name(),
            RType::Reg(_) => "oid".into(),
            RType::Record(_) => "record".into(),
        }
    }
}

pub(crate) use crate::types::RegKind;

/// The oid of the type `name` names (`integer`, `text[]`, `timestamp without time zone`).
pub(crate) fn type_oid_of_name(name: &str) -> Option<i64> {
    match rtype_of_name(name).ok()? {
        RType::Base(d) => Some(i64::from(d.oid())),
        RType::Catalog(c) => Some(i64::from(c.oid())),
        RType::Reg(k) => Some(i64::from(k.oid())),
        _ => None,
    }
}

/// A type name (as sqlparser prints it) to a static type.
pub(crate) fn rtype_of_name(written: &str) -> Result<RType> {
    let quoted = written.trim().to_lowercase();
    let quoted = quoted.strip_prefix("pg_catalog.").unwrap_or(&quoted);
    // `"char"` (quoted) is the catalogs' one-byte type; `char` is `character(1)`.
    if quoted == "\"char\"" {
        return Ok(RType::Catalog(CatalogType::Char));
    }
    let lower = written.trim().to_lowercase().replace('"', "");
    let base = lower.strip_prefix("pg_catalog.").unwrap_or(&lower).trim();
    let elem = base
        .strip_suffix("[]")
        .or_else(|| base.strip_prefix('_'))
        .map(|e| e.trim());
    if let Some(elem) = elem {
        // An element type tcq does not know (aclitem[]) is held and sent as text[].
        return Ok(match elem {
            "name" => RType::Catalog(CatalogType::Array(ElemType::Name)),
            "char" | "\"char\"" => RType::Catalog(CatalogType::Array(ElemType::Char)),
            other => rtype_of_name(other).unwrap_or(RType::Unknown).array_of(),
        });
    }
    Ok(match base {
        "oidvector" => RType::Catalog(CatalogType::OidVector),
        "int2vector" => RType::Catalog(CatalogType::Int2Vector),
        "oid" => RType::Catalog(CatalogType::Oid),
        "regclass" => RType::Reg(RegKind::Class),
        "regtype" => RType::Reg(RegKind::Type),
        "regproc" | "regprocedure" => RType::Reg(RegKind::Proc),
        "regnamespace" => RType::Reg(RegKind::Namespace),
        "regrole" => RType::Reg(RegKind::Role),
        "xid" | "cid" | "regoper" | "regconfig" => RType::Base(DataType::Int8),
        "name" => RType::Catalog(CatalogType::Name),
        "pg_node_tree" | "aclitem" | "unknown" | "cstring" => RType::Base(DataType::Text),
        other => RType::Base(type_from_name(other)?),
    })
}

/// A type name as written (`double precision`, `varchar(3)`, `TIMESTAMP(3) WITH TIME ZONE`)
/// to a [`DataType`]. Errors: 42704 for unknown names, 0A000 for PostgreSQL types tcq lacks.
pub(crate) fn type_from_name(written: &str) -> Result<DataType> {
    let lower = written.trim().to_lowercase();
    let mut base = String::new();
    let mut args: Vec<u32> = Vec::new();
    let mut rest = lower.as_str();
    while let Some(open) = rest.find('(') {
        base.push_str(&rest[..open]);
        let close = rest[open..]
            .find(')')
            .map(|c| c + open)
            .ok_or_else(|| Error::Syntax(format!("syntax error at or near \"{written}\"")))?;
        for a in rest[open + 1..close].split(',') {
            let n: u32 = a
                .trim()
                .parse()
                .map_err(|_| Error::Syntax(format!("syntax error at or near \"{written}\"")))?;
            args.push(n);
        }
        base.push(' ');
        rest = &rest[close + 1..];
    }
    base.push_str(rest);
    let base = base.split_whitespace().collect::<Vec<_>>().join(" ");
    let base = base
        .strip_prefix("pg_catalog.")
        .unwrap_or(&base)
        .to_string();
    let ty = match base.as_str() {
        "boolean" | "bool" => DataType::Bool,
        "smallint" | "int2" => DataType::Int2,
        "integer" | "int" | "int4" => DataType::Int4,
        "bigint" | "int8" => DataType::Int8,
        "real" | "float4" => DataType::Float4,
        "double precision" | "float8" | "double" => DataType::Float8,
        "float" => match args.first() {
            Some(&p) if p <= 24 => DataType::Float4,
            _ => DataType::Float8,
        },
        "numeric" | "decimal" | "dec" => DataType::Numeric,
        "text" | "string" => DataType::Text,
        "varchar" | "character varying" | "char varying" => match args.first() {
            Some(0) => return Err(Error::InvalidParameterValue("length for type varchar must be at least 1".into())),
            Some(&n) if n > 10_485_760 => return Err(Error::InvalidParameterValue("length for type varchar cannot exceed 10485760".into())),
            n => DataType::Varchar(n.copied()),
        },
        "char" | "character" | "bpchar" => match args.first() {
            Some(0) => return Err(Error::InvalidParameterValue("length for type char must be at least 1".into())),
            Some(&n) if n > 10_485_760 => return Err(Error::InvalidParameterValue("length for type char cannot exceed 10485760".into())),
            Some(&n) => DataType::Bpchar(Some(n)),
            // `char` alone is `char(1)`; `bpchar` alone has no length.
            None if base == "bpchar" => DataType::Bpchar(None),
            None => DataType::Bpchar(Some(1)),
        },
        "timestamp" | "timestamp without time zone" => DataType::Timestamp,
        "timestamptz" | "timestamp with time zone" => DataType::TimestampTz,
        "interval" => DataType::Interval,
        "date" => DataType::Date,
        "time" | "time without time zone" => DataType::Time,
        "timetz" | "time with time zone" | "bytea" | "json"
        | "jsonb" | "uuid" | "regclass" | "oid" | "name" => {
            return Err(Error::FeatureNotSupported(format!(
                "type {base} is not supported; columns may be boolean, smallint, integer, bigint, real, double precision, numeric, text, varchar(n), char(n), timestamp, timestamptz, interval, date or time"
            )))
        }
        // An array of any type (`int[]`, `text ARRAY`): PostgreSQL has them, a column here not.
        b if b.ends_with("[ ]") || b.ends_with("[]") || b.ends_with(" array") || b.contains("[ ") => {
            return Err(Error::FeatureNotSupported(format!(
                "array types ({}) are not supported as column types",
                written.trim()
            )))
        }
        _ => return Err(Error::UndefinedObject(format!("type \"{}\" does not exist", written.trim()))),
    };
    Ok(ty)
}

/// `value` (an expression already cast to the type written `written`) with the type's
/// modifier applied, as an explicit cast applies it, and its type: `numeric(p, s)` rounds
/// to `s` digits and checks `p` ([`numeric_typmod`]); `timestamp(p)`, `timestamptz(p)` and
/// `time(p)` round to `p` fractional digits of a second (PostgreSQL keeps 6 at most, so
/// `p` of 6 or more changes nothing). `None` for a type without such a modifier. Errors:
/// those of [`numeric_typmod`]. Both binders' casts call this.
pub(crate) fn typmod_applied(
    written: &str,
    value: super::plan::Expr,
) -> Result<Option<(super::plan::Expr, DataType)>> {
    use super::plan::{Expr, ScalarFunc};
    use crate::types::Value;
    if let Some(tm) = numeric_typmod(written)? {
        let args = vec![
            value,
            Expr::Literal(Value::Int4(i32::from(tm.precision))),
            Expr::Literal(Value::Int4(i32::from(tm.scale))),
        ];
        let func = ScalarFunc::NumericTypmod;
        return Ok(Some((Expr::Func { func, args }, DataType::Numeric)));
    }
    match time_precision(written)? {
        Some((p, ty)) => {
            let args = vec![value, Expr::Literal(Value::Int4(i32::from(p)))];
            let func = ScalarFunc::TimeTypmod;
            Ok(Some((Expr::Func { func, args }, ty)))
        }
        None => Ok(None),
    }
}

/// The fractional digits of `timestamp(p)`, `timestamptz(p)` or `time(p)` as written,
/// with the type; PostgreSQL keeps 6 at most (more is 6, with its warning), where
/// rounding changes nothing. `None` without digits. Errors: those of [`type_from_name`].
fn time_precision(written: &str) -> Result<Option<(u8, DataType)>> {
    let Some(open) = written.find('(') else {
        return Ok(None);
    };
    let ty = type_from_name(written)?;
    if !matches!(
        ty,
        DataType::Timestamp | DataType::TimestampTz | DataType::Time
    ) {
        return Ok(None);
    }
    let digits: String = written[open + 1..]
        .chars()
        .take_while(|c| *c != ')')
        .collect();
    Ok(digits
        .trim()
        .parse::<u32>()
        .ok()
        .map(|p| (p.min(6) as u8, ty)))
}

/// The type modifier of a column declared as `written`: `numeric(p, s)` or a time type's
/// fractional digits. Errors: those of [`numeric_typmod`] and [`type_from_name`].
pub(crate) fn column_typmod(written: &str) -> Result<Option<crate::types::Typmod>> {
    use crate::types::Typmod;
    if let Some(tm) = numeric_typmod(written)? {
        return Ok(Some(Typmod::Numeric(tm)));
    }
    Ok(time_precision(written)?.map(|(p, _)| Typmod::Time(p)))
}

/// The type modifier of a column declared `numeric(p[, s])` (`decimal`, `dec`), checked as
/// PostgreSQL checks it: 22023 for a precision outside 1..1000; 0A000 for a scale above
/// 28, which tcq's numeric cannot hold. `None` for a plain `numeric` or another type.
pub(crate) fn numeric_typmod(written: &str) -> Result<Option<crate::types::NumericTypmod>> {
    let lower = written.trim().to_lowercase();
    let Some((base, args)) = lower.split_once('(') else {
        return Ok(None);
    };
    if !matches!(base.trim(), "numeric" | "decimal" | "dec") {
        return Ok(None);
    }
    let args = args.trim_end().strip_suffix(')').unwrap_or(args);
    let mut nums = args.split(',').map(|a| a.trim().parse::<u32>());
    let precision = match nums.next() {
        Some(Ok(p)) => p,
        _ => return Ok(None), // type_from_name reports the syntax
    };
    let scale = match nums.next() {
        Some(Ok(s)) => s,
        Some(Err(_)) => return Ok(None),
        None => 0,
    };
    if !(1..=1000).contains(&precision) {
        return Err(Error::InvalidParameterValue(format!(
            "NUMERIC precision {precision} must be between 1 and 1000"
        )));
    }
    if scale > 28 {
        return Err(Error::FeatureNotSupported(format!(
            "NUMERIC scale {scale} is not supported: tcq's numeric holds at most 28 digits after the point"
        )));
    }
    Ok(Some(crate::types::NumericTypmod {
        precision: precision as u16,
        scale: scale as u16,
    }))
}

/// PostgreSQL's internal short name of a type, as used for the column name of a cast.
pub(crate) fn short_type_name(t: DataType) -> &'static str {
    match t {
        DataType::Bool => "bool",
        DataType::Int2 => "int2",
        DataType::Int4 => "int4",
        DataType::Int8 => "int8",
        DataType::Float4 => "float4",
        DataType::Float8 => "float8",
        DataType::Numeric => "numeric",
        DataType::Text => "text",
        DataType::Varchar(_) => "varchar",
        DataType::Timestamp => "timestamp",
        DataType::TimestampTz => "timestamptz",
        DataType::Interval => "interval",
        DataType::Date => "date",
        DataType::Time => "time",
        DataType::Bpchar(_) => "bpchar",
    }
}

pub(crate) fn numeric_rank(t: DataType) -> u8 {
    match t {
        DataType::Int2 => 1,
        DataType::Int4 => 2,
        DataType::Int8 => 3,
        DataType::Numeric => 4,
        DataType::Float4 => 5,
        DataType::Float8 => 6,
        _ => 0,
    }
}

/// The type two numeric operands are promoted to (PostgreSQL's implicit casts).
pub(crate) fn promote_numeric(a: DataType, b: DataType) -> DataType {
    if a == b {
        return a;
    }
    if a.is_integer() && b.is_integer() {
        return if numeric_rank(a) >= numeric_rank(b) {
            a
        } else {
            b
        };
    }
    if matches!(a, DataType::Float4 | DataType::Float8)
        || matches!(b, DataType::Float4 | DataType::Float8)
    {
        return DataType::Float8;
    }
    DataType::Numeric
}

/// A common type for comparison, CASE, COALESCE and IN, or `None`.
pub(crate) fn common_type(a: DataType, b: DataType) -> Option<DataType> {
    if a == b {
        return Some(a);
    }
    if a.is_numeric() && b.is_numeric() {
        return Some(promote_numeric(a, b));
    }
    if a.is_text() && b.is_text() {
        return Some(DataType::Text);
    }
    if a.is_timestamp() && b.is_timestamp() {
        return Some(DataType::TimestampTz);
    }
    // A date meets a timestamp as its midnight (date's implicit casts).
    if a.is_datetime() && b.is_datetime() {
        return Some(if a == DataType::Date { b } else { a });
    }
    None
}

/// The type CASE, COALESCE, GREATEST, LEAST, VALUES and set operations resolve their
/// branches to (PostgreSQL's select_common_type): for numbers the one the others cast
/// to implicitly (`smallint < integer < bigint < numeric < real < double precision`, so
/// real and integer give real, where `real + integer` is double precision); otherwise as
/// [`common_type`].
pub(crate) fn select_common_type(a: DataType, b: DataType) -> Option<DataType> {
    // Lengths of one string type differ: the type without a length (`character(3) UNION
    // character(5)` is bpchar).
    match (a, b) {
        (DataType::Bpchar(_), DataType::Bpchar(_)) if a != b => {
            return Some(DataType::Bpchar(None))
        }
        (DataType::Varchar(_), DataType::Varchar(_)) if a != b => {
            return Some(DataType::Varchar(None))
        }
        // Text, varchar and character cast to one another implicitly, so the first of
        // them stays (`varchar UNION text` is varchar), its length kept only when both
        // have it.
        (DataType::Varchar(_), t) if t.is_text() && a != b => return Some(DataType::Varchar(None)),
        (DataType::Bpchar(_), t) if t.is_text() && a != b => return Some(DataType::Bpchar(None)),
        _ => {}
    }
    if a.is_numeric() && b.is_numeric() {
        return Some(if numeric_rank(a) >= numeric_rank(b) {
            a
        } else {
            b
        });
    }
    common_type(a, b)
}

/// True when PostgreSQL allows an implicit (or assignment) cast from `from` to `to`.
pub(crate) fn castable(from: DataType, to: DataType, explicit: bool) -> bool {
    if from == to || (from.is_numeric() && to.is_numeric()) || (from.is_text() && to.is_text()) {
        return true;
    }
    if from.is_datetime() && to.is_datetime() {
        return true;
    }
    // The time of day of a timestamp or an interval; a time as an interval.
    if matches!(
        (from, to),
        (
            DataType::Timestamp | DataType::TimestampTz | DataType::Interval,
            DataType::Time
        ) | (DataType::Time, DataType::Interval)
    ) {
        return true;
    }
    if explicit {
        return from.is_text()
            || to.is_text()
            || matches!(
                (from, to),
                (DataType::Bool, DataType::Int4) | (DataType::Int4, DataType::Bool)
            );
    }
    // Assignment casts: anything to text/varchar.
    to.is_text()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{NumericTypmod, Typmod};

    /// A column's modifier as declared, its name as the catalog and the stored DDL print
    /// it (which reads back to the same modifier), and its atttypmod.
    #[test]
    fn column_typmods_round_trip_through_their_names() {
        let cases = [
            (
                "numeric(5,2)",
                Typmod::Numeric(NumericTypmod {
                    precision: 5,
                    scale: 2,
                }),
                0x0005_0006,
            ),
            ("TIMESTAMP(0)", Typmod::Time(0), 0),
            ("timestamp(3) with time zone", Typmod::Time(3), 3),
            ("time(1)", Typmod::Time(1), 1),
            ("timestamp(9)", Typmod::Time(6), 6),
        ];
        for (written, want, atttypmod) in cases {
            let got = column_typmod(written).unwrap();
            assert_eq!(got, Some(want), "{written}");
            assert_eq!(want.atttypmod(), atttypmod, "{written}");
            let ty = type_from_name(written).unwrap();
            let name = want.type_name(ty);
            assert_eq!(column_typmod(&name).unwrap(), Some(want), "{name}");
            assert_eq!(type_from_name(&name).unwrap(), ty, "{name}");
        }
        assert_eq!(column_typmod("timestamp").unwrap(), None);
        assert_eq!(column_typmod("varchar(3)").unwrap(), None);
        assert_eq!(
            Typmod::Time(2).type_name(DataType::TimestampTz),
            "timestamp(2) with time zone"
        );
    }
}
