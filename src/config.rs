//! Session settings of this crate (`SET variant.<name> = ...`), shared by the
//! reader, the writer, ingest and the functions.
//!
//! Values are checked when they are set, so a bad setting is refused by the `SET`
//! statement itself rather than by every later write.

use datafusion::common::config::ConfigOptions;
use datafusion::common::config::{ConfigExtension, ConfigField, Visit};
use datafusion::common::{Result, config_err, exec_datafusion_err, extensions_options};

use crate::boundary::shredding_error;
use crate::shredding::{ShreddingOptions, infer_typed_value, typed_value_from_ddl};
use crate::variant::tz::SessionTz;

/// The default of `variant.scan_cache_size`: off. A library default must be
/// safe for a service that makes a session per request.
pub const DEFAULT_SCAN_CACHE_BYTES: usize = 0;

extensions_options! {
    /// Settings under the `variant.` prefix.
    pub struct VariantOptions {
        /// `auto` (the default) infers a shredding schema per output file from its
        /// first rows, or uses `shredding_schema` when set; `off` writes Variant
        /// columns unshredded. Tables made by `CREATE TABLE ... AS` follow it too
        /// ([`crate::memtable`]).
        pub shredding: ShreddingSetting, default = ShreddingSetting::Auto
        /// An explicit shredding schema as a Spark DDL type string (e.g.
        /// `struct<a:bigint,b:string>`), applied to every VARIANT column written
        /// while `shredding` is `auto`; empty means infer.
        pub shredding_schema: ShreddingSchema, default = ShreddingSchema::default()
        /// How many leading rows of each output file the inference looks at.
        pub shredding_sample_rows: usize, default = 4096
        /// Fields present in fewer than this fraction of sampled objects stay unshredded.
        pub shredding_min_field_fraction: f64, default = 0.1
        /// The most shredded leaf columns per VARIANT column.
        pub shredding_max_leaves: usize, default = 128
        /// Spark SQL compatibility: also register the Spark-compatible built-ins of
        /// `datafusion-spark` (`array`, `named_struct`, `element_at`, `sha2`, ...;
        /// ours win on name clashes). Read when a context is created by
        /// [`crate::variant_context_with_config`]; the CLI also applies it when set
        /// in a session (`--spark`). Needs the crate feature `spark` (on by default).
        pub spark_functions: bool, default = false
        /// Reads `variant_get` extractions from shredded Parquet leaves and prunes
        /// row groups and pages on their statistics. `false` reads whole values.
        pub pushdown: bool, default = true
        /// Late materialization: a filter on extractions of a Parquet scan of
        /// VARIANT columns also becomes the scan's row filter when the scan
        /// reassembles VARIANT values the filter does not read (a whole value,
        /// an extraction whose result is a VARIANT), so that they are rebuilt
        /// only for the rows that pass. Scans without VARIANT columns keep
        /// DataFusion's `datafusion.execution.parquet.pushdown_filters`.
        pub late_materialization: bool, default = true
        /// Counts `count(*) ... GROUP BY` one string column by the column's
        /// views (`StringGroupCountExec`: a string is hashed once per batch,
        /// not once per row). `false` leaves the count to DataFusion's
        /// aggregate.
        pub string_group_count: bool, default = true
        /// Counts `count(DISTINCT s) ... GROUP BY` of a string column after
        /// repartitioning the rows by `s` (`PartitionDistinctCount`): the
        /// final aggregate adds the partitions' counts instead of merging
        /// their sets of strings. `false` leaves it to DataFusion's two
        /// phases, as [`crate::with_variant`] sets it for a session whose
        /// runtime has a memory limit (DataFusion's plan spills; ours fails
        /// when its partial aggregate runs out of memory).
        pub partition_distinct_count: bool, default = true
        /// Compares `s = 'literal'` in filters by the strings' views
        /// (`ViewEqExpr`: a string is compared once per distinct view of a
        /// batch, not once per row). `false` leaves it to DataFusion's `=`.
        pub string_view_filter: bool, default = true
        /// Answers `date_part` / `EXTRACT` of the year, month, day, hour or
        /// minute of a timestamp in UTC, without a zone or at a fixed offset
        /// by arithmetic (`FastDatePart`). `false` leaves every row to
        /// DataFusion's kernel, which asks the time zone per row.
        pub fast_date_part: bool, default = true
        /// NDJSON lines (`read_json_variant`): `false` (the default) makes content
        /// after a line's JSON value (`{"a":1}{"b":2}`) an error naming file and
        /// line; `true` keeps Spark's `parse_json` rule and ignores it.
        pub ndjson_ignore_trailing_content: bool, default = false
        /// A folder: every Parquet file scan appends the extractions it ran to
        /// `workload.jsonl` there (one JSON line per file scan, no SQL text), so
        /// `variant_workload` sees them across processes. Empty (the default):
        /// the session keeps its own log only.
        pub workload_log: String, default = String::new()
        /// `true`: each line appended to `variant.workload_log` also holds the
        /// SQL text (`"sql"`) of the statement last planned in the session
        /// through `df_variant::sql::query`, the CLI or the slt runner (queries
        /// planned otherwise, or run concurrently in one session, may carry
        /// another statement's text). `false` (the default): no SQL text.
        pub workload_log_sql: bool, default = false
        /// The most memory the hot-data cache of Parquet scans keeps (`512M`,
        /// `2G`, a number of bytes; `0`, the default, turns it off and
        /// empties it): the batches each file scan produced, extractions
        /// answered, so that a repeated query does not decode the file again.
        /// Reserved in the runtime's memory pool, and at most half of a
        /// memory limit ([`crate::parquet::scan_cache`]).
        pub scan_cache_size: ByteSize, default = ByteSize(DEFAULT_SCAN_CACHE_BYTES)
    }
}

