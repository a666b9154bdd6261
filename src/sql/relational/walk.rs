//! Relational expressions bound by the expression binder ([`crate::sql::bind`]): it walks
//! the operators (OR and AND among them), literals, keyword values, IS tests, BETWEEN, IN
//! lists, ANY/ALL over ARRAY[...], CASE, LIKE (with ESCAPE), casts to plain types and the
//! SQL-syntax functions (EXTRACT, SUBSTRING, POSITION, TRIM, AT TIME ZONE, ...), and asks
//! this plan builder only for the leaves, which become the arguments of one
//! [`RExpr::Template`], and for the casts of leaves of a catalog type.

use sqlparser::ast;

use super::*;
use crate::sql::bind::{
    bind_walked, bit_operator, expr_uses_column, regex_operator, ExprScope, Operand,
};

/// Keywords that parse as identifiers and name a value (`current_user`): the expression
/// binder gives them, before any column of the same name, as PostgreSQL does.
const KEYWORD_VALUES: &[&str] = &[
    "current_user",
    "session_user",
    "user",
    "current_role",
    "current_catalog",
    "current_schema",
    "current_timestamp",
    "localtimestamp",
];

/// Whether the expression binder takes `e` apart itself; any other node is a leaf this
/// plan builder binds.
fn walked(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    match e {
        E::Identifier(id) => {
            id.quote_style.is_none() && KEYWORD_VALUES.contains(&id.value.to_lowercase().as_str())
        }
        // A row's IN list is row comparisons, the relational builder's.
        E::In { target, expr, .. } => {
            matches!(target, ast::InTarget::List(_)) && super::exprs::row_items(expr).is_none()
        }
        // Over an ARRAY[...] constructor; over an array value (a column, a function, a
        // parameter) or a subquery ANY/ALL is this builder's (`RExpr::AnyArray`,
        // `RExpr::AnySub`).
        E::AnyOp { right, .. } | E::AllOp { right, .. } => {
            let mut inner = &**right;
            while let E::Nested(x) = inner {
                inner = x;
            }
            matches!(inner, E::Array(_))
        }
        // Comparisons and AND are walked and kept as `RExpr::Cmp` and `RExpr::And` (see
        // `RelBinder::walk`); row comparisons are the relational builder's, and so is
        // `||` of an array (see `Slots::concat`).
        E::BinaryOp { op, left, right } => {
            use ast::BinaryOperator as B;
            let row = |e: &ast::Expr| super::exprs::row_items(e).is_some();
            if *op == B::Overlaps {
                // The expression binder binds both rows' values itself (and refuses
                // other operands as PostgreSQL's grammar does).
                return true;
            }
            matches!(
                op,
                B::Plus
                    | B::Minus
                    | B::Multiply
                    | B::Divide
                    | B::Modulo
                    | B::PGExp
                    | B::Or
                    | B::And
                    | B::StringConcat
            ) || bit_operator(op).is_some()
                || regex_operator(op).is_some()
                || (cmp_op(op).is_some() && !row(left) && !row(right))
        }
        // LIKE ANY|ALL over an ARRAY[...] constructor, as ANY above.
        E::Like { .. } | E::ILike { .. } => match crate::sql::bind::like_quantifier(e) {
            None => true,
            Some((_, array)) => {
                let mut inner = array;
                while let E::Nested(x) = inner {
                    inner = x;
                }
                matches!(inner, E::Array(_))
            }
        },
        E::SimilarTo { escape_char, .. } => escape_char.is_none(),
        E::Cast {
            expr, data_type, ..
        } => plain_type(&data_type.to_string()) && !chooser(expr),
        E::TypedString(ts) => plain_type(&ts.data_type.to_string()),
        E::Ceil { field, .. } | E::Floor { field, .. } => matches!(
            field,
            ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
        ),
        E::Value(_)
        | E::Nested(_)
        | E::UnaryOp { .. }
        | E::IsNull(_)
        | E::IsNotNull(_)
        | E::IsTrue(_)
        | E::IsFalse(_)
        | E::IsNotTrue(_)
        | E::IsNotFalse(_)
        | E::IsUnknown(_)
        | E::IsNotUnknown(_)
        | E::IsDistinctFrom(..)
        | E::IsNotDistinctFrom(..)
        | E::Between { .. }
        | E::Case { .. }
        | E::Position { .. }
        | E::Substring { .. }
        | E::Overlay { .. }
        | E::Extract { .. }
        | E::AtTimeZone { .. }
        | E::Collate { .. }
        | E::Trim { .. }
        | E::Interval(_) => true,
        _ => false,
    }
}

