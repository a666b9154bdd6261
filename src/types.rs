//! SQL data types and values.
//!
//! [`DataType`] is the closed set of column types a stream may declare (docs/sql.md);
//! [`Value`] is one datum of any of them. A value is small and owns its text inline when the
//! text is short ([`compact_str::CompactString`] keeps up to 24 bytes without allocating), so
//! a batch of rows can be a flat `Vec<Value>` without one allocation per tuple for typical
//! keys such as airport codes.
//!
//! Times are `i64` microseconds since 1970-01-01 00:00:00 UTC, PostgreSQL's resolution.
//!
//! ```ignore
//! use tcq::types::{DataType, Value};
//! assert_eq!(DataType::Int8.name(), "bigint");
//! assert!(Value::Null.is_null());
//! ```

use compact_str::CompactString;
use rust_decimal::Decimal;

/// A column type, named as PostgreSQL names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `boolean`
    Bool,
    /// `smallint` (int2)
    Int2,
    /// `integer` (int4)
    Int4,
    /// `bigint` (int8)
    Int8,
    /// `real` (float4)
    Float4,
    /// `double precision` (float8)
    Float8,
    /// `numeric` (held as a 96-bit decimal: 28 significant digits)
    Numeric,
    /// `text`
    Text,
    /// `varchar(n)`; `None` is unbounded.
    Varchar(Option<u32>),
    /// `timestamp` (without time zone), microseconds since the epoch.
    Timestamp,
    /// `timestamptz`, microseconds since the epoch, UTC.
    TimestampTz,
    /// `interval`
    Interval,
    /// `date`: days since 1970-01-01 (see [`Value::Date`]).
    Date,
    /// `time` (without time zone): microseconds since midnight.
    Time,
    /// `character(n)` (`bpchar`): text blank-padded to n characters; `None` is `bpchar`,
    /// unbounded and unpadded. Values are [`Value::Text`] holding the padded text.
    Bpchar(Option<u32>),
}

impl DataType {
    /// The type's name as PostgreSQL prints it (`format_type`).
    pub(crate) fn name(&self) -> String {
        match self {
            DataType::Bool => "boolean".into(),
            DataType::Int2 => "smallint".into(),
            DataType::Int4 => "integer".into(),
            DataType::Int8 => "bigint".into(),
            DataType::Float4 => "real".into(),
            DataType::Float8 => "double precision".into(),
            DataType::Numeric => "numeric".into(),
            DataType::Text => "text".into(),
            DataType::Varchar(None) => "character varying".into(),
            DataType::Varchar(Some(n)) => format!("character varying({n})"),
            DataType::Timestamp => "timestamp without time zone".into(),
            DataType::TimestampTz => "timestamp with time zone".into(),
            DataType::Interval => "interval".into(),
            DataType::Date => "date".into(),
            DataType::Time => "time without time zone".into(),
            DataType::Bpchar(None) => "character".into(),
            DataType::Bpchar(Some(n)) => format!("character({n})"),
        }
    }

    /// PostgreSQL's type OID, as sent in RowDescription.
    pub(crate) fn oid(&self) -> u32 {
        match self {
            DataType::Bool => 16,
            DataType::Int2 => 21,
            DataType::Int4 => 23,
            DataType::Int8 => 20,
            DataType::Float4 => 700,
            DataType::Float8 => 701,
            DataType::Numeric => 1700,
            DataType::Text => 25,
            DataType::Varchar(_) => 1043,
            DataType::Timestamp => 1114,
            DataType::TimestampTz => 1184,
            DataType::Interval => 1186,
            DataType::Date => 1082,
            DataType::Time => 1083,
            DataType::Bpchar(_) => 1042,
        }
    }

    /// True for the integer types.
    pub(crate) fn is_integer(&self) -> bool {
        matches!(self, DataType::Int2 | DataType::Int4 | DataType::Int8)
    }

    /// True for every numeric type (integers, floats, numeric).
    pub(crate) fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self,
                DataType::Float4 | DataType::Float8 | DataType::Numeric
            )
    }

    /// True for `timestamp` and `timestamptz`.
    pub(crate) fn is_timestamp(&self) -> bool {
        matches!(self, DataType::Timestamp | DataType::TimestampTz)
    }

    /// True for `text`, `varchar` and `character(n)`.
    pub(crate) fn is_text(&self) -> bool {
        matches!(
            self,
            DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_)
        )
    }

    /// True for the types that place an instant on the calendar: `timestamp`,
    /// `timestamptz` and `date`.
    pub(crate) fn is_datetime(&self) -> bool {
        self.is_timestamp() || *self == DataType::Date
    }
}

/// A PostgreSQL interval: months, days and microseconds kept apart, as PostgreSQL keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Interval {
    /// Whole months (a year is 12); no fixed length.
    pub months: i32,
    /// Whole days; 24 hours each when an interval must have a fixed length.
    pub days: i32,
    /// Microseconds.
    pub micros: i64,
}

/// One datum. `Null` is SQL NULL of any type.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// `boolean`
    Bool(bool),
    /// `smallint`
    Int2(i16),
    /// `integer`
    Int4(i32),
    /// `bigint`
    Int8(i64),
    /// `real`
    Float4(f32),
    /// `double precision`
    Float8(f64),
    /// `numeric`
    Numeric(Decimal),
    /// `numeric` wider than [`Decimal`] holds (see [`crate::types_wide`]).
    WideNumeric(Box<crate::types_wide::WideNumeric>),
    /// `text` and `varchar`
    Text(CompactString),
    /// `timestamp`: microseconds since the epoch.
    Timestamp(i64),
    /// `timestamptz`: microseconds since the epoch, UTC.
    TimestampTz(i64),
    /// `interval`
    Interval(Interval),
    /// `date`: days since 1970-01-01; `i32::MIN` and `i32::MAX` are `-infinity` and
    /// `infinity`, as PostgreSQL's DATEVAL_NOBEGIN and DATEVAL_NOEND.
    Date(i32),
    /// `time`: microseconds since midnight, 0 to 24:00:00 inclusive.
    Time(i64),
}

impl Value {
    /// True for SQL NULL.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as an `i64` when it is an integer.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int2(v) => Some(*v as i64),
            Value::Int4(v) => Some(*v as i64),
            Value::Int8(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as an `f64` when it is numeric (integers, floats, numeric).
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int2(v) => Some(*v as f64),
            Value::Int4(v) => Some(*v as f64),
            Value::Int8(v) => Some(*v as f64),
            Value::Float4(v) => Some(*v as f64),
            Value::Float8(v) => Some(*v),
            // Correctly rounded, as PostgreSQL's numeric_float8 (strtod of the digits);
            // Decimal's own conversion can be an ulp off.
            Value::Numeric(d) => d.to_string().parse().ok(),
            Value::WideNumeric(w) => Some(w.to_f64()),
            _ => None,
        }
    }

    /// The text when the value is `text`/`varchar`.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The instant when the value is a timestamp (microseconds since the epoch).
    pub(crate) fn as_timestamp(&self) -> Option<i64> {
        match self {
            Value::Timestamp(t) | Value::TimestampTz(t) => Some(*t),
            _ => None,
        }
    }
}

