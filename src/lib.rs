//! # df-variant
//!
//! A first-class **Variant** type for Apache DataFusion: the open Parquet/Spark
//! [Variant binary encoding](https://github.com/apache/parquet-format/blob/master/VariantEncoding.md)
//! with Spark-exact SQL functions on top.
//!
//! ## Main APIs
//! - [`register_all`] registers every function on a [`FunctionRegistry`];
//!   [`with_variant`] adds functions, the `VARIANT` type, casts and plan checks to
//!   a [`SessionStateBuilder`]; [`variant_context`] is a ready [`SessionContext`].
//! - [`functions`]: every function as a shared UDF, and the lists registered;
//!   [`expr_fn`]: `Expr` builders for DataFrame users.
//! - [`VariantOptions`]: the `variant.*` settings (`SET variant.shredding = ...`).
//! - [`variant`]: Spark semantics over `parquet-variant` values (JSON, paths, casts,
//!   schemas, formatting), independent of DataFusion.
//! - [`array`](mod@array): Variant columns in Arrow.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! let ctx = df_variant::variant_context();
//! let df = ctx
//!     .sql(r#"SELECT variant_get(parse_json('{"a": {"b": "42"}}'), '$.a.b', 'int') AS x"#)
//!     .await?;
//! let batches = df.collect().await?;
//! let x = batches[0].column(0).as_any().downcast_ref::<arrow::array::Int32Array>().unwrap();
//! assert_eq!(x.value(0), 42);
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "accel")]
pub mod accel;
pub mod array;
mod boundary;
mod catalog;
#[cfg(feature = "proto")]
pub mod codec;
mod config;
#[cfg(feature = "delta")]
pub mod delta;
// The Bluesky event generator of the demo, the benches and the JSONBench
// harness (`df-variant generate-bluesky`): part of the CLI, not the library.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod demo;
#[cfg(feature = "distributed")]
pub mod distributed;
pub(crate) mod fs;
mod ingest;
mod memory;
mod memtable;
pub mod optimizer;
pub mod parquet;
mod registry;
pub mod shredding;
mod spark;
pub mod sql;
mod tables;
mod udaf;
mod udf;
pub mod variant;
mod workload;

pub use boundary::{DECODER_PANIC_MESSAGE, PANIC_MESSAGE, guard};
pub use catalog::{VariantCatalog, VariantCatalogList, VariantSchema};
pub use config::{
    ByteSize, DEFAULT_SCAN_CACHE_BYTES, ShreddingMode, ShreddingSchema, ShreddingSetting,
    VariantOptions, session_tz,
};
pub use fs::HideHiddenFiles;
pub use ingest::{
    READ_JSON_VARIANT, ReadJsonVariant, TRY_READ_JSON_VARIANT, read_json_variant_schema,
};
pub use memory::memory_limited_runtime;
pub use memtable::{ShreddedMemTable, ShreddedMemoryExec};
pub use spark::{
    AVAILABLE as SPARK_FUNCTIONS_AVAILABLE, register_spark_functions, with_spark_functions,
};
pub use tables::{VARIANT_RESHRED, VariantReshred, variant_reshred_udf};
pub use udf::common::for_each_variant;
pub use workload::{ExtractionRead, Outcome, WorkloadLog};

/// Every function of the crate, each as a shared UDF, and the lists
/// [`register_all`] and [`with_variant`] register.
pub mod functions {
    pub use crate::udaf::{functions as aggregate_functions, schema_of_variant_agg_udaf};
    pub use crate::udf::coerce::{coercing_functions, coercing_functions_over, unwrapped};
    pub use crate::udf::{functions as scalar_functions, table_functions, *};
}

/// [`Expr`](datafusion::logical_expr::Expr) builders for DataFrame users: one
/// per function of the crate.
pub mod expr_fn {
    pub use crate::udaf::expr_fn::*;
    pub use crate::udf::expr_fn::*;
}

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::{SessionConfig, SessionContext};

/// Registers every scalar and aggregate function of the crate (the list
/// [`with_variant`] registers too, but `variant_reshred`, which needs the
/// session's runtime): ours, and DataFusion's `coalesce`, `nvl`, `nvl2` and
/// string functions found in `registry`, wrapped to take a VARIANT (a call
/// without one goes to DataFusion's function unchanged).
///
/// # Errors
/// When the registry refuses a function.
pub fn register_all(registry: &mut dyn FunctionRegistry) -> Result<()> {
    let (scalars, aggregates) = functions_over(&|name| registry.udf(name).ok());
    for f in scalars {
        registry.register_udf(f)?;
    }
    for f in aggregates {
        registry.register_udaf(f)?;
    }
    Ok(())
}