/// Whether the type written `name` is one the expression binder casts to: a plain type
/// it knows by that name (not a reg* type, an oid, an array, nor a catalog name the
/// relational builder holds as another type, such as `name` or `xid`).
fn plain_type(name: &str) -> bool {
    matches!(
        (rtype_of_name(name), crate::sql::types::type_from_name(name)),
        (Ok(RType::Base(a)), Ok(b)) if a == b
    )
}

/// Whether `e` chooses among values that may be of a catalog type (CASE, COALESCE,
/// NULLIF, GREATEST, LEAST): the relational builder casts those itself, as its template
/// keeps the chosen type (see [`RelBinder::chosen_template`]).
fn chooser(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(x) => chooser(x),
        ast::Expr::Case { .. } => true,
        ast::Expr::Function(f) => f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .is_some_and(|id| {
                matches!(
                    norm(id).as_str(),
                    "coalesce" | "nullif" | "greatest" | "least"
                )
            }),
        _ => false,
    }
}

/// The leaves of one walked expression: each an argument of its template.
struct Slots<'r, 'a> {
    rel: &'r mut RelBinder<'a>,
    args: Vec<RExpr>,
}

impl ExprScope for Slots<'_, '_> {
    fn leaf(
        &mut self,
        e: &ast::Expr,
        params: &mut Vec<Option<DataType>>,
    ) -> Result<Option<Operand>> {
        if walked(e) {
            return Ok(None);
        }
        std::mem::swap(params, &mut self.rel.params);
        let bound = self.rel.expr(e).map(|a| {
            let op = self.rel.operand(&a, self.args.len());
            if matches!(op.0, Expr::Literal(_) | Expr::Param(_)) {
                return op;
            }
            self.args.push(a);
            op
        });
        std::mem::swap(params, &mut self.rel.params);
        bound.map(Some)
    }

    /// A leaf of a catalog type (a reg* value, an oid, an array, a record) is cast by
    /// this builder: `'pg_class'::regclass::text` is the relation's name.
    fn cast_leaf(
        &mut self,
        i: usize,
        to: &str,
        params: &mut Vec<Option<DataType>>,
    ) -> Result<Option<Operand>> {
        let Some(arg) = self.args.get(i) else {
            return Ok(None);
        };
        if matches!(self.rel.static_type(arg), RType::Base(_) | RType::Unknown) {
            return Ok(None);
        }
        std::mem::swap(params, &mut self.rel.params);
        let arg = std::mem::replace(&mut self.args[i], RExpr::Lit(Value::Null));
        let cast = rtype_of_name(to).and_then(|t| self.rel.explicit_cast(arg, t, to));
        std::mem::swap(params, &mut self.rel.params);
        let cast = cast?;
        let op = self.rel.operand(&cast, i);
        self.args[i] = cast;
        Ok(Some(op))
    }

    fn array_type(&mut self, op: &Operand) -> Option<String> {
        let Expr::Column(i) = op.0 else {
            return None;
        };
        let t = self.rel.static_type(self.args.get(i)?);
        t.is_array().then(|| t.name())
    }

    /// `l || r` where either side is a leaf of an array type: `RExpr::ArrayConcat` of the
    /// two sides, a new leaf (the leaves the sides read are no longer evaluated apart).
    fn concat(
        &mut self,
        l: &Operand,
        r: &Operand,
        _params: &mut Vec<Option<DataType>>,
    ) -> Result<Option<Operand>> {
        let array = |e: &Expr| match e {
            Expr::Column(i) => {
                (self.args.get(*i)).is_some_and(|a| self.rel.static_type(a).is_array())
            }
            _ => false,
        };
        let (l_array, r_array) = (array(&l.0), array(&r.0));
        self.char_concat(l, r)?;
        if !l_array && !r_array {
            return Ok(None);
        }
        // A typed side that is no array is an element (`ARRAY[1, 2] || 3`, `0 || ARRAY[1]`):
        // a one-element array of it; an unknown literal is an array literal (`'{5}'`).
        let (lr, rr) = (
            self.rel.part(&l.0, &self.args)?,
            self.rel.part(&r.0, &self.args)?,
        );
        let side = |e: RExpr, leaf_array: bool, bound: Option<DataType>| {
            let t = self.rel.static_type(&e);
            if leaf_array || t.is_array() || (t == RType::Unknown && bound.is_none()) {
                e
            } else {
                RExpr::Array(vec![e])
            }
        };
        let (lr, rr) = (side(lr, l_array, l.1), side(rr, r_array, r.1));
        for (i, a) in self.args.iter_mut().enumerate() {
            if expr_uses_column(&l.0, &|c| c == i) || expr_uses_column(&r.0, &|c| c == i) {
                *a = RExpr::Lit(Value::Null);
            }
        }
        let cat = RExpr::ArrayConcat(Box::new(lr), Box::new(rr));
        let op = self.rel.operand(&cat, self.args.len());
        self.args.push(cat);
        Ok(Some(op))
    }
}