/// A named, typed column of a stream or of a result.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The column's name as the user wrote it (lower-cased unless quoted).
    pub(crate) name: String,
    /// Its type; for a column of a [`CatalogType`], the type its values are held as.
    pub(crate) data_type: DataType,
    /// The PostgreSQL type clients see when it is none of [`DataType`]'s (only catalog
    /// queries produce these).
    pub(crate) catalog_type: Option<CatalogType>,
    /// The type modifier of a stream's or table's column: `numeric(precision, scale)`
    /// (values rounded to the scale, checked against the precision) or `timestamp(p)`,
    /// `timestamptz(p)`, `time(p)` (values rounded to p fractional digits).
    pub(crate) typmod: Option<Typmod>,
}

/// A column's PostgreSQL type modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Typmod {
    /// `numeric(precision, scale)`.
    Numeric(NumericTypmod),
    /// `timestamp(p)`, `timestamptz(p)`, `time(p)`: p fractional digits, 0 to 6.
    Time(u8),
}

impl Typmod {
    /// The column type's name with its modifier, as PostgreSQL prints it and as tcq's
    /// DDL reads it back: `numeric(5,2)`, `timestamp(0) without time zone`, `time(3)`.
    pub(crate) fn type_name(&self, t: DataType) -> String {
        match (self, t) {
            (Typmod::Numeric(tm), _) => tm.type_name(),
            (Typmod::Time(p), DataType::Timestamp) => format!("timestamp({p}) without time zone"),
            (Typmod::Time(p), DataType::TimestampTz) => format!("timestamp({p}) with time zone"),
            (Typmod::Time(p), _) => format!("time({p}) without time zone"),
        }
    }

    /// `pg_attribute.atttypmod`: `((p << 16) | s) + 4` for numeric, p for times.
    pub(crate) fn atttypmod(&self) -> i64 {
        match self {
            Typmod::Numeric(tm) => ((i64::from(tm.precision) << 16) | i64::from(tm.scale)) + 4,
            Typmod::Time(p) => i64::from(*p),
        }
    }
}

/// PostgreSQL's type modifier of a `numeric(precision, scale)` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NumericTypmod {
    /// Significant digits, 1 to 1000.
    pub(crate) precision: u16,
    /// Digits after the point, 0 to 28 (tcq's numeric holds at most 28).
    pub(crate) scale: u16,
}

impl NumericTypmod {
    /// `d` as the column stores it, as PostgreSQL's `apply_typmod` makes it: rounded half
    /// away from zero to the scale, shown with that many digits. Errors: 22003 "numeric
    /// field overflow" when the rounded value has more than `precision - scale` digits
    /// before the point.
    pub(crate) fn apply(&self, d: Decimal) -> crate::Result<Decimal> {
        let (p, s) = (u32::from(self.precision), u32::from(self.scale));
        let mut r =
            d.round_dp_with_strategy(s, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
        r.rescale(s);
        let int_digits = p.saturating_sub(s);
        let limit =
            (int_digits <= 28).then(|| Decimal::from_i128_with_scale(10i128.pow(int_digits), 0));
        if limit.is_some_and(|l| r.abs() >= l) {
            return Err(self.overflow());
        }
        Ok(r)
    }

    /// 22003 "numeric field overflow", with PostgreSQL's detail.
    fn overflow(&self) -> crate::Error {
        let (p, s) = (u32::from(self.precision), u32::from(self.scale));
        let int_digits = p.saturating_sub(s);
        let bound = if int_digits == 0 {
            "1".to_string()
        } else {
            format!("10^{int_digits}")
        };
        crate::Error::NumericValueOutOfRange("numeric field overflow".into()).with_detail(format!(
            "A field with precision {p}, scale {s} must round to an absolute value less than {bound}."
        ))
    }

    /// [`NumericTypmod::apply`] to a numeric wider than a [`Decimal`]: rounded to the
    /// scale, then a Decimal when it fits one, else kept wide within the precision.
    fn apply_wide(&self, w: &crate::types_wide::WideNumeric) -> crate::Result<Value> {
        use crate::types_wide::{pow10, WideNumeric};
        if w.is_nan() {
            // NaN fits every precision, as in PostgreSQL.
            return Ok(WideNumeric::nan());
        }
        let s = u32::from(self.scale);
        let m = if w.scale > s {
            let k = pow10(w.scale - s);
            let half = &k / 2u8;
            let q = num_bigint::BigInt::from(
                (w.mantissa.magnitude() + half.magnitude()) / k.magnitude(),
            );
            if w.mantissa.sign() == num_bigint::Sign::Minus {
                -q
            } else {
                q
            }
        } else {
            &w.mantissa * pow10(s - w.scale)
        };
        let digits = m.magnitude().to_string().len() as u32;
        match WideNumeric::value(m, s) {
            Value::Numeric(d) => Ok(Value::Numeric(self.apply(d)?)),
            _ if digits.saturating_sub(s) > u32::from(self.precision).saturating_sub(s) => {
                Err(self.overflow())
            }
            wide => Ok(wide),
        }
    }

    /// The type's name as PostgreSQL prints it: `numeric(5,2)`.
    pub(crate) fn type_name(&self) -> String {
        format!("numeric({},{})", self.precision, self.scale)
    }
}

/// A value as a column with type modifier `typmod` stores it (see
/// [`NumericTypmod::apply`]; times rounded to the column's digits); other values are
/// unchanged.
pub(crate) fn conform(v: &mut Value, typmod: Option<Typmod>) -> crate::Result<()> {
    match (typmod, &*v) {
        (Some(Typmod::Numeric(tm)), Value::Numeric(d)) => *v = Value::Numeric(tm.apply(*d)?),
        (Some(Typmod::Numeric(tm)), Value::WideNumeric(w)) => *v = tm.apply_wide(w)?,
        (Some(Typmod::Time(p)), Value::Timestamp(_) | Value::TimestampTz(_) | Value::Time(_)) => {
            *v = crate::expr::time_typmod(&[v.clone(), Value::Int4(i32::from(p))])?
        }
        _ => {}
    }
    Ok(())
}

impl Column {
    /// A column named `name` of type `data_type`.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Column {
        Column {
            name: name.into(),
            data_type,
            catalog_type: None,
            typmod: None,
        }
    }

    /// A column named `name` of catalog type `ty`, its values held as
    /// [`CatalogType::held_as`].
    pub(crate) fn catalog(name: impl Into<String>, ty: CatalogType) -> Column {
        Column {
            name: name.into(),
            data_type: ty.held_as(),
            catalog_type: Some(ty),
            typmod: None,
        }
    }

    /// The PostgreSQL type OID clients see in RowDescription.
    pub(crate) fn type_oid(&self) -> u32 {
        self.catalog_type
            .map_or_else(|| self.data_type.oid(), |t| t.oid())
    }
}

