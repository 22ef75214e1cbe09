//! `variant_paths(path or table)`: the paths that the VARIANT columns of a
//! table hold, read from Parquet footers only.
//!
//! ```sql
//! SELECT "column", path, type, files, rows, null_count, residual_empty, min, max
//! FROM variant_paths('events/');
//! -- column | path              | type   | files | rows  | null_count | residual_empty | min | max
//! -- v      | $                 | OBJECT | 4     | 40000 | NULL       | true           |     |
//! -- v      | $.commit.collection | STRING | 4   | 40000 | 1200       | true           | app.bsky.feed.like | app.bsky.graph.follow
//! ```
//!
//! One row per VARIANT column and shredded path, over every file of the table:
//! the shredded type(s) (`OBJECT`, `ARRAY`, a primitive such as `BIGINT`, or
//! `VARIANT` for a path stored without a `typed_value`; types that differ
//! between files are listed `BIGINT | STRING`), in how many files and row
//! groups it is shredded and the rows those hold, how many of those rows have
//! no value of the shredded type there (`null_count`: the path is missing, or
//! holds another type), whether the residual `value` is empty (every value at
//! the path has the shredded type), the exact minimum and maximum of the
//! shredded values (for types with an exact order and statistics marked exact),
//! and the compressed bytes of the path's own leaves (its `typed_value` leaf and
//! its residual `value`). An unshredded column is one row, path `$`, type
//! `VARIANT`. Array elements are the path `[*]`.
//!
//! Only footers are read, never a data page, so it answers in milliseconds on
//! large tables. The argument is a file, a directory or a glob (as for
//! `variant_shredding_schema`), a Delta table's directory (its live files), or
//! the name of a registered table over Parquet files or a Delta table.
//!
//! `variant_paths(t, sample => N)` (or `variant_paths(t, N)`) also reads the
//! first `N` rows of each file whose column keeps values in its residual (an
//! unshredded column, or a shredding that does not hold everything), and adds
//! the paths found there that no file shreds, marked `sampled = true`: their
//! `rows` count the sampled rows holding the path, their `type` is what
//! `schema_of_variant_agg` would say of those rows, and their statistics are
//! NULL.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::{Result, ScalarValue, plan_datafusion_err, plan_err};
use datafusion::datasource::MemTable;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::SchemaDescriptor;

use super::inspect::{typed_value_ddl, variant_columns_of};
use crate::fs::{self as files};
use crate::variant::path::{PathSegment, path_to_string};
use crate::variant::schema::{VariantSchema, merge, schema_of};

/// The SQL name of the table function.
pub const VARIANT_PATHS: &str = "variant_paths";

/// The table function described in the module docs.
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantPaths;

/// The output schema of [`VariantPaths`].
pub fn variant_paths_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("column", DataType::Utf8, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("files", DataType::Int64, false),
        Field::new("row_groups", DataType::Int64, true),
        Field::new("rows", DataType::Int64, false),
        Field::new("null_count", DataType::Int64, true),
        Field::new("residual_empty", DataType::Boolean, true),
        Field::new("min", DataType::Utf8, true),
        Field::new("max", DataType::Utf8, true),
        Field::new("compressed_bytes", DataType::Int64, true),
        Field::new("sampled", DataType::Boolean, false),
    ]))
}

/// One node of a VARIANT column's shredding in one file: the column itself
/// (path `$`), an object field, or array elements.
#[derive(Debug, Clone)]
pub(crate) struct ShreddedNode {
    /// The column, as a dotted path to it (`v`, or `s.v` inside a struct).
    pub column: String,
    /// The path from the column's root: `$`, `$.a.b`, `$.tags[*]`.
    pub path: String,
    /// The type of `typed_value` here (`None`: the node has only `value`).
    pub typed_type: Option<DataType>,
    /// The Parquet leaf of `typed_value`, when it is a primitive.
    pub typed_leaf: Option<usize>,
    /// The Parquet leaf of the residual `value`.
    pub value_leaf: Option<usize>,
}

