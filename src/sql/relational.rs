//! Binding of finite relational queries: SELECTs over the system catalogs and stored
//! tables with joins, subqueries, CTEs, set operations, grouping and sorting.
//!
//! A SELECT whose FROM tree names no stream is finite. The continuous binder
//! ([`super::bind`]) keeps the simple ones (`SELECT 1`, `SELECT * FROM tcq_streams`); the
//! rest — anything over `pg_catalog`/`information_schema` relations, joins, subqueries,
//! WITH, UNION, DISTINCT, catalog functions — is bound here into a [`RelQuery`], which
//! [`crate::exec::relational`] evaluates row at a time against a [`RelationProvider`].
//!
//! Design decision: the plan is typed loosely. Names are resolved and every column
//! reference is a (level, index) pair, but values are checked at run time, as the catalogs
//! are small and their queries come from clients (psql, drivers, ORMs) that PostgreSQL has
//! already type-checked. Static types ([`RType`]) exist only where the answer depends on
//! them: result column types, `regclass`-style casts that print names, and the catalog
//! types ([`CatalogType`]: `oid`, arrays with their element type, `int2vector`), whose
//! values travel as `bigint` and as their PostgreSQL text form (`{a,b}`) and which clients
//! receive typed (`text[]` is 1009), so drivers decode arrays into lists.

use sqlparser::ast;

use super::plan::Expr;
use super::types::{rtype_of_name, RType, RegKind, EXPANDARRAY_FIELDS};
use crate::agg::ordered::OrderedSetFunc;
use crate::error::{Error, Result};
use crate::types::{CatalogType, Column, DataType, ElemType, Value};

mod arrays;
mod calls;
mod exprs;
mod from;
mod query;
mod select;
mod series;
mod srf;
mod walk;
mod window;

/// Where finite relational queries read named relations from: the system catalogs, and
/// later stored tables. Implemented by the engine's catalog.
pub trait RelationProvider {
    /// The columns and current rows of `schema.name` (both normalised), or `None` when
    /// there is no such relation. `schema` is `pg_catalog`, `information_schema`, `public`
    /// or another schema name a query wrote.
    fn relation(&self, schema: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)>;

    /// Whether the session may read `schema.name` before a query scans it. Errors: 42501.
    /// The default allows everything (providers without privileges).
    fn check_read(&self, _schema: &str, _name: &str) -> crate::Result<()> {
        Ok(())
    }

    /// What `role` holds on relation `schema.name`, as `has_table_privilege` asks it: the
    /// privileges, and whether it holds every privilege with grant option (it owns the
    /// relation or is a superuser). `role` is a role of `pg_authid` or `public`. The
    /// default holds everything (providers without privileges).
    fn table_privileges(
        &self,
        _role: &str,
        _schema: &str,
        _name: &str,
    ) -> (super::Privileges, bool) {
        (super::Privileges::ALL, true)
    }

    /// The session's database, against which `database.schema.name` is checked; `None`
    /// (the default) accepts any.
    fn database(&self) -> Option<&str> {
        None
    }
}

/// A bound finite query: WITH, a body, ORDER BY, LIMIT/OFFSET.
#[derive(Clone, Debug, PartialEq)]
pub struct RelQuery {
    /// Common table expressions, each with its plan-wide id, evaluated once in order.
    pub(crate) ctes: Vec<(usize, RelQuery)>,
    /// The body.
    pub(crate) body: RelBody,
    /// Sort keys: index into the body's extended row (output columns, then the select's
    /// hidden sort keys), descending, nulls first.
    pub(crate) order_by: Vec<(usize, bool, bool)>,
    /// LIMIT, an expression over no row.
    pub(crate) limit: Option<RExpr>,
    /// FETCH FIRST ... WITH TIES: the limit takes the rows sorting equal to its last too.
    pub(crate) with_ties: bool,
    /// OFFSET, an expression over no row.
    pub(crate) offset: Option<RExpr>,
    /// Output column names and static types.
    pub(crate) columns: Vec<(String, RType)>,
    /// The parameters (0-based) of a catalog type, as PostgreSQL infers them: compared
    /// with an `oid` (`WHERE t.oid = $1`) or cast to a catalog type (`$1::oid[]`). Held as
    /// [`CatalogType::held_as`], described to clients as that type. Set on the
    /// statement's outermost query only.
    pub(crate) catalog_params: Vec<(usize, CatalogType)>,
}

impl RelQuery {
    /// `body` as a whole query of `columns`: no WITH, ORDER BY, LIMIT or OFFSET.
    pub(crate) fn of_body(body: RelBody, columns: Vec<(String, RType)>) -> RelQuery {
        RelQuery {
            ctes: vec![],
            body,
            order_by: vec![],
            limit: None,
            with_ties: false,
            offset: None,
            columns,
            catalog_params: Vec::new(),
        }
    }
}

/// A query body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RelBody {
    /// One SELECT.
    Select(Box<RelSelect>),
    /// `left UNION|INTERSECT|EXCEPT [ALL] right`.
    SetOp {
        /// Which operation.
        op: SetOp,
        /// ALL: keep duplicates.
        all: bool,
        /// Left input.
        left: Box<RelQuery>,
        /// Right input.
        right: Box<RelQuery>,
    },
    /// `VALUES (...), (...)`.
    Values(Vec<Vec<RExpr>>),
    /// The body of a WITH RECURSIVE CTE: `anchor UNION [ALL] step`, where `step` reads the
    /// rows the previous round added through CTE `id`, until a round adds none.
    Recursive {
        /// The CTE's id.
        id: usize,
        /// UNION ALL (else duplicates of earlier rows are dropped).
        all: bool,
        /// The non-recursive term.
        anchor: Box<RelQuery>,
        /// The recursive term.
        step: Box<RelQuery>,
    },
}

/// Set operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SetOp {
    /// UNION
    Union,
    /// INTERSECT
    Intersect,
    /// EXCEPT
    Except,
}

/// One SELECT block.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RelSelect {
    /// FROM; `None` is one row of no columns.
    pub(crate) from: Option<RelFrom>,
    /// WHERE, over the FROM row.
    pub(crate) filter: Option<RExpr>,
    /// Grouping: set when the block has GROUP BY or aggregates. Then HAVING, the select
    /// list and the sort keys read the group's first FROM row followed by the aggregate
    /// results (`[from row.., agg_0, .., agg_n-1]`; an empty group has a row of NULLs).
    pub(crate) group: Option<RelGroup>,
    /// HAVING.
    pub(crate) having: Option<RExpr>,
    /// The select list.
    pub(crate) projection: Vec<RExpr>,
    /// DISTINCT.
    pub(crate) distinct: bool,
    /// DISTINCT ON: the projected row's key columns (select list, then hidden sort keys)
    /// and the order (column, descending, nulls first) whose first row of each key is
    /// kept: the query's ORDER BY, which begins with the keys, or the keys ascending.
    pub(crate) distinct_on: Option<DistinctOn>,
    /// Hidden ORDER BY keys computed beside the select list (expressions not in it).
    pub(crate) sort_keys: Vec<RExpr>,
    /// Window function calls (`f(...) OVER (...)`), computed after grouping;
    /// [`RExpr::Window`] reads them.
    pub(crate) windows: Vec<RelWindow>,
    /// The element type of each array column of the projected row (select list, then
    /// hidden sort keys), `None` for other columns: DISTINCT, DISTINCT ON and ORDER BY
    /// compare arrays element by element ([`crate::exec::array_cmp`]).
    pub(crate) arrays: Vec<Option<ElemType>>,
    /// Set-returning calls of the select list (name, arguments over the row after
    /// grouping). As in PostgreSQL 10 and later, each row gives as many output rows as its
    /// longest call returns, the calls advancing in lockstep and the shorter ones giving
    /// NULL; [`RExpr::SetFunc`] reads the current values.
    pub(crate) set_funcs: Vec<(String, Vec<RExpr>)>,
}

