//! SQL integration: the `VARIANT` type name, casts to and from VARIANT, and the
//! plan-time refusal of operations Spark does not allow on VARIANT values.

mod casts;
mod checks;
pub mod path_syntax;

pub use casts::VariantCastRewrite;
pub(crate) use casts::rewrite_expressions;
pub use checks::VariantOperationCheck;
pub use path_syntax::VariantExprPlanner;

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::Result;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast;

use crate::array::variant_field;

/// Maps the SQL type name `VARIANT` (any case) to the Variant field, so that
/// `CAST(x AS VARIANT)`, `x::variant` and `CREATE TABLE t (v VARIANT)` work; also
/// Spark's `LONG`, `SHORT`, `BYTE` and `TIMESTAMP_NTZ` type names.
#[derive(Debug, Default)]
pub struct VariantTypePlanner;

impl TypePlanner for VariantTypePlanner {
    fn plan_type_field(&self, sql_type: &ast::DataType) -> Result<Option<FieldRef>> {
        match sql_type {
            ast::DataType::Custom(name, modifiers) if modifiers.is_empty() && name.0.len() == 1 => {
                // VARIANT, plus Spark's type names DataFusion's parser lacks.
                let plain = |dt: DataType| Ok(Some(Arc::new(Field::new("", dt, true))));
                match name.to_string().to_ascii_lowercase().as_str() {
                    "variant" => Ok(Some(variant_field("", true))),
                    "long" => plain(DataType::Int64),
                    "short" => plain(DataType::Int16),
                    "byte" => plain(DataType::Int8),
                    _ => Ok(None),
                }
            }
            ast::DataType::TimestampNtz(None) => Ok(Some(Arc::new(Field::new(
                "",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            )))),
            _ => Ok(None),
        }
    }
}