impl ShreddedNode {
    /// `OBJECT`, `ARRAY`, a primitive's DDL, or `VARIANT` (value only).
    fn type_name(&self) -> String {
        match &self.typed_type {
            None => "VARIANT".to_string(),
            Some(DataType::Struct(_)) => "OBJECT".to_string(),
            Some(DataType::List(_) | DataType::LargeList(_) | DataType::ListView(_)) => {
                "ARRAY".to_string()
            }
            Some(t) => typed_value_ddl(t),
        }
    }
}

/// Every shredded node of every VARIANT column of a file, in schema order,
/// with its Parquet leaves.
pub(crate) fn shredded_nodes(schema: &Schema, descr: &SchemaDescriptor) -> Vec<ShreddedNode> {
    let mut out = Vec::new();
    for column in variant_columns_of(schema) {
        let parts: Vec<String> = column.column.split('.').map(str::to_string).collect();
        let Some(field) = field_at(schema, &parts) else {
            continue;
        };
        let DataType::Struct(group) = field.data_type() else {
            continue;
        };
        let mut walker = Walker {
            descr,
            column: &column.column,
            out: &mut out,
        };
        walker.node(group, &mut parts.clone(), "$".to_string());
    }
    out
}

fn field_at<'a>(schema: &'a Schema, parts: &[String]) -> Option<&'a Field> {
    let (first, rest) = parts.split_first()?;
    let mut field = schema.field_with_name(first).ok()?;
    for p in rest {
        let DataType::Struct(children) = field.data_type() else {
            return None;
        };
        field = children.find(p)?.1.as_ref();
    }
    Some(field)
}

struct Walker<'a> {
    descr: &'a SchemaDescriptor,
    column: &'a str,
    out: &'a mut Vec<ShreddedNode>,
}

impl Walker<'_> {
    fn leaf(&self, parts: &[String]) -> Option<usize> {
        self.descr
            .columns()
            .iter()
            .position(|c| c.path().parts() == parts)
    }

    /// `group` is a `{value, typed_value}` group at Parquet path `parts`.
    fn node(&mut self, group: &Fields, parts: &mut Vec<String>, path: String) {
        let value_leaf = group.find("value").and_then(|_| {
            parts.push("value".to_string());
            let i = self.leaf(parts);
            parts.pop();
            i
        });
        let typed = group
            .find("typed_value")
            .map(|(_, f)| f.data_type().clone());
        let mut node = ShreddedNode {
            column: self.column.to_string(),
            path: path.clone(),
            typed_type: typed.clone(),
            typed_leaf: None,
            value_leaf,
        };
        parts.push("typed_value".to_string());
        match &typed {
            Some(DataType::Struct(fields)) => {
                self.out.push(node);
                for f in fields {
                    let DataType::Struct(child) = f.data_type() else {
                        continue;
                    };
                    let step = path_to_string(&[PathSegment::Key(f.name().clone())]);
                    parts.push(f.name().clone());
                    self.node(child, parts, format!("{path}{}", &step[1..]));
                    parts.pop();
                }
            }
            Some(DataType::List(element) | DataType::LargeList(element)) => {
                self.out.push(node);
                if let DataType::Struct(child) = element.data_type()
                    && let Some(middle) = self.list_group(parts, element.name())
                {
                    parts.push(middle);
                    parts.push(element.name().clone());
                    self.node(child, parts, format!("{path}[*]"));
                    parts.pop();
                    parts.pop();
                }
            }
            Some(_) => {
                node.typed_leaf = self.leaf(parts);
                self.out.push(node);
            }
            None => self.out.push(node),
        }
        parts.pop();
    }

    /// The name of the repeated group between a list and its element
    /// (`list` in the standard layout), as this file names it.
    fn list_group(&self, parts: &[String], element: &str) -> Option<String> {
        self.descr.columns().iter().find_map(|c| {
            let p = c.path().parts();
            (p.len() > parts.len() + 1
                && p[..parts.len()] == *parts
                && p[parts.len() + 1] == element)
                .then(|| p[parts.len()].clone())
        })
    }
}