/// DISTINCT ON's key columns and the order (column, descending, nulls first) its first
/// rows are taken in.
pub(crate) type DistinctOn = (Vec<usize>, Vec<(usize, bool, bool)>);

/// A window function call, `f(...) OVER (PARTITION BY .. ORDER BY ..)`, computed over the
/// rows after grouping. The frame is PostgreSQL's default: with ORDER BY, the partition's
/// rows up to the current row and its peers (rows equal on the ORDER BY keys); without it,
/// the whole partition.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RelWindow {
    /// What is computed at each row.
    pub(crate) func: RelWindowFunc,
    /// PARTITION BY, over the row after grouping.
    pub(crate) partition_by: Vec<RExpr>,
    /// ORDER BY: key, descending, nulls first.
    pub(crate) order_by: Vec<(RExpr, bool, bool)>,
    /// The element types of the array keys of PARTITION BY, then of ORDER BY (`None`
    /// for other keys): arrays partition and sort element by element.
    pub(crate) arrays: Vec<Option<ElemType>>,
    /// The frame that aggregates and first/last/nth_value read.
    pub(crate) frame: RelFrame,
    /// For a RANGE frame, the offsets of its `PRECEDING`/`FOLLOWING` start and end, of
    /// the ORDER BY key's type (an interval for timestamps and intervals); the frame
    /// holds the rows whose key lies within them of the current row's key.
    pub(crate) range_offsets: [Option<Value>; 2],
    /// The result's type.
    pub(crate) ty: RType,
}

/// A window frame, `{ROWS | RANGE | GROUPS} BETWEEN start AND end`: the rows of the
/// partition, relative to the current row, that aggregates and first/last/nth_value read.
/// PostgreSQL's default, [`RelFrame::DEFAULT`], is `RANGE BETWEEN UNBOUNDED PRECEDING AND
/// CURRENT ROW`: the partition up to the row's last peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RelFrame {
    /// ROWS counts rows, GROUPS peer groups, RANGE peers (or, with an offset, key
    /// distance: see [`RelWindow::range_offsets`]).
    pub(crate) units: FrameUnits,
    /// The first row of the frame.
    pub(crate) start: FrameBound,
    /// The last row of the frame.
    pub(crate) end: FrameBound,
}

impl RelFrame {
    /// `RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`.
    pub(crate) const DEFAULT: RelFrame = RelFrame {
        units: FrameUnits::Range,
        start: FrameBound::UnboundedPreceding,
        end: FrameBound::CurrentRow,
    };
}

/// The unit of a frame's offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameUnits {
    /// Rows.
    Rows,
    /// Values of the ORDER BY key; only UNBOUNDED and CURRENT ROW (the row's peers).
    Range,
    /// Peer groups.
    Groups,
}

/// One end of a frame; offsets count [`FrameUnits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameBound {
    /// The partition's first row.
    UnboundedPreceding,
    /// `n PRECEDING`.
    Preceding(u64),
    /// The current row (its first or last peer for RANGE and GROUPS).
    CurrentRow,
    /// `n FOLLOWING`.
    Following(u64),
    /// The partition's last row.
    UnboundedFollowing,
}

/// The window functions of PostgreSQL's `func-window` table that tcq computes, and any
/// aggregate used with OVER.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RelWindowFunc {
    /// `row_number()`: 1, 2, ... in the partition's order.
    RowNumber,
    /// `rank()`: the row number of the row's first peer (gaps after ties).
    Rank,
    /// `dense_rank()`: the number of the row's peer group (no gaps).
    DenseRank,
    /// `lag(x [, offset [, default]])` (`lead: false`) and `lead(...)`: `x` at the row
    /// `offset` (default 1) before or after in the partition, `default` (NULL) past its ends.
    Shift {
        lead: bool,
        value: RExpr,
        offset: Option<RExpr>,
        default: Option<RExpr>,
    },
    /// `ntile(n)`: the bucket, 1 to `n`, of the row when the partition is cut into `n`
    /// buckets as equal as they can be (the first ones one row larger).
    Ntile(RExpr),
    /// `percent_rank()`: (rank - 1) / (rows in the partition - 1), 0 for one row.
    PercentRank,
    /// `cume_dist()`: rows up to the row's last peer / rows in the partition.
    CumeDist,
    /// `nth_value(x, n)`: `x` at the frame's `n`th row, NULL when the frame is shorter.
    NthValue(RExpr, RExpr),
    /// `first_value(x)`: `x` at the frame's first row (the partition's first).
    FirstValue(RExpr),
    /// `last_value(x)`: `x` at the frame's last row (the current row's last peer).
    LastValue(RExpr),
    /// An aggregate over the frame.
    Agg(RelAgg),
}

/// GROUP BY keys and aggregate calls of a SELECT block.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RelGroup {
    /// Group keys, over the FROM row.
    pub(crate) keys: Vec<RExpr>,
    /// The element type of each array key (`None` for other keys): arrays group by
    /// their elements' equality.
    pub(crate) arrays: Vec<Option<ElemType>>,
    /// Aggregate calls, arguments over the FROM row.
    pub(crate) aggs: Vec<RelAgg>,
    /// Width of the FROM row.
    pub(crate) width: usize,
}

/// An aggregate call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RelAgg {
    /// Function name, lower-cased, as the call wrote it (its row of the function table).
    pub(crate) func: String,
    /// How it is computed: a partial state of [`crate::agg`], or in order.
    pub(crate) kernel: super::functions::AggKernel,
    /// The argument's type as the partial state reads it (`bigint` for `count(*)`).
    pub(crate) arg_type: DataType,
    /// `FILTER (WHERE ...)`, over the FROM row: rows for which it is not true are skipped.
    pub(crate) filter: Option<RExpr>,
    /// Arguments (none for `count(*)`).
    pub(crate) args: Vec<RExpr>,
    /// DISTINCT.
    pub(crate) distinct: bool,
    /// `ORDER BY` inside the call (`array_agg(x ORDER BY n)`): keys over the FROM row,
    /// descending, nulls first. The order the values reach the aggregate in.
    pub(crate) order_by: Vec<(RExpr, bool, bool)>,
    /// The element types of the array arguments, then of the array ORDER BY keys
    /// (`None` for others): DISTINCT and ORDER BY compare arrays element by element.
    pub(crate) arrays: Vec<Option<ElemType>>,
    /// The result's type.
    pub(crate) ty: RType,
}

/// Join kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JoinKind {
    /// INNER / CROSS / comma.
    Inner,
    /// LEFT [OUTER].
    Left,
    /// RIGHT [OUTER].
    Right,
    /// FULL [OUTER].
    Full,
}

