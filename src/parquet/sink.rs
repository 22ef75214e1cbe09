//! `VariantParquetSink`: a Parquet `FileSink` that shreds VARIANT columns per
//! output file and commits all files of a statement together.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::common::config::TableParquetOptions;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, exec_err};
use datafusion::datasource::file_format::parquet::ParquetSink;
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::file_format::write::get_writer_schema;
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::execution::TaskContext;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryPool};
use datafusion::object_store::buffered::BufWriter;
use datafusion::object_store::path::Path;
use datafusion::object_store::{ObjectStore, ObjectStoreExt};
use datafusion::parquet::arrow::ArrowSchemaConverter;
use datafusion::parquet::arrow::AsyncArrowWriter;
use datafusion::parquet::arrow::arrow_writer::ArrowWriterOptions;
use datafusion::parquet::basic::LogicalType;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use datafusion::parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, SendableRecordBatchStream};
use std::any::Any;
use tokio::sync::mpsc::Receiver;

use super::commit::{commit_files, remove_empty_staging, staged_path};
use crate::array::{
    VariantColumnBuilder, VariantInput, is_variant_field, variant_extension_metadata,
};
use crate::boundary::shredding_error;
use crate::config::{ShreddingMode, VariantOptions};
use crate::shredding::{ShreddingOptions, shred};
use crate::variant::validate::{check_metadata, check_value_wide};

/// Indices of the top-level VARIANT columns of a schema (by extension or shape).
pub fn variant_columns(schema: &Schema) -> Vec<usize> {
    schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| is_variant_field(f))
        .map(|(i, _)| i)
        .collect()
}

/// The sink described in the module docs.
#[derive(Debug)]
pub struct VariantParquetSink {
    config: FileSinkConfig,
    parquet_options: TableParquetOptions,
    mode: ShreddingMode,
    options: VariantOptions,
}

impl VariantParquetSink {
    /// A sink writing `config`'s files with DataFusion's Parquet options and the
    /// given shredding settings.
    pub fn new(
        config: FileSinkConfig,
        parquet_options: TableParquetOptions,
        mode: ShreddingMode,
        options: VariantOptions,
    ) -> Self {
        Self {
            config,
            parquet_options,
            mode,
            options,
        }
    }
}

impl VariantParquetSink {
    /// Its configuration, Parquet options, shredding mode and settings (for the
    /// plan codec).
    pub fn parts(
        &self,
    ) -> (
        &FileSinkConfig,
        &TableParquetOptions,
        &ShreddingMode,
        &VariantOptions,
    ) {
        (
            &self.config,
            &self.parquet_options,
            &self.mode,
            &self.options,
        )
    }
}

impl DisplayAs for VariantParquetSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match &self.mode {
            ShreddingMode::Off => "off".to_string(),
            ShreddingMode::Auto => "auto".to_string(),
            ShreddingMode::Schema(s) => s.clone(),
        };
        write!(f, "VariantParquetSink(shredding={mode})")
    }
}

/// The rows per row group of a file with VARIANT columns where DataFusion's
/// default (1,048,576) was left (`datafusion.execution.parquet.max_row_group_size`):
/// a 1M-row file of events is then 8 row groups that two or more cores read in
/// parallel and that per-path statistics can skip, not one (JSONBench Q2-Q5
/// were 1.6-1.8x faster hot). Files without VARIANT are DataFusion's to write.
pub const VARIANT_ROW_GROUP_ROWS: usize = 128 * 1024;

/// What every file task needs.
#[derive(Clone)]
pub(crate) struct FilePlan {
    schema: SchemaRef,
    parquet_options: TableParquetOptions,
    skip_arrow_metadata: bool,
    mode: ShreddingMode,
    shredding: ShreddingOptions,
    buffer_size: usize,
    /// Where a file's buffered rows are reserved (`None`: nowhere, for
    /// rewrites that run outside a query).
    pool: Option<Arc<dyn MemoryPool>>,
}