/// The one list of functions [`register_all`] and [`with_variant`] register:
/// [`udf::functions`], the coercing wrappers of the functions `current`
/// finds by name, and [`udaf::functions`].
fn functions_over(
    current: &dyn Fn(&str) -> Option<Arc<ScalarUDF>>,
) -> (Vec<Arc<ScalarUDF>>, Vec<Arc<AggregateUDF>>) {
    let mut scalars = udf::functions();
    scalars.extend(udf::coerce::coercing_functions_over(current));
    (scalars, udaf::functions())
}

/// Adds everything of the crate to a session builder: the functions, the
/// `VARIANT` SQL type, the cast rewrite (`CAST(v AS INT)`, `CAST(x AS VARIANT)`)
/// and the plan-time checks that refuse ordering, grouping and comparing
/// VARIANT values.
///
/// It changes nothing else: a plan without VARIANT in it is DataFusion's plan
/// (`sqllogictests/integration/boundary.rs` holds that). Speedups of plain
/// plans are opt-in: [`accel::with_accelerations`].
///
/// Its catalog ([`VariantCatalogList`]) keeps in-memory tables with VARIANT columns
/// shredded (`CREATE TABLE ... AS` through `ctx.sql` too), wrapping the
/// builder's catalog list or DataFusion's.
///
/// The analyzer becomes [`optimizer::analyzer_rules`] (ours before DataFusion's
/// type coercion, then DataFusion's defaults), and [`optimizer::physical_rules`]
/// are appended to the physical optimizer, [`optimizer::optimizer_rules`] to the
/// logical one (an embedder who sets its own optimizer list after this call
/// keeps them by adding them last); their docs say why in that order.
/// Analyzer rules added with `with_analyzer_rule`, before or after this call,
/// are kept and run after them; a whole list set with `with_analyzer_rules`
/// before this call is replaced (DataFusion 55's builder does not show it), so
/// set such a list after it, with ours first.
pub fn with_variant(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    let reshred = tables::variant_reshred_udf(builder.runtime_env().clone());
    let functions = builder.scalar_functions().get_or_insert_with(Vec::new);
    // Wrapping DataFusion's functions, or those the builder already holds.
    let (scalars, aggregates) = functions_over(&|name| {
        functions
            .iter()
            .rev()
            .find(|f| f.name() == name || f.aliases().iter().any(|a| a == name))
            .cloned()
    });
    functions.extend(scalars);
    // On the session's runtime: it rewrites files with its own plans.
    functions.push(reshred);
    builder
        .aggregate_functions()
        .get_or_insert_with(Vec::new)
        .extend(aggregates);
    let mut table_functions = ingest::table_functions();
    table_functions.extend(parquet::table_functions());
    #[cfg(feature = "delta")]
    table_functions.extend(delta::table_functions());
    table_functions.extend(udf::table_functions());
    table_functions.extend(tables::table_functions());
    builder
        .table_functions()
        .get_or_insert_with(Default::default)
        .extend(
            table_functions
                .into_iter()
                .map(|f| (f.name().to_string(), f)),
        );
    // `SET variant.shredding = ...` and friends.
    let mut config = builder.config().take().unwrap_or_default();
    let spark = config
        .options()
        .extensions
        .get::<config::VariantOptions>()
        .is_some_and(|o| o.spark_functions);
    if config
        .options()
        .extensions
        .get::<config::VariantOptions>()
        .is_none()
    {
        config = config.with_option_extension(config::VariantOptions::default());
    }
    // The session's workload log (`variant_workload`).
    if config.get_extension::<workload::WorkloadLog>().is_none() {
        config = config.with_extension(Arc::new(workload::WorkloadLog::default()));
    }
    // The session's hot-data cache of Parquet scans (`variant.scan_cache_size`).
    if config.get_extension::<parquet::ScanCache>().is_none() {
        config = config.with_extension(Arc::new(parquet::ScanCache::default()));
    }
    *builder.config() = Some(config);
    // In-memory tables keep VARIANT columns shredded (`CREATE TABLE ... AS`
    // through `ctx.sql` too).
    let catalogs = builder.catalog_list().take();
    *builder.catalog_list() = Some(match catalogs {
        Some(c) if c.is::<catalog::VariantCatalogList>() => c,
        other => Arc::new(catalog::VariantCatalogList::new(other)),
    });
    // `v:a.b`, `v['a'][0]`, `v.a.b` before DataFusion's own field access.
    builder
        .expr_planners()
        .get_or_insert_with(Vec::new)
        .insert(0, Arc::new(sql::VariantExprPlanner));
    // `FROM t, LATERAL variant_explode(t.v) e`.
    builder
        .relation_planners()
        .get_or_insert_with(Vec::new)
        .insert(0, Arc::new(sql::LateralExplodePlanner));
    // Our Parquet format first: the first one registered for an extension wins,
    // also when `with_default_features` is called after this.
    let formats = builder.file_formats().get_or_insert_with(Vec::new);
    formats.retain(|f| f.get_ext() != "parquet");
    formats.insert(0, Arc::new(parquet::VariantParquetFormatFactory::new()));
    #[cfg(feature = "delta")]
    {
        formats.retain(|f| f.get_ext() != "delta");
        formats.push(Arc::new(delta::DeltaFormatFactory));
        // `CREATE EXTERNAL TABLE ... STORED AS DELTA`.
        builder
            .table_factories()
            .get_or_insert_with(Default::default)
            .insert("DELTA".to_string(), Arc::new(delta::DeltaTableFactory));
    }
    let mut builder = builder
        .with_analyzer_rules(optimizer::analyzer_rules())
        .with_type_planner(Arc::new(sql::VariantTypePlanner));
    if spark && spark::AVAILABLE {
        // Spark's TIMESTAMP, in the session time zone.
        spark::timestamp::with_session_timestamps(&mut builder);
    }
    for rule in optimizer::optimizer_rules() {
        builder = builder.with_optimizer_rule(rule);
    }
    for rule in optimizer::physical_rules() {
        builder = builder.with_physical_optimizer_rule(rule);
    }
    builder
}

