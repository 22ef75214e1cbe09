//! The workload log: every extraction (`variant_get`, `try_variant_get`, `:`
//! paths) that a Parquet scan executes, counted per file, column, path and
//! requested type, with how it was read and the bytes it read.
//!
//! The log lives in the session (a [`WorkloadLog`] in the `SessionConfig`'s
//! extensions, installed by [`crate::with_variant`]). With
//! `SET variant.workload_log = '<dir>'` each file scan is also appended to
//! `<dir>/workload.jsonl` as one JSON line (no SQL text, unless
//! `variant.workload_log_sql` asks for it), so the log outlives the process
//! and several processes can share it. `variant_workload(table)`
//! shows it for a table's files:
//!
//! ```sql
//! SELECT path, type, file_scans, pushed, not_shredded, bytes_read
//! FROM variant_workload('events/');
//! -- path                | type   | file_scans | pushed | not_shredded | bytes_read
//! -- $.commit.collection | STRING | 12         | 12     | 0            | 3650136
//! -- $.langs[0]          | STRING | 12         | 0      | 0            | 81234567  (array_step: 12)
//! ```
//!
//! The outcomes ([`Outcome`]): `pushed` (only the shredded leaf was read),
//! `residual_read` (the shredded leaf and its residual `value`), and the
//! reasons an extraction read the whole value instead: `unshredded` (the file
//! does not shred the column), `not_shredded` (it shreds the column, not this
//! path), `array_step` (the path indexes an array), `object_or_array` (the path
//! ends at a shredded object or array, read whole), `whole_value` (the path is
//! `$`); and `file_skipped` (the file was skipped by its table's per-path
//! bounds before its footer was read). Scans run with `variant.pushdown =
//! false` read every value whole and are not logged; on a cluster, each worker
//! logs the scans it runs (share a directory to see them together). A file
//! read in parts (its row groups split between partitions or tasks) counts one
//! scan per part that holds row groups.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{Result, exec_datafusion_err, plan_datafusion_err};
use serde_json::{Value, json};

/// How one extraction read one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Only the shredded `typed_value` leaf was read.
    Pushed,
    /// The shredded leaf and its residual `value` were read.
    ResidualRead,
    /// The file does not shred the column: the whole value was read.
    Unshredded,
    /// The file shreds the column but not this path.
    NotShredded,
    /// The path indexes an array.
    ArrayStep,
    /// The path ends at a shredded object or array, read whole.
    ObjectOrArray,
    /// The path is `$`.
    WholeValue,
    /// The file was skipped by per-path bounds, unread.
    FileSkipped,
}

impl Outcome {
    /// Every outcome, in the order of `variant_workload`'s columns.
    pub const ALL: [Outcome; 8] = [
        Outcome::Pushed,
        Outcome::ResidualRead,
        Outcome::Unshredded,
        Outcome::NotShredded,
        Outcome::ArrayStep,
        Outcome::ObjectOrArray,
        Outcome::WholeValue,
        Outcome::FileSkipped,
    ];

    /// The name used in the JSON lines and as a column of `variant_workload`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pushed => "pushed",
            Outcome::ResidualRead => "residual_read",
            Outcome::Unshredded => "unshredded",
            Outcome::NotShredded => "not_shredded",
            Outcome::ArrayStep => "array_step",
            Outcome::ObjectOrArray => "object_or_array",
            Outcome::WholeValue => "whole_value",
            Outcome::FileSkipped => "file_skipped",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Outcome::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// One extraction's read of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractionRead {
    /// The VARIANT column.
    pub column: String,
    /// The path as written (`$.a.b`).
    pub path: String,
    /// The requested type (`bigint`, `variant`, ...).
    pub target: String,
    /// How it was read.
    pub outcome: Outcome,
    /// Compressed bytes of the leaves it read, over the row groups scanned.
    pub bytes: u64,
    /// Compressed bytes of the whole column over the same row groups: what a
    /// read of whole values costs.
    pub whole_bytes: u64,
    /// Row groups scanned whose residual `value` had to be read.
    pub residual_row_groups: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    file: String,
    column: String,
    path: String,
    target: String,
    outcome: Outcome,
}

/// Counts for one key.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    scans: u64,
    bytes: u64,
}

/// The session's log (see the module docs).
#[derive(Debug, Default)]
pub struct WorkloadLog {
    entries: Mutex<HashMap<Key, Counts>>,
    /// The SQL text of the statement last planned (`variant.workload_log_sql`).
    query: Mutex<Option<String>>,
}