/// A type whose Parquet statistics order matches its values' (no NaN).
pub(crate) fn exact_order(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Boolean
            | DataType::Utf8
            | DataType::Utf8View
            | DataType::LargeUtf8
            | DataType::Date32
            | DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Timestamp(TimeUnit::Microsecond | TimeUnit::Nanosecond, _)
    )
}

/// What one file says of one node.
#[derive(Debug, Clone)]
struct NodeStats {
    type_name: String,
    row_groups: i64,
    rows: i64,
    null_count: Option<i64>,
    residual_empty: Option<bool>,
    bounds: Option<(ScalarValue, ScalarValue)>,
    compressed_bytes: i64,
}

fn node_stats(node: &ShreddedNode, metadata: &ParquetMetaData) -> Result<NodeStats> {
    let row_groups = metadata.row_groups();
    let null_count = |leaf: usize| -> Option<i64> {
        row_groups
            .iter()
            .map(|rg| {
                rg.column(leaf)
                    .statistics()
                    .and_then(parquet::file::statistics::Statistics::null_count_opt)
                    .map(|n| n as i64)
            })
            .sum()
    };
    let residual_empty = match node.value_leaf {
        None => Some(true),
        Some(leaf) => row_groups
            .iter()
            .map(|rg| {
                let chunk = rg.column(leaf);
                chunk
                    .statistics()
                    .and_then(parquet::file::statistics::Statistics::null_count_opt)
                    .map(|n| n as i64 == chunk.num_values())
            })
            .try_fold(true, |all, one| one.map(|b| all && b)),
    };
    let bounds = match (node.typed_leaf, &node.typed_type) {
        (Some(leaf), Some(t)) if exact_order(t) => leaf_bounds(metadata, leaf, t)?,
        _ => None,
    };
    let compressed_bytes = [node.typed_leaf, node.value_leaf]
        .into_iter()
        .flatten()
        .map(|leaf| {
            row_groups
                .iter()
                .map(|rg| rg.column(leaf).compressed_size())
                .sum::<i64>()
        })
        .sum();
    Ok(NodeStats {
        type_name: node.type_name(),
        row_groups: row_groups.len() as i64,
        rows: metadata.file_metadata().num_rows(),
        null_count: node.typed_leaf.and_then(null_count),
        residual_empty,
        bounds,
        compressed_bytes,
    })
}

/// The least minimum and greatest maximum of a leaf over the row groups that
/// hold values, if every such row group has exact statistics.
fn leaf_bounds(
    metadata: &ParquetMetaData,
    leaf: usize,
    t: &DataType,
) -> Result<Option<(ScalarValue, ScalarValue)>> {
    let field = Field::new("typed_value", t.clone(), true);
    let descr = metadata.file_metadata().schema_descr();
    let converter = StatisticsConverter::from_column_index(leaf, &field, descr)?;
    let row_groups = metadata.row_groups();
    let mins = converter.row_group_mins(row_groups.iter())?;
    let maxes = converter.row_group_maxes(row_groups.iter())?;
    let mut out: Option<(ScalarValue, ScalarValue)> = None;
    for (r, rg) in row_groups.iter().enumerate() {
        let chunk = rg.column(leaf);
        let Some(stats) = chunk.statistics() else {
            return Ok(None);
        };
        if stats.null_count_opt().map(|n| n as i64) == Some(chunk.num_values()) {
            continue;
        }
        if mins.is_null(r) || maxes.is_null(r) || !stats.min_is_exact() || !stats.max_is_exact() {
            return Ok(None);
        }
        let lo = ScalarValue::try_from_array(&mins, r)?;
        let hi = ScalarValue::try_from_array(&maxes, r)?;
        out = Some(merge_bounds(out, (lo, hi)));
    }
    Ok(out)
}