/// A FROM item; its row is the concatenation of its relations' columns.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RelFrom {
    /// A named relation of the provider.
    Scan {
        /// Schema, normalised.
        schema: String,
        /// Relation name, normalised.
        name: String,
    },
    /// A CTE of an enclosing WITH, by id.
    Cte(usize),
    /// A subquery.
    Sub(Box<RelQuery>),
    /// A set-returning function (`generate_series`, `unnest`, `pg_options_to_table`,
    /// `pg_get_keywords`), arguments over no row.
    Func {
        /// Name, lower-cased.
        name: String,
        /// Arguments.
        args: Vec<RExpr>,
        /// The declared type of each column, which its values are converted to.
        types: Vec<RType>,
        /// WITH ORDINALITY: a last `bigint` column numbers the rows from 1.
        ordinality: bool,
    },
    /// The rows of `input` for which `cond` (over its row) is true: a WHERE or ON
    /// conjunct that predicate pushdown ([`super::relational_pushdown`]) moved here.
    Filter {
        /// The input.
        input: Box<RelFrom>,
        /// The condition.
        cond: RExpr,
    },
    /// A join; `on` reads the left row followed by the right row. The executor matches
    /// the equalities of `on` between a left-only and a right-only expression by hashing.
    Join {
        /// Kind.
        kind: JoinKind,
        /// Left input.
        left: Box<RelFrom>,
        /// Right input.
        right: Box<RelFrom>,
        /// The condition (`None`: cross join).
        on: Option<RExpr>,
        /// Width of the left row.
        left_width: usize,
        /// Width of the right row.
        right_width: usize,
        /// A LATERAL join: `right` reads the left row, so it is evaluated once per left
        /// row, with that row after this many columns (where the left row starts in the
        /// level's row; those of the row the join is evaluated with) as its row.
        lateral: Option<usize>,
    },
}

impl CmpOp {
    /// The operator as SQL writes it.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// The operator of `x op ANY|ALL (array)`, applied to `x` and each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnyOp {
    /// A comparison.
    Cmp(CmpOp),
    /// `[NOT] LIKE` (`~~`, `!~~`) or `[NOT] ILIKE` (`~~*`, `!~~*`) of text.
    Like {
        negated: bool,
        case_insensitive: bool,
    },
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    /// =
    Eq,
    /// <>
    Ne,
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
}

/// The element types of two compared operands of static types `l` and `r` when either
/// is an array (an operand that is none, such as an unknown literal `'{1,2}'`, takes
/// the other's); `None` when neither is.
pub(crate) fn array_elems(l: RType, r: RType) -> Option<(ElemType, ElemType)> {
    let elem = |t: RType| match t {
        RType::Catalog(CatalogType::Array(e)) => Some(e),
        _ => None,
    };
    match (elem(l), elem(r)) {
        (Some(a), Some(b)) => Some((a, b)),
        (Some(a), None) | (None, Some(a)) => Some((a, a)),
        (None, None) => None,
    }
}

/// The array functions whose elements compare by their type ([`RExpr::ArrayFunc`]).
pub(crate) const ELEM_COMPARING: &[&str] = &[
    "array_position",
    "array_positions",
    "array_remove",
    "array_replace",
    "arraycontains",
    "arraycontained",
    "arrayoverlap",
];

/// [`array_elems`] of the operands of operator `op` (its symbol): PostgreSQL's array
/// operators take two arrays of one type (or one and an unknown literal). Errors: 42883
/// for an array and a value of another type (`numeric[] = integer[]`, `integer[] = integer`).
pub(crate) fn array_operands(l: RType, r: RType, op: &str) -> Result<Option<(ElemType, ElemType)>> {
    let typed = !matches!(l, RType::Unknown) && !matches!(r, RType::Unknown);
    match array_elems(l, r) {
        Some(_) if typed && l != r => Err(Error::UndefinedFunction(format!(
            "operator does not exist: {} {op} {}",
            l.name(),
            r.name()
        ))),
        p => Ok(p),
    }
}

/// The element type of an array of static type `t`, for sorting and grouping its values
/// element by element; `None` for any other type.
pub(crate) fn array_elem(t: RType) -> Option<ElemType> {
    array_elems(t, t).map(|p| p.0)
}

/// A scalar expression of the relational plan.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RExpr {
    /// Column `idx` of the row `up` query levels out (0 = this level's row).
    Col {
        /// Levels out.
        up: usize,
        /// Index in that row.
        idx: usize,
    },
    /// A constant.
    Lit(Value),
    /// `$(i+1)`.
    Param(usize),
    /// A scalar [`Expr`] of the continuous binder whose `Expr::Column(i)` reads `args[i]`:
    /// arithmetic, casts to plain types, LIKE, the scalar functions of [`super::ScalarFunc`].
    Template {
        /// The expression over the argument row.
        expr: Expr,
        /// The arguments.
        args: Vec<RExpr>,
    },
    /// A comparison with text-to-number coercion of literals.
    Cmp {
        /// Operator.
        op: CmpOp,
        /// The element types of the left and right operands when they are arrays: the
        /// arrays are compared element by element (see [`crate::exec::array_cmp`]).
        arrays: Option<(ElemType, ElemType)>,
        /// Left.
        left: Box<RExpr>,
        /// Right.
        right: Box<RExpr>,
    },
    /// AND of all, three-valued.
    And(Vec<RExpr>),
    /// `left op ANY|ALL (array)`.
    AnyArray {
        /// Left operand.
        left: Box<RExpr>,
        /// Operator.
        op: AnyOp,
        /// The array.
        array: Box<RExpr>,
        /// ALL rather than ANY.
        all: bool,
    },
    /// `left op ANY|ALL (subquery)`, `left [NOT] IN (subquery)`.
    AnySub {
        /// Left operand.
        left: Box<RExpr>,
        /// Operator.
        op: CmpOp,
        /// One-column subquery.
        query: Box<RelQuery>,
        /// ALL rather than ANY.
        all: bool,
        /// The result is negated (NOT IN).
        negated: bool,
    },
    /// `[NOT] EXISTS (subquery)`.
    Exists(Box<RelQuery>, bool),
    /// `(subquery)`: one column, at most one row.
    ScalarSub(Box<RelQuery>),
    /// `ARRAY(subquery)`.
    ArraySub(Box<RelQuery>),
    /// `ARRAY[a, b]`.
    Array(Vec<RExpr>),
    /// `arr[i]` (1-based).
    Subscript(Box<RExpr>, Box<RExpr>),
    /// `a || b` where either side is an array.
    ArrayConcat(Box<RExpr>, Box<RExpr>),
    /// A cast to a type the continuous binder lacks (reg*, arrays) or from a reg* type.
    Cast(Box<RExpr>, RType),
    /// A function of [`crate::exec::relational`] (catalog functions and friends), by name.
    Func(String, Vec<RExpr>),
    /// An array function that compares elements (`array_position`, `array_remove`,
    /// `arraycontains`, ...: [`ELEM_COMPARING`]) with the element types of its first and
    /// second arguments, as PostgreSQL compares them (`1` finds `1.0` in a numeric array).
    ArrayFunc(String, (ElemType, ElemType), Vec<RExpr>),
    /// The current value of set-returning call `j` of this level's select list (a record
    /// for `_pg_expandarray`, the single column otherwise).
    SetFunc(usize),
    /// The value of window function `j` of this level's SELECT: the evaluator appends them
    /// to the row after grouping in reverse order, so `j` is `row[len - 1 - j]`.
    Window(usize),
}

