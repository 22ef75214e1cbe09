//! In-memory tables that keep their VARIANT columns shredded.
//!
//! `CREATE TABLE m AS SELECT ...` makes DataFusion's `MemTable`, which holds each
//! VARIANT column as unshredded bytes: every query then walks every value again
//! (JSONBench Q1 over 1M events took 0.146 s, against 0.004 s for the same
//! shredded Parquet file hot). [`crate::with_variant`] installs a catalog
//! ([`crate::catalog`]) whose schemas register every `MemTable` with a VARIANT
//! column as a [`ShreddedMemTable`], whichever way it was made: `ctx.sql`,
//! `sql::query`, the CLI or `register_table`. Its first scan shreds the
//! table's VARIANT columns the way the Parquet writer would, with the
//! session's settings at that scan (`variant.shredding`, `shredding_schema`,
//! the sampling settings), into a new copy that then replaces the old one at
//! once: the `MemTable` handed in is never changed. Its scan,
//! [`ShreddedMemoryExec`], takes the projection above it in (DataFusion's
//! projection pushdown asks it to), and evaluates it per stored batch through
//! the same per-file expression adapter as a Parquet scan: a path extraction
//! reads the shredded leaf, any other use of the column reassembles it.
//!
//! ```text
//! SELECT v:commit.collection::string AS e, count(*) FROM m GROUP BY e
//!   ProjectionExec: expr=[try_variant_get(v@0, $.commit.collection, string) as e]
//!     DataSourceExec: partitions=2, partition_sizes=[64, 59]          (MemTable)
//! =>
//!   ShreddedMemoryExec: partitions=2, shredded=[v],
//!                       projection=[try_variant_get(v@0, $.commit.collection, string) as e]
//! ```
//!
//! Rows inserted later (`INSERT INTO m ...`) are kept as they come, unshredded;
//! each batch is read in its own layout. `DELETE` and `UPDATE` first put every
//! batch back into the unshredded layout, then run as DataFusion's `MemTable`
//! runs them. A table whose rows cannot be shredded (a malformed value, a
//! shredding schema that does not apply, nothing worth shredding) is scanned
//! unshredded, and its `EXPLAIN` says why (`not shredded: ...`).
//! `variant.shredding = off` at the first scan leaves the table DataFusion's
//! `MemTable` scan.

use std::collections::HashMap;
use std::fmt::{self, Formatter};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, LargeListArray, ListArray, RecordBatch, RecordBatchOptions,
    StringViewBuilder, StructArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Constraints, Result, Statistics, internal_datafusion_err};
use datafusion::datasource::{MemTable, TableType};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_plan::coop::make_cooperative;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType, SchedulingType};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

use crate::array::{VariantInput, is_variant_type, variant_data_type};
use crate::config::{ShreddingMode, VariantOptions};
use crate::parquet::{VariantExprAdapterFactory, pushdown_enabled};
use crate::shredding::shred;

/// Whether `table` is one that [`ShreddedMemTable`] keeps: a `MemTable` with a
/// VARIANT column.
pub fn keeps_shredded(table: &dyn TableProvider) -> bool {
    table.downcast_ref::<MemTable>().is_some()
        && table
            .schema()
            .fields()
            .iter()
            .any(|f| f.data_type() == &variant_data_type())
}