/// The Parquet schema with every VARIANT annotation carrying
/// `specification_version = 1`. arrow-rs 59.3.2 leaves the version unset, which
/// Spark 4.3 reads as version 0 and refuses (`PARQUET_TYPE_NOT_RECOGNIZED ...
/// VARIANT(0)`); the Variant spec's current version is 1.
fn with_variant_spec_version(schema: &SchemaDescriptor) -> Result<SchemaDescriptor> {
    fn rebuild(t: &TypePtr) -> Result<TypePtr> {
        if !t.is_group() {
            return Ok(Arc::clone(t));
        }
        let info = t.get_basic_info();
        let fields = t
            .get_fields()
            .iter()
            .map(rebuild)
            .collect::<Result<Vec<_>>>()?;
        let logical = match info.logical_type_ref() {
            Some(LogicalType::Variant(v)) if v.specification_version.is_none() => {
                Some(LogicalType::variant(Some(1)))
            }
            other => other.cloned(),
        };
        let mut builder = Type::group_type_builder(info.name())
            .with_converted_type(info.converted_type())
            .with_logical_type(logical)
            .with_fields(fields);
        if info.has_repetition() {
            builder = builder.with_repetition(info.repetition());
        }
        if info.has_id() {
            builder = builder.with_id(Some(info.id()));
        }
        Ok(Arc::new(builder.build()?))
    }
    Ok(SchemaDescriptor::new(rebuild(&schema.root_schema_ptr())?))
}

/// The largest VARIANT value or metadata any write path accepts, in bytes
/// (Spark's limit for one Variant, the one `parse_json` enforces).
pub const MAX_WRITTEN_VARIANT_BYTES: usize = crate::variant::json::SIZE_LIMIT;