/// The name of the file appended to in `variant.workload_log`'s folder.
pub const WORKLOAD_FILE: &str = "workload.jsonl";

impl WorkloadLog {
    /// Sets the SQL text that lines appended with `with_sql` carry: the
    /// statement being planned (see `variant.workload_log_sql`).
    pub fn set_query(&self, sql: Option<String>) {
        *self
            .query
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = sql;
    }

    /// Records the extractions of one scan of `file` (an absolute path), and
    /// appends them to `<dir>/workload.jsonl` when `dir` is set, with the SQL
    /// text given to [`Self::set_query`] when `with_sql`.
    ///
    /// # Errors
    /// When the line cannot be appended (naming the file).
    pub fn record(
        &self,
        file: &str,
        reads: &[ExtractionRead],
        dir: Option<&Path>,
        with_sql: bool,
    ) -> Result<()> {
        if reads.is_empty() {
            return Ok(());
        }
        {
            let mut entries = self
                .entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for r in reads {
                let counts = entries
                    .entry(Key {
                        file: file.to_string(),
                        column: r.column.clone(),
                        path: r.path.clone(),
                        target: r.target.clone(),
                        outcome: r.outcome,
                    })
                    .or_default();
                counts.scans += 1;
                counts.bytes += r.bytes;
            }
        }
        if let Some(dir) = dir {
            let sql = with_sql
                .then(|| {
                    self.query
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .clone()
                })
                .flatten();
            append_line(dir, file, reads, sql.as_deref())?;
        }
        Ok(())
    }

    fn snapshot(&self) -> Vec<(Key, Counts)> {
        let entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.iter().map(|(k, c)| (k.clone(), *c)).collect()
    }
}

fn append_line(dir: &Path, file: &str, reads: &[ExtractionRead], sql: Option<&str>) -> Result<()> {
    let time_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut line = json!({
        "time_ms": time_ms,
        "file": file,
        "extractions": reads.iter().map(|r| json!({
            "column": r.column,
            "path": r.path,
            "type": r.target,
            "outcome": r.outcome.name(),
            "bytes": r.bytes,
        })).collect::<Vec<_>>(),
    });
    if let Some(sql) = sql {
        line["sql"] = json!(sql);
    }
    let path = dir.join(WORKLOAD_FILE);
    let fail = |e: std::io::Error| {
        exec_datafusion_err!(
            "variant.workload_log: cannot append to {}: {e}",
            path.display()
        )
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(fail)?;
    // One write of one line: appends from several processes do not interleave.
    out.write_all(format!("{line}\n").as_bytes()).map_err(fail)
}

/// The entries of `<dir>/workload.jsonl`. A line that is not one of ours
/// (a torn last line of a killed process, say) is skipped.
fn read_lines(dir: &Path) -> Result<Vec<(Key, Counts)>> {
    let path = dir.join(WORKLOAD_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(plan_datafusion_err!(
                "variant_workload: cannot read {}: {e}",
                path.display()
            ));
        }
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(file) = v.get("file").and_then(Value::as_str) else {
            continue;
        };
        for e in v
            .get("extractions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
            let (Some(column), Some(path), Some(target), Some(outcome)) = (
                text("column"),
                text("path"),
                text("type"),
                text("outcome").as_deref().and_then(Outcome::from_name),
            ) else {
                continue;
            };
            out.push((
                Key {
                    file: file.to_string(),
                    column,
                    path,
                    target,
                    outcome,
                },
                Counts {
                    scans: 1,
                    bytes: e.get("bytes").and_then(Value::as_u64).unwrap_or(0),
                },
            ));
        }
    }
    Ok(out)
}

/// The SQL name of the table function.
pub const VARIANT_WORKLOAD: &str = "variant_workload";

/// `variant_workload(path or table)` (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantWorkload;

