//! Aggregate functions: one row per name, one overload per argument type, each with the
//! result type and the `pg_proc` oid PostgreSQL 15 gives it (`sum(bigint) -> numeric`,
//! 2107). The binders type a call from these rows; `pg_proc` lists them; the executors
//! dispatch on the row's [`AggKernel`].
//!
//! A new aggregate is a row here plus its kernel: a partial state in [`crate::agg`] (then
//! continuous queries may share it along the window coverage graph) or an ordered one in
//! the relational evaluator (then continuous queries refuse it with 0A000). The
//! two-argument statistics ([`AggKernel::Regr`]) take double precision pairs; the
//! ordered-set aggregates ([`AggKernel::OrderedSet`]) are typed by their WITHIN GROUP key.

use crate::sql::AggFunc;
use crate::types::DataType;

/// How an aggregate is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum AggKernel {
    /// A partial state of [`crate::agg::Acc`]: update, merge, evaluate. Every executor
    /// computes these, windows share them.
    Partial(AggFunc),
    /// `string_agg(text, delimiter)`: the values in the call's order (ORDER BY inside the
    /// call); finite queries only.
    StringAgg,
    /// `array_agg(x)`: the values as an array, in the call's order; finite queries only.
    ArrayAgg,
    /// `corr(Y, X)` and the other statistics of double precision pairs
    /// ([`crate::agg::regr`]); finite queries only.
    Regr(crate::agg::regr::RegrFunc),
    /// `percentile_cont`, `percentile_disc`, `mode`: ordered-set aggregates, the sort key
    /// given by `WITHIN GROUP (ORDER BY x)` ([`crate::agg::ordered`]); finite queries only.
    OrderedSet(crate::agg::ordered::OrderedSetFunc),
}

/// An argument type of an overload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// No argument: `count(*)`.
    Star,
    /// Exactly this type (`varchar` also matches `text`, as PostgreSQL's binary-coercible
    /// varchar does).
    Is(DataType),
    /// Any type: `count(x)`, `array_agg(x)`.
    Any,
}

/// The result type of an overload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ret {
    /// This type.
    Is(DataType),
    /// The argument's type (`min`, `max`); varchar gives text.
    SameAsArg,
    /// An array of the argument's type.
    ArrayOfArg,
}

/// One aggregate function.
#[derive(Debug)]
pub(crate) struct AggDef {
    /// The name calls use.
    pub(crate) name: &'static str,
    /// How it is computed.
    pub(crate) kernel: AggKernel,
    /// Its overloads: argument, result, pg_proc oid.
    pub(crate) overloads: &'static [(Arg, Ret, u32)],
    /// `pg_description`'s text.
    pub(crate) description: &'static str,
}

use crate::agg::ordered::OrderedSetFunc;
use crate::agg::regr::RegrFunc;
use Arg::{Any, Is, Star};
use DataType as T;
use Ret::{ArrayOfArg, SameAsArg};

const NUMBERS_TO_NUMERIC: [(Arg, Ret, u32); 6] = [
    (Is(T::Int8), Ret::Is(T::Numeric), 0),
    (Is(T::Int4), Ret::Is(T::Numeric), 1),
    (Is(T::Int2), Ret::Is(T::Numeric), 2),
    (Is(T::Float4), Ret::Is(T::Float8), 3),
    (Is(T::Float8), Ret::Is(T::Float8), 4),
    (Is(T::Numeric), Ret::Is(T::Numeric), 5),
];

/// The bit_and/bit_or/bit_xor overloads (smallint, integer, bigint, with their oids in
/// that order), each giving its argument's type.
const fn bits(oids: [u32; 3]) -> [(Arg, Ret, u32); 3] {
    [
        (Is(T::Int2), SameAsArg, oids[0]),
        (Is(T::Int4), SameAsArg, oids[1]),
        (Is(T::Int8), SameAsArg, oids[2]),
    ]
}

/// The variance and stddev overloads with their oids in PostgreSQL's order (bigint,
/// integer, smallint, real, double precision, numeric).
const fn moments(oids: [u32; 6]) -> [(Arg, Ret, u32); 6] {
    let mut out = NUMBERS_TO_NUMERIC;
    let mut i = 0;
    while i < 6 {
        out[i].2 = oids[i];
        i += 1;
    }
    out
}

