//! [`DeltaTable`]: a DataFusion table over a Delta table with Variant columns.
//!
//! Each scan replays the log (through `delta_kernel`) unless the table is pinned
//! to a version, prunes files on partition values, and reads the surviving files
//! with DataFusion's Parquet scan — so the crate's `VariantAdapterRule` gives it
//! per-file shredded layouts, extraction pushdown and row-group/page pruning like
//! any Parquet table. Each file carries the Variant path bounds of its `add.stats`
//! ([`PathBounds`]), with which `VariantScanExec` skips whole files before
//! reading their footers.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{FieldRef, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProviderFactory};
use datafusion::common::{
    DFSchema, Result, ScalarValue, not_impl_err, plan_datafusion_err, plan_err,
};
use datafusion::datasource::TableProvider;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::file_format::parquet::ParquetFormatFactory;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown, TableType};
use datafusion::object_store::ObjectStore;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::projection::{ProjectionExpr, ProjectionExprs};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::empty::EmptyExec;
use url::Url;

use super::log::{
    LogFile, TableSnapshot, blocking, load_snapshot, object_store_url, store_for, store_path,
    table_exists, table_url,
};
use super::stats::bounds_of_stats;
use super::write::{DeltaSink, NewTable};
use crate::parquet::PathBounds;

/// A Delta table (see the module docs).
#[derive(Debug)]
pub struct DeltaTable {
    url: Url,
    store_url: ObjectStoreUrl,
    /// `Some`: time travel to this version; `None`: the latest at each scan.
    pinned: Option<u64>,
    snapshot: Arc<TableSnapshot>,
}

impl DeltaTable {
    /// Opens the table at `location` (latest version, or `version`).
    pub async fn open(state: &dyn Session, location: &str, version: Option<u64>) -> Result<Self> {
        let url = table_url(location)?;
        let store = store_for(state, &url)?;
        if !table_exists(&store, &url).await? {
            return plan_err!("no Delta table at {url} (no _delta_log/ commits)");
        }
        let u = url.clone();
        let snapshot = blocking(move || load_snapshot(store, &u, version)).await?;
        Self::from_snapshot(url, version, snapshot)
    }

    /// Like [`Self::open`], for synchronous callers (table functions): the log is
    /// read on a separate thread.
    pub fn open_blocking(
        state: &dyn Session,
        location: &str,
        version: Option<u64>,
    ) -> Result<Self> {
        let url = table_url(location)?;
        let snapshot = snapshot_blocking(state, &url, version, load_snapshot)?;
        Self::from_snapshot(url, version, snapshot)
    }

    fn from_snapshot(url: Url, pinned: Option<u64>, snapshot: TableSnapshot) -> Result<Self> {
        for c in &snapshot.partition_columns {
            if snapshot.schema.field_with_name(c).is_err() {
                return plan_err!("Delta table {url}: partition column '{c}' is not in the schema");
            }
        }
        Ok(Self {
            store_url: object_store_url(&url)?,
            url,
            pinned,
            snapshot: Arc::new(snapshot),
        })
    }

    /// The table root.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Whether the table reads one fixed version (`OPTIONS ('version' ...)`).
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// The snapshot the table was opened with.
    pub fn snapshot(&self) -> &TableSnapshot {
        &self.snapshot
    }

    /// The snapshot a scan reads: the pinned one, or the latest.
    async fn current(&self, state: &dyn Session) -> Result<Arc<TableSnapshot>> {
        if self.pinned.is_some() {
            return Ok(Arc::clone(&self.snapshot));
        }
        let store = store_for(state, &self.url)?;
        let url = self.url.clone();
        let latest = blocking(move || load_snapshot(store, &url, None)).await?;
        if latest.version == self.snapshot.version {
            return Ok(Arc::clone(&self.snapshot));
        }
        if latest.schema_string != self.snapshot.schema_string
            || latest.partition_columns != self.snapshot.partition_columns
        {
            return plan_err!(
                "the schema of Delta table {} changed in version {}; register the table again",
                self.url,
                latest.version
            );
        }
        Ok(Arc::new(latest))
    }

    fn partition_fields(&self) -> Vec<FieldRef> {
        self.snapshot
            .partition_columns
            .iter()
            .filter_map(|c| {
                self.snapshot
                    .schema
                    .field_with_name(c)
                    .ok()
                    .map(|f| Arc::new(f.clone()))
            })
            .collect()
    }

