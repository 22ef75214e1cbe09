//! `VariantWriteRule`: replaces DataFusion's `ParquetSink` by [`VariantParquetSink`]
//! when the data written has top-level VARIANT columns.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::datasource::file_format::parquet::ParquetSink;
use datafusion::datasource::physical_plan::FileSink;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use super::VariantOptions;
use super::sink::{VariantParquetSink, variant_columns};

/// The physical optimizer rule described in the module docs.
#[derive(Debug, Default)]
pub struct VariantWriteRule;

impl PhysicalOptimizerRule for VariantWriteRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let options = config
            .extensions
            .get::<VariantOptions>()
            .cloned()
            .unwrap_or_default();
        plan.transform_up(|node| {
            let Some(exec) = (node.as_ref() as &dyn Any).downcast_ref::<DataSinkExec>() else {
                return Ok(Transformed::no(node));
            };
            Ok(match variant_sink_exec(exec, &options) {
                Some(ours) => Transformed::yes(ours),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "VariantWriteRule"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `exec` writing through a [`VariantParquetSink`] with `options`, when it writes
/// Parquet (DataFusion's `ParquetSink`) with top-level VARIANT columns.
pub(crate) fn variant_sink_exec(
    exec: &DataSinkExec,
    options: &VariantOptions,
) -> Option<Arc<dyn ExecutionPlan>> {
    let sink = (exec.sink() as &dyn Any).downcast_ref::<ParquetSink>()?;
    if variant_columns(sink.config().output_schema()).is_empty() {
        return None;
    }
    let ours = VariantParquetSink::new(
        sink.config().clone(),
        sink.parquet_options().clone(),
        options.mode(),
        options.clone(),
    );
    Some(Arc::new(DataSinkExec::new(
        Arc::clone(exec.input()),
        Arc::new(ours),
        exec.sort_order().clone(),
    )))
}
