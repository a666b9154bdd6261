//! Binding of finite relational queries: SELECTs over the system catalogs (and, later,
//! stored tables) with joins, subqueries, CTEs, set operations, grouping and sorting.
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
mod series;
mod srf;
mod walk;

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
        op: CmpOp,
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
    fn query(&mut self, q: &ast::Query) -> Result<RelQuery> {
        self.query_depth += 1;
        if self.query_depth > 64 {
            return Err(Error::StatementTooComplex(
                "query nesting is deeper than 64 levels".into(),
            ));
        }
        let r = super::deep(|| self.query_inner(q));
        self.query_depth -= 1;
        r
    }

    fn query_inner(&mut self, q: &ast::Query) -> Result<RelQuery> {
        let q = &*super::parse::fetch_as_limit(q)?;
        if !q.locks.is_empty() {
            return Err(unsupported("FOR UPDATE is not supported"));
        }
        let ctes_before = self.ctes.len();
        let mut ctes = Vec::new();
        if let Some(with) = &q.with {
            let mut seen = std::collections::HashSet::new();
            for c in &with.cte_tables {
                let name = norm(&c.alias.name);
                if !seen.insert(name.clone()) {
                    return Err(Error::DuplicateCteName(name));
                }
                if with.recursive {
                    if let Some((id, plan)) = self.recursive_cte(c, &name)? {
                        ctes.push((id, plan));
                        continue;
                    }
                }
                let mut plan = self
                    .query(&c.query)
                    .map_err(|e| self_reference(e, &name, with.recursive, NO_UNION))?;
                let names: Vec<String> = if c.alias.columns.is_empty() {
                    plan.columns.iter().map(|(n, _)| n.clone()).collect()
                } else {
                    c.alias.columns.iter().map(|cd| norm(&cd.name)).collect()
                };
                for (col, n) in plan.columns.iter_mut().zip(&names) {
                    col.0 = n.clone();
                }
                let types = plan.columns.iter().map(|(_, t)| *t).collect();
                let id = self.next_cte;
                self.next_cte += 1;
                self.ctes.push((name, id, names, types));
                ctes.push((id, plan));
            }
        }
        let order: Vec<&ast::OrderByExpr> = match &q.order_by {
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(v) => v.iter().collect(),
                ast::OrderByKind::All(_) => return Err(unsupported("ORDER BY ALL")),
            },
            None => vec![],
        };
        let (body, columns, order_by) = match &*q.body {
            ast::SetExpr::Select(sel) => {
                let (s, cols, ob) = self.select(sel, &order)?;
                (RelBody::Select(Box::new(s)), cols, ob)
            }
            other => {
                let (body, cols) = self.set_expr(other)?;
                let mut ob = Vec::new();
                for o in &order {
                    check_ordinal(&o.expr, cols.len())?;
                    let i = output_index(&o.expr, &cols).ok_or_else(|| {
                        unsupported(
                            "ORDER BY over UNION/INTERSECT/EXCEPT must name an output column",
                        )
                    })?;
                    ob.push((i, desc(o), nulls_first(o)));
                }
                (body, cols, ob)
            }
        };
        let (limit, offset) = self.limit_clause(q)?;
        self.ctes.truncate(ctes_before);
        Ok(RelQuery {
            ctes,
            body,
            order_by,
            limit,
            offset,
            columns,
            catalog_params: Vec::new(),
        })
    }

    /// `name AS (anchor UNION [ALL] step)` of a WITH RECURSIVE, where `step` may read
    /// `name`; `None` when the CTE has another shape (then it is an ordinary one). The CTE
    /// is registered (visible to what follows) when this returns.
    fn recursive_cte(&mut self, c: &ast::Cte, name: &str) -> Result<Option<(usize, RelQuery)>> {
        let ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = &*c.query.body
        else {
            return Ok(None);
        };
        if c.query.order_by.is_some() || c.query.limit_clause.is_some() {
            return Err(unsupported(
                "ORDER BY and LIMIT in a recursive query are not supported",
            ));
        }
        let all = matches!(set_quantifier, ast::SetQuantifier::All);
        let (anchor, anchor_cols) = self
            .set_expr(left)
            .map_err(|e| self_reference(e, name, true, IN_ANCHOR))?;
        let names: Vec<String> = if c.alias.columns.is_empty() {
            anchor_cols.iter().map(|(n, _)| n.clone()).collect()
        } else {
            c.alias.columns.iter().map(|cd| norm(&cd.name)).collect()
        };
        if names.len() != anchor_cols.len() {
            return Err(Error::Syntax(format!(
                "WITH query \"{name}\" has {} columns available but {} columns specified",
                anchor_cols.len(),
                names.len()
            )));
        }
        let columns: Vec<(String, RType)> = names
            .iter()
            .zip(&anchor_cols)
            .map(|(n, (_, t))| (n.clone(), *t))
            .collect();
        let id = self.next_cte;
        self.next_cte += 1;
        self.ctes.push((
            name.to_string(),
            id,
            names,
            columns.iter().map(|c| c.1).collect(),
        ));
        let (step, step_cols) = self.set_expr(right)?;
        if step_cols.len() != columns.len() {
            return Err(Error::Syntax(
                "each UNION query must have the same number of columns".into(),
            ));
        }
        let wrap = |body, columns: Vec<(String, RType)>| RelQuery {
            ctes: vec![],
            body,
            order_by: vec![],
            limit: None,
            offset: None,
            columns,
            catalog_params: Vec::new(),
        };
        let plan = wrap(
            RelBody::Recursive {
                id,
                all,
                anchor: Box::new(wrap(anchor, anchor_cols)),
                step: Box::new(wrap(step, step_cols)),
            },
            columns,
        );
        Ok(Some((id, plan)))
    }

    fn limit_clause(&mut self, q: &ast::Query) -> Result<(Option<RExpr>, Option<RExpr>)> {
        let saved = std::mem::take(&mut self.levels);
        let r = (|| -> Result<_> {
            Ok(match &q.limit_clause {
                None => (None, None),
                Some(ast::LimitClause::LimitOffset {
                    limit,
                    offset,
                    limit_by,
                }) => {
                    if !limit_by.is_empty() {
                        return Err(unsupported("LIMIT BY"));
                    }
                    let l = match limit {
                        Some(e) => Some(self.refusing_srf(SRF_IN_LIMIT, |b| b.expr(e))?),
                        None => None,
                    };
                    let o = match offset {
                        Some(o) => Some(self.refusing_srf(SRF_IN_OFFSET, |b| b.expr(&o.value))?),
                        None => None,
                    };
                    (l, o)
                }
                Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                    (Some(self.expr(limit)?), Some(self.expr(offset)?))
                }
            })
        })();
        self.levels = saved;
        // A parameter of LIMIT or OFFSET is a bigint, as PostgreSQL infers it.
        if let Ok((l, o)) = &r {
            for e in [l, o].into_iter().flatten() {
                if let RExpr::Param(i) = e {
                    if let Some(slot @ None) = self.params.get_mut(*i) {
                        *slot = Some(crate::types::DataType::Int8);
                    }
                }
            }
        }
        r
    }

    fn set_expr(&mut self, s: &ast::SetExpr) -> Result<(RelBody, Vec<(String, RType)>)> {
        // A chain of set operations nests one level per operation.
        super::deep(|| self.set_expr_inner(s))
    }

    fn set_expr_inner(&mut self, s: &ast::SetExpr) -> Result<(RelBody, Vec<(String, RType)>)> {
        match s {
            ast::SetExpr::Select(sel) => {
                let (s, cols, _) = self.select(sel, &[])?;
                Ok((RelBody::Select(Box::new(s)), cols))
            }
            ast::SetExpr::Query(q) => {
                self.levels.push(Level::default());
                let inner = self.query(q);
                self.levels.pop();
                let inner = inner?;
                let cols = inner.columns.clone();
                Ok((
                    RelBody::Select(Box::new(RelSelect {
                        from: Some(RelFrom::Sub(Box::new(inner))),
                        filter: None,
                        group: None,
                        having: None,
                        projection: (0..cols.len())
                            .map(|idx| RExpr::Col { up: 0, idx })
                            .collect(),
                        distinct: false,
                        distinct_on: None,
                        sort_keys: vec![],
                        windows: vec![],
                        arrays: cols.iter().map(|c| array_elem(c.1)).collect(),
                        set_funcs: vec![],
                    })),
                    cols,
                ))
            }
            ast::SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let op = match op {
                    ast::SetOperator::Union => SetOp::Union,
                    ast::SetOperator::Intersect => SetOp::Intersect,
                    ast::SetOperator::Except | ast::SetOperator::Minus => SetOp::Except,
                };
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                let (lb, lc) = self.set_expr(left)?;
                let (rb, rc) = self.set_expr(right)?;
                if lc.len() != rc.len() {
                    return Err(Error::Syntax(format!(
                        "each {} query must have the same number of columns",
                        match op {
                            SetOp::Union => "UNION",
                            SetOp::Intersect => "INTERSECT",
                            SetOp::Except => "EXCEPT",
                        }
                    )));
                }
                let word = match op {
                    SetOp::Union => "UNION",
                    SetOp::Intersect => "INTERSECT",
                    SetOp::Except => "EXCEPT",
                };
                let cols: Vec<(String, RType)> = lc
                    .iter()
                    .zip(&rc)
                    .map(|((n, lt), (_, rt))| Ok((n.clone(), set_op_type(word, *lt, *rt)?)))
                    .collect::<Result<_>>()?;
                let lb = conform_branch(lb, &lc, &cols);
                let rb = conform_branch(rb, &rc, &cols);
                let wrap = |body, columns: Vec<(String, RType)>| RelQuery {
                    ctes: vec![],
                    body,
                    order_by: vec![],
                    limit: None,
                    offset: None,
                    columns,
                    catalog_params: Vec::new(),
                };
                Ok((
                    RelBody::SetOp {
                        op,
                        all,
                        left: Box::new(wrap(lb, cols.clone())),
                        right: Box::new(wrap(rb, cols.clone())),
                    },
                    cols,
                ))
            }
            ast::SetExpr::Values(v) => {
                self.levels.push(Level::default());
                let bound = self.refusing_srf(SRF_IN_VALUES, |b| b.values(v));
                self.levels.pop();
                let (rows, types) = bound?;
                let cols = types
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| (format!("column{}", i + 1), t))
                    .collect();
                Ok((RelBody::Values(rows), cols))
            }
            _ => Err(unsupported("this kind of query is not supported")),
        }
    }

    /// The rows of a VALUES list (bound in a level of their own, so a subquery's list
    /// reads the outer query's columns), each cell cast to its column's type, resolved
    /// over all rows (see [`Self::resolved_type`]; a column of unknown literals only is
    /// text). Errors: 42601 for rows of different lengths, 42804 for types that cannot
    /// be matched.
    fn values(&mut self, v: &ast::Values) -> Result<(Vec<Vec<RExpr>>, Vec<RType>)> {
        let mut rows: Vec<Vec<RExpr>> = Vec::new();
        for r in &v.rows {
            rows.push(r.iter().map(|e| self.expr(e)).collect::<Result<Vec<_>>>()?);
        }
        let n = rows.first().map_or(0, Vec::len);
        if rows.iter().any(|r| r.len() != n) {
            return Err(Error::Syntax(
                "VALUES lists must all be the same length".into(),
            ));
        }
        let types = (0..n)
            .map(|i| {
                let t = self.resolved_type("VALUES", rows.iter().map(|r| &r[i]))?;
                Ok(if t == RType::Unknown {
                    RType::Base(DataType::Text)
                } else {
                    t
                })
            })
            .collect::<Result<Vec<_>>>()?;
        for row in &mut rows {
            for (cell, to) in row.iter_mut().zip(&types) {
                let e = std::mem::replace(cell, RExpr::Lit(Value::Null));
                *cell = self.conformed(e, *to);
            }
        }
        Ok((rows, types))
    }

    /// The one type a VALUES column or the elements of an `ARRAY[...]` resolve to, as
    /// PostgreSQL's select_common_type does over all of them (`VALUES (1), (2.5)` and
    /// `ARRAY[1, 2.5]` are numeric; unknown literals take the others' type; unknown when
    /// all are). Errors: 42804 (`{word} types integer and text cannot be matched`).
    fn resolved_type<'e>(&self, word: &str, es: impl Iterator<Item = &'e RExpr>) -> Result<RType> {
        let mut t = RType::Unknown;
        for e in es {
            match self.static_type(e) {
                RType::Unknown => {}
                c if t == RType::Unknown => t = c,
                c => t = set_op_type(word, t, c)?,
            }
        }
        Ok(t)
    }

    /// `e` cast to the resolved type `to` of its VALUES column or array, when it is a
    /// plain type `e` is not of already.
    fn conformed(&mut self, e: RExpr, to: RType) -> RExpr {
        if self.static_type(&e) != to && matches!(to, RType::Base(_)) {
            self.cast(e, to)
        } else {
            e
        }
    }

    /// `ARRAY[a, b, ...]` of arrays: an array of one more dimension, of the common type
    /// of theirs (`integer[]` and `bigint[]` are `bigint[]`), each cast to it. Errors:
    /// 42804 for arrays of types without one (`integer[]` and `text[]`).
    fn nested_array(&mut self, elems: Vec<RExpr>) -> Result<RExpr> {
        let mut common: Option<ElemType> = None;
        for e in &elems {
            let t = self.static_type(e);
            let Some(x) = array_elem(t) else { continue };
            common = Some(match common {
                None => x,
                Some(c) if c == x => c,
                Some(c) => super::types::select_common_type(c.held_as(), x.held_as())
                    .map(ElemType::of)
                    .ok_or_else(|| {
                        Error::DatatypeMismatch(format!(
                            "ARRAY types {} and {} cannot be matched",
                            RType::Catalog(CatalogType::Array(c)).name(),
                            t.name()
                        ))
                    })?,
            });
        }
        let e = common.unwrap_or(ElemType::Text);
        let to = RType::Catalog(CatalogType::Array(e));
        let elems = (elems.into_iter())
            .map(|x| match self.static_type(&x) == to {
                true => x,
                false => RExpr::Cast(Box::new(x), to),
            })
            .collect();
        Ok(RExpr::ArrayFunc("array_nest".into(), (e, e), elems))
    }

    /// `f` with set-returning calls refused with `refusal` (0A000), as PostgreSQL refuses
    /// them outside the select list; the refusal in force before is restored after.
    fn refusing_srf<T>(&mut self, refusal: &'static str, f: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.srf_refusal.replace(refusal);
        let r = f(self);
        self.srf_refusal = before;
        r
    }

    /// Bind a SELECT block with the ORDER BY of its query.
    #[allow(clippy::type_complexity)]
    fn select(
        &mut self,
        sel: &ast::Select,
        order: &[&ast::OrderByExpr],
    ) -> Result<(RelSelect, Vec<(String, RType)>, Vec<(usize, bool, bool)>)> {
        if sel.into.is_some() {
            return Err(unsupported("SELECT INTO is not supported"));
        }
        let distinct = match &sel.distinct {
            None | Some(ast::Distinct::All) => Distinct::No,
            Some(ast::Distinct::Distinct) => Distinct::Rows,
            Some(ast::Distinct::On(on)) => Distinct::On(on),
        };
        let mut level = Level::default();
        let from = self.bind_from_list(&sel.from, &mut level)?;
        self.levels.push(level);
        let r = self.select_body(sel, order, from, distinct);
        self.levels.pop();
        r
    }

    #[allow(clippy::type_complexity)]
    fn select_body(
        &mut self,
        sel: &ast::Select,
        order: &[&ast::OrderByExpr],
        from: Option<RelFrom>,
        distinct_kind: Distinct,
    ) -> Result<(RelSelect, Vec<(String, RType)>, Vec<(usize, bool, bool)>)> {
        let distinct = matches!(distinct_kind, Distinct::Rows);
        let filter = match &sel.selection {
            Some(e) => Some(self.refusing_srf(SRF_IN_WHERE, |b| b.expr(e))?),
            None => None,
        };
        let group_exprs: Vec<&ast::Expr> = match &sel.group_by {
            ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => v.iter().collect(),
            _ => {
                return Err(unsupported(
                    "GROUP BY ALL / ROLLUP / CUBE are not supported",
                ))
            }
        };
        let items = self.select_items(sel)?;
        let keys = self.group_keys(&group_exprs, &items)?;
        // Select list, HAVING and ORDER BY may hold aggregates.
        self.levels.last_mut().expect("level").agg_ok = true;
        let mut projection = Vec::new();
        let mut columns = Vec::new();
        for (e, idx, name) in &items {
            let bound = match (e, idx) {
                (Some(e), _) => {
                    if let Some(refused) = srf::conditional_srf(e) {
                        return Err(refused);
                    }
                    self.levels.last_mut().expect("level").srf_ok = true;
                    let bound = self.expr(e);
                    self.levels.last_mut().expect("level").srf_ok = false;
                    bound?
                }
                (None, Some(idx)) => RExpr::Col { up: 0, idx: *idx },
                _ => unreachable!("a select item is an expression or a column"),
            };
            columns.push((name.clone(), self.static_type(&bound)));
            projection.push(bound);
        }
        let having = match &sel.having {
            Some(h) => Some(self.refusing_srf(SRF_IN_HAVING, |b| b.expr(h))?),
            None => None,
        };
        let (mut sort_keys, order_by) = self.order_keys(order, distinct, &columns, &projection)?;
        let distinct_on = match distinct_kind {
            Distinct::On(on) => {
                Some(self.distinct_on(on, &columns, &projection, &mut sort_keys, &order_by)?)
            }
            _ => None,
        };
        let arrays = (columns.iter().map(|c| c.1))
            .chain(sort_keys.iter().map(|k| self.static_type(k)))
            .map(array_elem)
            .collect();
        let key_arrays = keys
            .iter()
            .map(|k| array_elem(self.static_type(k)))
            .collect();
        let level = self.levels.last_mut().expect("level");
        level.agg_ok = false;
        let aggs = std::mem::take(&mut level.aggs);
        let windows = std::mem::take(&mut level.windows);
        let set_funcs = std::mem::take(&mut level.set_funcs);
        let group = (!keys.is_empty() || !aggs.is_empty()).then(|| RelGroup {
            keys,
            arrays: key_arrays,
            aggs,
            width: level.width,
        });
        let (from, filter) = super::relational_pushdown::push_down(from, filter);
        Ok((
            RelSelect {
                from,
                filter,
                group,
                having,
                projection,
                distinct,
                distinct_on,
                sort_keys,
                windows,
                arrays,
                set_funcs,
            },
            columns,
            order_by,
        ))
    }

    /// The select list of `sel` as items (expression or column index, and output name),
    /// `*` and `rel.*` expanded to this level's visible columns. Errors: 42601 for `*`
    /// without FROM, 42P01 for an unknown `rel.*`.
    fn select_items<'s>(&self, sel: &'s ast::Select) -> Result<Vec<SelectItem<'s>>> {
        let mut items: Vec<SelectItem<'s>> = Vec::new();
        let level = self.levels.last().expect("level");
        for item in &sel.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push((Some(e), None, default_name(e))),
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((Some(expr), None, norm(alias)))
                }
                ast::SelectItem::Wildcard(_) => {
                    if level.rels.is_empty() {
                        return Err(Error::Syntax(
                            "SELECT * with no tables specified is not valid".into(),
                        ));
                    }
                    for r in &level.rels {
                        for (i, c) in r.columns.iter().enumerate() {
                            if !r.hidden[i] {
                                items.push((None, Some(r.offset + i), c.clone()));
                            }
                        }
                    }
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let q = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                            n.0.iter()
                                .filter_map(|p| p.as_ident().map(norm))
                                .collect::<Vec<_>>()
                                .join(".")
                        }
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                    };
                    let r = level
                        .rels
                        .iter()
                        .find(|r| {
                            r.alias == q
                                || r.schema.as_deref().map(|s| format!("{s}.{}", r.alias))
                                    == Some(q.clone())
                        })
                        .ok_or_else(|| Error::UndefinedTable(q.clone()))?;
                    for (i, c) in r.columns.iter().enumerate() {
                        items.push((None, Some(r.offset + i), c.clone()));
                    }
                }
                ast::SelectItem::ExprWithAliases { .. } => {
                    return Err(unsupported("multiple aliases are not supported"))
                }
            }
        }
        Ok(items)
    }

    /// The GROUP BY keys: an ordinal or an output name means that select item. Errors:
    /// 42P10 for an ordinal past the select list.
    fn group_keys(
        &mut self,
        group_exprs: &[&ast::Expr],
        items: &[SelectItem<'_>],
    ) -> Result<Vec<RExpr>> {
        let mut keys = Vec::new();
        for g in group_exprs {
            if matches!(
                g,
                ast::Expr::GroupingSets(_) | ast::Expr::Rollup(_) | ast::Expr::Cube(_)
            ) || matches!(g, ast::Expr::Tuple(t) if t.is_empty())
            {
                return Err(unsupported(
                    "GROUPING SETS, ROLLUP, CUBE and GROUP BY () are not supported",
                ));
            }
            let e = match ordinal(g) {
                Some(n) => match items.get(n.wrapping_sub(1)) {
                    Some((Some(e), _, _)) => self.expr(e)?,
                    Some((None, Some(idx), _)) => RExpr::Col { up: 0, idx: *idx },
                    _ => {
                        return Err(Error::InvalidColumnReference(format!(
                            "GROUP BY position {n} is not in select list"
                        )))
                    }
                },
                None => match self.expr(g) {
                    Ok(e) => e,
                    Err(err) => match bare_name(g).and_then(|n| items.iter().find(|i| i.2 == n)) {
                        Some((Some(e), _, _)) => self.expr(e)?,
                        _ => return Err(err),
                    },
                },
            };
            keys.push(e);
        }
        Ok(keys)
    }

    /// The ORDER BY keys as output column indexes (with DESC and NULLS FIRST), and the
    /// hidden sort keys appended after the projected columns. Errors: 42P10 for a key
    /// outside the select list of a SELECT DISTINCT or an ordinal past it.
    #[allow(clippy::type_complexity)]
    fn order_keys(
        &mut self,
        order: &[&ast::OrderByExpr],
        distinct: bool,
        columns: &[(String, RType)],
        projection: &[RExpr],
    ) -> Result<(Vec<RExpr>, Vec<(usize, bool, bool)>)> {
        let mut sort_keys = Vec::new();
        let mut order_by = Vec::new();
        for o in order {
            check_ordinal(&o.expr, columns.len())?;
            let i = match output_index(&o.expr, columns) {
                Some(i) => i,
                None => {
                    let e = self.expr(&o.expr)?;
                    match projection.iter().position(|p| *p == e) {
                        Some(i) => i,
                        None if distinct => return Err(Error::InvalidColumnReference(
                            "for SELECT DISTINCT, ORDER BY expressions must appear in select list"
                                .into(),
                        )),
                        None => {
                            sort_keys.push(e);
                            columns.len() + sort_keys.len() - 1
                        }
                    }
                }
            };
            order_by.push((i, desc(o), nulls_first(o)));
        }
        Ok((sort_keys, order_by))
    }

    /// `DISTINCT ON (keys)`: each key as a column of the projected row (an output column,
    /// or a hidden sort key added), and the order its first rows are taken in. As in
    /// PostgreSQL, the ORDER BY must begin with the keys (in any order): 42P10 otherwise.
    fn distinct_on(
        &mut self,
        on: &[ast::Expr],
        columns: &[(String, RType)],
        projection: &[RExpr],
        sort_keys: &mut Vec<RExpr>,
        order_by: &[(usize, bool, bool)],
    ) -> Result<DistinctOn> {
        let mut keys = Vec::new();
        for e in on {
            check_ordinal(e, columns.len())?;
            let i = match output_index(e, columns) {
                Some(i) => i,
                None => {
                    let e = self.expr(e)?;
                    let hidden = sort_keys.iter().position(|k| *k == e);
                    match (projection.iter().position(|p| *p == e), hidden) {
                        (Some(i), _) => i,
                        (None, Some(h)) => columns.len() + h,
                        (None, None) => {
                            sort_keys.push(e);
                            columns.len() + sort_keys.len() - 1
                        }
                    }
                }
            };
            keys.push(i);
        }
        let lead = order_by.iter().take(keys.len());
        if lead.clone().any(|(i, _, _)| !keys.contains(i)) {
            return Err(Error::InvalidColumnReference(
                "SELECT DISTINCT ON expressions must match initial ORDER BY expressions".into(),
            ));
        }
        let order = if order_by.is_empty() {
            keys.iter().map(|&i| (i, false, false)).collect()
        } else {
            order_by.to_vec()
        };
        Ok((keys, order))
    }

    fn bind_from_list(
        &mut self,
        from: &[ast::TableWithJoins],
        level: &mut Level,
    ) -> Result<Option<RelFrom>> {
        let mut acc: Option<RelFrom> = None;
        for t in from {
            let left_width = level.width;
            // An item after the first may read the items before it (LATERAL): their row
            // starts the level's row.
            let avail = acc.is_some().then_some(0);
            let (item, read) = self.table_with_joins(t, level, avail)?;
            acc = Some(match acc {
                None => item,
                Some(left) => RelFrom::Join {
                    kind: JoinKind::Inner,
                    left: Box::new(left),
                    right: Box::new(item),
                    on: None,
                    left_width,
                    right_width: level.width - left_width,
                    lateral: read.map(|_| 0),
                },
            });
        }
        Ok(acc)
    }

    /// The items of one FROM entry and its joins, and the first column of the level's
    /// row before them that they read (LATERAL), of those from `avail` on, which the row
    /// it is evaluated with has (`None`: none).
    fn table_with_joins(
        &mut self,
        t: &ast::TableWithJoins,
        level: &mut Level,
        avail: Option<usize>,
    ) -> Result<(RelFrom, Option<(usize, usize)>)> {
        let start = level.width;
        let (mut acc, mut outer_read) = self.factor(&t.relation, level, avail)?;
        for j in &t.joins {
            let left_width = level.width - start;
            let rels_before = level.rels.len();
            // A joined item sees this join's left row and what the entry's own row has.
            let seen_from = Some(avail.map_or(start, |a| a.min(start)));
            let (right, read) = self.factor(&j.relation, level, seen_from)?;
            // What it reads before the entry comes from the row the entry is evaluated
            // with; what it reads of the join's left row makes the join LATERAL.
            if let Some((first, _)) = read.filter(|r| r.0 < start) {
                let (a, b) = outer_read.unwrap_or((first, first));
                outer_read = Some((a.min(first), b.max(first)));
            }
            let local = read.map(|r| r.1).filter(|last| *last >= start);
            let right_width = level.width - start - left_width;
            let (kind, constraint) = match &j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => {
                    (JoinKind::Inner, Some(c))
                }
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => {
                    (JoinKind::Left, Some(c))
                }
                ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                    (JoinKind::Right, Some(c))
                }
                ast::JoinOperator::FullOuter(c) => (JoinKind::Full, Some(c)),
                ast::JoinOperator::CrossJoin(_) => (JoinKind::Inner, None),
                other => return Err(unsupported(format!("join kind {other:?} is not supported"))),
            };
            if let (Some(last), JoinKind::Right | JoinKind::Full) = (local, kind) {
                let alias = (level.rels.iter())
                    .find(|r| (r.offset..r.offset + r.columns.len()).contains(&last))
                    .map_or("", |r| r.alias.as_str());
                return Err(Error::InvalidColumnReference(format!(
                    "invalid reference to FROM-clause entry for table \"{alias}\""
                ))
                .with_detail(
                    "The combining JOIN type must be INNER or LEFT for a LATERAL reference.",
                ));
            }
            let on = match constraint {
                None | Some(ast::JoinConstraint::None) => None,
                Some(ast::JoinConstraint::On(e)) => {
                    // ON sees this join's inputs (and outer levels), as a level of its own
                    // whose row is the join's row.
                    let mut sub = level.clone();
                    sub.width -= start;
                    sub.types = sub.types[start..].to_vec();
                    sub.rels = level
                        .rels
                        .iter()
                        .filter(|r| r.offset >= start)
                        .map(|r| ScopeRel {
                            offset: r.offset - start,
                            ..r.clone()
                        })
                        .collect();
                    self.levels.push(sub);
                    let e = self.refusing_srf(SRF_IN_JOIN, |b| b.expr(e));
                    self.levels.pop();
                    Some(e?)
                }
                Some(c @ (ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural)) => {
                    let names: Vec<String> = match c {
                        ast::JoinConstraint::Using(cols) => cols
                            .iter()
                            .map(|c| {
                                c.0.last()
                                    .and_then(|p| p.as_ident())
                                    .map(norm)
                                    .unwrap_or_default()
                            })
                            .collect(),
                        _ => natural_columns(&level.rels, start, rels_before)?,
                    };
                    let mut conj = Vec::new();
                    for name in names {
                        let find = |rels: &[ScopeRel]| {
                            rels.iter().find_map(|r| {
                                r.columns
                                    .iter()
                                    .position(|n| *n == name)
                                    .map(|i| (r.offset + i - start, r.offset + i))
                            })
                        };
                        let left_rels: Vec<ScopeRel> = level.rels[..rels_before]
                            .iter()
                            .filter(|r| r.offset >= start)
                            .cloned()
                            .collect();
                        let (l, _) = find(&left_rels).ok_or_else(|| {
                            Error::UndefinedColumn(format!(
                                "column \"{name}\" specified in USING clause does not exist in left table"
                            ))
                        })?;
                        let (r, abs) = find(&level.rels[rels_before..]).ok_or_else(|| {
                            Error::UndefinedColumn(format!(
                                "column \"{name}\" specified in USING clause does not exist in right table"
                            ))
                        })?;
                        for rel in &mut level.rels[rels_before..] {
                            if abs >= rel.offset && abs < rel.offset + rel.columns.len() {
                                rel.hidden[abs - rel.offset] = true;
                            }
                        }
                        // The level is not pushed yet: the operands' types are its own.
                        let (lt, rt) = (level.types[start + l], level.types[start + r]);
                        let l = self.bpchar_operand(RExpr::Col { up: 0, idx: l }, lt, rt);
                        let r = self.bpchar_operand(RExpr::Col { up: 0, idx: r }, rt, lt);
                        conj.push(RExpr::Cmp {
                            op: CmpOp::Eq,
                            arrays: array_elems(lt, rt),
                            left: Box::new(l),
                            right: Box::new(r),
                        });
                    }
                    // A NATURAL join without common columns is a cross join.
                    (!conj.is_empty()).then_some(RExpr::And(conj))
                }
                Some(ast::JoinConstraint::UsingAlias(..)) => {
                    return Err(unsupported("USING ... AS is not supported"))
                }
            };
            acc = RelFrom::Join {
                kind,
                left: Box::new(acc),
                right: Box::new(right),
                on,
                left_width,
                right_width,
                lateral: local.map(|_| start),
            };
        }
        Ok((acc, outer_read))
    }

    /// A set-returning function in FROM (`generate_series(1, 3)`, `unnest(array)`,
    /// `UNNEST(current_schemas(true))`): its columns join the level as one relation.
    fn function_in_from(
        &mut self,
        (fname, ordinality): (String, bool),
        args: &[&ast::Expr],
        alias: &Option<ast::TableAlias>,
        (level, avail): (&mut Level, Option<usize>),
    ) -> Result<(RelFrom, Option<(usize, usize)>)> {
        // A function in FROM sees the items before it (PostgreSQL's implicit LATERAL)
        // and the outer levels.
        self.levels.push(lateral_level(level));
        let bound: Result<Vec<RExpr>> = self.refusing_srf(SRF_IN_FROM_ARGS, |b| {
            args.iter().map(|e| b.expr(e)).collect()
        });
        let bound = match bound {
            Ok(b) if fname == "generate_series" => self.series_args(b),
            other => other,
        };
        // unnest's columns have their arrays' element types (typed while the
        // arguments' level is still pushed).
        let elems: Vec<RType> = bound.as_ref().map_or(vec![], |b| {
            b.iter()
                .map(|a| {
                    self.static_type(a)
                        .elem()
                        .unwrap_or(RType::Base(DataType::Text))
                })
                .collect()
        });
        let series = bound
            .as_ref()
            .map_or(RType::Unknown, |b| self.series_type(b));
        let seen = self.levels.pop().expect("pushed");
        let bound = bound?;
        let read = lateral_read(&seen, avail)?;
        let cols: Vec<(&str, RType)> = match fname.as_str() {
            "generate_series" => vec![("generate_series", series)],
            // Several arrays are read side by side, the shorter ones giving NULL.
            "unnest" => elems.iter().map(|t| ("unnest", *t)).collect(),
            "generate_subscripts" => {
                vec![("generate_subscripts", RType::Base(DataType::Int4))]
            }
            "regexp_matches" => vec![("regexp_matches", RType::Base(DataType::Text).array_of())],
            "regexp_split_to_table" => {
                vec![("regexp_split_to_table", RType::Base(DataType::Text))]
            }
            "_pg_expandarray" => vec![
                ("x", RType::Base(DataType::Int4)),
                ("n", RType::Base(DataType::Int4)),
            ],
            "pg_options_to_table" => vec![
                ("option_name", RType::Base(DataType::Text)),
                ("option_value", RType::Base(DataType::Text)),
            ],
            "pg_get_keywords" => vec![
                ("word", RType::Base(DataType::Text)),
                ("catcode", RType::Base(DataType::Text)),
                ("barelabel", RType::Base(DataType::Bool)),
                ("catdesc", RType::Base(DataType::Text)),
                ("baredesc", RType::Base(DataType::Text)),
            ],
            _ => {
                return Err(Error::UndefinedFunction(format!(
                    "function {fname} does not exist"
                )))
            }
        };
        let mut names: Vec<String> = cols.iter().map(|c| c.0.to_string()).collect();
        let mut rel_alias = fname.clone();
        if let Some(a) = alias {
            rel_alias = norm(&a.name);
            if a.columns.is_empty() && names.len() == 1 {
                names[0] = rel_alias.clone();
            }
            for (n, c) in names.iter_mut().zip(&a.columns) {
                *n = norm(&c.name);
            }
        }
        let types: Vec<RType> = cols.iter().map(|c| c.1).collect();
        let mut rel_types = types.clone();
        if ordinality {
            let alias_columns = alias.as_ref().map_or(&[][..], |a| &a.columns[..]);
            names.push(
                alias_columns
                    .get(cols.len())
                    .map_or("ordinality".into(), |c| norm(&c.name)),
            );
            rel_types.push(RType::Base(DataType::Int8));
        }
        push_rel(level, rel_alias, None, names, rel_types)?;
        let f = RelFrom::Func {
            name: fname,
            args: bound,
            types,
            ordinality,
        };
        Ok((f, read))
    }

    /// One FROM item, and the first column of the level's row before it that it reads
    /// (LATERAL). The row it is evaluated with has the columns from `avail` on (`None`:
    /// none, the first item). Errors: 42P01/42703 for an item not yet in FROM, 0A000 for
    /// one before `avail`.
    fn factor(
        &mut self,
        f: &ast::TableFactor,
        level: &mut Level,
        avail: Option<usize>,
    ) -> Result<(RelFrom, Option<(usize, usize)>)> {
        match f {
            ast::TableFactor::Table {
                name,
                alias,
                args,
                with_ordinality,
                ..
            } => {
                let parts: Vec<String> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().map(norm))
                    .collect();
                if let Some(args) = args {
                    let fname = parts.last().cloned().unwrap_or_default();
                    let exprs = plain_args(&fname, &args.args)?;
                    return self.function_in_from(
                        (fname, *with_ordinality),
                        &exprs,
                        alias,
                        (level, avail),
                    );
                }
                let (schema, rel) = match parts.as_slice() {
                    [r] => (None, r.clone()),
                    [s, r] => (Some(s.clone()), r.clone()),
                    _ => {
                        // database.schema.name, checked as every statement checks it.
                        super::bind::relation_name(&parts.join("."), self.provider.database())?;
                        let [_, s, r] = parts.as_slice() else {
                            unreachable!("relation_name refuses four parts or more")
                        };
                        (Some(s.clone()), r.clone())
                    }
                };
                let alias_name = alias.as_ref().map(|a| norm(&a.name));
                if schema.is_none() {
                    if let Some((_, id, cols, types)) =
                        self.ctes.iter().rev().find(|c| c.0 == rel).cloned()
                    {
                        let cols = rename(cols, alias);
                        push_rel(level, alias_name.unwrap_or(rel), None, cols, types)?;
                        return Ok((RelFrom::Cte(id), None));
                    }
                }
                let candidates: Vec<String> = match &schema {
                    Some(s) => vec![s.clone()],
                    None => vec!["pg_catalog".into(), "public".into()],
                };
                for s in candidates {
                    if let Some((cols, _)) = self.provider.relation(&s, &rel) {
                        let names = rename(cols.iter().map(|c| c.name.clone()).collect(), alias);
                        let types = cols.iter().map(RType::of_column).collect();
                        push_rel(
                            level,
                            alias_name.unwrap_or(rel.clone()),
                            schema.clone(),
                            names,
                            types,
                        )?;
                        level.rels.last_mut().expect("pushed").table = Some(format!("{s}.{rel}"));
                        let scan = RelFrom::Scan {
                            schema: s,
                            name: rel,
                        };
                        return Ok((scan, None));
                    }
                }
                Err(Error::UndefinedTable(parts.join(".")))
            }
            ast::TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                // A subquery in FROM sees outer levels and, when LATERAL, the items
                // before it; otherwise an empty level stands for this one (the evaluator
                // pushes an empty row for it).
                self.levels.push(match lateral {
                    true => lateral_level(level),
                    false => Level::default(),
                });
                let q = self.query(subquery);
                let seen = self.levels.pop().expect("pushed");
                let q = q?;
                let read = lateral_read(&seen, avail)?;
                let names = rename(q.columns.iter().map(|c| c.0.clone()).collect(), alias);
                let types = q.columns.iter().map(|c| c.1).collect();
                let a = alias.as_ref().map(|a| norm(&a.name)).unwrap_or_default();
                push_rel(level, a, None, names, types)?;
                Ok((RelFrom::Sub(Box::new(q)), read))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(unsupported("an alias on a parenthesised join"));
                }
                self.table_with_joins(table_with_joins, level, avail)
            }
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } if !array_exprs.is_empty() => {
                let exprs: Vec<&ast::Expr> = array_exprs.iter().collect();
                self.function_in_from(
                    ("unnest".into(), *with_ordinality),
                    &exprs,
                    alias,
                    (level, avail),
                )
            }
            ast::TableFactor::Function {
                name,
                args,
                with_ordinality,
                alias,
                ..
            } => {
                let fname =
                    (name.0.last().and_then(|p| p.as_ident()).map(norm)).unwrap_or_default();
                let exprs = plain_args(&fname, args)?;
                self.function_in_from((fname, *with_ordinality), &exprs, alias, (level, avail))
            }
            ast::TableFactor::UNNEST {
                with_ordinality: true,
                ..
            } => Err(unsupported("WITH ORDINALITY is not supported")),
            other => Err(unsupported(format!("FROM item {other} is not supported"))),
        }
    }

    /// Bind a scalar expression in the innermost level.
    fn expr(&mut self, e: &ast::Expr) -> Result<RExpr> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(Error::StatementTooComplex(
                "stack depth limit exceeded: the expression is nested too deeply".into(),
            ));
        }
        let r = super::deep(|| self.expr_inner(e));
        self.depth -= 1;
        r
    }

    /// [`Self::resolve`], with PostgreSQL's hint for a misspelled column.
    fn resolve_hinted(&self, parts: &[String]) -> Result<RExpr> {
        self.resolve(parts).map_err(|e| {
            if !matches!(e, Error::UndefinedColumn(_)) {
                return e;
            }
            let col = parts.last().map(String::as_str).unwrap_or("");
            let qual = (parts.len() > 1).then(|| parts[parts.len() - 2].as_str());
            let candidates: Vec<(String, String)> = self
                .levels
                .iter()
                .flat_map(|l| l.rels.iter())
                .filter(|r| qual.is_none_or(|q| q == r.alias))
                .flat_map(|r| r.columns.iter().map(|c| (r.alias.clone(), c.clone())))
                .collect();
            let near = super::bind::closest(col, candidates.iter().map(|(_, c)| c.as_str()));
            match near.and_then(|n| candidates.iter().find(|(_, c)| c == n)) {
                Some((alias, c)) if !alias.is_empty() => e.with_hint(format!(
                    "Perhaps you meant to reference the column \"{alias}.{c}\"."
                )),
                Some((_, c)) => e.with_hint(format!(
                    "Perhaps you meant to reference the column \"{c}\"."
                )),
                None => e,
            }
        })
    }

    fn resolve(&self, parts: &[String]) -> Result<RExpr> {
        let (qual, col) = match parts {
            [c] => (None, c.as_str()),
            [q, c] => (Some(q.as_str()), c.as_str()),
            [_, q, c] => (Some(q.as_str()), c.as_str()),
            _ => {
                return Err(Error::UndefinedColumn(format!(
                    "improper qualified name: {}",
                    parts.join(".")
                )))
            }
        };
        for (up, level) in self.levels.iter().rev().enumerate() {
            // A name two columns of one level answer to is ambiguous (42702): two
            // relations' columns, or two of one subquery's (`SELECT 1 AS a, 2 AS a`).
            let owners: usize = level
                .rels
                .iter()
                .filter(|r| qual.is_none_or(|q| q == r.alias))
                .map(|r| {
                    r.columns
                        .iter()
                        .enumerate()
                        .filter(|(i, c)| *c == col && (qual.is_some() || !r.hidden[*i]))
                        .count()
                })
                .sum();
            if owners > 1 {
                return Err(Error::AmbiguousColumn(format!(
                    "column reference \"{col}\" is ambiguous"
                )));
            }
            for r in &level.rels {
                if qual.is_some_and(|q| q != r.alias) {
                    continue;
                }
                if let Some(i) = r.columns.iter().position(|c| c == col) {
                    if qual.is_none() && r.hidden[i] {
                        continue;
                    }
                    let idx = r.offset + i;
                    let span = level
                        .refs
                        .get()
                        .map_or((idx, idx), |(a, b)| (a.min(idx), b.max(idx)));
                    level.refs.set(Some(span));
                    return Ok(RExpr::Col { up, idx });
                }
                if let (Some(t), "tableoid") = (&r.table, col) {
                    return Ok(RExpr::Cast(
                        Box::new(RExpr::Lit(Value::Text(t.as_str().into()))),
                        RType::Reg(RegKind::Class),
                    ));
                }
            }
            if let Some(q) = qual {
                if level.rels.iter().any(|r| r.alias == q) {
                    return Err(Error::UndefinedColumn(format!(
                        "column {q}.{col} does not exist"
                    )));
                }
            }
        }
        match qual {
            Some(q)
                if !self
                    .levels
                    .iter()
                    .any(|l| l.rels.iter().any(|r| r.alias == q)) =>
            {
                Err(Error::UndefinedTable(q.to_string()))
            }
            _ => Err(Error::UndefinedColumn(format!(
                "column \"{}\" does not exist",
                parts.join(".")
            ))),
        }
    }

    fn subquery(&mut self, q: &ast::Query) -> Result<RelQuery> {
        self.query(q)
    }

    fn template(&self, expr: Expr, args: Vec<RExpr>) -> RExpr {
        RExpr::Template { expr, args }
    }

    /// `args` as operands of the expression binder ([`super::bind::type_scalar`]): a
    /// literal or parameter as written (so an unknown literal takes its type from the
    /// call, as in PostgreSQL), anything else as column `i` of the template's argument
    /// row, typed by its static type (catalog types as the type they are held as).
    fn operands(&self, args: &[RExpr]) -> Vec<super::bind::Operand> {
        args.iter()
            .enumerate()
            .map(|(i, a)| self.operand(a, i))
            .collect()
    }

    /// The type of `generate_series(args)` over arguments [`Self::series_args`] cast:
    /// its start's.
    fn series_type(&self, args: &[RExpr]) -> RType {
        args.first()
            .map_or(RType::Base(DataType::Int8), |a| self.static_type(a))
    }

    /// The arguments of `generate_series` cast to the overload they resolve to
    /// (`generate_series('2001-01-01'::timestamp, '2001-01-03', '1 day')` is the timestamp
    /// one). Errors: 42883 and 42725 as [`series::series_signature`] gives them.
    fn series_args(&mut self, args: Vec<RExpr>) -> Result<Vec<RExpr>> {
        let types: Vec<RType> = args.iter().map(|a| self.static_type(a)).collect();
        let sig = series::series_signature(&types)?;
        Ok(args
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let to = if i < 2 { sig.values } else { sig.step };
                self.conformed(a, RType::Base(to))
            })
            .collect())
    }

    /// A template whose result the expression binder typed `ty`: a cast to `ty` on top
    /// (a no-op at run time) carries the type to [`Self::static_type`].
    fn typed_template(&self, expr: Expr, ty: DataType, args: Vec<RExpr>) -> RExpr {
        let expr = match expr {
            e @ Expr::Cast { .. } => e,
            e => Expr::Cast {
                expr: Box::new(e),
                to: ty,
            },
        };
        RExpr::Template { expr, args }
    }

    /// `e` bound by the expression binder when it walks `e` (see `walk`), else as one of
    /// this builder's own nodes, a leaf of the walked expressions: column references,
    /// subqueries (scalar, EXISTS, IN, ANY/ALL, ARRAY(...)), ANY/ALL over an array value,
    /// casts to catalog types, ARRAY[...], subscripts and field selections, row
    /// comparisons and function calls.
    fn expr_inner(&mut self, e: &ast::Expr) -> Result<RExpr> {
        if let ast::Expr::BinaryOp { left, op, right } = e {
            if let Some(like) = super::bind::like_of_operator(left, op, right) {
                return self.expr(&like);
            }
        }
        if Self::is_walked(e) {
            return self.walk(e);
        }
        Ok(match e {
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => self.column(e)?,
            ast::Expr::AnyOp { .. } | ast::Expr::AllOp { .. } => self.any_all(e)?,
            ast::Expr::Cast { .. } | ast::Expr::TypedString(_) => self.catalog_cast(e)?,
            ast::Expr::CompoundFieldAccess { .. } => self.field_access(e)?,
            ast::Expr::In {
                expr,
                target,
                negated,
                ..
            } => {
                let l = self.expr(expr)?;
                match target {
                    ast::InTarget::Subquery(q) => self.any_sub(l, CmpOp::Eq, q, false, *negated)?,
                    other => return Err(unsupported(format!("IN {other:?}"))),
                }
            }
            ast::Expr::BinaryOp { left, op, right } => self.binary(left, op, right)?,
            ast::Expr::Exists { subquery, negated } => {
                RExpr::Exists(Box::new(self.subquery(subquery)?), *negated)
            }
            ast::Expr::Subquery(q) => {
                let q = self.subquery(q)?;
                if q.columns.len() != 1 {
                    return Err(Error::Syntax("subquery must return only one column".into()));
                }
                RExpr::ScalarSub(Box::new(q))
            }
            ast::Expr::Array(a) => {
                let elems: Vec<RExpr> =
                    a.elem.iter().map(|x| self.expr(x)).collect::<Result<_>>()?;
                let to = self.resolved_type("ARRAY", elems.iter())?;
                match array_elem(to) {
                    // Arrays of arrays: one more dimension, of their common type.
                    Some(_) => self.nested_array(elems)?,
                    None => {
                        RExpr::Array(elems.into_iter().map(|e| self.conformed(e, to)).collect())
                    }
                }
            }
            ast::Expr::Function(f) => self.function(f)?,
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// A column reference, resolved through the levels (with a hint for a near miss);
    /// errors carry the name's position.
    fn column(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            ast::Expr::Identifier(id) => {
                let at = super::parse::Lines::new(self.source).position(id.span.start);
                self.resolve_hinted(&[norm(id)]).map_err(|e| e.at(at))?
            }
            ast::Expr::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(norm).collect();
                let at = ids
                    .first()
                    .map(|i| super::parse::Lines::new(self.source).position(i.span.start));
                self.resolve_hinted(&parts).map_err(|e| match at {
                    Some(p) => e.at(p),
                    None => e,
                })?
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// `x op ANY|ALL (subquery)` (`RExpr::AnySub`), or over an array value
    /// (`RExpr::AnyArray`; over ARRAY[...] the expression binder binds it).
    fn any_all(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            ast::Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | ast::Expr::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, ast::Expr::AllOp { .. });
                let op = cmp_op(compare_op)
                    .ok_or_else(|| unsupported(format!("{compare_op} ANY is not supported")))?;
                let l = self.expr(left)?;
                let inner = match &**right {
                    ast::Expr::Nested(x) => &**x,
                    x => x,
                };
                match inner {
                    ast::Expr::Subquery(q) => self.any_sub(l, op, q, all, false)?,
                    other => RExpr::AnyArray {
                        left: Box::new(l),
                        op,
                        array: Box::new(self.expr(other)?),
                        all,
                    },
                }
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// A cast or typed literal of a catalog type (reg*, oid, arrays, name): the
    /// expression binder casts to the plain types.
    fn catalog_cast(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            // Casts to a catalog type (reg*, oid, arrays, name): the expression binder
            // casts to the plain types (see `walk::plain_type`).
            ast::Expr::Cast {
                expr, data_type, ..
            } => {
                let written = data_type.to_string();
                let to = rtype_of_name(&written)?;
                let inner = self.expr(expr)?;
                self.explicit_cast(inner, to, &written)?
            }
            ast::Expr::TypedString(ts) => {
                let to = rtype_of_name(&ts.data_type.to_string())?;
                let inner = self.value(&ts.value.value)?;
                self.cast(inner, to)
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// `a[i]` and `(record).field`, after the leading dots of a qualified column name.
    fn field_access(&mut self, e: &ast::Expr) -> Result<RExpr> {
        Ok(match e {
            ast::Expr::CompoundFieldAccess { root, access_chain } => {
                // `tmp.col[i]` arrives as root `tmp` with `.col` then `[i]`: the leading
                // dots of a name are a qualified column, not field selections.
                let names = match root.as_ref() {
                    ast::Expr::Identifier(id) => vec![id.clone()],
                    ast::Expr::CompoundIdentifier(ids) => ids.clone(),
                    _ => vec![],
                };
                let dots = access_chain
                    .iter()
                    .take_while(|a| matches!(a, ast::AccessExpr::Dot(ast::Expr::Identifier(_))))
                    .count();
                let (mut acc, rest) = if names.is_empty() || dots == 0 {
                    (self.expr(root)?, &access_chain[..])
                } else {
                    let mut ids = names;
                    for a in &access_chain[..dots] {
                        if let ast::AccessExpr::Dot(ast::Expr::Identifier(id)) = a {
                            ids.push(id.clone());
                        }
                    }
                    let compound = ast::Expr::CompoundIdentifier(ids);
                    (self.expr(&compound)?, &access_chain[dots..])
                };
                for a in rest {
                    match a {
                        ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => {
                            acc = RExpr::Subscript(Box::new(acc), Box::new(self.expr(index)?));
                        }
                        // `a[lo:hi]`, either bound left out: the evaluator's array_slice.
                        ast::AccessExpr::Subscript(ast::Subscript::Slice {
                            lower_bound,
                            upper_bound,
                            stride: None,
                        }) => {
                            let mut bound = |b: &Option<ast::Expr>, open: i64| match b {
                                Some(e) => self.expr(e),
                                None => Ok(RExpr::Lit(Value::Int8(open))),
                            };
                            let lo = bound(lower_bound, i64::MIN)?;
                            let hi = bound(upper_bound, i64::MAX)?;
                            acc = RExpr::Func("array_slice".into(), vec![acc, lo, hi]);
                        }
                        // `(record).field` of a record whose fields are known (pgjdbc's
                        // key queries read `(_pg_expandarray(indkey)).n`).
                        ast::AccessExpr::Dot(ast::Expr::Identifier(field)) => {
                            let name = norm(field);
                            let RType::Record(fields) = self.static_type(&acc) else {
                                return Err(Error::FeatureNotSupported(format!(
                                    "field selection (.{name}) is only supported on the \
                                     records of _pg_expandarray()"
                                )));
                            };
                            let Some(i) = fields.iter().position(|f| f.0 == name) else {
                                return Err(Error::UndefinedColumn(format!(
                                    "could not identify column \"{name}\" in record data type"
                                )));
                            };
                            let get = RExpr::Func(
                                "record_field".into(),
                                vec![acc, RExpr::Lit(Value::Int4(i as i32))],
                            );
                            acc = self.cast(get, RType::Base(fields[i].1));
                        }
                        _ => return Err(unsupported("this field access is not supported")),
                    }
                }
                acc
            }
            other => {
                return Err(unsupported(format!(
                    "expression {other} is not supported in catalog queries"
                )))
            }
        })
    }

    /// `l op ANY|ALL (q)`, `l [NOT] IN (q)`: the operand and the subquery's column compare
    /// by PostgreSQL's bpchar rules ([`Self::bpchar_operand`]); a subquery column to trim
    /// is trimmed in its SELECT list (a set operation's column is compared as it is).
    fn any_sub(
        &mut self,
        l: RExpr,
        op: CmpOp,
        q: &ast::Query,
        all: bool,
        negated: bool,
    ) -> Result<RExpr> {
        let mut query = self.subquery(q)?;
        let lt = self.static_type(&l);
        let rt = query.columns.first().map_or(RType::Unknown, |c| c.1);
        let left = self.bpchar_operand(l, lt, rt);
        if let RelBody::Select(sel) = &mut query.body {
            if let [only] = &mut sel.projection[..] {
                let e = std::mem::replace(only, RExpr::Lit(Value::Null));
                *only = self.bpchar_operand(e, rt, lt);
            }
        }
        Ok(RExpr::AnySub {
            left: Box::new(left),
            op,
            query: Box::new(query),
            all,
            negated,
        })
    }

    /// A comparison operand beside one of type `o`: a `character(n)` value, or an unknown
    /// literal or a varchar meeting one, compares without its trailing blanks (PostgreSQL
    /// picks bpchar's operators for bpchar against bpchar, varchar or unknown, and text's,
    /// with the bpchar side converted to text, against text).
    fn bpchar_operand(&self, e: RExpr, t: RType, o: RType) -> RExpr {
        let bpchar = |t: RType| matches!(t, RType::Base(DataType::Bpchar(_)));
        let beside_bpchar = matches!(t, RType::Unknown | RType::Base(DataType::Varchar(_)));
        if !(bpchar(t) || (beside_bpchar && bpchar(o))) {
            return e;
        }
        let trim = Expr::Func {
            func: crate::sql::ScalarFunc::BpcharText,
            args: vec![Expr::Column(0)],
        };
        self.typed_template(trim, DataType::Text, vec![e])
    }

    /// An explicit cast as PostgreSQL applies the written type's modifier: `varchar(n)`
    /// and `char(n)` cut the text to n characters (`char(n)` then pads it) (an assignment would refuse it), `numeric(p, s)`
    /// rounds to s digits and checks p (22003), as the streaming binder's casts do.
    fn explicit_cast(&mut self, inner: RExpr, to: RType, written: &str) -> Result<RExpr> {
        use crate::sql::ScalarFunc;
        check_datetime_cast(self.static_type(&inner), to)?;
        if let RType::Base(d @ (DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)))) = to {
            let text = self.cast(inner, RType::Base(DataType::Text));
            let cut = Expr::Func {
                func: ScalarFunc::Substr,
                args: vec![
                    Expr::Column(0),
                    Expr::Literal(Value::Int4(1)),
                    Expr::Literal(Value::Int4(n as i32)),
                ],
            };
            return Ok(self.template(
                Expr::Cast {
                    expr: Box::new(cut),
                    to: d,
                },
                vec![text],
            ));
        }
        let cast = self.cast(inner, to);
        Ok(
            match super::types::typmod_applied(written, Expr::Column(0))? {
                Some((expr, ty)) => self.typed_template(expr, ty, vec![cast]),
                None => cast,
            },
        )
    }

    fn cast(&mut self, inner: RExpr, to: RType) -> RExpr {
        // A parameter takes the type it is cast to, as PostgreSQL infers it: SQLAlchemy
        // writes `$1::INTEGER`, asyncpg's type introspection `$1::oid[]`, and asyncpg
        // refuses to bind an int to a parameter described as text.
        if let RExpr::Param(i) = &inner {
            if let Some(slot @ None) = self.params.get_mut(*i) {
                match to {
                    RType::Catalog(t) => {
                        *slot = Some(t.held_as());
                        self.catalog_params.push((*i, t));
                    }
                    RType::Base(d) => *slot = Some(d),
                    _ => {}
                }
            }
        }
        match (to, self.static_type(&inner)) {
            (RType::Base(d), from @ (RType::Base(_) | RType::Unknown)) => RExpr::Template {
                expr: Expr::Cast {
                    expr: Box::new(if d.is_text() && !matches!(d, DataType::Bpchar(_)) {
                        super::bind::bpchar_as_text(Expr::Column(0), Some(from.data_type()))
                    } else {
                        Expr::Column(0)
                    }),
                    to: d,
                },
                args: vec![inner],
            },
            // A reg* value cast to text is the object's name (`atttypid::regtype::text`):
            // the evaluator sees the reg* cast beneath and prints the name.
            (RType::Base(d), RType::Reg(k)) if d.is_text() => {
                RExpr::Cast(Box::new(RExpr::Cast(Box::new(inner), RType::Reg(k))), to)
            }
            // A "char" cast to integer is its byte, signed (`'a'::"char"::int` is 97):
            // the evaluator sees the "char" cast beneath.
            (RType::Base(DataType::Int4), c @ RType::Catalog(CatalogType::Char)) => {
                RExpr::Cast(Box::new(RExpr::Cast(Box::new(inner), c)), to)
            }
            _ => RExpr::Cast(Box::new(inner), to),
        }
    }

    /// The arguments of COALESCE, GREATEST or LEAST, where one is a reg* value or
    /// an oid, with each unknown literal cast to that type, as PostgreSQL resolves them:
    /// `coalesce(atttypid::regtype, 'text')` reads `'text'` as a regtype. Errors of the
    /// cast (an unknown name) come at run time, as the cast's own.
    fn unknowns_as_oid(&mut self, args: Vec<RExpr>) -> Vec<RExpr> {
        let oid = |t: &RType| matches!(t, RType::Reg(_) | RType::Catalog(CatalogType::Oid));
        let Some(to) = args.iter().map(|a| self.static_type(a)).find(oid) else {
            return args;
        };
        args.into_iter()
            .map(|a| match (&a, self.static_type(&a)) {
                (RExpr::Lit(_), RType::Unknown) => self.cast(a, to),
                _ => a,
            })
            .collect()
    }

    fn number(&self, n: &str) -> Result<RExpr> {
        Ok(RExpr::Lit(super::bind::number_literal(n)?))
    }

    fn value(&mut self, v: &ast::Value) -> Result<RExpr> {
        Ok(match v {
            ast::Value::Number(n, _) => self.number(n)?,
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::UnicodeStringLiteral(s)
            | ast::Value::NationalStringLiteral(s) => {
                RExpr::Lit(Value::Text(super::bind::no_nul(s)?.into()))
            }
            ast::Value::DollarQuotedString(d) => {
                RExpr::Lit(Value::Text(super::bind::no_nul(&d.value)?.into()))
            }
            ast::Value::Boolean(b) => RExpr::Lit(Value::Bool(*b)),
            ast::Value::Null => RExpr::Lit(Value::Null),
            ast::Value::Placeholder(p) => {
                let i = super::placeholder_index(p)?;
                if self.params.len() <= i {
                    self.params.resize(i + 1, None);
                }
                RExpr::Param(i)
            }
            other => return Err(unsupported(format!("literal {other} is not supported"))),
        })
    }

    /// `(a1, a2, ...) op (b1, b2, ...)` as PostgreSQL compares rows: `=` is the AND of the
    /// pairs' equalities, `<>` the OR of their inequalities, and `<`, `<=`, `>`, `>=` order
    /// the rows by their first unequal pair (`a1 < b1 OR (a1 = b1 AND (a2, ...) op (b2,
    /// ...))`), which gives NULL where a NULL pair decides, as PostgreSQL does. Errors: 42601
    /// for rows of different lengths.
    fn row_comparison(
        &mut self,
        op: &ast::BinaryOperator,
        ls: &[ast::Expr],
        rs: &[ast::Expr],
    ) -> Result<RExpr> {
        use ast::BinaryOperator as B;
        if ls.len() != rs.len() || ls.is_empty() {
            return Err(Error::Syntax(
                "unequal number of entries in row expressions".into(),
            ));
        }
        if ls.len() == 1 {
            return self.binary(&ls[0], op, &rs[0]);
        }
        let pairs = || ls.iter().zip(rs);
        match op {
            B::Eq | B::NotEq => {
                let parts = pairs()
                    .map(|(l, r)| self.binary(l, op, r))
                    .collect::<Result<Vec<_>>>()?;
                Ok(if *op == B::Eq {
                    RExpr::And(parts)
                } else {
                    or(parts)
                })
            }
            _ => {
                let strict = match op {
                    B::Lt | B::LtEq => B::Lt,
                    _ => B::Gt,
                };
                let first = self.binary(&ls[0], &strict, &rs[0])?;
                let equal = self.binary(&ls[0], &B::Eq, &rs[0])?;
                let rest = self.row_comparison(op, &ls[1..], &rs[1..])?;
                Ok(or(vec![first, RExpr::And(vec![equal, rest])]))
            }
        }
    }

    fn binary(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<RExpr> {
        use ast::BinaryOperator as B;
        // A comparison of two values (one part of a row comparison, or spelled
        // OPERATOR(pg_catalog.=)) is the expression binder's (see `walk`).
        let plain = match op {
            B::PGCustomBinaryOperator(parts) => match parts.last().map(String::as_str) {
                Some("=") => Some(B::Eq),
                Some("<>") => Some(B::NotEq),
                Some("<") => Some(B::Lt),
                Some(">") => Some(B::Gt),
                Some("<=") => Some(B::LtEq),
                Some(">=") => Some(B::GtEq),
                _ => return Err(unsupported(format!("operator {op} is not supported"))),
            },
            op => cmp_op(op).map(|_| op.clone()),
        };
        if let Some(op) = plain {
            match (left, right) {
                (ast::Expr::Tuple(ls), ast::Expr::Tuple(rs)) => {
                    return self.row_comparison(&op, ls, rs)
                }
                (ast::Expr::Tuple(_), _) | (_, ast::Expr::Tuple(_)) => {
                    return Err(unsupported(format!(
                        "comparing a row with a value ({left} {op} {right}) is not supported"
                    )))
                }
                _ => {}
            }
            return self.walk(&ast::Expr::BinaryOp {
                left: Box::new(left.clone()),
                op,
                right: Box::new(right.clone()),
            });
        }
        // Operands first: an unknown column is reported before the operator.
        let (l, r) = (self.expr(left)?, self.expr(right)?);
        // The array operators @>, <@ and && are PostgreSQL's functions of that name.
        let func = match op {
            B::AtArrow => "arraycontains",
            B::ArrowAt => "arraycontained",
            B::PGOverlap => "arrayoverlap",
            _ => return Err(unsupported(format!("operator {op} is not supported"))),
        };
        self.scalar_call(func, vec![l, r])
    }

    fn function(&mut self, f: &ast::Function) -> Result<RExpr> {
        use crate::sql::ScalarFunc;
        let parts: Vec<String> = f
            .name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(norm))
            .collect();
        let name = parts.last().cloned().unwrap_or_default();
        if parts.len() > 1 && parts[0] != "pg_catalog" && parts[0] != "information_schema" {
            return Err(Error::UndefinedFunction(format!(
                "function {} does not exist",
                f.name
            )));
        }
        if f.over.is_some() {
            return self.window_function(f, &name);
        }
        // CURRENT_DATE (parsed as a call without parentheses): the transaction's day in
        // the session's time zone.
        if name == "current_date" && matches!(f.args, ast::FunctionArguments::None) {
            let today = Expr::Cast {
                expr: Box::new(Expr::Func {
                    func: ScalarFunc::Now,
                    args: vec![],
                }),
                to: DataType::Date,
            };
            return Ok(self.typed_template(today, DataType::Date, vec![]));
        }
        if SELECT_LIST_SET_FUNCTIONS.contains(&name.as_str()) {
            let level = self.levels.last();
            if level.is_some_and(|l| l.srf_ok && !l.in_agg) {
                return self.set_function(&name, f);
            }
            let hint =
                "You might be able to move the set-returning function into a LATERAL FROM item.";
            if level.is_some_and(|l| l.in_agg) {
                return Err(unsupported(
                    "aggregate function calls cannot contain set-returning function calls",
                )
                .with_hint(hint));
            }
            if let Some(refusal) = self.srf_refusal {
                return Err(unsupported(refusal));
            }
        }
        if let ast::FunctionArguments::Subquery(q) = &f.args {
            if name == "array" {
                return Ok(RExpr::ArraySub(Box::new(self.subquery(q)?)));
            }
            return Err(unsupported(format!("{name}(subquery) is not supported")));
        }
        let call = Self::call_args(f)?;
        if call.names.iter().any(Option::is_some) {
            if super::functions::aggregate(&name).is_some() {
                // No aggregate has parameter names; its arguments are not bound outside
                // an aggregate's context.
                return Err(no_named_parameters(&name));
            }
            let args: Vec<RExpr> = (call.args.iter())
                .map(|a| self.expr(a))
                .collect::<Result<_>>()?;
            let args = self.ordered_args(&name, args, &call.names)?;
            return self.scalar_call(&name, args);
        }
        if let Some(def) = super::functions::aggregate(&name) {
            return self.aggregate_call(def, name, f, &call);
        }
        if !call.order.is_empty() {
            return Err(Error::WrongObjectType(format!(
                "ORDER BY specified, but {name} is not an aggregate function"
            )));
        }
        if !f.within_group.is_empty() {
            return Err(Error::WrongObjectType(format!(
                "WITHIN GROUP specified, but {name} is not an aggregate function"
            )));
        }
        if f.filter.is_some() {
            return Err(Error::WrongObjectType(format!(
                "FILTER specified, but {name} is not an aggregate function"
            )));
        }
        let args: Vec<RExpr> = (call.args.iter())
            .map(|a| self.expr(a))
            .collect::<Result<_>>()?;
        // Omitted parameters with defaults (make_interval's) filled in.
        let args = self.ordered_args(&name, args, &call.names)?;
        self.scalar_call(&name, args)
    }

    /// The bound arguments of a call put in parameter order (named ones moved, omitted
    /// ones with defaults filled in: `make_interval(days => 10)`), for the scalar
    /// functions that have parameter names. Errors: 42883 for names that match no
    /// function, as PostgreSQL.
    fn ordered_args(
        &mut self,
        name: &str,
        args: Vec<RExpr>,
        names: &[Option<String>],
    ) -> Result<Vec<RExpr>> {
        let func = super::functions::scalar(name).map(|d| d.func);
        let named = names.iter().any(Option::is_some);
        let slots = match func {
            Some(f) => super::functions::parameter_slots(f, names),
            None => (!named).then(|| {
                (0..args.len())
                    .map(super::functions::ArgSlot::Given)
                    .collect()
            }),
        };
        let Some(slots) = slots else {
            let shown: Vec<String> = args
                .iter()
                .zip(names)
                .map(|(a, n)| {
                    let t = self.static_type(a).name();
                    n.as_ref().map_or(t.clone(), |n| format!("{n} => {t}"))
                })
                .collect();
            return Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                shown.join(", ")
            ))
            .with_hint(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            ));
        };
        // Moved, not cloned: a clone would copy (recursively) each nested argument again.
        let mut args: Vec<Option<RExpr>> = args.into_iter().map(Some).collect();
        Ok(slots
            .into_iter()
            .map(|s| match s {
                super::functions::ArgSlot::Given(i) => {
                    args[i].take().expect("each argument is used once")
                }
                super::functions::ArgSlot::Default(v) => RExpr::Lit(v),
            })
            .collect())
    }

    /// A call of `name` that is no aggregate: `mod` as the `%` operator, a scalar function
    /// typed by the expression binder, `pg_typeof`, or a function of the relational
    /// evaluator. Errors: 42883 for a name or argument types of no function.
    fn scalar_call(&mut self, name: &str, args: Vec<RExpr>) -> Result<RExpr> {
        if let ("mod", [_, _]) = (name, args.as_slice()) {
            // mod(a, b) is the % operator, with its types.
            let mut ops = self.operands(&args).into_iter();
            let (a, b) = (ops.next().expect("two"), ops.next().expect("two"));
            let (expr, ty) =
                super::bind::type_binary(crate::sql::BinaryOp::Mod, a, b, &mut self.params)?;
            return Ok(self.typed_template(expr, ty, args));
        }
        if matches!(name, "greatest" | "least" | "nullif")
            && args
                .iter()
                .any(|a| array_elem(self.static_type(a)).is_some())
        {
            return self.array_choice(name, args);
        }
        let args = match name {
            "coalesce" | "greatest" | "least" => self.unknowns_as_oid(args),
            _ => args,
        };
        let scalar = super::functions::scalar(name).map(|d| d.func);
        if let Some(func) = scalar {
            // Typed by the expression binder's rules, as the same call over a stream.
            let ops = self.operands(&args);
            let (expr, ty) = super::bind::type_scalar(func, ops, &mut self.params)?;
            return Ok(self.chosen_template(expr, Some(ty), args));
        }
        // The static type, as PostgreSQL's pg_typeof names it (a regtype printed as text).
        if let ("pg_typeof", [a]) = (name, args.as_slice()) {
            let t = match self.static_type(a) {
                RType::Reg(k) => match k {
                    RegKind::Class => "regclass",
                    RegKind::Type => "regtype",
                    RegKind::Proc => "regproc",
                    RegKind::Namespace => "regnamespace",
                    RegKind::Role => "regrole",
                }
                .to_string(),
                other => other.name(),
            };
            return Ok(RExpr::Cast(
                Box::new(RExpr::Lit(Value::Text(t.into()))),
                RType::Reg(RegKind::Type),
            ));
        }
        if arrays::ARRAY_CONCAT_FUNCTIONS.contains(&name) {
            return self.array_concat_call(name, args);
        }
        if ELEM_COMPARING.contains(&name) {
            let ty = |i: usize| args.get(i).map_or(RType::Unknown, |a| self.static_type(a));
            // The second argument is an array or, for the search functions, an element.
            let second = match (ty(1), name.starts_with("array_")) {
                (RType::Base(d), true) => RType::Base(d).array_of(),
                (t, _) => t,
            };
            let elems = match name {
                "arraycontains" => array_operands(ty(0), second, "@>")?,
                "arraycontained" => array_operands(ty(0), second, "<@")?,
                "arrayoverlap" => array_operands(ty(0), second, "&&")?,
                _ => array_elems(ty(0), second),
            };
            if let Some(elems) = elems {
                return Ok(RExpr::ArrayFunc(name.to_string(), elems, args));
            }
        }
        if super::functions::catalog_function(name).is_some() {
            return Ok(RExpr::Func(name.to_string(), args));
        }
        Err(Error::UndefinedFunction(format!(
            "function {name}({}) does not exist",
            args.iter()
                .map(|a| self.static_type(a).name())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// `greatest`, `least` or `nullif` of arrays: their elements compared by type (see
    /// [`crate::exec::array_cmp`]); GREATEST and LEAST fold their arguments two at a
    /// time, of the arrays' common type (`integer[]` and `numeric[]` are `numeric[]`).
    /// Errors: 42883 for NULLIF of two array types (no `=` between them), 42846 for
    /// GREATEST or LEAST of arrays whose elements have no common type.
    fn array_choice(&mut self, name: &str, args: Vec<RExpr>) -> Result<RExpr> {
        let ty = |s: &Self, a: &RExpr| s.static_type(a);
        if name == "nullif" {
            let [a, b] = <[RExpr; 2]>::try_from(args).map_err(|a| {
                Error::UndefinedFunction(format!(
                    "function nullif with {} arguments does not exist",
                    a.len()
                ))
            })?;
            let elems = array_operands(ty(self, &a), ty(self, &b), "=")?.expect("an array");
            return Ok(RExpr::ArrayFunc(name.into(), elems, vec![a, b]));
        }
        let word = name.to_uppercase();
        let mut acc: Option<RExpr> = None;
        for a in args {
            acc = Some(match acc {
                None => a,
                Some(prev) => {
                    let (pt, at) = (ty(self, &prev), ty(self, &a));
                    let common = match (array_elem(pt), array_elem(at)) {
                        (Some(x), Some(y)) if x != y => {
                            let common = super::types::select_common_type(x.held_as(), y.held_as());
                            common.map(ElemType::of).ok_or_else(|| {
                                Error::CannotCoerce(format!(
                                    "{word} could not convert type {} to {}",
                                    at.name(),
                                    pt.name()
                                ))
                            })?
                        }
                        (Some(x), _) | (None, Some(x)) => x,
                        (None, None) => ElemType::Text,
                    };
                    let elems = (
                        array_elem(pt).unwrap_or(common),
                        array_elem(at).unwrap_or(common),
                    );
                    let out = RType::Catalog(CatalogType::Array(common));
                    let pair = RExpr::ArrayFunc(name.into(), elems, vec![prev, a]);
                    match out == ty(self, &pair) {
                        true => pair,
                        false => RExpr::Cast(Box::new(pair), out),
                    }
                }
            });
        }
        Ok(acc.expect("GREATEST has arguments"))
    }

    /// The arguments of call `f`: its expressions, `*`, DISTINCT and the ORDER BY of an
    /// aggregate's arguments. Errors: 0A000 for other clauses, 42601 for other arguments.
    fn call_args(f: &ast::Function) -> Result<CallArgs<'_>> {
        let mut distinct = false;
        let mut star = false;
        let mut args_ast: Vec<&ast::Expr> = Vec::new();
        let mut order_ast: Vec<&ast::OrderByExpr> = Vec::new();
        let mut names: Vec<Option<String>> = Vec::new();
        match &f.args {
            ast::FunctionArguments::None | ast::FunctionArguments::Subquery(_) => {}
            ast::FunctionArguments::List(l) => {
                distinct = matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                for c in &l.clauses {
                    match c {
                        ast::FunctionArgumentClause::OrderBy(keys) => order_ast.extend(keys),
                        other => {
                            return Err(unsupported(format!(
                                "{other} in a function call is not supported"
                            )))
                        }
                    }
                }
                for (a, named) in l.args.iter().zip(super::functions::named_args(&l.args)?) {
                    if let Some((name, e)) = named {
                        args_ast.push(e);
                        names.push(name);
                        continue;
                    }
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        other => {
                            return Err(Error::Syntax(format!(
                                "syntax error at or near \"{other}\""
                            )))
                        }
                    }
                }
            }
        }
        Ok(CallArgs {
            distinct,
            star,
            args: args_ast,
            order: order_ast,
            names,
        })
    }

    /// Aggregate call `f` of `name` (its row `def`): bound in this level's aggregate list
    /// (one slot per distinct call), read as the column after the level's row. Errors:
    /// 42803 where aggregates are not allowed, 42883 for argument types PostgreSQL has no
    /// overload for.
    fn aggregate_call(
        &mut self,
        def: &super::functions::AggDef,
        name: String,
        f: &ast::Function,
        call: &CallArgs<'_>,
    ) -> Result<RExpr> {
        let (distinct, star) = (call.distinct, call.star);
        let args_ast = &call.args;
        let agg_ok = self.levels.last().is_some_and(|l| l.agg_ok && !l.in_agg);
        if !agg_ok {
            return Err(Error::Grouping(format!(
                "aggregate functions are not allowed here ({name})"
            )));
        }
        let window_agg = std::mem::take(&mut self.window_agg);
        let ordered_set = ordered_set_call(def, f, &name, window_agg, args_ast.len())?;
        // An ordered-set aggregate reads its values in the WITHIN GROUP order.
        let order_ast: Vec<&ast::OrderByExpr> = match ordered_set {
            Some(_) => f.within_group.iter().collect(),
            None => call.order.clone(),
        };
        self.levels.last_mut().expect("level").in_agg = !window_agg;
        let args: Result<Vec<RExpr>> = args_ast.iter().map(|a| self.expr(a)).collect();
        let order_by: Result<Vec<(RExpr, bool, bool)>> = order_ast
            .iter()
            .map(|o| Ok((self.expr(&o.expr)?, desc(o), nulls_first(o))))
            .collect();
        let filter = f.filter.as_deref().map(|e| self.expr(e)).transpose();
        self.levels.last_mut().expect("level").in_agg = false;
        let (mut args, order_by, filter) = (args?, order_by?, filter?);
        if distinct && order_by.iter().any(|(e, _, _)| !args.contains(e)) {
            return Err(Error::InvalidColumnReference(
                "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"
                    .into(),
            ));
        }
        if ordered_set.is_some() {
            // The WITHIN GROUP key rides after the direct arguments.
            args.push(order_by[0].0.clone());
        }
        if !star && args.is_empty() {
            return Err(Error::UndefinedFunction(format!(
                "function {name}() does not exist"
            )));
        }
        let (ty, arg_type) = self.aggregate_types(def, &name, ordered_set, star, &args)?;
        let arrays = (args.iter().chain(order_by.iter().map(|o| &o.0)))
            .map(|e| array_elem(self.static_type(e)))
            .collect();
        let level = self.levels.last_mut().expect("level");
        let agg = RelAgg {
            func: name,
            kernel: def.kernel,
            arg_type,
            filter,
            args,
            distinct,
            order_by,
            arrays,
            ty,
        };
        let j = match level.aggs.iter().position(|a| *a == agg) {
            Some(j) => j,
            None => {
                level.aggs.push(agg);
                level.aggs.len() - 1
            }
        };
        Ok(RExpr::Col {
            up: 0,
            idx: level.width + j,
        })
    }

    /// The result type of aggregate call `name` over `args` and the type its kernel reads
    /// the key as: typed by the first argument, an ordered-set aggregate by its WITHIN
    /// GROUP key (the last), with [`Self::float8_args`]'s checks. Errors: 42883 for
    /// argument types PostgreSQL has no overload for.
    fn aggregate_types(
        &self,
        def: &super::functions::AggDef,
        name: &str,
        ordered_set: Option<OrderedSetFunc>,
        star: bool,
        args: &[RExpr],
    ) -> Result<(RType, DataType)> {
        let key = if ordered_set.is_some() {
            args.last()
        } else {
            args.first()
        };
        let arg = key.filter(|_| !star).map(|k| self.static_type(k));
        let (ty, arg_type) = agg_result_type(def, arg)?;
        let arg_type = self.float8_args(def, name, args, arg_type)?;
        let ty = match (ordered_set, arg) {
            // anyelement: the key's own type (varchar stays varchar, where min and max
            // of varchar are text).
            (
                Some(OrderedSetFunc::PercentileDisc | OrderedSetFunc::Mode),
                Some(RType::Base(DataType::Varchar(_))),
            ) => RType::Base(DataType::Varchar(None)),
            _ => ty,
        };
        // An array of fractions gives an array of percentiles.
        let ty = match ordered_set.map(|_| self.static_type(&args[0])) {
            Some(RType::Catalog(CatalogType::Array(_))) => ty.array_of(),
            _ => ty,
        };
        Ok((ty, arg_type))
    }

    /// A set-returning call of the select list: its arguments are bound like the select
    /// list's other expressions (not inside another set-returning call).
    fn set_function(&mut self, name: &str, f: &ast::Function) -> Result<RExpr> {
        let ast::FunctionArguments::List(l) = &f.args else {
            return Err(Error::UndefinedFunction(format!(
                "function {name}() does not exist"
            )));
        };
        self.levels.last_mut().expect("level").srf_ok = false;
        let args: Result<Vec<RExpr>> = self.refusing_srf(SRF_IN_SRF_ARGS, |b| {
            l.args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => b.expr(e),
                    ast::FunctionArg::Named { .. } | ast::FunctionArg::ExprNamed { .. } => {
                        Err(no_named_parameters(name))
                    }
                    other => Err(Error::Syntax(format!(
                        "syntax error at or near \"{other}\""
                    ))),
                })
                .collect()
        });
        self.levels.last_mut().expect("level").srf_ok = true;
        let args = match args {
            Ok(a) if name == "generate_series" => self.series_args(a)?,
            other => other?,
        };
        // unnest of several arrays is FROM's alone, as in PostgreSQL.
        if name == "unnest" && args.len() != 1 {
            let types: Vec<String> = args.iter().map(|a| self.static_type(a).name()).collect();
            return Err(Error::UndefinedFunction(format!(
                "function unnest({}) does not exist",
                types.join(", ")
            ))
            .with_hint(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            ));
        }
        let level = self.levels.last_mut().expect("level");
        level.set_funcs.push((name.to_string(), args));
        let call = RExpr::SetFunc(level.set_funcs.len() - 1);
        // Its values are converted to the type it is declared to return (`unnest(indkey)`
        // gives smallints, not the text of the vector's elements).
        Ok(match self.static_type(&call) {
            t @ RType::Catalog(_) => RExpr::Cast(Box::new(call), t),
            RType::Base(d) if !d.is_text() => RExpr::Cast(Box::new(call), RType::Base(d)),
            _ => call,
        })
    }

    /// `f(...) OVER (PARTITION BY .. ORDER BY ..)`: a window function of [`RelWindowFunc`]
    /// or an aggregate. Errors: 0A000 for a frame clause, a named window or another
    /// function; 42803 where window functions are not allowed.
    fn window_function(&mut self, f: &ast::Function, name: &str) -> Result<RExpr> {
        let over = f.over.as_ref().expect("a window function has OVER");
        let ast::WindowType::WindowSpec(spec) = over else {
            return Err(unsupported("named windows are not supported"));
        };
        if !self.levels.last().is_some_and(|l| l.agg_ok) {
            return Err(Error::Windowing(
                "window functions are not allowed here".into(),
            ));
        }
        if self.in_window {
            return Err(Error::Windowing(
                "window function calls cannot be nested".into(),
            ));
        }
        self.in_window = true;
        let call = self.window_call(f, name);
        self.in_window = false;
        let (func, ty) = call?;
        let partition_by: Vec<RExpr> = spec
            .partition_by
            .iter()
            .map(|e| self.expr(e))
            .collect::<Result<_>>()?;
        let order_by: Vec<(RExpr, bool, bool)> = spec
            .order_by
            .iter()
            .map(|o| Ok((self.expr(&o.expr)?, desc(o), nulls_first(o))))
            .collect::<Result<_>>()?;
        let key = match order_by.as_slice() {
            [(k, ..)] => Some(self.static_type(k)),
            _ => None,
        };
        let (frame, range_offsets) = match &spec.window_frame {
            None => (RelFrame::DEFAULT, [None, None]),
            Some(f) => self.frame(f, key)?,
        };
        let arrays = (partition_by.iter().chain(order_by.iter().map(|o| &o.0)))
            .map(|e| array_elem(self.static_type(e)))
            .collect();
        let level = self.levels.last_mut().expect("level");
        level.windows.push(RelWindow {
            func,
            partition_by,
            order_by,
            arrays,
            frame,
            range_offsets,
            ty,
        });
        Ok(RExpr::Window(level.windows.len() - 1))
    }

    /// A frame clause, and its RANGE offsets (start, end) given the single ORDER BY key's
    /// type `key`. Errors: 42P20 for bounds PostgreSQL refuses (a frame starting at
    /// UNBOUNDED FOLLOWING or after its end), 22013 for a negative offset, 0A000 for
    /// EXCLUDE or a ROWS/GROUPS offset that is not an integer constant, and
    /// [`Self::range_offset`]'s errors.
    fn frame(
        &mut self,
        f: &ast::WindowFrame,
        key: Option<RType>,
    ) -> Result<(RelFrame, [Option<Value>; 2])> {
        use ast::WindowFrameBound as B;
        let units = match f.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        let mut range_offsets = [None, None];
        let mut bound = |b: &B, what: &str| -> Result<FrameBound> {
            let mut offset = |binder: &mut Self, e: &ast::Expr| -> Result<u64> {
                if units == FrameUnits::Range {
                    let v = binder.range_offset(e, key.as_ref(), what)?;
                    range_offsets[usize::from(what == "ending")] = Some(v);
                    return Ok(0);
                }
                let RExpr::Lit(v) = binder.expr(e)? else {
                    return Err(unsupported("a frame offset must be an integer constant"));
                };
                match crate::exec::relational::int_of(&v) {
                    Some(n) if n >= 0 => Ok(n as u64),
                    Some(_) => Err(Error::InvalidPrecedingOrFollowingSize(format!(
                        "frame {what} offset must not be negative"
                    ))),
                    None => Err(unsupported("a frame offset must be an integer constant")),
                }
            };
            Ok(match b {
                B::CurrentRow => FrameBound::CurrentRow,
                B::Preceding(None) => FrameBound::UnboundedPreceding,
                B::Following(None) => FrameBound::UnboundedFollowing,
                B::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
                B::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
            })
        };
        let start = bound(&f.start_bound, "starting")?;
        let end = match &f.end_bound {
            None => FrameBound::CurrentRow,
            Some(b) => bound(b, "ending")?,
        };
        let refused = match (start, end) {
            (FrameBound::UnboundedFollowing, _) => {
                Some("frame start cannot be UNBOUNDED FOLLOWING")
            }
            (_, FrameBound::UnboundedPreceding) => Some("frame end cannot be UNBOUNDED PRECEDING"),
            (FrameBound::CurrentRow, FrameBound::Preceding(_)) => {
                Some("frame starting from current row cannot have preceding rows")
            }
            (FrameBound::Following(_), FrameBound::Preceding(_) | FrameBound::CurrentRow) => {
                Some("frame starting from following row cannot have preceding rows")
            }
            _ => None,
        };
        match refused {
            Some(m) => Err(Error::Windowing(m.into())),
            None => Ok((RelFrame { units, start, end }, range_offsets)),
        }
    }

    /// The offset of a RANGE frame bound, as PostgreSQL's `in_range` support functions
    /// take it: an integer for integer keys, a number for numeric and float keys (as the
    /// key's kind), an interval for dates, timestamps and intervals. Errors: 42P20 without
    /// exactly one ORDER BY key, 0A000 for another key or offset type or an offset that
    /// is not a constant, 22004 for NULL, 22013 for a negative offset.
    fn range_offset(&mut self, e: &ast::Expr, key: Option<&RType>, what: &str) -> Result<Value> {
        let Some(key) = key else {
            return Err(Error::Windowing(
                "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column".into(),
            ));
        };
        let bound = self.expr(e)?;
        let offset_type = self.static_type(&bound);
        // A literal, or a cast of one (`interval '1 day'`).
        let v = match bound {
            RExpr::Lit(v) => v,
            RExpr::Template { expr, args } => {
                let args: Vec<Value> = args
                    .into_iter()
                    .map(|a| match a {
                        RExpr::Lit(v) => Ok(v),
                        _ => Err(unsupported("a frame offset must be a constant")),
                    })
                    .collect::<Result<_>>()?;
                crate::expr::eval(&expr, &crate::expr::EvalContext::new(&args, &[], None))?
            }
            _ => return Err(unsupported("a frame offset must be a constant")),
        };
        use DataType as D;
        let key_type = key.data_type();
        let is_int = |t: DataType| matches!(t, D::Int2 | D::Int4 | D::Int8);
        let is_num = |t: DataType| is_int(t) || matches!(t, D::Numeric | D::Float4 | D::Float8);
        let off = offset_type.data_type();
        let unknown = offset_type == RType::Unknown;
        let to = match key_type {
            k if is_int(k) && is_int(off) => Some(off),
            D::Numeric if is_num(off) && !matches!(off, D::Float4 | D::Float8) => Some(D::Numeric),
            D::Float4 | D::Float8 if is_num(off) => Some(D::Float8),
            D::Date | D::Timestamp | D::TimestampTz | D::Interval
                if off == D::Interval || unknown =>
            {
                Some(D::Interval)
            }
            k if is_num(k)
                || matches!(k, D::Date | D::Timestamp | D::TimestampTz | D::Interval) =>
            {
                None
            }
            _ => {
                return Err(unsupported(format!(
                    "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                    key.name()
                )))
            }
        };
        let Some(to) = to else {
            return Err(unsupported(format!(
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} \
                 and offset type {}",
                key.name(),
                offset_type.name()
            )));
        };
        let v = crate::expr::cast_value(v, to)?;
        let negative = match &v {
            Value::Null => {
                return Err(Error::NullValueNotAllowed(format!(
                    "frame {what} offset must not be null"
                )))
            }
            Value::Interval(iv) => iv.months < 0 || iv.days < 0 || iv.micros < 0,
            v => crate::expr::cmp_values(v, &Value::Int4(0)) == std::cmp::Ordering::Less,
        };
        if negative {
            return Err(Error::InvalidPrecedingOrFollowingSize(
                "invalid preceding or following size in window function".into(),
            ));
        }
        Ok(v)
    }

    /// The function of a window call and its result type.
    fn window_call(&mut self, f: &ast::Function, name: &str) -> Result<(RelWindowFunc, RType)> {
        if super::functions::aggregate(name).is_some() {
            // Bound as the same call without OVER, then taken back out of the block's
            // GROUP BY aggregates (unless the block computes that call too).
            let mut call = f.clone();
            call.over = None;
            let before = self.levels.last().map_or(0, |l| l.aggs.len());
            self.window_agg = true;
            let bound = self.function(&call);
            self.window_agg = false;
            let RExpr::Col { idx, .. } = bound? else {
                unreachable!("an aggregate call binds to its column")
            };
            let level = self.levels.last_mut().expect("level");
            let j = idx - level.width;
            let agg = if j < before {
                level.aggs[j].clone()
            } else {
                level.aggs.remove(j)
            };
            let ty = agg.ty;
            return Ok((RelWindowFunc::Agg(agg), ty));
        }
        let args = self.window_args(f)?;
        let int8 = RType::Base(DataType::Int8);
        let arity = |lo: usize, hi: usize| {
            if (lo..=hi).contains(&args.len()) {
                Ok(())
            } else {
                Err(Error::UndefinedFunction(format!(
                    "function {name} with {} arguments does not exist",
                    args.len()
                )))
            }
        };
        match name {
            "percent_rank" | "cume_dist" | "rank" | "dense_rank" if !args.is_empty() => {
                Err(Error::WrongObjectType(format!(
                    "WITHIN GROUP is required for ordered-set aggregate {name}"
                )))
            }
            "row_number" | "rank" | "dense_rank" => {
                arity(0, 0)?;
                let func = match name {
                    "row_number" => RelWindowFunc::RowNumber,
                    "rank" => RelWindowFunc::Rank,
                    _ => RelWindowFunc::DenseRank,
                };
                Ok((func, int8))
            }
            "percent_rank" | "cume_dist" => {
                arity(0, 0)?;
                let func = if name == "cume_dist" {
                    RelWindowFunc::CumeDist
                } else {
                    RelWindowFunc::PercentRank
                };
                Ok((func, RType::Base(DataType::Float8)))
            }
            "ntile" | "nth_value" | "lag" | "lead"
                if !self.int4_arg(&args, if name == "ntile" { 0 } else { 1 }) =>
            {
                Err(Error::UndefinedFunction(format!(
                    "function {name} does not exist for these argument types (its row count is an integer)"
                )))
            }
            "ntile" => {
                arity(1, 1)?;
                let n = args.into_iter().next().expect("one argument");
                Ok((RelWindowFunc::Ntile(n), RType::Base(DataType::Int4)))
            }
            "nth_value" => {
                arity(2, 2)?;
                let mut it = args.into_iter();
                let value = it.next().expect("two arguments");
                let ty = self.static_type(&value);
                let n = it.next().expect("two arguments");
                Ok((RelWindowFunc::NthValue(value, n), ty))
            }
            "lag" | "lead" => {
                arity(1, 3)?;
                let mut it = args.into_iter();
                let value = it.next().expect("one argument");
                let ty = self.static_type(&value);
                let (offset, default) = (it.next(), it.next());
                let lead = name == "lead";
                Ok((
                    RelWindowFunc::Shift {
                        lead,
                        value,
                        offset,
                        default,
                    },
                    ty,
                ))
            }
            "first_value" | "last_value" => {
                arity(1, 1)?;
                let value = args.into_iter().next().expect("one argument");
                let ty = self.static_type(&value);
                let func = if name == "first_value" {
                    RelWindowFunc::FirstValue(value)
                } else {
                    RelWindowFunc::LastValue(value)
                };
                Ok((func, ty))
            }
            _ if super::functions::scalar(name).is_some() => Err(Error::WrongObjectType(format!(
                "OVER specified, but {name} is not a window function nor an aggregate function"
            ))),
            _ => Err(unsupported(format!(
                "window function {name}(...) OVER is not supported (row_number, rank, \
                 dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value, \
                 last_value, nth_value and aggregates are)"
            ))),
        }
    }

    /// Whether argument `i` of a window function, when given, is of a type an `integer`
    /// parameter takes (smallint, integer, or an untyped literal or parameter), as
    /// PostgreSQL's `lag(anyelement, integer)` and `ntile(integer)` require.
    fn int4_arg(&self, args: &[RExpr], i: usize) -> bool {
        args.get(i).is_none_or(|a| {
            matches!(
                self.static_type(a),
                RType::Base(DataType::Int2 | DataType::Int4) | RType::Unknown
            )
        })
    }

    /// The plain arguments of a window function call.
    fn window_args(&mut self, f: &ast::Function) -> Result<Vec<RExpr>> {
        let ast::FunctionArguments::List(l) = &f.args else {
            return Ok(Vec::new());
        };
        if f.filter.is_some() || !l.clauses.is_empty() || l.duplicate_treatment.is_some() {
            return Err(unsupported(
                "FILTER, DISTINCT and ORDER BY in a window function's arguments are not supported",
            ));
        }
        l.args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => self.expr(e),
                other => Err(Error::Syntax(format!(
                    "syntax error at or near \"{other}\""
                ))),
            })
            .collect()
    }

    /// Best-effort static type of a bound expression.
    /// The type an aggregate's partial state or kernel reads its key as: double precision
    /// for the two-argument statistics and for `percentile_cont` of numbers (PostgreSQL's
    /// implicit casts), `arg_type` otherwise. Checks the arguments that are no key: the
    /// second of a statistic, the fraction (or array of fractions) of a percentile.
    /// Errors: 42883 for an argument that is no number.
    fn float8_args(
        &self,
        def: &super::functions::AggDef,
        name: &str,
        args: &[RExpr],
        arg_type: DataType,
    ) -> Result<DataType> {
        use super::functions::AggKernel;
        let number = |t: RType| match t {
            RType::Base(d) => d.is_numeric(),
            RType::Unknown => true,
            _ => false,
        };
        let undefined = |types: Vec<RType>| {
            let names: Vec<String> = types.iter().map(|t| t.name()).collect();
            Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                names.join(", ")
            ))
        };
        let types: Vec<RType> = args.iter().map(|a| self.static_type(a)).collect();
        match def.kernel {
            AggKernel::Regr(_) => {
                if types.len() != 2 || !types.iter().all(|t| number(*t)) {
                    return Err(undefined(types));
                }
                Ok(DataType::Float8)
            }
            AggKernel::OrderedSet(f) if f != OrderedSetFunc::Mode => {
                let fractions = match types[0] {
                    RType::Catalog(CatalogType::Array(e)) => Some(e.held_as()),
                    _ => None,
                };
                if fractions.is_some_and(|e| !e.is_numeric()) {
                    return Err(undefined(types));
                }
                if fractions.is_none() && !number(types[0]) {
                    return Err(undefined(types));
                }
                Ok(match f {
                    OrderedSetFunc::PercentileCont if arg_type.is_numeric() => DataType::Float8,
                    _ => arg_type,
                })
            }
            _ => Ok(arg_type),
        }
    }

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

/// A cast from or to `date` or `time` that PostgreSQL has no cast for (`integer::date`,
/// `interval::date`) is 42846, before any row is read. Other casts are checked as values
/// are converted.
fn check_datetime_cast(from: RType, to: RType) -> Result<()> {
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

fn rename(mut cols: Vec<String>, alias: &Option<ast::TableAlias>) -> Vec<String> {
    if let Some(a) = alias {
        for (c, n) in cols.iter_mut().zip(&a.columns) {
            *c = norm(&n.name);
        }
    }
    cols
}

fn desc(o: &ast::OrderByExpr) -> bool {
    matches!(o.options.sort, Some(ast::OrderBySort::Desc))
}

fn nulls_first(o: &ast::OrderByExpr) -> bool {
    // PostgreSQL: NULLs sort as larger than any value unless told otherwise.
    o.options.nulls_first.unwrap_or(desc(o))
}

fn ordinal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
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
fn check_ordinal(e: &ast::Expr, ncols: usize) -> Result<()> {
    match ordinal(e) {
        Some(n) if n == 0 || n > ncols => Err(Error::InvalidColumnReference(format!(
            "ORDER BY position {n} is not in select list"
        ))),
        _ => Ok(()),
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
