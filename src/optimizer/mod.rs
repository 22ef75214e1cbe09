//! Every rule of this crate that rewrites or checks plans, in the one order that
//! [`crate::with_variant`] installs.
//!
//! Where is `variant_get` rewritten? In this order:
//! 1. [`crate::sql::VariantCastRewrite`] (analyzer): `CAST(v AS INT)` and
//!    `CAST(v:a AS INT)` become `variant_get(v, '$.a', 'int')`.
//! 2. [`VariantGetSplit`] (analyzer): `variant_get(v, '$.a', 'int')` becomes
//!    `raise_variant_get_error(variant_get_or_error(v, '$.a', 'int'))`, whose
//!    inner call keeps its errors per row, cannot fail and may therefore move.
//! 3. DataFusion's own optimizer moves calls that cannot fail towards the scan
//!    (`VariantGetFunc::placement`), into the Parquet scan's projection;
//!    [`ExtractionRepair`] then mends the join keys and `DELETE`/`UPDATE`
//!    predicates that move leaves unable to run.
//! 4. [`VariantGetPushdown`] (physical): gives the scan our per-file adapter and
//!    wraps it in a [`crate::parquet::VariantScanExec`] with the filter's
//!    extraction predicates.
//! 5. Per file at run time: `parquet/shredded_get.rs` reads the path's
//!    shredded leaves, and the scan node prunes row groups and pages.

mod extraction_repair;
mod variant_get_pushdown;
mod variant_get_split;
mod write;

use std::sync::Arc;

use datafusion::optimizer::analyzer::Analyzer;
use datafusion::optimizer::{AnalyzerRule, OptimizerRule};
use datafusion::physical_optimizer::PhysicalOptimizerRule;

pub use extraction_repair::ExtractionRepair;
pub use variant_get_pushdown::VariantGetPushdown;
pub use variant_get_split::VariantGetSplit;
pub use write::VariantWriteRule;

/// The analyzer rules, ours first and then DataFusion's defaults. Each of ours
/// leaves a plan without VARIANT (or Spark mode's TIMESTAMP) unchanged.
/// 1. `SessionZone` (`spark/timestamp.rs`) first: Spark mode's `TIMESTAMP`
///    gets the session's zone before any rule reads its type;
/// 2. [`crate::sql::DecorrelateLateralExplode`] next: `LATERAL
///    variant_explode(t.v)` becomes a join before anything reads the subquery;
/// 3. [`crate::sql::VariantCastRewrite`]: DataFusion's type coercion cannot
///    cast a struct to a scalar, so casts to and from VARIANT must be functions
///    before it runs;
/// 4. [`VariantGetSplit`] next, so that it also sees the `variant_get` calls the
///    cast rewrite made;
/// 5. [`crate::sql::VariantOperationCheck`] before coercion too, so that ordering,
///    grouping or comparing VARIANT values is refused with our error instead of a
///    coercion error about structs;
/// 6. DataFusion's default analyzer rules.
pub fn analyzer_rules() -> Vec<Arc<dyn AnalyzerRule + Send + Sync>> {
    let mut rules: Vec<Arc<dyn AnalyzerRule + Send + Sync>> = vec![
        Arc::new(crate::spark::timestamp::SessionZone),
        Arc::new(crate::sql::DecorrelateLateralExplode),
        Arc::new(crate::sql::VariantCastRewrite),
        Arc::new(VariantGetSplit),
        Arc::new(crate::sql::VariantOperationCheck),
    ];
    rules.extend(Analyzer::new().rules);
    rules
}

/// The logical optimizer rules, appended after DataFusion's (they mend what
/// its rules leave): [`ExtractionRepair`].
pub fn optimizer_rules() -> Vec<Arc<dyn OptimizerRule + Send + Sync>> {
    vec![Arc::new(ExtractionRepair)]
}

/// The physical optimizer rules, appended after DataFusion's defaults (which
/// must have placed projections, filters and repartitions first):
/// 1. [`VariantWriteRule`]: swaps Parquet sinks with VARIANT columns for ours;
/// 2. [`VariantGetPushdown`], so that it sees the final shape of every scan and
///    of the filters above it.
///
/// The opt-in rules of [`crate::accel`] come after these.
pub fn physical_rules() -> Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> {
    vec![Arc::new(VariantWriteRule), Arc::new(VariantGetPushdown)]
}