/// Set-returning functions a select list may call (FROM takes these and
/// `pg_options_to_table`, `pg_get_keywords`).
pub(crate) const SELECT_LIST_SET_FUNCTIONS: &[&str] = &[
    "generate_series",
    "generate_subscripts",
    "unnest",
    "_pg_expandarray",
    "regexp_matches",
    "regexp_split_to_table",
];

/// PostgreSQL's refusals of a set-returning call outside the select list (0A000).
const SRF_IN_WHERE: &str = "set-returning functions are not allowed in WHERE";
const SRF_IN_HAVING: &str = "set-returning functions are not allowed in HAVING";
const SRF_IN_JOIN: &str = "set-returning functions are not allowed in JOIN conditions";
const SRF_IN_LIMIT: &str = "set-returning functions are not allowed in LIMIT";
const SRF_IN_OFFSET: &str = "set-returning functions are not allowed in OFFSET";
const SRF_IN_VALUES: &str = "set-returning functions are not allowed in VALUES";
const SRF_IN_FROM_ARGS: &str = "set-returning functions must appear at top level of FROM";
/// tcq's own: PostgreSQL runs a set-returning call nested in another's arguments.
const SRF_IN_SRF_ARGS: &str =
    "set-returning functions in the arguments of a set-returning function are not supported";

/// Relations the continuous binder serves on its own when read alone.
const OLD_VIEWS: &[&str] = &[
    "tcq_streams",
    "tcq_queries",
    "pg_stat_activity",
    "tcq_plans",
    "tcq_memory",
];

/// Which binder a SELECT goes to.
pub(crate) enum Route {
    /// It names a stream: the continuous binder.
    Continuous,
    /// It reads a catalog relation, or has a shape the continuous binder refuses (joins,
    /// subqueries in FROM, WITH, set operations, DISTINCT, VALUES): this binder.
    Relational,
    /// Finite and simple (`SELECT 1`, `SELECT * FROM tcq_streams`): the continuous binder
    /// first, this one if that refuses it.
    Finite,
}

/// Route `q` by the relations its FROM clauses name.
pub(crate) fn route(
    q: &ast::Query,
    streams: &dyn Fn(&str) -> bool,
    relations: &dyn Fn(&str, &str) -> bool,
) -> Route {
    let mut w = Walk::default();
    w.query(q, streams, relations);
    if w.stream {
        Route::Continuous
    } else if w.catalog || w.complex {
        Route::Relational
    } else {
        Route::Finite
    }
}

#[derive(Default)]
struct Walk {
    stream: bool,
    catalog: bool,
    complex: bool,
}

impl Walk {
    fn query(
        &mut self,
        q: &ast::Query,
        streams: &dyn Fn(&str) -> bool,
        relations: &dyn Fn(&str, &str) -> bool,
    ) {
        if let Some(with) = &q.with {
            self.complex = true;
            for c in &with.cte_tables {
                self.query(&c.query, streams, relations);
            }
        }
        self.set_expr(&q.body, streams, relations);
    }

    fn set_expr(
        &mut self,
        s: &ast::SetExpr,
        streams: &dyn Fn(&str) -> bool,
        relations: &dyn Fn(&str, &str) -> bool,
    ) {
        super::deep(|| self.set_expr_inner(s, streams, relations))
    }

    fn set_expr_inner(
        &mut self,
        s: &ast::SetExpr,
        streams: &dyn Fn(&str) -> bool,
        relations: &dyn Fn(&str, &str) -> bool,
    ) {
        match s {
            ast::SetExpr::Select(sel) => {
                if sel.distinct.is_some() {
                    self.complex = true;
                }
                if sel.from.len() > 1 {
                    self.complex = true;
                }
                for t in &sel.from {
                    if !t.joins.is_empty() {
                        self.complex = true;
                    }
                    self.factor(&t.relation, streams, relations);
                    for j in &t.joins {
                        self.factor(&j.relation, streams, relations);
                    }
                }
            }
            ast::SetExpr::Query(q) => self.query(q, streams, relations),
            ast::SetExpr::SetOperation { left, right, .. } => {
                self.complex = true;
                self.set_expr(left, streams, relations);
                self.set_expr(right, streams, relations);
            }
            ast::SetExpr::Values(_) => self.complex = true,
            _ => {}
        }
    }

    fn factor(
        &mut self,
        f: &ast::TableFactor,
        streams: &dyn Fn(&str) -> bool,
        relations: &dyn Fn(&str, &str) -> bool,
    ) {
        match f {
            ast::TableFactor::Table { name, args, .. } => {
                let parts: Vec<String> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().map(norm))
                    .collect();
                let whole = parts.join(".");
                if args.is_some() {
                    self.complex = true;
                    return;
                }
                if streams(&whole) {
                    self.stream = true;
                    return;
                }
                let (schema, rel) = match parts.as_slice() {
                    // database.schema.name: the database is checked when the name binds.
                    [_, s, r] | [s, r] => (s.as_str(), r.as_str()),
                    [r] => ("", r.as_str()),
                    _ => return,
                };
                if OLD_VIEWS.contains(&rel) && (schema.is_empty() || schema == "pg_catalog") {
                    return;
                }
                if relations(schema, rel) {
                    self.catalog = true;
                }
            }
            ast::TableFactor::Derived { subquery, .. } => {
                self.complex = true;
                self.query(subquery, streams, relations);
            }
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                self.complex = true;
                self.factor(&table_with_joins.relation, streams, relations);
                for j in &table_with_joins.joins {
                    self.factor(&j.relation, streams, relations);
                }
            }
            _ => self.complex = true,
        }
    }
}

/// Normalise an identifier: lower-cased unless quoted.
fn norm(id: &ast::Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    }
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::FeatureNotSupported(what.into())
}

/// One relation visible at a query level.
#[derive(Clone, Debug)]
struct ScopeRel {
    /// Alias, or the relation's name.
    alias: String,
    /// Schema when named by a schema-qualified relation.
    schema: Option<String>,
    columns: Vec<String>,
    /// Columns hidden from `*` (the right side of USING).
    hidden: Vec<bool>,
    offset: usize,
    /// `schema.name` of a provider's relation, for its system column `tableoid`.
    table: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct Level {
    rels: Vec<ScopeRel>,
    width: usize,
    /// Column types of the level's row, for static typing.
    types: Vec<RType>,
    /// Aggregates collected while binding the select list, HAVING and ORDER BY.
    aggs: Vec<RelAgg>,
    windows: Vec<RelWindow>,
    set_funcs: Vec<(String, Vec<RExpr>)>,
    /// Binding the select list, where set-returning calls are allowed.
    srf_ok: bool,
    agg_ok: bool,
    in_agg: bool,
    /// The first and last columns of this level that column references have read, if
    /// any: a FROM item bound with the items before it visible reads them (LATERAL)
    /// when set.
    refs: std::cell::Cell<Option<(usize, usize)>>,
    /// This level's columns that subqueries of its select list, HAVING or ORDER BY read
    /// (checked against the group keys when the level is grouped).
    sub_refs: std::cell::RefCell<Vec<usize>>,
}

/// The binder of one statement.
pub(crate) struct RelBinder<'a> {
    provider: &'a dyn RelationProvider,
    levels: Vec<Level>,
    /// CTEs visible, innermost last: (name, id, columns, types).
    ctes: Vec<(String, usize, Vec<String>, Vec<RType>)>,
    next_cte: usize,
    /// Parameter types.
    pub(crate) params: Vec<Option<DataType>>,
    /// Parameters of a catalog type (see [`RelQuery::catalog_params`]).
    catalog_params: Vec<(usize, CatalogType)>,
    /// Expressions open around the one being bound (200 at most, 54001).
    depth: usize,
    /// Queries open around the one being bound (64 at most, 54001), counted apart from
    /// `depth` so that a scalar subquery is one level, not two.
    query_depth: usize,
    /// The whole query string, for error positions (psql's `LINE 1:` caret).
    source: &'a str,
    /// The aggregate call being bound is a window function's (`sum(count(*)) OVER ()`):
    /// its arguments are over the grouped row and may hold aggregates.
    window_agg: bool,
    /// A window function's arguments are being bound (window calls do not nest).
    in_window: bool,
    /// PostgreSQL's error for a set-returning call in the clause being bound (WHERE,
    /// HAVING, JOIN conditions, LIMIT, VALUES, ...), `None` where none is refused.
    srf_refusal: Option<&'static str>,
}

