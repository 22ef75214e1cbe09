//! The `parquet` file format with VARIANT-aware schema inference.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::config::ExtensionOptions;
use datafusion::common::{GetExt, Result, Statistics, plan_datafusion_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::ParquetFormatFactory;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory, FileMeta};
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileScanConfigBuilder, FileSinkConfig, FileSource,
};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_expr::LexOrdering;
use datafusion::physical_expr_common::sort_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};

use super::footer::{check_parquet_file, guard_parquet_scan};
use super::sink::variant_sink_exec;
use crate::array::{is_variant_type, variant_data_type};
use crate::config::VariantOptions;
use crate::parquet::commit::pending_among;
use datafusion::execution::cache::cache_manager::FileMetadataCache;

/// The session's Parquet metadata cache, which the checks in front of
/// parquet-rs fill for the reads that follow them.
fn metadata_cache(state: &dyn Session) -> Option<Arc<FileMetadataCache>> {
    Some(state.runtime_env().cache_manager.get_file_metadata_cache())
}

/// Creates [`VariantParquetFormat`]s; registered for the `parquet` extension by
/// [`crate::with_variant`], so `CREATE EXTERNAL TABLE ... STORED AS PARQUET`,
/// `SELECT ... FROM 'file.parquet'` and `COPY ... TO 'x.parquet'` all use it.
#[derive(Debug, Default)]
pub struct VariantParquetFormatFactory {
    inner: ParquetFormatFactory,
}

impl VariantParquetFormatFactory {
    /// A factory with DataFusion's session-driven Parquet options.
    pub fn new() -> Self {
        Self {
            inner: ParquetFormatFactory::new(),
        }
    }
}

impl GetExt for VariantParquetFormatFactory {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }
}

impl FileFormatFactory for VariantParquetFormatFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        // `variant.*` options (COPY / CREATE EXTERNAL TABLE) are ours; the rest
        // are DataFusion's Parquet options.
        let (ours, parquet): (HashMap<_, _>, HashMap<_, _>) = format_options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .partition(|(k, _)| k.starts_with("variant."));
        let mut format = VariantParquetFormat::new(self.inner.create(state, &parquet)?);
        if !ours.is_empty() {
            let mut options = state
                .config_options()
                .extensions
                .get::<VariantOptions>()
                .cloned()
                .unwrap_or_default();
            let mut keys: Vec<_> = ours.into_iter().collect();
            keys.sort();
            for (key, value) in keys {
                let name = &key["variant.".len()..];
                if name == "shredding_schema" && value.trim().eq_ignore_ascii_case("advice") {
                    format.advice = true;
                    continue;
                }
                options.set(name, &value).map_err(|e| {
                    plan_datafusion_err!("option '{key}' = '{value}': {}", e.strip_backtrace())
                })?;
            }
            format.write_options = Some(options);
        }
        Ok(Arc::new(format))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(VariantParquetFormat::new(self.inner.default()))
    }
}

/// DataFusion's Parquet format, except for schema inference over files that store
/// a VARIANT column in different layouts.
///
/// DataFusion infers a table's schema by merging the Arrow schemas of its files.
/// For a VARIANT column shredded differently per file (one file unshredded, one
/// with `typed_value: Int64`, one with `typed_value: Utf8`) that merge fails or
/// yields a struct no file has. This format infers each file's schema on its own
/// and, where the files disagree on a VARIANT column, declares the column as the
/// unshredded `Struct{metadata, value}` ([`variant_data_type`]); the per-file
/// adapter ([`crate::optimizer::VariantGetPushdown`]) then rebuilds that form from
/// each file's layout. Where all files agree, the inferred type is the files' own
/// (no conversion cost). Everything else is delegated to the wrapped format.
///
/// Embedders building a `ListingTable` by hand can use it directly:
///
/// ```
/// use std::sync::Arc;
/// use datafusion::datasource::listing::ListingOptions;
/// use df_variant::parquet::VariantParquetFormat;
///
/// let options = ListingOptions::new(Arc::new(VariantParquetFormat::default()))
///     .with_file_extension(".parquet");
/// assert_eq!(options.file_extension, ".parquet");
/// ```
#[derive(Debug)]
pub struct VariantParquetFormat {
    inner: Arc<dyn FileFormat>,
    /// Writer settings given as statement options, overriding the session's.
    write_options: Option<VariantOptions>,
    /// `'variant.shredding_schema' 'advice'`: the schema comes from the
    /// advice for the table the write reads ([`super::advice`]).
    advice: bool,
}