    /// Partition values of a file for the partition `fields`, in their order.
    fn partition_values(fields: &[FieldRef], file: &LogFile) -> Result<Vec<ScalarValue>> {
        fields
            .iter()
            .map(
                |f| match file.partition_values.get(f.name()).cloned().flatten() {
                    None => ScalarValue::try_from(f.data_type()),
                    Some(s) => {
                        ScalarValue::try_from_string(s.clone(), f.data_type()).map_err(|e| {
                            plan_datafusion_err!(
                                "Delta file {}: partition value '{s}' of '{}' is not a {}: {e}",
                                file.path,
                                f.name(),
                                f.data_type()
                            )
                        })
                    }
                },
            )
            .collect()
    }

    /// The files whose partition values can satisfy the partition-only filters.
    fn prune_partitions<'a>(
        &self,
        state: &dyn Session,
        files: &'a [LogFile],
        filters: &[Expr],
    ) -> Result<Vec<(&'a LogFile, Vec<ScalarValue>)>> {
        let fields = self.partition_fields();
        let values: Vec<Vec<ScalarValue>> = files
            .iter()
            .map(|f| Self::partition_values(&fields, f))
            .collect::<Result<_>>()?;
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        let applicable: Vec<Expr> = filters
            .iter()
            .filter(|f| {
                let cols = f.column_refs();
                !cols.is_empty() && cols.iter().all(|c| names.contains(&c.name.as_str()))
            })
            .cloned()
            .collect();
        let all = || files.iter().zip(values.iter().cloned()).collect();
        let (Some(predicate), false) = (conjunction(applicable), files.is_empty()) else {
            return Ok(all());
        };
        let schema = Arc::new(Schema::new(fields.clone()));
        let columns: Vec<ArrayRef> = (0..fields.len())
            .map(|i| ScalarValue::iter_to_array(values.iter().map(|v| v[i].clone())))
            .collect::<Result<_>>()?;
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        let df_schema = DFSchema::try_from(schema)?;
        let expr = state.create_physical_expr(predicate, &df_schema)?;
        let mask = expr.evaluate(&batch)?.into_array(files.len())?;
        let mask = mask.as_boolean();
        Ok(files
            .iter()
            .zip(values)
            .enumerate()
            .filter(|(i, _)| mask.is_valid(*i) && mask.value(*i))
            .map(|(_, x)| x)
            .collect())
    }
}

