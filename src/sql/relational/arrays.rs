//! The array functions PostgreSQL 15 defines by its `||` operator: `array_cat(a, b)` is
//! `a || b`, `array_append(a, e)` is `a || ARRAY[e]` and `array_prepend(e, a)` is
//! `ARRAY[e] || a` (a NULL element is kept: `array_append(ARRAY[1], NULL)` is `{1,NULL}`).

use super::{RExpr, RelBinder};
use crate::error::{Error, Result};
use crate::sql::types::RType;

/// The functions [`RelBinder::array_concat_call`] binds.
pub(super) const ARRAY_CONCAT_FUNCTIONS: &[&str] = &["array_cat", "array_append", "array_prepend"];

impl RelBinder<'_> {
    /// `array_cat`, `array_append` or `array_prepend` over bound `args`, as the
    /// concatenation its `||` form binds to. Errors: 42883 for another number of
    /// arguments or an array argument of no array type.
    pub(super) fn array_concat_call(&mut self, name: &str, args: Vec<RExpr>) -> Result<RExpr> {
        let types: Vec<RType> = args.iter().map(|a| self.static_type(a)).collect();
        let array_ok = |t: &RType| t.is_array() || *t == RType::Unknown;
        let ok = match (name, types.as_slice()) {
            ("array_cat", [a, b]) => array_ok(a) && array_ok(b),
            ("array_append", [a, e]) => array_ok(a) && !e.is_array(),
            ("array_prepend", [e, a]) => array_ok(a) && !e.is_array(),
            _ => false,
        };
        if !ok {
            let names: Vec<String> = types.iter().map(RType::name).collect();
            return Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                names.join(", ")
            ))
            .with_hint(
                "No function matches the given name and argument types. You might need to add explicit type casts.",
            ));
        }
        let mut it = args.into_iter();
        let (a, b) = (it.next().expect("two"), it.next().expect("two"));
        let (l, r) = match name {
            "array_append" => (a, RExpr::Array(vec![b])),
            "array_prepend" => (RExpr::Array(vec![a]), b),
            _ => (a, b),
        };
        Ok(RExpr::ArrayConcat(Box::new(l), Box::new(r)))
    }
}
