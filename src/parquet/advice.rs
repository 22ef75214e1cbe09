//! `variant_shredding_advice(path or table)`: which paths of a table's VARIANT
//! columns to shred and which to stop shredding, from the workload log
//! ([`crate::workload`]), the files' footers ([`super::paths`]) and a sample of
//! rows.
//!
//! ```sql
//! SELECT "column", action, path, type, queried, bytes_saved_per_query, reason
//! FROM variant_shredding_advice('events');
//! -- v | schema | $                   | STRUCT<commit: STRUCT<collection: STRING>, did: STRING> | 30 | 8123456 | SET variant.shredding_schema = '...'
//! -- v | shred  | $.commit.collection | STRING | 10 | 8000000 | queried in 10 file scans that read whole values (not_shredded); in 99% of sampled rows, all STRING
//! -- v | keep   | $.did               | STRING | 20 | 0       | queried in 20 file scans, all pushed
//! -- v | stop   | $.commit.rev        | STRING | 0  | 0       | shredded, never queried in 30 logged file scans
//! ```
//!
//! Per VARIANT column, one row per decision:
//! - `shred`: a path the workload extracts, read as whole values today, present
//!   in at least `variant.shredding_min_field_fraction` of the sampled rows, with
//!   one type in at least 90% of the rows that hold it;
//! - `keep`: a queried path already shredded;
//! - `stop`: a shredded primitive path no logged scan extracted (only when the
//!   log has scans of the column);
//! - `map`: an object with many distinct keys (over 256, and more than one for
//!   every four rows that hold it), such as ClickHouse's "junk paths": it is not
//!   shredded key by key, nor are queried paths below it;
//! - `skip`: a queried path that is not shredded, with the reason (sparse, mixed
//!   types, an object or array, a path through an array);
//! - `schema`: the proposed shredding (`keep` and `shred` paths) in `type`, as
//!   `variant.shredding_schema` takes it, with the total of `bytes_saved_per_query`.
//!
//! `bytes_saved_per_query` is, for a query that runs the extraction once over
//! the table, the compressed bytes it reads today (from the log) minus the bytes
//! of the leaf it would read: the sampled rows are shredded with the proposed
//! schema and written to Parquet in memory (zstd), and each leaf's bytes per
//! sampled row are scaled to the table's rows.
//!
//! Errors: an unknown table or path, a table without a VARIANT column, and a
//! table whose files no logged scan read (run its queries first; the log is per
//! session unless `variant.workload_log` is set).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::common::{Result, plan_datafusion_err, plan_err};
use datafusion::datasource::MemTable;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet_variant::Variant;

use super::inspect::typed_value_ddl;
use super::paths::{ShreddedNode, for_each_sampled_row, read_footer};
use crate::array::VariantColumnBuilder;
use crate::shredding::{shred, typed_value_from_ddl};
use crate::variant::path::{PathSegment, parse_path, path_to_string};
use crate::variant::schema::{VariantSchema, merge, schema_of};
use crate::workload::{ExtractionSummary, Outcome};

/// The SQL name of the table function.
pub const VARIANT_SHREDDING_ADVICE: &str = "variant_shredding_advice";

/// The table function described in the module docs.
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantShreddingAdvice;

/// The output schema of [`VariantShreddingAdvice`].
pub fn advice_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("column", DataType::Utf8, false),
        Field::new("action", DataType::Utf8, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, true),
        Field::new("queried", DataType::Int64, false),
        Field::new("bytes_saved_per_query", DataType::Int64, true),
        Field::new("reason", DataType::Utf8, false),
    ]))
}

/// Distinct keys above which an object is a map (and at least one per four rows).
const MAP_KEYS: usize = 256;
/// The share of a path's values one type must have to be shredded as it.
const DOMINANT: f64 = 0.9;
/// Files sampled at most, per column.
const SAMPLED_FILES: usize = 16;

/// What the sampled rows say of one key path.
#[derive(Debug, Default)]
struct PathSample {
    rows: u64,
    /// Rows per type name (`BIGINT`, `OBJECT`, ...).
    types: BTreeMap<String, u64>,
    /// The merged schema of the primitive values (decimal precision and scale).
    merged: Option<VariantSchema>,
    /// Child keys, for objects (capped).
    keys: HashSet<String>,
}

/// The sampled rows of one column.
struct Sample {
    rows: u64,
    paths: HashMap<Vec<String>, PathSample>,
    /// The sampled values, for the size estimate.
    column: ArrayRef,
}

