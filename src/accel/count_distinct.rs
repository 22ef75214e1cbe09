//! DataFusion's `count`, with `count(DISTINCT s)` of a `Utf8View` string
//! counted by one table for all groups.
//!
//! DataFusion 55 has a groups accumulator for `count(DISTINCT x)` of integers
//! only. For strings its aggregate falls back to one set per group, fed by
//! slicing every batch per group: JSONBench Q2's
//! `count(DISTINCT v:did::string) ... GROUP BY event` took twice as long as
//! the rest of the query. [`StringDistinctCountGroups`] keeps one hash table
//! of (group, string) pairs and an arena of the strings' bytes: a string of at
//! most 12 bytes is compared as its 16-byte view, a longer one by its length,
//! prefix and bytes. Its state is the list of each group's distinct strings,
//! exactly DataFusion's, so a partial aggregate of ours merges into a final
//! aggregate of DataFusion's and back (plans shipped to workers name `count`).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let ctx = df_variant::accel::accelerated_context();
//! let batches = ctx
//!     .sql("SELECT k, count(DISTINCT s) AS n FROM (VALUES ('a', 'x'), ('a', 'x'), ('a', 'a long string, longer than 12 bytes'), ('b', 'x')) AS t(k, s) GROUP BY k ORDER BY k")
//!     .await?
//!     .collect()
//!     .await?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| a | 2 |") && text.contains("| b | 1 |"), "{text}");
//! # Ok::<_, datafusion::error::DataFusionError>(())
//! # }).unwrap();
//! ```
//!
//! Every other `count` (not `DISTINCT`, other types, more than one argument)
//! is DataFusion's own code.

use std::hash::BuildHasher;
use std::mem::size_of;
use std::sync::Arc;

use datafusion::arrow::array::builder::make_view;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int64Array, ListArray, StringViewArray,
};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::hash_utils::RandomState;
use datafusion::common::{Result, ScalarValue, internal_err, resources_datafusion_err};
use datafusion::functions_aggregate::count::Count;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, GroupsAccumulator,
    ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs, Volatility,
};
use hashbrown::HashTable;

/// DataFusion's `count` with the groups accumulator of the module docs.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct FastCount {
    inner: Count,
}

impl FastCount {
    /// The function, replacing `current` only where `current` is DataFusion's
    /// own `count`.
    pub fn replacing(current: &AggregateUDF) -> Option<AggregateUDF> {
        current
            .inner()
            .is::<Count>()
            .then(|| AggregateUDF::from(Self::default()))
    }
}

/// Whether the groups accumulator of this module counts `args`.
fn ours(args: &AccumulatorArgs) -> bool {
    args.is_distinct
        && args.exprs.len() == 1
        && args.expr_fields[0].data_type() == &DataType::Utf8View
}

impl AggregateUDFImpl for FastCount {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn is_nullable(&self) -> bool {
        self.inner.is_nullable()
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.inner.accumulator(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        ours(&args) || self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        if ours(&args) {
            return Ok(Box::new(StringDistinctCountGroups::default()));
        }
        self.inner.create_groups_accumulator(args)
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.inner.create_sliding_accumulator(args)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        self.inner.reverse_expr()
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        self.inner.default_value(data_type)
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner.value_from_stats(statistics_args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.set_monotonicity(data_type)
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.order_sensitivity()
    }
}

/// `count(DISTINCT s)` of one partition's share of the strings `s`, passed on
/// as a count that the final aggregate adds up.
///
/// Only [`super::PartitionDistinctCount`] plans it, below a hash
/// repartition on `s`: each string then lives in one partition only, so the
/// partitions' distinct counts of a group add up to the group's distinct
/// count, and the final aggregate merges counts instead of sets of strings.
/// It is not in the function registry (a `SELECT` calling it by name would
/// count wrong); plans shipped to other processes carry it through
/// [`crate::codec::VariantPhysicalCodec`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PartitionedDistinctCount {
    signature: Signature,
}

impl Default for PartitionedDistinctCount {
    fn default() -> Self {
        Self {
            signature: Signature::exact(vec![DataType::Utf8View], Volatility::Immutable),
        }
    }
}

impl PartitionedDistinctCount {
    /// The function's name in plans.
    pub const NAME: &'static str = "count_distinct_partitioned";

