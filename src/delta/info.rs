//! `delta_table_info('location' [, version])`: what a Delta table is, from its
//! log alone (no data file is opened), the way Databricks' `DESCRIBE DETAIL`
//! answers it — including for tables this crate refuses to read, with the
//! reason.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::common::Result<()> {
//! let ctx = df_variant::variant_context();
//! let dir = std::env::temp_dir().join(format!("df_variant_info_doc_{}", std::process::id()));
//! ctx.sql(&format!(
//!     "COPY (SELECT 1 AS id, parse_json('{{\"a\":1}}') AS v) TO '{}' STORED AS DELTA \
//!      OPTIONS ('delta.enableVariantShredding' 'true')", dir.display())).await?.collect().await?;
//! let batches = ctx.sql(&format!(
//!     "SELECT version, num_files, reader_features, variant_columns[1]['name'] AS v, readable \
//!      FROM delta_table_info('{}')", dir.display())).await?.collect().await?;
//! let text = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| 0       | 1         | [variantType, variantShredding] | v | true     |"), "{text}");
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, BooleanBuilder, Int32Array, Int64Array, ListArray, ListBuilder,
    MapBuilder, RecordBatch, StringArray, StringBuilder, StructArray,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl};
use datafusion::common::Result;
use datafusion::datasource::{MemTable, TableProvider};
use serde_json::Value;

use super::log::{TableSnapshot, describe_snapshot, table_url};
use super::stats::bounds_of_stats;
use super::table::{location_and_version, snapshot_blocking};
use crate::variant::path::{PathSegment, path_to_string};

/// The name of [`DeltaTableInfo`].
pub const DELTA_TABLE_INFO: &str = "delta_table_info";

/// `delta_table_info('location' [, version])`.
#[derive(Debug, Default)]
pub struct DeltaTableInfo;

fn strings() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

fn variant_column_fields() -> Fields {
    Fields::from(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("shredding_enabled", DataType::Boolean, false),
        Field::new("paths_with_bounds", strings(), false),
    ])
}

/// The result's columns.
pub fn info_schema() -> SchemaRef {
    let map = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new())
        .finish()
        .data_type()
        .clone();
    Arc::new(Schema::new(vec![
        Field::new("location", DataType::Utf8, false),
        Field::new("version", DataType::Int64, false),
        Field::new("min_reader_version", DataType::Int32, false),
        Field::new("min_writer_version", DataType::Int32, false),
        Field::new("reader_features", strings(), false),
        Field::new("writer_features", strings(), false),
        Field::new("properties", map, false),
        Field::new("partition_columns", strings(), false),
        Field::new("column_mapping", DataType::Utf8, false),
        Field::new("num_files", DataType::Int64, false),
        Field::new("size_in_bytes", DataType::Int64, false),
        Field::new("num_records", DataType::Int64, true),
        Field::new("deleted_rows", DataType::Int64, false),
        Field::new("files_with_deletion_vectors", DataType::Int64, false),
        Field::new(
            "variant_columns",
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(variant_column_fields()),
                true,
            ))),
            false,
        ),
        Field::new("readable", DataType::Boolean, false),
        Field::new("writable", DataType::Boolean, false),
        Field::new("refused", DataType::Utf8, true),
    ]))
}

fn string_list(items: &[String]) -> ListBuilder<StringBuilder> {
    let mut b = ListBuilder::new(StringBuilder::new());
    for i in items {
        b.values().append_value(i);
    }
    b.append(true);
    b
}

