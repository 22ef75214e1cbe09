//! Parquet I/O for VARIANT columns: the file format, the per-file adapter that
//! reassembles shredded columns, the reads of shredded leaves, pruning, the
//! scan node, the footer guard, inspection, and the sink that writes shredded
//! files all or nothing.
//!
//! ## Reading
//!
//! A table's VARIANT column has one logical type (the unshredded
//! `Struct{metadata, value}`), while each file may store it shredded with its own
//! `typed_value` layout, or not at all. DataFusion's default expression adapter
//! cannot cast between those structs, so the `VariantGetPushdown` rule ([`crate::optimizer`]) gives every
//! Parquet scan a [`VariantExprAdapterFactory`]: per file, a reference to such a
//! column becomes [`ReassembleVariant`], which rebuilds the binary form from that
//! file's layout (our spec reconstruction in `variant/unshred.rs`).
//!
//! ```text
//! DataSourceExec: file_groups=..., projection=[v]      (per file, in the opener)
//!   v@0 : Struct{metadata, value}              =>     reassemble_variant(v@0)
//! ```
//!
//! The same adapter answers path extractions from a file's shredded leaves
//! (`shredded_get.rs`), and [`VariantScanExec`] prunes row groups and pages (`pruning.rs`) on
//! those leaves' statistics before each file is opened.
//!
//! ## Writing
//!
//! Every Parquet write of a table with top-level VARIANT columns — `COPY ... TO
//! 'x.parquet'`, `INSERT INTO` a Parquet table, `DataFrame::write_parquet` — goes
//! through [`VariantParquetSink`]: DataFusion plans its own `ParquetSink`, and the
//! `VariantWriteRule` physical optimizer rule ([`crate::optimizer`]) swaps it for ours.
//!
//! For each output file the sink buffers the first rows (`variant.shredding_sample_rows`),
//! chooses a shredding schema per VARIANT column from them (or takes the explicit
//! `variant.shredding_schema`), and writes shredded columns with the Parquet VARIANT
//! logical type. `SET variant.shredding = 'off'` writes unshredded (still annotated).
//! The same settings can be given per statement, as options of `COPY` or
//! `CREATE EXTERNAL TABLE` (`OPTIONS ('variant.shredding' 'off')`); they override the
//! session's for that statement or table only.
//! Files are written under a staging directory and moved into place only when every
//! file of the statement succeeded, so a failed write leaves no partial file behind;
//! a commit marker keeps a statement's files invisible to our readers until all of
//! them are in place, even across a crash (`commit.rs`).
//!
//! ```text
//! DataSinkExec: sink=ParquetSink          DataSinkExec: sink=VariantParquetSink(shredding=auto)
//!   ProjectionExec: v@0             =>      ProjectionExec: v@0
//! ```

mod adapter;
pub(crate) mod advice;
mod bounds;
pub(crate) mod commit;
#[cfg(feature = "delta")]
pub(crate) mod deletions;
mod element_pruning;
mod embedded_schema;
mod footer;
mod format;
pub(crate) mod inspect;
pub(crate) mod paths;
mod pruning;
mod report;
pub(crate) mod reshred;
mod scan;
pub(crate) mod scan_cache;
pub(crate) mod shredded_get;
mod sink;
pub(crate) mod subtree_get;

pub use adapter::{ReassembleVariant, VariantExprAdapterFactory};
pub use bounds::{Bounds, PathBounds, PathKey};
pub use embedded_schema::check_embedded_arrow_schema;
pub use footer::{
    GuardedReaderFactory, check_page_locations, check_parquet_file, check_parquet_footer,
    check_parquet_metadata, check_parquet_tail, guard_parquet_scan, guarded_scan_config,
};
pub use format::{VariantParquetFormat, VariantParquetFormatFactory};
pub use scan::{ScanExtractions, VariantScanExec};
pub(crate) use scan::{filter_predicates, pushdown_enabled, scan_config};
pub use scan_cache::ScanCache;
pub use sink::MAX_WRITTEN_VARIANT_BYTES;
pub(crate) use sink::variant_sink_exec;
#[cfg(feature = "delta")]
pub(crate) use sink::{FilePlan, WrittenFile, check_written_variants, write_file};
pub use sink::{VARIANT_ROW_GROUP_ROWS, VariantParquetSink};

use std::sync::Arc;

use datafusion::catalog::TableFunction;

/// The table functions of this module (`variant_shredding_schema`; those
/// that take a table by name are in `tables/`).
pub fn table_functions() -> Vec<Arc<TableFunction>> {
    vec![Arc::new(TableFunction::new(
        inspect::VARIANT_SHREDDING_SCHEMA.to_string(),
        Arc::new(inspect::VariantShreddingSchema),
    ))]
}
