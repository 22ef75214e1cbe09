//! Spark SQL compatibility: the Spark-compatible built-ins of `datafusion-spark`
//! 55.2 (`array`, `map`, `named_struct`, `element_at`, `sha2`, `json_tuple`, ...)
//! next to ours, so Spark SQL that mixes Variant functions with Spark built-ins
//! runs unchanged. Opt-in: `variant.spark_functions = true` in the configuration
//! given to [`crate::variant_context_with_config`], or the CLI's `--spark`.
//! Behind the crate feature `spark` (on by default).

#[cfg(feature = "spark")]
use std::sync::Arc;

use datafusion::common::Result;
#[cfg(not(feature = "spark"))]
use datafusion::common::plan_err;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;

#[cfg(feature = "spark")]
mod element_at;

/// Whether the crate was built with the `spark` feature.
pub const AVAILABLE: bool = cfg!(feature = "spark");

/// Adds Spark's built-ins to a builder. Call before [`crate::with_variant`] so
/// that our functions (same names: none today, but `to_json` and friends) win.
#[cfg(feature = "spark")]
pub fn with_spark_functions(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .expr_planners()
        .get_or_insert_with(Vec::new)
        .insert(0, Arc::new(datafusion_spark::planner::SparkFunctionPlanner));
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .extend(datafusion_spark::all_default_scalar_functions());
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .extend(our_spark_functions());
    builder
        .aggregate_functions()
        .get_or_insert_with(Vec::new)
        .extend(datafusion_spark::all_default_aggregate_functions());
    builder
        .window_functions()
        .get_or_insert_with(Vec::new)
        .extend(datafusion_spark::all_default_window_functions());
    builder
        .table_functions()
        .get_or_insert_with(Default::default)
        .extend(
            datafusion_spark::all_default_table_functions()
                .into_iter()
                .map(|f| (f.name().to_string(), f)),
        );
    builder
}

/// Spark's built-ins that datafusion-spark 55.2 lacks or answers otherwise,
/// which df-variant owns: `element_at` and `try_element_at` on arrays
/// (DataFusion's `element_at` is `map_extract`, maps only, answering a list).
#[cfg(feature = "spark")]
fn our_spark_functions() -> Vec<Arc<datafusion::logical_expr::ScalarUDF>> {
    use datafusion::logical_expr::ScalarUDF;
    vec![
        Arc::new(ScalarUDF::new_from_impl(element_at::MapExtractOnly::new())),
        Arc::new(ScalarUDF::new_from_impl(element_at::SparkElementAt::new(
            false,
        ))),
        Arc::new(ScalarUDF::new_from_impl(element_at::SparkElementAt::new(
            true,
        ))),
    ]
}

/// Without the `spark` feature: the builder unchanged.
#[cfg(not(feature = "spark"))]
pub fn with_spark_functions(builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
}

/// Registers Spark's built-ins on a live context, then ours again (so ours win).
///
/// # Errors
/// Without the `spark` feature, or when registration fails.
pub fn register_spark_functions(ctx: &SessionContext) -> Result<()> {
    #[cfg(feature = "spark")]
    {
        use datafusion::execution::FunctionRegistry;
        {
            let state_ref = ctx.state_ref();
            let mut state = state_ref.write();
            datafusion_spark::register_all(&mut *state)?;
            for f in our_spark_functions() {
                state.register_udf(f)?;
            }
            state
                .register_expr_planner(Arc::new(datafusion_spark::planner::SparkFunctionPlanner))?;
            crate::register_all(&mut *state)?;
        }
        for f in datafusion_spark::all_default_table_functions() {
            ctx.register_udtf(f.name(), Arc::clone(f.function()));
        }
        Ok(())
    }
    #[cfg(not(feature = "spark"))]
    {
        let _ = ctx;
        plan_err!(
            "Spark functions are not available: df-variant was built without the `spark` feature"
        )
    }
}
