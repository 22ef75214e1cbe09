//! SQL integration: the `VARIANT` type name, casts to and from VARIANT, and the
//! plan-time refusal of operations Spark does not allow on VARIANT values.

mod casts;
mod checks;
mod copy_advice;
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
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast;

use crate::array::variant_field;
use crate::variant::types::SparkType;

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

/// Splits a script into its statements' texts at the semicolons between them
/// (not those in strings, quoted names or comments), for callers that run some
/// statements themselves (`ALTER TABLE` on Delta tables) and parse the rest.
///
/// ```
/// let parts = df_variant::sql::split_statements("SELECT ';'; ALTER TABLE t DROP FEATURE x;\n");
/// assert_eq!(parts, vec!["SELECT ';'", " ALTER TABLE t DROP FEATURE x"]);
/// ```
pub fn split_statements(sql: &str) -> Vec<String> {
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let Ok(tokens) = Tokenizer::new(&VariantDialect::default(), sql).tokenize() else {
        return vec![sql.to_string()];
    };
    let mut out = Vec::new();
    let mut current = String::new();
    for t in tokens {
        if t == Token::SemiColon {
            out.push(std::mem::take(&mut current));
        } else {
            current.push_str(&t.to_string());
        }
    }
    out.push(current);
    out.retain(|s| !s.trim().is_empty());
    out
}

/// `ctx.sql(sql)`, parsed with [`parse_statements`]: one statement, planned
/// and run (DDL) or returned as a DataFrame, as `SessionContext::sql` does.
/// Use it where the SQL may apply `:` inside arithmetic (`1 + v:a::int`),
/// which DataFusion's own parser reads as `(1 + v):a`, and for `ALTER TABLE` on
/// Delta tables ([`crate::delta::alter`]), which DataFusion does not plan.
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
    // `ALTER TABLE` on Delta tables, which DataFusion does not plan.
    #[cfg(feature = "delta")]
    if let Some(alter) = crate::delta::alter::parse_alter(sql)? {
        return Box::pin(crate::delta::alter::alter_table(ctx, &alter)).await;
    }
    let state = ctx.state();
    let mut statements = parse_statements(&state, sql)?;
    if statements.len() != 1 {
        return datafusion::common::not_impl_err!(
            "one SQL statement at a time, got {}",
            statements.len()
        );
    }
    let plan = plan_statement(&state, statements.remove(0)).await?;
    execute(ctx, plan).await
}

/// `ctx.execute_logical_plan(plan)`. (A table made by `CREATE TABLE ... AS`
/// keeps its VARIANT columns shredded however it is run: [`crate::VariantCatalogList`].)
///
/// # Errors
/// The errors of `execute_logical_plan`.
pub async fn execute(
    ctx: &datafusion::prelude::SessionContext,
    plan: datafusion::logical_expr::LogicalPlan,
) -> Result<datafusion::dataframe::DataFrame> {
    ctx.execute_logical_plan(plan).await
}

/// `state.statement_to_plan(statement)`, with Spark's error class where a
/// function that takes no named arguments is given one (`variant_get(v =>
/// ...)`): `NAMED_PARAMETERS_NOT_SUPPORTED`, as Spark 4.3 says it; and with
/// `COPY ... OPTIONS ('variant.shredding_schema' 'advice')` given the schema
/// `variant_shredding_advice` proposes for the table the `COPY` reads.
///
/// # Errors
/// The plan errors of `statement_to_plan`.
pub async fn plan_statement(
    state: &datafusion::execution::SessionState,
    statement: datafusion::sql::parser::Statement,
) -> Result<datafusion::logical_expr::LogicalPlan> {
    let statement = copy_advice::resolve(state, statement).await?;
    if let Some(log) = state
        .config()
        .get_extension::<crate::workload::WorkloadLog>()
    {
        let wanted = state
            .config_options()
            .extensions
            .get::<crate::config::VariantOptions>()
            .is_some_and(|o| o.workload_log_sql);
        log.set_query(wanted.then(|| statement.to_string()));
    }
    let plan = state
        .statement_to_plan(statement)
        .await
        .map_err(named_parameters_error)?;
    Ok(crate::spark::timestamp::resolve_prepare(
        plan,
        state.config_options(),
    ))
}

/// DataFusion's refusal of named arguments in Spark's words; other errors as
/// they are.
fn named_parameters_error(
    e: datafusion::common::DataFusionError,
) -> datafusion::common::DataFusionError {
    let datafusion::common::DataFusionError::Plan(message) = &e else {
        return e;
    };
    let function = message
        .split_once("unction '")
        .and_then(|(_, rest)| rest.strip_suffix("' does not support named arguments"));
    match function {
        Some(name) => datafusion::common::plan_datafusion_err!(
            "[NAMED_PARAMETERS_NOT_SUPPORTED] Named parameters are not supported for function \
             `{name}`; please retry the query with positional arguments to the function call \
             instead. SQLSTATE: 4274K"
        ),
        None => e,
    }
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
                    // Spark mode's planner reads it before this one.
                    "timestamp_ltz" => plan_err!(
                        "TIMESTAMP_LTZ (Spark's TIMESTAMP, an instant in the session time zone) \
                         is read in Spark mode (`variant.spark_functions = true`, the CLI's \
                         `--spark`); outside it, write TIMESTAMP WITH TIME ZONE"
                    ),
                    _ => Ok(None),
                }
            }
            // Spark's `MAP<STRING, T>`, the map a VARIANT object casts to
            // (`df_variant::sql::query` and the CLI parse the syntax).
            ast::DataType::Map(key, value) => Ok(SparkType::parse(&format!("map<{key}, {value}>"))
                .ok()
                .map(|t| Arc::new(Field::new("", t.to_arrow(), true)))),
            ast::DataType::TimestampNtz(None) => Ok(Some(Arc::new(Field::new(
                "",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            )))),
            _ => Ok(None),
        }
    }
}
