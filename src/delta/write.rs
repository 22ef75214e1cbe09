//! Appends to Delta tables (and creating them): Parquet files written with the
//! crate's Variant writer, then one atomic commit.
//!
//! - New tables get protocol (3, 7) with `variantType` in both feature lists when
//!   they have a VARIANT column, `"variant"` in the schema string, and — with
//!   `delta.enableVariantShredding = true` — the shredding feature in both lists
//!   (`variantShredding`, or `variantShredding-preview` when the table property
//!   `delta.feature.variantShredding-preview = supported` asks for the name Delta
//!   4.0 readers know).
//! - Files are shredded only when the table enables shredding (otherwise even a
//!   shredding-capable table gets unshredded files, as the protocol requires);
//!   VARIANT bytes are checked before anything is written.
//! - Each `add` carries `numRecords`, `nullCount` (VARIANT columns included) and
//!   `minValues`/`maxValues` of primitive columns and, on shredding-enabled
//!   tables, the per-path Variant bounds (see `stats.rs`).
//! - The commit is `put-if-absent` of `_delta_log/<version>.json`. If another
//!   writer took that version first, the commits in between are read: a blind
//!   append after other appends retries at the next version; after a protocol or
//!   metadata change it fails with a conflict error. A failed write deletes every
//!   file it wrote: all or nothing.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, UInt32Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::common::config::TableParquetOptions;
use datafusion::common::{Result, exec_datafusion_err, plan_datafusion_err, plan_err};
use datafusion::datasource::sink::DataSink;
use datafusion::execution::TaskContext;
use datafusion::object_store::path::Path;
use datafusion::object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, SendableRecordBatchStream};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use url::Url;

use super::log::{
    TableSnapshot, blocking, load_snapshot, object_store_url, store_for, store_path, table_exists,
};
use super::schema::{schema_string, writable_type};
use super::stats::file_stats;
use crate::array::is_variant_field;
use crate::config::{ShreddingMode, VariantOptions};
use crate::parquet::{FilePlan, WrittenFile, check_written_variants, write_file};

/// The GA and preview names of the shredding feature.
const SHREDDING: &str = "variantShredding";
const SHREDDING_PREVIEW: &str = "variantShredding-preview";

/// Table properties this writer knows, by their canonical spelling (SQL option
/// keys arrive lower-cased).
const KNOWN_PROPERTIES: &[&str] = &[
    "delta.enableVariantShredding",
    "delta.enableDeletionVectors",
    "delta.appendOnly",
    "delta.checkpointInterval",
    "delta.logRetentionDuration",
    "delta.deletedFileRetentionDuration",
    "delta.dataSkippingNumIndexedCols",
    "delta.dataSkippingStatsColumns",
    "delta.checkpoint.writeStatsAsJson",
    "delta.checkpoint.writeStatsAsStruct",
    "delta.feature.variantType",
    "delta.feature.variantType-preview",
    "delta.feature.variantShredding",
    "delta.feature.variantShredding-preview",
];

/// The canonical spelling of a `delta.*` property key; unknown keys are refused
/// (a misspelt property would silently do nothing).
pub fn canonical_property(key: &str) -> Result<&'static str> {
    KNOWN_PROPERTIES
        .iter()
        .find(|k| k.eq_ignore_ascii_case(key))
        .copied()
        .ok_or_else(|| {
            plan_datafusion_err!(
                "unknown or unsupported Delta table property '{key}'; known: {}",
                KNOWN_PROPERTIES.join(", ")
            )
        })
}

/// A table to create: protocol and metadata of its first commit.
#[derive(Debug, Clone)]
pub struct NewTable {
    pub(crate) schema: SchemaRef,
    pub(crate) partition_columns: Vec<String>,
    pub(crate) configuration: HashMap<String, String>,
    pub(crate) reader_features: Vec<String>,
    pub(crate) writer_features: Vec<String>,
}

