//! The table provider and the execution plan of `read_json_variant`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};

use super::reader::{DEFAULT_CHUNK_SIZE, Flow, LineReader, ReaderOptions};
use super::split::{FileRange, split_ranges};
use crate::array::variant_field;
use crate::fs::InputFile;
use crate::variant::json::JsonParseOptions;

/// The schema of the functions' output: one nullable Variant column `v`.
pub fn read_json_variant_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![variant_field("v", true)]))
}

/// The table returned by `read_json_variant(...)`: a resolved list of files.
#[derive(Debug, Clone)]
pub struct JsonVariantTable {
    function: &'static str,
    files: Arc<[InputFile]>,
    tolerant: bool,
    json: JsonParseOptions,
    schema: SchemaRef,
}

impl JsonVariantTable {
    /// A table over `files`; `tolerant` turns malformed lines into NULL rows.
    /// Lines are parsed with [`JsonParseOptions::default`] and trailing content
    /// rejected; see [`Self::with_json_options`].
    pub fn new(function: &'static str, files: Vec<InputFile>, tolerant: bool) -> Self {
        Self {
            function,
            files: files.into(),
            tolerant,
            json: JsonParseOptions::for_lines(false),
            schema: read_json_variant_schema(),
        }
    }

    /// Parses lines with `json` instead.
    pub fn with_json_options(mut self, json: JsonParseOptions) -> Self {
        self.json = json;
        self
    }

    /// The input files.
    pub fn files(&self) -> &[InputFile] {
        &self.files
    }

    /// The physical plan for a projection, split for `target_partitions`
    /// partitions with ranges of at least `min_range` bytes.
    ///
    /// # Errors
    /// When the projection refers to a missing column.
    pub fn plan(
        &self,
        projection: Option<&Vec<usize>>,
        target_partitions: usize,
        min_range: u64,
    ) -> Result<ReadJsonVariantExec> {
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let schema = Arc::new(self.schema.project(&projection)?);
        let sizes: Vec<u64> = self.files.iter().map(|f| f.size).collect();
        let groups = split_ranges(&sizes, target_partitions, min_range);
        Ok(ReadJsonVariantExec::new(
            self.function,
            Arc::clone(&self.files),
            groups,
            schema,
            self.tolerant,
        )
        .with_json_options(self.json))
    }
}

impl TableProvider for JsonVariantTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    // Written out by hand (the trait is declared with `#[async_trait]`): planning
    // does no I/O, so the future is ready at once.
    fn scan<'life0, 'life1, 'life2, 'life3, 'async_trait>(
        &'life0 self,
        state: &'life1 dyn Session,
        projection: Option<&'life2 Vec<usize>>,
        _filters: &'life3 [Expr],
        _limit: Option<usize>,
    ) -> Pin<Box<dyn Future<Output = Result<Arc<dyn ExecutionPlan>>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        'life3: 'async_trait,
        Self: 'async_trait,
    {
        let options = state.config_options();
        let target = options.execution.target_partitions;
        let min_range = if options.optimizer.repartition_file_scans {
            options.optimizer.repartition_file_min_size as u64
        } else {
            u64::MAX
        };
        let plan = self
            .plan(projection, target, min_range)
            .map(|p| Arc::new(p) as Arc<dyn ExecutionPlan>);
        Box::pin(std::future::ready(plan))
    }
}

/// Reads NDJSON files into a Variant column, one group of byte ranges per
/// partition (see [`split_ranges`]).
#[derive(Debug, Clone)]
pub struct ReadJsonVariantExec {
    function: &'static str,
    files: Arc<[InputFile]>,
    groups: Arc<[Vec<FileRange>]>,
    schema: SchemaRef,
    tolerant: bool,
    json: JsonParseOptions,
    chunk_size: usize,
    properties: Arc<PlanProperties>,
}

