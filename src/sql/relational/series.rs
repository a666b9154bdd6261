//! Which of `generate_series`' overloads a call resolves to, as PostgreSQL 15 chooses
//! among `(integer, integer [, integer])`, `(bigint, bigint [, bigint])`, `(numeric,
//! numeric [, numeric])`, `(timestamp, timestamp, interval)` and `(timestamptz,
//! timestamptz, interval)`: unknown literals take the type the others fix, a date meets the
//! timestamptz overload (its preferred datetime type), integers widen to the widest one.

use crate::error::{Error, Result};
use crate::sql::types::RType;
use crate::types::DataType;

/// The overload a call resolves to: the type of its start and stop (and of its values),
/// and of its step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Series {
    /// `integer`, `bigint`, `numeric`, `timestamp` or `timestamptz`.
    pub(super) values: DataType,
    /// The step's type: the values' type, or `interval` for timestamps.
    pub(super) step: DataType,
}

/// The overload of `generate_series(args)`, given its arguments' static types.
/// Errors: 42883 when no overload takes the arguments (`generate_series(integer, double
/// precision)`, a timestamp series without a step), 42725 when several fit equally
/// (all unknown literals, or two smallints).
pub(super) fn series_signature(args: &[RType]) -> Result<Series> {
    let known = known_of(args);
    let none = || {
        let names: Vec<String> = args.iter().map(RType::name).collect();
        Error::UndefinedFunction(format!(
            "function generate_series({}) does not exist",
            names.join(", ")
        ))
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        )
    };
    let not_unique = || {
        let names: Vec<String> = args.iter().map(RType::name).collect();
        Error::AmbiguousFunction(format!(
            "function generate_series({}) is not unique",
            names.join(", ")
        ))
        .with_hint(
            "Could not choose a best candidate function. You might need to add explicit type casts.",
        )
    };
    if !(2..=3).contains(&args.len())
        || args
            .iter()
            .any(|t| !matches!(t, RType::Base(_) | RType::Unknown))
    {
        return Err(none());
    }
    let bounds = &known_of(&args[..2]);
    if bounds.iter().any(|d| d.is_datetime()) {
        let step_ok = args
            .get(2)
            .is_some_and(|t| matches!(t, RType::Unknown | RType::Base(DataType::Interval)));
        if !step_ok
            || !bounds
                .iter()
                .all(|d| d.is_timestamp() || *d == DataType::Date)
        {
            return Err(none());
        }
        let values = if bounds.iter().all(|d| *d == DataType::Timestamp) {
            DataType::Timestamp
        } else {
            DataType::TimestampTz
        };
        return Ok(Series {
            values,
            step: DataType::Interval,
        });
    }
    if known.iter().any(|d| {
        !matches!(
            d,
            DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Numeric
        )
    }) {
        return Err(none());
    }
    let values = if known.contains(&DataType::Numeric) {
        DataType::Numeric
    } else if known.contains(&DataType::Int8) {
        DataType::Int8
    } else if known.contains(&DataType::Int4) {
        DataType::Int4
    } else {
        return Err(not_unique());
    };
    Ok(Series {
        values,
        step: values,
    })
}

/// The types of those of `args` that are not unknown.
fn known_of(args: &[RType]) -> Vec<DataType> {
    args.iter()
        .filter(|t| **t != RType::Unknown)
        .map(RType::data_type)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(args: &[RType]) -> Result<Series> {
        series_signature(args)
    }

    const U: RType = RType::Unknown;
    const fn b(d: DataType) -> RType {
        RType::Base(d)
    }

    #[test]
    fn overloads_resolve_as_postgresql_15_does() {
        let int4 = b(DataType::Int4);
        assert_eq!(of(&[int4, int4]).unwrap().values, DataType::Int4);
        assert_eq!(of(&[int4, U]).unwrap().values, DataType::Int4);
        assert_eq!(
            of(&[int4, U, b(DataType::Int8)]).unwrap().values,
            DataType::Int8
        );
        assert_eq!(
            of(&[int4, b(DataType::Numeric)]).unwrap().values,
            DataType::Numeric
        );
        let ts = of(&[b(DataType::Timestamp), U, U]).unwrap();
        assert_eq!(
            (ts.values, ts.step),
            (DataType::Timestamp, DataType::Interval)
        );
        let dates = [b(DataType::Date), b(DataType::Date), U];
        assert_eq!(of(&dates).unwrap().values, DataType::TimestampTz);
    }

    #[test]
    fn unmatched_and_ambiguous_calls_carry_postgresql_sqlstates() {
        let code = |args: &[RType]| crate::server::sqlstate(&of(args).unwrap_err()).to_string();
        assert_eq!(code(&[U, U]), "42725");
        assert_eq!(code(&[b(DataType::Int2), b(DataType::Int2)]), "42725");
        assert_eq!(code(&[b(DataType::Int4), b(DataType::Float8)]), "42883");
        assert_eq!(code(&[b(DataType::Timestamp), U]), "42883");
        assert_eq!(code(&[b(DataType::Text), U]), "42883");
        let e = of(&[b(DataType::Int4), b(DataType::Float8)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "function generate_series(integer, double precision) does not exist"
        );
    }
}
