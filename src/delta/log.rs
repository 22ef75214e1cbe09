//! The Delta log through `delta_kernel`: snapshots (latest or a given version),
//! the protocol and its features, the schema, and the live data files with their
//! partition values and statistics.
//!
//! Kernel does the log replay (JSON commits, checkpoints, add/remove
//! reconciliation); we read the data files ourselves, so every reader feature
//! that changes how data files are read must be one we implement — anything else
//! is refused by name rather than read wrongly. Deletion vectors are read here
//! (kernel decodes them) and applied by the scan as row selections
//! ([`crate::parquet::deletions`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{
    DataFusionError, Result, exec_datafusion_err, plan_datafusion_err, plan_err,
};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::ObjectStore;
use datafusion::object_store::path::Path;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::scan::state::ScanFile;
use delta_kernel::snapshot::Snapshot;
use delta_kernel_default_engine::DefaultEngine;
use futures::StreamExt;
use url::Url;

use super::schema::arrow_schema;
use crate::parquet::deletions::DeletedRows;

/// Reader features whose data files we read correctly.
pub const READER_FEATURES: &[&str] = &[
    "deletionVectors",
    "variantType",
    "variantType-preview",
    "variantShredding",
    "variantShredding-preview",
    "timestampNtz",
    "v2Checkpoint",
    "vacuumProtocolCheck",
];

/// Writer features our appends honour (beyond the reader features). Invariants,
/// CHECK constraints and generated or identity columns are accepted only when the
/// table declares none (see `check_writable`).
pub const WRITER_FEATURES: &[&str] = &[
    "appendOnly",
    "invariants",
    "checkConstraints",
    "changeDataFeed",
    "domainMetadata",
    "generatedColumns",
    "identityColumns",
];

/// One live data file of a snapshot.
#[derive(Debug, Clone)]
pub struct LogFile {
    /// The path as the log has it: relative to the table root (URL-encoded) or
    /// an absolute URL.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Milliseconds since the epoch.
    pub modification_time: i64,
    /// The `add.stats` JSON, if any.
    pub stats: Option<String>,
    /// Partition column name to its value (`None`: NULL).
    pub partition_values: HashMap<String, Option<String>>,
    /// The rows its deletion vector deletes, if it has one (decoded only for
    /// reading rows).
    pub deleted: Option<Arc<DeletedRows>>,
    /// How many rows its deletion vector deletes (the log's `cardinality`).
    pub deleted_count: Option<u64>,
}

/// What a query or a write needs of one version of a table.
#[derive(Debug, Clone)]
pub struct TableSnapshot {
    /// The table root, with a trailing slash.
    pub url: Url,
    /// The version read.
    pub version: u64,
    /// The table's columns in table order, VARIANT columns as our VARIANT type.
    pub schema: SchemaRef,
    /// The `schemaString` of the table's metadata.
    pub schema_string: String,
    /// `metaData.id`.
    pub table_id: String,
    /// `metaData.createdTime`.
    pub created_time: Option<i64>,
    /// Partition columns, in order.
    pub partition_columns: Vec<String>,
    /// `metaData.configuration`.
    pub configuration: HashMap<String, String>,
    /// `protocol.minReaderVersion`.
    pub min_reader_version: i32,
    /// `protocol.minWriterVersion`.
    pub min_writer_version: i32,
    /// `protocol.readerFeatures` (empty below reader version 3).
    pub reader_features: Vec<String>,
    /// `protocol.writerFeatures` (empty below writer version 7).
    pub writer_features: Vec<String>,
    /// The live data files.
    pub files: Vec<LogFile>,
    /// Under column mapping (`delta.columnMapping.mode` `name` or `id`), each
    /// top-level column's physical name: its name in the data files, in
    /// `partitionValues` and in the statistics. Empty without column mapping.
    pub physical_names: HashMap<String, String>,
}

impl TableSnapshot {
    /// Whether new files may be shredded: `delta.enableVariantShredding = true`
    /// and a shredding feature in both lists.
    pub fn shredding_enabled(&self) -> bool {
        let feature = |l: &[String]| {
            l.iter()
                .any(|f| f == "variantShredding" || f == "variantShredding-preview")
        };
        self.configuration
            .get("delta.enableVariantShredding")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            && feature(&self.reader_features)
            && feature(&self.writer_features)
    }