#[async_trait]
impl TableProvider for DeltaTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.snapshot.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let snapshot = self.current(state).await?;
        let schema = &snapshot.schema;
        let partition_fields = self.partition_fields();
        let is_partition = |name: &str| snapshot.partition_columns.iter().any(|c| c == name);
        let file_fields: Vec<FieldRef> = schema
            .fields()
            .iter()
            .filter(|f| !is_partition(f.name()))
            .cloned()
            .collect();
        // Table (Delta) order -> scan order (file columns, then partition columns).
        let scan_index = |i: usize| -> usize {
            let name = schema.field(i).name();
            match snapshot.partition_columns.iter().position(|c| c == name) {
                Some(p) => file_fields.len() + p,
                None => file_fields
                    .iter()
                    .position(|f| f.name() == name)
                    .unwrap_or(0),
            }
        };
        let projection: Vec<usize> = match projection {
            Some(p) => p.iter().map(|&i| scan_index(i)).collect(),
            None => (0..schema.fields().len()).map(scan_index).collect(),
        };
        // Under column mapping the files name their columns by physical names;
        // the scan reads those and renames them back.
        let file_fields: Vec<FieldRef> = file_fields
            .iter()
            .map(|f| match snapshot.physical_names.get(f.name()) {
                Some(p) => Arc::new(f.as_ref().clone().with_name(p)),
                None => Arc::clone(f),
            })
            .collect();
        let files = self.prune_partitions(state, &snapshot.files, filters)?;
        if files.is_empty() {
            let projected = Schema::new(
                projection
                    .iter()
                    .map(|&i| {
                        file_fields
                            .iter()
                            .chain(partition_fields.iter())
                            .nth(i)
                            .cloned()
                            .ok_or_else(|| plan_datafusion_err!("bad projection index {i}"))
                    })
                    .collect::<Result<Vec<_>>>()?,
            );
            return Ok(Arc::new(EmptyExec::new(Arc::new(projected))));
        }
        // The statistics name columns by their physical names.
        let variant_columns: Vec<String> = snapshot
            .variant_columns()
            .iter()
            .map(|c| snapshot.physical_name(c).to_string())
            .collect();
        let mut partitioned = Vec::with_capacity(files.len());
        for (file, values) in files {
            let path = store_path(&self.url, Some(&file.path))?;
            let mut pf =
                PartitionedFile::new(path.to_string(), file.size).with_partition_values(values);
            if !variant_columns.is_empty()
                && let Some(stats) = &file.stats
            {
                let bounds: PathBounds = bounds_of_stats(stats, &variant_columns);
                if !bounds.paths.is_empty() {
                    pf = pf.with_extension(Arc::new(bounds));
                }
            }
            // Rows deleted by a deletion vector: a row selection on the file.
            if let Some(deleted) = &file.deleted {
                let store = store_for(state, &self.url)?;
                let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
                let plan = crate::parquet::deletions::access_plan_for(
                    &store,
                    cache,
                    &pf.object_meta,
                    deleted,
                )
                .await?;
                pf = pf.with_extension(plan);
            }
            partitioned.push(pf);
        }
        // Spread files over the target partitions, largest first.
        partitioned.sort_by_key(|f| std::cmp::Reverse(f.object_meta.size));
        let n = state
            .config()
            .target_partitions()
            .max(1)
            .min(partitioned.len());
        let mut groups: Vec<(u64, Vec<PartitionedFile>)> = vec![(0, Vec::new()); n];
        for f in partitioned {
            let smallest = groups
                .iter_mut()
                .min_by_key(|(size, _)| *size)
                .expect("at least one group");
            smallest.0 += f.object_meta.size;
            smallest.1.push(f);
        }
        let groups: Vec<FileGroup> = groups.into_iter().map(|(_, g)| FileGroup::new(g)).collect();
        let format = ParquetFormatFactory::new().create(state, &HashMap::new())?;
        let table_schema = TableSchema::builder(Arc::new(Schema::new(file_fields.clone())))
            .with_table_partition_cols(partition_fields)
            .build();
        let source = format.file_source(table_schema);
        let builder = if snapshot.physical_names.is_empty() {
            FileScanConfigBuilder::new(self.store_url.clone(), source)
                .with_projection_indices(Some(projection))?
        } else {
            let scan_schema = Arc::clone(source.table_schema().table_schema());
            let logical = |i: usize| -> String {
                let name = scan_schema.field(i).name();
                snapshot
                    .physical_names
                    .iter()
                    .find(|(_, p)| *p == name)
                    .map_or_else(|| name.clone(), |(l, _)| l.clone())
            };
            let exprs = ProjectionExprs::new(projection.iter().map(|&i| {
                ProjectionExpr::new(
                    Arc::new(Column::new(scan_schema.field(i).name(), i)),
                    logical(i),
                )
            }));
            let Some(renamed) = source.try_pushdown_projection(&exprs)? else {
                return plan_err!("the Parquet scan cannot rename column-mapped columns");
            };
            FileScanConfigBuilder::new(self.store_url.clone(), renamed)
        };
        let config = builder.with_file_groups(groups).with_limit(limit).build();
        let plan = format.create_physical_plan(state, config).await?;
        crate::parquet::guard_parquet_scan(plan, state)
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if insert_op != InsertOp::Append {
            return not_impl_err!("Delta tables take INSERT INTO (append) only, not {insert_op}");
        }
        if self.pinned.is_some() {
            return plan_err!("cannot insert into a Delta table opened at a fixed version");
        }
        let sink = DeltaSink::new(self.url.clone(), input.schema(), None);
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}

/// The `version` option of `CREATE EXTERNAL TABLE` or the second argument of
/// `delta_scan`.
fn parse_version(text: &str) -> Result<u64> {
    text.trim().parse().map_err(|_| {
        plan_datafusion_err!("Delta version must be a non-negative integer, got '{text}'")
    })
}

/// `CREATE EXTERNAL TABLE t [(columns)] STORED AS DELTA LOCATION '...'
/// [PARTITIONED BY (...)] [OPTIONS ('version' 'N', 'delta.enableVariantShredding' 'true', ...)]`.
///
/// Opens an existing table (optionally at a version); with declared columns and
/// no table at the location, creates an empty one.
#[derive(Debug, Default)]
pub struct DeltaTableFactory;