/// The partitions of `mem` with their VARIANT columns shredded as `options`
/// say, each partition on a blocking thread; `Err` says why not.
async fn shred_partitions(
    mem: &MemTable,
    options: &VariantOptions,
) -> Result<std::result::Result<Vec<Vec<RecordBatch>>, String>> {
    let schema = mem.schema();
    let mode = options.mode();
    let variant: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.data_type() == &variant_data_type())
        .map(|(i, _)| i)
        .collect();
    let mut partitions = Vec::with_capacity(mem.batches.len());
    for partition in &mem.batches {
        partitions.push(partition.read().await.clone());
    }
    let batches: Vec<RecordBatch> = partitions.iter().flatten().cloned().collect();
    let sampling = options.shredding_options();
    let mut typed = Vec::with_capacity(variant.len());
    for &i in &variant {
        let sample = leading_rows(&batches, i, sampling.sample_rows);
        match mode.typed_value(&sample, &sampling) {
            Ok(t) => typed.push(t),
            Err(e) => {
                let name = schema.field(i).name();
                return Ok(Err(format!("column {name}: {e}")));
            }
        }
    }
    if typed.iter().all(Option::is_none) {
        return Ok(Err("nothing worth shredding in the sampled rows".into()));
    }
    let (variant, typed) = (Arc::new(variant), Arc::new(typed));
    let tasks: Vec<_> = partitions
        .into_iter()
        .map(|partition| {
            let (variant, typed) = (Arc::clone(&variant), Arc::clone(&typed));
            tokio::task::spawn_blocking(move || {
                partition
                    .iter()
                    .map(|b| shred_batch(b, &variant, &typed))
                    .collect::<std::result::Result<Vec<_>, String>>()
            })
        })
        .collect();
    let mut shredded = Vec::with_capacity(tasks.len());
    for task in tasks {
        match task
            .await
            .map_err(|e| internal_datafusion_err!("shredding an in-memory table: {e}"))?
        {
            Ok(p) => shredded.push(p),
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(Ok(shredded))
}

/// Column `i` of the batches that hold the first `rows` rows (at least).
fn leading_rows(batches: &[RecordBatch], i: usize, rows: usize) -> Vec<&dyn Array> {
    let mut columns: Vec<&dyn Array> = Vec::new();
    let mut taken = 0;
    for b in batches {
        if taken >= rows {
            break;
        }
        columns.push(b.column(i).as_ref());
        taken += b.num_rows();
    }
    columns
}

/// `batch` with the VARIANT columns `variant` shredded to `typed` (a `None`
/// left as it is); `Err` says why a row cannot be shredded.
fn shred_batch(
    batch: &RecordBatch,
    variant: &[usize],
    typed: &[Option<DataType>],
) -> std::result::Result<RecordBatch, String> {
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    for (&i, t) in variant.iter().zip(typed) {
        let Some(t) = t else { continue };
        let name = fields[i].name().clone();
        let column = shred(&columns[i], t)
            .map_err(|e| e.to_string())
            .and_then(|c| shared_views(&c).map_err(|e| e.to_string()))
            .map_err(|e| format!("column {name}: {e}"))?;
        fields[i] = Field::new(
            fields[i].name(),
            column.data_type().clone(),
            fields[i].is_nullable(),
        )
        .with_metadata(fields[i].metadata().clone());
        columns[i] = column;
    }
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        batch.schema().metadata().clone(),
    ));
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(schema, columns, &options).map_err(|e| e.to_string())
}

