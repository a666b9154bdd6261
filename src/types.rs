//! SQL data types and values.
//!
//! [`DataType`] is the closed set of column types a stream may declare (DESIGN.md section 1);
//! [`Value`] is one datum of any of them. A value is small and owns its text inline when the
//! text is short ([`compact_str::CompactString`] keeps up to 24 bytes without allocating), so
//! a batch of rows can be a flat `Vec<Value>` without one allocation per tuple for typical
//! keys such as airport codes.
//!
//! Times are `i64` microseconds since 1970-01-01 00:00:00 UTC, PostgreSQL's resolution.
//!
//! ```
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
}

impl DataType {
    /// The type's name as PostgreSQL prints it (`format_type`).
    pub fn name(&self) -> String {
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
        }
    }

    /// PostgreSQL's type OID, as sent in RowDescription.
    pub fn oid(&self) -> u32 {
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
        }
    }

    /// True for the integer types.
    pub fn is_integer(&self) -> bool {
        matches!(self, DataType::Int2 | DataType::Int4 | DataType::Int8)
    }

    /// True for every numeric type (integers, floats, numeric).
    pub fn is_numeric(&self) -> bool {
        self.is_integer() || matches!(self, DataType::Float4 | DataType::Float8 | DataType::Numeric)
    }

    /// True for `timestamp` and `timestamptz`.
    pub fn is_timestamp(&self) -> bool {
        matches!(self, DataType::Timestamp | DataType::TimestampTz)
    }

    /// True for `text` and `varchar`.
    pub fn is_text(&self) -> bool {
        matches!(self, DataType::Text | DataType::Varchar(_))
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
    /// `text` and `varchar`
    Text(CompactString),
    /// `timestamp`: microseconds since the epoch.
    Timestamp(i64),
    /// `timestamptz`: microseconds since the epoch, UTC.
    TimestampTz(i64),
    /// `interval`
    Interval(Interval),
}

impl Value {
    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
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
    pub fn as_f64(&self) -> Option<f64> {
        use rust_decimal::prelude::ToPrimitive;
        match self {
            Value::Int2(v) => Some(*v as f64),
            Value::Int4(v) => Some(*v as f64),
            Value::Int8(v) => Some(*v as f64),
            Value::Float4(v) => Some(*v as f64),
            Value::Float8(v) => Some(*v),
            Value::Numeric(d) => d.to_f64(),
            _ => None,
        }
    }

    /// The text when the value is `text`/`varchar`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The instant when the value is a timestamp (microseconds since the epoch).
    pub fn as_timestamp(&self) -> Option<i64> {
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
    pub name: String,
    /// Its type.
    pub data_type: DataType,
}

impl Column {
    /// A column named `name` of type `data_type`.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Column {
        Column { name: name.into(), data_type }
    }
}