fn merge_bounds(
    a: Option<(ScalarValue, ScalarValue)>,
    b: (ScalarValue, ScalarValue),
) -> (ScalarValue, ScalarValue) {
    use std::cmp::Ordering::{Greater, Less};
    match a {
        None => b,
        Some((lo, hi)) => (
            if lo.partial_cmp(&b.0) == Some(Greater) {
                b.0
            } else {
                lo
            },
            if hi.partial_cmp(&b.1) == Some(Less) {
                b.1
            } else {
                hi
            },
        ),
    }
}

/// What all files say of one (column, path).
#[derive(Debug)]
struct PathSummary {
    column: String,
    path: String,
    types: BTreeSet<String>,
    files: i64,
    stats: NodeStats,
    /// Whether every file had bounds of the same type.
    bounded: bool,
}

impl PathSummary {
    fn add(&mut self, s: NodeStats) {
        self.files += 1;
        self.types.insert(s.type_name.clone());
        let total = &mut self.stats;
        total.row_groups += s.row_groups;
        total.rows += s.rows;
        total.null_count = total.null_count.zip(s.null_count).map(|(a, b)| a + b);
        total.residual_empty = total
            .residual_empty
            .zip(s.residual_empty)
            .map(|(a, b)| a && b);
        total.compressed_bytes += s.compressed_bytes;
        match (self.bounded, total.bounds.take(), s.bounds) {
            (true, Some(a), Some(b)) if a.0.data_type() == b.0.data_type() => {
                total.bounds = Some(merge_bounds(Some(a), b));
            }
            // A file whose leaf holds no value adds no bounds.
            (true, a, None) if s.null_count == Some(s.rows) => total.bounds = a,
            _ => self.bounded = false,
        }
    }
}

/// Reads one file's footer: its row groups and shredded nodes.
pub(crate) fn read_footer(
    path: &std::path::Path,
) -> Result<(Arc<ParquetMetaData>, Vec<ShreddedNode>)> {
    let name = path.display().to_string();
    let fail = |e: &dyn std::fmt::Display| {
        plan_datafusion_err!("{VARIANT_PATHS}: cannot read the Parquet footer of {name}: {e}")
    };
    let size = std::fs::metadata(path).map_err(|e| fail(&e))?.len();
    let handle = File::open(path).map_err(|e| fail(&e))?;
    let reader = SerializedFileReader::new(handle).map_err(|e| fail(&e))?;
    let metadata = Arc::new(reader.metadata().clone());
    super::check_parquet_metadata(&name, size, &metadata).map_err(|e| fail(&e))?;
    let file_metadata = metadata.file_metadata();
    let schema = parquet::arrow::parquet_to_arrow_schema(
        file_metadata.schema_descr(),
        file_metadata.key_value_metadata(),
    )
    .map_err(|e| fail(&e))?;
    let nodes = shredded_nodes(&schema, file_metadata.schema_descr());
    Ok((metadata, nodes))
}

/// One output row.
struct OutRow {
    column: String,
    path: String,
    types: String,
    files: i64,
    row_groups: Option<i64>,
    rows: i64,
    null_count: Option<i64>,
    residual_empty: Option<bool>,
    min: Option<String>,
    max: Option<String>,
    compressed_bytes: Option<i64>,
    sampled: bool,
}

fn format_scalar(value: &ScalarValue) -> Result<String> {
    let array = value.to_array()?;
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(array.as_ref(), &options)?;
    Ok(formatter.value(0).to_string())
}

impl OutRow {
    fn of_summary(s: PathSummary) -> Result<Self> {
        let (min, max) = match s.stats.bounds.as_ref().filter(|_| s.bounded) {
            Some((lo, hi)) => (Some(format_scalar(lo)?), Some(format_scalar(hi)?)),
            None => (None, None),
        };
        Ok(Self {
            column: s.column,
            path: s.path,
            types: s.types.into_iter().collect::<Vec<_>>().join(" | "),
            files: s.files,
            row_groups: Some(s.stats.row_groups),
            rows: s.stats.rows,
            null_count: s.stats.null_count,
            residual_empty: s.stats.residual_empty,
            min,
            max,
            compressed_bytes: Some(s.stats.compressed_bytes),
            sampled: false,
        })
    }
}