#[async_trait]
impl TableProviderFactory for DeltaTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let location = cmd
            .locations
            .first()
            .ok_or_else(|| plan_datafusion_err!("a Delta table needs a LOCATION"))?;
        let option = |key: &str| {
            cmd.options
                .iter()
                .find(|(k, _)| {
                    k.strip_prefix("format.")
                        .unwrap_or(k)
                        .eq_ignore_ascii_case(key)
                })
                .map(|(_, v)| v.clone())
        };
        let version = option("version").map(|v| parse_version(&v)).transpose()?;
        let url = table_url(location)?;
        let store = store_for(state, &url)?;
        if !table_exists(&store, &url).await? {
            if cmd.schema.fields().is_empty() {
                return plan_err!("no Delta table at {url}; declare its columns to create one");
            }
            if version.is_some() {
                return plan_err!("no Delta table at {url} to read at a version");
            }
            let schema: Schema = cmd.schema.as_arrow().clone();
            let configuration: HashMap<String, String> = cmd
                .options
                .iter()
                .map(|(k, v)| {
                    (
                        k.strip_prefix("format.").unwrap_or(k).to_string(),
                        v.clone(),
                    )
                })
                .filter(|(k, _)| k.starts_with("delta."))
                .collect();
            let new = NewTable::new(&schema, cmd.table_partition_cols.clone(), configuration)?;
            new.create_empty(&store, &url).await?;
        }
        let table = DeltaTable::open(state, location, version).await?;
        if !cmd.schema.fields().is_empty() {
            let declared: Vec<&str> = cmd
                .schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            let actual: Vec<&str> = table
                .snapshot
                .schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            if declared != actual {
                return plan_err!(
                    "Delta table {url} has columns {actual:?}, not the declared {declared:?}"
                );
            }
        }
        Ok(Arc::new(table))
    }
}

/// `delta_scan('location' [, version])`: a Delta table as a table function.
#[derive(Debug, Default)]
pub struct DeltaScan;

/// The name of [`DeltaScan`].
pub const DELTA_SCAN: &str = "delta_scan";

impl TableFunctionImpl for DeltaScan {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let (location, version) = location_and_version(DELTA_SCAN, args.exprs())?;
        Ok(Arc::new(DeltaTable::open_blocking(
            args.session(),
            &location,
            version,
        )?))
    }
}

/// The arguments of a Delta table function: a location string literal and an
/// optional non-negative version literal.
pub(crate) fn location_and_version(name: &str, exprs: &[Expr]) -> Result<(String, Option<u64>)> {
    let literal = |e: &Expr| match e {
        Expr::Literal(v, _) => Some(v.clone()),
        _ => None,
    };
    let Some(
        ScalarValue::Utf8(Some(location))
        | ScalarValue::Utf8View(Some(location))
        | ScalarValue::LargeUtf8(Some(location)),
    ) = exprs.first().and_then(literal)
    else {
        return plan_err!("{name} takes a table location string as its first argument");
    };
    let version = match exprs.get(1).map(literal) {
        None => None,
        Some(Some(v)) if !v.is_null() => match v.cast_to(&arrow::datatypes::DataType::Int64) {
            Ok(ScalarValue::Int64(Some(n))) if n >= 0 => Some(n as u64),
            _ => {
                return plan_err!("{name}: the version must be a non-negative integer, got {v}");
            }
        },
        Some(_) => {
            return plan_err!("{name}: the version must be a non-negative integer literal");
        }
    };
    if exprs.len() > 2 {
        return plan_err!("{name} takes a location and an optional version");
    }
    Ok((location, version))
}

/// [`load_snapshot`] or [`super::log::describe_snapshot`].
pub(crate) type SnapshotReader =
    fn(Arc<dyn ObjectStore>, &Url, Option<u64>) -> Result<TableSnapshot>;

/// Reads the snapshot of the table at `url` with `read` ([`load_snapshot`] or
/// [`super::log::describe_snapshot`]) on a separate thread, for synchronous
/// callers (table functions).
pub(crate) fn snapshot_blocking(
    state: &dyn Session,
    url: &Url,
    version: Option<u64>,
    read: SnapshotReader,
) -> Result<TableSnapshot> {
    let store = store_for(state, url)?;
    std::thread::scope(|s| {
        s.spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            if !runtime.block_on(table_exists(&store, url))? {
                return plan_err!("no Delta table at {url} (no _delta_log/ commits)");
            }
            read(store, url, version)
        })
        .join()
        .map_err(|_| plan_datafusion_err!("the Delta log reader panicked"))
    })?
}