    /// Refuses tables whose data files we cannot read correctly.
    pub fn check_readable(&self) -> Result<()> {
        if self.min_reader_version > 3 {
            return plan_err!(
                "Delta table {} needs reader version {}; this reader implements up to 3",
                self.url,
                self.min_reader_version
            );
        }
        let mapping = self
            .configuration
            .get("delta.columnMapping.mode")
            .map(|m| m.to_ascii_lowercase());
        if let Some(m) = mapping.as_deref()
            && !matches!(m, "none" | "name" | "id")
        {
            return plan_err!(
                "Delta table {} uses column mapping mode '{m}'; this reader implements 'name' and 'id'",
                self.url
            );
        }
        for f in &self.reader_features {
            if f == "columnMapping" {
                continue;
            }
            if !READER_FEATURES.contains(&f.as_str()) {
                return plan_err!(
                    "Delta table {} needs the reader feature '{f}', which this reader does not implement",
                    self.url
                );
            }
        }
        Ok(())
    }

    /// Refuses appends to tables with writer features we do not honour.
    pub fn check_writable(&self) -> Result<()> {
        self.check_readable()?;
        if self.column_mapping() {
            return plan_err!(
                "Delta table {} uses column mapping; this writer does not write column-mapped tables",
                self.url
            );
        }
        if self.min_writer_version > 7 {
            return plan_err!(
                "Delta table {} needs writer version {}; this writer implements up to 7",
                self.url,
                self.min_writer_version
            );
        }
        if (3..7).contains(&self.min_writer_version) {
            // Legacy writer versions imply CHECK constraints (3), CDF and
            // generated columns (4), column mapping (5), identity columns (6).
            self.check_declared_none()?;
        }
        for f in &self.writer_features {
            if !WRITER_FEATURES.contains(&f.as_str()) && !READER_FEATURES.contains(&f.as_str()) {
                return plan_err!(
                    "Delta table {} needs the writer feature '{f}', which this writer does not implement",
                    self.url
                );
            }
        }
        self.check_declared_none()
    }

    /// Invariants, CHECK constraints, generated and identity columns must not be
    /// declared: we do not enforce them.
    fn check_declared_none(&self) -> Result<()> {
        for key in [
            "delta.invariants",
            "delta.generationExpression",
            "delta.identity.start",
        ] {
            if self.schema_string.contains(&format!("\"{key}\"")) {
                return plan_err!(
                    "Delta table {} declares '{key}' on a column, which this writer does not enforce",
                    self.url
                );
            }
        }
        if let Some(k) = self
            .configuration
            .keys()
            .find(|k| k.starts_with("delta.constraints."))
        {
            return plan_err!(
                "Delta table {} has the CHECK constraint '{k}', which this writer does not enforce",
                self.url
            );
        }
        Ok(())
    }

    /// Whether the table maps its columns to physical names (`name` or `id` mode).
    pub fn column_mapping(&self) -> bool {
        self.configuration
            .get("delta.columnMapping.mode")
            .is_some_and(|m| matches!(m.to_ascii_lowercase().as_str(), "name" | "id"))
    }

    /// A top-level column's name in the data files.
    pub fn physical_name<'a>(&'a self, column: &'a str) -> &'a str {
        self.physical_names
            .get(column)
            .map_or(column, String::as_str)
    }

    /// The names of top-level VARIANT columns.
    pub fn variant_columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .filter(|f| crate::array::is_variant_field(f))
            .map(|f| f.name().clone())
            .collect()
    }
}

/// The kernel's error without the backtrace it captures under `RUST_BACKTRACE`
/// (a user-facing error is one line).
fn kernel_err(url: &Url, e: delta_kernel::error::KernelError) -> DataFusionError {
    exec_datafusion_err!(
        "cannot read the Delta log of {url}: {}",
        e.without_backtrace()
    )
}

/// A kernel engine over `store` (DataFusion's object store for the table URL).
fn engine(
    store: Arc<dyn ObjectStore>,
) -> DefaultEngine<impl delta_kernel_default_engine::executor::TaskExecutor> {
    DefaultEngine::builder(store).build()
}

