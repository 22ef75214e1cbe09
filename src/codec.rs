//! Physical plans through bytes: [`VariantPhysicalCodec`], a datafusion-proto
//! [`PhysicalExtensionCodec`] for everything df-variant adds to a physical plan.
//!
//! Services built on DataFusion ship physical plans between processes (a
//! coordinator and its workers, a Flight SQL front end and its executors).
//! datafusion-proto 55.2 serializes a Parquet `DataSourceExec` itself, before any
//! user codec is asked, and keeps neither the scan's expression adapter (our
//! per-file reassembly of differently shredded files and the shredded-leaf reads)
//! nor `PartitionedFile::extensions` (the Delta per-path bounds) nor a custom
//! Parquet reader factory (our footer guard). So every Parquet scan over a VARIANT
//! column is wrapped in a [`VariantScanExec`] (see [`crate::optimizer`]), which
//! this codec encodes with what the scan below it loses, and re-installs on
//! decode:
//!
//! | node | carries |
//! |---|---|
//! | [`VariantScanExec`] | the pushdown switch, the pruning predicates, each file's [`PathBounds`] and access plan (the rows a Delta deletion vector keeps); on decode the adapter and the footer guard go back on its scan |
//! | `ReadJsonVariantExec` | files, byte ranges per partition, parse options |
//! | `DataSinkExec` + [`VariantParquetSink`] | the Parquet sink's configuration, the shredding mode and settings, the sort order |
//! | `DataSinkExec` + `DeltaSink` | table URL, schema, the table to create, the sort order |
//! | `StringGroupCountExec` ([`crate::accel`]) | the group expression and the output schema |
//!
//! Our functions travel by name and are found in the receiving session, which
//! must therefore have them registered ([`crate::with_variant`] or
//! [`crate::register_all`]). The one exception is
//! `PartitionedDistinctCount` ([`crate::accel`]), which only a plan rule may place and which is
//! therefore not in the registry: it travels as the aggregate's definition
//! (its name as bytes). Under datafusion-distributed, whose composed codec
//! never asks a user codec about aggregate functions, it goes by name, and
//! [`crate::distributed::worker`] registers it. Nothing is dropped silently: a node of ours that
//! cannot be encoded (a scan with a user's own expression adapter under ours) is
//! an error naming it, and so is any other node the codec is asked about.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! let ctx = df_variant::variant_context();
//! let plan = ctx
//!     .sql(r#"SELECT to_json(parse_json('{"a": 1}')) AS j"#)
//!     .await?
//!     .create_physical_plan()
//!     .await?;
//! let bytes = df_variant::codec::plan_to_bytes(plan)?;
//! // ... in another process, with a session that has df-variant registered:
//! let plan = df_variant::codec::plan_from_bytes(&bytes, &ctx.task_ctx())?;
//! let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx()).await?;
//! assert_eq!(batches[0].num_rows(), 1);
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::common::{
    Result, ScalarValue, internal_datafusion_err, internal_err, not_impl_err,
};
use datafusion::config::ConfigExtension;
use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, FileSink};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::AggregateUDF;
use datafusion::physical_expr::{LexRequirement, PhysicalSortRequirement};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalProtoConverterExtension;
use datafusion_proto::physical_plan::from_proto::parse_physical_expr;
use datafusion_proto::physical_plan::to_proto::serialize_physical_expr;
use datafusion_proto::protobuf;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use prost::Message;

#[cfg(feature = "accel")]
use crate::accel::{PartitionedDistinctCount, StringGroupCountExec};
use crate::config::{ShreddingMode, VariantOptions};
use crate::fs::InputFile;
use crate::ingest::ReadJsonVariantExec;
use crate::ingest::split::FileRange;
use crate::memtable::ShreddedMemoryExec;
use crate::parquet::{PathBounds, VariantParquetSink, VariantScanExec, scan_config};
use crate::variant::json::JsonParseOptions;

/// The [`PhysicalExtensionCodec`] of df-variant (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct VariantPhysicalCodec {
    drop_adapters: bool,
}

impl VariantPhysicalCodec {
    /// A codec with a planted fault: decoded scans do not get the expression
    /// adapter back. Only for proving that the round-trip tests catch it.
    #[doc(hidden)]
    pub fn planted_fault_dropping_adapters() -> Self {
        Self {
            drop_adapters: true,
        }
    }
}

