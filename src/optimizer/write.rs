//! `VariantWriteRule`: replaces DataFusion's `ParquetSink` by our
//! [`VariantParquetSink`] when the data written has top-level VARIANT columns, so
//! that every Parquet write (`COPY`, `INSERT INTO`, `DataFrame::write_parquet`)
//! shreds, annotates and commits all or nothing.
//!
//! ```text
//! DataSinkExec: sink=ParquetSink          DataSinkExec: sink=VariantParquetSink(shredding=auto)
//!   ProjectionExec: v@0             =>      ProjectionExec: v@0
//! ```
//!
//! It does not fire on sinks of other formats, nor on Parquet writes without a
//! top-level VARIANT column.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use crate::config::VariantOptions;
#[cfg(doc)]
use crate::parquet::VariantParquetSink;
use crate::parquet::variant_sink_exec;

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

    fn name(&self) -> &'static str {
        "VariantWriteRule"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