/// `array` with its strings and bytes as views, as a Parquet scan reads them
/// (extractions then hand a leaf on without a copy), and the equal strings of
/// each string leaf sharing one view, as the views of a Parquet dictionary
/// page do (what groups and filters by view, `StringGroupCountExec` and
/// `ViewEqExpr`, then meets once per distinct string).
fn shared_views(array: &ArrayRef) -> Result<ArrayRef> {
    fn dedup<'a>(len: usize, strings: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
        let mut b = StringViewBuilder::with_capacity(len).with_deduplicate_strings();
        strings.for_each(|s| b.append_option(s));
        Arc::new(b.finish())
    }
    fn with_type(f: &FieldRef, dt: &DataType) -> FieldRef {
        Arc::new(f.as_ref().clone().with_data_type(dt.clone()))
    }
    Ok(match array.data_type() {
        DataType::Utf8 => dedup(array.len(), array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => dedup(array.len(), array.as_string::<i64>().iter()),
        DataType::Utf8View => dedup(array.len(), array.as_string_view().iter()),
        DataType::Binary | DataType::LargeBinary => cast(array, &DataType::BinaryView)?,
        DataType::Struct(fields) => {
            let st = array.as_struct();
            let columns = st
                .columns()
                .iter()
                .map(shared_views)
                .collect::<Result<Vec<_>>>()?;
            let fields = fields
                .iter()
                .zip(&columns)
                .map(|(f, c)| with_type(f, c.data_type()))
                .collect();
            Arc::new(StructArray::try_new(fields, columns, st.nulls().cloned())?)
        }
        DataType::List(field) => {
            let list = array.as_list::<i32>();
            let values = shared_views(list.values())?;
            Arc::new(ListArray::try_new(
                with_type(field, values.data_type()),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?)
        }
        DataType::LargeList(field) => {
            let list = array.as_list::<i64>();
            let values = shared_views(list.values())?;
            Arc::new(LargeListArray::try_new(
                with_type(field, values.data_type()),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?)
        }
        _ => Arc::clone(array),
    })
}

/// A `MemTable` whose batches may hold VARIANT columns shredded (see the module
/// docs). Its schema is the table's, with unshredded VARIANT columns.
#[derive(Debug)]
pub struct ShreddedMemTable {
    /// The table's storage: the `MemTable` handed in until the first scan
    /// shreds it, then the shredded copy. It also runs `INSERT`, `DELETE` and
    /// `UPDATE`.
    current: RwLock<Arc<MemTable>>,
    /// Whether the first scan happened, and what it decided (`None` before).
    shredding: tokio::sync::Mutex<Option<Shredding>>,
    schema: SchemaRef,
    constraints: Option<Constraints>,
    defaults: HashMap<String, Expr>,
}

/// What the first scan of a [`ShreddedMemTable`] decided.
#[derive(Debug, Clone)]
enum Shredding {
    /// Shredded (or `variant.shredding = off`: kept as DataFusion's table).
    Done { off: bool },
    /// Not shredded, and why.
    Refused(Arc<str>),
}

impl ShreddedMemTable {
    /// Keeps `table`, shredding its VARIANT columns at its first scan. The
    /// `MemTable` itself is never changed.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> datafusion::error::Result<()> {
    /// use df_variant::ShreddedMemTable;
    /// let ctx = df_variant::variant_context();
    /// // DataFusion's own `ctx.sql`: the session's catalog keeps the table.
    /// ctx.sql(r#"CREATE TABLE m AS SELECT parse_json('{"a": 1, "b": "x"}') AS v"#)
    ///     .await?
    ///     .collect()
    ///     .await?;
    /// let table = ctx.table_provider("m").await?;
    /// assert!(table.downcast_ref::<ShreddedMemTable>().is_some());
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(table: Arc<MemTable>) -> Self {
        let schema = table.schema();
        let defaults = schema
            .fields()
            .iter()
            .filter_map(|f| {
                let d = table.get_column_default(f.name())?;
                Some((f.name().clone(), d.clone()))
            })
            .collect();
        Self {
            constraints: table.constraints().cloned(),
            current: RwLock::new(table),
            shredding: tokio::sync::Mutex::new(None),
            schema,
            defaults,
        }
    }

    /// The storage now.
    fn current(&self) -> Arc<MemTable> {
        Arc::clone(
            &self
                .current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Shreds the table at its first scan (see the module docs); what was
    /// decided.
    async fn shred_once(&self, state: &dyn Session) -> Result<Shredding> {
        let mut decided = self.shredding.lock().await;
        if let Some(d) = decided.as_ref() {
            return Ok(d.clone());
        }
        let options = state
            .config_options()
            .extensions
            .get::<VariantOptions>()
            .cloned()
            .unwrap_or_default();
        let d = if matches!(options.mode(), ShreddingMode::Off) {
            Shredding::Done { off: true }
        } else {
            let old = self.current();
            // No row is inserted while the copy is made: the old partitions
            // stay locked until the copy replaces them.
            let mut guards = Vec::with_capacity(old.batches.len());
            for partition in &old.batches {
                guards.push(partition.write().await);
            }
            let snapshot = MemTable::try_new(
                Arc::clone(&self.schema),
                guards.iter().map(|g| g.to_vec()).collect(),
            )?;
            match shred_partitions(&snapshot, &options).await? {
                Ok(partitions) => {
                    let mut copy = MemTable::try_new(Arc::clone(&self.schema), vec![vec![]])?
                        .with_column_defaults(self.defaults.clone());
                    if let Some(c) = &self.constraints {
                        copy = copy.with_constraints(c.clone());
                    }
                    copy.batches = partitions
                        .into_iter()
                        .map(|p| Arc::new(tokio::sync::RwLock::new(p)))
                        .collect();
                    copy.sort_order = Arc::new(old.sort_order.lock().clone().into());
                    *self
                        .current
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(copy);
                    Shredding::Done { off: false }
                }
                Err(why) => Shredding::Refused(why.into()),
            }
        };
        *decided = Some(d.clone());
        Ok(d)
    }

    /// Puts every stored batch back into the table's unshredded layout.
    async fn unshred_all(&self) -> Result<()> {
        let schema = Arc::clone(&self.schema);
        for partition in &self.current().batches {
            let mut guard = partition.write().await;
            for batch in guard.iter_mut() {
                if batch.schema().fields() == schema.fields() {
                    continue;
                }
                let columns = batch
                    .columns()
                    .iter()
                    .zip(schema.fields())
                    .map(|(c, f)| {
                        if c.data_type() == f.data_type() {
                            return Ok(Arc::clone(c));
                        }
                        let input = VariantInput::try_new(c)
                            .map_err(|e| internal_datafusion_err!("column {}: {e}", f.name()))?;
                        Ok(input.to_column()?)
                    })
                    .collect::<Result<Vec<_>>>()?;
                let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
                *batch = RecordBatch::try_new_with_options(Arc::clone(&schema), columns, &options)?;
            }
        }
        Ok(())
    }
}

#[async_trait]
impl TableProvider for ShreddedMemTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn constraints(&self) -> Option<&Constraints> {
        self.constraints.as_ref()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.defaults.get(column)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![
            TableProviderFilterPushDown::Unsupported;
            filters.len()
        ])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let decided = self.shred_once(state).await?;
        let current = self.current();
        if let Shredding::Done { off: true } = decided {
            return current.scan(state, projection, filters, limit).await;
        }
        let schema = Arc::clone(&self.schema);
        let mut partitions = Vec::with_capacity(current.batches.len());
        for partition in &current.batches {
            partitions.push(partition.read().await.clone());
        }
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..schema.fields().len()).collect(),
        };
        let exprs = columns
            .into_iter()
            .map(|i| {
                let name = schema.field(i).name().clone();
                (
                    Arc::new(Column::new(&name, i)) as Arc<dyn PhysicalExpr>,
                    name,
                )
            })
            .collect();
        let exec = ShreddedMemoryExec::try_new(
            schema,
            Arc::new(partitions),
            exprs,
            pushdown_enabled(state.config_options()),
        )?;
        Ok(Arc::new(match decided {
            Shredding::Refused(why) => exec.with_note(why),
            Shredding::Done { .. } => exec,
        }))
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.current().insert_into(state, input, insert_op).await
    }

    async fn delete_from(
        &self,
        state: &dyn Session,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.unshred_all().await?;
        self.current().delete_from(state, filters).await
    }

    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.unshred_all().await?;
        self.current().update(state, assignments, filters).await
    }
}

