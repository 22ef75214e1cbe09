//! `count(*) ... GROUP BY` one string, counted by the strings' views.
//!
//! A shredded string leaf (`v:commit.collection::string`) is usually
//! dictionary-encoded in Parquet, and parquet-rs decodes such a page into a
//! `StringViewArray` whose equal strings have equal 16-byte views (the same
//! length, prefix, buffer and offset; strings of up to 12 bytes are held in the
//! view itself). DataFusion 55 has no group values for dictionaries and groups
//! such a column by hashing and comparing every row's bytes. When the partial
//! aggregate only counts, [`StringGroupCountExec`] replaces it: it counts each
//! batch's distinct views in a small open-addressing table (one `u128` compare
//! per row), then adds each distinct view's count to its string's group, so a
//! string is hashed once per batch instead of once per row.
//!
//! ```text
//! before: AggregateExec: mode=FinalPartitioned, gby=[event@0 as event], aggr=[count(*)]
//!           RepartitionExec: partitioning=Hash([event@0], 2), input_partitions=2
//!             AggregateExec: mode=Partial, gby=[event@0 as event], aggr=[count(*)]
//!               VariantScanExec: extractions=[variant_get(v, '$.commit.collection', 'string')]
//! after:  AggregateExec: mode=FinalPartitioned, gby=[event@0 as event], aggr=[count(*)]
//!           RepartitionExec: partitioning=Hash([event@0], 2), input_partitions=2
//!             StringGroupCountExec: gby=[event@0], aggr=[count(*)]
//!               VariantScanExec: extractions=[variant_get(v, '$.commit.collection', 'string')]
//! ```
//!
//! It fires on a `Partial` aggregate (so its output is partial groups that the
//! final aggregate merges) over one `Utf8View` column, without grouping sets,
//! limit, ordering or dynamic filter, whose aggregates are all `count` of a
//! non-null literal (`count(*)`, `count(1)`) without `DISTINCT` or `FILTER`, or
//! none (`SELECT DISTINCT s`). It never fires on `Single` or `Final` aggregates.
//!
//! A batch whose views are not few (more than 1,024 distinct: a plain-encoded
//! page, or a column of mostly distinct strings) is passed on as it is, each row
//! its own partial group with count 1, as DataFusion's partial aggregate does
//! when it skips aggregation: the final aggregate groups them. The groups kept
//! between batches are flushed downstream once there are 16,384 of them, or
//! earlier when the memory pool refuses them room: what each partition holds
//! (its view table and its groups' strings) is reserved in the pool.
//! `variant.string_group_count = false` turns the rule off.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::fmt::{self, Formatter};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, StringViewArray, StringViewBuilder};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, internal_datafusion_err, internal_err};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, InputOrderMode, PlanProperties,
};
use futures::StreamExt;

use crate::config::VariantOptions;

/// The physical optimizer rule described in the module docs.
#[derive(Debug, Default)]
pub struct StringGroupCount;