/// What the sampled rows of all files say of one (column, path).
struct SampledPath {
    schema: VariantSchema,
    files: BTreeSet<usize>,
    rows: i64,
}

/// Reads the first `limit` rows of `column` (a dotted path to a VARIANT
/// column) of a Parquet file, reassembled from its shredding, and calls `row`
/// with each row's number and bytes (SQL NULL rows are skipped). Errors name
/// `function`, the column and the file.
pub(crate) fn for_each_sampled_row(
    function: &str,
    path: &std::path::Path,
    column: &str,
    limit: usize,
    mut row: impl FnMut(usize, &[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    use parquet::arrow::ProjectionMask;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let name = path.display().to_string();
    let fail = |e: &dyn std::fmt::Display| {
        plan_datafusion_err!("{function}: cannot sample {column} of {name}: {e}")
    };
    let parts: Vec<String> = column.split('.').map(str::to_string).collect();
    let handle = File::open(path).map_err(|e| fail(&e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(handle).map_err(|e| fail(&e))?;
    let descr = builder.metadata().file_metadata().schema_descr_ptr();
    let leaves: Vec<usize> = descr
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.path().parts().starts_with(&parts))
        .map(|(i, _)| i)
        .collect();
    if leaves.is_empty() {
        return Err(fail(&"the column is not in the file"));
    }
    let reader = builder
        .with_projection(ProjectionMask::leaves(&descr, leaves))
        .with_limit(limit)
        .with_batch_size(limit.clamp(1, 8192))
        .build()
        .map_err(|e| fail(&e))?;
    let mut seen = 0usize;
    for batch in reader {
        let batch = batch.map_err(|e| fail(&e))?;
        let Some(mut array) = batch.column_by_name(&parts[0]).cloned() else {
            return Err(fail(&"the column is not in the file"));
        };
        for p in &parts[1..] {
            let next = array
                .as_any()
                .downcast_ref::<arrow::array::StructArray>()
                .and_then(|s| s.column_by_name(p).cloned());
            array = next.ok_or_else(|| fail(&"the column is not in the file"))?;
        }
        let input = crate::array::VariantInput::try_new(&array).map_err(|e| fail(&e))?;
        for i in 0..input.len().min(limit - seen) {
            if let Some((metadata, value)) = input.get(i) {
                row(seen + i, metadata, value).map_err(|e| fail(&e))?;
            }
        }
        seen += input.len();
        if seen >= limit {
            break;
        }
    }
    Ok(())
}

/// Adds every path each of the first `limit` rows of `column` of a file holds
/// to `out`.
fn sample_file(
    path: &std::path::Path,
    file_index: usize,
    column: &str,
    limit: usize,
    out: &mut HashMap<String, SampledPath>,
) -> Result<()> {
    for_each_sampled_row(VARIANT_PATHS, path, column, limit, |i, metadata, value| {
        let v = crate::variant::validate::decode(metadata, value)
            .map_err(|e| plan_datafusion_err!("row {i}: {e}"))?;
        let mut row_paths = HashMap::new();
        flatten(schema_of(&v), "$".to_string(), &mut row_paths);
        for (p, schema) in row_paths {
            let entry = out.entry(p).or_insert_with(|| SampledPath {
                schema: VariantSchema::Void,
                files: BTreeSet::new(),
                rows: 0,
            });
            entry.schema = merge(
                std::mem::replace(&mut entry.schema, VariantSchema::Void),
                schema,
            );
            entry.files.insert(file_index);
            entry.rows += 1;
        }
        Ok(())
    })
}

/// Every path of one value's schema, with the schema found there.
fn flatten(schema: VariantSchema, path: String, out: &mut HashMap<String, VariantSchema>) {
    match &schema {
        VariantSchema::Object(fields) => {
            for (k, v) in fields {
                let step = path_to_string(&[PathSegment::Key(k.clone())]);
                flatten(v.clone(), format!("{path}{}", &step[1..]), out);
            }
        }
        VariantSchema::Array(element) if **element != VariantSchema::Void => {
            flatten((**element).clone(), format!("{path}[*]"), out);
        }
        _ => {}
    }
    out.insert(path, schema);
}

/// The `type` of a sampled path: `OBJECT`, `ARRAY`, or the merged type.
fn sampled_type(schema: &VariantSchema) -> String {
    match schema {
        VariantSchema::Object(_) => "OBJECT".to_string(),
        VariantSchema::Array(_) => "ARRAY".to_string(),
        other => other.to_string(),
    }
}

impl VariantPaths {
    /// The table for a list of Parquet files, sampling `sample` rows of the
    /// files whose residuals hold values (see the module docs).
    ///
    /// # Errors
    /// When a file is not readable Parquet, or holds no VARIANT column.
    pub fn table_of_files(&self, paths: &[PathBuf], sample: Option<usize>) -> Result<MemTable> {
        let mut order: Vec<PathSummary> = Vec::new();
        let mut index: HashMap<(String, String), usize> = HashMap::new();
        // Per column, the sampled paths.
        let mut sampled: Vec<(String, HashMap<String, SampledPath>)> = Vec::new();
        for (file_index, path) in paths.iter().enumerate() {
            let (metadata, nodes) = read_footer(path)?;
            let mut residual_columns: Vec<String> = Vec::new();
            for node in &nodes {
                let stats = node_stats(node, &metadata).map_err(|e| {
                    plan_datafusion_err!(
                        "{VARIANT_PATHS}: statistics of {} at {} in {}: {e}",
                        node.column,
                        node.path,
                        path.display()
                    )
                })?;
                if stats.residual_empty != Some(true) && !residual_columns.contains(&node.column) {
                    residual_columns.push(node.column.clone());
                }
                let key = (node.column.clone(), node.path.clone());
                match index.get(&key) {
                    Some(&i) => order[i].add(stats),
                    None => {
                        index.insert(key, order.len());
                        order.push(PathSummary {
                            column: node.column.clone(),
                            path: node.path.clone(),
                            types: BTreeSet::from([stats.type_name.clone()]),
                            files: 1,
                            bounded: stats.bounds.is_some() || stats.null_count == Some(stats.rows),
                            stats,
                        });
                    }
                }
            }
            if let Some(limit) = sample.filter(|&n| n > 0) {
                for column in residual_columns {
                    let i = match sampled.iter().position(|(c, _)| *c == column) {
                        Some(i) => i,
                        None => {
                            sampled.push((column.clone(), HashMap::new()));
                            sampled.len() - 1
                        }
                    };
                    crate::boundary::guard(VARIANT_PATHS, || {
                        sample_file(path, file_index, &column, limit, &mut sampled[i].1)
                    })?;
                }
            }
        }
        if order.is_empty() && !paths.is_empty() {
            return plan_err!(
                "{VARIANT_PATHS}: no VARIANT column in {} file(s) (first: {})",
                paths.len(),
                paths[0].display()
            );
        }
        let mut rows = order
            .into_iter()
            .map(OutRow::of_summary)
            .collect::<Result<Vec<_>>>()?;
        for (column, found) in sampled {
            let mut found: Vec<_> = found
                .into_iter()
                .filter(|(p, _)| !index.contains_key(&(column.clone(), p.clone())))
                .collect();
            found.sort_by(|a, b| a.0.cmp(&b.0));
            for (path, s) in found {
                rows.push(OutRow {
                    column: column.clone(),
                    path,
                    types: sampled_type(&s.schema),
                    files: s.files.len() as i64,
                    row_groups: None,
                    rows: s.rows,
                    null_count: None,
                    residual_empty: None,
                    min: None,
                    max: None,
                    compressed_bytes: None,
                    sampled: true,
                });
            }
        }
        let schema = variant_paths_schema();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.column.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.path.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.types.as_str()),
            )),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.files))),
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.row_groups).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.rows))),
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.null_count).collect::<Vec<_>>(),
            )),
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.residual_empty).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.min.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.max.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.compressed_bytes).collect::<Vec<_>>(),
            )),
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.sampled).collect::<Vec<_>>(),
            )),
        ];
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        MemTable::try_new(schema, vec![vec![batch]])
    }
}