/// `plan` as bytes, with [`VariantPhysicalCodec`].
///
/// # Errors
/// When a node of the plan cannot be serialized; the message names it.
pub fn plan_to_bytes(plan: Arc<dyn ExecutionPlan>) -> Result<Bytes> {
    physical_plan_to_bytes_with_extension_codec(plan, &VariantPhysicalCodec::default())
}

/// The plan encoded by [`plan_to_bytes`], decoded for the session of `ctx`
/// (which must have df-variant's functions registered).
///
/// # Errors
/// When the bytes are not such a plan, or name a function `ctx` lacks.
pub fn plan_from_bytes(bytes: &[u8], ctx: &TaskContext) -> Result<Arc<dyn ExecutionPlan>> {
    physical_plan_from_bytes_with_extension_codec(bytes, ctx, &VariantPhysicalCodec::default())
}

// The wire format: hand-written prost messages (no protoc at build time), with
// DataFusion's own messages for expressions, schemas, scalars and sinks inside.

#[derive(Clone, PartialEq, Message)]
struct VariantNode {
    #[prost(oneof = "node::Kind", tags = "1, 2, 3, 4, 5, 6")]
    kind: Option<node::Kind>,
}

mod node {
    // One per plan node, decoded once: the size difference does not matter.
    #[allow(clippy::large_enum_variant)]
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(super) enum Kind {
        #[prost(message, tag = "1")]
        Scan(super::ScanNode),
        #[prost(message, tag = "2")]
        Json(super::JsonNode),
        #[prost(message, tag = "3")]
        ParquetSink(super::ParquetSinkNode),
        #[prost(message, tag = "4")]
        DeltaSink(super::DeltaSinkNode),
        #[prost(message, tag = "5")]
        GroupCount(super::GroupCountNode),
        #[prost(message, tag = "6")]
        Memory(super::MemoryNode),
    }
}

#[derive(Clone, PartialEq, Message)]
struct ScanNode {
    #[prost(bool, tag = "1")]
    pushdown: bool,
    /// Over the scan's table schema.
    #[prost(message, repeated, tag = "2")]
    predicates: Vec<protobuf::PhysicalExprNode>,
    #[prost(message, repeated, tag = "3")]
    files: Vec<FileBoundsNode>,
}

#[derive(Clone, PartialEq, Message)]
struct FileBoundsNode {
    /// The file's location in its object store.
    #[prost(string, tag = "1")]
    location: String,
    #[prost(uint64, optional, tag = "2")]
    num_rows: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    paths: Vec<PathBoundNode>,
    /// The file's access plan (the rows a Delta deletion vector keeps), one
    /// entry per row group; empty when the file has none.
    #[prost(message, repeated, tag = "4")]
    access: Vec<RowGroupAccessNode>,
    #[prost(bool, tag = "5")]
    has_bounds: bool,
}