/// The scan of a [`ShreddedMemTable`]: the stored batches of each partition,
/// with a projection over the table's schema evaluated per batch in that
/// batch's layout (see the module docs).
#[derive(Debug)]
pub struct ShreddedMemoryExec {
    table_schema: SchemaRef,
    partitions: Arc<Vec<Vec<RecordBatch>>>,
    /// Over `table_schema`, with their output names.
    exprs: Vec<(Arc<dyn PhysicalExpr>, String)>,
    pushdown: bool,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    /// Why the table is not shredded, where its first scan could not shred it
    /// (shown by `EXPLAIN`; not carried through bytes).
    note: Option<Arc<str>>,
}

impl ShreddedMemoryExec {
    /// The scan of `partitions` (batches of `table_schema`, VARIANT columns in
    /// any layout) projecting `exprs`; `pushdown` answers path extractions from
    /// shredded leaves.
    ///
    /// # Errors
    /// When an expression's type cannot be worked out over `table_schema`.
    pub fn try_new(
        table_schema: SchemaRef,
        partitions: Arc<Vec<Vec<RecordBatch>>>,
        exprs: Vec<(Arc<dyn PhysicalExpr>, String)>,
        pushdown: bool,
    ) -> Result<Self> {
        let fields = exprs
            .iter()
            .map(|(e, name)| {
                let f = e.return_field(&table_schema)?;
                Ok(f.as_ref().clone().with_name(name))
            })
            .collect::<Result<Vec<_>>>()?;
        let schema = Arc::new(Schema::new(fields));
        let properties = Arc::new(
            PlanProperties::new(
                EquivalenceProperties::new(Arc::clone(&schema)),
                Partitioning::UnknownPartitioning(partitions.len().max(1)),
                EmissionType::Incremental,
                Boundedness::Bounded,
            )
            // Its stream yields to the scheduler (`make_cooperative`), as
            // DataFusion's own scans do.
            .with_scheduling_type(SchedulingType::Cooperative),
        );
        Ok(Self {
            table_schema,
            partitions,
            exprs,
            pushdown,
            schema,
            properties,
            note: None,
        })
    }