/// The arguments: the path or table, and the optional number of rows to sample.
pub(crate) fn arguments(
    exprs: &[datafusion::logical_expr::Expr],
) -> Result<(String, Option<usize>)> {
    use datafusion::logical_expr::Expr;
    match exprs {
        [path] => Ok((
            files::path_argument(VARIANT_PATHS, std::slice::from_ref(path))?,
            None,
        )),
        [path, sample] => {
            let path = files::path_argument(VARIANT_PATHS, std::slice::from_ref(path))?;
            let n = match sample {
                Expr::Literal(v, _) => match v {
                    ScalarValue::Int8(Some(n)) => Some(i64::from(*n)),
                    ScalarValue::Int16(Some(n)) => Some(i64::from(*n)),
                    ScalarValue::Int32(Some(n)) => Some(i64::from(*n)),
                    ScalarValue::Int64(Some(n)) => Some(*n),
                    ScalarValue::UInt8(Some(n)) => Some(i64::from(*n)),
                    ScalarValue::UInt16(Some(n)) => Some(i64::from(*n)),
                    ScalarValue::UInt32(Some(n)) => Some(i64::from(*n)),
                    ScalarValue::UInt64(Some(n)) => i64::try_from(*n).ok(),
                    _ => None,
                },
                _ => None,
            };
            match n.and_then(|n| usize::try_from(n).ok()) {
                Some(n) => Ok((path, Some(n))),
                None => plan_err!(
                    "{VARIANT_PATHS}: sample must be a non-negative integer literal, got {sample}"
                ),
            }
        }
        _ => plan_err!(
            "{VARIANT_PATHS} expects a path or table and an optional sample size, got {} arguments",
            exprs.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{VariantColumnBuilder, is_variant_field};
    use crate::shredding::{shred, typed_value_from_ddl};
    use crate::variant::json::{JsonParseOptions, JsonToVariant};
    use crate::variant::storage::variant_extension_metadata;

    fn nodes_of(ddl: &str) -> Vec<(String, String, bool, bool)> {
        let mut b = VariantColumnBuilder::new(1);
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        p.parse("{}").unwrap();
        b.append(p.metadata(), p.value());
        let column: ArrayRef = b.finish();
        let shredded = shred(&column, &typed_value_from_ddl(ddl).unwrap()).unwrap();
        let field = Field::new("v", shredded.data_type().clone(), true)
            .with_metadata(variant_extension_metadata());
        let schema = Schema::new(vec![field]);
        assert!(is_variant_field(schema.field(0)));
        let descr = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&schema)
            .unwrap();
        shredded_nodes(&schema, &descr)
            .into_iter()
            .map(|n| {
                let t = n.type_name();
                (n.path, t, n.typed_leaf.is_some(), n.value_leaf.is_some())
            })
            .collect()
    }

    #[test]
    fn nodes_cover_objects_arrays_and_primitives() {
        let nodes = nodes_of("STRUCT<a: BIGINT, `b c`: STRUCT<d: STRING>, tags: ARRAY<STRING>>");
        let expected = [
            ("$", "OBJECT", false, true),
            ("$.a", "BIGINT", true, true),
            ("$.b c", "OBJECT", false, true),
            ("$.b c.d", "STRING", true, true),
            ("$.tags", "ARRAY", false, true),
            ("$.tags[*]", "STRING", true, true),
        ];
        assert_eq!(
            nodes,
            expected
                .iter()
                .map(|(p, t, a, b)| (p.to_string(), t.to_string(), *a, *b))
                .collect::<Vec<_>>()
        );
    }
}