    /// The function as a shared [`AggregateUDF`].
    pub fn udaf() -> Arc<AggregateUDF> {
        Arc::new(AggregateUDF::from(Self::default()))
    }
}

impl AggregateUDFImpl for PartitionedDistinctCount {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "count"),
            DataType::Int64,
            false,
        ))])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(OneGroup(PartitionedGroups::default())))
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(
        &self,
        _args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(PartitionedGroups::default()))
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Int64(Some(0)))
    }
}

/// [`PartitionedDistinctCount`]'s groups accumulator: the strings counted by
/// [`StringDistinctCountGroups`], each group's count passed on as its state,
/// and states merged by adding counts (of disjoint sets of strings).
#[derive(Debug, Default)]
struct PartitionedGroups {
    distinct: StringDistinctCountGroups,
    /// A state was passed on.
    emitted: bool,
}

impl GroupsAccumulator for PartitionedGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        if self.emitted && !group_indices.is_empty() {
            // A partial aggregate short of memory passes its groups on early
            // and starts again: a string counted before would be counted
            // again, and counts cannot be merged without double counting.
            return Err(resources_datafusion_err!(
                "count(DISTINCT ...) split across partitions by its argument ran out of memory in its partial aggregate; SET variant.partition_distinct_count = false plans DataFusion's merge of distinct values instead"
            ));
        }
        self.distinct
            .update_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        self.distinct.evaluate(emit_to)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.emitted = true;
        Ok(vec![self.distinct.evaluate(emit_to)?])
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        let totals = &mut self.distinct.counts;
        totals.resize(total_num_groups, 0);
        let counts = values[0].as_primitive::<Int64Type>();
        for (row, &group) in group_indices.iter().enumerate() {
            if counts.is_valid(row) {
                totals[group] += counts.value(row);
            }
        }
        Ok(())
    }

    fn convert_to_state(
        &self,
        _values: &[ArrayRef],
        _opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        // Never asked: `supports_convert_to_state` is false, and a row of its
        // own cannot say whether another row repeats its string.
        internal_err!("count_distinct_partitioned has no per-row state")
    }

    fn size(&self) -> usize {
        self.distinct.size()
    }
}

/// The groups accumulator as the accumulator of an aggregate without
/// `GROUP BY` (one group, 0).
#[derive(Debug)]
struct OneGroup(PartitionedGroups);

impl OneGroup {
    fn count(&self) -> ScalarValue {
        ScalarValue::Int64(Some(self.0.distinct.counts.first().copied().unwrap_or(0)))
    }
}

impl Accumulator for OneGroup {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let groups = vec![0; values[0].len()];
        self.0.update_batch(values, &groups, None, 1)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let groups = vec![0; states[0].len()];
        self.0.merge_batch(states, &groups, 1)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.count()])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(self.count())
    }

    fn size(&self) -> usize {
        GroupsAccumulator::size(&self.0)
    }
}

/// One distinct (group, string) pair: the string as a view into the arena (or
/// inline), and its hash.
#[derive(Debug, Clone, Copy)]
struct Entry {
    hash: u64,
    group: usize,
    view: u128,
}

/// `count(DISTINCT s)` of a `Utf8View` for all groups (module docs).
#[derive(Debug, Default)]
pub struct StringDistinctCountGroups {
    table: HashTable<Entry>,
    /// The bytes of the strings longer than 12 bytes, which the entries' views
    /// point into (buffer 0).
    arena: Vec<u8>,
    counts: Vec<i64>,
    hasher: RandomState,
    /// The per-batch table of recent (view, group) pairs ([`RECENT`] slots).
    recent: Vec<(u128, usize)>,
    /// The per-batch table of recent long strings as (hash, row) ([`RECENT`]
    /// slots).
    recent_long: Vec<(u64, usize)>,
}

/// The slots of the per-batch table of recent (view, group) pairs.
const RECENT: usize = 1024;