/// At most the first 16 bytes of `bytes` in hex, for an error message.
fn hex_start(bytes: &[u8]) -> String {
    let mut s: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 16 {
        s.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    s
}

/// Checks every VARIANT value of column `name` before it is written, on every
/// write path (Parquet files shredded or not, Delta tables): malformed bytes
/// and values over [`MAX_WRITTEN_VARIANT_BYTES`] are refused, so nothing we
/// annotate as VARIANT can fail another reader.
///
/// The error quotes the start of the bytes and names no row: the rows of a
/// query's output have no stable position (partitions arrive in any order).
pub(crate) fn check_written_variants(column: &ArrayRef, name: &str) -> Result<()> {
    let input = VariantInput::try_new(column)
        .map_err(|e| exec_datafusion_err!("column '{name}': not a VARIANT column: {e}"))?;
    for r in 0..input.len() {
        let Some((m, v)) = input.get(r) else {
            continue;
        };
        let largest = m.len().max(v.len());
        if largest > MAX_WRITTEN_VARIANT_BYTES {
            return exec_err!(
                "column '{name}': a VARIANT value of {largest} bytes is over the limit of {} MiB, not written",
                MAX_WRITTEN_VARIANT_BYTES >> 20
            );
        }
        // Dates and timestamps past chrono's years are valid (Spark writes them).
        if let Err(e) = check_metadata(m).and_then(|dict| check_value_wide(v, &dict)) {
            return exec_err!(
                "column '{name}': malformed VARIANT value (metadata {}, value {}), not written: {e}",
                hex_start(m),
                hex_start(v)
            );
        }
    }
    Ok(())
}

/// A Variant column as written unshredded: shredded input is reassembled.
fn unshredded(column: &ArrayRef) -> Result<ArrayRef> {
    let DataType::Struct(fields) = column.data_type() else {
        return Ok(Arc::clone(column));
    };
    if fields.find("typed_value").is_none() {
        return Ok(Arc::clone(column));
    }
    let input = VariantInput::try_new(column).map_err(|e| exec_datafusion_err!("{e}"))?;
    let mut out = VariantColumnBuilder::new(input.len());
    for i in 0..input.len() {
        match input.get(i) {
            Some((m, v)) => out.append(m, v),
            None => out.append_null(),
        }
    }
    Ok(out.finish())
}

/// Chosen conversion for each column of one file.
struct FileColumns {
    /// `Some(typed_value)` for shredded VARIANT columns, `None` otherwise.
    typed: Vec<Option<DataType>>,
    variant: Vec<bool>,
    schema: SchemaRef,
}

impl FileColumns {
    fn choose(plan: &FilePlan, sample: &[RecordBatch]) -> Result<Self> {
        let variant: Vec<bool> = plan
            .schema
            .fields()
            .iter()
            .map(|f| is_variant_field(f))
            .collect();
        let mut typed = vec![None; variant.len()];
        for (i, is_variant) in variant.iter().enumerate() {
            if !is_variant {
                continue;
            }
            let cols: Vec<&dyn arrow::array::Array> =
                sample.iter().map(|b| b.column(i).as_ref()).collect();
            typed[i] = plan.mode.typed_value(&cols, &plan.shredding)?;
        }
        // The file schema: converted types, VARIANT columns annotated.
        let empty = RecordBatch::new_empty(Arc::clone(&plan.schema));
        let mut fields = Vec::with_capacity(variant.len());
        for (i, f) in plan.schema.fields().iter().enumerate() {
            if variant[i] {
                let col = convert_column(empty.column(i), typed[i].as_ref())?;
                fields.push(
                    Field::new(f.name(), col.data_type().clone(), f.is_nullable())
                        .with_metadata(variant_extension_metadata()),
                );
            } else {
                fields.push(f.as_ref().clone());
            }
        }
        let schema = Arc::new(Schema::new_with_metadata(
            fields,
            plan.schema.metadata().clone(),
        ));
        Ok(Self {
            typed,
            variant,
            schema,
        })
    }

    fn convert(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let mut columns = Vec::with_capacity(batch.num_columns());
        for (i, col) in batch.columns().iter().enumerate() {
            columns.push(if self.variant[i] {
                check_written_variants(col, self.schema.field(i).name())?;
                convert_column(col, self.typed[i].as_ref())?
            } else {
                Arc::clone(col)
            });
        }
        Ok(RecordBatch::try_new(Arc::clone(&self.schema), columns)?)
    }
}

fn convert_column(col: &ArrayRef, typed: Option<&DataType>) -> Result<ArrayRef> {
    match typed {
        Some(t) => shred(col, t).map_err(shredding_error),
        None => unshredded(col),
    }
}

impl FilePlan {
    /// Files of `schema` written with the session's Parquet options and `options`'
    /// shredding settings (`mode` overriding theirs), in row groups of
    /// [`VARIANT_ROW_GROUP_ROWS`] where DataFusion's default was left.
    pub(crate) fn new(
        schema: SchemaRef,
        mut parquet_options: TableParquetOptions,
        mode: ShreddingMode,
        options: &VariantOptions,
        buffer_size: usize,
    ) -> Self {
        let rows = &mut parquet_options.global.max_row_group_size;
        if *rows == datafusion::common::config::ParquetOptions::default().max_row_group_size {
            *rows = VARIANT_ROW_GROUP_ROWS;
        }
        Self {
            schema,
            skip_arrow_metadata: parquet_options.global.skip_arrow_metadata,
            parquet_options,
            mode,
            shredding: options.shredding_options(),
            buffer_size,
            pool: None,
        }
    }

    /// The plan, reserving each file's buffered rows (the sample, and the row
    /// group being built) in `pool`, as DataFusion's Parquet sink does.
    pub(crate) fn with_pool(mut self, pool: Arc<dyn MemoryPool>) -> Self {
        self.pool = Some(pool);
        self
    }
}

/// One file written: rows, its footer, and its (shredded) Arrow schema.
#[cfg_attr(not(feature = "delta"), allow(dead_code))]
pub(crate) struct WrittenFile {
    pub rows: usize,
    pub metadata: ParquetMetaData,
    pub schema: SchemaRef,
}

/// Writes one file under `tmp`.
pub(crate) async fn write_file(
    mut rx: Receiver<RecordBatch>,
    store: Arc<dyn ObjectStore>,
    tmp: Path,
    plan: FilePlan,
) -> Result<WrittenFile> {
    let reservation = plan
        .pool
        .as_ref()
        .map(|pool| MemoryConsumer::new(format!("VariantParquetSink[{tmp}]")).register(pool));
    let reserve = |bytes: usize| match &reservation {
        Some(r) => r.try_resize(bytes),
        None => Ok(()),
    };
    let mut sample = Vec::new();
    let mut sampled = 0;
    let mut sample_bytes = 0;
    while sampled < plan.shredding.sample_rows.max(1) {
        match rx.recv().await {
            Some(b) => {
                sampled += b.num_rows();
                sample_bytes += b.get_array_memory_size();
                reserve(sample_bytes)?;
                sample.push(b);
            }
            None => break,
        }
    }
    let columns = FileColumns::choose(&plan, &sample)?;
    // The Arrow schema stored in the footer is this file's (shredded) schema.
    let mut parquet_options = plan.parquet_options.clone();
    if !plan.skip_arrow_metadata {
        parquet_options.arrow_schema(&columns.schema);
    }
    let props: WriterProperties = WriterPropertiesBuilder::try_from(&parquet_options)?.build();
    let parquet_schema = ArrowSchemaConverter::new()
        .with_coerce_types(props.coerce_types())
        .convert(&columns.schema)?;
    let options = ArrowWriterOptions::new()
        .with_parquet_schema(with_variant_spec_version(&parquet_schema)?)
        .with_properties(props)
        .with_skip_arrow_metadata(plan.skip_arrow_metadata);
    let out = BufWriter::with_capacity(store, tmp, plan.buffer_size);
    let mut writer =
        AsyncArrowWriter::try_new_with_options(out, Arc::clone(&columns.schema), options)?;
    let mut rows = 0;
    for batch in &sample {
        rows += batch.num_rows();
        writer.write(&columns.convert(batch)?).await?;
    }
    drop(sample);
    reserve(writer.memory_size())?;
    while let Some(batch) = rx.recv().await {
        rows += batch.num_rows();
        writer.write(&columns.convert(&batch)?).await?;
        reserve(writer.memory_size())?;
    }
    let metadata = writer.close().await?;
    Ok(WrittenFile {
        rows,
        metadata,
        schema: columns.schema,
    })
}

#[async_trait]
impl FileSink for VariantParquetSink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let plan = FilePlan::new(
            get_writer_schema(&self.config),
            self.parquet_options.clone(),
            self.mode.clone(),
            &self.options,
            context
                .session_config()
                .options()
                .execution
                .objectstore_writer_buffer_size,
        )
        .with_pool(Arc::clone(&context.runtime_env().memory_pool));
        let stamp = super::commit::new_stamp();
        let mut tasks = tokio::task::JoinSet::new();
        let mut files: Vec<(Path, Path)> = Vec::new();
        while let Some((path, rx)) = file_stream_rx.recv().await {
            let tmp = staged_path(&path, &stamp);
            files.push((path, tmp.clone()));
            tasks.spawn(write_file(rx, Arc::clone(&object_store), tmp, plan.clone()));
        }
        let mut rows = 0usize;
        let mut failure: Option<DataFusionError> = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(file)) => rows += file.rows,
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(e) => {
                    failure
                        .get_or_insert(exec_datafusion_err!("a Parquet writer task failed: {e}"));
                }
            }
        }
        match demux_task.join_unwind().await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failure.get_or_insert(e);
            }
            Err(e) => {
                failure.get_or_insert(DataFusionError::ExecutionJoin(Box::new(e)));
            }
        }
        if let Some(e) = failure {
            // All or nothing: no file of a failed statement stays behind.
            for (_, tmp) in &files {
                let _ = object_store.delete(tmp).await;
            }
            remove_empty_staging(object_store.as_ref(), &stamp, &files);
            return Err(e);
        }
        commit_files(object_store.as_ref(), &stamp, &files).await?;
        forget_listings(context, &files);
        Ok(rows as u64)
    }
}