/// avg's overloads: the numbers' (as the moments') and interval's.
const AVG: [(Arg, Ret, u32); 7] = {
    let m = moments([2100, 2101, 2102, 2104, 2105, 2103]);
    [
        m[0],
        m[1],
        m[2],
        m[3],
        m[4],
        m[5],
        (Is(T::Interval), Ret::Is(T::Interval), 2106),
    ]
};

const STDDEV: [(Arg, Ret, u32); 6] = moments([2154, 2155, 2156, 2157, 2158, 2159]);
const STDDEV_SAMP: [(Arg, Ret, u32); 6] = moments([2712, 2713, 2714, 2715, 2716, 2717]);
const STDDEV_POP: [(Arg, Ret, u32); 6] = moments([2724, 2725, 2726, 2727, 2728, 2729]);
const VARIANCE: [(Arg, Ret, u32); 6] = moments([2148, 2149, 2150, 2151, 2152, 2153]);
const VAR_SAMP: [(Arg, Ret, u32); 6] = moments([2641, 2642, 2643, 2644, 2645, 2646]);
const VAR_POP: [(Arg, Ret, u32); 6] = moments([2718, 2719, 2720, 2721, 2722, 2723]);

/// The types `min` and `max` take, each with its result (the same type), and the oids of
/// max and min.
const fn extremes(max: bool) -> [(Arg, Ret, u32); 12] {
    let types = [
        T::Int8,
        T::Int4,
        T::Int2,
        T::Float4,
        T::Float8,
        T::Timestamp,
        T::TimestampTz,
        T::Interval,
        T::Text,
        T::Numeric,
        T::Date,
        T::Time,
    ];
    let max_oids = [
        2115, 2116, 2117, 2119, 2120, 2126, 2127, 2128, 2129, 2130, 2122, 2123,
    ];
    let min_oids = [
        2131, 2132, 2133, 2135, 2136, 2142, 2143, 2144, 2145, 2146, 2138, 2139,
    ];
    let mut out = [(Star, SameAsArg, 0); 12];
    let mut i = 0;
    while i < 12 {
        out[i] = (
            Is(types[i]),
            SameAsArg,
            if max { max_oids[i] } else { min_oids[i] },
        );
        i += 1;
    }
    out
}

const MAX: [(Arg, Ret, u32); 12] = extremes(true);
const MIN: [(Arg, Ret, u32); 12] = extremes(false);