impl Slots<'_, '_> {
    /// 42725 for `"char" || text` (either side, unknown literals too): PostgreSQL finds both
    /// `text || anynonarray` and `anynonarray || text` and picks neither.
    fn char_concat(&self, l: &Operand, r: &Operand) -> Result<()> {
        let is_char = |e: &Expr| match e {
            Expr::Column(i) => (self.args.get(*i))
                .is_some_and(|a| self.rel.static_type(a) == RType::Catalog(CatalogType::Char)),
            _ => false,
        };
        let name = |o: &Operand| match (is_char(&o.0), o.1) {
            (true, _) => Some("\"char\"".to_string()),
            (false, None) => Some("unknown".to_string()),
            (false, Some(d)) if d.is_text() => Some(d.name()),
            _ => None,
        };
        if !is_char(&l.0) && !is_char(&r.0) {
            return Ok(());
        }
        match (name(l), name(r)) {
            (Some(a), Some(b)) => Err(Error::AmbiguousFunction(format!(
                "operator is not unique: {a} || {b}"
            ))
            .with_hint(
                "Could not choose a best candidate operator. You might need to add explicit type casts.",
            )),
            _ => Ok(()),
        }
    }
}

/// The relational comparison operator of a binder's binary operator, if it is one.
fn comparison(op: crate::sql::plan::BinaryOp) -> Option<CmpOp> {
    use crate::sql::plan::BinaryOp as B;
    Some(match op {
        B::Eq => CmpOp::Eq,
        B::NotEq => CmpOp::Ne,
        B::Lt => CmpOp::Lt,
        B::LtEq => CmpOp::Le,
        B::Gt => CmpOp::Gt,
        B::GtEq => CmpOp::Ge,
        _ => return None,
    })
}

/// The values an expression chooses among: a CASE's results, the arguments of
/// COALESCE, NULLIF, GREATEST and LEAST (none for any other expression).
fn chosen(e: &Expr) -> Box<dyn Iterator<Item = &Expr> + '_> {
    use crate::sql::ScalarFunc as F;
    match e {
        Expr::Cast { expr, .. } => chosen(expr),
        Expr::Case {
            branches,
            otherwise,
            ..
        } => Box::new(branches.iter().map(|(_, t)| t).chain(otherwise.as_deref())),
        Expr::Func {
            func: F::Coalesce | F::NullIf | F::Greatest | F::Least,
            args,
        } => Box::new(args.iter()),
        _ => Box::new(std::iter::empty()),
    }
}