/// Forgets the session's cached listings of the folders `files` were written
/// to. DataFusion keeps a folder's listing for the session (its list-files
/// cache has no expiry by default), so without this a `SELECT` after a `COPY`
/// or `INSERT` into a folder already read would miss the new files.
fn forget_listings(context: &TaskContext, files: &[(Path, Path)]) {
    let Some(cache) = context.runtime_env().cache_manager.get_list_files_cache() else {
        return;
    };
    for key in cache.list_entries().into_keys() {
        let listed = key.path.as_ref();
        if files
            .iter()
            .any(|(path, _)| path.as_ref().starts_with(listed))
        {
            cache.remove(&key);
        }
    }
}

#[async_trait]
impl DataSink for VariantParquetSink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}
/// `exec` writing through a [`VariantParquetSink`] with `options`, when it writes
/// Parquet (DataFusion's `ParquetSink`) with top-level VARIANT columns.
pub(crate) fn variant_sink_exec(
    exec: &DataSinkExec,
    options: &VariantOptions,
) -> Option<Arc<dyn ExecutionPlan>> {
    let sink = (exec.sink() as &dyn Any).downcast_ref::<ParquetSink>()?;
    if variant_columns(sink.config().output_schema()).is_empty() {
        return None;
    }
    let ours = VariantParquetSink::new(
        sink.config().clone(),
        sink.parquet_options().clone(),
        options.mode(),
        options.clone(),
    );
    Some(Arc::new(DataSinkExec::new(
        Arc::clone(exec.input()),
        Arc::new(ours),
        exec.sort_order().clone(),
    )))
}
