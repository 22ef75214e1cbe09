//! SQL integration: the `VARIANT` type name, casts to and from VARIANT, and the
//! plan-time refusal of operations Spark does not allow on VARIANT values.

mod casts;
mod checks;
pub mod path_syntax;

pub use casts::VariantCastRewrite;
pub use checks::VariantOperationCheck;
pub use path_syntax::VariantExprPlanner;

use arrow::datatypes::FieldRef;
use datafusion::common::Result;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast;

use crate::array::variant_field;

/// Maps the SQL type name `VARIANT` (any case) to the Variant field, so that
/// `CAST(x AS VARIANT)`, `x::variant` and `CREATE TABLE t (v VARIANT)` work.
#[derive(Debug, Default)]
pub struct VariantTypePlanner;

impl TypePlanner for VariantTypePlanner {
    fn plan_type_field(&self, sql_type: &ast::DataType) -> Result<Option<FieldRef>> {
        match sql_type {
            ast::DataType::Custom(name, modifiers)
                if modifiers.is_empty()
                    && name.0.len() == 1
                    && name.to_string().eq_ignore_ascii_case("variant") =>
            {
                Ok(Some(variant_field("", true)))
            }
            _ => Ok(None),
        }
    }
}
