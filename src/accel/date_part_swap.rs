//! Every call of DataFusion's own `date_part` object swapped for
//! [`super::FastDatePart`], which answers the same.
//!
//! A SQL `date_part(...)` already names ours ([`super::with_accelerations`]
//! registers it), but
//! DataFusion plans `EXTRACT(HOUR FROM t)` with its built-in object, and so
//! does its `date_part()` expression function. The plan reads the same before
//! and after; only the function object behind the name changes:
//!
//! ```text
//! before: Projection: date_part(Utf8("HOUR"), t.ts)    (DataFusion's DatePartFunc)
//! after:  Projection: date_part(Utf8("HOUR"), t.ts)    (FastDatePart)
//! ```
//!
//! The rule always swaps; `variant.fast_date_part = false` turns the fast path
//! off inside the function, at run time.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

use super::FastDatePart;

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct FastDatePartSwap;

impl AnalyzerRule for FastDatePartSwap {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            node.map_expressions(|e| {
                e.transform_up(|e| {
                    let Expr::ScalarFunction(call) = &e else {
                        return Ok(Transformed::no(e));
                    };
                    Ok(match FastDatePart::replacing(&call.func) {
                        Some(fast) => Transformed::yes(Expr::ScalarFunction(
                            ScalarFunction::new_udf(Arc::new(fast), call.args.clone()),
                        )),
                        None => Transformed::no(e),
                    })
                })
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "fast_date_part_swap"
    }
}

#[cfg(test)]
mod tests {
    use datafusion::logical_expr::ScalarUDFImpl;

    use super::*;

    /// The functions object behind every `date_part` call of `sql`'s plan.
    async fn date_parts(sql: &str) -> Vec<bool> {
        let ctx = crate::accel::accelerated_context();
        let plan = ctx.sql(sql).await.unwrap().into_optimized_plan().unwrap();
        let mut fast = Vec::new();
        plan.apply_with_subqueries(|node| {
            node.apply_expressions(|e| {
                e.apply(|e| {
                    if let Expr::ScalarFunction(call) = e
                        && call.func.name() == "date_part"
                    {
                        fast.push(call.func.inner().is::<FastDatePart>());
                    }
                    Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
                })
            })
        })
        .unwrap();
        fast
    }

    #[tokio::test]
    async fn extract_and_date_part_both_reach_the_fast_function() {
        let sql = "SELECT EXTRACT(HOUR FROM t) AS a, date_part('minute', t) AS b, datepart('day', t) AS c \
                   FROM (SELECT to_timestamp_micros(v) AS t FROM (VALUES (1), (2)) AS x(v))";
        assert_eq!(date_parts(sql).await, vec![true, true, true]);
        assert_eq!(FastDatePart::default().name(), "date_part");
    }
}
