//! `LATERAL variant_explode(t.v)` (and `variant_explode_outer`) over the rows
//! of a table, the way Spark writes it:
//!
//! ```sql
//! SELECT t.id, e.pos, e.key, e.value FROM t, LATERAL variant_explode(t.v) AS e
//! ```
//!
//! DataFusion plans a lateral table function as a correlated subquery and
//! cannot run it (it does not decorrelate an `Unnest`). Two pieces make it
//! run. [`LateralExplodePlanner`] plans the function as that subquery:
//!
//! ```text
//! SubqueryAlias: e
//!   Subquery:
//!     Projection: __variant_explode['pos'] AS pos, ...['key'] AS key, ...['value'] AS value
//!       Unnest: __variant_explode
//!         Projection: variant_explode(outer_ref(t.v)) AS __variant_explode
//!           EmptyRelation: rows=1
//! ```
//!
//! and the analyzer rule [`DecorrelateLateralExplode`] turns the lateral join
//! over it into an unnest of the left side:
//!
//! ```text
//! Cross Join                              Projection: t.id, t.v, __variant_explode['pos'] AS e.pos, ...
//!   t                                =>     Unnest: __variant_explode (NULL lists dropped)
//!   SubqueryAlias: e (Subquery above)         Projection: t.id, t.v, variant_explode(t.v) AS __variant_explode
//!                                               t
//! ```
//!
//! `variant_explode` gives no row for a scalar, an empty container, a variant
//! null or SQL NULL; `variant_explode_outer` gives one row of NULLs for each
//! (Spark 4.3.0's answers, pinned in `variant_explode.slt`).
//!
//! `LEFT JOIN LATERAL ... ON true` (which Spark 4.3.0 refuses for a VARIANT
//! reference) keeps every left row: the call's list, when empty, becomes NULL,
//! and the unnest keeps NULL lists as one row of NULLs. Any other condition of
//! a left lateral join is refused by name.

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result, plan_err};
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{
    Expr, ExprSchemable, JoinType, LogicalPlan, LogicalPlanBuilder, Subquery, SubqueryAlias, lit,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::{FunctionArg, FunctionArgExpr, TableFactor};

use crate::udf::{variant_explode_outer_udf, variant_explode_udf, variant_flatten_udf};

/// The name of the column holding the exploded list.
const EXPLODED: &str = "__variant_explode";

/// Plans `LATERAL variant_explode(x)` / `LATERAL variant_explode_outer(x)` as
/// the correlated subquery in the module docs.
#[derive(Debug, Default)]
pub struct LateralExplodePlanner;

impl RelationPlanner for LateralExplodePlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        if let Some(positional) = positional_arguments(&relation)? {
            return Ok(RelationPlanning::Original(Box::new(positional)));
        }
        let TableFactor::Function {
            lateral: true,
            name,
            args,
            alias,
            ..
        } = &relation
        else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let lower = name.to_string().to_ascii_lowercase();
        let (udf, outputs) = match lower.as_str() {
            "variant_explode" => (variant_explode_udf(), EXPLODE_OUTPUTS),
            "variant_explode_outer" => (variant_explode_outer_udf(), EXPLODE_OUTPUTS),
            "variant_flatten" => (variant_flatten_udf(), FLATTEN_OUTPUTS),
            _ => return Ok(RelationPlanning::Original(Box::new(relation))),
        };
        let args = ordered_arguments(&lower, args)?;
        let mut call_args = Vec::with_capacity(args.len());
        for arg in args {
            let FunctionArgExpr::Expr(e) = arg else {
                return plan_err!("{lower}: unsupported argument {arg}");
            };
            call_args.push(context.sql_to_expr(e, &DFSchema::empty())?);
        }
        if lower != "variant_flatten" && call_args.len() != 1 {
            return plan_err!(
                "{} takes exactly one VARIANT argument, got {}",
                udf.name(),
                call_args.len()
            );
        }
        let exploded = Column::from_name(EXPLODED);
        let output = |name: &str| {
            if name == SEQ {
                // Numbered per input row when the join is decorrelated.
                return lit(1i64).alias(name);
            }
            datafusion::functions::core::get_field()
                .call(vec![Expr::Column(exploded.clone()), lit(name)])
                .alias(name)
        };
        let plan = LogicalPlanBuilder::empty(true)
            .project(vec![udf.call(call_args).alias(EXPLODED)])?
            .unnest_column(exploded.clone())?
            .project(outputs.iter().map(|n| output(n)).collect::<Vec<_>>())?
            .build()?;
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan,
            alias.clone(),
        ))))
    }
}