/// PostgreSQL types of the system catalogs that no stream or table column can have: `oid`,
/// one-dimensional arrays and the `int2vector`/`oidvector` of `pg_index` and `pg_proc`.
///
/// Design decision: values of these types are held as values of a [`DataType`]
/// ([`CatalogType::held_as`]): an oid as a `bigint` in `0..2^32`, an array as its
/// PostgreSQL text form (`{a,"b c",NULL}`), a vector as its own (`1 2`, subscripted from
/// 0). The catalog engine computes with them as it did with untyped values; the type
/// only decides what clients are told (RowDescription) and the binary encoding
/// (`array_send`: ndim, has-null flag, element type, length and lower bound, then each
/// element as a length word and its binary form).
///
/// ```ignore
/// use tcq::types::{CatalogType, DataType, ElemType};
/// assert_eq!(CatalogType::Array(ElemType::Int2).oid(), 1005);
/// assert_eq!(CatalogType::Oid.held_as(), DataType::Int8);
/// assert_eq!(CatalogType::Int2Vector.name(), "int2vector");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CatalogType {
    /// `oid` (26): an unsigned 32-bit object identifier, held as `bigint`.
    Oid,
    /// A one-dimensional array of `elem` (`text[]` is 1009), held as its text form.
    Array(ElemType),
    /// `int2vector` (22): `smallint`s printed `1 2`, subscripted from 0.
    Int2Vector,
    /// `oidvector` (30): oids printed `23 25`, subscripted from 0.
    OidVector,
    /// `regclass`, `regtype`, ...: an oid that prints as the object's name, held as that
    /// name.
    Reg(RegKind),
    /// `name` (19): an identifier, held as `text` (the elements of `current_schemas`).
    Name,
    /// `"char"` (18): one byte (`pg_class.relkind`), held as the text `charout` prints:
    /// the character, `\ooo` for a byte of the high half, empty for 0 (see
    /// [`char_byte`]).
    Char,
    /// `record` (2249): an anonymous composite value (`ROW(1, 2)`), held as its text form
    /// `(1,2)`; its binary form (`record_send`) sends each field as `text`.
    Record,
}

/// The object kinds of the `reg*` types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RegKind {
    /// `regclass` (2205): pg_class.
    Class,
    /// `regtype` (2206): pg_type.
    Type,
    /// `regproc` (24) / `regprocedure`: pg_proc.
    Proc,
    /// `regnamespace` (4089): pg_namespace.
    Namespace,
    /// `regrole` (4096): pg_authid.
    Role,
}

impl RegKind {
    /// The type's OID.
    pub(crate) fn oid(&self) -> u32 {
        match self {
            RegKind::Class => 2205,
            RegKind::Type => 2206,
            RegKind::Proc => 24,
            RegKind::Namespace => 4089,
            RegKind::Role => 4096,
        }
    }

    /// The type's name.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            RegKind::Class => "regclass",
            RegKind::Type => "regtype",
            RegKind::Proc => "regproc",
            RegKind::Namespace => "regnamespace",
            RegKind::Role => "regrole",
        }
    }
}

impl CatalogType {
    /// Its PostgreSQL type OID.
    pub(crate) fn oid(&self) -> u32 {
        match self {
            CatalogType::Oid => 26,
            CatalogType::Array(e) => e.array_oid(),
            CatalogType::Int2Vector => 22,
            CatalogType::OidVector => 30,
            CatalogType::Reg(k) => k.oid(),
            CatalogType::Name => 19,
            CatalogType::Char => 18,
            CatalogType::Record => 2249,
        }
    }

    /// The [`DataType`] its values are held as.
    pub(crate) fn held_as(&self) -> DataType {
        match self {
            CatalogType::Oid => DataType::Int8,
            _ => DataType::Text,
        }
    }

    /// Its name as `format_type` prints it (`text[]`, `oid`, `int2vector`).
    pub(crate) fn name(&self) -> String {
        match self {
            CatalogType::Oid => "oid".into(),
            CatalogType::Array(e) => format!("{}[]", e.name()),
            CatalogType::Int2Vector => "int2vector".into(),
            CatalogType::OidVector => "oidvector".into(),
            CatalogType::Reg(k) => k.name().into(),
            CatalogType::Name => "name".into(),
            CatalogType::Char => "\"char\"".into(),
            CatalogType::Record => "record".into(),
        }
    }

    /// The element type of an array or vector.
    pub(crate) fn elem(&self) -> Option<ElemType> {
        match self {
            CatalogType::Oid
            | CatalogType::Reg(_)
            | CatalogType::Name
            | CatalogType::Char
            | CatalogType::Record => None,
            CatalogType::Array(e) => Some(*e),
            CatalogType::Int2Vector => Some(ElemType::Int2),
            CatalogType::OidVector => Some(ElemType::Oid),
        }
    }

    /// `typlen`: 4 for `oid`, -1 (variable) for arrays and vectors.
    pub(crate) fn size(&self) -> i16 {
        match self {
            CatalogType::Oid | CatalogType::Reg(_) => 4,
            CatalogType::Name => 64,
            CatalogType::Char => 1,
            _ => -1,
        }
    }
}

/// The byte of a `"char"` written `text`, as PostgreSQL's `charin` reads it: `\ooo`
/// (three octal digits) is that byte, anything else its first byte (0 when empty).
pub(crate) fn char_byte(text: &str) -> u8 {
    let b = text.as_bytes();
    let octal = |c: u8| (b'0'..=b'7').contains(&c);
    if b.len() == 4 && b[0] == b'\\' && b[1..].iter().all(|&c| octal(c)) {
        let v = b[1..]
            .iter()
            .fold(0u32, |a, &c| a * 8 + u32::from(c - b'0'));
        return (v & 0xFF) as u8;
    }
    b.first().copied().unwrap_or(0)
}

/// `"char"` byte `b` as PostgreSQL's `charout` prints it: empty for 0, `\ooo` for a
/// byte of the high half (no character of UTF-8 on its own), else the character.
pub(crate) fn char_text(b: u8) -> String {
    match b {
        0 => String::new(),
        0x80.. => format!("\\{b:03o}"),
        _ => char::from(b).to_string(),
    }
}

/// The element types of [`CatalogType::Array`]: every [`DataType`] (varchar elements are
/// `character varying[]`) and the catalogs' `name`, `"char"` and `oid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ElemType {
    /// `boolean`
    Bool,
    /// `smallint`
    Int2,
    /// `integer`
    Int4,
    /// `bigint`
    Int8,
    /// `real`
    Float4,
    /// `double precision`
    Float8,
    /// `numeric`
    Numeric,
    /// `text`
    Text,
    /// `character varying`
    Varchar,
    /// `name` (held as text)
    Name,
    /// `"char"`, one byte (held as text)
    Char,
    /// `oid` (held as bigint)
    Oid,
    /// `timestamp`
    Timestamp,
    /// `timestamptz`
    TimestampTz,
    /// `interval`
    Interval,
    /// `date`
    Date,
    /// `time`
    Time,
    /// `character` (blank-padded)
    Bpchar,
}