#[cfg(test)]
/// Bind a parsed SELECT over `provider` (for [`super::bind_relational`]).
pub(crate) fn bind_parsed(
    p: &super::parse::ParsedStmt,
    provider: &dyn RelationProvider,
) -> Result<RelQuery> {
    match &p.stmt {
        super::parse::Stmt::Ast(s) => match &**s {
            ast::Statement::Query(q) => Ok(bind_query(q, provider, &[], &p.source)?.0),
            _ => Err(unsupported("only SELECT is a relational query")),
        },
        _ => Err(unsupported("only SELECT is a relational query")),
    }
}

/// Bind a finite query. `hints` are the parameter types the client gave.
pub(crate) fn bind_query(
    q: &ast::Query,
    provider: &dyn RelationProvider,
    hints: &[Option<DataType>],
    source: &str,
) -> Result<(RelQuery, Vec<DataType>)> {
    let mut b = RelBinder {
        provider,
        levels: Vec::new(),
        ctes: Vec::new(),
        next_cte: 0,
        params: hints.to_vec(),
        catalog_params: Vec::new(),
        depth: 0,
        query_depth: 0,
        source,
        window_agg: false,
        in_window: false,
        srf_refusal: None,
    };
    let mut plan = b.query(q)?;
    plan.catalog_params = std::mem::take(&mut b.catalog_params);
    let params = b
        .params
        .iter()
        .map(|p| p.unwrap_or(DataType::Text))
        .collect();
    Ok((plan, params))
}

/// The columns a NATURAL join joins on: the left input's visible column names (relations
/// `rels[..rels_before]` at or after offset `start`) that the right input (`rels[rels_before..]`)
/// also has, in the left's order. Errors: 42702 for a common name the left input has twice.
fn natural_columns(rels: &[ScopeRel], start: usize, rels_before: usize) -> Result<Vec<String>> {
    let visible = |rs: &[ScopeRel]| -> Vec<String> {
        rs.iter()
            .filter(|r| r.offset >= start)
            .flat_map(|r| {
                r.columns
                    .iter()
                    .zip(&r.hidden)
                    .filter(|(_, h)| !**h)
                    .map(|(c, _)| c.clone())
            })
            .collect()
    };
    let (left, right) = (visible(&rels[..rels_before]), visible(&rels[rels_before..]));
    let mut out: Vec<String> = Vec::new();
    for name in &left {
        if !right.contains(name) {
            continue;
        }
        if out.contains(name) {
            return Err(Error::AmbiguousColumn(format!(
                "common column name \"{name}\" appears more than once in left table"
            )));
        }
        out.push(name.clone());
    }
    Ok(out)
}

/// The operator of `x op ANY|ALL (...)`: a comparison, or LIKE's and ILIKE's operators.
fn any_op(op: &ast::BinaryOperator) -> Option<AnyOp> {
    use ast::BinaryOperator as B;
    let like = |negated, case_insensitive| AnyOp::Like {
        negated,
        case_insensitive,
    };
    Some(match op {
        B::PGLikeMatch => like(false, false),
        B::PGNotLikeMatch => like(true, false),
        B::PGILikeMatch => like(false, true),
        B::PGNotILikeMatch => like(true, true),
        other => AnyOp::Cmp(cmp_op(other)?),
    })
}

fn cmp_op(op: &ast::BinaryOperator) -> Option<CmpOp> {
    Some(match op {
        ast::BinaryOperator::Eq => CmpOp::Eq,
        ast::BinaryOperator::NotEq => CmpOp::Ne,
        ast::BinaryOperator::Lt => CmpOp::Lt,
        ast::BinaryOperator::LtEq => CmpOp::Le,
        ast::BinaryOperator::Gt => CmpOp::Gt,
        ast::BinaryOperator::GtEq => CmpOp::Ge,
        _ => return None,
    })
}