/// The columns of `variant_explode` and `variant_explode_outer`.
const EXPLODE_OUTPUTS: &[&str] = &["pos", "key", "value"];
/// The columns of `variant_flatten`; `seq` numbers the input rows, the others
/// are fields of its structs.
const FLATTEN_OUTPUTS: &[&str] = &["seq", "key", "path", "index", "value", "this"];
/// The name of `variant_flatten`'s row number.
const SEQ: &str = "seq";
/// The column holding the row number of the left side.
const ROW_NUMBER: &str = "__variant_flatten_seq";

/// The arguments of a lateral call in position order, named ones placed by
/// name (`input =>` for the explode functions, `variant_flatten`'s five with
/// their defaults for the ones left out).
fn ordered_arguments(name: &str, args: &[FunctionArg]) -> Result<Vec<FunctionArgExpr>> {
    let parameters = table_function_parameters(name).unwrap_or(&[]);
    let mut slots = place_arguments(name, parameters, args)?;
    fill_defaults(name, &mut slots);
    let given = slots.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    let mut ordered = Vec::with_capacity(given);
    for (slot, value) in slots.into_iter().take(given).enumerate() {
        match value {
            Some(v) => ordered.push(v),
            None => return plan_err!("{name}: argument '{}' is missing", parameters[slot]),
        }
    }
    Ok(ordered)
}

/// Named and positional arguments put into their parameter's slot.
fn place_arguments(
    name: &str,
    parameters: &[&str],
    args: &[FunctionArg],
) -> Result<Vec<Option<FunctionArgExpr>>> {
    let mut slots: Vec<Option<FunctionArgExpr>> = vec![None; parameters.len()];
    for (i, arg) in args.iter().enumerate() {
        let (slot, value) = match arg {
            FunctionArg::Unnamed(value) => (i, value),
            FunctionArg::Named {
                name: arg_name,
                arg: value,
                ..
            } => {
                let Some(slot) = parameters
                    .iter()
                    .position(|p| arg_name.value.eq_ignore_ascii_case(p))
                else {
                    return plan_err!(
                        "{name}: unknown argument '{}'; its arguments are {}",
                        arg_name.value,
                        parameters.join(", ")
                    );
                };
                (slot, value)
            }
            other @ FunctionArg::ExprNamed { .. } => {
                return plan_err!("{name}: unsupported argument {other}");
            }
        };
        match slots.get_mut(slot) {
            Some(s @ None) => *s = Some(value.clone()),
            Some(Some(_)) => {
                return plan_err!("{name}: argument '{}' is given twice", parameters[slot]);
            }
            None => {
                return plan_err!(
                    "{name}: too many arguments; its arguments are {}",
                    parameters.join(", ")
                );
            }
        }
    }
    Ok(slots)
}

/// `variant_flatten`'s defaults for the arguments left out before the last
/// one given (Snowflake users name only the ones they change).
fn fill_defaults(name: &str, slots: &mut [Option<FunctionArgExpr>]) {
    use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, Value};
    if name != "variant_flatten" {
        return;
    }
    let given = slots.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    for (i, slot) in slots.iter_mut().enumerate().take(given).skip(1) {
        if slot.is_none() {
            let value = match i {
                1 => Value::SingleQuotedString(String::new()),
                2 | 3 => Value::Boolean(false),
                _ => Value::SingleQuotedString("both".to_string()),
            };
            *slot = Some(FunctionArgExpr::Expr(SqlExpr::Value(value.into())));
        }
    }
}

/// The parameter names of the crate's table functions that take named
/// arguments, in position order.
fn table_function_parameters(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "variant_explode" | "variant_explode_outer" => Some(&["input"]),
        "variant_flatten" => Some(&crate::udf::flatten::PARAMETERS),
        "variant_paths" => Some(&["path", "sample"]),
        _ => None,
    }
}