impl PhysicalOptimizerRule for StringGroupCount {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !VariantOptions::enabled(config, |o| o.string_group_count) {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            let Some(agg) = (node.as_ref() as &dyn Any).downcast_ref::<AggregateExec>() else {
                return Ok(Transformed::no(node));
            };
            Ok(match StringGroupCountExec::replacing(agg) {
                Some(exec) => Transformed::yes(Arc::new(exec) as Arc<dyn ExecutionPlan>),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "StringGroupCount"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// The partial count of one string expression's groups (see the module docs).
/// Its output has the schema of the partial aggregate it replaced: the group
/// column, then one `Int64` count state per `count`.
#[derive(Debug)]
pub struct StringGroupCountExec {
    input: Arc<dyn ExecutionPlan>,
    /// The group expression, over the input; a `Utf8View`.
    group: Arc<dyn PhysicalExpr>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl StringGroupCountExec {
    /// Counts the groups of `group` over `input` into batches of `schema` (the
    /// group column, then one `Int64` per count). Fails when the types do not
    /// fit.
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        group: Arc<dyn PhysicalExpr>,
        schema: SchemaRef,
    ) -> Result<Self> {
        let fits = group.data_type(&input.schema())? == DataType::Utf8View
            && schema.fields().first().map(|f| f.data_type()) == Some(&DataType::Utf8View)
            && schema
                .fields()
                .iter()
                .skip(1)
                .all(|f| f.data_type() == &DataType::Int64);
        if !fits {
            return internal_err!(
                "StringGroupCountExec needs a Utf8View group and a schema of it and Int64 \
                 counts; got {group} over {} and {schema:?}",
                input.schema()
            );
        }
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(
                input.properties().output_partitioning().partition_count(),
            ),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Ok(Self {
            input,
            group,
            schema,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The node that replaces `agg`, when the rule applies to it.
    fn replacing(agg: &AggregateExec) -> Option<Self> {
        let group_by = agg.group_expr();
        let counts_only = agg
            .aggr_expr()
            .iter()
            .zip(agg.filter_expr())
            .all(|(a, filter)| {
                a.fun().name() == "count"
                    && !a.is_distinct()
                    && filter.is_none()
                    && a.order_bys().is_empty()
                    && a.expressions().iter().all(|e| {
                        e.downcast_ref::<Literal>()
                            .is_some_and(|l| !l.value().is_null())
                    })
            });
        let [(expr, _)] = group_by.expr() else {
            return None;
        };
        let applies = *agg.mode() == AggregateMode::Partial
            && counts_only
            && !group_by.has_grouping_set()
            && group_by.null_expr().is_empty()
            && agg.limit_options().is_none()
            && agg.dynamic_expressions_produced().is_empty()
            && *agg.input_order_mode() == InputOrderMode::Linear
            && !matches!(
                agg.input().properties().output_partitioning(),
                Partitioning::Hash(..)
            );
        if !applies {
            return None;
        }
        Self::try_new(Arc::clone(agg.input()), Arc::clone(expr), agg.schema()).ok()
    }

    /// The group expression, over the input.
    pub fn group(&self) -> &Arc<dyn PhysicalExpr> {
        &self.group
    }

    /// The input.
    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

impl DisplayAs for StringGroupCountExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut Formatter<'_>) -> fmt::Result {
        let counts: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .skip(1)
            .map(|f| f.name().strip_suffix("[count]").unwrap_or(f.name()))
            .collect();
        write!(
            f,
            "StringGroupCountExec: gby=[{}], aggr=[{}]",
            self.group,
            counts.join(", ")
        )
    }
}

impl ExecutionPlan for StringGroupCountExec {
    fn name(&self) -> &'static str {
        "StringGroupCountExec"
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        f(&self.group)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = children
            .pop()
            .ok_or_else(|| internal_datafusion_err!("StringGroupCountExec needs its input"))?;
        Ok(Arc::new(Self::try_new(
            input,
            Arc::clone(&self.group),
            Arc::clone(&self.schema),
        )?))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let reservation = MemoryConsumer::new(format!("StringGroupCountExec[{partition}]"))
            .register(&context.runtime_env().memory_pool);
        let input = self.input.execute(partition, context)?;
        let state = Counting {
            reservation,
            group_bytes: 0,
            input,
            group: Arc::clone(&self.group),
            schema: Arc::clone(&self.schema),
            groups: HashMap::new(),
            nulls: 0,
            views: ViewTable::default(),
            ready: VecDeque::new(),
            done: false,
            baseline: BaselineMetrics::new(&self.metrics, partition),
            passed_rows: MetricBuilder::new(&self.metrics).counter("passed_rows", partition),
        };
        let stream = futures::stream::try_unfold(state, |mut s| async move {
            loop {
                if let Some(batch) = s.ready.pop_front() {
                    s.baseline.record_output(batch.num_rows());
                    return Ok(Some((batch, s)));
                }
                if s.done {
                    s.baseline.done();
                    return Ok(None);
                }
                match s.input.next().await {
                    Some(batch) => s.absorb(&batch?)?,
                    None => {
                        s.done = true;
                        s.flush()?;
                    }
                }
            }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream,
        )))
    }
}

/// Groups kept between batches before they are flushed downstream.
const MAX_GROUPS: usize = 16_384;
/// What a group costs beyond its string's bytes: the map's entry (the string's
/// header and the count) and its share of the map's spare room.
const GROUP_ENTRY_BYTES: usize = 64;

/// One partition's counting.
struct Counting {
    /// What the view table and the groups hold, in the memory pool.
    reservation: MemoryReservation,
    /// The bytes of `groups` (strings and entries).
    group_bytes: usize,
    input: SendableRecordBatchStream,
    group: Arc<dyn PhysicalExpr>,
    schema: SchemaRef,
    /// The counts of the strings seen so far (since the last flush).
    groups: HashMap<String, i64>,
    /// The count of the NULL group.
    nulls: i64,
    views: ViewTable,
    /// Batches ready to go downstream.
    ready: VecDeque<RecordBatch>,
    done: bool,
    baseline: BaselineMetrics,
    passed_rows: Count,
}

impl Counting {
    /// Counts one input batch, or passes it on when its views are not few.
    fn absorb(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.reservation.size() == 0 {
            // The view table, reserved before its first use.
            self.reservation.try_grow(size_of::<Slot>() * SLOTS)?;
        }
        let elapsed = self.baseline.elapsed_compute().clone();
        let _timer = elapsed.timer();
        let column = self.group.evaluate(batch)?.into_array(batch.num_rows())?;
        let Some(strings) = column.as_any().downcast_ref::<StringViewArray>() else {
            return internal_err!(
                "StringGroupCountExec: {} is {}, not Utf8View",
                self.group,
                column.data_type()
            );
        };
        let views: &[u128] = strings.views();
        let counted = match strings.nulls().filter(|n| n.null_count() > 0) {
            Some(nulls) => {
                let null_rows = !nulls.inner();
                let counted = self.views.count(views, null_rows.set_indices());
                if counted {
                    self.nulls += nulls.null_count() as i64;
                }
                counted
            }
            None => self.views.count(views, std::iter::empty()),
        };
        if !counted {
            self.passed_rows.add(batch.num_rows());
            let batch = self.each_row_its_group(Arc::clone(&column))?;
            self.ready.push_back(batch);
            return Ok(());
        }
        for (row, n) in self.views.entries() {
            let value = strings.value(row);
            match self.groups.get_mut(value) {
                Some(count) => *count += n,
                None => {
                    self.group_bytes += value.len() + GROUP_ENTRY_BYTES;
                    self.groups.insert(value.to_owned(), n);
                }
            }
        }
        let table = size_of::<Slot>() * SLOTS;
        if self.groups.len() >= MAX_GROUPS
            || self
                .reservation
                .try_resize(table + self.group_bytes)
                .is_err()
        {
            // Refused room: the groups go downstream now, as a partial
            // aggregate passes its groups on early.
            self.flush()?;
            self.reservation.resize(table);
        }
        Ok(())
    }

    /// The batch with each row of `column` as its own group, counted once
    /// (NULL rows count too: `count(*)` counts rows).
    fn each_row_its_group(&self, column: ArrayRef) -> Result<RecordBatch> {
        let ones: ArrayRef = Arc::new(Int64Array::from_value(1, column.len()));
        let mut columns = vec![column];
        columns.extend((1..self.schema.fields().len()).map(|_| Arc::clone(&ones)));
        Ok(RecordBatch::try_new(Arc::clone(&self.schema), columns)?)
    }

    /// Sends the groups counted so far downstream and starts again.
    fn flush(&mut self) -> Result<()> {
        let n = self.groups.len() + usize::from(self.nulls > 0);
        if n == 0 {
            return Ok(());
        }
        let mut values = StringViewBuilder::with_capacity(n);
        let mut counts = Vec::with_capacity(n);
        for (value, count) in self.groups.drain() {
            values.append_value(&value);
            counts.push(count);
        }
        self.group_bytes = 0;
        if self.nulls > 0 {
            values.append_null();
            counts.push(std::mem::take(&mut self.nulls));
        }
        let counts: ArrayRef = Arc::new(Int64Array::from(counts));
        let mut columns: Vec<ArrayRef> = vec![Arc::new(values.finish())];
        columns.extend((1..self.schema.fields().len()).map(|_| Arc::clone(&counts)));
        self.ready
            .push_back(RecordBatch::try_new(Arc::clone(&self.schema), columns)?);
        Ok(())
    }
}

/// Slots of [`ViewTable`] (a power of two).
const SLOTS: usize = 4096;
/// The most distinct views a batch may have to be counted by view (a quarter of
/// the slots, so probes stay short).
const MAX_VIEWS: usize = SLOTS / 4;
/// An empty slot.
const EMPTY: u32 = u32::MAX;

/// One slot of [`ViewTable`]: a view, the first row holding it ([`EMPTY`] for
/// a free slot) and its count, together in half a cache line so that a probe
/// touches one line.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot {
    view: u128,
    first: u32,
    count: u32,
}

const FREE: Slot = Slot {
    view: 0,
    first: EMPTY,
    count: 0,
};

/// The distinct views of one batch and their counts: open addressing with
/// linear probing over [`SLOTS`] slots.
struct ViewTable {
    slots: Vec<Slot>,
    /// The slots in use, in the order they were filled.
    used: Vec<u32>,
}

impl Default for ViewTable {
    fn default() -> Self {
        Self {
            slots: vec![FREE; SLOTS],
            used: Vec::with_capacity(MAX_VIEWS),
        }
    }
}

impl ViewTable {
    /// Counts the views of all rows but the `nulls` (ascending row numbers);
    /// `false` (and an unusable table) when there are more than [`MAX_VIEWS`]
    /// distinct ones or a row does not fit a `u32`.
    ///
    /// Every row is counted in one tight pass, and the null rows are taken
    /// off again after: equal views are equal strings whether or not the row
    /// is null, and a view that only null rows hold ends with count 0.
    fn count(&mut self, views: &[u128], nulls: impl Iterator<Item = usize>) -> bool {
        for slot in self.used.drain(..) {
            self.slots[slot as usize] = FREE;
        }
        if views.len() >= EMPTY as usize {
            return false;
        }
        for (row, &view) in views.iter().enumerate() {
            let mut slot = slot_of(view);
            loop {
                let s = &mut self.slots[slot];
                if s.first == EMPTY {
                    if self.used.len() == MAX_VIEWS {
                        return false;
                    }
                    // `row < views.len() < u32::MAX`, checked above.
                    *s = Slot {
                        view,
                        first: row as u32,
                        count: 1,
                    };
                    self.used.push(slot as u32);
                    break;
                }
                if s.view == view {
                    s.count += 1;
                    break;
                }
                slot = (slot + 1) & (SLOTS - 1);
            }
        }
        for row in nulls {
            let view = views[row];
            let mut slot = slot_of(view);
            while self.slots[slot].view != view {
                slot = (slot + 1) & (SLOTS - 1);
            }
            self.slots[slot].count -= 1;
        }
        true
    }

    /// Each distinct view's first row and count (of non-null rows), after a
    /// successful [`ViewTable::count`].
    fn entries(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.used.iter().filter_map(|&slot| {
            let s = &self.slots[slot as usize];
            (s.count > 0).then(|| (s.first as usize, i64::from(s.count)))
        })
    }
}

/// The slot a view hashes to: both halves folded and multiplied (Fibonacci
/// hashing), the top bits kept.
fn slot_of(view: u128) -> usize {
    let folded = (view as u64) ^ ((view >> 64) as u64).rotate_left(29);
    (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(strings: &StringViewArray) -> Option<Vec<(String, i64)>> {
        let mut table = ViewTable::default();
        let null_rows = strings.nulls().map(|n| !n.inner());
        let nulls = null_rows.iter().flat_map(|n| n.set_indices());
        if !table.count(strings.views(), nulls) {
            return None;
        }
        let mut out: Vec<(String, i64)> = table
            .entries()
            .map(|(row, n)| (strings.value(row).to_string(), n))
            .collect();
        out.sort();
        Some(out)
    }

    #[test]
    fn equal_views_count_together_and_a_table_is_reused_clean() {
        // Deduplicated as a Parquet dictionary page decodes: equal strings,
        // equal views.
        let long = "app.bsky.feed.like, longer than twelve bytes";
        let mut builder = StringViewBuilder::new().with_deduplicate_strings();
        for s in [long, "short", long, "", "short", long] {
            builder.append_value(s);
        }
        let strings = builder.finish();
        let mut table = ViewTable::default();
        assert!(table.count(strings.views(), std::iter::empty()));
        assert_eq!(
            counted(&strings).unwrap(),
            vec![
                (String::new(), 1),
                (long.to_string(), 3),
                ("short".to_string(), 2)
            ]
        );
        // A second batch on the same table starts from nothing.
        let other = StringViewArray::from_iter_values(["x"]);
        assert!(table.count(other.views(), std::iter::empty()));
        assert_eq!(table.entries().collect::<Vec<_>>(), vec![(0, 1)]);
    }

    #[test]
    fn too_many_distinct_views_give_up() {
        let many: Vec<String> = (0..=MAX_VIEWS)
            .map(|i| format!("value number {i:>8}"))
            .collect();
        let strings = StringViewArray::from_iter_values(many.iter());
        assert!(counted(&strings).is_none());
        let fewer = StringViewArray::from_iter_values(many.iter().take(MAX_VIEWS));
        assert_eq!(counted(&fewer).unwrap().len(), MAX_VIEWS);
    }

    #[test]
    fn null_rows_are_not_counted_whatever_their_views() {
        // Null rows keep views of their own: one equal to a counted string's,
        // one that no valid row has.
        let long = "app.bsky.feed.like, longer than twelve bytes";
        let mut builder = StringViewBuilder::new().with_deduplicate_strings();
        for s in [long, long, "short", "only under a null", long] {
            builder.append_value(s);
        }
        let all = builder.finish();
        let nulls =
            datafusion::arrow::buffer::NullBuffer::from(vec![true, false, true, false, true]);
        let strings = StringViewArray::try_new(
            all.views().clone(),
            all.data_buffers().to_vec(),
            Some(nulls),
        )
        .unwrap();
        assert_eq!(
            counted(&strings).unwrap(),
            vec![(long.to_string(), 2), ("short".to_string(), 1)]
        );
    }
}