impl ReadJsonVariantExec {
    /// A plan reading `groups[i]` in partition `i`, producing `schema` (the Variant
    /// column `v` or no column at all).
    pub fn new(
        function: &'static str,
        files: Arc<[InputFile]>,
        groups: Vec<Vec<FileRange>>,
        schema: SchemaRef,
        tolerant: bool,
    ) -> Self {
        let groups: Arc<[Vec<FileRange>]> = if groups.is_empty() {
            vec![Vec::new()].into()
        } else {
            groups.into()
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(groups.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Self {
            function,
            files,
            groups,
            schema,
            tolerant,
            json: JsonParseOptions::for_lines(false),
            chunk_size: DEFAULT_CHUNK_SIZE,
            properties: Arc::new(properties),
        }
    }

    /// Parses lines with `json` (by default trailing content is rejected).
    pub fn with_json_options(mut self, json: JsonParseOptions) -> Self {
        self.json = json;
        self
    }

    /// How lines are parsed.
    pub fn json_options(&self) -> JsonParseOptions {
        self.json
    }

    /// Sets the number of bytes read at a time (default 8 MiB).
    pub fn with_chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size.max(1);
        self
    }

    /// The byte ranges of each partition.
    pub fn groups(&self) -> &[Vec<FileRange>] {
        &self.groups
    }

    /// Everything the node is made of, for the plan codec.
    #[cfg(feature = "proto")]
    pub(crate) fn parts(&self) -> JsonExecParts<'_> {
        JsonExecParts {
            function: self.function,
            files: &self.files,
            groups: &self.groups,
            schema: &self.schema,
            tolerant: self.tolerant,
            json: self.json,
            chunk_size: self.chunk_size,
        }
    }
}

/// The parts of a [`ReadJsonVariantExec`].
#[cfg(feature = "proto")]
pub(crate) struct JsonExecParts<'a> {
    pub(crate) function: &'static str,
    pub(crate) files: &'a [InputFile],
    pub(crate) groups: &'a [Vec<FileRange>],
    pub(crate) schema: &'a SchemaRef,
    pub(crate) tolerant: bool,
    pub(crate) json: JsonParseOptions,
    pub(crate) chunk_size: usize,
}

impl DisplayAs for ReadJsonVariantExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let ranges: usize = self.groups.iter().map(Vec::len).sum();
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "ReadJsonVariantExec: function={}, files={}, ranges={}, partitions={}",
                self.function,
                self.files.len(),
                ranges,
                self.groups.len()
            ),
            DisplayFormatType::TreeRender => {
                writeln!(f, "files={}", self.files.len())?;
                write!(f, "partitions={}", self.groups.len())
            }
        }
    }
}

impl ExecutionPlan for ReadJsonVariantExec {
    fn name(&self) -> &'static str {
        "ReadJsonVariantExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            internal_err!("ReadJsonVariantExec has no children")
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let Some(group) = self.groups.get(partition).cloned() else {
            return internal_err!(
                "ReadJsonVariantExec: invalid partition {partition} of {}",
                self.groups.len()
            );
        };
        let options = ReaderOptions {
            function: self.function,
            tolerant: self.tolerant,
            chunk_size: self.chunk_size,
            batch_size: context.session_config().batch_size(),
            json: self.json,
        };
        let files = Arc::clone(&self.files);
        let schema = Arc::clone(&self.schema);
        let mut builder = RecordBatchReceiverStreamBuilder::new(Arc::clone(&schema), 2);
        let tx = builder.tx();
        builder.spawn_blocking(move || {
            let mut reader = LineReader::new(&files, options);
            let mut sink = |column: ArrayRef| -> Result<Flow> {
                let batch = to_batch(&schema, column)?;
                // A closed channel means the consumer is gone (e.g. a LIMIT is met).
                Ok(match tx.blocking_send(Ok(batch)) {
                    Ok(()) => Flow::Continue,
                    Err(_) => Flow::Stop,
                })
            };
            for range in group {
                if reader.read_range(range, &mut sink)? == Flow::Stop {
                    return Ok(());
                }
            }
            reader.flush(&mut sink)?;
            Ok(())
        });
        Ok(builder.build())
    }
}

/// A batch of `schema` (the Variant column, repeated per projected index, or none).
fn to_batch(schema: &SchemaRef, column: ArrayRef) -> Result<RecordBatch> {
    let rows = column.len();
    let columns = vec![column; schema.fields().len()];
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )?)
}