/// A [`SessionContext`] with DataFusion's defaults plus everything of this crate.
pub fn variant_context() -> SessionContext {
    variant_context_with_config(SessionConfig::new())
}

/// Like [`variant_context`], with a given configuration. With
/// `variant.spark_functions = true` in it (and the `spark` feature), Spark's
/// built-ins from `datafusion-spark` are registered too, ours taking precedence.
///
/// # Panics
/// Never; a `variant.spark_functions` request without the `spark` feature is
/// ignored here (the CLI reports it).
pub fn variant_context_with_config(config: SessionConfig) -> SessionContext {
    variant_context_with_runtime(config, Arc::new(RuntimeEnv::default()))
}

/// Like [`variant_context_with_config`], on the given runtime (memory pool,
/// disk manager for spilling, object stores, caches); see
/// [`memory_limited_runtime`].
pub fn variant_context_with_runtime(
    config: SessionConfig,
    runtime: Arc<RuntimeEnv>,
) -> SessionContext {
    // `SELECT ... FROM 'file.parquet'` works, as users of Variant files expect.
    enable_url_table(SessionContext::new_with_state(
        variant_state_builder(config, runtime).build(),
    ))
}

/// DataFusion's [`SessionContext::enable_url_table`] (`SELECT ... FROM
/// 'file.parquet'`), keeping every function name's function. DataFusion's
/// rebuilds the session, registering its functions again in hash order, so a
/// name two functions claim went to either from one process to the next (in
/// Spark mode `array_contains`: Spark's, which answers NULL for
/// `array_contains(array(1, NULL), 2)`, or DataFusion's `array_has`, false).
///
/// ```
/// let ctx = df_variant::enable_url_table(df_variant::variant_context());
/// # let _ = ctx;
/// ```
pub fn enable_url_table(ctx: SessionContext) -> SessionContext {
    let before = ctx.state();
    let ctx = ctx.enable_url_table();
    {
        let state_ref = ctx.state_ref();
        let mut state = state_ref.write();
        // A session's registry takes again what it took once: this cannot fail.
        let _ = registry::restore_functions(&before, &mut state);
    }
    ctx
}

/// The builder behind [`variant_context_with_runtime`]: DataFusion's defaults,
/// Spark's built-ins when `variant.spark_functions` is set, and [`with_variant`];
/// more can be added before it is built (for example
/// [`distributed::with_workers`]).
pub fn variant_state_builder(
    config: SessionConfig,
    runtime: Arc<RuntimeEnv>,
) -> SessionStateBuilder {
    let spark = config
        .options()
        .extensions
        .get::<config::VariantOptions>()
        .is_some_and(|o| o.spark_functions);
    let mut builder = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features();
    if spark {
        builder = spark::with_spark_functions(builder);
    }
    with_variant(builder)
}

/// Parses a memory size such as `512M`, `2G`, `1.5GiB` or `1048576` (bytes;
/// `K`, `M`, `G`, `T` are powers of 1024).
///
/// ```
/// assert_eq!(df_variant::parse_memory_size("512M"), Ok(512 << 20));
/// assert_eq!(df_variant::parse_memory_size("1.5g"), Ok(3 << 29));
/// assert!(df_variant::parse_memory_size("lots").is_err());
/// ```
///
/// # Errors
/// A message naming the text when it is not a size.
pub fn parse_memory_size(text: &str) -> std::result::Result<usize, String> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (number, shift) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 10),
        Some('m') => (&body[..body.len() - 1], 20),
        Some('g') => (&body[..body.len() - 1], 30),
        Some('t') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let bad = || format!("'{t}' is not a memory size (e.g. 512M, 2G)");
    let value: f64 = number.trim().parse().map_err(|_| bad())?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > usize::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as usize)
}