impl NewTable {
    /// Checks the definition: known partition columns that are not VARIANT,
    /// types Delta has. `configuration` are `delta.*` table properties;
    /// `delta.feature.<name> = supported` adds a feature instead of a property.
    pub fn new(
        schema: &Schema,
        partition_columns: Vec<String>,
        configuration: HashMap<String, String>,
    ) -> Result<Self> {
        for c in &partition_columns {
            let Ok(f) = schema.field_with_name(c) else {
                return plan_err!("partition column '{c}' is not a column of the table");
            };
            if is_variant_field(f) {
                return plan_err!(
                    "VARIANT column '{c}' cannot be a partition column of a Delta table"
                );
            }
            if matches!(
                f.data_type(),
                DataType::Struct(_) | DataType::List(_) | DataType::Map(..)
            ) {
                return plan_err!(
                    "column '{c}' of type {} cannot be a partition column",
                    f.data_type()
                );
            }
        }
        // The schema string must be expressible (fails on types Delta lacks).
        schema_string(schema)?;
        let has_variant = schema_has_variant(schema);
        let mut features: Vec<String> = Vec::new();
        let mut properties = HashMap::new();
        for (k, v) in configuration {
            let k = canonical_property(&k)?.to_string();
            if let Some(name) = k.strip_prefix("delta.feature.") {
                if !v.eq_ignore_ascii_case("supported") && !v.eq_ignore_ascii_case("enabled") {
                    return plan_err!("table property '{k}' must be 'supported', got '{v}'");
                }
                match name {
                    "variantType" | "variantType-preview" | SHREDDING | SHREDDING_PREVIEW => {
                        features.push(name.to_string());
                    }
                    other => {
                        return plan_err!(
                            "this writer cannot add the Delta table feature '{other}'"
                        );
                    }
                }
            } else {
                properties.insert(k, v);
            }
        }
        let shredding = properties
            .get("delta.enableVariantShredding")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if shredding
            && !features
                .iter()
                .any(|f| f == SHREDDING || f == SHREDDING_PREVIEW)
        {
            features.push(SHREDDING.to_string());
        }
        // Deletion vectors need their feature (we read them; we never write any).
        if properties
            .get("delta.enableDeletionVectors")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            && !features.iter().any(|f| f == "deletionVectors")
        {
            features.push("deletionVectors".to_string());
        }
        let needs_variant =
            has_variant || features.iter().any(|f| f.starts_with("variantShredding"));
        if needs_variant && !features.iter().any(|f| f.starts_with("variantType")) {
            features.insert(0, "variantType".to_string());
        }
        Ok(Self {
            schema: Arc::new(schema.clone()),
            partition_columns,
            configuration: properties,
            reader_features: features.clone(),
            writer_features: features,
        })
    }

    fn actions(&self) -> Result<Vec<Value>> {
        let protocol = if self.reader_features.is_empty() {
            json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
        } else {
            json!({"protocol": {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": self.reader_features,
                "writerFeatures": self.writer_features,
            }})
        };
        let metadata = json!({"metaData": {
            "id": uuid(),
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema_string(&self.schema)?,
            "partitionColumns": self.partition_columns,
            "configuration": self.configuration,
            "createdTime": now_millis(),
        }});
        Ok(vec![protocol, metadata])
    }

    /// Commits version 0 with no files.
    pub async fn create_empty(&self, store: &Arc<dyn ObjectStore>, url: &Url) -> Result<()> {
        let mut actions = vec![commit_info("CREATE TABLE", &self.partition_columns)];
        actions.extend(self.actions()?);
        let path = commit_path(url, 0)?;
        put_if_absent(store, &path, &actions)
            .await
            .and_then(|done| {
                if done {
                    Ok(())
                } else {
                    plan_err!("a Delta table was created at {url} concurrently")
                }
            })
    }

    fn snapshot_view(&self, url: &Url) -> TableSnapshot {
        TableSnapshot {
            url: url.clone(),
            version: 0,
            schema: Arc::clone(&self.schema),
            schema_string: String::new(),
            table_id: String::new(),
            created_time: None,
            partition_columns: self.partition_columns.clone(),
            configuration: self.configuration.clone(),
            min_reader_version: 3,
            min_writer_version: 7,
            reader_features: self.reader_features.clone(),
            writer_features: self.writer_features.clone(),
            files: Vec::new(),
            physical_names: HashMap::new(),
        }
    }
}

