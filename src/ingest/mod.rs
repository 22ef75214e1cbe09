//! NDJSON ingest: the table functions `read_json_variant(path)` and
//! `try_read_json_variant(path)`.
//!
//! Each reads newline-delimited JSON (one document per line) from local files and
//! returns one row per document in a single nullable Variant column `v` (with the
//! `arrow.parquet.variant` extension metadata):
//!
//! ```sql
//! SELECT variant_get(v, '$.user.id', 'bigint') AS id, to_json(v)
//! FROM read_json_variant('data/events/*.jsonl');
//!
//! COPY (SELECT v FROM read_json_variant('events.jsonl')) TO 'events.parquet';
//! ```
//!
//! - **Path**: a file, a directory (every regular file directly inside it, except
//!   hidden names starting with `.` or `_`), or a glob with `*` and `?` in the file
//!   name part (`data/*.jsonl`). Local filesystem only (a `file://` prefix is
//!   accepted). When nothing matches, planning fails with an error naming the pattern.
//!   The file list and sizes are taken when the query is planned.
//! - **Lines**: `\n` ends a line and a trailing `\r` is removed (CRLF files work); the
//!   last line needs no newline; a UTF-8 byte-order mark at the start of a file is
//!   ignored. Empty lines and lines of only ASCII whitespace are **skipped** (they
//!   give no row). Each other line must hold exactly one JSON document, parsed with
//!   the same Spark rules as `parse_json` (duplicate keys are an error, at most 1000
//!   levels of nesting).
//! - **Errors**: `read_json_variant` fails on the first malformed line with an error
//!   naming the file, the 1-based line number and the parser's message, e.g.
//!   `read_json_variant: events.jsonl line 42: invalid JSON: expected value at byte 7`
//!   (the byte is counted within the line). `try_read_json_variant` gives a NULL row
//!   for such a line instead (I/O errors still fail).
//! - **Streaming**: files are read in 8 MiB chunks; memory per partition stays around
//!   one chunk plus the longest line plus one output batch (`datafusion.execution.batch_size`
//!   rows), whatever the file size.
//! - **Parallelism**: the files are laid end to end and cut into
//!   `datafusion.execution.target_partitions` byte ranges of equal size (no smaller than
//!   `datafusion.optimizer.repartition_file_min_size`; no splitting at all when
//!   `datafusion.optimizer.repartition_file_scans` is false). A range owns the lines
//!   that *start* inside it, so one large file is parsed by all partitions at once,
//!   each with its own parser on a blocking thread. Row order across partitions is
//!   not guaranteed (as for any multi-partition scan); use `ORDER BY` when it matters.
//!
//! From Rust:
//!
//! ```
//! # #[tokio::main(flavor = "multi_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! let path = std::env::temp_dir().join(format!("df_variant_doc_{}.jsonl", std::process::id()));
//! std::fs::write(&path, "{\"a\": 1}\n\n{\"a\": [2, 3]}\n").unwrap();
//! let ctx = df_variant::variant_context();
//! let sql = format!(
//!     "SELECT to_json(v) AS j FROM read_json_variant('{}')",
//!     path.display()
//! );
//! let batches = ctx.sql(&sql).await?.collect().await?;
//! let text = arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string();
//! assert!(text.contains(r#"{"a":1}"#) && text.contains(r#"{"a":[2,3]}"#));
//! # std::fs::remove_file(&path).unwrap();
//! # Ok(())
//! # }
//! ```

mod exec;
use crate::fs as files;
pub(crate) mod reader;
pub(crate) mod split;

use std::sync::Arc;

use datafusion::catalog::{TableFunction, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::Result;

use crate::variant::json::JsonParseOptions;

#[cfg(feature = "proto")]
pub(crate) use exec::ReadJsonVariantExec;
pub use exec::{JsonVariantTable, read_json_variant_schema};

/// Name of the strict table function.
pub const READ_JSON_VARIANT: &str = "read_json_variant";
/// Name of the tolerant table function (malformed lines give NULL rows).
pub const TRY_READ_JSON_VARIANT: &str = "try_read_json_variant";

/// The static name of an NDJSON table function, for a decoded plan.
#[cfg(feature = "proto")]
pub(crate) fn function_name(name: &str) -> Option<&'static str> {
    [READ_JSON_VARIANT, TRY_READ_JSON_VARIANT]
        .into_iter()
        .find(|f| *f == name)
}

/// `read_json_variant(path)` (or, when tolerant, `try_read_json_variant(path)`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadJsonVariant {
    tolerant: bool,
}

impl ReadJsonVariant {
    /// The strict function: a malformed line is an error.
    pub fn strict() -> Self {
        Self { tolerant: false }
    }

    /// The tolerant function: a malformed line gives a NULL row.
    pub fn tolerant() -> Self {
        Self { tolerant: true }
    }

    /// The SQL name.
    pub fn name(&self) -> &'static str {
        if self.tolerant {
            TRY_READ_JSON_VARIANT
        } else {
            READ_JSON_VARIANT
        }
    }

    /// Resolves a path pattern to a table (plan time).
    ///
    /// # Errors
    /// When nothing matches the pattern (the file, directory or glob rules above).
    pub fn table(&self, pattern: &str) -> Result<JsonVariantTable> {
        let files = files::resolve(self.name(), pattern)?;
        Ok(JsonVariantTable::new(self.name(), files, self.tolerant))
    }
}

impl TableFunctionImpl for ReadJsonVariant {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let pattern = files::path_argument(self.name(), args.exprs())?;
        let ignore_trailing = args
            .session()
            .config()
            .options()
            .extensions
            .get::<crate::config::VariantOptions>()
            .is_some_and(|o| o.ndjson_ignore_trailing_content);
        let json = JsonParseOptions::for_lines(ignore_trailing);
        Ok(Arc::new(self.table(&pattern)?.with_json_options(json)))
    }
}

/// The table functions of this module, for `SessionStateBuilder::table_functions`.
pub fn table_functions() -> Vec<Arc<TableFunction>> {
    [ReadJsonVariant::strict(), ReadJsonVariant::tolerant()]
        .into_iter()
        .map(|f| Arc::new(TableFunction::new(f.name().to_string(), Arc::new(f))))
        .collect()
}

#[cfg(test)]
mod tests;
