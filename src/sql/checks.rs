//! Refuses, when a query is planned, the operations Spark does not allow on
//! VARIANT values: comparisons and arithmetic, `IN`/`BETWEEN`, `CASE v WHEN`,
//! `greatest`/`least`, `ORDER BY`, `GROUP BY`, `DISTINCT`/`UNION`, `min`/`max`,
//! window ordering and join keys, each with Spark 4.3's error class. Binary
//! operators written in SQL are refused earlier, by the expression planner
//! ([`super::VariantExprPlanner`]), since DataFusion's own coercion error
//! comes before any analyzer rule.
//! (`UNION ALL`, `count(v)` and `first_value(v)` stay allowed.)

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::expr::{AggregateFunction, Sort, WindowFunction};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

use super::casts::input_schema;
use crate::array::is_variant_type;
use crate::udf::CONSTANT_BOOLEAN_ARGUMENTS;
use crate::udf::coerce::{data_diff_types, first_unconvertible, implicitly_variant};

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

/// How an operator meets a VARIANT operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OperatorKind {
    /// `=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`, `IS [NOT] DISTINCT FROM`.
    Comparison,
    /// Arithmetic, logical and bitwise operators.
    Other,
}

/// Spark's error message for a binary operator with a VARIANT operand, or `None` when
/// neither side is a VARIANT. Spark 4.3.0 (docs/spark-everyday.md, G1):
/// a VARIANT is never implicitly a number or a boolean (`1 + v:a`, `v:a = 1`,
/// `v:c AND true`: `BINARY_OP_DIFF_TYPES`; `v:a + v:b`: `BINARY_OP_WRONG_TYPE`),
/// and a comparison of two VARIANTs, or of a VARIANT with a STRING (which
/// Spark converts to VARIANT), is `INVALID_ORDERING_TYPE`.
pub(crate) fn variant_operator_error(
    kind: OperatorKind,
    op: &dyn std::fmt::Display,
    left: &DataType,
    right: &DataType,
    expr: &dyn std::fmt::Display,
) -> Option<String> {
    let (lv, rv) = (is_variant_type(left), is_variant_type(right));
    if !lv && !rv {
        return None;
    }
    let other = if lv { right } else { left };
    let converts = rv && lv || implicitly_variant(other);
    let name = |t: &DataType| {
        if is_variant_type(t) {
            "VARIANT".to_string()
        } else {
            t.to_string()
        }
    };
    let (class, why) = match kind {
        OperatorKind::Comparison if converts => (
            "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE",
            format!("the operator {op} does not support ordering on type \"VARIANT\""),
        ),
        OperatorKind::Other if lv && rv => (
            "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE",
            format!("the binary operator {op} does not take the type \"VARIANT\""),
        ),
        _ => (
            "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
            format!(
                "the left and right operands of the binary operator {op} have incompatible types (\"{}\" and \"{}\")",
                name(left),
                name(right)
            ),
        ),
    };
    Some(format!(
        "[{class}] Cannot resolve \"{expr}\" due to data type mismatch: {why}; extract a typed value first (v:a::int, variant_get(v, '$.a', 'int'))"
    ))
}

fn check_expr(e: &Expr, schema: &DFSchema) -> Result<()> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if is_variant(left, schema) || is_variant(right, schema) =>
        {
            let kind = if matches!(
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
                OperatorKind::Comparison
            } else {
                OperatorKind::Other
            };
            let (Ok(l), Ok(r)) = (left.get_type(schema), right.get_type(schema)) else {
                return Ok(());
            };
            if let Some(message) = variant_operator_error(kind, op, &l, &r, e) {
                return plan_err!("{message}");
            }
        }
        Expr::ScalarFunction(f)
            if matches!(f.name(), "greatest" | "least")
                && f.args.iter().any(|a| is_variant(a, schema)) =>
        {
            // Spark: `least(v:a, 1)` mixes types; `greatest(v:a, v:b)` orders.
            let types: Vec<DataType> = f
                .args
                .iter()
                .filter_map(|a| a.get_type(schema).ok())
                .collect();
            if let Some(other) = first_unconvertible(&types) {
                return Err(data_diff_types(f.name(), other));
            }
            return plan_err!(
                "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] {} does not support ordering on type \"VARIANT\" in {e}; extract a typed value first",
                f.name()
            );
        }
        Expr::ScalarFunction(f) => {
            // Spark folds `create_if_missing` and `include_arrays` when it plans
            // the query: a constant expression (`CAST(NULL AS BOOLEAN)`) is
            // one, a column is not.
            let name = f.name();
            for (func, pos, arg_name) in CONSTANT_BOOLEAN_ARGUMENTS {
                if *func == name
                    && let Some(arg) = f.args.get(*pos)
                    && (!arg.column_refs().is_empty() || arg.is_volatile())
                {
                    return plan_err!(
                        "[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] {name}: the input `{arg_name}` should be a foldable \"BOOLEAN\" expression; however, got {arg}"
                    );
                }
            }
        }
        Expr::InList(il)
            if is_variant(&il.expr, schema) || il.list.iter().any(|x| is_variant(x, schema)) =>
        {
            // Spark: `v:a IN (1, 2)` mixes types (DATA_DIFF_TYPES); with only
            // VARIANTs and strings (converted to VARIANT) it is the ordering.
            let types: Vec<DataType> = std::iter::once(il.expr.as_ref())
                .chain(&il.list)
                .filter_map(|x| x.get_type(schema).ok())
                .collect();
            if let Some(other) = first_unconvertible(&types) {
                return Err(data_diff_types("in", other));
            }
            return plan_err!(
                "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] IN does not support ordering on type \"VARIANT\" in {e}"
            );
        }
        Expr::Case(case) => {
            if let Some(operand) = &case.expr
                && let Ok(t) = operand.get_type(schema)
            {
                for (when, _) in &case.when_then_expr {
                    if let Ok(w) = when.get_type(schema)
                        && let Some(message) =
                            variant_operator_error(OperatorKind::Comparison, &"=", &t, &w, e)
                    {
                        return plan_err!("{message}");
                    }
                }
            }
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