/// The slot of a (view, group) pair: the view's offset or inline bytes mixed
/// with its length and the group.
fn recent_slot(view: u128, group: usize) -> usize {
    let mixed = (view >> 64) as u64
        ^ (view as u64).rotate_left(17)
        ^ (group as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize % RECENT
}

/// The length of the string a view describes.
fn view_len(view: u128) -> usize {
    view as u32 as usize
}

impl StringDistinctCountGroups {
    /// The hash of `group` and a string: an inline string's view, a longer
    /// one's `bytes` (equal strings are either both inline or both not).
    fn hash(&self, group: usize, view: u128, bytes: &[u8]) -> u64 {
        if view_len(view) <= 12 {
            self.hasher.hash_one((group, view))
        } else {
            self.hasher.hash_one((group, bytes))
        }
    }

    /// Adds `bytes` (whose view in its own array is `view`) to `group`.
    fn insert(&mut self, group: usize, view: u128, bytes: &[u8]) -> Result<()> {
        self.insert_hashed(self.hash(group, view, bytes), group, view, bytes)
    }

    /// [`Self::insert`] with the pair's [`Self::hash`].
    fn insert_hashed(&mut self, hash: u64, group: usize, view: u128, bytes: &[u8]) -> Result<()> {
        // An inline view is compared whole: arrow requires zeros past the
        // string.
        let inline = view_len(view) <= 12;
        let arena = &self.arena;
        let same = |e: &Entry| {
            e.group == group
                && if inline {
                    e.view == view
                } else {
                    // Length and prefix first, then the bytes.
                    (e.view as u64) == (view as u64) && {
                        let start = (e.view >> 96) as u32 as usize;
                        arena.get(start..start + bytes.len()) == Some(bytes)
                    }
                }
        };
        if self.table.find(hash, same).is_some() {
            return Ok(());
        }
        let stored = if inline {
            view
        } else {
            let offset = u32::try_from(self.arena.len())
                .ok()
                .filter(|o| o.checked_add(bytes.len() as u32).is_some())
                .ok_or_else(|| {
                    resources_datafusion_err!(
                        "count(DISTINCT ...) holds more than 4 GiB of distinct strings in one partition"
                    )
                })?;
            self.arena.extend_from_slice(bytes);
            make_view(bytes, 0, offset)
        };
        self.table.insert_unique(
            hash,
            Entry {
                hash,
                group,
                view: stored,
            },
            |e| e.hash,
        );
        self.counts[group] += 1;
        Ok(())
    }

    /// Keeps the entries of groups `n..` as groups `0..` (after the first `n`
    /// were emitted).
    fn drop_first(&mut self, n: usize) {
        let mut old = std::mem::take(&mut self.table);
        old.retain(|e| e.group >= n);
        let mut kept = HashTable::with_capacity(old.len());
        for mut e in old {
            e.group -= n;
            let start = (e.view >> 96) as u32 as usize;
            let bytes = self
                .arena
                .get(start..start + view_len(e.view))
                .unwrap_or_default();
            e.hash = self.hash(e.group, e.view, bytes);
            kept.insert_unique(e.hash, e, |e| e.hash);
        }
        self.table = kept;
    }
}

impl GroupsAccumulator for StringDistinctCountGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.counts.resize(total_num_groups, 0);
        let strings = values[0].as_string_view();
        let views = strings.views();
        // Within one batch, equal views are equal strings (a dictionary page
        // decodes a repeated string to one view): a (view, group) pair seen
        // in the batch's recent rows is counted already.
        // Kept between batches for its allocation only.
        let mut recent = std::mem::take(&mut self.recent);
        recent.clear();
        recent.resize(RECENT, (0, usize::MAX));
        let mut recent_long = std::mem::take(&mut self.recent_long);
        recent_long.clear();
        recent_long.resize(RECENT, (0, usize::MAX));
        for (row, &group) in group_indices.iter().enumerate() {
            let counted =
                strings.is_valid(row) && opt_filter.is_none_or(|f| f.is_valid(row) && f.value(row));
            if !counted {
                continue;
            }
            let view = views[row];
            let slot = &mut recent[recent_slot(view, group)];
            if *slot == (view, group) {
                continue;
            }
            *slot = (view, group);
            let bytes = strings.value(row).as_bytes();
            let hash = self.hash(group, view, bytes);
            if view_len(view) > 12 {
                // Equal long strings copied apart (a batch that a repartition
                // gathered) have different views: a recent row with the same
                // hash, group and bytes, still in cache, is counted already.
                let slot = &mut recent_long[(hash >> 54) as usize % RECENT];
                let (seen_hash, seen_row) = *slot;
                if seen_hash == hash
                    && seen_row != usize::MAX
                    && group_indices[seen_row] == group
                    && strings.value(seen_row).as_bytes() == bytes
                {
                    continue;
                }
                *slot = (hash, row);
            }
            self.insert_hashed(hash, group, view, bytes)?;
        }
        self.recent = recent;
        self.recent_long = recent_long;
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let counts = emit_to.take_needed(&mut self.counts);
        match emit_to {
            EmitTo::All => {
                self.table.clear();
                self.arena.clear();
            }
            EmitTo::First(n) => self.drop_first(n),
        }
        Ok(Arc::new(Int64Array::from(counts)))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let emitted = match emit_to {
            EmitTo::All => self.counts.len(),
            EmitTo::First(n) => n,
        };
        let mut offsets = Vec::with_capacity(emitted + 1);
        offsets.push(0i32);
        let mut total = 0usize;
        for &c in &self.counts[..emitted] {
            total += c as usize;
            offsets.push(i32::try_from(total).map_err(|_| {
                resources_datafusion_err!(
                    "count(DISTINCT ...) has more than 2^31 distinct values to pass on"
                )
            })?);
        }
        let mut views = vec![0u128; total];
        let mut cursors: Vec<usize> = offsets[..emitted].iter().map(|&o| o as usize).collect();
        for e in self.table.iter().filter(|e| e.group < emitted) {
            views[cursors[e.group]] = e.view;
            cursors[e.group] += 1;
        }
        let arena = match emit_to {
            EmitTo::All => std::mem::take(&mut self.arena),
            EmitTo::First(_) => self.arena.clone(),
        };
        // Every long view points at bytes of the arena, copied there from
        // valid strings; arrow checks it again.
        let strings = StringViewArray::try_new(
            ScalarBuffer::from(views),
            vec![Buffer::from_vec(arena)],
            None,
        )?;
        let list = ListArray::new(
            Arc::new(Field::new_list_field(DataType::Utf8View, true)),
            OffsetBuffer::new(offsets.into()),
            Arc::new(strings),
            None,
        );
        let _ = emit_to.take_needed(&mut self.counts);
        match emit_to {
            EmitTo::All => self.table.clear(),
            EmitTo::First(n) => self.drop_first(n),
        }
        Ok(vec![Arc::new(list)])
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.counts.resize(total_num_groups, 0);
        let lists = values[0].as_list::<i32>();
        let strings = lists.values().as_string_view();
        let views = strings.views();
        let offsets = lists.offsets();
        for (row, &group) in group_indices.iter().enumerate() {
            if lists.is_null(row) {
                continue;
            }
            for i in offsets[row] as usize..offsets[row + 1] as usize {
                if strings.is_valid(i) {
                    self.insert(group, views[i], strings.value(i).as_bytes())?;
                }
            }
        }
        Ok(())
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        // Each row its own list of its string (none when NULL or filtered out).
        let strings = values[0].as_string_view();
        let counted: BooleanArray = (0..strings.len())
            .map(|row| {
                Some(
                    strings.is_valid(row)
                        && opt_filter.is_none_or(|f| f.is_valid(row) && f.value(row)),
                )
            })
            .collect();
        let kept = datafusion::arrow::compute::filter(strings, &counted)?;
        let offsets = OffsetBuffer::from_lengths(counted.values().iter().map(usize::from));
        let list = ListArray::try_new(
            Arc::new(Field::new_list_field(DataType::Utf8View, true)),
            offsets,
            kept,
            None,
        )?;
        Ok(vec![Arc::new(list)])
    }

    fn size(&self) -> usize {
        size_of::<Self>()
            + self.table.capacity() * (size_of::<Entry>() + 1)
            + self.arena.capacity()
            + self.counts.capacity() * size_of::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::StringViewBuilder;
    use datafusion::arrow::datatypes::Schema;
    use datafusion::functions_aggregate::count::count_udaf;
    use datafusion::physical_expr::aggregate::AggregateExprBuilder;
    use datafusion::physical_expr::expressions::col;

    use super::*;

    /// Strings of rows: short and long, repeated within and across groups,
    /// empty, and NULL every 17th row; for an odd `salt` equal long strings
    /// share one view, as a dictionary page decodes.
    fn column(rows: usize, salt: usize) -> ArrayRef {
        let mut b = StringViewBuilder::new();
        if salt % 2 == 1 {
            b = b.with_deduplicate_strings();
        }
        for r in 0..rows {
            match (r * 7 + salt) % 17 {
                0 => b.append_null(),
                1 => b.append_value(""),
                k if k < 9 => b.append_value(format!("s{}", (r + salt) % 23)),
                _ => b.append_value(format!(
                    "did:plc:a-long-identifier-{}",
                    (r * 3 + salt) % 211
                )),
            }
        }
        Arc::new(b.finish())
    }

    /// DataFusion's per-group accumulators over the same rows: the oracle.
    fn datafusion_counts(batches: &[(ArrayRef, Vec<usize>)], groups: usize) -> Vec<i64> {
        let schema = Schema::new(vec![Field::new("s", DataType::Utf8View, true)]);
        let expr = AggregateExprBuilder::new(count_udaf(), vec![col("s", &schema).unwrap()])
            .schema(Arc::new(schema))
            .alias("n")
            .distinct()
            .build()
            .unwrap();
        let mut accs: Vec<_> = (0..groups)
            .map(|_| expr.create_accumulator().unwrap())
            .collect();
        for (values, idx) in batches {
            for (g, acc) in accs.iter_mut().enumerate() {
                let rows: Vec<u32> = idx
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| **x == g)
                    .map(|(r, _)| r as u32)
                    .collect();
                let rows = datafusion::arrow::array::UInt32Array::from(rows);
                let taken = datafusion::arrow::compute::take(values, &rows, None).unwrap();
                acc.update_batch(&[taken]).unwrap();
            }
        }
        accs.iter_mut()
            .map(|a| match a.evaluate().unwrap() {
                ScalarValue::Int64(Some(n)) => n,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn batches() -> Vec<(ArrayRef, Vec<usize>)> {
        (0..5)
            .map(|b| {
                let rows = 500 + b * 37;
                (
                    column(rows, b),
                    (0..rows).map(|r| (r * 13 + b) % 6).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn counts_as_datafusion_does() {
        let batches = batches();
        let mut ours = StringDistinctCountGroups::default();
        for (values, idx) in &batches {
            ours.update_batch(std::slice::from_ref(values), idx, None, 6)
                .unwrap();
        }
        let got = ours.evaluate(EmitTo::All).unwrap();
        assert_eq!(
            got.as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .values()
                .to_vec(),
            datafusion_counts(&batches, 6)
        );
    }

    #[test]
    fn state_merges_into_the_same_counts_and_emits_first_groups() {
        let batches = batches();
        let expected = datafusion_counts(&batches, 6);
        // Two partial accumulators over alternate batches, merged into one.
        let mut parts = [
            StringDistinctCountGroups::default(),
            StringDistinctCountGroups::default(),
        ];
        for (i, (values, idx)) in batches.iter().enumerate() {
            parts[i % 2]
                .update_batch(std::slice::from_ref(values), idx, None, 6)
                .unwrap();
        }
        let mut merged = StringDistinctCountGroups::default();
        let first = parts[0].state(EmitTo::First(2)).unwrap();
        merged.merge_batch(&first, &[0, 1], 6).unwrap();
        let rest = parts[0].state(EmitTo::All).unwrap();
        merged.merge_batch(&rest, &[2, 3, 4, 5], 6).unwrap();
        let all = parts[1].state(EmitTo::All).unwrap();
        merged.merge_batch(&all, &[0, 1, 2, 3, 4, 5], 6).unwrap();
        // Rows passed on unaggregated (DataFusion skipping the partial
        // aggregate) merge the same: the first batch again changes nothing.
        let (values, idx) = &batches[0];
        let rows = merged
            .convert_to_state(std::slice::from_ref(values), None)
            .unwrap();
        merged.merge_batch(&rows, idx, 6).unwrap();
        let head = merged.evaluate(EmitTo::First(4)).unwrap();
        let tail = merged.evaluate(EmitTo::All).unwrap();
        let int64 = |a: &ArrayRef| {
            a.as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .values()
                .to_vec()
        };
        assert_eq!([int64(&head), int64(&tail)].concat(), expected);
    }

    #[test]
    fn filtered_and_null_rows_are_not_counted() {
        let values: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("a"),
            None,
            Some("b"),
            Some("a-very-long-string-here"),
        ]));
        let filter = BooleanArray::from(vec![Some(true), Some(true), None, Some(false)]);
        let mut ours = StringDistinctCountGroups::default();
        ours.update_batch(&[values], &[0, 0, 0, 0], Some(&filter), 1)
            .unwrap();
        let got = ours.evaluate(EmitTo::All).unwrap();
        assert_eq!(
            got.as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .value(0),
            1
        );
    }

    /// Rows split by a hash of their string, as the repartition below
    /// [`PartitionedDistinctCount`] splits them: each string in one part.
    fn split_by_string(
        batches: &[(ArrayRef, Vec<usize>)],
        parts: usize,
    ) -> Vec<Vec<(ArrayRef, Vec<usize>)>> {
        let hasher = RandomState::with_seed(7);
        (0..parts)
            .map(|part| {
                batches
                    .iter()
                    .map(|(values, idx)| {
                        let strings = values.as_string_view();
                        let rows: Vec<u32> = (0..strings.len())
                            .filter(|&r| {
                                let key = strings.is_valid(r).then(|| strings.value(r));
                                hasher.hash_one(key) as usize % parts == part
                            })
                            .map(|r| r as u32)
                            .collect();
                        let groups = rows.iter().map(|&r| idx[r as usize]).collect();
                        let rows = datafusion::arrow::array::UInt32Array::from(rows);
                        (
                            datafusion::arrow::compute::take(values, &rows, None).unwrap(),
                            groups,
                        )
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn partitioned_counts_add_up_to_the_distinct_counts() {
        let batches = batches();
        let expected = datafusion_counts(&batches, 6);
        let mut last = PartitionedGroups::default();
        for part in split_by_string(&batches, 3) {
            let mut first = PartitionedGroups::default();
            for (values, idx) in &part {
                first
                    .update_batch(std::slice::from_ref(values), idx, None, 6)
                    .unwrap();
            }
            let state = first.state(EmitTo::All).unwrap();
            assert_eq!(state[0].data_type(), &DataType::Int64);
            last.merge_batch(&state, &[0, 1, 2, 3, 4, 5], 6).unwrap();
        }
        let got = last.evaluate(EmitTo::All).unwrap();
        assert_eq!(got.as_primitive::<Int64Type>().values().to_vec(), expected);
        // Without GROUP BY: one group.
        let mut total = OneGroup(PartitionedGroups::default());
        for part in split_by_string(&batches, 2) {
            let mut first = OneGroup(PartitionedGroups::default());
            for (values, _) in &part {
                first.update_batch(std::slice::from_ref(values)).unwrap();
            }
            let state = first.state().unwrap();
            total.merge_batch(&[state[0].to_array().unwrap()]).unwrap();
        }
        let mut all = OneGroup(PartitionedGroups::default());
        for (values, _) in &batches {
            all.update_batch(std::slice::from_ref(values)).unwrap();
        }
        assert_eq!(total.evaluate().unwrap(), all.evaluate().unwrap());
        let distinct: std::collections::HashSet<&str> = batches
            .iter()
            .flat_map(|(values, _)| values.as_string_view().iter().flatten())
            .collect();
        assert_eq!(
            all.evaluate().unwrap(),
            ScalarValue::Int64(Some(distinct.len() as i64))
        );
    }

    #[test]
    fn partitioned_rows_after_an_early_state_are_an_error() {
        let batches = batches();
        let (values, idx) = &batches[0];
        let mut first = PartitionedGroups::default();
        first
            .update_batch(std::slice::from_ref(values), idx, None, 6)
            .unwrap();
        first.state(EmitTo::All).unwrap();
        let err = first
            .update_batch(std::slice::from_ref(values), idx, None, 6)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ran out of memory") && err.contains("variant.partition_distinct_count"),
            "{err}"
        );
    }
}
