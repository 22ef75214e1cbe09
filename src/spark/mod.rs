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
pub mod timestamp;

/// Whether the crate was built with the `spark` feature.
pub const AVAILABLE: bool = cfg!(feature = "spark");

/// Adds Spark's built-ins to a builder. Call before [`crate::with_variant`] so
/// that our functions (same names: none today, but `to_json` and friends) win.
#[cfg(feature = "spark")]
pub fn with_spark_functions(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .expr_planners()
        .get_or_insert_with(Vec::new)
        .splice(0..0, spark_planners());
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .extend(
            datafusion_spark::all_default_scalar_functions()
                .into_iter()
                .chain(our_spark_functions()),
        );
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

/// The expression planners of Spark mode, to go ahead of DataFusion's (which
/// plans `array[i]` from 1): ours for the subscript, then datafusion-spark's.
#[cfg(feature = "spark")]
fn spark_planners() -> Vec<Arc<dyn datafusion::logical_expr::planner::ExprPlanner>> {
    vec![
        Arc::new(element_at::SparkSubscriptPlanner),
        Arc::new(datafusion_spark::planner::SparkFunctionPlanner),
    ]
}

/// Spark's built-ins that datafusion-spark 55.2 lacks or answers otherwise,
/// which df-variant owns: `element_at` and `try_element_at` on arrays
/// (DataFusion's `element_at` is `map_extract`, maps only, answering a list).
#[cfg(feature = "spark")]
fn our_spark_functions() -> Vec<Arc<datafusion::logical_expr::ScalarUDF>> {
    use datafusion::logical_expr::ScalarUDF;
    use element_at::{Access, SparkElementAt};
    let mut functions = vec![Arc::new(ScalarUDF::new_from_impl(
        element_at::MapExtractOnly::new(),
    ))];
    for access in [
        Access::ElementAt,
        Access::TryElementAt,
        Access::Get,
        Access::Subscript,
    ] {
        functions.push(Arc::new(ScalarUDF::new_from_impl(SparkElementAt::new(
            access,
        ))));
    }
    functions
}

/// `state` with `planners` ahead of its expression planners, and Spark's
/// TIMESTAMP planned ([`timestamp::with_session_timestamps`]). A live session's
/// planners cannot be reordered, so the state is rebuilt; a rebuilt state
/// registers its functions again in hash order, which could hand a name shared
/// by two functions (one's name, another's alias) to either, so they are then
/// registered once more in an order that gives every name its old function.
#[cfg(feature = "spark")]
fn planners_first(
    state: &datafusion::execution::SessionState,
    planners: Vec<Arc<dyn datafusion::logical_expr::planner::ExprPlanner>>,
) -> Result<datafusion::execution::SessionState> {
    let mut builder = SessionStateBuilder::new_from_existing(state.clone());
    builder
        .expr_planners()
        .get_or_insert_with(Vec::new)
        .splice(0..0, planners);
    timestamp::with_session_timestamps(&mut builder);
    let mut rebuilt = builder.build();
    crate::registry::restore_functions(state, &mut rebuilt)?;
    Ok(rebuilt)
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
            crate::register_all(&mut *state)?;
            // Spark's planners first, as in a session built in Spark mode.
            *state = planners_first(&state, spark_planners())?;
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

#[cfg(all(test, feature = "spark"))]
mod tests {
    use super::*;

    /// The names a session's registries give, name or alias → function name.
    fn names(ctx: &SessionContext) -> Vec<(String, String)> {
        let state = ctx.state();
        let mut out: Vec<(String, String)> = state
            .scalar_functions()
            .iter()
            .map(|(k, f)| (format!("scalar {k}"), f.name().to_string()))
            .chain(
                state
                    .aggregate_functions()
                    .iter()
                    .map(|(k, f)| (format!("aggregate {k}"), f.name().to_string())),
            )
            .chain(
                state
                    .window_functions()
                    .iter()
                    .map(|(k, f)| (format!("window {k}"), f.name().to_string())),
            )
            .collect();
        out.sort();
        out
    }

    #[tokio::test]
    async fn spark_functions_on_a_live_session_plan_subscripts_as_spark() -> Result<()> {
        let ctx = crate::variant_context();
        register_spark_functions(&ctx)?;
        let batches = ctx
            .sql("SELECT array(10, 20, 30)[0] AS a, array(10, 20, 30)[2] AS b")
            .await?
            .collect()
            .await?;
        let text = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
        assert!(text.contains("| 10 | 30 |"), "{text}");
        Ok(())
    }

    /// A session built in Spark mode and one turned to it later give every
    /// name the same function, in every process: `enable_url_table` rebuilds
    /// the session, which handed `array_contains` to DataFusion's `array_has`
    /// or to Spark's by hash order (planted: without `restore_functions` this
    /// fails within the first few of the 20 sessions, each with its own hash
    /// order).
    #[tokio::test]
    async fn spark_mode_names_the_same_functions_however_the_session_was_made() -> Result<()> {
        let live = crate::variant_context();
        register_spark_functions(&live)?;
        let expected = names(&live);
        for _ in 0..20 {
            let mut config = datafusion::prelude::SessionConfig::new()
                .with_option_extension(crate::VariantOptions::default());
            config
                .options_mut()
                .set("variant.spark_functions", "true")?;
            let built = crate::variant_context_with_config(config);
            assert_eq!(names(&built), expected);
        }
        let batches = live
            .sql("SELECT array_contains(array(1, NULL), 2) AS a")
            .await?
            .collect()
            .await?;
        assert!(batches[0].column(0).is_null(0), "Spark's answer is NULL");
        Ok(())
    }

    /// Rebuilding a session to put planners first keeps the function of every
    /// name and alias. (A plain rebuild hands a shared name out by the hash
    /// order of the process, which one process may not show; the order itself is
    /// checked below, and fails with the order reversed.)
    #[test]
    fn putting_planners_first_keeps_every_function_name() -> Result<()> {
        let ctx = crate::variant_context();
        register_spark_functions(&ctx)?;
        let before = names(&ctx);
        for _ in 0..20 {
            let state = planners_first(&ctx.state(), vec![])?;
            assert_eq!(names(&SessionContext::new_with_state(state)), before);
        }
        Ok(())
    }
}
