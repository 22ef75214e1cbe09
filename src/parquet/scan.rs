//! [`VariantScanExec`]: the scan node of the shredded pushdown. It wraps a
//! Parquet scan whose projection holds extractions (DataFusion moves
//! `variant_get` calls with literal arguments into the scan, see
//! `VariantGetFunc::placement` and [`crate::optimizer`]) and, per file, before the
//! scan opens it:
//!
//! 1. skips the file on the per-path bounds of a table log (Delta `add.stats`);
//! 2. reads the footer and page index (through DataFusion's metadata cache, so
//!    the scan does not read them again);
//! 3. plans row-group and page pruning on the statistics of the paths' leaves
//!    ([`super::pruning`]) and hands the surviving row groups and row ranges to the
//!    scan as a `ParquetAccessPlan`;
//! 4. tells the scan's expression adapter which residuals are all null in the row
//!    groups it reads, so those extractions read only the typed leaf;
//! 5. serves the file scan from the session's hot-data cache when the same scan
//!    of the same file ran before, and keeps it there when it did not
//!    ([`super::scan_cache`]).
//!
//! Pruning is an optimization: a file whose statistics cannot be read is read
//! whole, and counted in the `pruning_errors` metric (which the tests require to
//! stay 0).

use std::any::Any;
use std::fmt::{self, Formatter};
use std::sync::Arc;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;

use super::footer::check_parquet_footer;
use super::pruning::{FilePlan, FilePlanner};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileScanConfigBuilder, FileSource, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::{conjunction, split_conjunction};
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::{StreamExt, TryStreamExt};
use parquet::file::metadata::PageIndexPolicy;

use super::adapter::VariantExprAdapterFactory;
use super::bounds::PathBounds;
use super::shredded_get::{Extraction, ValueFreeNodes};

/// The extractions of a scan: the projected ones and those in the filter above.
#[derive(Debug, Clone, Default)]
pub struct ScanExtractions {
    /// Extractions the scan produces (its projection).
    pub projected: Vec<Extraction>,
    /// The filter's conjuncts that involve an extraction, over the scan's file
    /// (table) schema.
    pub predicates: Vec<Arc<dyn PhysicalExpr>>,
}

/// The counters of the hot-data cache, registered on a partition's first hit
/// so that a scan the cache did not serve shows none.
#[derive(Debug)]
struct CacheMetrics {
    metrics: ExecutionPlanMetricsSet,
    partition: usize,
    counters: std::sync::OnceLock<(Count, Count)>,
}

impl CacheMetrics {
    fn new(metrics: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        Self {
            metrics: metrics.clone(),
            partition,
            counters: std::sync::OnceLock::new(),
        }
    }

    /// One file scan served from the cache.
    fn hit(&self, batches: &[RecordBatch]) {
        let (hits, rows) = self.counters.get_or_init(|| {
            let c = |name: &'static str| {
                MetricBuilder::new(&self.metrics).counter(name, self.partition)
            };
            (c("scan_cache_hits"), c("scan_cache_hit_rows"))
        });
        hits.add(1);
        rows.add(batches.iter().map(RecordBatch::num_rows).sum());
    }
}

/// Wraps a Parquet `DataSourceExec` (see the module docs).
///
/// Every Parquet scan over a VARIANT column is wrapped, also when it extracts
/// nothing (then it only runs its child): the node marks the scan whose
/// expression adapter and per-file bounds a serialized plan cannot carry, so that
/// [`crate::codec`] re-installs them on the other side.
#[derive(Debug)]
pub struct VariantScanExec {
    input: Arc<dyn ExecutionPlan>,
    /// The scan's configuration when the node was planned; execution reads the
    /// child's (after a split into tasks, each task has its own files).
    config: FileScanConfig,
    extractions: ScanExtractions,
    /// The scan's own expression adapter, under ours.
    base_adapter: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    /// Whether extractions read shredded leaves (`variant.pushdown`).
    pushdown: bool,
    metrics: ExecutionPlanMetricsSet,
}

