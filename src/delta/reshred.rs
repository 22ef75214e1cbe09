//! `variant_reshred` on a Delta table: every live file rewritten with the new
//! shredding, checked row by row against the old one, and swapped in by one
//! commit of `remove` + `add` actions (`dataChange: false`, with the new files'
//! statistics and per-path bounds).
//!
//! ```sql
//! SELECT variant_reshred('/data/events', 'STRUCT<commit: STRUCT<collection: STRING>>');
//! -- {files: 12, rows: 1000000, bytes_before: ..., bytes_after: ..., seconds: ...}
//! ```
//!
//! The table must enable shredding (`delta.enableVariantShredding`, which
//! `ALTER TABLE ... SET TBLPROPERTIES` turns on) and be one we write. The new
//! files are written beside the old ones under new names; readers see them
//! only once the commit lands, and a reader at an older version still reads the
//! old files. If a rewrite, a check or the commit fails (another commit took the
//! version), the new files are deleted and the table is as it was. A file with
//! a deletion vector is refused.

use datafusion::common::{Result, plan_err};
use datafusion::config::ConfigOptions;
use serde_json::json;

use super::log::{blocking, store_for};
use super::log::{load_snapshot, table_exists, table_url};
use super::write::{commit_alteration, now_millis, rewrite_files};
use crate::config::ShreddingMode;
use crate::parquet::reshred::{ReshredReport, VARIANT_RESHRED};

/// Re-shreds the Delta table at `location` with the shredding schema `ddl`
/// (already checked), through a session with `options`. Blocking.
///
/// # Errors
/// A table that does not enable shredding or that we do not write, a file that
/// cannot be read or written, a rewritten row that differs, or a lost commit;
/// the table is then untouched.
pub fn reshred_table(location: &str, ddl: &str, options: &ConfigOptions) -> Result<ReshredReport> {
    let start = std::time::Instant::now();
    let (ctx, runtime) = crate::parquet::reshred::rewrite_session(options)?;
    runtime.block_on(async {
        let url = table_url(location)?;
        let state = ctx.state();
        let store = store_for(&state, &url)?;
        if !table_exists(&store, &url).await? {
            return plan_err!("{VARIANT_RESHRED}: no Delta table at {url}");
        }
        let (s, u) = (std::sync::Arc::clone(&store), url.clone());
        let snapshot = blocking(move || load_snapshot(s, &u, None)).await?;
        snapshot.check_writable()?;
        if !snapshot.shredding_enabled() {
            return plan_err!(
                "{VARIANT_RESHRED}: Delta table {url} does not enable shredding; first ALTER TABLE ... SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')"
            );
        }
        let files: Vec<&super::log::LogFile> = snapshot.files.iter().collect();
        if files.is_empty() {
            return plan_err!("{VARIANT_RESHRED}: Delta table {url} has no file to rewrite");
        }
        let rewritten = rewrite_files(
            &ctx,
            &snapshot,
            &files,
            ShreddingMode::Schema(ddl.to_string()),
        )
        .await?;
        let mut actions = vec![json!({"commitInfo": {
            "timestamp": now_millis(),
            "operation": "REORG",
            "operationParameters": {"variant_reshred": ddl},
            "isBlindAppend": false,
            "engineInfo": concat!("df-variant/", env!("CARGO_PKG_VERSION")),
        }})];
        actions.extend(rewritten.actions.iter().cloned());
        let version = snapshot.version + 1;
        if !commit_alteration(&store, &url, version, &actions).await? {
            return plan_err!(
                "{VARIANT_RESHRED}: another commit made version {version} of {url} first; nothing was changed, run it again"
            );
        }
        Ok(ReshredReport {
            files: files.len(),
            rows: rewritten.rows,
            bytes_before: rewritten.bytes_before,
            bytes_after: rewritten.bytes_after,
            seconds: start.elapsed().as_secs_f64(),
        })
    })
}