impl ElemType {
    /// The element type of a value of `d`.
    pub(crate) fn of(d: DataType) -> ElemType {
        match d {
            DataType::Bool => ElemType::Bool,
            DataType::Int2 => ElemType::Int2,
            DataType::Int4 => ElemType::Int4,
            DataType::Int8 => ElemType::Int8,
            DataType::Float4 => ElemType::Float4,
            DataType::Float8 => ElemType::Float8,
            DataType::Numeric => ElemType::Numeric,
            DataType::Text => ElemType::Text,
            DataType::Varchar(_) => ElemType::Varchar,
            DataType::Timestamp => ElemType::Timestamp,
            DataType::TimestampTz => ElemType::TimestampTz,
            DataType::Interval => ElemType::Interval,
            DataType::Date => ElemType::Date,
            DataType::Time => ElemType::Time,
            DataType::Bpchar(_) => ElemType::Bpchar,
        }
    }

    /// The [`DataType`] an element is held as (and parsed as, for the binary encoding).
    pub(crate) fn held_as(&self) -> DataType {
        match self {
            ElemType::Bool => DataType::Bool,
            ElemType::Int2 => DataType::Int2,
            ElemType::Int4 => DataType::Int4,
            ElemType::Int8 | ElemType::Oid => DataType::Int8,
            ElemType::Float4 => DataType::Float4,
            ElemType::Float8 => DataType::Float8,
            ElemType::Numeric => DataType::Numeric,
            ElemType::Text | ElemType::Name | ElemType::Char => DataType::Text,
            ElemType::Varchar => DataType::Varchar(None),
            ElemType::Timestamp => DataType::Timestamp,
            ElemType::TimestampTz => DataType::TimestampTz,
            ElemType::Interval => DataType::Interval,
            ElemType::Date => DataType::Date,
            ElemType::Time => DataType::Time,
            ElemType::Bpchar => DataType::Bpchar(None),
        }
    }

    /// The element's type OID.
    pub(crate) fn oid(&self) -> u32 {
        match self {
            ElemType::Name => 19,
            ElemType::Char => 18,
            ElemType::Oid => 26,
            other => other.held_as().oid(),
        }
    }

    /// The OID of the array type of this element (`_text` is 1009).
    pub(crate) fn array_oid(&self) -> u32 {
        match self {
            ElemType::Bool => 1000,
            ElemType::Char => 1002,
            ElemType::Name => 1003,
            ElemType::Int2 => 1005,
            ElemType::Int4 => 1007,
            ElemType::Text => 1009,
            ElemType::Varchar => 1015,
            ElemType::Int8 => 1016,
            ElemType::Float4 => 1021,
            ElemType::Float8 => 1022,
            ElemType::Oid => 1028,
            ElemType::Timestamp => 1115,
            ElemType::TimestampTz => 1185,
            ElemType::Interval => 1187,
            ElemType::Numeric => 1231,
            ElemType::Bpchar => 1014,
            ElemType::Date => 1182,
            ElemType::Time => 1183,
        }
    }

    /// The element type's name as `format_type` prints it.
    pub(crate) fn name(&self) -> String {
        match self {
            ElemType::Name => "name".into(),
            ElemType::Char => "\"char\"".into(),
            ElemType::Oid => "oid".into(),
            other => other.held_as().name(),
        }
    }
}

fn invalid_input(ty: &str, text: &str) -> crate::Error {
    crate::Error::InvalidTextRepresentation(format!(
        "invalid input syntax for type {ty}: \"{text}\""
    ))
}

fn parse_int(text: &str, ty: DataType) -> crate::Result<i64> {
    // Fast path: plain optionally signed digits (what COPY of real data carries).
    let b = text.as_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let v = digits
            .iter()
            .fold(0i64, |acc, &c| acc * 10 + (c - b'0') as i64);
        let v = if neg { -v } else { v };
        let fits = match ty {
            DataType::Int2 => i16::try_from(v).is_ok(),
            DataType::Int4 => i32::try_from(v).is_ok(),
            _ => true,
        };
        if fits {
            return Ok(v);
        }
    }
    let name = ty.name();
    let t = text.trim();
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    // PostgreSQL 15 reads digits only (underscores between digits came with 16).
    if body.is_empty() || !body.bytes().all(|c| c.is_ascii_digit()) {
        return Err(invalid_input(&name, text));
    }
    let (min, max) = match ty {
        DataType::Int2 => (i16::MIN as i64, i16::MAX as i64),
        DataType::Int4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    };
    match t.parse::<i64>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(crate::Error::NumericValueOutOfRange(format!(
            "value \"{text}\" is out of range for type {name}"
        ))),
    }
}

fn parse_float(text: &str, ty: DataType) -> crate::Result<f64> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let v = match lower.as_str() {
        "nan" => f64::NAN,
        "infinity" | "+infinity" | "inf" | "+inf" => f64::INFINITY,
        "-infinity" | "-inf" => f64::NEG_INFINITY,
        _ => {
            let ok = !t.is_empty()
                && t.bytes()
                    .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
                && t.bytes().any(|c| c.is_ascii_digit());
            if !ok {
                return Err(invalid_input(&ty.name(), text));
            }
            // A real is read straight to the nearest f32, as PostgreSQL's strtof does:
            // rounding to f64 first and then to f32 can land on the other neighbour.
            let v: f64 = match ty {
                DataType::Float4 => t
                    .parse::<f32>()
                    .map(f64::from)
                    .map_err(|_| invalid_input(&ty.name(), text))?,
                _ => t.parse().map_err(|_| invalid_input(&ty.name(), text))?,
            };
            // Out of range both ways, as PostgreSQL's strtod check: too large, or so small
            // that it rounds to zero though its digits are not all zero (a subnormal
            // result is kept).
            let mantissa = t.split(['e', 'E']).next().unwrap_or_default();
            let underflow = v == 0.0 && mantissa.bytes().any(|c| matches!(c, b'1'..=b'9'));
            if v.is_infinite() || underflow {
                return Err(crate::Error::NumericValueOutOfRange(format!(
                    "\"{t}\" is out of range for type {}",
                    ty.name()
                )));
            }
            v
        }
    };
    Ok(v)
}