/// The table root URL of `location` (a local path or a URL), with a trailing slash.
pub fn table_url(location: &str) -> Result<Url> {
    let mut url = match Url::parse(location) {
        Ok(u) if u.scheme().len() > 1 => u,
        _ => {
            let path = std::path::absolute(location)
                .map_err(|e| exec_datafusion_err!("bad Delta table location '{location}': {e}"))?;
            Url::from_directory_path(&path)
                .map_err(|()| exec_datafusion_err!("bad Delta table location '{location}'"))?
        }
    };
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    Ok(url)
}

/// The object-store path of `url` (or of a file `relative` to it).
pub fn store_path(url: &Url, relative: Option<&str>) -> Result<Path> {
    let full = match relative {
        Some(r) => url
            .join(r)
            .map_err(|e| exec_datafusion_err!("bad Delta file path '{r}': {e}"))?,
        None => url.clone(),
    };
    Path::from_url_path(full.path())
        .map_err(|e| exec_datafusion_err!("bad Delta file path '{full}': {e}"))
}

/// Whether a Delta table exists at `url` (its log has a commit or checkpoint).
pub async fn table_exists(store: &Arc<dyn ObjectStore>, url: &Url) -> Result<bool> {
    let log = store_path(url, Some("_delta_log/"))?;
    let mut listing = store.list(Some(&log));
    while let Some(meta) = listing.next().await {
        let meta = meta?;
        let name = meta.location.filename().unwrap_or_default();
        // Delta names its log files in lower case.
        #[allow(clippy::case_sensitive_file_extension_comparisons)]
        if name.ends_with(".json") || name.ends_with(".parquet") {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Reads the snapshot of `url` at `version` (latest when `None`), for reading
/// its rows: a table we cannot read correctly is refused, and deletion vectors
/// are decoded. Blocking: call it from `spawn_blocking`.
pub fn load_snapshot(
    store: Arc<dyn ObjectStore>,
    url: &Url,
    version: Option<u64>,
) -> Result<TableSnapshot> {
    read_snapshot(store, url, version, true)
}

/// Reads the snapshot of `url` at `version` to describe it
/// (`delta_table_info`): tables we cannot read are described too, and deletion
/// vectors are counted, not decoded. Blocking.
pub fn describe_snapshot(
    store: Arc<dyn ObjectStore>,
    url: &Url,
    version: Option<u64>,
) -> Result<TableSnapshot> {
    read_snapshot(store, url, version, false)
}

fn read_snapshot(
    store: Arc<dyn ObjectStore>,
    url: &Url,
    version: Option<u64>,
    for_rows: bool,
) -> Result<TableSnapshot> {
    let engine = engine(store);
    let mut builder = Snapshot::builder_for(url.as_str());
    if let Some(v) = version {
        builder = builder.at_version(v);
    }
    let snapshot = builder.build(&engine).map_err(|e| kernel_err(url, e))?;
    let config = snapshot.table_configuration();
    let protocol = config.protocol();
    let metadata = config.metadata();
    let names = |l: Option<&[delta_kernel::table_features::TableFeature]>| -> Vec<String> {
        l.unwrap_or_default()
            .iter()
            .map(|f| f.as_ref().to_string())
            .collect()
    };
    let schema_string = metadata.schema_string().clone();
    let mut table = TableSnapshot {
        url: url.clone(),
        version: snapshot.version(),
        schema: Arc::new(arrow_schema(&schema_string)?),
        schema_string,
        table_id: metadata.id().to_string(),
        created_time: metadata.created_time(),
        partition_columns: metadata.partition_columns().to_vec(),
        configuration: metadata.configuration().clone(),
        min_reader_version: protocol.min_reader_version(),
        min_writer_version: protocol.min_writer_version(),
        reader_features: names(protocol.reader_features()),
        writer_features: names(protocol.writer_features()),
        files: Vec::new(),
        physical_names: HashMap::new(),
    };
    if for_rows {
        table.check_readable()?;
    }
    if table.column_mapping() {
        match super::schema::physical_names(&table.schema_string) {
            Ok(names) => table.physical_names = names.into_iter().collect(),
            Err(e) if for_rows => return Err(e),
            Err(_) => {}
        }
    }
    let scan = Arc::clone(&snapshot)
        .scan_builder()
        .build()
        .map_err(|e| kernel_err(url, e))?;
    let mut files: Vec<ScanFile> = Vec::new();
    let mut stats: HashMap<String, String> = HashMap::new();
    for batch in scan
        .scan_metadata(&engine)
        .map_err(|e| kernel_err(url, e))?
    {
        let batch = batch.map_err(|e| kernel_err(url, e))?;
        files = batch
            .visit_scan_files(files, std::vec::Vec::push)
            .map_err(|e| kernel_err(url, e))?;
        // Kernel parses only `numRecords`; the raw JSON has the bounds.
        if let Some(data) = batch
            .scan_files
            .data()
            .any_ref()
            .downcast_ref::<ArrowEngineData>()
        {
            let rb = data.record_batch();
            let column = |name: &str| {
                rb.column_by_name(name)
                    .and_then(|c| arrow::compute::cast(c, &DataType::Utf8).ok())
            };
            if let (Some(paths), Some(json)) = (column("path"), column("stats")) {
                let (paths, json) = (paths.as_string::<i32>(), json.as_string::<i32>());
                for i in 0..paths.len() {
                    if paths.is_valid(i) && json.is_valid(i) {
                        stats.insert(paths.value(i).to_string(), json.value(i).to_string());
                    }
                }
            }
        }
    }
    for f in files {
        let deleted = if f.dv_info.has_vector() && for_rows {
            Some(Arc::new(deleted_rows(&engine, url, &f)?))
        } else {
            None
        };
        let deleted_count = f.dv_info.cardinality().ok().flatten();
        let partition_values = table
            .partition_columns
            .iter()
            .map(|c| {
                let value = f
                    .partition_values
                    .get(table.physical_name(c))
                    .or_else(|| f.partition_values.get(c));
                (c.clone(), value.cloned())
            })
            .collect();
        table.files.push(LogFile {
            stats: stats.remove(&f.path),
            path: f.path,
            size: u64::try_from(f.size).unwrap_or(0),
            modification_time: f.modification_time,
            partition_values,
            deleted,
            deleted_count,
        });
    }
    table.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(table)
}

/// The rows that `file`'s deletion vector deletes (inline or in a file), read by
/// kernel; a vector kernel cannot read (or panics on) is an error naming the file.
fn deleted_rows(
    engine: &DefaultEngine<impl delta_kernel_default_engine::executor::TaskExecutor>,
    url: &Url,
    file: &ScanFile,
) -> Result<DeletedRows> {
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        file.dv_info.get_row_indexes(engine, url)
    }));
    let rows = match read {
        Ok(Ok(rows)) => rows.unwrap_or_default(),
        Ok(Err(e)) => {
            return Err(exec_datafusion_err!(
                "cannot read the deletion vector of {} in Delta table {url}: {}",
                file.path,
                e.without_backtrace()
            ));
        }
        Err(_) => {
            return Err(exec_datafusion_err!(
                "cannot read the deletion vector of {} in Delta table {url}: malformed",
                file.path
            ));
        }
    };
    let mut rows = rows;
    rows.sort_unstable();
    rows.dedup();
    Ok(DeletedRows(rows))
}

/// The object store URL (scheme and authority) of a table URL.
pub fn object_store_url(url: &Url) -> Result<ObjectStoreUrl> {
    ObjectStoreUrl::parse(&url[..url::Position::BeforePath])
}

/// DataFusion's object store for `url`.
pub fn store_for(state: &dyn Session, url: &Url) -> Result<Arc<dyn ObjectStore>> {
    state.runtime_env().object_store(object_store_url(url)?)
}

/// Runs the blocking kernel call `f` off the async runtime.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| plan_datafusion_err!("the Delta log reader failed: {e}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_urls_end_with_a_slash() {
        let u = table_url("/tmp/some table").unwrap();
        assert_eq!(u.as_str(), "file:///tmp/some%20table/");
        let u = table_url("s3://bucket/t").unwrap();
        assert_eq!(u.as_str(), "s3://bucket/t/");
        let p = store_path(&u, Some("part=a/x%20y.parquet")).unwrap();
        assert_eq!(p.as_ref(), "t/part=a/x y.parquet");
    }
}