impl RelBinder<'_> {
    fn static_type(&self, e: &RExpr) -> RType {
        match e {
            RExpr::Col { up, idx } => {
                let n = self.levels.len();
                let level = n.checked_sub(1 + up).and_then(|i| self.levels.get(i));
                match level {
                    Some(l) if *idx < l.types.len() => l.types[*idx],
                    Some(l) => l.aggs.get(idx - l.width).map_or(RType::Unknown, agg_type),
                    None => RType::Unknown,
                }
            }
            RExpr::Lit(v) => v.data_type().map_or(RType::Unknown, |d| {
                if d == DataType::Text {
                    RType::Unknown
                } else {
                    RType::Base(d)
                }
            }),
            RExpr::Param(i) => self
                .params
                .get(*i)
                .copied()
                .flatten()
                .map_or(RType::Unknown, RType::Base),
            RExpr::Template { expr, args } => match expr {
                Expr::Cast { to, .. } => RType::Base(*to),
                Expr::Binary { op, .. } => {
                    use crate::sql::BinaryOp as O;
                    match op {
                        O::Concat => RType::Base(DataType::Text),
                        _ => args.first().map_or(RType::Unknown, |a| self.static_type(a)),
                    }
                }
                Expr::Like { .. } => RType::Base(DataType::Bool),
                Expr::Unary { .. } => args.first().map_or(RType::Unknown, |a| self.static_type(a)),
                Expr::Func { func, .. } => {
                    use crate::sql::ScalarFunc as F;
                    RType::Base(match func {
                        F::Now | F::ToTimestamp => DataType::TimestampTz,
                        F::ToDate => DataType::Date,
                        F::Overlaps => DataType::Bool,
                        F::DatePart => DataType::Float8,
                        F::BackendPid | F::Length | F::OctetLength => DataType::Int4,
                        F::Abs
                        | F::Round
                        | F::Floor
                        | F::Ceil
                        | F::Greatest
                        | F::Least
                        | F::NullIf => {
                            return args.first().map_or(RType::Unknown, |a| self.static_type(a))
                        }
                        F::Sqrt => DataType::Float8,
                        F::DateTrunc => DataType::Timestamp,
                        _ => DataType::Text,
                    })
                }
                _ => RType::Unknown,
            },
            RExpr::Cmp { .. }
            | RExpr::And(_)
            | RExpr::AnyArray { .. }
            | RExpr::AnySub { .. }
            | RExpr::Exists(..) => RType::Base(DataType::Bool),
            RExpr::ScalarSub(q) => q.columns.first().map_or(RType::Unknown, |c| c.1),
            RExpr::ArraySub(q) => q.columns.first().map_or(RType::Unknown, |c| c.1).array_of(),
            RExpr::Array(elems) => elems
                .iter()
                .map(|x| self.static_type(x))
                .find(|t| *t != RType::Unknown)
                .unwrap_or(RType::Unknown)
                .array_of(),
            RExpr::ArrayConcat(l, r) => [l, r]
                .iter()
                .map(|x| self.static_type(x))
                .find(RType::is_array)
                .unwrap_or(RType::Unknown.array_of()),
            // `a[i][j]...`: the element type of the array at the bottom.
            RExpr::Subscript(a, _) => {
                let mut base = &**a;
                while let RExpr::Subscript(inner, _) = base {
                    base = inner;
                }
                self.static_type(base).elem().unwrap_or(RType::Unknown)
            }
            RExpr::Cast(_, t) => *t,
            // Polymorphic: the type of the array argument.
            RExpr::Func(name, args) | RExpr::ArrayFunc(name, _, args)
                if matches!(
                    name.as_str(),
                    "array_remove" | "array_replace" | "array_slice"
                ) =>
            {
                args.first().map_or(RType::Unknown, |a| self.static_type(a))
            }
            // GREATEST, LEAST, NULLIF of arrays: the type of the first typed argument.
            RExpr::ArrayFunc(name, _, args)
                if matches!(
                    name.as_str(),
                    "greatest" | "least" | "nullif" | "array_nest"
                ) =>
            {
                (args.iter().map(|a| self.static_type(a)))
                    .find(|t| *t != RType::Unknown)
                    .unwrap_or(RType::Unknown)
            }
            RExpr::Func(name, _) | RExpr::ArrayFunc(name, ..) => func_type(name),
            RExpr::SetFunc(j)
                if self
                    .levels
                    .last()
                    .and_then(|l| l.set_funcs.get(*j))
                    .is_some_and(|f| f.0 == "unnest") =>
            {
                let f = &self.levels.last().expect("level").set_funcs[*j];
                f.1.first()
                    .and_then(|a| self.static_type(a).elem())
                    .unwrap_or(RType::Base(DataType::Text))
            }
            RExpr::Window(j) => self
                .levels
                .last()
                .and_then(|l| l.windows.get(*j))
                .map_or(RType::Base(DataType::Int8), |w| w.ty),
            RExpr::SetFunc(j) => {
                let name = self.levels.last().and_then(|l| l.set_funcs.get(*j));
                match name.map(|f| f.0.as_str()) {
                    Some("generate_series") => {
                        let args = &self.levels.last().expect("level").set_funcs[*j].1;
                        self.series_type(args)
                    }
                    Some("generate_subscripts") => RType::Base(DataType::Int4),
                    Some("regexp_matches") => RType::Base(DataType::Text).array_of(),
                    Some("_pg_expandarray") => RType::Record(EXPANDARRAY_FIELDS),
                    _ => RType::Base(DataType::Text),
                }
            }
        }
    }
}

/// A cast PostgreSQL has no cast for is 42846, before any row is read: from or to `date` or
/// `time` (`integer::date`, `interval::date`), and between `"char"` and any type but integer
/// and the text types (`"char"::smallint`). Other casts are checked as values are converted.
fn check_static_cast(from: RType, to: RType) -> Result<()> {
    // "char" casts only to and from integer and the text types, as PostgreSQL's pg_cast.
    let char_peer = |d: DataType| d == DataType::Int4 || d.is_text();
    let char_cast = match (from, to) {
        (RType::Catalog(CatalogType::Char), RType::Base(t)) if !char_peer(t) => Some(t),
        (RType::Base(f), RType::Catalog(CatalogType::Char)) if !char_peer(f) => Some(f),
        _ => None,
    };
    if let Some(other) = char_cast {
        let (f, t) = match from {
            RType::Base(_) => (other.name(), "\"char\"".to_string()),
            _ => ("\"char\"".to_string(), other.name()),
        };
        return Err(Error::CannotCoerce(format!("cannot cast type {f} to {t}")));
    }
    if let (RType::Base(f), RType::Base(t)) = (from, to) {
        let dated = |d: DataType| matches!(d, DataType::Date | DataType::Time);
        if (dated(f) || dated(t)) && !super::types::castable(f, t, true) {
            return Err(Error::CannotCoerce(format!(
                "cannot cast type {} to {}",
                f.name(),
                t.name()
            )));
        }
    }
    Ok(())
}

/// One select-list item: its expression (none for a column of `*`), the column index
/// of a `*` column, and the output name.
type SelectItem<'s> = (Option<&'s ast::Expr>, Option<usize>, String);

/// The arguments of one call as written (see `RelBinder::call_args`).
/// 42883 for named arguments to a set-returning function or an aggregate: none of them
/// has parameter names, so PostgreSQL finds no function.
fn no_named_parameters(name: &str) -> Error {
    Error::UndefinedFunction(format!(
        "function {name} with named arguments does not exist"
    ))
    .with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}

struct CallArgs<'f> {
    /// `f(DISTINCT ...)`.
    distinct: bool,
    /// `f(*)`.
    star: bool,
    /// The argument expressions.
    args: Vec<&'f ast::Expr>,
    /// `f(x ORDER BY ...)`: the keys.
    order: Vec<&'f ast::OrderByExpr>,
    /// Each argument's name (`days => 10`), `None` for a positional one.
    names: Vec<Option<String>>,
}

fn agg_type(a: &RelAgg) -> RType {
    a.ty
}

/// An aggregate's result type and the type its partial state reads, from its row of the
/// function table and its argument's static type (`None`: `count(*)`). Catalog types
/// are read as the type they are held as (an oid as a bigint) and kept as the result
/// of `min`/`max`. Errors: 42883 when PostgreSQL has no such overload.
/// For an ordered-set aggregate (`percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`), which
/// one, after checking the call's shape as PostgreSQL does; `None` for another aggregate.
/// Errors: 42883 for WITHIN GROUP missing from an ordered-set aggregate or given to
/// another (no such function) and for a wrong number of arguments, 0A000 for one OVER a
/// window.
fn ordered_set_call(
    def: &super::functions::AggDef,
    f: &ast::Function,
    name: &str,
    window: bool,
    direct: usize,
) -> Result<Option<crate::agg::ordered::OrderedSetFunc>> {
    let super::functions::AggKernel::OrderedSet(func) = def.kernel else {
        if !f.within_group.is_empty() {
            return Err(Error::UndefinedFunction(format!(
                "function {name} with WITHIN GROUP does not exist: {name} is not an \
                 ordered-set aggregate"
            )));
        }
        return Ok(None);
    };
    if window {
        return Err(unsupported(format!(
            "OVER is not supported for ordered-set aggregate {name}"
        )));
    }
    if f.within_group.is_empty() {
        return Err(Error::UndefinedFunction(format!(
            "function {name} without WITHIN GROUP does not exist: {name} is an ordered-set \
             aggregate, called as {name}(...) WITHIN GROUP (ORDER BY ...)"
        )));
    }
    if direct != func.direct_args() || f.within_group.len() != 1 {
        return Err(Error::UndefinedFunction(format!(
            "function {name} with {direct} direct and {} aggregated arguments does not exist",
            f.within_group.len()
        )));
    }
    Ok(Some(func))
}

