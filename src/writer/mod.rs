//! Writing Variant columns to Parquet.
//!
//! Every Parquet write of a table with top-level VARIANT columns — `COPY ... TO
//! 'x.parquet'`, `INSERT INTO` a Parquet table, `DataFrame::write_parquet` — goes
//! through [`VariantParquetSink`]: DataFusion plans its own `ParquetSink`, and the
//! [`VariantWriteRule`] physical optimizer rule swaps it for ours.
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
//! them are in place, even across a crash ([`commit`]).
//!
//! ```text
//! DataSinkExec: sink=ParquetSink          DataSinkExec: sink=VariantParquetSink(shredding=auto)
//!   ProjectionExec: v@0             =>      ProjectionExec: v@0
//! ```

pub mod commit;
mod config;
mod rule;
mod sink;

pub use config::{ShreddingMode, ShreddingSchema, ShreddingSetting, VariantOptions};
pub use rule::VariantWriteRule;
pub(crate) use rule::variant_sink_exec;
pub use sink::MAX_WRITTEN_VARIANT_BYTES;
pub use sink::VariantParquetSink;
pub(crate) use sink::{FilePlan, WrittenFile, check_written_variants, write_file};