/// Every aggregate, one row each.
pub(crate) static AGGREGATES: &[AggDef] = &[
    AggDef {
        name: "count",
        kernel: AggKernel::Partial(AggFunc::Count),
        overloads: &[
            (Star, Ret::Is(T::Int8), 2803),
            (Any, Ret::Is(T::Int8), 2147),
        ],
        description: "number of input rows (count(*)) or of non-NULL values",
    },
    AggDef {
        name: "sum",
        kernel: AggKernel::Partial(AggFunc::Sum),
        overloads: &[
            (Is(T::Int8), Ret::Is(T::Numeric), 2107),
            (Is(T::Int4), Ret::Is(T::Int8), 2108),
            (Is(T::Int2), Ret::Is(T::Int8), 2109),
            (Is(T::Float4), Ret::Is(T::Float4), 2110),
            (Is(T::Float8), Ret::Is(T::Float8), 2111),
            (Is(T::Numeric), Ret::Is(T::Numeric), 2114),
            (Is(T::Interval), Ret::Is(T::Interval), 2113),
        ],
        description: "sum of the non-NULL input values",
    },
    AggDef {
        name: "avg",
        kernel: AggKernel::Partial(AggFunc::Avg),
        overloads: &AVG,
        description: "the average (arithmetic mean) of the non-NULL input values",
    },
    AggDef {
        name: "min",
        kernel: AggKernel::Partial(AggFunc::Min),
        overloads: &MIN,
        description: "minimum value of the input values",
    },
    AggDef {
        name: "max",
        kernel: AggKernel::Partial(AggFunc::Max),
        overloads: &MAX,
        description: "maximum value of the input values",
    },
    AggDef {
        name: "stddev",
        kernel: AggKernel::Partial(AggFunc::StddevSamp),
        overloads: &STDDEV,
        description: "historical alias for stddev_samp",
    },
    AggDef {
        name: "stddev_samp",
        kernel: AggKernel::Partial(AggFunc::StddevSamp),
        overloads: &STDDEV_SAMP,
        description: "sample standard deviation of the input values",
    },
    AggDef {
        name: "stddev_pop",
        kernel: AggKernel::Partial(AggFunc::StddevPop),
        overloads: &STDDEV_POP,
        description: "population standard deviation of the input values",
    },
    AggDef {
        name: "variance",
        kernel: AggKernel::Partial(AggFunc::VarSamp),
        overloads: &VARIANCE,
        description: "historical alias for var_samp",
    },
    AggDef {
        name: "var_samp",
        kernel: AggKernel::Partial(AggFunc::VarSamp),
        overloads: &VAR_SAMP,
        description: "sample variance of the input values",
    },
    AggDef {
        name: "var_pop",
        kernel: AggKernel::Partial(AggFunc::VarPop),
        overloads: &VAR_POP,
        description: "population variance of the input values",
    },
    AggDef {
        name: "bool_and",
        kernel: AggKernel::Partial(AggFunc::BoolAnd),
        overloads: &[(Is(T::Bool), Ret::Is(T::Bool), 2517)],
        description: "true if all input values are true",
    },
    AggDef {
        name: "bool_or",
        kernel: AggKernel::Partial(AggFunc::BoolOr),
        overloads: &[(Is(T::Bool), Ret::Is(T::Bool), 2518)],
        description: "true if at least one input value is true",
    },
    AggDef {
        name: "bit_and",
        kernel: AggKernel::Partial(AggFunc::BitAnd),
        overloads: &bits([2236, 2238, 2240]),
        description: "bitwise-and integer aggregate",
    },
    AggDef {
        name: "bit_or",
        kernel: AggKernel::Partial(AggFunc::BitOr),
        overloads: &bits([2237, 2239, 2241]),
        description: "bitwise-or integer aggregate",
    },
    AggDef {
        name: "bit_xor",
        kernel: AggKernel::Partial(AggFunc::BitXor),
        overloads: &bits([6164, 6165, 6166]),
        description: "bitwise-xor integer aggregate",
    },
    AggDef {
        name: "every",
        kernel: AggKernel::Partial(AggFunc::BoolAnd),
        overloads: &[(Is(T::Bool), Ret::Is(T::Bool), 2519)],
        description: "true if all input values are true (SQL's name for bool_and)",
    },
    AggDef {
        name: "string_agg",
        kernel: AggKernel::StringAgg,
        overloads: &[(Is(T::Text), Ret::Is(T::Text), 3538)],
        description: "the input values joined by the delimiter",
    },
    AggDef {
        name: "array_agg",
        kernel: AggKernel::ArrayAgg,
        overloads: &[(Any, ArrayOfArg, 2335)],
        description: "the input values, NULLs included, as an array",
    },
    AggDef {
        name: "regr_count",
        kernel: AggKernel::Regr(RegrFunc::Count),
        overloads: &[(Is(T::Float8), Ret::Is(T::Int8), 2818)],
        description: "number of input rows in which both expressions are not null",
    },
    AggDef {
        name: "regr_sxx",
        kernel: AggKernel::Regr(RegrFunc::Sxx),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2819)],
        description: "sum of squares of the independent variable (sum(X^2) - sum(X)^2/N)",
    },
    AggDef {
        name: "regr_syy",
        kernel: AggKernel::Regr(RegrFunc::Syy),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2820)],
        description: "sum of squares of the dependent variable (sum(Y^2) - sum(Y)^2/N)",
    },
    AggDef {
        name: "regr_sxy",
        kernel: AggKernel::Regr(RegrFunc::Sxy),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2821)],
        description:
            "sum of products of independent times dependent variable (sum(X*Y) - sum(X) * sum(Y)/N)",
    },
    AggDef {
        name: "regr_avgx",
        kernel: AggKernel::Regr(RegrFunc::AvgX),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2822)],
        description: "average of the independent variable (sum(X)/N)",
    },
    AggDef {
        name: "regr_avgy",
        kernel: AggKernel::Regr(RegrFunc::AvgY),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2823)],
        description: "average of the dependent variable (sum(Y)/N)",
    },
    AggDef {
        name: "regr_r2",
        kernel: AggKernel::Regr(RegrFunc::R2),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2824)],
        description: "square of the correlation coefficient",
    },
    AggDef {
        name: "regr_slope",
        kernel: AggKernel::Regr(RegrFunc::Slope),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2825)],
        description:
            "slope of the least-squares-fit linear equation determined by the (X, Y) pairs",
    },
    AggDef {
        name: "regr_intercept",
        kernel: AggKernel::Regr(RegrFunc::Intercept),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2826)],
        description:
            "y-intercept of the least-squares-fit linear equation determined by the (X, Y) pairs",
    },
    AggDef {
        name: "covar_pop",
        kernel: AggKernel::Regr(RegrFunc::CovarPop),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2827)],
        description: "population covariance",
    },
    AggDef {
        name: "covar_samp",
        kernel: AggKernel::Regr(RegrFunc::CovarSamp),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2828)],
        description: "sample covariance",
    },
    AggDef {
        name: "corr",
        kernel: AggKernel::Regr(RegrFunc::Corr),
        overloads: &[(Is(T::Float8), Ret::Is(T::Float8), 2829)],
        description: "correlation coefficient",
    },
    AggDef {
        name: "percentile_cont",
        kernel: AggKernel::OrderedSet(OrderedSetFunc::PercentileCont),
        overloads: &[
            (Is(T::Float8), Ret::Is(T::Float8), 3974),
            (Is(T::Interval), Ret::Is(T::Interval), 3976),
        ],
        description: "continuous distribution percentile",
    },
    AggDef {
        name: "percentile_disc",
        kernel: AggKernel::OrderedSet(OrderedSetFunc::PercentileDisc),
        overloads: &[(Any, SameAsArg, 3972)],
        description: "discrete percentile",
    },
    AggDef {
        name: "mode",
        kernel: AggKernel::OrderedSet(OrderedSetFunc::Mode),
        overloads: &[(Any, SameAsArg, 3984)],
        description: "most common value",
    },
];