impl ConfigExtension for VariantOptions {
    const PREFIX: &'static str = "variant";
}

/// `variant.shredding`: `auto` or `off`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShreddingSetting {
    /// Shred (inferring or with `variant.shredding_schema`).
    #[default]
    Auto,
    /// Write unshredded.
    Off,
}

impl std::fmt::Display for ShreddingSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Off => "off",
        })
    }
}

impl ConfigField for ShreddingSetting {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description);
    }

    fn set(&mut self, _key: &str, value: &str) -> Result<()> {
        *self = match value.trim().to_ascii_lowercase().as_str() {
            "auto" | "on" | "true" => Self::Auto,
            "off" | "false" | "none" => Self::Off,
            other => {
                return config_err!("variant.shredding must be 'auto' or 'off', got '{other}'");
            }
        };
        Ok(())
    }
}

/// `variant.shredding_schema`: a Spark DDL type string, checked when set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShreddingSchema(pub String);

impl std::fmt::Display for ShreddingSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ConfigField for ShreddingSchema {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description);
    }

    fn set(&mut self, _key: &str, value: &str) -> Result<()> {
        let value = value.trim();
        if !value.is_empty()
            && let Err(e) = typed_value_from_ddl(value).map_err(shredding_error)
        {
            return config_err!("variant.shredding_schema '{value}' cannot be used: {e}");
        }
        self.0 = value.to_string();
        Ok(())
    }
}

/// A size in bytes (`variant.scan_cache_size`): a number with an optional `K`,
/// `M`, `G` or `T` suffix (powers of 1024), or `0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteSize(pub usize);

impl std::fmt::Display for ByteSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        match [(40, 'T'), (30, 'G'), (20, 'M'), (10, 'K')]
            .into_iter()
            .find(|(shift, _)| n != 0 && n.is_multiple_of(1usize << shift))
        {
            Some((shift, unit)) => write!(f, "{}{unit}", n >> shift),
            None => write!(f, "{n}"),
        }
    }
}