fn agg_result_type(
    def: &super::functions::AggDef,
    arg: Option<RType>,
) -> Result<(RType, DataType)> {
    use super::functions::Ret;
    let held = arg.map(|t| match t {
        RType::Base(d) => d,
        RType::Catalog(c) => c.held_as(),
        RType::Reg(_) => DataType::Int8,
        RType::Unknown | RType::Record(_) => DataType::Text,
    });
    let Some((ret, _)) = def.overload(held) else {
        return Err(Error::UndefinedFunction(format!(
            "function {}({}) does not exist",
            def.name,
            arg.map_or("*".to_string(), |t| t.name())
        )));
    };
    let arg = arg.unwrap_or(RType::Base(DataType::Int8));
    let ty = match ret {
        Ret::Is(t) => RType::Base(t),
        Ret::SameAsArg => match arg {
            RType::Base(DataType::Bpchar(_)) => RType::Base(DataType::Bpchar(None)),
            RType::Base(d) if d.is_text() => RType::Base(DataType::Text),
            // PostgreSQL has no min/max of name or "char": they read them as text.
            RType::Unknown | RType::Catalog(CatalogType::Name | CatalogType::Char) => {
                RType::Base(DataType::Text)
            }
            other => other,
        },
        Ret::ArrayOfArg => arg.array_of(),
    };
    Ok((ty, held.unwrap_or(DataType::Int8)))
}

/// Result types of the evaluator's own functions, from the function table (text for
/// any other).
fn func_type(name: &str) -> RType {
    match super::functions::catalog_function(name) {
        Some(super::functions::Returns::Value(t)) => t,
        _ => RType::Base(DataType::Text),
    }
}

/// The disjunction of `parts` (at least one), three-valued, as the expression binder's
/// OR evaluates it: each part an argument evaluated only when the ones before it are not
/// true.
fn or(parts: Vec<RExpr>) -> RExpr {
    let expr = (1..parts.len()).fold(Expr::Column(0), |acc, i| Expr::Binary {
        op: super::plan::BinaryOp::Or,
        left: Box::new(acc),
        right: Box::new(Expr::Column(i)),
    });
    let expr = Expr::Cast {
        expr: Box::new(expr),
        to: DataType::Bool,
    };
    RExpr::Template { expr, args: parts }
}

/// The type a column of a set operation takes from its two branches' types, by
/// PostgreSQL's rules (select_common_type): unknown takes the other's, two unknowns are
/// text, numbers widen (`integer UNION numeric` is numeric). Errors: 42804.
fn set_op_type(word: &str, l: RType, r: RType) -> Result<RType> {
    Ok(match (l, r) {
        (RType::Unknown, RType::Unknown) => RType::Base(DataType::Text),
        (RType::Unknown, t) | (t, RType::Unknown) => t,
        (RType::Base(a), RType::Base(b)) => {
            RType::Base(super::types::select_common_type(a, b).ok_or_else(|| {
                Error::DatatypeMismatch(format!(
                    "{word} types {} and {} cannot be matched",
                    a.name(),
                    b.name()
                ))
            })?)
        }
        (l, _) => l,
    })
}

/// `body` (a set operation's branch with columns `have`) with each column cast to the
/// type of `want` where the two differ: the casts wrap a SELECT's output expressions or
/// a VALUES row's, in place, so that what the branch reads of outer rows (a correlated
/// or LATERAL subquery) stays where it is; any other branch becomes a SELECT over it as
/// a subquery.
fn conform_branch(body: RelBody, have: &[(String, RType)], want: &[(String, RType)]) -> RelBody {
    let differs =
        |(h, w): (&(String, RType), &(String, RType))| h.1 != w.1 && matches!(w.1, RType::Base(_));
    if !have.iter().zip(want).any(differs) {
        return body;
    }
    let cast_all = |exprs: &mut Vec<RExpr>| {
        for (e, (h, w)) in exprs.iter_mut().zip(have.iter().zip(want)) {
            if let (RType::Base(to), true) = (w.1, differs((h, w))) {
                let inner = std::mem::replace(e, RExpr::Lit(Value::Null));
                *e = RExpr::Template {
                    expr: Expr::Cast {
                        expr: Box::new(Expr::Column(0)),
                        to,
                    },
                    args: vec![inner],
                };
            }
        }
    };
    let body = match body {
        RelBody::Select(mut s) => {
            cast_all(&mut s.projection);
            return RelBody::Select(s);
        }
        RelBody::Values(mut rows) => {
            rows.iter_mut().for_each(cast_all);
            return RelBody::Values(rows);
        }
        other => other,
    };
    let projection = have
        .iter()
        .zip(want)
        .enumerate()
        .map(|(idx, (h, w))| {
            let col = RExpr::Col { up: 0, idx };
            match w.1 {
                RType::Base(to) if differs((h, w)) => RExpr::Template {
                    expr: Expr::Cast {
                        expr: Box::new(Expr::Column(0)),
                        to,
                    },
                    args: vec![col],
                },
                _ => col,
            }
        })
        .collect();
    let inner = RelQuery {
        ctes: vec![],
        body,
        order_by: vec![],
        limit: None,
        with_ties: false,
        offset: None,
        columns: have.to_vec(),
        catalog_params: Vec::new(),
    };
    RelBody::Select(Box::new(RelSelect {
        from: Some(RelFrom::Sub(Box::new(inner))),
        filter: None,
        group: None,
        having: None,
        projection,
        distinct: false,
        distinct_on: None,
        sort_keys: vec![],
        windows: vec![],
        arrays: want.iter().map(|c| array_elem(c.1)).collect(),
        set_funcs: vec![],
    }))
}

/// Add a relation to the FROM level being built. Errors: 42712 for an alias the level
/// has already (`FROM ta, ta`).
/// The arguments of a function in FROM, each an expression. Errors: 42601 for a named
/// argument or `*`.
fn plain_args<'a>(name: &str, args: &'a [ast::FunctionArg]) -> Result<Vec<&'a ast::Expr>> {
    args.iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
            ast::FunctionArg::Named { .. } | ast::FunctionArg::ExprNamed { .. } => {
                Err(no_named_parameters(name))
            }
            other => Err(Error::Syntax(format!(
                "syntax error at or near \"{other}\""
            ))),
        })
        .collect()
}

/// The level a FROM item's function arguments or LATERAL subquery are bound in: the
/// items before it, at their place in the level's row.
fn lateral_level(level: &Level) -> Level {
    Level {
        rels: level.rels.clone(),
        width: level.width,
        types: level.types.clone(),
        ..Level::default()
    }
}

/// The first and last columns of `seen` (see [`lateral_level`]) that the item bound in
/// it reads, if any. Errors: 0A000 when it is before `avail`, where the row the item is evaluated
/// with starts (no FROM item can be evaluated before the first).
fn lateral_read(seen: &Level, avail: Option<usize>) -> Result<Option<(usize, usize)>> {
    let Some((first, last)) = seen.refs.get() else {
        return Ok(None);
    };
    if avail.is_none_or(|a| first < a) {
        return Err(unsupported(
            "a LATERAL reference to a FROM item the join does not give it is not supported",
        ));
    }
    Ok(Some((first, last)))
}