/// The aggregate called `name` (lower-cased), if any.
pub(crate) fn aggregate(name: &str) -> Option<&'static AggDef> {
    AGGREGATES.iter().find(|a| a.name == name)
}

impl AggDef {
    /// The overload a call takes (`None`: `count(*)`), as (result, pg_proc oid), where the
    /// result [`Ret::ArrayOfArg`] is left to the caller; `None` when PostgreSQL has no
    /// such function (42883).
    pub(crate) fn overload(&self, arg: Option<DataType>) -> Option<(Ret, u32)> {
        let arg = arg.map(|t| if t.is_text() { T::Text } else { t });
        // Numbers reach the double precision overloads by PostgreSQL's implicit casts.
        let arg = match (self.kernel, arg) {
            (
                AggKernel::Regr(_) | AggKernel::OrderedSet(OrderedSetFunc::PercentileCont),
                Some(t),
            ) if t.is_numeric() => Some(T::Float8),
            _ => arg,
        };
        self.overloads
            .iter()
            .find(|(a, ..)| match (a, arg) {
                (Star, None) => true,
                (Any, Some(_)) => true,
                (Is(t), Some(x)) => *t == x,
                _ => false,
            })
            .map(|&(_, r, oid)| (r, oid))
    }

    /// The result type of a call over `arg` (`None`: `count(*)`), for a result that is a
    /// plain type; arrays are typed by the relational binder.
    pub(crate) fn result(&self, arg: Option<DataType>) -> Option<DataType> {
        match self.overload(arg)?.0 {
            Ret::Is(t) => Some(t),
            // min/max of varchar are text, of character(n) character (bpchar).
            SameAsArg => arg.map(|t| match t {
                T::Bpchar(_) => T::Bpchar(None),
                t if t.is_text() => T::Text,
                t => t,
            }),
            ArrayOfArg => None,
        }
    }
}