fn type_name(v: &Variant<'_, '_>) -> (String, VariantSchema) {
    match v {
        Variant::Object(_) => ("OBJECT".to_string(), VariantSchema::Variant),
        Variant::List(_) => ("ARRAY".to_string(), VariantSchema::Variant),
        other => {
            let s = schema_of(other);
            (s.to_string(), s)
        }
    }
}

fn walk(v: &Variant<'_, '_>, keys: &mut Vec<String>, seen: &mut HashMap<Vec<String>, PathSample>) {
    let (name, schema) = type_name(v);
    let entry = seen.entry(keys.clone()).or_default();
    entry.rows += 1;
    *entry.types.entry(name).or_default() += 1;
    if !matches!(v, Variant::Object(_) | Variant::List(_) | Variant::Null) {
        entry.merged = Some(match entry.merged.take() {
            None => schema,
            Some(m) => merge(m, schema),
        });
    }
    if let Variant::Object(o) = v {
        for (k, _) in o.iter() {
            if entry.keys.len() <= 4 * MAP_KEYS {
                entry.keys.insert(k.to_string());
            }
        }
        for (k, child) in o.iter() {
            keys.push(k.to_string());
            walk(&child, keys, seen);
            keys.pop();
        }
    }
}

/// Reads up to `limit` rows of `column` from each of the first files.
fn sample(files: &[PathBuf], column: &str, limit: usize) -> Result<Sample> {
    let mut out = Sample {
        rows: 0,
        paths: HashMap::new(),
        column: Arc::new(StructArray::new_empty_fields(0, None)),
    };
    let mut builder = VariantColumnBuilder::new(limit);
    for path in files.iter().take(SAMPLED_FILES) {
        for_each_sampled_row(
            VARIANT_SHREDDING_ADVICE,
            path,
            column,
            limit,
            |i, metadata, value| {
                let v = crate::variant::validate::decode(metadata, value)
                    .map_err(|e| plan_datafusion_err!("row {i}: {e}"))?;
                out.rows += 1;
                walk(&v, &mut Vec::new(), &mut out.paths);
                builder.append(metadata, value);
                Ok(())
            },
        )?;
    }
    out.column = builder.finish();
    Ok(out)
}

/// The leaf bytes per sampled row of each shredded key path, writing the
/// sample shredded with `typed_value` to Parquet in memory.
fn leaf_bytes_per_row(
    sample: &Sample,
    typed_value: &DataType,
) -> Result<HashMap<Vec<String>, f64>> {
    let mut out = HashMap::new();
    if sample.rows == 0 {
        return Ok(out);
    }
    let shredded = shred(&sample.column, typed_value)?;
    let field = Field::new("v", shredded.data_type().clone(), true)
        .with_metadata(crate::variant::storage::variant_extension_metadata());
    let schema = Arc::new(Schema::new(vec![field]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![shredded])?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
        .build();
    let mut buffer = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buffer, schema, Some(props))?;
    writer.write(&batch)?;
    let metadata = writer.close()?;
    let rows = sample.rows as f64;
    for rg in metadata.row_groups() {
        for chunk in rg.columns() {
            // v.typed_value.a.typed_value.b.typed_value -> [a, b]
            let parts = chunk.column_path().parts();
            if parts.last().map(String::as_str) != Some("typed_value") {
                continue;
            }
            let keys: Vec<String> = parts[1..parts.len() - 1]
                .iter()
                .filter(|p| *p != "typed_value")
                .cloned()
                .collect();
            *out.entry(keys).or_insert(0.0) += chunk.compressed_size() as f64 / rows;
        }
    }
    Ok(out)
}

fn path_text(keys: &[String]) -> String {
    path_to_string(
        &keys
            .iter()
            .map(|k| PathSegment::Key(k.clone()))
            .collect::<Vec<_>>(),
    )
}

/// What the log says of one queried key path.
#[derive(Default)]
struct Queried {
    scans: u64,
    bytes: u64,
    outcomes: BTreeMap<Outcome, u64>,
}

/// One decision.
struct Row {
    action: &'static str,
    path: String,
    typ: Option<String>,
    queried: u64,
    saved: Option<i64>,
    reason: String,
}

/// A tree of chosen key paths and their types, rendered as a shredding type.
#[derive(Default)]
struct Tree {
    leaf: Option<DataType>,
    children: BTreeMap<String, Tree>,
}