impl Default for VariantParquetFormat {
    fn default() -> Self {
        Self::new(ParquetFormatFactory::new().default())
    }
}

impl VariantParquetFormat {
    /// Wraps a Parquet [`FileFormat`] (normally DataFusion's `ParquetFormat`).
    pub fn new(inner: Arc<dyn FileFormat>) -> Self {
        Self {
            inner,
            write_options: None,
            advice: false,
        }
    }

    /// The wrapped format.
    pub fn inner(&self) -> &Arc<dyn FileFormat> {
        &self.inner
    }
}

/// Merges per-file schemas (sorted by location) the way DataFusion does, except
/// that every VARIANT column becomes the unshredded VARIANT type: the table's
/// type does not depend on how its files shred, and each file is read in its own
/// layout (reassembled, or with extractions pushed to its shredded leaves).
fn merge_file_schemas(schemas: Vec<SchemaRef>) -> Result<Schema> {
    let normalised = schemas.iter().map(|schema| {
        let fields = schema.fields().iter().map(|field| {
            if is_variant_type(field.data_type()) {
                Arc::new(
                    Field::new(field.name(), variant_data_type(), field.is_nullable())
                        .with_metadata(field.metadata().clone()),
                )
            } else {
                Arc::clone(field)
            }
        });
        Schema::new_with_metadata(fields.collect::<Vec<_>>(), schema.metadata().clone())
    });
    Schema::try_merge(normalised).map_err(|e| {
        plan_datafusion_err!("cannot merge the schemas of the table's Parquet files: {e}")
    })
}

/// `conf` without the files that a commit marker lists (files of a statement
/// that has not finished writing, or died while committing: see
/// [`crate::parquet::commit`]). The table's statistics counted them, so they
/// become unknown when a file is left out.
async fn without_pending(state: &dyn Session, conf: FileScanConfig) -> Result<FileScanConfig> {
    let store = state.runtime_env().object_store(&conf.object_store_url)?;
    let paths = conf
        .file_groups
        .iter()
        .flat_map(datafusion::datasource::physical_plan::FileGroup::files)
        .map(|f| &f.object_meta.location);
    let pending = pending_among(store.as_ref(), paths).await?;
    if pending.is_empty() {
        return Ok(conf);
    }
    let groups: Vec<FileGroup> = conf
        .file_groups
        .iter()
        .map(|g| {
            FileGroup::new(
                g.files()
                    .iter()
                    .filter(|f| !pending.contains(&f.object_meta.location))
                    .cloned()
                    .collect(),
            )
        })
        .collect();
    let unknown = Statistics::new_unknown(conf.file_source().table_schema().table_schema());
    Ok(FileScanConfigBuilder::from(conf)
        .with_file_groups(groups)
        .with_statistics(unknown)
        .build())
}