impl ConfigField for ByteSize {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description);
    }

    fn set(&mut self, _key: &str, value: &str) -> Result<()> {
        if value.trim() == "0" {
            self.0 = 0;
            return Ok(());
        }
        match crate::parse_memory_size(value) {
            Ok(n) => {
                self.0 = n;
                Ok(())
            }
            Err(e) => config_err!("variant.scan_cache_size: {e}, or 0"),
        }
    }
}

/// What the writer does with VARIANT columns.
#[derive(Clone, Debug, PartialEq)]
pub enum ShreddingMode {
    /// Write unshredded.
    Off,
    /// Infer a shredding schema per file.
    Auto,
    /// Use this Spark DDL type string for every VARIANT column.
    Schema(String),
}

impl ShreddingMode {
    /// The `typed_value` a VARIANT column is shredded to under this mode: none
    /// when `Off`, the DDL's when `Schema`, and when `Auto` what `sample` (the
    /// column's leading rows, in pieces) suggests, none for no rows.
    ///
    /// # Errors
    /// A DDL string that is not a shredding schema, or a sample the inference
    /// cannot read.
    pub(crate) fn typed_value(
        &self,
        sample: &[&dyn datafusion::arrow::array::Array],
        options: &ShreddingOptions,
    ) -> Result<Option<datafusion::arrow::datatypes::DataType>> {
        match self {
            Self::Off => Ok(None),
            Self::Schema(ddl) => Ok(Some(typed_value_from_ddl(ddl).map_err(shredding_error)?)),
            Self::Auto if sample.is_empty() => Ok(None),
            Self::Auto => {
                let all = datafusion::arrow::compute::concat(sample)?;
                infer_typed_value(&all, options).map_err(shredding_error)
            }
        }
    }
}

impl VariantOptions {
    /// The sampling of the shredding inference these settings select.
    pub fn shredding_options(&self) -> ShreddingOptions {
        ShreddingOptions {
            sample_rows: self.shredding_sample_rows,
            min_field_fraction: self.shredding_min_field_fraction,
            max_leaves: self.shredding_max_leaves,
        }
    }

    /// The mode these settings select.
    pub fn mode(&self) -> ShreddingMode {
        match self.shredding {
            ShreddingSetting::Off => ShreddingMode::Off,
            ShreddingSetting::Auto if self.shredding_schema.0.is_empty() => ShreddingMode::Auto,
            ShreddingSetting::Auto => ShreddingMode::Schema(self.shredding_schema.0.clone()),
        }
    }

    /// Whether the boolean setting that `flag` reads is on in `config`; a
    /// session without our settings has every default, and these flags
    /// default to on.
    pub fn enabled(config: &ConfigOptions, flag: impl Fn(&VariantOptions) -> bool) -> bool {
        config.extensions.get::<VariantOptions>().is_none_or(flag)
    }
}

/// The session time zone (`datafusion.execution.time_zone`, UTC when unset).
pub fn session_tz(config: &ConfigOptions) -> Result<SessionTz> {
    match &config.execution.time_zone {
        None => Ok(SessionTz::utc()),
        Some(tz) => SessionTz::parse(tz).map_err(|e| exec_datafusion_err!("{e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_size_round_trips_through_its_text() {
        let mut size = ByteSize::default();
        for (text, bytes, shown) in [
            ("0", 0, "0"),
            ("64M", 64 << 20, "64M"),
            ("2g", 2 << 30, "2G"),
            ("1536K", 1536 << 10, "1536K"),
        ] {
            size.set("variant.scan_cache_size", text).unwrap();
            assert_eq!(
                (size.0, size.to_string().as_str()),
                (bytes, shown),
                "{text}"
            );
        }
        let e = size.set("variant.scan_cache_size", "lots").unwrap_err();
        assert!(e.to_string().contains("'lots' is not a memory size"), "{e}");
        assert_eq!(
            size.0,
            1536 << 10,
            "a refused value leaves the setting alone"
        );
        assert_eq!(
            VariantOptions::default().scan_cache_size.to_string(),
            "0",
            "off unless asked for"
        );
    }
}