fn push_rel(
    level: &mut Level,
    alias: String,
    schema: Option<String>,
    columns: Vec<String>,
    types: Vec<RType>,
) -> Result<()> {
    if !alias.is_empty() && level.rels.iter().any(|r| r.alias == alias) {
        return Err(Error::DuplicateAlias(alias));
    }
    let n = columns.len();
    level.rels.push(ScopeRel {
        alias,
        schema,
        columns,
        hidden: vec![false; n],
        offset: level.width,
        table: None,
    });
    level.width += n;
    level.types.extend(types);
    Ok(())
}

/// `cols` renamed by the column list of `alias`, when it has one. Errors: 42P10 for more
/// names than columns, as PostgreSQL's.
fn rename(mut cols: Vec<String>, alias: &Option<ast::TableAlias>) -> Result<Vec<String>> {
    if let Some(a) = alias {
        if a.columns.len() > cols.len() {
            return Err(Error::InvalidColumnReference(format!(
                "table \"{}\" has {} columns available but {} columns specified",
                norm(&a.name),
                cols.len(),
                a.columns.len()
            )));
        }
        for (c, n) in cols.iter_mut().zip(&a.columns) {
            *c = norm(&n.name);
        }
    }
    Ok(cols)
}

/// An ORDER BY item's (descending, NULLs first): see `crate::sql::sort_order`.
fn direction(o: &ast::OrderByExpr) -> Result<(bool, bool)> {
    crate::sql::sort_order(&o.options)
}

fn ordinal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            // An integer constant: one past int4 is numeric, no position.
            ast::Value::Number(n, _) => n.parse::<i32>().ok().and_then(|n| usize::try_from(n).ok()),
            _ => None,
        },
        _ => None,
    }
}

fn bare_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Identifier(id) => Some(norm(id)),
        _ => None,
    }
}

/// An ORDER BY ordinal outside the select list is an error, as in PostgreSQL.
/// Checks an ORDER BY or DISTINCT ON item (`clause` names which) that is a constant, as
/// PostgreSQL reads it: an integer is a position in the select list, any other constant
/// (`'a'`, `1.5`, `NULL`, `true`) is refused. Errors: 42P10 for a position out of the
/// list, 42601 for another constant.
fn check_ordinal(e: &ast::Expr, ncols: usize, clause: &str) -> Result<()> {
    match ordinal(e) {
        Some(n) if n == 0 || n > ncols => Err(Error::InvalidColumnReference(format!(
            "{clause} position {n} is not in select list"
        ))),
        Some(_) => Ok(()),
        None if matches!(e, ast::Expr::Value(_)) => {
            Err(Error::Syntax(format!("non-integer constant in {clause}")))
        }
        None => Ok(()),
    }
}

/// A SELECT block's DISTINCT clause.
enum Distinct<'a> {
    /// None (or ALL).
    No,
    /// DISTINCT: whole rows.
    Rows,
    /// DISTINCT ON (these keys).
    On(&'a [ast::Expr]),
}

/// An ORDER BY item naming an output column: an ordinal or a bare output name.
fn output_index(e: &ast::Expr, cols: &[(String, RType)]) -> Option<usize> {
    if let Some(n) = ordinal(e) {
        return (n >= 1 && n <= cols.len()).then(|| n - 1);
    }
    let name = bare_name(e)?;
    let mut hits = cols.iter().enumerate().filter(|(_, c)| c.0 == name);
    let first = hits.next()?.0;
    Some(first)
}

/// Whether an expression's default name beats an enclosing cast's type name.
fn strong_name(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Identifier(_)
        | ast::Expr::CompoundIdentifier(_)
        | ast::Expr::Function(_)
        | ast::Expr::Case { .. }
        | ast::Expr::Exists { .. }
        | ast::Expr::Array(_)
        | ast::Expr::Subquery(_) => true,
        ast::Expr::Nested(inner) | ast::Expr::Collate { expr: inner, .. } => strong_name(inner),
        _ => false,
    }
}

/// PostgreSQL's default column name for a select item.
fn default_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(id) => norm(id),
        ast::Expr::CompoundIdentifier(ids) => ids.last().map(norm).unwrap_or_default(),
        ast::Expr::Function(f) => f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(norm)
            .unwrap_or_else(|| "?column?".into()),
        // A cast of a column or function keeps its name; of anything else, the type's.
        ast::Expr::Cast {
            expr, data_type, ..
        } => match default_name(expr) {
            n if n != "?column?" && strong_name(expr) => n,
            _ => {
                let t = data_type.to_string().to_lowercase();
                t.rsplit('.').next().unwrap_or(&t).to_string()
            }
        },
        ast::Expr::Nested(inner) | ast::Expr::Collate { expr: inner, .. } => default_name(inner),
        ast::Expr::Case { .. } => "case".into(),
        ast::Expr::Exists { .. } => "exists".into(),
        // Special syntax is named after the function it calls.
        ast::Expr::Ceil { .. } => "ceil".into(),
        ast::Expr::Floor { .. } => "floor".into(),
        ast::Expr::Position { .. } => "position".into(),
        ast::Expr::Extract { .. } => "extract".into(),
        ast::Expr::Substring { .. } => "substring".into(),
        ast::Expr::Overlay { .. } => "overlay".into(),
        ast::Expr::Trim { trim_where, .. } => match trim_where {
            Some(ast::TrimWhereField::Leading) => "ltrim",
            Some(ast::TrimWhereField::Trailing) => "rtrim",
            _ => "btrim",
        }
        .into(),
        ast::Expr::AtTimeZone { .. } => "timezone".into(),
        ast::Expr::BinaryOp {
            op: ast::BinaryOperator::Overlaps,
            ..
        } => "overlaps".into(),
        ast::Expr::Interval(_) => "interval".into(),
        // `(f(x)).n` and `t.col[1]` are named after their last name.
        ast::Expr::CompoundFieldAccess { root, access_chain } => match access_chain.last() {
            Some(ast::AccessExpr::Dot(ast::Expr::Identifier(id))) => norm(id),
            _ => match access_chain.first() {
                Some(ast::AccessExpr::Dot(ast::Expr::Identifier(id))) => norm(id),
                _ => default_name(root),
            },
        },
        ast::Expr::Array(_) => "array".into(),
        ast::Expr::Subquery(q) => match &*q.body {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => norm(alias),
                Some(ast::SelectItem::UnnamedExpr(e)) => default_name(e),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        _ => "?column?".into(),
    }
}

/// 42P19 text of a recursive query that is not `anchor UNION [ALL] step`.
const NO_UNION: &str = "does not have the form non-recursive-term UNION [ALL] recursive-term";
/// 42P19 text of a recursive query whose non-recursive term reads the query itself.
const IN_ANCHOR: &str = "must not appear within its non-recursive term";

/// Turns "relation `name` does not exist", met while binding the WITH RECURSIVE query
/// `name` where it is not yet visible, into PostgreSQL's 42P19 (`what` says which rule
/// the self-reference breaks); any other error passes through.
fn self_reference(e: Error, name: &str, recursive: bool, what: &str) -> Error {
    match e.kind() {
        Error::UndefinedTable(t) if recursive && t.as_str() == name => {
            Error::InvalidRecursion(if what == NO_UNION {
                format!("recursive query \"{name}\" {what}")
            } else {
                format!("recursive reference to query \"{name}\" {what}")
            })
        }
        _ => e,
    }
}