impl RelBinder<'_> {
    /// Whether the expression binder binds `e` (see [`walked`]).
    pub(super) fn is_walked(e: &ast::Expr) -> bool {
        walked(e)
    }

    /// `e` bound by the expression binder, its leaves by this builder.
    pub(super) fn walk(&mut self, e: &ast::Expr) -> Result<RExpr> {
        let mut params = std::mem::take(&mut self.params);
        let mut slots = Slots {
            rel: self,
            args: Vec::new(),
        };
        let bound = bind_walked(e, &mut slots, &mut params);
        let mut args = slots.args;
        self.params = params;
        let (mut expr, ty) = bound?;
        if args.iter().any(|a| self.static_type(a).is_array()) {
            self.array_comparisons(&mut expr, &mut args)?;
        }
        Ok(match Self::structural(&expr) {
            true => self.part(&expr, &args)?,
            false => self.walked_template(expr, ty, args),
        })
    }

    /// The comparisons of a walked expression `e` (whose leaves are `args`) with an array
    /// leaf on either side, which the expression binder sees as text: each becomes a new
    /// leaf, an [`RExpr::Cmp`] comparing the arrays element by element; an IN list of
    /// arrays becomes the OR of such equalities (IS DISTINCT FROM, CASE, NOT and OR keep
    /// their comparisons where they are).
    fn array_comparisons(&mut self, e: &mut Expr, args: &mut Vec<RExpr>) -> Result<()> {
        use crate::sql::plan::{BinaryOp as B, UnaryOp};
        let array = |s: &Self, x: &Expr, args: &[RExpr]| matches!(x, Expr::Column(i) if args.get(*i).is_some_and(|a| s.static_type(a).is_array()));
        let leaf = |s: &mut Self, op: CmpOp, l: &Expr, r: &Expr, args: &mut Vec<RExpr>| {
            let c = s.comparison(op, l, r, args)?;
            args.push(c);
            Ok::<_, Error>(Expr::Column(args.len() - 1))
        };
        match e {
            Expr::Binary { op, left, right }
                if comparison(*op).is_some()
                    && (array(self, left, args) || array(self, right, args)) =>
            {
                let op = comparison(*op).expect("checked");
                *e = leaf(self, op, left, right, args)?;
            }
            Expr::InList {
                expr,
                list,
                negated,
            } if array(self, expr, args) => {
                let mut any = None;
                for x in list.iter() {
                    let eq = leaf(self, CmpOp::Eq, expr, x, args)?;
                    any = Some(match any {
                        None => eq,
                        Some(a) => Expr::Binary {
                            op: B::Or,
                            left: Box::new(a),
                            right: Box::new(eq),
                        },
                    });
                }
                let any = any.unwrap_or(Expr::Literal(Value::Bool(false)));
                *e = match negated {
                    true => Expr::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(any),
                    },
                    false => any,
                };
            }
            Expr::Unary { expr, .. } | Expr::Cast { expr, .. } | Expr::IsNull { expr, .. } => {
                self.array_comparisons(expr, args)?
            }
            Expr::Binary { left, right, .. }
            | Expr::Like {
                expr: left,
                pattern: right,
                ..
            } => {
                self.array_comparisons(left, args)?;
                self.array_comparisons(right, args)?;
            }
            Expr::Func { args: xs, .. } | Expr::InList { list: xs, .. } => {
                for x in xs {
                    self.array_comparisons(x, args)?;
                }
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                for x in operand.iter_mut().chain(otherwise.iter_mut()) {
                    self.array_comparisons(x, args)?;
                }
                for (w, t) in branches {
                    self.array_comparisons(w, args)?;
                    self.array_comparisons(t, args)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether a walked expression keeps a relational node: a comparison (the hash join
    /// reads its keys) or an AND (predicate pushdown splits it into its conjuncts).
    fn structural(e: &Expr) -> bool {
        use crate::sql::plan::BinaryOp as B;
        matches!(e, Expr::Binary { op, .. } if *op == B::And || comparison(*op).is_some())
    }

    /// Part `e` of a walked expression whose leaves are `args`: an AND as [`RExpr::And`]
    /// of its parts (nested ANDs flattened), a comparison as [`RExpr::Cmp`], anything
    /// else as a template of only the arguments it reads (the others NULL, never
    /// evaluated).
    fn part(&mut self, e: &Expr, args: &[RExpr]) -> Result<RExpr> {
        use crate::sql::plan::BinaryOp as B;
        match e {
            Expr::Binary { op, left, right } if *op == B::And => {
                let mut parts = Vec::new();
                for side in [left, right] {
                    match self.part(side, args)? {
                        RExpr::And(ps) => parts.extend(ps),
                        p => parts.push(p),
                    }
                }
                return Ok(RExpr::And(parts));
            }
            Expr::Binary { op, left, right } => {
                if let Some(op) = comparison(*op) {
                    return self.comparison(op, left, right, args);
                }
            }
            Expr::Column(i) => return Ok(args[*i].clone()),
            Expr::Literal(v) => return Ok(RExpr::Lit(v.clone())),
            Expr::Param(p) => return Ok(RExpr::Param(*p)),
            _ => {}
        }
        let args = (args.iter().enumerate())
            .map(|(i, a)| match expr_uses_column(e, &|c| c == i) {
                true => a.clone(),
                false => RExpr::Lit(Value::Null),
            })
            .collect();
        Ok(self.walked_template(e.clone(), None, args))
    }

    /// A walked comparison as the structural [`RExpr::Cmp`] the hash join reads its keys
    /// from and predicate pushdown moves by its columns: each operand a [`Self::part`].
    /// Errors: 42883 for arrays compared with a value of another type (PostgreSQL's array
    /// operators take two arrays of one type).
    fn comparison(
        &mut self,
        op: CmpOp,
        left: &Expr,
        right: &Expr,
        args: &[RExpr],
    ) -> Result<RExpr> {
        let (mut l, mut r) = (self.part(left, args)?, self.part(right, args)?);
        // A parameter compared with an oid, a name or a "char" is described as one (held
        // as a bigint or text); an unknown literal is read as that type (`relkind = 'rr'`
        // compares with 'r', as charin reads it).
        let types = [self.static_type(&r), self.static_type(&l)];
        for (p, other) in [&mut l, &mut r].into_iter().zip(types) {
            let RType::Catalog(t @ (CatalogType::Oid | CatalogType::Name | CatalogType::Char)) =
                other
            else {
                continue;
            };
            match p {
                RExpr::Param(i) if !self.catalog_params.iter().any(|c| c.0 == *i) => {
                    self.catalog_params.push((*i, t));
                }
                RExpr::Lit(v @ Value::Text(_)) if t != CatalogType::Oid => {
                    if let Ok(read) = crate::exec::relational::conform_catalog(v.clone(), t) {
                        *v = read;
                    }
                }
                _ => {}
            }
        }
        let arrays = array_operands(self.static_type(&l), self.static_type(&r), op.symbol())?;
        Ok(RExpr::Cmp {
            op,
            arrays,
            left: Box::new(l),
            right: Box::new(r),
        })
    }

    /// The relational form of a walked expression: a bare literal, parameter or leaf as
    /// itself (a leaf keeps its catalog type), anything else a template typed `ty`.
    fn walked_template(&self, expr: Expr, ty: Option<DataType>, mut args: Vec<RExpr>) -> RExpr {
        match expr {
            // A literal the binder typed otherwise (`NULL::integer`, `'a'::text`) keeps
            // its type in a template.
            Expr::Literal(v)
                if args.is_empty()
                    && ty.is_none_or(|t| {
                        self.static_type(&RExpr::Lit(v.clone())) == RType::Base(t)
                    }) =>
            {
                return RExpr::Lit(v)
            }
            Expr::Param(i) if args.is_empty() => return RExpr::Param(i),
            // A leaf alone (the others, if any, read by nothing: see `Slots::concat`).
            Expr::Column(i) if i < args.len() => return args.swap_remove(i),
            _ => {}
        }
        self.chosen_template(expr, ty, args)
    }

    /// A template typed `ty`; one that chooses one of its arguments (CASE, COALESCE,
    /// NULLIF, GREATEST) of a catalog type (an oid, a name, an array) keeps that type.
    pub(super) fn chosen_template(
        &self,
        expr: Expr,
        ty: Option<DataType>,
        args: Vec<RExpr>,
    ) -> RExpr {
        use crate::sql::ScalarFunc as F;
        // The session's names (`current_user`, `current_schema()`, ...) are of type name.
        if let Expr::Func {
            func: F::CurrentDatabase | F::CurrentSchema | F::CurrentUser,
            ..
        } = expr
        {
            let call = RExpr::Template { expr, args };
            return RExpr::Cast(Box::new(call), RType::Catalog(CatalogType::Name));
        }
        let catalog = chosen(&expr)
            .filter_map(|r| match r {
                Expr::Column(i) => args.get(*i).map(|a| self.static_type(a)),
                _ => None,
            })
            .find(|t| !matches!(t, RType::Base(_) | RType::Unknown) && self.held_type(*t) == ty);
        match (catalog, ty) {
            (Some(t), _) => RExpr::Cast(Box::new(RExpr::Template { expr, args }), t),
            (None, Some(ty)) => self.typed_template(expr, ty, args),
            (None, None) => RExpr::Template { expr, args },
        }
    }

    /// The type a value of relational type `t` is held as, as the expression binder sees
    /// it (an oid as a bigint, a name or array as text).
    fn held_type(&self, t: RType) -> Option<DataType> {
        match t {
            RType::Base(d) => Some(d),
            RType::Catalog(c) => Some(c.held_as()),
            // A regproc is held as the function's name (see the executor's casts).
            RType::Reg(RegKind::Proc) => Some(DataType::Text),
            RType::Reg(_) => Some(DataType::Int8),
            RType::Record(_) => Some(DataType::Text),
            RType::Unknown => None,
        }
    }

    /// `a`, argument `i` of a template, as an operand of the expression binder: a literal
    /// or parameter as written (so an unknown literal takes its type from the call, as in
    /// PostgreSQL), anything else as column `i` of the argument row, typed by its static
    /// type (catalog types as the type they are held as).
    pub(super) fn operand(&self, a: &RExpr, i: usize) -> Operand {
        let ty = self.held_type(self.static_type(a));
        match a {
            RExpr::Lit(v) => (Expr::Literal(v.clone()), ty),
            RExpr::Param(p) => (Expr::Param(*p), self.params.get(*p).copied().flatten()),
            // A subscript's element is evaluated as text: read as its static type.
            RExpr::Subscript(..) if ty.is_some_and(|t| !t.is_text()) => (
                Expr::Cast {
                    expr: Box::new(Expr::Column(i)),
                    to: ty.expect("checked"),
                },
                ty,
            ),
            _ => (Expr::Column(i), ty),
        }
    }
}
