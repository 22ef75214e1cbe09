//! SQL integration: the `VARIANT` type name, casts to and from VARIANT, and the
//! plan-time refusal of operations Spark does not allow on VARIANT values.

mod casts;
mod checks;
mod dialect;
mod lateral;
pub mod path_syntax;

pub use casts::VariantCastRewrite;
pub(crate) use casts::rewrite_expressions;
pub use checks::VariantOperationCheck;
pub use dialect::VariantDialect;
pub use lateral::{DecorrelateLateralExplode, LateralExplodePlanner};
pub use path_syntax::VariantExprPlanner;

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::Result;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast;

use crate::array::variant_field;

/// Splits `sql` into statements with the session's SQL dialect, or with
/// [`VariantDialect`] when that is the default `generic` (so that `:` binds as
/// in Spark).
///
/// # Errors
/// A parse error, or an unknown dialect name.
pub fn parse_statements(
    state: &datafusion::execution::SessionState,
    sql: &str,
) -> Result<Vec<datafusion::sql::parser::Statement>> {
    let name = state.config().options().sql_parser.dialect.to_string();
    let dialect: Box<dyn datafusion::sql::sqlparser::dialect::Dialect> =
        if name.eq_ignore_ascii_case("generic") {
            Box::new(VariantDialect::default())
        } else {
            datafusion::sql::sqlparser::dialect::dialect_from_str(&name).ok_or_else(|| {
                datafusion::common::plan_datafusion_err!("unsupported SQL dialect {name}")
            })?
        };
    Ok(datafusion::sql::parser::DFParserBuilder::new(sql)
        .with_dialect(dialect.as_ref())
        .build()?
        .parse_statements()?
        .into_iter()
        .collect())
}

/// `ctx.sql(sql)`, parsed with [`parse_statements`]: one statement, planned
/// and run (DDL) or returned as a DataFrame, as `SessionContext::sql` does.
/// Use it where the SQL may apply `:` inside arithmetic (`1 + v:a::int`),
/// which DataFusion's own parser reads as `(1 + v):a`.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ctx = df_variant::variant_context();
/// let df = df_variant::sql::query(&ctx, "SELECT 1 + v:a::int AS r FROM (SELECT parse_json('{\"a\": 41}') v)")
///     .await
///     .unwrap();
/// let batches = df.collect().await.unwrap();
/// assert_eq!(arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string().lines().nth(3), Some("| 42 |"));
/// # });
/// ```
///
/// # Errors
/// Parse and plan errors, and more than one statement.
pub async fn query(
    ctx: &datafusion::prelude::SessionContext,
    sql: &str,
) -> Result<datafusion::dataframe::DataFrame> {
    let state = ctx.state();
    let mut statements = parse_statements(&state, sql)?;
    if statements.len() != 1 {
        return datafusion::common::not_impl_err!(
            "one SQL statement at a time, got {}",
            statements.len()
        );
    }
    let plan = state.statement_to_plan(statements.remove(0)).await?;
    ctx.execute_logical_plan(plan).await
}

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