/// Parse `numeric` text: digits with an optional point and exponent (`1.5`, `-2e3`).
pub(crate) fn parse_numeric(text: &str) -> crate::Result<Decimal> {
    let t = text.trim();
    let bad = || invalid_input("numeric", text);
    let lower = t.to_ascii_lowercase();
    if matches!(lower.trim_start_matches(['+', '-']), "inf" | "infinity") {
        return Err(crate::Error::FeatureNotSupported(format!(
            "numeric value \"{t}\" is not supported (tcq's numeric holds NaN but no infinity)"
        )));
    }
    if t.is_empty() || !t.bytes().any(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    if t.contains(['e', 'E']) {
        // Written out in positional notation, so that a value with more digits than tcq
        // keeps is rounded (`1e-30`) or refused as out of range (`1e400`: 22003) exactly
        // as the same value without an exponent is.
        return match scientific_to_positional(t) {
            Some(p) => parse_numeric(&p),
            None => Err(bad()),
        };
    }
    // [+-] digits [. digits]: anything else (`1.2.3`, `1-2`) is not a number.
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !body.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        || body.bytes().filter(|&c| c == b'.').count() > 1
    {
        return Err(bad());
    }
    Decimal::from_str_exact(t).or_else(|e| match e {
        rust_decimal::Error::Underflow => std::str::FromStr::from_str(t).map_err(|_| bad()),
        rust_decimal::Error::ConversionTo(_) => Err(bad()),
        _ => Err(crate::Error::NumericValueOutOfRange(
            "value overflows numeric format".into(),
        )),
    })
}

/// `[+-]digits[.digits]e[+-]digits` (or `.digits`) written without the exponent
/// (`-1.5e3` is `-1500`, `2e-3` is `0.002`); `None` when `t` has not that form. An exponent
/// beyond any value tcq's numeric holds gives a positional number that is still beyond it
/// (`1` and 100 zeros for a large one, `0` for a tiny one), so that
/// [`parse_numeric`] refuses or rounds it.
fn scientific_to_positional(t: &str) -> Option<String> {
    let (mantissa, exp) = t.split_once(['e', 'E'])?;
    let (negative, mantissa) = match mantissa.as_bytes().first()? {
        b'-' => (true, &mantissa[1..]),
        b'+' => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if exp_digits.is_empty() || !all_digits(exp_digits) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let sign = if negative { "-" } else { "" };
    if digits.bytes().all(|b| b == b'0') {
        return Some("0".into());
    }
    // Where the point goes, counted from the start of `digits`; bounded, since anything
    // past 100 places is out of numeric's range either way.
    let shift: i64 = match exp_digits.parse::<i64>() {
        Ok(e) if exp.starts_with('-') => -e.min(1_000),
        Ok(e) => e.min(1_000),
        Err(_) if exp.starts_with('-') => -1_000,
        Err(_) => 1_000,
    };
    let point = int.len() as i64 + shift;
    Some(if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!(
            "{sign}{digits}{}",
            "0".repeat(point as usize - digits.len())
        )
    } else {
        let (a, b) = digits.split_at(point as usize);
        format!("{sign}{a}.{b}")
    })
}

/// PostgreSQL's `boolin`: `t`/`true`/`yes`/`on`/`1` and `f`/`false`/`no`/`off`/`0`, any
/// case, unique prefixes, surrounding spaces.
pub(crate) fn parse_bool(text: &str) -> crate::Result<bool> {
    let t = text.trim().to_ascii_lowercase();
    let yes = ["true", "yes", "on", "1"];
    let no = ["false", "no", "off", "0"];
    let prefix_of = |words: &[&str]| {
        !t.is_empty()
            && words
                .iter()
                .any(|w| w.starts_with(t.as_str()) && (t.len() > 1 || !matches!(t.as_str(), "o")))
    };
    if prefix_of(&yes) {
        Ok(true)
    } else if prefix_of(&no) {
        Ok(false)
    } else {
        Err(invalid_input("boolean", text))
    }
}

/// PostgreSQL's input function for `ty`: turn `text` into a value of that type.
///
/// Integers accept surrounding spaces (`' 42 '`); `'1.5'` into integer is 22P02 and a value out
/// of range 22003 with PostgreSQL's messages; booleans accept `t`, `true`, `yes`, `on`, `1`
/// and their negations; floats accept `NaN` and `Infinity`; `varchar(n)` refuses longer text
/// with 22001; timestamps and intervals follow [`crate::time`].
///
/// ```
/// use tcq::types::{parse_value, DataType, Value};
/// assert_eq!(parse_value(" 42 ", DataType::Int4).unwrap(), Value::Int4(42));
/// assert!(parse_value("1.5", DataType::Int4).is_err());
/// ```
pub fn parse_value(text: &str, ty: DataType) -> crate::Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(parse_bool(text)?),
        DataType::Int2 => Value::Int2(parse_int(text, ty)? as i16),
        DataType::Int4 => Value::Int4(parse_int(text, ty)? as i32),
        DataType::Int8 => Value::Int8(parse_int(text, ty)?),
        DataType::Float4 => Value::Float4(parse_float(text, ty)? as f32),
        DataType::Float8 => Value::Float8(parse_float(text, ty)?),
        DataType::Numeric if text.trim().eq_ignore_ascii_case("nan") => {
            crate::types_wide::WideNumeric::nan()
        }
        DataType::Numeric => Value::Numeric(parse_numeric(text)?),
        _ if ty.is_text() && text.contains('\0') => {
            return Err(crate::Error::CharacterNotInRepertoire(
                "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
            ))
        }
        DataType::Text | DataType::Varchar(None) => Value::Text(CompactString::from(text)),
        DataType::Varchar(Some(n)) => {
            if text.chars().count() > n as usize {
                // PostgreSQL truncates trailing spaces silently; anything else is an error.
                let cut: String = text.chars().take(n as usize).collect();
                if text[cut.len()..].bytes().all(|c| c == b' ') {
                    return Ok(Value::Text(CompactString::from(cut)));
                }
                return Err(crate::Error::StringDataRightTruncation(format!(
                    "value too long for type character varying({n})"
                )));
            }
            Value::Text(CompactString::from(text))
        }
        DataType::Timestamp => Value::Timestamp(crate::time::parse_timestamp_naive(text)?),
        DataType::TimestampTz => Value::TimestampTz(crate::time::parse_timestamp(text)?),
        DataType::Interval => Value::Interval(crate::time::parse_interval(text)?),
        DataType::Date => Value::Date(crate::date::parse_date(text)?),
        DataType::Time => Value::Time(crate::date::parse_time(text)?),
        DataType::Bpchar(n) => Value::Text(CompactString::from(bpchar(text, n, false)?)),
    })
}

/// `text` as `character(n)` holds it: blank-padded to n characters. Longer text is cut to
/// n characters by an explicit cast (`'abc'::char(2)` is `ab`); otherwise (input, an
/// assignment) only trailing blanks may be cut and anything else is 22001 "value too long
/// for type character(n)", as PostgreSQL's bpchar input. `None` (`bpchar`) keeps the text.
pub(crate) fn bpchar(text: &str, n: Option<u32>, explicit: bool) -> crate::Result<String> {
    let Some(n) = n.map(|n| n as usize) else {
        return Ok(text.to_string());
    };
    let len = text.chars().count();
    if len <= n {
        let mut s = String::with_capacity(text.len() + n - len);
        s.push_str(text);
        s.extend(std::iter::repeat_n(' ', n - len));
        return Ok(s);
    }
    let cut: String = text.chars().take(n).collect();
    if explicit || text[cut.len()..].bytes().all(|c| c == b' ') {
        return Ok(cut);
    }
    Err(crate::Error::StringDataRightTruncation(format!(
        "value too long for type character({n})"
    )))
}

