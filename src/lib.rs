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
//! - [`udf::functions`] / [`udaf::functions`]: the one list of functions.
//! - [`variant`]: Spark semantics over `parquet-variant` values (JSON, paths, casts,
//!   schemas, formatting), independent of DataFusion.
//! - [`array`]: Variant columns in Arrow.
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

pub mod array;
pub mod delta;
pub mod demo;
pub mod ingest;
pub mod reader;
pub mod shredding;
pub mod spark;
pub mod sql;
pub mod udaf;
pub mod udf;
pub mod variant;
pub mod writer;

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::execution::SessionStateBuilder;
use datafusion::optimizer::analyzer::Analyzer;
use datafusion::prelude::{SessionConfig, SessionContext};

/// Registers every scalar and aggregate function of the crate.
///
/// # Errors
/// When the registry refuses a function.
pub fn register_all(registry: &mut dyn FunctionRegistry) -> Result<()> {
    for f in udf::functions() {
        registry.register_udf(f)?;
    }
    for f in udaf::functions() {
        registry.register_udaf(f)?;
    }
    Ok(())
}

/// Adds everything of the crate to a session builder: the functions, the
/// `VARIANT` SQL type, the cast rewrite (`CAST(v AS INT)`, `CAST(x AS VARIANT)`)
/// and the plan-time checks that refuse ordering, grouping and comparing
/// VARIANT values.
///
/// The cast rewrite and the checks must run before DataFusion's type coercion,
/// so this sets the analyzer to `[VariantCastRewrite, VariantOperationCheck]`
/// followed by DataFusion's default analyzer rules (rules added later with
/// `with_analyzer_rule` still run after them).
pub fn with_variant(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    let mut rules: Vec<Arc<dyn datafusion::optimizer::AnalyzerRule + Send + Sync>> = vec![
        Arc::new(sql::VariantCastRewrite),
        Arc::new(sql::VariantOperationCheck),
    ];
    rules.extend(Analyzer::new().rules);
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .extend(udf::functions());
    builder
        .aggregate_functions()
        .get_or_insert_with(Vec::new)
        .extend(udaf::functions());
    builder
        .table_functions()
        .get_or_insert_with(Default::default)
        .extend(
            ingest::table_functions()
                .into_iter()
                .chain(reader::table_functions())
                .chain(delta::table_functions())
                .chain(udf::table_functions())
                .map(|f| (f.name().to_string(), f)),
        );
    // `SET variant.shredding = ...` and friends.
    let mut config = builder.config().take().unwrap_or_default();
    if config
        .options()
        .extensions
        .get::<writer::VariantOptions>()
        .is_none()
    {
        config = config.with_option_extension(writer::VariantOptions::default());
    }
    *builder.config() = Some(config);
    // `v:a.b`, `v['a'][0]`, `v.a.b` before DataFusion's own field access.
    builder
        .expr_planners()
        .get_or_insert_with(Vec::new)
        .insert(0, Arc::new(sql::VariantExprPlanner));
    // Our Parquet format first: the first one registered for an extension wins,
    // also when `with_default_features` is called after this.
    let formats = builder.file_formats().get_or_insert_with(Vec::new);
    formats.retain(|f| f.get_ext() != "parquet");
    formats.insert(0, Arc::new(reader::VariantParquetFormatFactory::new()));
    formats.retain(|f| f.get_ext() != "delta");
    formats.push(Arc::new(delta::DeltaFormatFactory));
    // `CREATE EXTERNAL TABLE ... STORED AS DELTA`.
    builder
        .table_factories()
        .get_or_insert_with(Default::default)
        .insert("DELTA".to_string(), Arc::new(delta::DeltaTableFactory));
    builder
        .with_analyzer_rules(rules)
        .with_type_planner(Arc::new(sql::VariantTypePlanner))
        .with_physical_optimizer_rule(Arc::new(writer::VariantWriteRule))
        .with_physical_optimizer_rule(Arc::new(reader::VariantAdapterRule))
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
    let spark = config
        .options()
        .extensions
        .get::<writer::VariantOptions>()
        .is_some_and(|o| o.spark_functions);
    let mut builder = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    if spark {
        builder = spark::with_spark_functions(builder);
    }
    // `SELECT ... FROM 'file.parquet'` works, as users of Variant files expect.
    SessionContext::new_with_state(with_variant(builder).build()).enable_url_table()
}