fn schema_has_variant(schema: &Schema) -> bool {
    fn nested(t: &DataType) -> bool {
        match t {
            DataType::Struct(fs) => fs
                .iter()
                .any(|f| is_variant_field(f) || nested(f.data_type())),
            DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
                is_variant_field(f) || nested(f.data_type())
            }
            _ => false,
        }
    }
    schema
        .fields()
        .iter()
        .any(|f| is_variant_field(f) || nested(f.data_type()))
}

pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// A random (version 4) UUID.
fn uuid() -> String {
    let (a, b) = (random_u64(), random_u64());
    let a = (a & 0xffff_ffff_ffff_0fff) | 0x4000;
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

fn commit_info(operation: &str, partition_by: &[String]) -> Value {
    json!({"commitInfo": {
        "timestamp": now_millis(),
        "operation": operation,
        "operationParameters": {"mode": "Append", "partitionBy": serde_json::to_string(partition_by).unwrap_or_default()},
        "isBlindAppend": true,
        "engineInfo": concat!("df-variant/", env!("CARGO_PKG_VERSION")),
    }})
}

fn commit_path(url: &Url, version: u64) -> Result<Path> {
    store_path(url, Some(&format!("_delta_log/{version:020}.json")))
}

/// Writes `actions` as the commit file `path` unless it exists; `false` if it did.
async fn put_if_absent(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    actions: &[Value],
) -> Result<bool> {
    let mut text = String::new();
    for a in actions {
        text.push_str(&a.to_string());
        text.push('\n');
    }
    let options = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    match store.put_opts(path, PutPayload::from(text), options).await {
        Ok(_) => Ok(true),
        Err(datafusion::object_store::Error::AlreadyExists { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Commits `actions` as `version` of the table at `url` (an `ALTER TABLE`, a
/// re-shred); `false` when another commit made that version first, and then
/// the files its `add` actions name (written for it) are deleted.
pub(crate) async fn commit_alteration(
    store: &Arc<dyn ObjectStore>,
    url: &Url,
    version: u64,
    actions: &[Value],
) -> Result<bool> {
    if put_if_absent(store, &commit_path(url, version)?, actions).await? {
        return Ok(true);
    }
    for path in actions
        .iter()
        .filter_map(|a| a.get("add")?.get("path")?.as_str())
    {
        let _ = store.delete(&store_path(url, Some(path))?).await;
    }
    Ok(false)
}

/// Whether commit `version` changed the protocol or the metadata (a conflict for
/// an append planned against an earlier version).
async fn changes_table(store: &Arc<dyn ObjectStore>, url: &Url, version: u64) -> Result<bool> {
    let bytes = store
        .get(&commit_path(url, version)?)
        .await?
        .bytes()
        .await?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.lines().any(|line| {
        serde_json::from_str::<Value>(line)
            .ok()
            .is_some_and(|v| v.get("protocol").is_some() || v.get("metaData").is_some())
    }))
}

/// Escapes a partition value for a directory name (Hive style).
fn escape_partition(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        if c.is_control() || "\"#%'*/:=?\\\u{7f}{[]^".contains(c) {
            for b in c.to_string().bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Percent-encodes a relative path for the log (Delta paths are URIs).
fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/=".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Appends to (or creates) the Delta table at a URL; see the module docs.
#[derive(Debug)]
pub struct DeltaSink {
    url: Url,
    schema: SchemaRef,
    /// The table to create when there is none at `url` (COPY); `None`: the table
    /// must exist (INSERT INTO).
    create: Option<NewTable>,
}

impl DeltaSink {
    /// A sink for rows of `schema` (the table's columns, in its order).
    pub fn new(url: Url, schema: SchemaRef, create: Option<NewTable>) -> Self {
        Self {
            url,
            schema,
            create,
        }
    }

    /// Its table URL, row schema and the table to create (for the plan codec).
    pub fn parts(&self) -> (&Url, &SchemaRef, Option<&NewTable>) {
        (&self.url, &self.schema, self.create.as_ref())
    }
}

impl DisplayAs for DeltaSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeltaSink({})", self.url)
    }
}

/// A file written, for its `add` action.
struct Added {
    relative: String,
    path: Path,
    partition_values: Vec<(String, Option<String>)>,
    file: WrittenFile,
}

/// A file being written: its channel, task, and partition values.
struct OpenFile {
    relative: String,
    path: Path,
    partition_values: Vec<(String, Option<String>)>,
    tx: mpsc::Sender<RecordBatch>,
    task: tokio::task::JoinHandle<Result<WrittenFile>>,
}

#[async_trait]
impl DataSink for DeltaSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        mut data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let store = context
            .runtime_env()
            .object_store(object_store_url(&self.url)?)?;
        let url = self.url.clone();
        let exists = table_exists(&store, &url).await?;
        let (table, new) = if exists {
            let s = Arc::clone(&store);
            let u = url.clone();
            let snapshot = blocking(move || load_snapshot(s, &u, None)).await?;
            snapshot.check_writable()?;
            (snapshot, None)
        } else {
            let Some(new) = &self.create else {
                return plan_err!("no Delta table at {url} to insert into");
            };
            (new.snapshot_view(&url), Some(new.clone()))
        };
        // The incoming columns must be the table's, in order.
        let names: Vec<&String> = self.schema.fields().iter().map(|f| f.name()).collect();
        let table_names: Vec<&String> = table.schema.fields().iter().map(|f| f.name()).collect();
        if names != table_names {
            return plan_err!(
                "Delta table {url} has columns {table_names:?}; the rows written have {names:?}"
            );
        }
        let partition_idx: Vec<usize> = table
            .partition_columns
            .iter()
            .map(|c| table.schema.index_of(c))
            .collect::<std::result::Result<_, _>>()?;
        let data_idx: Vec<usize> = (0..self.schema.fields().len())
            .filter(|i| !partition_idx.contains(i))
            .collect();
        let data_fields: Vec<Field> = data_idx
            .iter()
            .map(|&i| {
                let f = table.schema.field(i);
                f.clone().with_data_type(if is_variant_field(f) {
                    self.schema.field(i).data_type().clone()
                } else {
                    writable_type(self.schema.field(i).data_type())
                })
            })
            .collect();
        let file_schema = Arc::new(Schema::new(data_fields));
        let shredding = table.shredding_enabled();
        let options = context
            .session_config()
            .options()
            .extensions
            .get::<VariantOptions>()
            .cloned()
            .unwrap_or_default();
        let mode = if shredding {
            options.mode()
        } else {
            ShreddingMode::Off
        };
        let mut parquet_options = TableParquetOptions::new();
        parquet_options.global = context.session_config().options().execution.parquet.clone();
        let plan = FilePlan::new(
            Arc::clone(&file_schema),
            parquet_options,
            mode,
            &options,
            context
                .session_config()
                .options()
                .execution
                .objectstore_writer_buffer_size,
        )
        .with_pool(Arc::clone(&context.runtime_env().memory_pool));
        let stamp = format!("{:016x}", random_u64());
        let mut open: HashMap<Vec<Option<String>>, OpenFile> = HashMap::new();
        let mut rows_seen = 0usize;
        let result: Result<()> = async {
            while let Some(batch) = data.next().await {
                let batch = batch?;
                for (i, f) in self.schema.fields().iter().enumerate() {
                    if is_variant_field(f) {
                        check_written_variants(batch.column(i), f.name())?;
                    }
                }
                rows_seen += batch.num_rows();
                // Partition keys per row.
                let keys: Vec<ArrayRef> = partition_idx
                    .iter()
                    .map(|&i| arrow::compute::cast(batch.column(i), &DataType::Utf8))
                    .collect::<std::result::Result<_, _>>()?;
                // Rows per partition; an unpartitioned batch goes whole, uncopied.
                let groups: Vec<(Vec<Option<String>>, Option<UInt32Array>)> = if keys.is_empty() {
                    vec![(Vec::new(), None)]
                } else {
                    let mut groups: HashMap<Vec<Option<String>>, Vec<u32>> = HashMap::new();
                    for r in 0..batch.num_rows() {
                        let key = keys
                            .iter()
                            .map(|k| {
                                let k = arrow::array::AsArray::as_string::<i32>(k.as_ref());
                                arrow::array::Array::is_valid(k, r).then(|| k.value(r).to_string())
                            })
                            .collect();
                        groups.entry(key).or_default().push(r as u32);
                    }
                    groups
                        .into_iter()
                        .map(|(k, rows)| (k, Some(UInt32Array::from(rows))))
                        .collect()
                };
                for (key, take) in groups {
                    let columns: Vec<ArrayRef> = data_idx
                        .iter()
                        .zip(file_schema.fields())
                        .map(|(&i, f)| {
                            let col = match &take {
                                Some(take) => arrow::compute::take(batch.column(i), take, None)?,
                                None => Arc::clone(batch.column(i)),
                            };
                            if col.data_type() == f.data_type() {
                                Ok(col)
                            } else {
                                arrow::compute::cast(&col, f.data_type())
                            }
                        })
                        .collect::<std::result::Result<_, _>>()?;
                    let part = RecordBatch::try_new(Arc::clone(&file_schema), columns)?;
                    if !open.contains_key(&key) {
                        let mut dir = String::new();
                        for (c, v) in table.partition_columns.iter().zip(&key) {
                            let v = v
                                .as_deref()
                                .map_or("__HIVE_DEFAULT_PARTITION__".to_string(), escape_partition);
                            dir.push_str(&format!("{}={v}/", escape_partition(c)));
                        }
                        let relative = format!("{dir}part-{:05}-{stamp}.c000.parquet", open.len());
                        let path = store_path(&url, Some(&uri_path(&relative)))?;
                        let (tx, rx) = mpsc::channel(2);
                        let task = tokio::spawn(write_file(
                            rx,
                            Arc::clone(&store),
                            path.clone(),
                            plan.clone(),
                        ));
                        open.insert(
                            key.clone(),
                            OpenFile {
                                relative,
                                path,
                                partition_values: table
                                    .partition_columns
                                    .iter()
                                    .cloned()
                                    .zip(key.iter().cloned())
                                    .collect(),
                                tx,
                                task,
                            },
                        );
                    }
                    let file = open.get(&key).expect("opened above");
                    if file.tx.send(part).await.is_err() {
                        // The writer stopped: its error comes out of the join below.
                        break;
                    }
                }
            }
            Ok(())
        }
        .await;
        // Close every file and collect what was written.
        let mut written = Vec::new();
        let mut failure = result.err();
        let paths: Vec<Path> = open.values().map(|f| f.path.clone()).collect();
        for (_, f) in open {
            drop(f.tx);
            match f.task.await {
                Ok(Ok(file)) => written.push(Added {
                    relative: f.relative,
                    path: f.path,
                    partition_values: f.partition_values,
                    file,
                }),
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(e) => {
                    failure
                        .get_or_insert(exec_datafusion_err!("a Parquet writer task failed: {e}"));
                }
            }
        }
        let cleanup = |store: Arc<dyn ObjectStore>, paths: Vec<Path>| async move {
            for p in paths {
                let _ = store.delete(&p).await;
            }
        };
        if let Some(e) = failure {
            cleanup(Arc::clone(&store), paths).await;
            return Err(e);
        }
        match self
            .commit(&store, &table, new.as_ref(), written, shredding)
            .await
        {
            Ok(()) => Ok(rows_seen as u64),
            Err(e) => {
                cleanup(store, paths).await;
                Err(e)
            }
        }
    }
}

/// What [`rewrite_files`] wrote: the `remove` and `add` actions to commit, and
/// what they hold.
pub(crate) struct Rewritten {
    pub(crate) actions: Vec<Value>,
    pub(crate) rows: usize,
    pub(crate) bytes_before: u64,
    pub(crate) bytes_after: u64,
}

/// Rewrites live `files` of table `t` with the shredding `mode` (`Off` for
/// `DROP FEATURE variantShredding`, a schema for `variant_reshred`): each file
/// is read (its VARIANT columns reassembled), written again beside it, and
/// checked row by row against the old one (`to_json` of every VARIANT column,
/// every other column as it is, SQL NULL and Variant null told apart). Returns
/// the `remove` and `add` actions (`dataChange: false`, with the new files'
/// statistics) to commit; on any failure the new files are deleted and the
/// table is untouched.
pub(crate) async fn rewrite_files(
    ctx: &datafusion::prelude::SessionContext,
    t: &TableSnapshot,
    files: &[&super::log::LogFile],
    mode: ShreddingMode,
) -> Result<Rewritten> {
    let state = ctx.state();
    let store = store_for(&state, &t.url)?;
    let options = state
        .config()
        .options()
        .extensions
        .get::<VariantOptions>()
        .cloned()
        .unwrap_or_default();
    let mut parquet_options = TableParquetOptions::new();
    parquet_options.global = state.config().options().execution.parquet.clone();
    let buffer = state
        .config()
        .options()
        .execution
        .objectstore_writer_buffer_size;
    let stamp = format!("{:016x}", random_u64());
    let shredded = !matches!(mode, ShreddingMode::Off);
    let mut written: Vec<Path> = Vec::new();
    let result: Result<Rewritten> = async {
        let mut out = Rewritten {
            actions: Vec::new(),
            rows: 0,
            bytes_before: 0,
            bytes_after: 0,
        };
        for (n, f) in files.iter().enumerate() {
            if f.deleted_count.is_some() {
                return plan_err!(
                    "{} has a deletion vector; rewriting such a file is not implemented",
                    f.path
                );
            }
            let old_url = t
                .url
                .join(&f.path)
                .map_err(|e| exec_datafusion_err!("bad Delta file path '{}': {e}", f.path))?;
            let old = ctx
                .read_parquet(
                    old_url.as_str(),
                    datafusion::prelude::ParquetReadOptions::default(),
                )
                .await?;
            let batches = old.clone().collect().await?;
            let fields: Vec<Field> = old
                .schema()
                .fields()
                .iter()
                .map(|f| {
                    if is_variant_field(f) {
                        f.as_ref().clone()
                    } else {
                        f.as_ref()
                            .clone()
                            .with_data_type(writable_type(f.data_type()))
                    }
                })
                .collect();
            let file_schema = Arc::new(Schema::new(fields));
            let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
            let relative = if dir.is_empty() {
                format!("part-{n:05}-{stamp}.c000.parquet")
            } else {
                format!("{dir}/part-{n:05}-{stamp}.c000.parquet")
            };
            let path = store_path(&t.url, Some(&relative))?;
            let plan = FilePlan::new(
                Arc::clone(&file_schema),
                parquet_options.clone(),
                mode.clone(),
                &options,
                buffer,
            );
            let (tx, rx) = mpsc::channel(2);
            let task = tokio::spawn(write_file(rx, Arc::clone(&store), path.clone(), plan));
            written.push(path.clone());
            for batch in batches {
                let columns = batch
                    .columns()
                    .iter()
                    .zip(file_schema.fields())
                    .map(|(c, f)| {
                        if c.data_type() == f.data_type() {
                            Ok(Arc::clone(c))
                        } else {
                            arrow::compute::cast(c, f.data_type())
                        }
                    })
                    .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
                if tx
                    .send(RecordBatch::try_new(Arc::clone(&file_schema), columns)?)
                    .await
                    .is_err()
                {
                    break;
                }
            }
            drop(tx);
            let file = task
                .await
                .map_err(|e| exec_datafusion_err!("a Parquet writer task failed: {e}"))??;
            // Every row of the new file is the old one's, in order.
            let new_url = t
                .url
                .join(&relative)
                .map_err(|e| exec_datafusion_err!("bad Delta file path '{relative}': {e}"))?;
            let new = ctx
                .read_parquet(
                    new_url.as_str(),
                    datafusion::prelude::ParquetReadOptions::default(),
                )
                .await?;
            let rows = crate::parquet::reshred::same_rows(&f.path, old, new).await?;
            let meta = store.head(&path).await?;
            out.rows += rows;
            out.bytes_before += f.size;
            out.bytes_after += meta.size;
            let values: serde_json::Map<String, Value> = f
                .partition_values
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().map_or(Value::Null, Value::String)))
                .collect();
            let now = now_millis();
            out.actions.push(json!({"remove": {
                "path": f.path,
                "deletionTimestamp": now,
                "dataChange": false,
                "extendedFileMetadata": true,
                "partitionValues": values,
                "size": f.size,
            }}));
            out.actions.push(json!({"add": {
                "path": uri_path(&relative),
                "partitionValues": values,
                "size": meta.size,
                "modificationTime": meta.last_modified.timestamp_millis(),
                "dataChange": false,
                "stats": file_stats(&file.metadata, &file.schema, shredded)?,
            }}));
        }
        Ok(out)
    }
    .await;
    if result.is_err() {
        for p in written {
            let _ = store.delete(&p).await;
        }
    }
    result
}

impl DeltaSink {
    async fn commit(
        &self,
        store: &Arc<dyn ObjectStore>,
        table: &TableSnapshot,
        new: Option<&NewTable>,
        written: Vec<Added>,
        shredding: bool,
    ) -> Result<()> {
        // Fault injection for the crash test: the data files are written, the
        // log entry that would make them part of the table is not.
        if std::env::var(crate::parquet::commit::FAILPOINT_ENV)
            .is_ok_and(|v| v == "before_delta_commit")
        {
            std::process::abort();
        }
        let url = &self.url;
        let mut actions = vec![commit_info(
            if new.is_some() {
                "CREATE TABLE AS SELECT"
            } else {
                "WRITE"
            },
            &table.partition_columns,
        )];
        if let Some(new) = new {
            actions.extend(new.actions()?);
        }
        for Added {
            relative,
            path,
            partition_values,
            file,
        } in written
        {
            let meta = store.head(&path).await?;
            let stats = file_stats(&file.metadata, &file.schema, shredding)?;
            let values: serde_json::Map<String, Value> = partition_values
                .into_iter()
                .map(|(k, v)| (k, v.map_or(Value::Null, Value::String)))
                .collect();
            actions.push(json!({"add": {
                "path": uri_path(&relative),
                "partitionValues": values,
                "size": meta.size,
                "modificationTime": meta.last_modified.timestamp_millis(),
                "dataChange": true,
                "stats": stats,
            }}));
        }
        let mut version = if new.is_some() { 0 } else { table.version + 1 };
        loop {
            if put_if_absent(store, &commit_path(url, version)?, &actions).await? {
                return Ok(());
            }
            if new.is_some() {
                return Err(plan_datafusion_err!(
                    "a Delta table was created at {url} concurrently; nothing was written"
                ));
            }
            if changes_table(store, url, version).await? {
                return Err(plan_datafusion_err!(
                    "conflict: version {version} of Delta table {url} changed its protocol or metadata while this append ran; nothing was written"
                ));
            }
            version += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::variant_field;

    fn schema() -> Schema {
        Schema::new(vec![
            Arc::new(Field::new("id", DataType::Int64, true)),
            Arc::new(Field::new("p", DataType::Utf8, true)),
            variant_field("v", true),
        ])
    }

    #[test]
    fn protocol_of_new_tables() {
        let t = NewTable::new(&schema(), vec![], HashMap::new()).unwrap();
        let a = t.actions().unwrap();
        assert_eq!(
            a[0]["protocol"],
            json!({"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType"],"writerFeatures":["variantType"]})
        );
        assert!(
            a[1]["metaData"]["schemaString"]
                .as_str()
                .unwrap()
                .contains(r#""type":"variant""#)
        );

        let shred = HashMap::from([(
            "delta.enableVariantShredding".to_string(),
            "true".to_string(),
        )]);
        let t = NewTable::new(&schema(), vec!["p".into()], shred.clone()).unwrap();
        let a = t.actions().unwrap();
        assert_eq!(
            a[0]["protocol"]["readerFeatures"],
            json!(["variantType", "variantShredding"])
        );
        assert_eq!(
            a[0]["protocol"]["writerFeatures"],
            json!(["variantType", "variantShredding"])
        );
        assert_eq!(
            a[1]["metaData"]["configuration"]["delta.enableVariantShredding"],
            json!("true")
        );
        assert_eq!(a[1]["metaData"]["partitionColumns"], json!(["p"]));

        let mut preview = shred;
        preview.insert(
            "delta.feature.variantShredding-preview".into(),
            "supported".into(),
        );
        let t = NewTable::new(&schema(), vec![], preview).unwrap();
        let a = t.actions().unwrap();
        assert_eq!(
            a[0]["protocol"]["readerFeatures"],
            json!(["variantType", "variantShredding-preview"])
        );
        assert!(
            a[1]["metaData"]["configuration"]
                .get("delta.feature.variantShredding-preview")
                .is_none()
        );

        let plain = Schema::new(vec![Field::new("id", DataType::Int64, true)]);
        let t = NewTable::new(&plain, vec![], HashMap::new()).unwrap();
        assert_eq!(
            t.actions().unwrap()[0],
            json!({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})
        );
    }

    #[test]
    fn refuses_variant_partitions_and_unknown_features() {
        let err = NewTable::new(&schema(), vec!["v".into()], HashMap::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("VARIANT column 'v' cannot be a partition column"),
            "{err}"
        );
        let err = NewTable::new(&schema(), vec!["nope".into()], HashMap::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("'nope'"), "{err}");
        let dv = HashMap::from([(
            "delta.feature.deletionVectors".to_string(),
            "supported".to_string(),
        )]);
        let err = NewTable::new(&schema(), vec![], dv)
            .unwrap_err()
            .to_string();
        assert!(err.contains("deletionVectors"), "{err}");
    }

    #[tokio::test]
    async fn appends_retry_after_appends_and_fail_after_metadata_changes() {
        let store: Arc<dyn ObjectStore> =
            Arc::new(datafusion::object_store::memory::InMemory::new());
        let url = Url::parse("memory:///t/").unwrap();
        let new = NewTable::new(&schema(), vec![], HashMap::new()).unwrap();
        new.create_empty(&store, &url).await.unwrap();
        // Creating it again is a conflict, not an overwrite.
        assert!(new.create_empty(&store, &url).await.is_err());
        let stale = new.snapshot_view(&url);
        let sink = DeltaSink::new(url.clone(), Arc::new(schema()), None);
        // Someone else appended version 1: ours lands as version 2.
        let other = [
            json!({"add": {"path": "x.parquet", "partitionValues": {}, "size": 1, "modificationTime": 0, "dataChange": true}}),
        ];
        assert!(
            put_if_absent(&store, &commit_path(&url, 1).unwrap(), &other)
                .await
                .unwrap()
        );
        sink.commit(&store, &stale, None, vec![], false)
            .await
            .unwrap();
        assert!(store.head(&commit_path(&url, 2).unwrap()).await.is_ok());
        // Someone changed the metadata in version 3: an append planned on an
        // earlier version fails.
        let changed = [json!({"metaData": {"id": "x"}})];
        assert!(
            put_if_absent(&store, &commit_path(&url, 3).unwrap(), &changed)
                .await
                .unwrap()
        );
        let err = sink
            .commit(&store, &stale, None, vec![], false)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("conflict: version 3"), "{err}");
        assert!(store.head(&commit_path(&url, 4).unwrap()).await.is_err());
    }

    #[test]
    fn paths_are_escaped() {
        assert_eq!(escape_partition("a/b=c"), "a%2Fb%3Dc");
        assert_eq!(uri_path("p=a b/part-0.parquet"), "p=a%20b/part-0.parquet");
        assert_eq!(uri_path("p=a%2Fb/x"), "p=a%252Fb/x");
        let u = uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}
