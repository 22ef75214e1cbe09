//! Refuses, when a query is planned, the operations Spark does not allow on
//! VARIANT values: comparisons and arithmetic, `IN`/`BETWEEN`, `ORDER BY`,
//! `GROUP BY`, `DISTINCT`/`UNION`, `min`/`max`, window ordering and join keys.
//! (`UNION ALL`, `count(v)` and `first_value(v)` stay allowed.)

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::expr::{AggregateFunction, Sort, WindowFunction};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

use super::casts::input_schema;
use crate::array::is_variant_type;

/// The analyzer rule described in the module docs. It runs before type coercion.
#[derive(Debug, Default)]
pub struct VariantOperationCheck;

impl AnalyzerRule for VariantOperationCheck {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.apply_with_subqueries(|node| {
            check_node(node)?;
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(plan)
    }

    fn name(&self) -> &'static str {
        "variant_operation_check"
    }
}

fn is_variant(expr: &Expr, schema: &DFSchema) -> bool {
    expr.get_type(schema).is_ok_and(|t| is_variant_type(&t))
}

fn check_sort(sorts: &[Sort], schema: &DFSchema, what: &str) -> Result<()> {
    for s in sorts {
        if is_variant(&s.expr, schema) {
            return plan_err!(
                "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] {what} does not support the VARIANT type (expression {}); extract a typed value with variant_get first",
                s.expr
            );
        }
    }
    Ok(())
}

fn check_node(node: &LogicalPlan) -> Result<()> {
    let schema = input_schema(node);
    match node {
        LogicalPlan::Sort(s) => check_sort(&s.expr, &schema, "ORDER BY")?,
        LogicalPlan::Aggregate(a) => {
            for g in a.group_expr.iter().flat_map(|g| match g {
                Expr::GroupingSet(set) => set.distinct_expr().into_iter().cloned().collect(),
                other => vec![other.clone()],
            }) {
                if is_variant(&g, &schema) {
                    return plan_err!(
                        "[GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE] The expression {g} cannot be used as a grouping expression because its data type VARIANT is not an orderable data type"
                    );
                }
            }
        }
        LogicalPlan::Distinct(d) => {
            for f in d.input().schema().fields() {
                if is_variant_type(f.data_type()) {
                    return plan_err!(
                        "[UNSUPPORTED_FEATURE.SET_OPERATION_ON_VARIANT_TYPE] DISTINCT and UNION cannot be used on VARIANT columns, but column {} is VARIANT",
                        f.name()
                    );
                }
            }
        }
        LogicalPlan::Join(j) => {
            for (l, r) in &j.on {
                if is_variant(l, &schema) || is_variant(r, &schema) {
                    return plan_err!(
                        "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] VARIANT values cannot be join keys ({l} = {r})"
                    );
                }
            }
        }
        _ => {}
    }
    for expr in node.expressions() {
        expr.apply(|e| {
            check_expr(e, &schema)?;
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    Ok(())
}

fn check_expr(e: &Expr, schema: &DFSchema) -> Result<()> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if is_variant(left, schema) || is_variant(right, schema) =>
        {
            let class = if matches!(
                op,
                Operator::Eq
                    | Operator::NotEq
                    | Operator::Lt
                    | Operator::LtEq
                    | Operator::Gt
                    | Operator::GtEq
                    | Operator::IsDistinctFrom
                    | Operator::IsNotDistinctFrom
            ) {
                "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE"
            } else {
                "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES"
            };
            return plan_err!(
                "[{class}] The operator {op} does not support the VARIANT type in {e}; extract a typed value with variant_get or a cast first"
            );
        }
        Expr::InList(il)
            if is_variant(&il.expr, schema) || il.list.iter().any(|x| is_variant(x, schema)) =>
        {
            return plan_err!(
                "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] IN does not support the VARIANT type in {e}"
            );
        }
        Expr::Between(b) if is_variant(&b.expr, schema) => {
            return plan_err!(
                "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] BETWEEN does not support the VARIANT type in {e}"
            );
        }
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            let name = func.name();
            let orders = matches!(name, "min" | "max" | "median" | "approx_distinct");
            if (orders || params.distinct) && params.args.iter().any(|a| is_variant(a, schema)) {
                {
                    return plan_err!(
                        "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] {name}{} does not support the VARIANT type",
                        if params.distinct { " DISTINCT" } else { "" }
                    );
                }
            }
            check_sort(&params.order_by, schema, "an aggregate's ORDER BY")?;
        }
        Expr::WindowFunction(w) => {
            let WindowFunction { params, .. } = w.as_ref();
            for p in &params.partition_by {
                if is_variant(p, schema) {
                    return plan_err!(
                        "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] PARTITION BY does not support the VARIANT type ({p})"
                    );
                }
            }
            check_sort(&params.order_by, schema, "a window's ORDER BY")?;
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn window_order_by_variant_is_refused() {
        let ctx = crate::variant_context();
        ctx.sql("CREATE TABLE t AS SELECT parse_json('1') AS v")
            .await
            .unwrap();
        let df = ctx
            .sql("SELECT row_number() OVER (ORDER BY v) FROM t")
            .await
            .unwrap();
        let err = df.collect().await.unwrap_err();
        assert!(err.to_string().contains("INVALID_ORDERING_TYPE"), "{err}");
    }
}