/// The output schema of [`VariantWorkload`]: the extraction, how many file
/// scans ran it, one column per [`Outcome`], and the bytes read.
pub fn variant_workload_schema() -> SchemaRef {
    let mut fields = vec![
        Field::new("column", DataType::Utf8, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("file_scans", DataType::Int64, false),
    ];
    fields.extend(
        Outcome::ALL
            .iter()
            .map(|o| Field::new(o.name(), DataType::Int64, false)),
    );
    fields.push(Field::new("bytes_read", DataType::Int64, false));
    Arc::new(Schema::new(fields))
}

/// One extraction's totals over a table's files.
#[derive(Debug, Clone, Default)]
pub struct ExtractionSummary {
    /// The VARIANT column.
    pub column: String,
    /// The path as written.
    pub path: String,
    /// The requested type.
    pub target: String,
    /// File scans that ran it.
    pub file_scans: u64,
    /// File scans per outcome, in [`Outcome::ALL`] order.
    pub outcomes: [u64; 8],
    /// Compressed bytes read.
    pub bytes_read: u64,
}

/// The totals per extraction over `files` (absolute paths), from the log in
/// `dir` when it is set (it holds this session's scans too), or else from the
/// session's log; most file scans first.
///
/// # Errors
/// When the log file cannot be read.
pub fn summarize(
    log: Option<&WorkloadLog>,
    dir: Option<&Path>,
    files: &[String],
) -> Result<Vec<ExtractionSummary>> {
    let entries = match dir {
        Some(dir) => read_lines(dir)?,
        None => log.map(WorkloadLog::snapshot).unwrap_or_default(),
    };
    let wanted: std::collections::HashSet<&str> = files.iter().map(String::as_str).collect();
    let mut by: HashMap<(String, String, String), ExtractionSummary> = HashMap::new();
    for (k, c) in entries {
        if !wanted.contains(k.file.as_str()) {
            continue;
        }
        let s = by
            .entry((k.column.clone(), k.path.clone(), k.target.clone()))
            .or_insert_with(|| ExtractionSummary {
                column: k.column.clone(),
                path: k.path.clone(),
                target: k.target.clone(),
                ..ExtractionSummary::default()
            });
        let i = Outcome::ALL
            .iter()
            .position(|o| *o == k.outcome)
            .unwrap_or(0);
        s.file_scans += c.scans;
        s.outcomes[i] += c.scans;
        s.bytes_read += c.bytes;
    }
    let mut out: Vec<ExtractionSummary> = by.into_values().collect();
    out.sort_by(|a, b| {
        b.file_scans
            .cmp(&a.file_scans)
            .then_with(|| (&a.column, &a.path, &a.target).cmp(&(&b.column, &b.path, &b.target)))
    });
    Ok(out)
}

/// `variant.workload_log` of a session's options, if set.
pub fn log_dir(options: &datafusion::config::ConfigOptions) -> Option<std::path::PathBuf> {
    options
        .extensions
        .get::<crate::config::VariantOptions>()
        .map(|o| o.workload_log.trim().to_string())
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str, outcome: Outcome, bytes: u64) -> ExtractionRead {
        ExtractionRead {
            column: "v".into(),
            path: path.into(),
            target: "bigint".into(),
            outcome,
            bytes,
            whole_bytes: bytes,
            residual_row_groups: 0,
        }
    }

    #[test]
    fn the_log_counts_per_extraction_and_outcome_and_survives_in_its_folder() {
        let dir = std::env::temp_dir().join(format!("df_variant_workload_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = WorkloadLog::default();
        let files = vec!["/t/a.parquet".to_string(), "/t/b.parquet".to_string()];
        log.set_query(Some("SELECT v:a FROM t".into()));
        log.record(
            &files[0],
            &[read("$.a", Outcome::Pushed, 10)],
            Some(&dir),
            false,
        )
        .unwrap();
        log.record(
            &files[1],
            &[
                read("$.a", Outcome::NotShredded, 100),
                read("$.b[0]", Outcome::ArrayStep, 7),
            ],
            Some(&dir),
            true,
        )
        .unwrap();
        log.record(
            "/other/c.parquet",
            &[read("$.a", Outcome::Pushed, 1)],
            Some(&dir),
            false,
        )
        .unwrap();
        // SQL text only where asked for.
        let text = std::fs::read_to_string(dir.join(WORKLOAD_FILE)).unwrap();
        let sql: Vec<Option<String>> = text
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v.get("sql").and_then(Value::as_str).map(str::to_string)
            })
            .collect();
        assert_eq!(sql, [None, Some("SELECT v:a FROM t".into()), None]);
        // A torn line (a killed writer) is skipped.
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(WORKLOAD_FILE))
            .unwrap()
            .write_all(b"{\"file\": \"/t/a.parq")
            .unwrap();
        for from_dir in [false, true] {
            let rows = summarize(Some(&log), from_dir.then_some(dir.as_path()), &files).unwrap();
            let a = &rows[0];
            assert_eq!(
                (a.path.as_str(), a.file_scans, a.bytes_read),
                ("$.a", 2, 110)
            );
            assert_eq!(a.outcomes[0], 1);
            assert_eq!(a.outcomes[3], 1);
            assert_eq!((rows[1].path.as_str(), rows[1].outcomes[4]), ("$.b[0]", 1));
            assert_eq!(rows.len(), 2);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