impl Tree {
    fn insert(&mut self, keys: &[String], t: DataType) {
        match keys.split_first() {
            None => self.leaf = Some(t),
            Some((k, rest)) => self.children.entry(k.clone()).or_default().insert(rest, t),
        }
    }

    fn data_type(&self) -> Option<DataType> {
        if self.children.is_empty() {
            return self.leaf.clone();
        }
        let fields: Vec<Field> = self
            .children
            .iter()
            .filter_map(|(k, c)| Some(Field::new(k, c.data_type()?, true)))
            .collect();
        (!fields.is_empty()).then(|| DataType::Struct(Fields::from(fields)))
    }
}

/// The decisions for one column.
fn advise(
    column: &str,
    nodes: &[ShreddedNode],
    workload: &[ExtractionSummary],
    sample: &Sample,
    min_fraction: f64,
    table_rows: i64,
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    // Queried key paths: scans, and the bytes one read of the table costs now.
    let mut queried: BTreeMap<Vec<String>, Queried> = BTreeMap::new();
    let mut others: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let total_scans: u64 = workload.iter().map(|w| w.file_scans).sum();
    for w in workload.iter().filter(|w| w.column == column) {
        let segments = parse_path(&w.path).unwrap_or_default();
        let keys: Option<Vec<String>> = segments
            .iter()
            .map(|s| match s {
                PathSegment::Key(k) => Some(k.clone()),
                PathSegment::Index(_) => None,
            })
            .collect();
        match keys {
            Some(keys) if !keys.is_empty() => {
                let e = queried.entry(keys).or_default();
                e.scans += w.file_scans;
                e.bytes += w.bytes_read;
                for (i, o) in Outcome::ALL.iter().enumerate() {
                    *e.outcomes.entry(*o).or_default() += w.outcomes[i];
                }
            }
            Some(_) => {
                others.entry(w.path.clone()).or_default().0 += w.file_scans;
                others.entry(w.path.clone()).or_default().1 =
                    "the whole value is read; nothing to shred".into();
            }
            None => {
                others.entry(w.path.clone()).or_default().0 += w.file_scans;
                others.entry(w.path.clone()).or_default().1 =
                    "a path through an array; shred the array (ARRAY<...>) to read its elements from leaves once pushdown reaches array steps".into();
            }
        }
    }
    // Shredded primitive paths of the files.
    let shredded: HashMap<Vec<String>, String> = nodes
        .iter()
        .filter(|n| n.column == column && n.typed_leaf.is_some())
        .filter_map(|n| {
            let keys = parse_path(&n.path)
                .ok()?
                .into_iter()
                .map(|s| match s {
                    PathSegment::Key(k) => Some(k),
                    PathSegment::Index(_) => None,
                })
                .collect::<Option<Vec<String>>>()?;
            Some((keys, typed_value_ddl(n.typed_type.as_ref()?)))
        })
        .collect();
    // Objects used as maps.
    let maps: Vec<Vec<String>> = sample
        .paths
        .iter()
        .filter(|(_, s)| s.keys.len() > MAP_KEYS && s.keys.len() as u64 * 4 > s.rows)
        .map(|(k, _)| k.clone())
        .collect();
    for m in &maps {
        let s = &sample.paths[m];
        let n = queried
            .iter()
            .filter(|(k, _)| k.starts_with(m))
            .map(|(_, q)| q.scans)
            .sum();
        rows.push(Row {
            action: "map",
            path: path_text(m),
            typ: Some("OBJECT".into()),
            queried: n,
            saved: None,
            reason: format!(
                "{}{} distinct keys in {} sampled rows: an object used as a map is not shredded key by key",
                if s.keys.len() > 4 * MAP_KEYS { "over " } else { "" },
                s.keys.len().min(4 * MAP_KEYS),
                s.rows
            ),
        });
    }
    let mut chosen = Tree::default();
    let mut new_paths: Vec<(Vec<String>, u64, u64, Row)> = Vec::new();
    for (keys, q) in &queried {
        let (scans, bytes, outcomes) = (&q.scans, &q.bytes, &q.outcomes);
        let path = path_text(keys);
        if maps
            .iter()
            .any(|m| keys.starts_with(m) && keys.len() > m.len())
        {
            continue;
        }
        let pushed = outcomes.get(&Outcome::Pushed).copied().unwrap_or(0)
            + outcomes.get(&Outcome::ResidualRead).copied().unwrap_or(0);
        if let Some(ddl) = shredded.get(keys) {
            chosen.insert(keys, typed_value_from_ddl(ddl)?);
            rows.push(Row {
                action: "keep",
                path,
                typ: Some(ddl.clone()),
                queried: *scans,
                saved: Some(0),
                reason: format!(
                    "queried in {scans} file scans, {pushed} read from its shredded leaf"
                ),
            });
            continue;
        }
        let skip = |reason: String| Row {
            action: "skip",
            path: path.clone(),
            typ: None,
            queried: *scans,
            saved: None,
            reason,
        };
        let Some(s) = sample.paths.get(keys) else {
            rows.push(skip(format!(
                "queried in {scans} file scans, in none of {} sampled rows",
                sample.rows
            )));
            continue;
        };
        let fraction = s.rows as f64 / sample.rows.max(1) as f64;
        let (top, count) = s
            .types
            .iter()
            .filter(|(t, _)| *t != "VOID")
            .max_by_key(|(_, c)| **c)
            .map_or(("VOID".to_string(), 0), |(t, c)| (t.clone(), *c));
        let valued = s.rows - s.types.get("VOID").copied().unwrap_or(0);
        let share = count as f64 / valued.max(1) as f64;
        let mix = s
            .types
            .iter()
            .map(|(t, c)| format!("{t} {:.0}%", 100.0 * *c as f64 / s.rows as f64))
            .collect::<Vec<_>>()
            .join(", ");
        if fraction < min_fraction {
            rows.push(skip(format!(
                "queried in {scans} file scans, but in only {:.1}% of sampled rows (under variant.shredding_min_field_fraction)",
                100.0 * fraction
            )));
            continue;
        }
        if top == "OBJECT" || top == "ARRAY" {
            rows.push(skip(format!(
                "queried in {scans} file scans; {} values are read whole: shred the paths queried below it",
                top.to_lowercase()
            )));
            continue;
        }
        if share < DOMINANT || top == "VOID" {
            rows.push(skip(format!(
                "queried in {scans} file scans; no type holds {:.0}% of its values ({mix})",
                100.0 * DOMINANT
            )));
            continue;
        }
        let ddl = match (&s.merged, top.as_str()) {
            (Some(m), _) if m.to_string() == top => top.clone(),
            (Some(VariantSchema::Decimal { .. }), t) if t.starts_with("DECIMAL") => {
                s.merged.as_ref().map_or(top.clone(), ToString::to_string)
            }
            _ => top.clone(),
        };
        let Ok(t) = typed_value_from_ddl(&ddl) else {
            rows.push(skip(format!(
                "queried in {scans} file scans; {ddl} cannot be shredded"
            )));
            continue;
        };
        chosen.insert(keys, t);
        let why: Vec<String> = outcomes
            .iter()
            .filter(|(o, n)| **n > 0 && !matches!(o, Outcome::Pushed | Outcome::ResidualRead))
            .map(|(o, n)| format!("{} {n}", o.name()))
            .collect();
        new_paths.push((
            keys.clone(),
            *scans,
            *bytes,
            Row {
                action: "shred",
                path,
                typ: Some(ddl.clone()),
                queried: *scans,
                saved: None,
                reason: format!(
                    "queried in {scans} file scans that read whole values ({}); in {:.0}% of sampled rows, {:.0}% {ddl}",
                    why.join(", "),
                    100.0 * fraction,
                    100.0 * share
                ),
            },
        ));
    }
    for (path, (scans, reason)) in others {
        rows.push(Row {
            action: "skip",
            path,
            typ: None,
            queried: scans,
            saved: None,
            reason: format!("queried in {scans} file scans; {reason}"),
        });
    }
    // Shredded paths nobody queries.
    if total_scans > 0 {
        let mut unqueried: Vec<(&Vec<String>, &String)> = shredded
            .iter()
            .filter(|(k, _)| !queried.contains_key(*k))
            .collect();
        unqueried.sort();
        for (keys, ddl) in unqueried {
            rows.push(Row {
                action: "stop",
                path: path_text(keys),
                typ: Some(ddl.clone()),
                queried: 0,
                saved: Some(0),
                reason: format!("shredded, never queried in {total_scans} logged file scans"),
            });
        }
    }
    // Bytes: what the new leaves would cost per read of the table.
    let typed_value = chosen.data_type();
    let mut total_saved = 0i64;
    if let Some(t) = &typed_value {
        let per_row = leaf_bytes_per_row(sample, t)?;
        let files_scanned = |scans: u64| scans.max(1) as f64;
        for (keys, scans, bytes, mut row) in new_paths {
            let after = per_row.get(&keys).copied().unwrap_or(0.0) * table_rows as f64;
            // The log holds `scans` reads of files; a read of the whole table
            // is one read of each file.
            let now = bytes as f64 / files_scanned(scans) * files_per_table(nodes, column) as f64;
            let saved = (now - after).max(0.0).round() as i64;
            total_saved += saved;
            row.saved = Some(saved);
            rows.push(row);
        }
    }
    let schema_row = Row {
        action: "schema",
        path: "$".into(),
        typ: typed_value.as_ref().map(typed_value_ddl),
        queried: queried.values().map(|q| q.scans).sum(),
        saved: Some(total_saved),
        reason: match &typed_value {
            Some(t) => format!(
                "SET variant.shredding_schema = '{}' (or COPY ... OPTIONS ('variant.shredding_schema' '...')) for new files; {} sampled rows",
                typed_value_ddl(t),
                sample.rows
            ),
            None => format!(
                "nothing to shred: no queried path qualifies ({} sampled rows)",
                sample.rows
            ),
        },
    };
    rows.insert(0, schema_row);
    Ok(rows)
}

