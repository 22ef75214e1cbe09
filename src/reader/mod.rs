//! Reading tables whose Parquet files shred a VARIANT column differently.
//!
//! A table's VARIANT column has one logical type (the unshredded
//! `Struct{metadata, value}`), while each file may store it shredded with its own
//! `typed_value` layout, or not at all. DataFusion's default expression adapter
//! cannot cast between those structs, so [`VariantAdapterRule`] gives every
//! Parquet scan a [`VariantExprAdapterFactory`]: per file, a reference to such a
//! column becomes [`ReassembleVariant`], which rebuilds the binary form from that
//! file's layout (our spec reconstruction in `array/unshred.rs`).
//!
//! ```text
//! DataSourceExec: file_groups=..., projection=[v]      (per file, in the opener)
//!   v@0 : Struct{metadata, value}              =>     reassemble_variant(v@0)
//! ```
//!
//! The same adapter answers path extractions from a file's shredded leaves
//! ([`pushdown`]), and [`scan::VariantScanExec`] prunes row groups and pages on
//! those leaves' statistics before each file is opened.

mod adapter;
mod bounds;
mod footer;
mod format;
pub mod inspect;
pub mod pushdown;
pub mod scan;

pub use adapter::{ReassembleVariant, VariantAdapterRule, VariantExprAdapterFactory};
pub use bounds::{Bounds, PathBounds, PathKey};
pub use footer::{
    GuardedReaderFactory, check_parquet_footer, check_parquet_tail, guard_parquet_scan,
};
pub use format::{VariantParquetFormat, VariantParquetFormatFactory};

use std::sync::Arc;

use datafusion::catalog::TableFunction;

/// The table functions of this module (`variant_shredding_schema`).
pub fn table_functions() -> Vec<Arc<TableFunction>> {
    vec![Arc::new(TableFunction::new(
        inspect::VARIANT_SHREDDING_SCHEMA.to_string(),
        Arc::new(inspect::VariantShreddingSchema),
    ))]
}
