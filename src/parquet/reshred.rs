//! Rewriting Parquet files with a new shredding: the work behind
//! `variant_reshred` (the SQL function is [`crate::tables`]'s, which also
//! sends Delta tables to [`crate::delta`]). Each file is written again beside
//! itself in a hidden staging folder (`.reshred-<id>/`), read back and
//! compared row by row with the old one, and only when every file checks out
//! renamed over it; see [`reshred_files`].

use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field};
use datafusion::common::{Result, exec_datafusion_err, plan_datafusion_err, plan_err};
use datafusion::config::ConfigOptions;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::array::is_variant_field;

/// The SQL name of the function this work is behind.
pub const VARIANT_RESHRED: &str = "variant_reshred";

/// What a re-shred did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReshredReport {
    /// Files rewritten.
    pub files: usize,
    /// Rows checked.
    pub rows: usize,
    /// Bytes of the files before.
    pub bytes_before: u64,
    /// Bytes of the files after.
    pub bytes_after: u64,
    /// Wall time.
    pub seconds: f64,
}

/// Re-shreds `files` with the shredding schema `ddl` (see the module docs),
/// writing and reading through a session with `options`.
///
/// # Errors
/// When the schema is not a shredding schema, a file cannot be read or written,
/// or a rewritten row differs (the old files are then untouched).
pub fn reshred_files(
    files: &[PathBuf],
    ddl: &str,
    options: &ConfigOptions,
) -> Result<ReshredReport> {
    crate::shredding::typed_value_from_ddl(ddl)
        .map_err(|e| plan_datafusion_err!("{VARIANT_RESHRED}: {e}"))?;
    if files.is_empty() {
        return plan_err!("{VARIANT_RESHRED}: no Parquet file to rewrite");
    }
    let start = Instant::now();
    let (ctx, runtime) = rewrite_session(options)?;
    let id = format!(
        ".reshred-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let mut report = ReshredReport {
        files: files.len(),
        rows: 0,
        bytes_before: 0,
        bytes_after: 0,
        seconds: 0.0,
    };
    // What killed runs left in these folders (never renamed in) goes first.
    let mut dirs: Vec<&Path> = files
        .iter()
        .map(|f| f.parent().unwrap_or(Path::new(".")))
        .collect();
    dirs.sort();
    dirs.dedup();
    for dir in &dirs {
        clear_leftovers(dir);
    }
    let remove_staging = || {
        for dir in &dirs {
            let _ = std::fs::remove_dir_all(dir.join(&id));
        }
    };
    let mut staged: Vec<(PathBuf, &PathBuf)> = Vec::with_capacity(files.len());
    let result = (|| -> Result<()> {
        for old in files {
            let staging = old.parent().unwrap_or(Path::new(".")).join(&id);
            std::fs::create_dir_all(&staging).map_err(|e| io_error(&staging, &e))?;
            let new = staging.join(old.file_name().unwrap_or_default());
            let sql = format!(
                "COPY (SELECT * FROM {}) TO {} STORED AS PARQUET OPTIONS ('variant.shredding' 'auto', 'variant.shredding_schema' {})",
                quote(old),
                quote(&new),
                quote_str(ddl)
            );
            runtime.block_on(async { ctx.sql(&sql).await?.collect().await })?;
            report.rows += runtime.block_on(check_same_rows(&ctx, old, &new))?;
            report.bytes_before += std::fs::metadata(old).map_err(|e| io_error(old, &e))?.len();
            report.bytes_after += std::fs::metadata(&new)
                .map_err(|e| io_error(&new, &e))?
                .len();
            staged.push((new, old));
            if failpoint("reshred_after_first_check") {
                std::process::abort();
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        remove_staging();
        return Err(e);
    }
    // Every file checked: swap them in, one atomic rename each.
    for (new, old) in &staged {
        std::fs::rename(new, old).map_err(|e| io_error(old, &e))?;
        if failpoint("reshred_after_first_rename") {
            std::process::abort();
        }
    }
    remove_staging();
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// The crash tests' fault injection ([`super::commit::FAILPOINT_ENV`]): abort
/// the process, as `kill -9` would, at the named point.
fn failpoint(name: &str) -> bool {
    std::env::var(super::commit::FAILPOINT_ENV).is_ok_and(|v| v == name)
}

/// Removes staging folders that a killed run left in `dir` (their files were
/// never renamed in).
fn clear_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with(".reshred-") && e.path().is_dir() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> datafusion::error::DataFusionError {
    exec_datafusion_err!("{VARIANT_RESHRED}: {}: {e}", path.display())
}

fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn quote(p: &Path) -> String {
    quote_str(&p.to_string_lossy())
}

/// Whether a field holds a VARIANT anywhere.
pub(crate) fn holds_variant(f: &Field) -> bool {
    is_variant_field(f)
        || match f.data_type() {
            DataType::Struct(children) => children.iter().any(|c| holds_variant(c)),
            DataType::List(e) | DataType::LargeList(e) | DataType::FixedSizeList(e, _) => {
                holds_variant(e)
            }
            DataType::Map(e, _) => holds_variant(e),
            _ => false,
        }
}

/// The session and runtime a rewrite runs its own queries in: the caller's
/// options, one partition (files are read in order), whole values read (the
/// pushdown is not needed to copy a file), nothing logged.
pub(crate) fn rewrite_session(
    options: &ConfigOptions,
) -> Result<(SessionContext, tokio::runtime::Runtime)> {
    let mut config = SessionConfig::from(options.clone())
        .with_target_partitions(1)
        // A session's options say its catalog exists; this session needs its own.
        .with_create_default_catalog_and_schema(true);
    config.options_mut().set("variant.pushdown", "false")?;
    config.options_mut().set("variant.workload_log", "")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| exec_datafusion_err!("{VARIANT_RESHRED}: {e}"))?;
    Ok((crate::variant_context_with_config(config), runtime))
}

/// Reads both files in file order and compares every row; the number of rows.
async fn check_same_rows(ctx: &SessionContext, old: &Path, new: &Path) -> Result<usize> {
    let old_rows = ctx.sql(&format!("SELECT * FROM {}", quote(old))).await?;
    let new_rows = ctx.sql(&format!("SELECT * FROM {}", quote(new))).await?;
    same_rows(&old.display().to_string(), old_rows, new_rows)
        .await
        .map_err(|e| plan_datafusion_err!("{VARIANT_RESHRED}: {}", e.strip_backtrace()))
}

/// Compares two reads of a file and its rewrite row by row, in order: every
/// column equal, every column holding a VARIANT equal through `to_json` (which
/// tells a SQL NULL from a Variant null). The number of rows; an error naming
/// the file (`what`), the column and the row where they differ.
pub(crate) async fn same_rows(
    what: &str,
    old: datafusion::dataframe::DataFrame,
    new: datafusion::dataframe::DataFrame,
) -> Result<usize> {
    let comparable = |df: datafusion::dataframe::DataFrame| {
        // Found by name in the session that reads the files: the Parquet
        // layer does not depend on the functions' module.
        let to_json = datafusion::execution::FunctionRegistry::udf(&df.task_ctx(), "to_json")?;
        let exprs: Vec<datafusion::prelude::Expr> = df
            .schema()
            .fields()
            .iter()
            .map(|f| {
                let c =
                    datafusion::prelude::col(datafusion::common::Column::new_unqualified(f.name()));
                if holds_variant(f) {
                    to_json.call(vec![c]).alias(f.name())
                } else {
                    c
                }
            })
            .collect();
        df.select(exprs)
    };
    let before = comparable(old)?.collect().await?;
    let after = comparable(new)?.collect().await?;
    let columns = |batches: &[RecordBatch]| -> Result<Vec<ArrayRef>> {
        let Some(first) = batches.first() else {
            return Ok(Vec::new());
        };
        (0..first.num_columns())
            .map(|i| {
                let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
                Ok(arrow::compute::concat(&parts)?)
            })
            .collect()
    };
    let (a, b) = (columns(&before)?, columns(&after)?);
    let rows = a.first().map_or(0, |c| Array::len(c.as_ref()));
    if a.len() != b.len() || b.first().map_or(0, |c| Array::len(c.as_ref())) != rows {
        return plan_err!(
            "the rewrite of {what} does not have the same columns and rows; the old file is kept"
        );
    }
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x.as_ref() != y.as_ref() {
            let name = before[0].schema().field(i).name().clone();
            let row = (0..rows)
                .find(|&r| x.slice(r, 1).as_ref() != y.slice(r, 1).as_ref())
                .unwrap_or(0);
            return plan_err!(
                "the rewrite of {what} differs in column {name} at row {row}; the old file is kept"
            );
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_keeps_every_row_and_changes_the_shredding() {
        let dir = std::env::temp_dir().join(format!("df_variant_reshred_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("p.parquet");
        let ctx = crate::variant_context();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            ctx.sql(&format!(
                "COPY (SELECT id, parse_json(j) AS v FROM (VALUES (1, '{{\"a\":1,\"b\":null}}'), (2, NULL)) t(id, j)) TO '{}'",
                file.display()
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        });
        let options = ctx.state().config().options().as_ref().clone();
        // A session's options say its default catalog exists already.
        assert!(!options.catalog.create_default_catalog_and_schema);
        let report =
            reshred_files(std::slice::from_ref(&file), "STRUCT<a: BIGINT>", &options).unwrap();
        assert_eq!((report.files, report.rows), (1, 2));
        let (_, nodes) = super::super::paths::read_footer(&file).unwrap();
        assert!(
            nodes
                .iter()
                .any(|n| n.path == "$.a" && n.typed_leaf.is_some())
        );
        // A rewrite that differs is caught, naming the column and the row.
        let other = dir.join("other.parquet");
        rt.block_on(async {
            ctx.sql(&format!(
                "COPY (SELECT id, parse_json(j) AS v FROM (VALUES (1, '{{\"a\":1,\"b\":null}}'), (2, 'null')) t(id, j)) TO '{}'",
                other.display()
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        });
        let err = rt
            .block_on(check_same_rows(&ctx, &file, &other))
            .unwrap_err()
            .to_string();
        assert!(err.contains("differs in column v at row 1"), "{err}");
        std::fs::remove_file(&other).unwrap();
        // Nothing is left beside the file.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