    /// The scan, saying in `EXPLAIN` why the table is not shredded.
    #[must_use]
    pub fn with_note(mut self, why: Arc<str>) -> Self {
        self.note = Some(why);
        self
    }

    /// The table's schema (what the expressions read).
    pub fn table_schema(&self) -> &SchemaRef {
        &self.table_schema
    }

    /// The stored batches, per partition.
    pub fn partitions(&self) -> &Arc<Vec<Vec<RecordBatch>>> {
        &self.partitions
    }

    /// The projection, with output names.
    pub fn exprs(&self) -> &[(Arc<dyn PhysicalExpr>, String)] {
        &self.exprs
    }

    /// Whether extractions read shredded leaves.
    pub fn pushdown(&self) -> bool {
        self.pushdown
    }

    /// The names of the VARIANT columns some stored batch holds shredded.
    fn shredded_columns(&self) -> Vec<&str> {
        self.table_schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                self.partitions.iter().flatten().any(|b| {
                    b.column(*i).data_type() != f.data_type()
                        && is_variant_type(b.column(*i).data_type())
                })
            })
            .map(|(_, f)| f.name().as_str())
            .collect()
    }
}

impl DisplayAs for ShreddedMemoryExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut Formatter<'_>) -> fmt::Result {
        let exprs: Vec<String> = self
            .exprs
            .iter()
            .map(|(e, name)| match e.downcast_ref::<Column>() {
                Some(c) if c.name() == name => name.clone(),
                _ => format!("{e} as {name}"),
            })
            .collect();
        write!(
            f,
            "ShreddedMemoryExec: partitions={}, shredded=[{}], projection=[{}]",
            self.partitions.len(),
            self.shredded_columns().join(", "),
            exprs.join(", ")
        )?;
        match &self.note {
            Some(why) => write!(f, ", not shredded: {why}"),
            None => Ok(()),
        }
    }
}

impl ExecutionPlan for ShreddedMemoryExec {
    fn name(&self) -> &'static str {
        "ShreddedMemoryExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        for (e, _) in &self.exprs {
            if f(e)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    /// The exact row counts, as DataFusion's memory scan reports them (its
    /// planner decides on them whether to spread a small table over cores).
    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let batches: Vec<&RecordBatch> = match partition {
            Some(p) => self.partitions.get(p).into_iter().flatten().collect(),
            None => self.partitions.iter().flatten().collect(),
        };
        let mut stats = Statistics::new_unknown(&self.schema);
        stats.num_rows = Precision::Exact(batches.iter().map(|b| b.num_rows()).sum());
        Ok(Arc::new(stats))
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    /// Spreads the stored batches over `target_partitions`, as DataFusion's
    /// memory scan does (the planner asks where a query would run on fewer
    /// partitions than cores): whole batches, each to the partition with the
    /// fewest rows so far, the largest first. Not where there are fewer
    /// batches than partitions.
    fn repartitioned(
        &self,
        target_partitions: usize,
        _config: &datafusion::common::config::ConfigOptions,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let mut batches: Vec<&RecordBatch> = self.partitions.iter().flatten().collect();
        if self.partitions.len() >= target_partitions || batches.len() < target_partitions {
            return Ok(None);
        }
        batches.sort_by_key(|b| std::cmp::Reverse(b.num_rows()));
        let mut spread = vec![(0usize, Vec::new()); target_partitions];
        for batch in batches {
            if let Some((rows, partition)) = spread.iter_mut().min_by_key(|(rows, _)| *rows) {
                *rows += batch.num_rows();
                partition.push(batch.clone());
            }
        }
        let partitions = spread.into_iter().map(|(_, p)| p).collect();
        let mut exec = Self::try_new(
            Arc::clone(&self.table_schema),
            Arc::new(partitions),
            self.exprs.clone(),
            self.pushdown,
        )?;
        exec.note.clone_from(&self.note);
        Ok(Some(Arc::new(exec)))
    }

