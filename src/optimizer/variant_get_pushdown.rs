//! `VariantGetPushdown`: the physical rule that makes Parquet scans read VARIANT
//! columns per file, and extractions from shredded leaves.
//!
//! Every Parquet scan over a VARIANT column gets our per-file expression adapter
//! ([`crate::parquet::VariantExprAdapterFactory`]), which reassembles each file's
//! layout into the table's unshredded type and answers path extractions in the
//! scan's projection from the file's `typed_value` leaves. The scan is wrapped in a
//! [`VariantScanExec`], which carries what a serialized plan loses (the adapter,
//! per-file bounds; see [`crate::codec`]). With `variant.pushdown` on (the
//! default), the node holds the projected extractions, and the extraction
//! conjuncts of a filter above it (through repartitions and batch coalescing) are
//! handed to it for row-group, page and file pruning.
//!
//! ```text
//! FilterExec: variant_get(v@0, '$.a', 'bigint') > 5
//!   DataSourceExec: projection=[variant_get(v@0, '$.a', 'bigint')], file_type=parquet
//! =>
//! FilterExec: variant_get(v@0, '$.a', 'bigint') > 5
//!   VariantScanExec: extractions=[v.$.a as bigint], predicates=[.. > 5]
//!     DataSourceExec: projection=[...], file_type=parquet   (adapter: VariantExprAdapterFactory)
//!
//! With `variant.late_materialization` on (the default), the conjuncts also
//! become the Parquet scan's row filter when the scan reassembles VARIANT values
//! they do not read (here the whole value), so those are rebuilt only for the
//! rows that pass; `SELECT count(*) ... WHERE v:a::bigint > 5`, or one reading
//! other typed paths, is left as above:
//!
//! ```text
//! FilterExec: variant_get(v@0, '$.a', 'bigint') > 5
//!   DataSourceExec: projection=[v, variant_get(v@0, '$.a', 'bigint')], file_type=parquet
//! =>
//! FilterExec: variant_get(v@0, '$.a', 'bigint') > 5
//!   VariantScanExec: extractions=[v.$.a as bigint], predicates=[.. > 5]
//!     DataSourceExec: projection=[...], predicate=variant_get(v@0, '$.a', 'bigint') > 5
//!                     (a row filter: pushdown_filters on for this scan only)
//!
//! SELECT to_json(v) FROM t   (no extraction: the node only carries the adapter)
//!   DataSourceExec: projection=[v], file_type=parquet
//! =>
//!   VariantScanExec: extractions=[]
//!     DataSourceExec: projection=[v], file_type=parquet   (adapter: VariantExprAdapterFactory)
//! ```
//!
//! The rule does not fire on scans without VARIANT columns (unless their files
//! carry access plans, the rows Delta deletion vectors keep, which only the node's
//! codec carries across processes) or on non-Parquet scans, and pushes no extraction when none with literal arguments reached the
//! projection: a non-literal path, or a `variant_get` with a type, which the
//! analyzer first splits ([`super::variant_get_split`]). Whether a given file can
//! answer an extraction from its leaves (a path through an array, an unshredded
//! file, a float leaf, an inexact conversion) is decided per file at run time,
//! and falls back to reading the whole value.

use std::any::Any;
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::execution_plan::replace_children_if_necessary;
use datafusion::physical_plan::filter::FilterExec;

use crate::array::is_variant_type;
use crate::parquet::{VariantScanExec, filter_predicates, pushdown_enabled, scan_config};

/// Wraps every Parquet scan over VARIANT columns in a [`VariantScanExec`] with our
/// expression adapter on the scan ([`VariantScanExec::wrap`]); with
/// `variant.pushdown` on, the node pushes the scan's extractions and prunes on the
/// filter's extraction predicates.
#[derive(Debug, Default)]
pub struct VariantGetPushdown;

impl PhysicalOptimizerRule for VariantGetPushdown {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let pushdown = pushdown_enabled(config);
        let late = config
            .extensions
            .get::<crate::config::VariantOptions>()
            .is_none_or(|o| o.late_materialization);
        // Scans first (a scan already wrapped is left alone, so the rule can run
        // twice), then the filters above them.
        let plan = plan
            .transform_down(|node| {
                if node.downcast_ref::<VariantScanExec>().is_some() {
                    return Ok(Transformed::new(node, false, TreeNodeRecursion::Jump));
                }
                Ok(match install_adapter(&node, pushdown)? {
                    Some(scan) => Transformed::new(scan, true, TreeNodeRecursion::Jump),
                    None => Transformed::no(node),
                })
            })?
            .data;
        plan.transform_up(|node| {
            if pushdown
                && let Some(filter) = (node.as_ref() as &dyn Any).downcast_ref::<FilterExec>()
                && let Some(input) = push_filter(filter, late)?
            {
                return Ok(Transformed::yes(replace_children_if_necessary(
                    node,
                    vec![input],
                )?));
            }
            Ok(Transformed::no(node))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "VariantGetPushdown"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// A Parquet scan over VARIANT columns with our adapter, wrapped in a
/// `VariantScanExec` (with the projected extractions when the pushdown is on).
fn install_adapter(
    node: &Arc<dyn ExecutionPlan>,
    pushdown: bool,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some(config) = scan_config(node) else {
        return Ok(None);
    };
    let has_variant = config
        .file_schema()
        .fields()
        .iter()
        .any(|f| is_variant_type(f.data_type()));
    // A file's access plan (the rows a Delta deletion vector keeps) is lost by
    // datafusion-proto; the node's codec carries it.
    let has_access_plan = config
        .file_groups
        .iter()
        .flat_map(datafusion::datasource::physical_plan::FileGroup::files)
        .any(|f| f.extensions.get::<ParquetAccessPlan>().is_some());
    if !has_variant && !has_access_plan {
        return Ok(None);
    }
    Ok(Some(Arc::new(VariantScanExec::wrap(config, pushdown))))
}

/// Operators between a filter and its scan that keep rows and columns as they are.
fn is_transparent(plan: &Arc<dyn ExecutionPlan>) -> bool {
    matches!(
        plan.name(),
        "RepartitionExec" | "CoalesceBatchesExec" | "CooperativeExec"
    ) && plan.children().len() == 1
}

/// The filter's input with its `VariantScanExec` (below transparent operators)
/// pruning on the filter's extraction conjuncts; `None` when there is nothing to
/// push.
fn push_filter(filter: &FilterExec, late: bool) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    fn rebuild(
        node: &Arc<dyn ExecutionPlan>,
        predicate: &Arc<dyn PhysicalExpr>,
        late: bool,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        if let Some(scan) = (node.as_ref() as &dyn Any).downcast_ref::<VariantScanExec>() {
            let predicates = filter_predicates(predicate, scan.config());
            if predicates.is_empty() {
                return Ok(None);
            }
            return Ok(Some(Arc::new(scan.with_predicates(predicates, late)?)));
        }
        if is_transparent(node) {
            let child = node.children()[0];
            return match rebuild(child, predicate, late)? {
                Some(c) => Ok(Some(replace_children_if_necessary(
                    Arc::clone(node),
                    vec![c],
                )?)),
                None => Ok(None),
            };
        }
        Ok(None)
    }
    rebuild(filter.input(), filter.predicate(), late)
}