#[async_trait]
impl FileFormat for VariantParquetFormat {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(
        &self,
        file_compression_type: &FileCompressionType,
    ) -> Result<String> {
        self.inner.get_ext_with_compression(file_compression_type)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        // Files of a statement whose commit has not finished are not part of the
        // table (see `crate::parquet::commit`).
        let pending = pending_among(store.as_ref(), objects.iter().map(|o| &o.location)).await?;
        let kept: Vec<ObjectMeta>;
        let objects = if pending.is_empty() {
            objects
        } else {
            kept = objects
                .iter()
                .filter(|o| !pending.contains(&o.location))
                .cloned()
                .collect();
            &kept[..]
        };
        if objects.len() <= 1 {
            for object in objects {
                check_parquet_file(store.as_ref(), object, metadata_cache(state)).await?;
            }
            let schema = self.inner.infer_schema(state, store, objects).await?;
            return Ok(Arc::new(merge_file_schemas(vec![schema])?));
        }
        let mut objects: Vec<&ObjectMeta> = objects.iter().collect();
        // Deterministic field order whatever order the store lists files in.
        objects.sort_by(|a, b| a.location.cmp(&b.location));
        let concurrency = state
            .config_options()
            .execution
            .meta_fetch_concurrency
            .get();
        let schemas: Vec<SchemaRef> = futures::stream::iter(objects)
            .map(|object| {
                let object = [object.clone()];
                async move {
                    check_parquet_file(store.as_ref(), &object[0], metadata_cache(state)).await?;
                    self.inner.infer_schema(state, store, &object).await
                }
            })
            .boxed() // as upstream: https://github.com/rust-lang/rust/issues/64552
            .buffered(concurrency)
            .try_collect()
            .await?;
        Ok(Arc::new(merge_file_schemas(schemas)?))
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        check_parquet_file(store.as_ref(), object, metadata_cache(state)).await?;
        self.inner
            .infer_stats(state, store, table_schema, object)
            .await
    }

    async fn infer_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Option<LexOrdering>> {
        check_parquet_file(store.as_ref(), object, metadata_cache(state)).await?;
        self.inner
            .infer_ordering(state, store, table_schema, object)
            .await
    }

    async fn infer_stats_and_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<FileMeta> {
        check_parquet_file(store.as_ref(), object, metadata_cache(state)).await?;
        self.inner
            .infer_stats_and_ordering(state, store, table_schema, object)
            .await
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let conf = without_pending(state, conf).await?;
        let plan = self.inner.create_physical_plan(state, conf).await?;
        guard_parquet_scan(plan, state)
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self
            .inner
            .create_writer_physical_plan(input, state, conf, order_requirements)
            .await?;
        // With statement options, pick our sink now (with them); otherwise the
        // session-wide `VariantWriteRule` does it later.
        if let Some(options) = &self.write_options
            && let Some(exec) = (plan.as_ref() as &dyn Any).downcast_ref::<DataSinkExec>()
        {
            let mut options = options.clone();
            if self.advice {
                match super::advice::advised_for_input(state, exec.input())? {
                    Some(ddl) => options.set("shredding_schema", &ddl)?,
                    None => options.set("shredding", "off")?,
                }
            }
            if let Some(ours) = variant_sink_exec(exec, &options) {
                return Ok(ours);
            }
        }
        Ok(plan)
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        self.inner.file_source(table_schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Fields};

    fn shredded(typed: DataType) -> DataType {
        DataType::Struct(Fields::from(vec![
            Field::new("metadata", DataType::BinaryView, false),
            Field::new("value", DataType::BinaryView, true),
            Field::new("typed_value", typed, true),
        ]))
    }

    fn schema(v: DataType) -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("v", v, true),
        ]))
    }

    #[test]
    fn agreeing_files_still_get_the_unshredded_type() {
        let s = schema(shredded(DataType::Int64));
        let merged = merge_file_schemas(vec![Arc::clone(&s), Arc::clone(&s)]).unwrap();
        assert_eq!(merged.field(1).data_type(), &variant_data_type());
        let single = merge_file_schemas(vec![s]).unwrap();
        assert_eq!(single.field(1).data_type(), &variant_data_type());
    }

    #[test]
    fn disagreeing_files_get_the_unshredded_type() {
        let merged = merge_file_schemas(vec![
            schema(shredded(DataType::Int64)),
            schema(shredded(DataType::Utf8View)),
            schema(variant_data_type()),
        ])
        .unwrap();
        assert_eq!(merged.field(1).data_type(), &variant_data_type());
        assert_eq!(merged.field(0).data_type(), &DataType::Int64);
    }

    #[test]
    fn other_conflicts_still_fail() {
        let a = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        let b = Arc::new(Schema::new(vec![Field::new("x", DataType::Utf8, true)]));
        let err = merge_file_schemas(vec![a, b]).unwrap_err().to_string();
        assert!(err.contains("cannot merge"), "{err}");
    }
}