/// `FROM variant_explode(input => x)` or `FROM variant_paths('t', sample => 10)`
/// with its named arguments made positional (DataFusion's table functions take
/// positional arguments only); `Ok(None)` for any other relation, or one
/// without named arguments.
fn positional_arguments(relation: &TableFactor) -> Result<Option<TableFactor>> {
    let TableFactor::Table {
        name,
        args: Some(args),
        ..
    } = relation
    else {
        return Ok(None);
    };
    let lower = name.to_string().to_ascii_lowercase();
    if table_function_parameters(&lower).is_none() {
        return Ok(None);
    }
    if !args
        .args
        .iter()
        .any(|a| matches!(a, FunctionArg::Named { .. }))
    {
        return Ok(None);
    }
    let positional = ordered_arguments(&lower, &args.args)?
        .into_iter()
        .map(FunctionArg::Unnamed)
        .collect();
    let mut relation = relation.clone();
    if let TableFactor::Table {
        args: Some(args), ..
    } = &mut relation
    {
        args.args = positional;
    }
    Ok(Some(relation))
}

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct DecorrelateLateralExplode;

impl AnalyzerRule for DecorrelateLateralExplode {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(decorrelate)
            .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "decorrelate_lateral_variant_explode"
    }
}

/// The explode call of a subquery planned by [`LateralExplodePlanner`]:
/// `(call, output names)`, the call's outer references made plain columns.
fn explode_call(subquery: &LogicalPlan) -> Option<(Expr, Vec<String>)> {
    let LogicalPlan::Projection(outer) = subquery else {
        return None;
    };
    // Column aliases (`AS e(p, k, val)`) add a projection of renames on top;
    // the names are its output's.
    let names = outer
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let top = match outer.input.as_ref() {
        LogicalPlan::Projection(p) => p,
        _ => outer,
    };
    let LogicalPlan::Unnest(unnest) = top.input.as_ref() else {
        return None;
    };
    let LogicalPlan::Projection(inner) = unnest.input.as_ref() else {
        return None;
    };
    if !matches!(inner.input.as_ref(), LogicalPlan::EmptyRelation(e) if e.produce_one_row) {
        return None;
    }
    let [Expr::Alias(alias)] = inner.expr.as_slice() else {
        return None;
    };
    if alias.name != EXPLODED {
        return None;
    }
    let call = alias
        .expr
        .as_ref()
        .clone()
        .transform(|e| match e {
            Expr::OuterReferenceColumn(_, column) => Ok(Transformed::yes(Expr::Column(column))),
            other => Ok(Transformed::no(other)),
        })
        .ok()?
        .data;
    Some((call, names))
}

fn decorrelate(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Join(join) = &plan else {
        return Ok(Transformed::no(plan));
    };
    // `LEFT JOIN LATERAL ... ON true` keeps a left row whose call gives no
    // row, with NULLs.
    let left_join = match join.join_type {
        JoinType::Inner => false,
        JoinType::Left => true,
        _ => return Ok(Transformed::no(plan)),
    };
    if !join.on.is_empty() {
        return Ok(Transformed::no(plan));
    }
    let LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) = join.right.as_ref() else {
        return Ok(Transformed::no(plan));
    };
    let LogicalPlan::Subquery(Subquery { subquery, .. }) = input.as_ref() else {
        return Ok(Transformed::no(plan));
    };
    let Some((call, names)) = explode_call(subquery) else {
        return Ok(Transformed::no(plan));
    };
    let on_true = join.filter.as_ref().is_none_or(|f| {
        matches!(f, Expr::Literal(v, _) if *v == datafusion::common::ScalarValue::Boolean(Some(true)))
    });
    if left_join && !on_true {
        return plan_err!(
            "LEFT JOIN LATERAL {}(...) takes only ON true (filter its rows in WHERE, or use an inner lateral join)",
            match &call {
                Expr::ScalarFunction(f) => f.func.name().to_string(),
                _ => "a table function".to_string(),
            }
        );
    }
    let left = Arc::clone(&join.left);
    let left_columns: Vec<Expr> = left
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let flatten = matches!(&call, Expr::ScalarFunction(f) if f.func.name() == "variant_flatten");
    let sources = if flatten {
        FLATTEN_OUTPUTS
    } else {
        EXPLODE_OUTPUTS
    };
    if sources.len() != names.len() {
        return Ok(Transformed::no(plan));
    }
    let exploded = Column::from_name(EXPLODED);
    let mut with_call = left_columns.clone();
    // Left join: an empty list becomes a NULL list, which the unnest keeps as
    // one row of NULLs (as it keeps a NULL list).
    let call = if left_join {
        let length = datafusion::functions_nested::expr_fn::cardinality(call.clone());
        Expr::Case(datafusion::logical_expr::Case::new(
            None,
            vec![(Box::new(length.gt(lit(0u64))), Box::new(call))],
            None,
        ))
    } else {
        call
    };
    with_call.push(call.alias(EXPLODED));
    let mut builder = LogicalPlanBuilder::from(left.as_ref().clone());
    if flatten {
        // `seq`: the left row's number (unique, not ordered). Unused, the
        // window is pruned with the column.
        builder = builder.window(vec![
            datafusion::functions_window::expr_fn::row_number().alias(ROW_NUMBER),
        ])?;
        with_call.push(Expr::Column(Column::from_name(ROW_NUMBER)));
    }
    let mut output = left_columns;
    for (source, name) in sources.iter().zip(&names) {
        let value = if *source == SEQ {
            Expr::Column(Column::from_name(ROW_NUMBER))
                .cast_to(&DataType::Int64, builder.schema())?
        } else {
            datafusion::functions::core::get_field()
                .call(vec![Expr::Column(exploded.clone()), lit(*source)])
        };
        output.push(value.alias_qualified(Some(alias.clone()), name));
    }
    let mut builder = builder
        .project(with_call)?
        .unnest_column_with_options(
            exploded,
            datafusion::common::UnnestOptions::new().with_preserve_nulls(left_join),
        )?
        .project(output)?;
    if let Some(filter) = join.filter.as_ref().filter(|_| !left_join) {
        builder = builder.filter(filter.clone())?;
    }
    Ok(Transformed::yes(builder.build()?))
}

