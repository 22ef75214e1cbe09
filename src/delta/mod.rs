//! Delta Lake tables with Variant columns.
//!
//! - **Read**: `CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '...'`
//!   (`OPTIONS ('version' 'N')` for time travel) or `delta_scan('...' [, N])`.
//!   `delta_kernel` replays the log (`log.rs`); the data files are read by
//!   DataFusion's Parquet scan with this crate's Variant support, so shredded
//!   files, extraction pushdown and row-group/page pruning work as for Parquet
//!   tables ([`DeltaTable`]). Tables with `variantType`, `variantShredding` (and their
//!   `-preview` names) are read; reader features whose data files we would read
//!   wrongly (deletion vectors, column mapping, ...) are refused by name.
//! - **File skipping**: per-path Variant `minValues`/`maxValues` of `add.stats`
//!   ([`decode_path_values`] reads them) skip whole files for predicates on extractions, footers unread;
//!   `EXPLAIN ANALYZE` shows `files_pruned`.
//! - **Describe**: `delta_table_info('...' [, N])` gives the protocol, features,
//!   properties, files and Variant columns from the log alone (`info.rs`), also
//!   for tables we refuse to read (with the reason).
//! - **Write**: `INSERT INTO` a Delta table, `COPY (...) TO '...' STORED AS DELTA`
//!   (creates or appends), and `CREATE EXTERNAL TABLE` with declared columns at
//!   an empty location (creates an empty table) ([`DeltaSink`], [`DeltaFormat`]).
//!
//! ```no_run
//! # async fn demo() -> datafusion::common::Result<()> {
//! let ctx = df_variant::variant_context();
//! ctx.sql("COPY (SELECT 1 AS id, parse_json('{\"a\":1}') AS v) TO '/tmp/t' STORED AS DELTA \
//!          OPTIONS ('delta.enableVariantShredding' 'true')").await?.collect().await?;
//! ctx.sql("CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '/tmp/t'").await?;
//! ctx.sql("SELECT id FROM t WHERE v:a::int > 0").await?.show().await?;
//! # Ok(()) }
//! ```

pub mod alter;
pub(crate) mod format;
pub(crate) mod info;
pub(crate) mod log;
pub(crate) mod reshred;
pub(crate) mod schema;
pub(crate) mod stats;
pub(crate) mod table;
pub(crate) mod write;

use std::sync::Arc;

use datafusion::catalog::TableFunction;

pub use format::{DeltaFormat, DeltaFormatFactory};
pub use stats::decode_path_values;
pub use table::{DeltaScan, DeltaTable, DeltaTableFactory};
pub use write::{DeltaSink, NewTable};

/// The table functions of this module (`delta_scan`, `delta_table_info`).
pub fn table_functions() -> Vec<Arc<TableFunction>> {
    vec![
        Arc::new(TableFunction::new(
            table::DELTA_SCAN.to_string(),
            Arc::new(DeltaScan),
        )),
        Arc::new(TableFunction::new(
            info::DELTA_TABLE_INFO.to_string(),
            Arc::new(info::DeltaTableInfo),
        )),
    ]
}