    /// Takes `projection` in: its expressions, with this node's own substituted
    /// for the columns they read.
    fn try_swapping_with_projection(
        &self,
        projection: &ProjectionExec,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let exprs = projection
            .expr()
            .iter()
            .map(|p| {
                let e = Arc::clone(&p.expr)
                    .transform_up(|e| {
                        let Some(c) = e.downcast_ref::<Column>() else {
                            return Ok(Transformed::no(e));
                        };
                        let (inner, _) = self.exprs.get(c.index()).ok_or_else(|| {
                            internal_datafusion_err!("ShreddedMemoryExec has no column {c}")
                        })?;
                        Ok(Transformed::yes(Arc::clone(inner)))
                    })?
                    .data;
                Ok((e, p.alias.clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut exec = Self::try_new(
            Arc::clone(&self.table_schema),
            Arc::clone(&self.partitions),
            exprs,
            self.pushdown,
        )?;
        exec.note.clone_from(&self.note);
        Ok(Some(Arc::new(exec)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // Batches of at most `batch_size` rows (zero-copy slices), as
        // DataFusion's scans hand them on.
        let size = context.session_config().batch_size().max(1);
        let batches: Vec<RecordBatch> = self
            .partitions
            .get(partition)
            .into_iter()
            .flatten()
            .flat_map(|b| {
                (0..b.num_rows().div_ceil(size))
                    .map(move |k| b.slice(k * size, size.min(b.num_rows() - k * size)))
            })
            .collect();
        let mut project = BatchProjector {
            table_schema: Arc::clone(&self.table_schema),
            exprs: self.exprs.clone(),
            pushdown: self.pushdown,
            schema: Arc::clone(&self.schema),
            adapted: Vec::new(),
        };
        let stream = futures::stream::iter(batches.into_iter().map(move |b| project.project(&b)));
        Ok(make_cooperative(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream,
        ))))
    }
}

/// Evaluates the projection on each batch, its expressions adapted once per
/// batch layout met.
struct BatchProjector {
    table_schema: SchemaRef,
    exprs: Vec<(Arc<dyn PhysicalExpr>, String)>,
    pushdown: bool,
    schema: SchemaRef,
    adapted: Vec<(SchemaRef, Vec<Arc<dyn PhysicalExpr>>)>,
}

impl BatchProjector {
    fn project(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let layout = batch.schema();
        let k = match self.adapted.iter().position(|(s, _)| *s == layout) {
            Some(k) => k,
            None => {
                let adapter = VariantExprAdapterFactory::new(None)
                    .with_pushdown(self.pushdown)
                    .create(Arc::clone(&self.table_schema), Arc::clone(&layout))?;
                let exprs = self
                    .exprs
                    .iter()
                    .map(|(e, _)| adapter.rewrite(Arc::clone(e)))
                    .collect::<Result<Vec<_>>>()?;
                self.adapted.push((layout, exprs));
                self.adapted.len() - 1
            }
        };
        let rows = batch.num_rows();
        let columns = self.adapted[k]
            .1
            .iter()
            .map(|e| e.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            columns,
            &options,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use datafusion::prelude::SessionContext;

    /// `sql`'s answer, run as embedders run it: DataFusion's own `ctx.sql`.
    async fn run(ctx: &SessionContext, sql: &str) -> String {
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string()
    }

    const CREATE: &str = "CREATE TABLE m AS SELECT parse_json(j) AS v, n FROM (VALUES \
        ('{\"a\": 1, \"b\": \"x\"}', 1), ('{\"a\": 2, \"c\": [1, 2]}', 2), ('7', 3), \
        ('{\"a\": \"s\"}', 4), (NULL, 5)) AS t(j, n)";

    #[tokio::test]
    async fn a_created_table_is_shredded_and_answers_as_an_unshredded_one() {
        let query =
            "SELECT n, v:a::string AS a, v:c[1]::int AS c, to_json(v) AS j FROM m ORDER BY n";
        let shredded = crate::variant_context();
        run(&shredded, CREATE).await;
        let table = shredded.table_provider("m").await.unwrap();
        assert!(table.downcast_ref::<ShreddedMemTable>().is_some());
        let plain = crate::variant_context();
        run(&plain, "SET variant.shredding = 'off'").await;
        run(&plain, CREATE).await;
        let expected = "\
+---+---+---+-------------------+
| n | a | c | j                 |
+---+---+---+-------------------+
| 1 | 1 |   | {\"a\":1,\"b\":\"x\"}   |
| 2 | 2 | 2 | {\"a\":2,\"c\":[1,2]} |
| 3 |   |   | 7                 |
| 4 | s |   | {\"a\":\"s\"}         |
| 5 |   |   |                   |
+---+---+---+-------------------+";
        assert_eq!(run(&shredded, query).await, expected);
        assert_eq!(run(&plain, query).await, expected);
        let plan = run(&shredded, &format!("EXPLAIN {query}")).await;
        assert!(
            plan.contains("ShreddedMemoryExec: partitions=") && plan.contains("shredded=[v]"),
            "{plan}"
        );
        // `variant.shredding = off` at the first scan: DataFusion's own scan.
        let plan = run(&plain, &format!("EXPLAIN {query}")).await;
        assert!(
            !plan.contains("ShreddedMemoryExec") && plan.contains("DataSourceExec"),
            "{plan}"
        );
    }

    #[tokio::test]
    async fn a_registered_memtable_is_kept_shredded_and_never_changed() {
        let ctx = crate::variant_context();
        let made = crate::variant_context();
        let batches = made
            .sql("SELECT parse_json('{\"a\": 1, \"b\": \"x\"}') AS v")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mem = Arc::new(MemTable::try_new(batches[0].schema(), vec![batches]).unwrap());
        ctx.register_table("r", Arc::clone(&mem) as Arc<dyn TableProvider>)
            .unwrap();
        let plan = run(&ctx, "EXPLAIN SELECT v:a::int AS a FROM r").await;
        assert!(plan.contains("shredded=[v]"), "{plan}");
        assert_eq!(
            run(&ctx, "SELECT v:a::int AS a FROM r").await,
            "+---+\n| a |\n+---+\n| 1 |\n+---+"
        );
        let kept = mem.batches[0].read().await;
        assert_eq!(
            kept[0].schema().field(0).data_type(),
            &variant_data_type(),
            "the MemTable handed in still holds its own unshredded batch"
        );
    }

    #[tokio::test]
    async fn a_table_that_cannot_be_shredded_says_why() {
        let ctx = crate::variant_context();
        // Variant nulls only: nothing worth shredding.
        run(&ctx, "CREATE TABLE s AS SELECT parse_json('null') AS v").await;
        let plan = run(&ctx, "EXPLAIN SELECT to_json(v) AS j FROM s").await;
        assert!(
            plan.contains("not shredded: nothing worth shredding"),
            "{plan}"
        );
        assert_eq!(
            run(&ctx, "SELECT to_json(v) AS j FROM s").await,
            "+------+\n| j    |\n+------+\n| null |\n+------+"
        );
    }

    #[test]
    fn equal_strings_of_a_leaf_share_one_view() {
        use datafusion::arrow::array::StringViewArray;
        let long = "app.bsky.feed.post, longer than a view's inline twelve bytes";
        let leaf: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some(long),
            None,
            Some("short"),
            Some(long),
        ]));
        let shared = shared_views(&leaf).unwrap();
        let views = shared.as_string_view().views();
        assert_eq!(views[0], views[3]);
        assert_eq!(shared.as_ref(), leaf.as_ref());
        let before = leaf.as_string_view().views();
        assert_ne!(before[0], before[3], "the input holds the string twice");
        // A shredded string leaf comes as Utf8: it becomes views, shared too.
        let utf8: ArrayRef = Arc::new(datafusion::arrow::array::StringArray::from(vec![
            Some(long),
            Some(long),
        ]));
        let shared = shared_views(&utf8).unwrap();
        let views = shared.as_string_view().views();
        assert_eq!(views[0], views[1]);
    }

    #[tokio::test]
    async fn inserted_deleted_and_updated_rows_read_in_their_own_layout() {
        let ctx = crate::variant_context();
        run(&ctx, CREATE).await;
        run(&ctx, "INSERT INTO m VALUES (parse_json('{\"a\": 9}'), 6)").await;
        let query = "SELECT n, v:a::string AS a FROM m WHERE n > 3 ORDER BY n";
        assert_eq!(
            run(&ctx, query).await,
            "+---+---+\n| n | a |\n+---+---+\n| 4 | s |\n| 5 |   |\n| 6 | 9 |\n+---+---+"
        );
        run(&ctx, "DELETE FROM m WHERE n = 2").await;
        run(
            &ctx,
            "UPDATE m SET v = parse_json('{\"a\": 10}') WHERE n = 1",
        )
        .await;
        assert_eq!(
            run(
                &ctx,
                "SELECT n, to_json(v) AS j FROM m WHERE n < 3 ORDER BY n"
            )
            .await,
            "+---+----------+\n| n | j        |\n+---+----------+\n| 1 | {\"a\":10} |\n+---+----------+"
        );
    }
}