/// How many files hold the column (one per node at `$`).
fn files_per_table(nodes: &[ShreddedNode], column: &str) -> usize {
    nodes
        .iter()
        .filter(|n| n.column == column && n.path == "$")
        .count()
        .max(1)
}

/// The advice's rows as a table.
fn rows_table(out: &[(String, Row)]) -> Result<MemTable> {
    {
        let schema = advice_schema();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                out.iter().map(|(c, _)| c.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                out.iter().map(|(_, r)| r.action),
            )),
            Arc::new(StringArray::from_iter_values(
                out.iter().map(|(_, r)| r.path.as_str()),
            )),
            Arc::new(StringArray::from(
                out.iter().map(|(_, r)| r.typ.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from_iter_values(
                out.iter().map(|(_, r)| r.queried as i64),
            )),
            Arc::new(Int64Array::from(
                out.iter().map(|(_, r)| r.saved).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from_iter_values(
                out.iter().map(|(_, r)| r.reason.as_str()),
            )),
        ];
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        MemTable::try_new(schema, vec![vec![batch]])
    }
}

/// Every decision for the files of a table, per VARIANT column.
fn decisions(
    name: &str,
    files: &[PathBuf],
    workload: &[ExtractionSummary],
    sample_rows: usize,
    min_fraction: f64,
) -> Result<Vec<(String, Row)>> {
    {
        let mut nodes = Vec::new();
        let mut columns: Vec<String> = Vec::new();
        let mut table_rows = 0i64;
        for f in files {
            let (metadata, file_nodes) = read_footer(Path::new(f))?;
            table_rows += metadata.file_metadata().num_rows();
            for n in &file_nodes {
                if !columns.contains(&n.column) {
                    columns.push(n.column.clone());
                }
            }
            nodes.extend(file_nodes);
        }
        if columns.is_empty() {
            return plan_err!("{VARIANT_SHREDDING_ADVICE}: '{name}' has no VARIANT column");
        }
        if workload.is_empty() {
            return plan_err!(
                "{VARIANT_SHREDDING_ADVICE}: no logged scan of '{name}' extracted a path: run its queries first (the log is per session unless variant.workload_log is set)"
            );
        }
        let mut out: Vec<(String, Row)> = Vec::new();
        for column in &columns {
            let sample = sample(files, column, sample_rows)?;
            for row in advise(column, &nodes, workload, &sample, min_fraction, table_rows)? {
                out.push((column.clone(), row));
            }
        }
        Ok(out)
    }
}

/// `COPY ... OPTIONS ('variant.shredding_schema' 'advice')` planned by
/// DataFusion's own `ctx.sql`: the shredding schema
/// `variant_shredding_advice` proposes for the one table `input` reads, found
/// from the Parquet files its scans list (`None`: shred nothing). The same
/// for every VARIANT column, since the option applies to all of them.
///
/// # Errors
/// A source that reads no Parquet table, or more than one; files that are not
/// local; the advice's own errors; columns advised different schemas.
pub(crate) fn advised_for_input(
    session: &dyn datafusion::catalog::Session,
    input: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Result<Option<String>> {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::datasource::physical_plan::FileScanConfig;
    use datafusion::datasource::source::DataSourceExec;
    const OPTION: &str = "variant.shredding_schema 'advice'";
    let mut tables: Vec<Vec<PathBuf>> = Vec::new();
    let mut other = false;
    input.apply(|node| {
        let scan = node
            .downcast_ref::<DataSourceExec>()
            .and_then(|d| d.data_source().downcast_ref::<FileScanConfig>());
        match scan {
            Some(config) => {
                let mut files: Vec<PathBuf> = config
                    .file_groups
                    .iter()
                    .flat_map(datafusion::datasource::physical_plan::FileGroup::files)
                    .map(|f| PathBuf::from(format!("/{}", f.object_meta.location)))
                    .collect();
                files.sort();
                files.dedup();
                if config.object_store_url.as_str() != "file:///" {
                    other = true;
                } else if !tables.contains(&files) {
                    tables.push(files);
                }
            }
            None if node.children().is_empty() => other = true,
            None => {}
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    let files = match (tables.as_slice(), other) {
        ([one], false) => one.clone(),
        ([], _) => {
            return plan_err!(
                "{OPTION} needs a COPY that reads one table of local Parquet files, whose workload the advice comes from; this one reads none"
            );
        }
        _ => {
            return plan_err!(
                "{OPTION} needs a COPY that reads one table of local Parquet files, whose workload the advice comes from; this one reads {} sources",
                tables.len() + usize::from(other)
            );
        }
    };
    let name = common_folder(&files);
    let keys: Vec<String> = files
        .iter()
        .map(|p| {
            std::fs::canonicalize(p)
                .map(|c| c.to_string_lossy().into_owned())
                .map_err(|e| plan_datafusion_err!("{OPTION}: {}: {e}", p.display()))
        })
        .collect::<Result<_>>()?;
    let rows = session_decisions(session, &name, &files, &keys)?;
    let advised: Vec<(&str, Option<&str>)> = rows
        .iter()
        .filter(|(_, r)| r.action == "schema")
        .map(|(c, r)| (c.as_str(), r.typ.as_deref()))
        .collect();
    let distinct: HashSet<Option<&str>> = advised.iter().map(|(_, t)| *t).collect();
    match distinct.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => Ok(one.map(str::to_string)),
        [] => plan_err!("{OPTION}: variant_shredding_advice('{name}') gave no schema"),
        _ => plan_err!(
            "{OPTION}: the VARIANT columns of {name} are advised different schemas ({}), and the option applies to every VARIANT column written; give the schema",
            advised
                .iter()
                .map(|(c, t)| format!("{c}: {}", t.unwrap_or("none")))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// The folder all `files` lie in (the file itself for one file).
fn common_folder(files: &[PathBuf]) -> String {
    match files {
        [one] => one.display().to_string(),
        _ => {
            let mut common: PathBuf = files[0].parent().map(Path::to_path_buf).unwrap_or_default();
            while !files.iter().all(|f| f.starts_with(&common)) {
                if !common.pop() {
                    break;
                }
            }
            format!("{}/", common.display())
        }
    }
}

/// The decisions for `files` (`keys`: their canonical paths, as the workload
/// log names them), with the session's log and sampling settings.
fn session_decisions(
    session: &dyn datafusion::catalog::Session,
    name: &str,
    files: &[PathBuf],
    keys: &[String],
) -> Result<Vec<(String, Row)>> {
    let log = session
        .config()
        .get_extension::<crate::workload::WorkloadLog>();
    let dir = crate::workload::log_dir(session.config_options());
    let workload = crate::workload::summarize(log.as_deref(), dir.as_deref(), keys)?;
    let options = session
        .config_options()
        .extensions
        .get::<crate::config::VariantOptions>()
        .cloned()
        .unwrap_or_default();
    crate::boundary::guard(VARIANT_SHREDDING_ADVICE, || {
        decisions(
            name,
            files,
            &workload,
            options.shredding_sample_rows.max(1),
            options.shredding_min_field_fraction,
        )
    })
}

/// The advice table for `files` (`keys`: their canonical paths), named `name`
/// in its messages, with the session's log and sampling settings.
///
/// # Errors
/// As listed in the module docs.
pub(crate) fn session_table(
    session: &dyn datafusion::catalog::Session,
    name: &str,
    files: &[PathBuf],
    keys: &[String],
) -> Result<MemTable> {
    rows_table(&session_decisions(session, name, files, keys)?)
}
