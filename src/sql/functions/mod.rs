//! The function table: every function a statement may call, declared once.
//!
//! Each function is one row: its name (and aliases), its kind — a scalar function of the
//! expression evaluator ([`scalar`]), an aggregate with its overloads and result types
//! ([`aggregate`]), a function of the relational evaluator ([`catalog`]), a function run
//! for its effect ([`session_function`]) — and its `pg_proc` oid. Both plan builders look
//! names up here, `pg_proc` lists the rows ([`pg_proc_rows`]), and the executors dispatch
//! on the enums the rows carry ([`crate::sql::ScalarFunc`], [`AggKernel`],
//! [`crate::sql::SessionFunc`]), so grepping a function's name finds its row.
//!
//! ```ignore
//! use tcq::sql::functions::aggregate;
//! use tcq::types::DataType;
//! let sum = aggregate("sum").unwrap();
//! assert_eq!(sum.result(Some(DataType::Int8)), Some(DataType::Numeric));
//! assert_eq!(sum.result(Some(DataType::Int4)), Some(DataType::Int8));
//! assert_eq!(sum.result(Some(DataType::Text)), None);
//! ```

mod aggregate;
mod catalog;
mod scalar;

pub(crate) use aggregate::{aggregate, AggDef, AggKernel, Arg, Ret, AGGREGATES};
pub(crate) use catalog::{catalog_function, Returns};
pub(crate) use scalar::{named_args, parameter_slots, scalar, ArgSlot, SCALARS};

use crate::sql::SessionFunc;
use crate::types::DataType;

/// Functions the engine runs for their effect, called as `SELECT f(args)` without FROM.
pub(crate) static SESSION_FUNCTIONS: &[(&str, SessionFunc)] = &[
    ("pg_advisory_lock", SessionFunc::AdvisoryLock),
    ("pg_advisory_lock_shared", SessionFunc::AdvisoryLockShared),
    ("pg_try_advisory_lock", SessionFunc::TryAdvisoryLock),
    (
        "pg_try_advisory_lock_shared",
        SessionFunc::TryAdvisoryLockShared,
    ),
    ("pg_advisory_xact_lock", SessionFunc::AdvisoryXactLock),
    (
        "pg_advisory_xact_lock_shared",
        SessionFunc::AdvisoryXactLockShared,
    ),
    (
        "pg_try_advisory_xact_lock",
        SessionFunc::TryAdvisoryXactLock,
    ),
    (
        "pg_try_advisory_xact_lock_shared",
        SessionFunc::TryAdvisoryXactLockShared,
    ),
    ("pg_advisory_unlock", SessionFunc::AdvisoryUnlock),
    (
        "pg_advisory_unlock_shared",
        SessionFunc::AdvisoryUnlockShared,
    ),
    ("pg_advisory_unlock_all", SessionFunc::AdvisoryUnlockAll),
    ("pg_notify", SessionFunc::Notify),
    ("tcq_flink_attach", SessionFunc::FlinkAttach),
    ("pg_cancel_backend", SessionFunc::CancelBackend),
    ("pg_terminate_backend", SessionFunc::TerminateBackend),
];

/// The session function `name` (lower-cased) calls, if any.
pub(crate) fn session_function(name: &str) -> Option<SessionFunc> {
    SESSION_FUNCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
}

/// One `pg_proc` row of a built-in function: oid, name, kind (`'a'` aggregate, `'f'`
/// function), argument type oids, result type oid, description.
pub(crate) type ProcRow = (u32, &'static str, char, Vec<u32>, u32, &'static str);

/// The `pg_proc` rows of the aggregates' overloads (an `any` argument is `"any"`, 2276;
/// an array result `anyarray`, 2277).
pub(crate) fn pg_proc_rows() -> Vec<ProcRow> {
    let mut out = Vec::new();
    for a in AGGREGATES {
        for &(arg, ret, oid) in a.overloads {
            let args = match arg {
                Arg::Star => vec![],
                Arg::Is(t) => vec![t.oid()],
                Arg::Any if a.kernel == AggKernel::ArrayAgg => vec![2776],
                Arg::Any => vec![2276],
            };
            let float8 = DataType::Float8.oid();
            let args = match a.kernel {
                AggKernel::StringAgg => vec![DataType::Text.oid(), DataType::Text.oid()],
                AggKernel::Regr(_) => vec![float8, float8],
                AggKernel::OrderedSet(f) => {
                    // anyelement for a WITHIN GROUP key of any type.
                    let key = args.first().copied().filter(|_| arg != Arg::Any);
                    let key = key.unwrap_or(2283);
                    if f.direct_args() == 0 {
                        vec![key]
                    } else {
                        vec![float8, key]
                    }
                }
                _ => args,
            };
            let result = match ret {
                Ret::Is(t) => t.oid(),
                Ret::SameAsArg => args.last().copied().unwrap_or(0),
                Ret::ArrayOfArg => 2277,
            };
            out.push((oid, a.name, 'a', args, result, a.description));
        }
    }
    out
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::sql::functions::aggregate;
        use crate::types::DataType;
        let sum = aggregate("sum").unwrap();
        assert_eq!(sum.result(Some(DataType::Int8)), Some(DataType::Numeric));
        assert_eq!(sum.result(Some(DataType::Int4)), Some(DataType::Int8));
        assert_eq!(sum.result(Some(DataType::Text)), None);
    }
}