#[cfg(test)]
mod tests {
    use datafusion::optimizer::AnalyzerRule;

    use super::DecorrelateLateralExplode;

    const T: &str = "(SELECT 1 AS id, parse_json('[1, 2]') AS v) t";

    /// The rule fires on a lateral `variant_explode`: the plan that runs is an
    /// unnest of the left side, with no correlated subquery left.
    #[tokio::test]
    async fn fires_on_a_lateral_explode() {
        let ctx = crate::variant_context();
        let sql = format!("SELECT t.id, e.pos FROM {T}, LATERAL variant_explode(t.v) e");
        let plan = ctx.sql(&sql).await.unwrap().into_optimized_plan().unwrap();
        let text = plan.display_indent().to_string();
        assert!(
            text.contains("Unnest:") && text.contains("variant_explode(t.v) AS __variant_explode"),
            "{text}"
        );
        assert!(
            !text.contains("outer_ref") && !text.contains("Subquery:"),
            "{text}"
        );
    }

    /// A lateral `variant_flatten` becomes an unnest too; its `seq` is a row
    /// number of the left side, planned only when the query reads it.
    #[tokio::test]
    async fn fires_on_a_lateral_flatten_numbering_rows_only_for_seq() {
        let ctx = crate::variant_context();
        let plan = |cols: &str| {
            let ctx = ctx.clone();
            let sql = format!(
                "SELECT {cols} FROM {T}, LATERAL variant_flatten(input => t.v, recursive => true) f"
            );
            async move {
                let plan = ctx.sql(&sql).await.unwrap().into_optimized_plan().unwrap();
                plan.display_indent().to_string()
            }
        };
        let without = plan("t.id, f.path").await;
        assert!(
            without.contains("Unnest:") && without.contains("variant_flatten(t.v"),
            "{without}"
        );
        assert!(
            !without.contains("row_number") && !without.contains("Subquery:"),
            "{without}"
        );
        let with = plan("t.id, f.seq").await;
        assert!(
            with.contains("row_number()") && !with.contains("Subquery:"),
            "{with}"
        );
    }

    /// It leaves every other lateral subquery as DataFusion planned it.
    #[tokio::test]
    async fn does_not_fire_on_other_lateral_subqueries() {
        let ctx = crate::variant_context();
        for sql in [
            format!("SELECT t.id, s.x FROM {T}, LATERAL (SELECT t.id + 1 AS x) s"),
            format!(
                "SELECT t.id, s.x FROM {T}, LATERAL (SELECT unnest(variant_explode(t.v)) AS x) s"
            ),
        ] {
            let plan = ctx.state().create_logical_plan(&sql).await.unwrap();
            let before = plan.display_indent().to_string();
            let after = DecorrelateLateralExplode
                .analyze(plan, ctx.state().config_options())
                .unwrap();
            assert_eq!(after.display_indent().to_string(), before, "{sql}");
        }
    }
}