/// A row group of an access plan: skipped, scanned whole (no selectors), or a
/// selection (selectors: `n > 0` selects n rows, `n < 0` skips -n).
#[derive(Clone, PartialEq, Message)]
struct RowGroupAccessNode {
    #[prost(bool, tag = "1")]
    skip: bool,
    #[prost(sint64, repeated, tag = "2")]
    selectors: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct PathBoundNode {
    #[prost(string, tag = "1")]
    column: String,
    #[prost(string, repeated, tag = "2")]
    keys: Vec<String>,
    #[prost(message, optional, tag = "3")]
    min: Option<protobuf::ScalarValue>,
    #[prost(message, optional, tag = "4")]
    max: Option<protobuf::ScalarValue>,
}

#[derive(Clone, PartialEq, Message)]
struct GroupCountNode {
    /// The group expression, over the input.
    #[prost(message, optional, tag = "1")]
    group: Option<protobuf::PhysicalExprNode>,
    /// The output schema (the partial aggregate's).
    #[prost(message, optional, tag = "2")]
    schema: Option<protobuf::Schema>,
}

/// A [`ShreddedMemoryExec`]: the stored batches travel with the plan, as
/// datafusion-proto ships a `MemTable`'s.
#[derive(Clone, PartialEq, Message)]
struct MemoryNode {
    #[prost(message, optional, tag = "1")]
    table_schema: Option<protobuf::Schema>,
    #[prost(message, repeated, tag = "2")]
    partitions: Vec<MemoryPartitionNode>,
    /// The projection, over the table schema.
    #[prost(message, repeated, tag = "3")]
    exprs: Vec<protobuf::PhysicalExprNode>,
    #[prost(string, repeated, tag = "4")]
    names: Vec<String>,
    #[prost(bool, tag = "5")]
    pushdown: bool,
}

/// One partition's batches, each an Arrow IPC stream of its own (batches of
/// one table may differ in how their VARIANT columns are stored).
#[derive(Clone, PartialEq, Message)]
struct MemoryPartitionNode {
    #[prost(bytes = "vec", repeated, tag = "1")]
    batches: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct JsonNode {
    #[prost(string, tag = "1")]
    function: String,
    #[prost(message, repeated, tag = "2")]
    files: Vec<InputFileNode>,
    #[prost(message, repeated, tag = "3")]
    groups: Vec<RangeGroupNode>,
    #[prost(message, optional, tag = "4")]
    schema: Option<protobuf::Schema>,
    #[prost(bool, tag = "5")]
    tolerant: bool,
    #[prost(bool, tag = "6")]
    allow_duplicate_keys: bool,
    #[prost(uint64, tag = "7")]
    max_depth: u64,
    #[prost(bool, tag = "8")]
    reject_trailing_content: bool,
    #[prost(uint64, tag = "9")]
    chunk_size: u64,
}

#[derive(Clone, PartialEq, Message)]
struct InputFileNode {
    #[prost(string, tag = "1")]
    path: String,
    #[prost(uint64, tag = "2")]
    size: u64,
}

#[derive(Clone, PartialEq, Message)]
struct RangeGroupNode {
    #[prost(message, repeated, tag = "1")]
    ranges: Vec<RangeNode>,
}

#[derive(Clone, PartialEq, Message)]
struct RangeNode {
    #[prost(uint64, tag = "1")]
    file: u64,
    #[prost(uint64, tag = "2")]
    start: u64,
    #[prost(uint64, tag = "3")]
    end: u64,
}

#[derive(Clone, PartialEq, Message)]
struct SortNode {
    #[prost(message, optional, tag = "1")]
    expr: Option<protobuf::PhysicalExprNode>,
    #[prost(bool, tag = "2")]
    has_options: bool,
    #[prost(bool, tag = "3")]
    descending: bool,
    #[prost(bool, tag = "4")]
    nulls_first: bool,
}

#[derive(Clone, PartialEq, Message)]
struct ParquetSinkNode {
    /// DataFusion's own message for the file sink configuration and the Parquet
    /// options.
    #[prost(message, optional, tag = "1")]
    sink: Option<protobuf::ParquetSink>,
    /// `off`, `auto`, or `schema:` and a Spark DDL type.
    #[prost(string, tag = "2")]
    mode: String,
    /// The `variant.*` settings, as `SET` takes them.
    #[prost(map = "string, string", tag = "3")]
    options: HashMap<String, String>,
    #[prost(message, repeated, tag = "4")]
    sort_order: Vec<SortNode>,
}

#[derive(Clone, PartialEq, Message)]
struct DeltaSinkNode {
    #[prost(string, tag = "1")]
    url: String,
    #[prost(message, optional, tag = "2")]
    schema: Option<protobuf::Schema>,
    #[prost(message, optional, tag = "3")]
    create: Option<NewTableNode>,
    #[prost(message, repeated, tag = "4")]
    sort_order: Vec<SortNode>,
}

#[derive(Clone, PartialEq, Message)]
struct NewTableNode {
    #[prost(message, optional, tag = "1")]
    schema: Option<protobuf::Schema>,
    #[prost(string, repeated, tag = "2")]
    partition_columns: Vec<String>,
    #[prost(map = "string, string", tag = "3")]
    configuration: HashMap<String, String>,
    #[prost(string, repeated, tag = "4")]
    reader_features: Vec<String>,
    #[prost(string, repeated, tag = "5")]
    writer_features: Vec<String>,
}

impl PhysicalExtensionCodec for VariantPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let node = VariantNode::decode(buf)
            .map_err(|e| internal_datafusion_err!("df-variant plan node: {e}"))?;
        match node.kind {
            Some(node::Kind::Scan(scan)) => self.decode_scan(scan, inputs, ctx),
            Some(node::Kind::Json(json)) => decode_json(json),
            Some(node::Kind::ParquetSink(sink)) => self.decode_parquet_sink(sink, inputs, ctx),
            Some(node::Kind::DeltaSink(sink)) => self.decode_delta_sink(sink, inputs, ctx),
            #[cfg(feature = "accel")]
            Some(node::Kind::GroupCount(node)) => {
                let input = one_input("StringGroupCountExec", inputs)?;
                let schema = decode_schema(node.schema.as_ref(), "StringGroupCountExec")?;
                let group = node.group.as_ref().ok_or_else(|| {
                    internal_datafusion_err!("StringGroupCountExec without its group")
                })?;
                let group = parse_physical_expr(group, ctx, &input.schema(), self)?;
                Ok(Arc::new(StringGroupCountExec::try_new(
                    Arc::clone(input),
                    group,
                    schema,
                )?))
            }
            #[cfg(not(feature = "accel"))]
            Some(node::Kind::GroupCount(_)) => not_impl_err!(
                "StringGroupCountExec needs df-variant's cargo feature `accel` in the receiving process"
            ),
            Some(node::Kind::Memory(node)) => self.decode_memory(node, ctx),
            None => internal_err!("df-variant plan node without a kind"),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let kind = if let Some(scan) = node.downcast_ref::<VariantScanExec>() {
            node::Kind::Scan(self.encode_scan(scan)?)
        } else if let Some(json) = node.downcast_ref::<ReadJsonVariantExec>() {
            node::Kind::Json(encode_json(json)?)
        } else if let Some(exec) = node.downcast_ref::<DataSinkExec>() {
            self.encode_sink(exec)?
        } else if let Some(kind) = encode_accel(&node, self)? {
            kind
        } else if let Some(exec) = node.downcast_ref::<ShreddedMemoryExec>() {
            node::Kind::Memory(self.encode_memory(exec)?)
        } else {
            return internal_err!(
                "df-variant's codec cannot serialize {}: it is not a node of df-variant",
                node.name()
            );
        };
        VariantNode { kind: Some(kind) }
            .encode(buf)
            .map_err(|e| internal_datafusion_err!("encoding {}: {e}", node.name()))
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        #[cfg(feature = "accel")]
        if node.inner().is::<PartitionedDistinctCount>() {
            buf.extend_from_slice(PartitionedDistinctCount::NAME.as_bytes());
        }
        #[cfg(not(feature = "accel"))]
        let _ = (node, buf);
        Ok(())
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        #[cfg(feature = "accel")]
        if buf == PartitionedDistinctCount::NAME.as_bytes() {
            return Ok(PartitionedDistinctCount::udaf());
        }
        #[cfg(not(feature = "accel"))]
        let _ = buf;
        not_impl_err!(
            "df-variant's codec does not know the aggregate function {name}: register it in the receiving session"
        )
    }
}

/// The node of an opt-in [`crate::accel`] operator, if `node` is one.
#[cfg(feature = "accel")]
fn encode_accel(
    node: &Arc<dyn ExecutionPlan>,
    codec: &VariantPhysicalCodec,
) -> Result<Option<node::Kind>> {
    let Some(exec) = node.downcast_ref::<StringGroupCountExec>() else {
        return Ok(None);
    };
    Ok(Some(node::Kind::GroupCount(GroupCountNode {
        group: Some(serialize_physical_expr(exec.group(), codec)?),
        schema: Some(exec.schema().as_ref().try_into()?),
    })))
}

/// Without the `accel` feature there is no such operator.
#[cfg(not(feature = "accel"))]
#[allow(clippy::unnecessary_wraps)]
fn encode_accel(
    _node: &Arc<dyn ExecutionPlan>,
    _codec: &VariantPhysicalCodec,
) -> Result<Option<node::Kind>> {
    Ok(None)
}

impl VariantPhysicalCodec {
    fn encode_memory(&self, exec: &ShreddedMemoryExec) -> Result<MemoryNode> {
        let partitions = exec
            .partitions()
            .iter()
            .map(|batches| {
                let batches = batches
                    .iter()
                    .map(|b| {
                        let mut buf = Vec::new();
                        let mut w =
                            arrow_ipc::writer::StreamWriter::try_new(&mut buf, &b.schema())?;
                        w.write(b)?;
                        w.finish()?;
                        drop(w);
                        Ok(buf)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(MemoryPartitionNode { batches })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MemoryNode {
            table_schema: Some(exec.table_schema().as_ref().try_into()?),
            partitions,
            exprs: exec
                .exprs()
                .iter()
                .map(|(e, _)| serialize_physical_expr(e, self))
                .collect::<Result<_>>()?,
            names: exec.exprs().iter().map(|(_, n)| n.clone()).collect(),
            pushdown: exec.pushdown(),
        })
    }

    fn decode_memory(&self, node: MemoryNode, ctx: &TaskContext) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = decode_schema(node.table_schema.as_ref(), "ShreddedMemoryExec")?;
        let partitions = node
            .partitions
            .iter()
            .map(|p| {
                p.batches
                    .iter()
                    .map(|bytes| {
                        crate::boundary::guard("ShreddedMemoryExec", || {
                            let reader = arrow_ipc::reader::StreamReader::try_new(
                                std::io::Cursor::new(bytes),
                                None,
                            )?;
                            let mut batches = reader.collect::<Result<Vec<_>, _>>()?;
                            match (batches.pop(), batches.is_empty()) {
                                (Some(b), true) => Ok(b),
                                _ => internal_err!(
                                    "ShreddedMemoryExec: a stored batch is not one IPC batch"
                                ),
                            }
                        })
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        if node.exprs.len() != node.names.len() {
            return internal_err!(
                "ShreddedMemoryExec: {} expressions, {} names",
                node.exprs.len(),
                node.names.len()
            );
        }
        let exprs = node
            .exprs
            .iter()
            .zip(node.names)
            .map(|(e, name)| Ok((parse_physical_expr(e, ctx, &schema, self)?, name)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(ShreddedMemoryExec::try_new(
            schema,
            Arc::new(partitions),
            exprs,
            node.pushdown,
        )?))
    }

    fn encode_scan(&self, scan: &VariantScanExec) -> Result<ScanNode> {
        if let Some(adapter) = scan.base_adapter() {
            return internal_err!(
                "VariantScanExec cannot be serialized: its scan has an expression adapter \
                 of its own under df-variant's ({adapter:?}), which datafusion-proto cannot carry"
            );
        }
        let Some(config) = scan_config(scan.input()) else {
            return internal_err!(
                "VariantScanExec cannot be serialized over {} (expected a Parquet scan)",
                scan.input().name()
            );
        };
        let predicates = scan
            .extractions()
            .predicates
            .iter()
            .map(|p| serialize_physical_expr(p, self))
            .collect::<Result<_>>()?;
        let mut files = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for file in config.file_groups.iter().flat_map(FileGroup::files) {
            let location = file.object_meta.location.as_ref();
            let bounds = file.extensions.get::<Arc<PathBounds>>();
            let access = file.extensions.get::<ParquetAccessPlan>();
            // A file split into byte ranges is listed once.
            if (bounds.is_none() && access.is_none()) || !seen.insert(location) {
                continue;
            }
            let mut node = match bounds {
                Some(b) => encode_bounds(location, b)?,
                None => FileBoundsNode {
                    location: location.to_string(),
                    ..FileBoundsNode::default()
                },
            };
            node.access = access.map(encode_access).unwrap_or_default();
            files.push(node);
        }
        Ok(ScanNode {
            pushdown: scan.pushdown(),
            predicates,
            files,
        })
    }

    fn decode_scan(
        &self,
        node: ScanNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = one_input("VariantScanExec", inputs)?;
        let Some(config) = scan_config(input) else {
            return internal_err!(
                "VariantScanExec decoded over {}, expected a Parquet scan",
                input.name()
            );
        };
        let table_schema = Arc::clone(config.file_source().table_schema().table_schema());
        let predicates = node
            .predicates
            .iter()
            .map(|p| parse_physical_expr(p, ctx, &table_schema, self))
            .collect::<Result<Vec<_>>>()?;
        let mut bounds = HashMap::new();
        for mut file in node.files {
            let access = decode_access(std::mem::take(&mut file.access));
            let has_bounds = file.has_bounds;
            let (location, b) = decode_bounds(file)?;
            bounds.insert(location, (has_bounds.then(|| Arc::new(b)), access));
        }
        let groups = config
            .file_groups
            .iter()
            .map(|group| with_bounds(group, &bounds))
            .collect();
        let config = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(groups)
            .build();
        let config = crate::parquet::guarded_scan_config(&config, ctx.runtime_env().as_ref())?;
        let scan =
            VariantScanExec::wrap(&config, node.pushdown).with_pruning_predicates(predicates);
        if self.drop_adapters {
            // The planted fault: the node without the adapter on its scan.
            let extractions = scan.extractions().clone();
            let input = DataSourceExec::from_data_source(config.clone());
            return Ok(Arc::new(
                VariantScanExec::new(input, config, extractions, None).with_pushdown(node.pushdown),
            ));
        }
        Ok(Arc::new(scan))
    }

    fn encode_sink(&self, exec: &DataSinkExec) -> Result<node::Kind> {
        let sort_order = match exec.sort_order() {
            Some(order) => order
                .iter()
                .map(|r| {
                    Ok(SortNode {
                        expr: Some(serialize_physical_expr(&r.expr, self)?),
                        has_options: r.options.is_some(),
                        descending: r.options.is_some_and(|o| o.descending),
                        nulls_first: r.options.is_some_and(|o| o.nulls_first),
                    })
                })
                .collect::<Result<_>>()?,
            None => Vec::new(),
        };
        if let Some(sink) = exec.sink().downcast_ref::<VariantParquetSink>() {
            let (config, parquet_options, mode, options) = sink.parts();
            let plain = datafusion::datasource::file_format::parquet::ParquetSink::new(
                config.clone(),
                parquet_options.clone(),
            );
            return Ok(node::Kind::ParquetSink(ParquetSinkNode {
                sink: Some(protobuf::ParquetSink::try_from(&plain)?),
                mode: match mode {
                    ShreddingMode::Off => "off".to_string(),
                    ShreddingMode::Auto => "auto".to_string(),
                    ShreddingMode::Schema(s) => format!("schema:{s}"),
                },
                options: options_map(options),
                sort_order,
            }));
        }
        #[cfg(feature = "delta")]
        if let Some(sink) = exec.sink().downcast_ref::<crate::delta::DeltaSink>() {
            let (url, schema, create) = sink.parts();
            let create = match create {
                Some(t) => Some(NewTableNode {
                    schema: Some(t.schema.as_ref().try_into()?),
                    partition_columns: t.partition_columns.clone(),
                    configuration: t.configuration.clone(),
                    reader_features: t.reader_features.clone(),
                    writer_features: t.writer_features.clone(),
                }),
                None => None,
            };
            return Ok(node::Kind::DeltaSink(DeltaSinkNode {
                url: url.to_string(),
                schema: Some(schema.as_ref().try_into()?),
                create,
                sort_order,
            }));
        }
        internal_err!(
            "df-variant's codec cannot serialize a DataSinkExec writing to {:?}: not a sink of df-variant",
            exec.sink()
        )
    }

    fn decode_sort_order(
        &self,
        nodes: &[SortNode],
        input: &Arc<dyn ExecutionPlan>,
        ctx: &TaskContext,
    ) -> Result<Option<LexRequirement>> {
        let schema = input.schema();
        let reqs = nodes
            .iter()
            .map(|n| {
                let expr = n.expr.as_ref().ok_or_else(|| {
                    internal_datafusion_err!("sort requirement without expression")
                })?;
                let expr = parse_physical_expr(expr, ctx, &schema, self)?;
                let options = n.has_options.then_some(arrow::compute::SortOptions {
                    descending: n.descending,
                    nulls_first: n.nulls_first,
                });
                Ok(PhysicalSortRequirement::new(expr, options))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(LexRequirement::new(reqs))
    }

    fn decode_parquet_sink(
        &self,
        node: ParquetSinkNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = one_input("DataSinkExec", inputs)?;
        let proto = node
            .sink
            .as_ref()
            .ok_or_else(|| internal_datafusion_err!("VariantParquetSink without its sink"))?;
        let plain = datafusion::datasource::file_format::parquet::ParquetSink::try_from(proto)?;
        let mode = match node.mode.as_str() {
            "off" => ShreddingMode::Off,
            "auto" => ShreddingMode::Auto,
            other => match other.strip_prefix("schema:") {
                Some(ddl) => ShreddingMode::Schema(ddl.to_string()),
                None => return internal_err!("unknown shredding mode '{other}'"),
            },
        };
        let options = options_from_map(&node.options)?;
        let sink = VariantParquetSink::new(
            plain.config().clone(),
            plain.parquet_options().clone(),
            mode,
            options,
        );
        let order = self.decode_sort_order(&node.sort_order, input, ctx)?;
        Ok(Arc::new(DataSinkExec::new(
            Arc::clone(input),
            Arc::new(sink),
            order,
        )))
    }

    #[cfg_attr(not(feature = "delta"), allow(clippy::unused_self))]
    fn decode_delta_sink(
        &self,
        node: DeltaSinkNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        #[cfg(feature = "delta")]
        {
            let input = one_input("DataSinkExec", inputs)?;
            let url = url::Url::parse(&node.url)
                .map_err(|e| internal_datafusion_err!("Delta sink URL '{}': {e}", node.url))?;
            let schema = decode_schema(node.schema.as_ref(), "Delta sink")?;
            let create = match node.create {
                // Checked when it was first made, on the coordinator.
                Some(t) => Some(crate::delta::NewTable {
                    schema: decode_schema(t.schema.as_ref(), "Delta table to create")?,
                    partition_columns: t.partition_columns,
                    configuration: t.configuration,
                    reader_features: t.reader_features,
                    writer_features: t.writer_features,
                }),
                None => None,
            };
            let sink = crate::delta::DeltaSink::new(url, schema, create);
            let order = self.decode_sort_order(&node.sort_order, input, ctx)?;
            Ok(Arc::new(DataSinkExec::new(
                Arc::clone(input),
                Arc::new(sink),
                order,
            )))
        }
        #[cfg(not(feature = "delta"))]
        {
            let _ = (inputs, ctx);
            internal_err!(
                "a plan writes the Delta table {}, but df-variant was built without the `delta` feature",
                node.url
            )
        }
    }
}

fn one_input<'a>(
    name: &str,
    inputs: &'a [Arc<dyn ExecutionPlan>],
) -> Result<&'a Arc<dyn ExecutionPlan>> {
    match inputs {
        [input] => Ok(input),
        _ => internal_err!("{name} needs one input, got {}", inputs.len()),
    }
}

fn decode_schema(
    schema: Option<&protobuf::Schema>,
    what: &str,
) -> Result<arrow::datatypes::SchemaRef> {
    let schema = schema.ok_or_else(|| internal_datafusion_err!("{what} without a schema"))?;
    Ok(Arc::new(arrow::datatypes::Schema::try_from(schema)?))
}

fn encode_bounds(location: &str, bounds: &PathBounds) -> Result<FileBoundsNode> {
    let scalar = |s: &Option<ScalarValue>| -> Result<Option<protobuf::ScalarValue>> {
        s.as_ref()
            .map(protobuf::ScalarValue::try_from)
            .transpose()
            .map_err(Into::into)
    };
    let mut paths = bounds
        .paths
        .iter()
        .map(|((column, keys), (min, max))| {
            Ok(PathBoundNode {
                column: column.clone(),
                keys: keys.clone(),
                min: scalar(min)?,
                max: scalar(max)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // One encoding per plan, whatever the map's order.
    paths.sort_by(|a, b| (&a.column, &a.keys).cmp(&(&b.column, &b.keys)));
    Ok(FileBoundsNode {
        location: location.to_string(),
        num_rows: bounds.num_rows,
        paths,
        access: Vec::new(),
        has_bounds: true,
    })
}

fn encode_access(plan: &ParquetAccessPlan) -> Vec<RowGroupAccessNode> {
    plan.inner()
        .iter()
        .map(|a| match a {
            RowGroupAccess::Skip => RowGroupAccessNode {
                skip: true,
                selectors: Vec::new(),
            },
            RowGroupAccess::Scan => RowGroupAccessNode::default(),
            RowGroupAccess::Selection(selection) => RowGroupAccessNode {
                skip: false,
                selectors: selection
                    .iter()
                    .map(|s| {
                        let n = i64::try_from(s.row_count).unwrap_or(i64::MAX);
                        if s.skip { -n } else { n }
                    })
                    .collect(),
            },
        })
        .collect()
}

fn decode_access(nodes: Vec<RowGroupAccessNode>) -> Option<ParquetAccessPlan> {
    if nodes.is_empty() {
        return None;
    }
    Some(ParquetAccessPlan::new(
        nodes
            .into_iter()
            .map(|n| {
                if n.skip {
                    RowGroupAccess::Skip
                } else if n.selectors.is_empty() {
                    RowGroupAccess::Scan
                } else {
                    RowGroupAccess::Selection(RowSelection::from(
                        n.selectors
                            .iter()
                            .map(|&k| {
                                let rows = usize::try_from(k.unsigned_abs()).unwrap_or(usize::MAX);
                                if k < 0 {
                                    RowSelector::skip(rows)
                                } else {
                                    RowSelector::select(rows)
                                }
                            })
                            .collect::<Vec<_>>(),
                    ))
                }
            })
            .collect(),
    ))
}

fn decode_bounds(node: FileBoundsNode) -> Result<(String, PathBounds)> {
    let scalar = |s: Option<protobuf::ScalarValue>| -> Result<Option<ScalarValue>> {
        s.as_ref()
            .map(ScalarValue::try_from)
            .transpose()
            .map_err(Into::into)
    };
    let mut paths = HashMap::new();
    for p in node.paths {
        paths.insert((p.column, p.keys), (scalar(p.min)?, scalar(p.max)?));
    }
    Ok((
        node.location,
        PathBounds {
            num_rows: node.num_rows,
            paths,
        },
    ))
}

/// Each file's bounds and access plan, by location.
type FileExtras = HashMap<String, (Option<Arc<PathBounds>>, Option<ParquetAccessPlan>)>;

/// `group` with each file's bounds and access plan attached again (by location).
fn with_bounds(group: &FileGroup, bounds: &FileExtras) -> FileGroup {
    let files = group
        .files()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some((b, access)) = bounds.get(f.object_meta.location.as_ref()) {
                if let Some(b) = b {
                    f.extensions.insert(Arc::clone(b));
                }
                if let Some(access) = access {
                    f.extensions.insert(access.clone());
                }
            }
            f
        })
        .collect();
    let out = FileGroup::new(files);
    match group.clone().statistics_mut() {
        Some(s) => out.with_statistics(Arc::new(s.clone())),
        None => out,
    }
}

fn encode_json(exec: &ReadJsonVariantExec) -> Result<JsonNode> {
    let parts = exec.parts();
    let files = parts
        .files
        .iter()
        .map(|f| {
            let path = f.path.to_str().ok_or_else(|| {
                internal_datafusion_err!(
                    "ReadJsonVariantExec: path {} is not UTF-8",
                    f.path.display()
                )
            })?;
            Ok(InputFileNode {
                path: path.to_string(),
                size: f.size,
            })
        })
        .collect::<Result<_>>()?;
    let groups = parts
        .groups
        .iter()
        .map(|g| RangeGroupNode {
            ranges: g
                .iter()
                .map(|r| RangeNode {
                    file: r.file as u64,
                    start: r.start,
                    end: r.end,
                })
                .collect(),
        })
        .collect();
    Ok(JsonNode {
        function: parts.function.to_string(),
        files,
        groups,
        schema: Some(parts.schema.as_ref().try_into()?),
        tolerant: parts.tolerant,
        allow_duplicate_keys: parts.json.allow_duplicate_keys,
        max_depth: parts.json.max_depth as u64,
        reject_trailing_content: parts.json.reject_trailing_content,
        chunk_size: parts.chunk_size as u64,
    })
}

fn decode_json(node: JsonNode) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(function) = crate::ingest::function_name(&node.function) else {
        return internal_err!(
            "ReadJsonVariantExec of unknown function '{}'",
            node.function
        );
    };
    let files: Arc<[InputFile]> = node
        .files
        .into_iter()
        .map(|f| InputFile {
            path: PathBuf::from(f.path),
            size: f.size,
        })
        .collect();
    let groups = node
        .groups
        .into_iter()
        .map(|g| {
            g.ranges
                .into_iter()
                .map(|r| {
                    let file = usize::try_from(r.file)
                        .ok()
                        .filter(|&i| i < files.len())
                        .ok_or_else(|| {
                            internal_datafusion_err!("ReadJsonVariantExec: no file {}", r.file)
                        })?;
                    Ok(FileRange {
                        file,
                        start: r.start,
                        end: r.end,
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let schema = node
        .schema
        .as_ref()
        .ok_or_else(|| internal_datafusion_err!("ReadJsonVariantExec without a schema"))?;
    let schema = Arc::new(arrow::datatypes::Schema::try_from(schema)?);
    let json = JsonParseOptions {
        allow_duplicate_keys: node.allow_duplicate_keys,
        max_depth: usize::try_from(node.max_depth).unwrap_or(usize::MAX),
        reject_trailing_content: node.reject_trailing_content,
        // Only from_json reads NaN; NDJSON files are strict JSON.
        allow_nan: false,
    };
    Ok(Arc::new(
        ReadJsonVariantExec::new(function, files, groups, schema, node.tolerant)
            .with_json_options(json)
            .with_chunk_size(usize::try_from(node.chunk_size).unwrap_or(usize::MAX)),
    ))
}

/// The `variant.*` settings as `key -> value`.
fn options_map(options: &VariantOptions) -> HashMap<String, String> {
    use datafusion::config::ExtensionOptions;
    options
        .entries()
        .into_iter()
        .filter_map(|e| e.value.map(|v| (e.key, v)))
        .collect()
}

fn options_from_map(map: &HashMap<String, String>) -> Result<VariantOptions> {
    use datafusion::config::ExtensionOptions;
    let mut options = VariantOptions::default();
    for (key, value) in map {
        let key = key
            .strip_prefix(VariantOptions::PREFIX)
            .and_then(|k| k.strip_prefix('.'))
            .unwrap_or(key);
        options.set(key, value)?;
    }
    Ok(options)
}
