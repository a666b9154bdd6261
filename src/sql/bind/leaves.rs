//! The expression binder's leaves: what a plan builder resolves itself while the binder
//! walks the operators, literals, CASE and the rest of an expression.

use sqlparser::ast;

use super::*;

/// The leaves of an expression that a plan builder resolves itself. The expression binder
/// asks for every node before it takes the node apart: the streaming binder resolves
/// names through its own [`Scope`] and claims no node; the relational plan builder claims
/// column references, subqueries, function calls and the constructs not yet walked here,
/// binds each as an argument of its template and hands back `Expr::Column(slot)`.
pub(crate) trait ExprScope {
    /// `e` as an operand (an expression and its type, `None` for PostgreSQL's unknown), or
    /// `None` when the expression binder binds `e` itself. `params` holds the statement's
    /// parameter types; a builder that infers one updates it.
    fn leaf(
        &mut self,
        e: &ast::Expr,
        params: &mut Vec<Option<DataType>>,
    ) -> Result<Option<Operand>>;

    /// Leaf `i` (an operand this scope gave as `Expr::Column(i)`) cast to the type written
    /// `to`, when the builder casts it itself: a leaf of a type the expression binder does
    /// not know (a reg* value, whose text is the object's name; an array). `None` (the
    /// default) leaves the cast to the expression binder.
    fn cast_leaf(
        &mut self,
        _i: usize,
        _to: &str,
        _params: &mut Vec<Option<DataType>>,
    ) -> Result<Option<Operand>> {
        Ok(None)
    }

    /// The type name (`integer[]`) of `op` when it is one of this scope's leaves of an
    /// array type, which the expression binder sees as text; `None` (the default) for
    /// any other operand.
    fn array_type(&mut self, _op: &Operand) -> Option<String> {
        None
    }

    /// `l || r` when the builder concatenates them itself: either side one of its leaves
    /// of a type the expression binder does not know (an array). `None` (the default)
    /// leaves `||` to the expression binder.
    fn concat(
        &mut self,
        _l: &Operand,
        _r: &Operand,
        _params: &mut Vec<Option<DataType>>,
    ) -> Result<Option<Operand>> {
        Ok(None)
    }
}

/// Bind `e` with the expression binder, asking `leaves` for each node first; `params` holds
/// the statement's parameter types and gets the ones inferred. Result: the expression and
/// its type (`None`: unknown). Errors as the binder gives them.
pub(crate) fn bind_walked(
    e: &ast::Expr,
    leaves: &mut dyn ExprScope,
    params: &mut Vec<Option<DataType>>,
) -> Result<Operand> {
    let mut b = Binder::for_typing(std::mem::take(params));
    b.leaves = Some(leaves);
    let r = b.expr(e, &Scope::default());
    *params = std::mem::take(&mut b.params);
    r.map(|b| (b.expr, b.ty))
}

impl Binder<'_> {
    /// The node `e` as a leaf of the plan builder, when it claims it.
    pub(super) fn claimed_leaf(&mut self, e: &ast::Expr) -> Result<Option<Bound>> {
        let Some(leaves) = self.leaves.as_deref_mut() else {
            return Ok(None);
        };
        Ok(leaves
            .leaf(e, &mut self.params)?
            .map(|(expr, ty)| Bound { expr, ty }))
    }

    /// `b` cast to the type written `to` by the plan builder, when `b` is one of its
    /// leaves and it casts it itself ([`ExprScope::cast_leaf`]).
    pub(super) fn cast_leaf(&mut self, b: &Bound, to: &str) -> Result<Option<Bound>> {
        let (Some(leaves), Expr::Column(i)) = (self.leaves.as_deref_mut(), &b.expr) else {
            return Ok(None);
        };
        Ok(leaves
            .cast_leaf(*i, to, &mut self.params)?
            .map(|(expr, ty)| Bound { expr, ty }))
    }

    /// The type name (`integer[]`) of `b` when it is a plan builder's leaf of an array
    /// type ([`ExprScope::array_type`]).
    pub(super) fn array_leaf_type(&mut self, b: &Bound) -> Option<String> {
        let leaves = self.leaves.as_deref_mut()?;
        leaves.array_type(&(b.expr.clone(), b.ty))
    }

    /// `l || r` by the plan builder, when it concatenates them itself
    /// ([`ExprScope::concat`]).
    pub(super) fn concat_leaves(&mut self, l: &Bound, r: &Bound) -> Result<Option<Bound>> {
        let Some(leaves) = self.leaves.as_deref_mut() else {
            return Ok(None);
        };
        let (l, r) = ((l.expr.clone(), l.ty), (r.expr.clone(), r.ty));
        Ok(leaves
            .concat(&l, &r, &mut self.params)?
            .map(|(expr, ty)| Bound { expr, ty }))
    }
}