impl VariantScanExec {
    /// Wraps `input`, a `DataSourceExec` over `config`; `base_adapter` is the
    /// scan's expression adapter factory before ours was installed.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        config: FileScanConfig,
        extractions: ScanExtractions,
        base_adapter: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    ) -> Self {
        Self {
            input,
            config,
            extractions,
            base_adapter,
            pushdown: true,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// A Parquet scan over `config` with our expression adapter installed (over
    /// the scan's own, kept as the base), wrapped; with `pushdown` the extractions
    /// of its projection are pushed. The physical rule and the plan codec build
    /// their scans with it.
    pub fn wrap(config: &FileScanConfig, pushdown: bool) -> Self {
        let base = config.expr_adapter_factory.clone();
        let factory = VariantExprAdapterFactory::new(base.clone()).with_pushdown(pushdown);
        let config = FileScanConfigBuilder::from(config.clone())
            .with_expr_adapter(Some(Arc::new(factory)))
            .build();
        let projected = if pushdown {
            config
                .file_source()
                .projection()
                .map(|p| p.expr_iter().flat_map(|e| extractions_in(&e)).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let extractions = ScanExtractions {
            projected,
            predicates: Vec::new(),
        };
        let input = DataSourceExec::from_data_source(config.clone());
        Self::new(input, config, extractions, base).with_pushdown(pushdown)
    }

    /// The same node pruning on `predicates` (over the scan's table schema), as
    /// they were handed to it when it was planned; the scan itself is unchanged.
    #[cfg(feature = "proto")]
    pub(crate) fn with_pruning_predicates(
        mut self,
        predicates: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Self {
        self.extractions.predicates = predicates;
        self
    }

    /// The same node with the shredded pushdown on or off (as its adapter has it).
    pub fn with_pushdown(mut self, pushdown: bool) -> Self {
        self.pushdown = pushdown;
        self
    }

    /// Whether extractions read shredded leaves.
    pub fn pushdown(&self) -> bool {
        self.pushdown
    }

    /// The scan's own expression adapter factory, under ours (`None`: DataFusion's
    /// default).
    pub fn base_adapter(&self) -> Option<&Arc<dyn PhysicalExprAdapterFactory>> {
        self.base_adapter.as_ref()
    }

    /// The extractions this scan pushes and prunes on.
    pub fn extractions(&self) -> &ScanExtractions {
        &self.extractions
    }

    /// The wrapped scan's configuration.
    pub fn config(&self) -> &FileScanConfig {
        &self.config
    }

    /// The wrapped scan.
    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }

    /// Nothing to push or prune on: the node only carries the adapter.
    fn adapter_only(&self) -> bool {
        self.extractions.projected.is_empty() && self.extractions.predicates.is_empty()
    }

    /// The same scan with more filter predicates to prune on. They are also the
    /// Parquet scan's row filter (late materialization) when it evaluates
    /// filters while decoding (`pushdown_filters`, as the table was created
    /// with), or when `late` (`variant.late_materialization`) and the scan
    /// reassembles VARIANT values the predicates do not read (`reads_beyond`).
    pub fn with_predicates(
        &self,
        predicates: Vec<Arc<dyn PhysicalExpr>>,
        late: bool,
    ) -> Result<Self> {
        let mut extractions = self.extractions.clone();
        let mut added = Vec::new();
        for p in predicates {
            if !extractions
                .predicates
                .iter()
                .any(|q| q.as_ref() == p.as_ref())
            {
                extractions.predicates.push(Arc::clone(&p));
                added.push(p);
            }
        }
        let late = late && reads_beyond(&self.config, &extractions.predicates);
        let (input, config) = match self.config.file_source().downcast_ref::<ParquetSource>() {
            Some(source)
                if (late || source.table_parquet_options().global.pushdown_filters)
                    && !added.is_empty() =>
            {
                let combined = conjunction(source.filter().into_iter().chain(added));
                let source = source.with_predicate(combined).with_pushdown_filters(true);
                let config = FileScanConfigBuilder::from(self.config.clone())
                    .with_source(Arc::new(source))
                    .build();
                (
                    DataSourceExec::from_data_source(config.clone()) as Arc<dyn ExecutionPlan>,
                    config,
                )
            }
            _ => (Arc::clone(&self.input), self.config.clone()),
        };
        Ok(
            Self::new(input, config, extractions, self.base_adapter.clone())
                .with_pushdown(self.pushdown),
        )
    }

    /// Every distinct extraction, projected or filtered on.
    fn all_extractions(&self) -> Vec<Extraction> {
        let mut out: Vec<Extraction> = Vec::new();
        let mut add = |e: Extraction| {
            if !out.iter().any(|o| o.describe() == e.describe()) {
                out.push(e);
            }
        };
        for e in &self.extractions.projected {
            add(e.clone());
        }
        for p in &self.extractions.predicates {
            for e in extractions_in(p) {
                add(e);
            }
        }
        out
    }
}

/// The extractions inside an expression.
pub fn extractions_in(expr: &Arc<dyn PhysicalExpr>) -> Vec<Extraction> {
    let mut out = Vec::new();
    let _ = expr.apply(|e| {
        if let Some(x) = Extraction::of(e.as_ref()) {
            out.push(x);
            return Ok(TreeNodeRecursion::Jump);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    out
}

/// Whether the scan's projection holds VARIANT values that `predicates` do not
/// read: a whole VARIANT column, or an extraction whose result is a VARIANT
/// (an object or array is reassembled per row). Then filtering while decoding
/// saves that reassembly for the rows that fail. Typed extractions are cheap
/// to decode: for them a row filter costs more than it saves unless the filter
/// is very selective (JSONBench's Q2-Q5, which keep 20-90 % of the rows, take
/// 1.2-1.6x as long with one), which the plan cannot tell.
pub fn reads_beyond(config: &FileScanConfig, predicates: &[Arc<dyn PhysicalExpr>]) -> bool {
    use datafusion::physical_expr::utils::collect_columns;
    let made: Vec<String> = predicates
        .iter()
        .flat_map(extractions_in)
        .map(|e| e.describe())
        .collect();
    let schema = config.file_schema();
    let is_variant = |index: usize| {
        schema
            .fields()
            .get(index)
            .is_some_and(|f| crate::array::is_variant_type(f.data_type()))
    };
    let Some(projection) = config.file_source().projection() else {
        // Every column of the file.
        return (0..schema.fields().len()).any(is_variant);
    };
    projection.expr_iter().any(|e| {
        let extractions = extractions_in(&e);
        if !extractions.is_empty() {
            return extractions
                .iter()
                .any(|x| x.target.is_none() && !made.contains(&x.describe()));
        }
        collect_columns(&e).iter().any(|c| is_variant(c.index()))
    })
}

impl DisplayAs for VariantScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "VariantScanExec: ")?;
        let pushed: Vec<String> = self
            .extractions
            .projected
            .iter()
            .map(Extraction::describe)
            .collect();
        write!(f, "extractions=[{}]", pushed.join(", "))?;
        if !self.extractions.predicates.is_empty() {
            let preds: Vec<String> = self
                .extractions
                .predicates
                .iter()
                .map(std::string::ToString::to_string)
                .collect();
            write!(f, ", pruning_predicate=[{}]", preds.join(", "))?;
        }
        if !self.pushdown {
            write!(f, ", pushdown=off")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for VariantScanExec {
    fn name(&self) -> &'static str {
        "VariantScanExec"
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        // The pruning predicates are over the file schema, not over this node's
        // input: they are not expressions of the plan.
        Ok(TreeNodeRecursion::Continue)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = children.pop().ok_or_else(|| {
            datafusion::common::internal_datafusion_err!("VariantScanExec needs its scan")
        })?;
        // A rebuilt child is a new scan: take its configuration. Another child
        // (a distributed planner's per-task leaf) keeps the node: each task's
        // plan gets its own Parquet scan back before it runs.
        let config = scan_config(&input)
            .cloned()
            .unwrap_or_else(|| self.config.clone());
        Ok(Arc::new(Self {
            input,
            config,
            extractions: self.extractions.clone(),
            base_adapter: self.base_adapter.clone(),
            pushdown: self.pushdown,
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // The hot-data cache (`scan_cache.rs`). A lowered
        // `variant.scan_cache_size` (`0`: off) applies at once.
        let capacity = super::scan_cache::capacity(&context);
        let scan_cache = context
            .session_config()
            .get_extension::<super::ScanCache>()
            .inspect(|cache| cache.shrink_to(capacity))
            .filter(|_| capacity > 0);
        // Nothing to push or prune: the wrapped scan runs as planned, unless
        // the cache may serve it (a full-object read such as `to_json(v)`
        // repeats like any other), which works file by file.
        if self.adapter_only() && scan_cache.is_none() {
            let what = match scan_config(&self.input)
                .unwrap_or(&self.config)
                .file_groups
                .get(partition)
            {
                Some(group) => reading_files(group.files()),
                None => format!("partition {partition} of a Parquet scan"),
            };
            let stream = self.input.execute(partition, context)?;
            return Ok(crate::boundary::catch_stream_panics(stream, what));
        }
        // Over a distributed planner's per-task leaf that runs here (one task),
        // the leaf runs the scan it was made from: the planned one.
        let config = scan_config(&self.input).unwrap_or(&self.config);
        let files = config
            .file_groups
            .get(partition)
            .map(|g| g.files().to_vec())
            .unwrap_or_default();
        let store = context
            .runtime_env()
            .object_store(&config.object_store_url)?;
        let cache = context
            .runtime_env()
            .cache_manager
            .get_file_metadata_cache();
        let metrics = super::report::ScanMetrics::new(&self.metrics, partition);
        let planner = Arc::new(FilePlanner::new(
            self.all_extractions(),
            &self.extractions.predicates,
            config.file_schema(),
        ));
        // The key part every file shares, or none where the scan's output may
        // change under the same key.
        let scan_cache = scan_cache.and_then(|cache| {
            super::scan_cache::scan_key(
                config,
                self.base_adapter.is_some(),
                self.pushdown,
                &context,
            )
            .map(|key| (cache, Arc::<str>::from(key)))
        });
        let cache_metrics = Arc::new(CacheMetrics::new(&self.metrics, partition));
        let config = config.clone();
        let base_adapter = self.base_adapter.clone();
        let pushdown = self.pushdown;
        let limit = config.limit;
        let schema = self.schema();
        let file_schema_out = Arc::clone(&schema);
        let stream = futures::stream::iter(files)
            .then(move |file| {
                let store = Arc::clone(&store);
                let cache = Arc::clone(&cache);
                let planner = Arc::clone(&planner);
                let config = config.clone();
                let context = Arc::clone(&context);
                let metrics = metrics.clone();
                let base_adapter = base_adapter.clone();
                let schema = Arc::clone(&file_schema_out);
                let scan_cache = scan_cache.clone();
                let cache_metrics = Arc::clone(&cache_metrics);
                async move {
                    // Bounds from the table's log: skip the file, footer unread.
                    if let Some(bounds) = file.extensions.get::<Arc<PathBounds>>()
                        && !planner.keep_file(bounds)
                    {
                        metrics.files_pruned.add(1);
                        let reads = planner.skipped_reads();
                        metrics.extractions.add(&reads);
                        log_reads(&context, &file, &reads)?;
                        return Ok(Box::pin(RecordBatchStreamAdapter::new(
                            schema,
                            futures::stream::empty(),
                        )) as SendableRecordBatchStream);
                    }
                    if !super::footer::cached(Some(&cache), &file.object_meta) {
                        check_parquet_footer(store.as_ref(), &file.object_meta).await?;
                    }
                    let metadata = DFParquetMetadata::new(store.as_ref(), &file.object_meta)
                        .with_file_metadata_cache(Some(cache))
                        .with_metadata_size_hint(file.metadata_size_hint)
                        .with_page_index_policy(Some(PageIndexPolicy::Optional))
                        .fetch_metadata()
                        .await?;
                    super::footer::check_parquet_metadata(
                        &super::footer::shown(file.object_meta.location.as_ref()),
                        file.object_meta.size,
                        &metadata,
                    )
                    .map_err(datafusion::common::DataFusionError::Execution)?;
                    // Pruning is an optimization: statistics it cannot read (or a
                    // panic in a reader of odd statistics) leave the file whole,
                    // and the scan itself reports a file it cannot read.
                    let plan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        planner.plan(&metadata, &file, &metrics)
                    }))
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_else(|| {
                        metrics.pruning_errors.add(1);
                        FilePlan {
                            access: None,
                            value_free: ValueFreeNodes::new(),
                            reads: Vec::new(),
                        }
                    });
                    metrics.extractions.add(&plan.reads);
                    log_reads(&context, &file, &plan.reads)?;
                    let what = reading_files(std::slice::from_ref(&file));
                    let mut file = file;
                    if let Some(access) = plan.access {
                        file.extensions.insert(access);
                    }
                    let cached = match scan_cache {
                        Some((cache, scan)) => {
                            let footer =
                                super::scan_cache::footer_digest(store.as_ref(), &file.object_meta)
                                    .await?;
                            let key =
                                super::scan_cache::file_key(&scan, &file, &plan.value_free, footer);
                            Some((cache, key))
                        }
                        None => None,
                    };
                    if let Some((cache, key)) = &cached
                        && let Some(batches) = cache.get(key)
                    {
                        cache_metrics.hit(&batches);
                        return Ok(super::scan_cache::replay(schema, batches));
                    }
                    // The node's own adapter, per file: with `variant.pushdown`
                    // off (as planned) extractions read whole values.
                    let factory = VariantExprAdapterFactory::new(base_adapter)
                        .with_pushdown(pushdown)
                        .with_value_free_nodes(Arc::new(plan.value_free));
                    let single = FileScanConfigBuilder::from(config)
                        .with_file_groups(vec![FileGroup::new(vec![file])])
                        .with_expr_adapter(Some(Arc::new(factory)))
                        .build();
                    let pool = Arc::clone(&context.runtime_env().memory_pool);
                    let stream = DataSourceExec::from_data_source(single)
                        .execute(0, context)
                        .map(|stream| crate::boundary::catch_stream_panics(stream, what))?;
                    Ok::<_, datafusion::common::DataFusionError>(match cached {
                        Some((cache, key)) => {
                            super::scan_cache::keep(stream, cache, key, capacity, pool)
                        }
                        None => stream,
                    })
                }
            })
            .try_flatten();
        let stream = match limit {
            None => stream.boxed(),
            Some(limit) => {
                let mut remaining = limit;
                stream
                    .try_filter_map(move |batch| {
                        let take = remaining.min(batch.num_rows());
                        remaining -= take;
                        futures::future::ready(Ok((take > 0).then(|| batch.slice(0, take))))
                    })
                    .boxed()
            }
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}

/// Adds one file scan's extractions to the session's workload log
/// ([`crate::workload`]), and to `variant.workload_log`'s folder when set.
fn log_reads(
    context: &TaskContext,
    file: &PartitionedFile,
    reads: &[crate::workload::ExtractionRead],
) -> Result<()> {
    let config = context.session_config();
    let Some(log) = config.get_extension::<crate::workload::WorkloadLog>() else {
        return Ok(());
    };
    let dir = crate::workload::log_dir(config.options());
    let with_sql = config
        .options()
        .extensions
        .get::<crate::config::VariantOptions>()
        .is_some_and(|o| o.workload_log_sql);
    let key = format!("/{}", file.object_meta.location);
    log.record(&key, reads, dir.as_deref(), with_sql)
}

/// What a partition reading `files` reads, for its errors: the file, or the
/// first few of several (the failing one among them).
fn reading_files(files: &[PartitionedFile]) -> String {
    let names: Vec<String> = files
        .iter()
        .take(3)
        .map(|f| super::footer::shown(f.object_meta.location.as_ref()))
        .collect();
    match files.len() {
        1 => format!("reading {}", names[0]),
        n if n <= 3 => format!("reading one of {}", names.join(", ")),
        n => format!(
            "reading one of {} and {} more files",
            names.join(", "),
            n - 3
        ),
    }
}

/// The `FileScanConfig` of a Parquet `DataSourceExec`.
pub fn scan_config(plan: &Arc<dyn ExecutionPlan>) -> Option<&FileScanConfig> {
    let exec = (plan.as_ref() as &dyn Any).downcast_ref::<DataSourceExec>()?;
    let config = (exec.data_source().as_ref() as &dyn Any).downcast_ref::<FileScanConfig>()?;
    (config.file_source().as_ref() as &dyn Any)
        .downcast_ref::<ParquetSource>()
        .map(|_| config)
}

/// Finds the conjuncts of a filter over a scan's output that hold an extraction
/// or an element test (`array_has` over a wildcard's elements), rewritten over
/// the scan's file schema.
pub fn filter_predicates(
    predicate: &Arc<dyn PhysicalExpr>,
    config: &FileScanConfig,
) -> Vec<Arc<dyn PhysicalExpr>> {
    let projection = config.file_source().projection();
    split_conjunction(predicate)
        .into_iter()
        .filter_map(|conjunct| {
            let unprojected = match projection {
                Some(p) => p.unproject_expr(conjunct).ok()?,
                None => Arc::clone(conjunct),
            };
            (!extractions_in(&unprojected).is_empty()
                || super::element_pruning::has_element_test(&unprojected))
            .then_some(unprojected)
        })
        .collect()
}

/// Whether the options turn the pushdown on (`variant.pushdown`, default true).
pub fn pushdown_enabled(config: &ConfigOptions) -> bool {
    config
        .extensions
        .get::<crate::config::VariantOptions>()
        .is_none_or(|o| o.pushdown)
}
