//! `COPY (query) TO 'location' STORED AS DELTA [PARTITIONED BY (...)]
//! [OPTIONS ('delta.enableVariantShredding' 'true', ...)]`: creates the Delta
//! table at the location with the query's rows, or appends them to the table
//! already there.
//!
//! Only writing goes through this format; tables are read with
//! `CREATE EXTERNAL TABLE ... STORED AS DELTA` or `delta_scan(...)`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::{GetExt, Result, Statistics, not_impl_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;

use super::log::table_url;
use super::write::{DeltaSink, NewTable};

/// The `delta` format of `COPY ... STORED AS DELTA`.
#[derive(Debug, Default)]
pub struct DeltaFormatFactory;

impl GetExt for DeltaFormatFactory {
    fn get_ext(&self) -> String {
        "delta".to_string()
    }
}

impl FileFormatFactory for DeltaFormatFactory {
    fn create(
        &self,
        _state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        let mut configuration = HashMap::new();
        for (k, v) in format_options {
            let k = k.strip_prefix("format.").unwrap_or(k);
            if k.starts_with("delta.") {
                configuration.insert(k.to_string(), v.clone());
            } else {
                return not_impl_err!(
                    "COPY ... STORED AS DELTA takes 'delta.*' table properties as options, not '{k}'"
                );
            }
        }
        Ok(Arc::new(DeltaFormat { configuration }))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(DeltaFormat::default())
    }
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct DeltaFormat {
    configuration: HashMap<String, String>,
}

#[async_trait]
impl FileFormat for DeltaFormat {
    fn get_ext(&self) -> String {
        "delta".to_string()
    }

    fn get_ext_with_compression(&self, _c: &FileCompressionType) -> Result<String> {
        Ok(self.get_ext())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    async fn infer_schema(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        _objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        not_impl_err!(
            "read Delta tables with CREATE EXTERNAL TABLE ... STORED AS DELTA or delta_scan(...)"
        )
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        _object: &ObjectMeta,
    ) -> Result<Statistics> {
        Ok(Statistics::new_unknown(&table_schema))
    }

    async fn create_physical_plan(
        &self,
        _state: &dyn Session,
        _conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        not_impl_err!(
            "read Delta tables with CREATE EXTERNAL TABLE ... STORED AS DELTA or delta_scan(...)"
        )
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        _state: &dyn Session,
        conf: FileSinkConfig,
        _order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let location = conf.original_url.clone();
        let url = table_url(&location)?;
        let schema = input.schema();
        let partition_columns: Vec<String> = conf
            .table_partition_cols
            .iter()
            .map(|(c, _)| c.clone())
            .collect();
        let new = NewTable::new(
            &Schema::new(schema.fields().clone()),
            partition_columns,
            self.configuration.clone(),
        )?;
        let sink = DeltaSink::new(url, schema, Some(new));
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        ParquetFormat::default().file_source(table_schema)
    }
}