/// Append a float in PostgreSQL's shortest round-trip output (`extra_float_digits` = 1, the
/// default since PostgreSQL 12): fixed notation for decimal exponents in `-4..threshold`,
/// else `1e+20` style with at least two exponent digits. `digits` are the shortest
/// round-trip significant digits of the absolute value (no leading or trailing zero) and
/// `exp` the decimal exponent of the first one.
fn push_float(out: &mut String, digits: &str, exp: i32, neg: bool, threshold: i32) {
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= threshold {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(itoa::Buffer::new().format(e));
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
}

/// The shortest round-trip digits of a finite nonzero float's absolute value, written by
/// `ryu` (e.g. `1.5e20`, `0.003`, `123.0`), as significant digits in `buf` and the
/// decimal exponent of the first: `(digits, exp)`. No allocation.
fn shortest_digits<'a>(ryu_text: &str, buf: &'a mut [u8; 32]) -> (&'a str, i32) {
    let (mant, e) = match ryu_text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (ryu_text, 0),
    };
    let int_len = mant.find('.').unwrap_or(mant.len()) as i32;
    let mut n = 0;
    for &b in mant.as_bytes() {
        if b.is_ascii_digit() && n < buf.len() {
            buf[n] = b;
            n += 1;
        }
    }
    let mut exp = int_len - 1 + e;
    let lead = buf[..n].iter().take_while(|&&b| b == b'0').count();
    exp -= lead as i32;
    let mut end = n;
    while end > lead + 1 && buf[end - 1] == b'0' {
        end -= 1;
    }
    let digits = std::str::from_utf8(&buf[lead..end]).unwrap_or("0");
    (digits, exp)
}

/// Append float `v` (`abs` its absolute value in its own type, whose shortest round-trip
/// digits are printed) in PostgreSQL's form: NaN and the infinities by name, zero as `0` or
/// `-0`, else [`push_float`] with `threshold` (6 for real, 15 for double precision).
fn push_shortest<F: ryu::Float>(out: &mut String, abs: F, v: f64, threshold: i32) {
    if push_special_float(out, v) {
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let mut text = ryu::Buffer::new();
    let mut buf = [0u8; 32];
    let (digits, exp) = shortest_digits(text.format_finite(abs), &mut buf);
    push_float(out, digits, exp, v < 0.0, threshold);
}

fn push_special_float(out: &mut String, v: f64) -> bool {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v == f64::INFINITY {
        out.push_str("Infinity");
    } else if v == f64::NEG_INFINITY {
        out.push_str("-Infinity");
    } else {
        return false;
    }
    true
}

/// PostgreSQL's output function: append the text form of `v` to `out` (nothing for NULL).
///
/// Booleans are `t`/`f`; floats use PostgreSQL 12+'s shortest round-trip form (`1.5`,
/// `1e+20`, `Infinity`, `NaN`); numerics print their digits and scale; timestamps, timestamptz
/// and intervals follow [`crate::time`].
///
/// ```
/// use tcq::types::{format_value, Value};
/// let mut s = String::new();
/// format_value(&Value::Float8(1e20), &mut s);
/// assert_eq!(s, "1e+20");
/// ```
pub fn format_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Int2(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Int4(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Int8(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Float4(f) => push_shortest(out, f.abs(), *f as f64, 6),
        Value::Float8(f) => push_shortest(out, f.abs(), *f, 15),
        Value::Numeric(d) => push_numeric(d, out),
        Value::WideNumeric(w) => w.push_text(out),
        Value::Text(s) => out.push_str(s),
        Value::Timestamp(t) => crate::time::push_timestamp(*t, out),
        Value::TimestampTz(t) => crate::time::push_timestamptz(*t, out),
        Value::Interval(i) => out.push_str(&crate::time::format_interval(i)),
        Value::Date(d) => crate::date::push_date(*d, out),
        Value::Time(t) => crate::date::push_time(*t, out),
    }
}

impl Value {
    /// The value's type; `None` for NULL (and `text` for any string: a value does not know
    /// its varchar bound).
    pub(crate) fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int2(_) => DataType::Int2,
            Value::Int4(_) => DataType::Int4,
            Value::Int8(_) => DataType::Int8,
            Value::Float4(_) => DataType::Float4,
            Value::Float8(_) => DataType::Float8,
            Value::Numeric(_) | Value::WideNumeric(_) => DataType::Numeric,
            Value::Text(_) => DataType::Text,
            Value::Timestamp(_) => DataType::Timestamp,
            Value::TimestampTz(_) => DataType::TimestampTz,
            Value::Interval(_) => DataType::Interval,
            Value::Date(_) => DataType::Date,
            Value::Time(_) => DataType::Time,
        })
    }

    /// The value's PostgreSQL text form; `None` for NULL.
    pub(crate) fn to_text(&self) -> Option<String> {
        if self.is_null() {
            return None;
        }
        let mut s = String::new();
        format_value(self, &mut s);
        Some(s)
    }
}

#[cfg(test)]
mod io_tests {
    use super::*;
    use crate::Error;

    fn out(v: Value) -> String {
        let mut s = String::new();
        format_value(&v, &mut s);
        s
    }

    #[test]
    fn integers_parse_like_postgres() {
        assert_eq!(
            parse_value(" 42 ", DataType::Int4).unwrap(),
            Value::Int4(42)
        );
        assert_eq!(parse_value("-7", DataType::Int2).unwrap(), Value::Int2(-7));
        assert_eq!(
            parse_value("+9223372036854775807", DataType::Int8).unwrap(),
            Value::Int8(i64::MAX)
        );
        assert_eq!(
            parse_value("1.5", DataType::Int4),
            Err(Error::InvalidTextRepresentation(
                "invalid input syntax for type integer: \"1.5\"".into()
            ))
        );
        assert_eq!(
            parse_value("99999999999", DataType::Int4),
            Err(Error::NumericValueOutOfRange(
                "value \"99999999999\" is out of range for type integer".into()
            ))
        );
        assert_eq!(
            parse_value("40000", DataType::Int2),
            Err(Error::NumericValueOutOfRange(
                "value \"40000\" is out of range for type smallint".into()
            ))
        );
        assert!(matches!(
            parse_value("", DataType::Int8),
            Err(Error::InvalidTextRepresentation(_))
        ));
        assert!(matches!(
            parse_value("abc", DataType::Int4),
            Err(Error::InvalidTextRepresentation(_))
        ));
    }

