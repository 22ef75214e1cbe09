//! `count(DISTINCT s) ... GROUP BY` counted where each string `s` lives in one
//! partition only, so that the final aggregate adds counts instead of merging
//! sets of strings.
//!
//! DataFusion plans `count(DISTINCT s)` in two phases: each input partition
//! collects its distinct strings per group, and the final aggregate (one per
//! hash partition of the group keys) inserts every partial set again to
//! remove the strings that several partitions saw. In JSONBench Q2
//! (`count(DISTINCT v:did::string) ... GROUP BY event`) that second insert was
//! a third of the query, and it ran on as many cores as there are events with
//! many users (one `app.bsky.feed.like` holds 43% of the distinct pairs).
//!
//! This rule repartitions the input by a hash of `s` first. Every string then
//! reaches one partial aggregate only, whose distinct count per group is its
//! share of the group's distinct count: the partial aggregate passes on a
//! count ([`PartitionedDistinctCount`]) and the final aggregate adds them up.
//!
//! ```text
//! before: AggregateExec: mode=FinalPartitioned, gby=[event@0 as event], aggr=[count(*), count(DISTINCT did)]
//!           RepartitionExec: partitioning=Hash([event@0], 2), input_partitions=2
//!             AggregateExec: mode=Partial, gby=[event@0 as event], aggr=[count(*), count(DISTINCT did)]
//!               VariantScanExec: extractions=[v: $.commit.collection AS STRING, v: $.did AS STRING]
//! after:  AggregateExec: mode=FinalPartitioned, gby=[event@0 as event], aggr=[count(*), count_distinct_partitioned(did@1) as count(DISTINCT did)]
//!           RepartitionExec: partitioning=Hash([event@0], 2), input_partitions=2
//!             AggregateExec: mode=Partial, gby=[event@0 as event], aggr=[count(*), count_distinct_partitioned(did@1) as count(DISTINCT did)]
//!               RepartitionExec: partitioning=Hash([did@1], 2), input_partitions=2
//!                 VariantScanExec: extractions=[v: $.commit.collection AS STRING, v: $.did AS STRING]
//! ```
//!
//! The aggregates keep their names (EXPLAIN shows
//! `count_distinct_partitioned(did@1) as count(DISTINCT did)`) above the new
//! `RepartitionExec` on the distinct argument. In a distributed plan that
//! repartition is a shuffle between stages like any other hash repartition.
//!
//! It fires on a `FinalPartitioned` aggregate over a hash repartition of a
//! `Partial` aggregate, without grouping sets, limit or ordered input, with
//! exactly one `DISTINCT` aggregate: `count(DISTINCT c)` of a `Utf8View`
//! column `c` (with or without `FILTER`). The other aggregates may be anything
//! without `DISTINCT` or `ORDER BY` (whose sorted input a repartition would
//! not keep). It never fires without `GROUP BY`, on one partition, on
//! two `DISTINCT` aggregates, or on a distinct argument that is an expression
//! (it would be computed twice).
//!
//! A partial aggregate short of memory passes its groups on early and starts
//! again; a string counted before would then be counted twice, so
//! [`PartitionedDistinctCount`] fails the query with an error saying so
//! instead. `variant.partition_distinct_count = false` turns the rule off.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::physical_expr::Partitioning;
use datafusion::physical_expr::aggregate::{AggregateExprBuilder, AggregateFunctionExpr};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::execution_plan::replace_children_if_necessary;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{ExecutionPlan, InputOrderMode};

use super::count_distinct::PartitionedDistinctCount;
use crate::config::VariantOptions;

/// The physical optimizer rule described in the module docs.
#[derive(Debug, Default)]
pub struct PartitionDistinctCount;

impl PhysicalOptimizerRule for PartitionDistinctCount {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !VariantOptions::enabled(config, |o| o.partition_distinct_count) {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            Ok(match rewrite(&node)? {
                Some(new) => Transformed::yes(new),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "PartitionDistinctCount"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// The two-phase aggregate of the module docs over `node`, rewritten; `None`
/// when the rule does not apply.
fn rewrite(node: &Arc<dyn ExecutionPlan>) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some(last) = node.downcast_ref::<AggregateExec>() else {
        return Ok(None);
    };
    let Some(shuffle) = last.input().downcast_ref::<RepartitionExec>() else {
        return Ok(None);
    };
    let Some(first) = shuffle.input().downcast_ref::<AggregateExec>() else {
        return Ok(None);
    };
    let plain = |agg: &AggregateExec| {
        !agg.group_expr().is_empty()
            && !agg.group_expr().has_grouping_set()
            && agg.limit_options().is_none()
            && agg.dynamic_expressions_produced().is_empty()
            && *agg.input_order_mode() == InputOrderMode::Linear
    };
    // An aggregate with ORDER BY needs its input in order, which the new
    // repartition would not keep.
    let unordered = first.aggr_expr().iter().all(|a| a.order_bys().is_empty());
    let shape = *last.mode() == AggregateMode::FinalPartitioned
        && *first.mode() == AggregateMode::Partial
        && unordered
        && matches!(shuffle.partitioning(), Partitioning::Hash(..))
        && !shuffle.preserve_order()
        && plain(last)
        && plain(first);
    if !shape {
        return Ok(None);
    }
    let input_schema = first.input_schema();
    let mut distinct = first
        .aggr_expr()
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_distinct());
    let (Some((at, counted)), None) = (distinct.next(), distinct.next()) else {
        return Ok(None);
    };
    let args = counted.expressions();
    let [arg] = args.as_slice() else {
        return Ok(None);
    };
    let fits = counted.fun().name() == "count"
        && arg.downcast_ref::<Column>().is_some()
        && arg.data_type(&input_schema)? == DataType::Utf8View;
    if !fits {
        return Ok(None);
    }
    let partitioned: Arc<AggregateFunctionExpr> = Arc::new(
        AggregateExprBuilder::new(PartitionedDistinctCount::udaf(), vec![Arc::clone(arg)])
            .schema(Arc::clone(&input_schema))
            .alias(counted.name())
            .human_display(format!("{}({arg})", PartitionedDistinctCount::NAME))
            .human_display_alias(counted.name())
            .build()?,
    );
    let mut aggregates = first.aggr_expr().to_vec();
    aggregates[at] = partitioned;
    let partitions = shuffle.partitioning().partition_count();
    // A round-robin spread below is replaced, not fed.
    let source = match first.input().downcast_ref::<RepartitionExec>() {
        Some(spread) if matches!(spread.partitioning(), Partitioning::RoundRobinBatch(_)) => {
            Arc::clone(spread.input())
        }
        _ => Arc::clone(first.input()),
    };
    let by_arg = Arc::new(RepartitionExec::try_new(
        source,
        Partitioning::Hash(vec![Arc::clone(arg)], partitions),
    )?);
    let first_new = Arc::new(AggregateExec::try_new(
        AggregateMode::Partial,
        first.group_expr().clone(),
        aggregates.clone(),
        first.filter_expr().to_vec(),
        by_arg,
        Arc::clone(&input_schema),
    )?);
    let shuffle_new = replace_children_if_necessary(Arc::clone(last.input()), vec![first_new])?;
    let last_new = Arc::new(AggregateExec::try_new(
        AggregateMode::FinalPartitioned,
        last.group_expr().clone(),
        aggregates,
        last.filter_expr().to_vec(),
        shuffle_new,
        last.input_schema(),
    )?);
    // The plan above reads the same columns, types and nullability.
    if last_new.schema() != last.schema() {
        return Ok(None);
    }
    Ok(Some(last_new))
}