/// The one-row description of `t`.
pub fn describe(t: &TableSnapshot) -> Result<RecordBatch> {
    let mut properties = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    let mut keys: Vec<(&String, &String)> = t.configuration.iter().collect();
    keys.sort();
    for (k, v) in keys {
        properties.keys().append_value(k);
        properties.values().append_value(v);
    }
    properties.append(true)?;
    let mapping = t
        .configuration
        .get("delta.columnMapping.mode")
        .map_or_else(|| "none".to_string(), |m| m.to_ascii_lowercase());
    let num_records: Option<i64> = t
        .files
        .iter()
        .map(|f| {
            let stats: Value = serde_json::from_str(f.stats.as_deref()?).ok()?;
            stats.get("numRecords")?.as_i64()
        })
        .sum();
    // Variant columns: whether new files shred, and the paths whose bounds the
    // log holds (in any file).
    let variant = t.variant_columns();
    let mut names = StringBuilder::new();
    let mut enabled = BooleanBuilder::new();
    let mut paths = ListBuilder::new(StringBuilder::new());
    for column in &variant {
        let physical = t.physical_name(column).to_string();
        let mut found: BTreeSet<String> = BTreeSet::new();
        for f in &t.files {
            if let Some(stats) = &f.stats {
                let bounds = bounds_of_stats(stats, std::slice::from_ref(&physical));
                found.extend(bounds.paths.keys().map(|(_, keys)| {
                    let segments: Vec<PathSegment> =
                        keys.iter().cloned().map(PathSegment::Key).collect();
                    path_to_string(&segments)
                }));
            }
        }
        names.append_value(column);
        enabled.append_value(t.shredding_enabled());
        for p in found {
            paths.values().append_value(p);
        }
        paths.append(true);
    }
    let entries = StructArray::try_new(
        variant_column_fields(),
        vec![
            Arc::new(names.finish()) as ArrayRef,
            Arc::new(enabled.finish()),
            Arc::new(paths.finish()),
        ],
        None,
    )?;
    let variant_columns = ListArray::try_new(
        Arc::new(Field::new(
            "item",
            DataType::Struct(variant_column_fields()),
            true,
        )),
        OffsetBuffer::from_lengths([variant.len()]),
        Arc::new(entries),
        None,
    )?;
    let read = t.check_readable().and_then(|()| {
        if t.column_mapping() {
            super::schema::physical_names(&t.schema_string).map(|_| ())
        } else {
            Ok(())
        }
    });
    let write = read
        .as_ref()
        .map_err(|_| ())
        .ok()
        .map(|()| t.check_writable());
    let refused = match (&read, &write) {
        (Err(e), _) | (Ok(()), Some(Err(e))) => Some(match e {
            datafusion::common::DataFusionError::Plan(m) => m.clone(),
            other => other.strip_backtrace(),
        }),
        _ => None,
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![t.url.to_string()])),
        Arc::new(Int64Array::from(vec![
            i64::try_from(t.version).unwrap_or(i64::MAX),
        ])),
        Arc::new(Int32Array::from(vec![t.min_reader_version])),
        Arc::new(Int32Array::from(vec![t.min_writer_version])),
        Arc::new(string_list(&t.reader_features).finish()),
        Arc::new(string_list(&t.writer_features).finish()),
        Arc::new(properties.finish()),
        Arc::new(string_list(&t.partition_columns).finish()),
        Arc::new(StringArray::from(vec![mapping])),
        Arc::new(Int64Array::from(vec![t.files.len() as i64])),
        Arc::new(Int64Array::from(vec![
            t.files.iter().map(|f| f.size as i64).sum::<i64>(),
        ])),
        Arc::new(Int64Array::from(vec![num_records])),
        Arc::new(Int64Array::from(vec![
            t.files
                .iter()
                .filter_map(|f| f.deleted_count)
                .map(|n| n as i64)
                .sum::<i64>(),
        ])),
        Arc::new(Int64Array::from(vec![
            t.files.iter().filter(|f| f.deleted_count.is_some()).count() as i64,
        ])),
        Arc::new(variant_columns),
        Arc::new(BooleanArray::from(vec![read.is_ok()])),
        Arc::new(BooleanArray::from(vec![matches!(write, Some(Ok(())))])),
        Arc::new(StringArray::from(vec![refused])),
    ];
    Ok(RecordBatch::try_new(info_schema(), columns)?)
}

impl TableFunctionImpl for DeltaTableInfo {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let (location, version) = location_and_version(DELTA_TABLE_INFO, args.exprs())?;
        let url = table_url(&location)?;
        let snapshot = snapshot_blocking(args.session(), &url, version, describe_snapshot)?;
        let batch = describe(&snapshot)?;
        Ok(Arc::new(MemTable::try_new(
            info_schema(),
            vec![vec![batch]],
        )?))
    }
}