    #[test]
    fn other_types_parse_like_postgres() {
        for t in ["t", "true", "YES", "on", "1", " y "] {
            assert_eq!(
                parse_value(t, DataType::Bool).unwrap(),
                Value::Bool(true),
                "{t}"
            );
        }
        for t in ["f", "false", "no", "off", "0"] {
            assert_eq!(
                parse_value(t, DataType::Bool).unwrap(),
                Value::Bool(false),
                "{t}"
            );
        }
        assert!(matches!(
            parse_value("o", DataType::Bool),
            Err(Error::InvalidTextRepresentation(_))
        ));
        assert_eq!(
            parse_value("1.5", DataType::Float8).unwrap(),
            Value::Float8(1.5)
        );
        assert!(
            matches!(parse_value("NaN", DataType::Float8).unwrap(), Value::Float8(f) if f.is_nan())
        );
        assert_eq!(
            parse_value("-Infinity", DataType::Float4).unwrap(),
            Value::Float4(f32::NEG_INFINITY)
        );
        assert!(matches!(
            parse_value("1e400", DataType::Float8),
            Err(Error::NumericValueOutOfRange(_))
        ));
        assert_eq!(
            parse_value("12.50", DataType::Numeric).unwrap(),
            Value::Numeric(Decimal::new(1250, 2))
        );
        assert_eq!(
            parse_value("abc", DataType::Varchar(Some(3))).unwrap(),
            Value::Text("abc".into())
        );
        assert_eq!(
            parse_value("abcd", DataType::Varchar(Some(3))),
            Err(Error::StringDataRightTruncation(
                "value too long for type character varying(3)".into()
            ))
        );
        assert_eq!(
            parse_value("2001-01-01 00:00", DataType::Timestamp).unwrap(),
            Value::Timestamp(978_307_200_000_000)
        );
        assert_eq!(
            parse_value("10 seconds", DataType::Interval).unwrap(),
            Value::Interval(Interval {
                months: 0,
                days: 0,
                micros: 10_000_000
            })
        );
    }

    /// character(n) as PostgreSQL 15 stores it: padded, cut by an explicit cast only.
    #[test]
    fn bpchar_pads_and_cuts_like_postgres() {
        assert_eq!(bpchar("a", Some(3), false).unwrap(), "a  ");
        assert_eq!(bpchar("abc  ", Some(3), false).unwrap(), "abc");
        assert_eq!(bpchar("abcd", Some(2), true).unwrap(), "ab");
        assert_eq!(bpchar("ab ", None, false).unwrap(), "ab ");
        assert!(matches!(
            bpchar("abcd", Some(3), false),
            Err(Error::StringDataRightTruncation(_))
        ));
        assert_eq!(
            parse_value("é", DataType::Bpchar(Some(2))).unwrap(),
            Value::Text("é ".into())
        );
        assert_eq!(DataType::Bpchar(Some(2)).name(), "character(2)");
        assert_eq!(DataType::Date.oid(), 1082);
        assert_eq!(out(Value::Date(-1)), "1969-12-31");
        assert_eq!(out(Value::Time(3_723_000_001)), "01:02:03.000001");
    }

