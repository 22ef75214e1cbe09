//! Opt-in speedups of plain DataFusion plans: not about Variant, so never
//! installed by [`crate::with_variant`].
//!
//! Each piece below is exact (the same answers as DataFusion's own code, tested
//! against it), but each changes plans or functions of queries that have no
//! VARIANT in them, which an extension must not do by default. A service that
//! wants them says so with one call, [`with_accelerations`], on its session
//! builder; the CLI with `--accelerate`. They need the cargo feature `accel`
//! (on by default, and compiled in but inactive until that call).
//!
//! | piece | what it changes | switch (when installed) |
//! |---|---|---|
//! | [`StringGroupCount`] / [`StringGroupCountExec`] | the partial `count(*) ... GROUP BY` one `Utf8View` column is counted by views | `variant.string_group_count` |
//! | [`StringViewFilter`] / [`ViewEqExpr`] | `s = 'literal'` in filters compares views | `variant.string_view_filter` |
//! | [`PartitionDistinctCount`] | `count(DISTINCT s) ... GROUP BY` repartitions by `s` first | `variant.partition_distinct_count` |
//! | [`FastDatePart`] / [`FastDatePartSwap`] | DataFusion's `date_part` and `EXTRACT` by arithmetic at fixed offsets | `variant.fast_date_part` |
//! | [`FastCount`] | DataFusion's `count` with a groups accumulator for `count(DISTINCT s)` of strings | none: not installing it is the switch |
//! | [`ROW_GROUP_ROWS`] | every Parquet write's row groups, where DataFusion's default was left | `datafusion.execution.parquet.max_row_group_size` |
//!
//! Their place is upstream: DataFusion lacks a groups accumulator for
//! `count(DISTINCT)` of strings (apache/datafusion#15324) and arrow's
//! `date_part` asks the time zone per row (apache/arrow-rs#10829).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use datafusion::prelude::{SessionConfig, SessionContext};
//! let builder = df_variant::variant_state_builder(SessionConfig::new(), Default::default());
//! let ctx = SessionContext::new_with_state(df_variant::accel::with_accelerations(builder).build());
//! // or: let ctx = df_variant::accel::accelerated_context();
//! let plan = ctx
//!     .sql(
//!         "EXPLAIN SELECT s, count(*) FROM (SELECT arrow_cast(column1, 'Utf8View') AS s \
//!          FROM (VALUES ('a'), ('b'), ('a'))) GROUP BY s",
//!     )
//!     .await?
//!     .collect()
//!     .await?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan)?.to_string();
//! assert!(text.contains("StringGroupCountExec"), "{text}");
//! # Ok::<_, datafusion::error::DataFusionError>(())
//! # }).unwrap();
//! ```

mod count_distinct;
mod date_part;
mod date_part_swap;
mod distinct_partition;
mod group_count;
mod view_eq;

use std::sync::Arc;

use datafusion::execution::SessionStateBuilder;
use datafusion::execution::memory_pool::MemoryLimit;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::prelude::{SessionConfig, SessionContext};

pub use count_distinct::{FastCount, PartitionedDistinctCount, StringDistinctCountGroups};
pub use date_part::FastDatePart;
pub use date_part_swap::FastDatePartSwap;
pub use distinct_partition::PartitionDistinctCount;
pub use group_count::{StringGroupCount, StringGroupCountExec};
pub use view_eq::{StringViewFilter, ViewEqExpr};

use crate::config::VariantOptions;

/// The rows per Parquet row group that [`with_accelerations`] sets where
/// DataFusion's default (1,048,576) was left: a 1M-row file is then 8 row
/// groups that two or more cores read in parallel and that statistics can
/// skip. Files with VARIANT columns get it without this module
/// ([`crate::parquet::VARIANT_ROW_GROUP_ROWS`]).
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// The physical rules of this module, in the order [`with_accelerations`]
/// appends them (after DataFusion's and [`crate::optimizer::physical_rules`]):
/// 1. [`StringGroupCount`], over the final shape of the aggregates (after
///    DataFusion combined and repartitioned them);
/// 2. [`PartitionDistinctCount`], likewise;
/// 3. [`StringViewFilter`], after [`crate::optimizer::VariantGetPushdown`]
///    read the filters for pruning.
pub fn physical_rules() -> Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> {
    vec![
        Arc::new(StringGroupCount),
        Arc::new(PartitionDistinctCount),
        Arc::new(StringViewFilter),
    ]
}

/// Adds every piece of this module to a session builder (see the module
/// docs): the physical rules, [`FastDatePart`] and [`FastCount`] in place of
/// DataFusion's `date_part` and `count` (where those are DataFusion's own),
/// and [`ROW_GROUP_ROWS`] where DataFusion's row-group default was left.
///
/// On a runtime with a memory limit, [`PartitionDistinctCount`] starts off:
/// DataFusion's two-phase `count(DISTINCT)` spills where its plan would fail
/// (`SET variant.partition_distinct_count = true` turns it on). Call this
/// after the runtime is set.
pub fn with_accelerations(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    let functions = builder.scalar_functions().get_or_insert_with(Vec::new);
    let date_part = functions
        .iter()
        .rev()
        .find(|f| f.name() == "date_part")
        .and_then(|f| FastDatePart::replacing(f));
    functions.extend(date_part.map(Arc::new));
    let aggregates = builder.aggregate_functions().get_or_insert_with(Vec::new);
    let count = aggregates
        .iter()
        .rev()
        .find(|f| f.name() == "count")
        .and_then(|f| FastCount::replacing(f));
    aggregates.extend(count.map(Arc::new));

    let limited = builder
        .runtime_env()
        .as_ref()
        .is_some_and(|r| matches!(r.memory_pool.memory_limit(), MemoryLimit::Finite(_)));
    let mut config = builder.config().take().unwrap_or_default();
    if config
        .options()
        .extensions
        .get::<VariantOptions>()
        .is_none()
    {
        config = config.with_option_extension(VariantOptions::default());
    }
    if limited && let Some(options) = config.options_mut().extensions.get_mut::<VariantOptions>() {
        options.partition_distinct_count = false;
    }
    let parquet = &mut config.options_mut().execution.parquet;
    if parquet.max_row_group_size
        == datafusion::common::config::ParquetOptions::default().max_row_group_size
    {
        parquet.max_row_group_size = ROW_GROUP_ROWS;
    }
    *builder.config() = Some(config);

    // EXTRACT and DataFusion's date_part() expression function name
    // DataFusion's own function object, not the registry's. It runs after
    // type coercion, which keeps the call's types.
    let mut builder = builder.with_analyzer_rule(Arc::new(FastDatePartSwap));
    for rule in physical_rules() {
        builder = builder.with_physical_optimizer_rule(rule);
    }
    builder
}

/// [`crate::variant_context`] with [`with_accelerations`]: DataFusion's
/// defaults, everything of this crate, and every piece of this module.
pub fn accelerated_context() -> SessionContext {
    let builder = crate::variant_state_builder(SessionConfig::new(), Arc::default());
    crate::enable_url_table(SessionContext::new_with_state(
        with_accelerations(builder).build(),
    ))
}