    #[test]
    fn values_format_like_postgres() {
        assert_eq!(out(Value::Bool(true)), "t");
        assert_eq!(out(Value::Float8(1.5)), "1.5");
        assert_eq!(out(Value::Float8(1e20)), "1e+20");
        assert_eq!(out(Value::Float8(1e15)), "1e+15");
        assert_eq!(out(Value::Float8(123456789012345.0)), "123456789012345");
        assert_eq!(out(Value::Float8(0.0001)), "0.0001");
        assert_eq!(out(Value::Float8(0.00001)), "1e-05");
        assert_eq!(out(Value::Float8(-2.5e-10)), "-2.5e-10");
        assert_eq!(out(Value::Float8(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(out(Value::Float8(100.0)), "100");
        assert_eq!(out(Value::Float8(f64::INFINITY)), "Infinity");
        assert_eq!(out(Value::Float8(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(out(Value::Float8(f64::NAN)), "NaN");
        assert_eq!(out(Value::Float4(1e6)), "1e+06");
        assert_eq!(out(Value::Float4(123456.0)), "123456");
        assert_eq!(out(Value::Float4(0.1)), "0.1");
        assert_eq!(out(Value::Numeric(Decimal::new(1250, 2))), "12.50");
        assert_eq!(out(Value::Timestamp(0)), "1970-01-01 00:00:00");
        assert_eq!(out(Value::TimestampTz(0)), "1970-01-01 00:00:00+00");
        assert_eq!(out(Value::Null), "");
        assert_eq!(Value::Int4(1).data_type(), Some(DataType::Int4));
    }
}

/// The decimal digits of `m`, left-padded with zeros to `min_digits` (at most 64), written
/// at the end of `buf`.
fn digits_of(mut m: u128, min_digits: usize, buf: &mut [u8; 64]) -> &str {
    let min_digits = min_digits.min(buf.len());
    let mut i = buf.len();
    // 128-bit division is slow; most values fit 64 bits.
    while m > u64::MAX as u128 {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
    }
    let mut m = m as u64;
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    while buf.len() - i < min_digits {
        i -= 1;
        buf[i] = b'0';
    }
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

/// Append the unsigned integer `digits` with a decimal point `scale` digits from its right,
/// zero-padded to one digit before the point (`5`, scale 2: `0.05`).
pub(crate) fn push_scaled_digits(digits: &str, scale: usize, out: &mut String) {
    if digits.len() > scale {
        let point = digits.len() - scale;
        out.push_str(&digits[..point]);
        if scale > 0 {
            out.push('.');
            out.push_str(&digits[point..]);
        }
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', scale - digits.len()));
        out.push_str(digits);
    }
}

/// Append a numeric as PostgreSQL prints it: every digit of its scale, no exponent.
pub(crate) fn push_numeric(d: &Decimal, out: &mut String) {
    let (m, scale) = (d.mantissa(), d.scale() as usize);
    if m < 0 {
        out.push('-');
    }
    if let Ok(m) = u64::try_from(m.unsigned_abs()) {
        // Most values (an average at 16 digits of scale) fit 64 bits: itoa's digits,
        // zero-padded to one digit before the point.
        push_scaled_digits(itoa::Buffer::new().format(m), scale, out);
        return;
    }
    let mut buf = [0u8; 64];
    let digits = digits_of(m.unsigned_abs(), scale + 1, &mut buf);
    let point = digits.len() - scale;
    out.push_str(&digits[..point]);
    if scale > 0 {
        out.push('.');
        out.push_str(&digits[point..]);
    }
}

#[cfg(test)]
mod fast_format_tests {
    use super::*;

    #[test]
    fn fast_paths_print_as_the_general_formatters() {
        for d in [
            "0",
            "-0.5",
            "1.5000000000000000",
            "0.00000000000000000000",
            "-123.45",
            "18000000000000000000",
            "0.001",
            "-0.0000001234",
            "18446744073709551615",
            "1844674407370955.1616",
            "123456789012345678901234.5",
            "-0.0000000000000000000000000001",
            "5.2500000000000000",
        ] {
            let v: Decimal = d.parse().unwrap();
            let mut s = String::new();
            format_value(&Value::Numeric(v), &mut s);
            assert_eq!(s, v.to_string());
        }
        for i in [0i64, -1, 42, i64::MIN, i64::MAX] {
            let mut s = String::new();
            format_value(&Value::Int8(i), &mut s);
            assert_eq!(s, i.to_string());
        }
        let mut s = String::new();
        format_value(&Value::Timestamp(978_307_500_000_000), &mut s);
        assert_eq!(s, "2001-01-01 00:05:00");
        s.clear();
        format_value(&Value::TimestampTz(-1), &mut s);
        assert_eq!(s, "1969-12-31 23:59:59.999999+00");
    }

    /// The float output as it was written before `ryu`: from Rust's shortest `{:e}` text.
    fn float_oracle(sci: String, neg: bool, threshold: i32, out: &mut String) {
        let (mant, exp) = sci.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        let digits: String = mant.chars().filter(|c| *c != '.').collect();
        push_float(out, &digits, exp, neg, threshold);
    }

    /// `got` (this module's output) against the `{:e}` oracle's `want`: the same text, or,
    /// where the shortest digits tie (an exact midpoint, which Ryu, as PostgreSQL's
    /// float output, rounds to even and Rust's formatter rounds up), text of the same
    /// shape differing in the last digit by one; either way `got` reads back as `bits`.
    fn same_or_tie(got: &str, want: &str, back: Option<u64>, bits: u64) {
        assert_eq!(back, Some(bits), "{got} does not read back");
        if got == want {
            return;
        }
        let (g, w) = (got.as_bytes(), want.as_bytes());
        let last = got.find('e').unwrap_or(got.len()) - 1;
        assert_eq!(g.len(), w.len(), "{got} vs {want}");
        assert_eq!(&g[..last], &w[..last], "{got} vs {want}");
        assert_eq!(&g[last + 1..], &w[last + 1..], "{got} vs {want}");
        assert_eq!(
            (w[last] as i32 - g[last] as i32).abs(),
            1,
            "{got} vs {want}"
        );
    }

    fn check_f64(f: f64) {
        let mut got = String::new();
        format_value(&Value::Float8(f), &mut got);
        let mut want = String::new();
        if !push_special_float(&mut want, f) {
            if f == 0.0 {
                want.push_str(if f.is_sign_negative() { "-0" } else { "0" });
            } else {
                float_oracle(format!("{:e}", f.abs()), f < 0.0, 15, &mut want);
            }
        }
        if f.is_nan() {
            assert_eq!(got, "NaN");
            return;
        }
        same_or_tie(
            &got,
            &want,
            got.parse::<f64>().ok().map(f64::to_bits),
            f.to_bits(),
        );
    }

    fn check_f32(f: f32) {
        let mut got = String::new();
        format_value(&Value::Float4(f), &mut got);
        let mut want = String::new();
        if !push_special_float(&mut want, f as f64) {
            if f == 0.0 {
                want.push_str(if f.is_sign_negative() { "-0" } else { "0" });
            } else {
                float_oracle(format!("{:e}", f.abs()), f < 0.0, 6, &mut want);
            }
        }
        if f.is_nan() {
            assert_eq!(got, "NaN");
            return;
        }
        let back = got.parse::<f32>().ok().map(|x| x.to_bits() as u64);
        same_or_tie(&got, &want, back, f.to_bits() as u64);
    }

    #[test]
    fn floats_print_their_shortest_digits_in_postgresql_notation() {
        for f in [
            1.5,
            1e20,
            1e15,
            1e14,
            123456789012345.0,
            0.0001,
            0.00001,
            0.1,
            0.3,
            100.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            -2.5e-7,
            1.0 / 3.0,
        ] {
            check_f64(f);
            check_f64(-f);
        }
        let mut s = String::new();
        format_value(&Value::Float8(1e20), &mut s);
        assert_eq!(s, "1e+20");
        s.clear();
        format_value(&Value::Float8(0.0001), &mut s);
        assert_eq!(s, "0.0001");
        s.clear();
        format_value(&Value::Float4(1e6), &mut s);
        assert_eq!(s, "1e+06");
        s.clear();
        format_value(&Value::Float4(123456.0), &mut s);
        assert_eq!(s, "123456");
        // An exact midpoint between two shortest candidates rounds to even, as
        // PostgreSQL's float4out (Ryu) prints it.
        s.clear();
        // 355803.125, exactly halfway between 355803.12 and 355803.13.
        format_value(&Value::Float4(f32::from_bits(0x48ad_bb64)), &mut s);
        assert_eq!(s, "355803.12");
    }

    /// A real is read to the nearest f32 in one rounding, as PostgreSQL's strtof reads it:
    /// 1.0000000596046448 lies just above the midpoint 1 + 2^-24 between 1 and the next
    /// f32, though its nearest f64 rounds down to 1 as an f32.
    #[test]
    fn numeric_input_that_is_not_a_number_is_22p02() {
        for text in ["1.2.3", "1-2", "--1", "+-1", "1+"] {
            assert!(
                matches!(
                    parse_numeric(text),
                    Err(crate::Error::InvalidTextRepresentation(_))
                ),
                "{text}: {:?}",
                parse_numeric(text)
            );
        }
        assert_eq!(parse_numeric("-1.50").unwrap().to_string(), "-1.50");
        assert_eq!(parse_numeric("+.5").unwrap().to_string(), "0.5");
    }

    #[test]
    fn float_input_out_of_range_both_ways() {
        for (text, ty) in [
            ("1e-400", DataType::Float8),
            ("1e309", DataType::Float8),
            ("1e-46", DataType::Float4),
            ("1e40", DataType::Float4),
        ] {
            assert!(
                matches!(
                    parse_value(text, ty),
                    Err(crate::Error::NumericValueOutOfRange(_))
                ),
                "{text}"
            );
        }
        // Zero and subnormal results that strtod gives without a range error.
        assert_eq!(
            parse_value("0e-400", DataType::Float8).unwrap(),
            Value::Float8(0.0)
        );
        assert_eq!(
            parse_value("5e-324", DataType::Float8).unwrap(),
            Value::Float8(5e-324)
        );
    }

    #[test]
    fn real_input_rounds_once() {
        let text = "1.0000000596046448";
        let next = f32::from_bits(1f32.to_bits() + 1);
        assert_eq!(
            parse_value(text, DataType::Float4).unwrap(),
            Value::Float4(next)
        );
        assert_eq!(
            (text.parse::<f64>().unwrap() as f32),
            1.0,
            "the double rounding"
        );
        assert!(matches!(
            parse_value("1e39", DataType::Float4),
            Err(crate::Error::NumericValueOutOfRange(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn random_float_bits_print_as_before(bits in proptest::prelude::any::<u64>(), small in proptest::prelude::any::<u32>()) {
            check_f64(f64::from_bits(bits));
            check_f32(f32::from_bits(small));
            // Values near the notation thresholds, where most data lives.
            check_f64((bits % 1_000_000_007) as f64 / 1000.0);
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::types::{DataType, Value};
        assert_eq!(DataType::Int8.name(), "bigint");
        assert!(Value::Null.is_null());
    }

    #[test]
    fn catalog_type_example() {
        use crate::types::{CatalogType, DataType, ElemType};
        assert_eq!(CatalogType::Array(ElemType::Int2).oid(), 1005);
        assert_eq!(CatalogType::Oid.held_as(), DataType::Int8);
        assert_eq!(CatalogType::Int2Vector.name(), "int2vector");
    }
}
