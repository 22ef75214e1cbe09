//! Spark's `TIMESTAMP`: an instant, read and shown in the session time zone.
//!
//! In Spark mode the type names `TIMESTAMP` and `TIMESTAMP_LTZ` are Spark's
//! TIMESTAMP, not DataFusion's zoneless one (Spark's `TIMESTAMP_NTZ`): a
//! microsecond timestamp in `datafusion.execution.time_zone` (UTC when unset).
//! A type planner cannot read the session's settings, so it plans the type with
//! a placeholder zone, [`SESSION_ZONE`], and the analyzer rule [`SessionZone`]
//! puts the session's zone in its place, as DataFusion does at planning time
//! for `TIMESTAMP WITH TIME ZONE`:
//!
//! ```text
//! -- SET datafusion.execution.time_zone = 'America/New_York'
//! SELECT CAST(s AS TIMESTAMP) FROM t
//! -- planned:   Projection: CAST(t.s AS Timestamp(µs, "<session time zone>"))
//! -- analyzed:  Projection: CAST(t.s AS Timestamp(µs, "America/New_York"))
//! ```
//!
//! So `TIMESTAMP '2024-01-15 10:20:30'` is 10:20:30 in New York, `to_json` of it
//! as a VARIANT prints `"2024-01-15 10:20:30-05:00"`, and `schema_of_variant`
//! says `TIMESTAMP`. The rule changes no plan without the placeholder, and a
//! placeholder that escaped it (a table function's own schema, say) fails where
//! Arrow reads it, naming it, rather than reading in a wrong zone.
//! `CREATE EXTERNAL TABLE` columns are resolved by [`SessionZoneFactory`], which
//! Spark mode wraps around every table factory.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::expr::{Cast, Placeholder, TryCast};
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::logical_expr::{
    CreateExternalTable, EmptyRelation, Expr, LogicalPlan, Prepare, Statement, Values,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast;

/// The zone of a timestamp type planned before the session's zone is known.
/// Not a zone Arrow reads, so one that escaped resolution fails loudly.
pub const SESSION_ZONE: &str = "<session time zone>";

/// Spark's TIMESTAMP as planned: microseconds in the placeholder zone.
pub fn session_timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(SESSION_ZONE.into()))
}

/// The zone that replaces the placeholder: the session's, UTC when unset.
pub fn session_zone(config: &ConfigOptions) -> Arc<str> {
    config
        .execution
        .time_zone
        .as_deref()
        .unwrap_or("UTC")
        .into()
}

/// `dt` with every placeholder zone (in lists, maps and structs too) replaced
/// by `zone`; `None` when it holds none.
pub fn resolve_type(dt: &DataType, zone: &Arc<str>) -> Option<DataType> {
    match dt {
        DataType::Timestamp(unit, Some(tz)) if tz.as_ref() == SESSION_ZONE => {
            Some(DataType::Timestamp(*unit, Some(Arc::clone(zone))))
        }
        DataType::List(f) => resolve_field(f, zone).map(DataType::List),
        DataType::LargeList(f) => resolve_field(f, zone).map(DataType::LargeList),
        DataType::ListView(f) => resolve_field(f, zone).map(DataType::ListView),
        DataType::FixedSizeList(f, n) => {
            resolve_field(f, zone).map(|f| DataType::FixedSizeList(f, *n))
        }
        DataType::Map(f, sorted) => resolve_field(f, zone).map(|f| DataType::Map(f, *sorted)),
        DataType::Struct(fields) => resolve_fields(fields, zone).map(DataType::Struct),
        _ => None,
    }
}

fn resolve_field(field: &FieldRef, zone: &Arc<str>) -> Option<FieldRef> {
    resolve_type(field.data_type(), zone)
        .map(|dt| Arc::new(field.as_ref().clone().with_data_type(dt)))
}

fn resolve_fields(fields: &Fields, zone: &Arc<str>) -> Option<Fields> {
    if !fields.iter().any(|f| holds(f.data_type())) {
        return None;
    }
    Some(
        fields
            .iter()
            .map(|f| resolve_field(f, zone).unwrap_or_else(|| Arc::clone(f)))
            .collect(),
    )
}

fn holds(dt: &DataType) -> bool {
    resolve_type(dt, &Arc::from("")).is_some()
}

fn resolve_schema(schema: &DFSchemaRef, zone: &Arc<str>) -> Result<Option<DFSchemaRef>> {
    let Some(fields) = resolve_fields(schema.inner().fields(), zone) else {
        return Ok(None);
    };
    let qualified = schema
        .iter()
        .zip(fields.iter())
        .map(|((qualifier, _), field)| (qualifier.cloned(), Arc::clone(field)))
        .collect::<Vec<_>>();
    let resolved = DFSchema::new_with_metadata(qualified, schema.metadata().clone())?
        .with_functional_dependencies(schema.functional_dependencies().clone())?;
    Ok(Some(Arc::new(resolved)))
}

fn expr_holds(expr: &Expr) -> bool {
    match expr {
        Expr::Cast(Cast { field, .. }) | Expr::TryCast(TryCast { field, .. }) => {
            holds(field.data_type())
        }
        Expr::Placeholder(Placeholder { field: Some(f), .. }) => holds(f.data_type()),
        _ => false,
    }
}

fn resolve_expr(expr: Expr, zone: &Arc<str>) -> Transformed<Expr> {
    match expr {
        Expr::Cast(Cast { expr, field }) => match resolve_field(&field, zone) {
            Some(field) => Transformed::yes(Expr::Cast(Cast { expr, field })),
            None => Transformed::no(Expr::Cast(Cast { expr, field })),
        },
        Expr::TryCast(TryCast { expr, field }) => match resolve_field(&field, zone) {
            Some(field) => Transformed::yes(Expr::TryCast(TryCast { expr, field })),
            None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
        },
        Expr::Placeholder(Placeholder { id, field: Some(f) }) => {
            let field = resolve_field(&f, zone).unwrap_or(f);
            Transformed::yes(Expr::Placeholder(Placeholder {
                id,
                field: Some(field),
            }))
        }
        other => Transformed::no(other),
    }
}

/// Whether any node, expression or subquery of `plan` holds the placeholder.
fn plan_holds(plan: &LogicalPlan) -> Result<bool> {
    let stop_if = |found: bool| {
        if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        }
    };
    let mut found = false;
    plan.apply_with_subqueries(|node| {
        found = node.schema().fields().iter().any(|f| holds(f.data_type()));
        if !found {
            node.apply_expressions(|e| {
                e.apply(|e| {
                    found = expr_holds(e);
                    Ok(stop_if(found))
                })
            })?;
        }
        Ok(stop_if(found))
    })?;
    Ok(found)
}

/// The analyzer rule described in the module docs. It runs first, so that the
/// rules after it see the session's zone.
#[derive(Debug, Default)]
pub struct SessionZone;

impl AnalyzerRule for SessionZone {
    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        if !plan_holds(&plan)? {
            return Ok(plan);
        }
        let zone = session_zone(config);
        plan.transform_up_with_subqueries(|node| {
            let node = node
                .map_expressions(|e| e.transform_up(|e| Ok(resolve_expr(e, &zone))))?
                .data;
            // Schemas are rebuilt everywhere: a node whose expressions did not
            // change still shows its inputs' columns.
            let node = match node {
                LogicalPlan::EmptyRelation(EmptyRelation {
                    produce_one_row,
                    schema,
                }) => LogicalPlan::EmptyRelation(EmptyRelation {
                    produce_one_row,
                    schema: resolve_schema(&schema, &zone)?.unwrap_or(schema),
                }),
                LogicalPlan::Values(Values { schema, values }) => LogicalPlan::Values(Values {
                    schema: resolve_schema(&schema, &zone)?.unwrap_or(schema),
                    values,
                }),
                other => other.recompute_schema()?,
            };
            Ok(Transformed::yes(node))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "spark_session_zone"
    }
}

/// `plan` with the placeholder zone of a `PREPARE` statement's parameter types
/// resolved (a `PREPARE` is stored unanalyzed, and `EXECUTE` casts its values
/// to those types before any analyzer runs). df-variant's SQL entry
/// (`df_variant::sql::query`, the CLI) calls it; through
/// `SessionContext::sql` such a parameter fails to read, naming the
/// placeholder.
pub fn resolve_prepare(plan: LogicalPlan, config: &ConfigOptions) -> LogicalPlan {
    let LogicalPlan::Statement(Statement::Prepare(prepare)) = plan else {
        return plan;
    };
    let zone = session_zone(config);
    let fields = prepare
        .fields
        .iter()
        .map(|f| resolve_field(f, &zone).unwrap_or_else(|| Arc::clone(f)))
        .collect();
    LogicalPlan::Statement(Statement::Prepare(Prepare { fields, ..prepare }))
}

/// Spark mode's planning of timestamps on `builder`: its type planner
/// wrapped in [`SparkTypePlanner`] and its table factories in
/// [`SessionZoneFactory`]. Call after the type planner and factories are set.
pub fn with_session_timestamps(builder: &mut SessionStateBuilder) {
    let inner = builder.type_planner().take();
    *builder.type_planner() = Some(Arc::new(SparkTypePlanner(inner)));
    if let Some(factories) = builder.table_factories() {
        for factory in factories.values_mut() {
            *factory = Arc::new(SessionZoneFactory(Arc::clone(factory)));
        }
    }
}

/// Plans Spark's `TIMESTAMP` and `TIMESTAMP_LTZ` as [`session_timestamp`],
/// every other type with the planner it wraps.
#[derive(Debug)]
pub struct SparkTypePlanner(pub Option<Arc<dyn TypePlanner>>);

impl TypePlanner for SparkTypePlanner {
    fn plan_type_field(&self, sql_type: &ast::DataType) -> Result<Option<FieldRef>> {
        let spark_timestamp = match sql_type {
            // Spark reads `TIMESTAMP(6)` as `TIMESTAMP` (and refuses other
            // precisions, which stay DataFusion's).
            ast::DataType::Timestamp(None | Some(6), ast::TimezoneInfo::None) => true,
            ast::DataType::Custom(name, modifiers) if modifiers.is_empty() => {
                name.to_string().eq_ignore_ascii_case("timestamp_ltz")
            }
            _ => false,
        };
        if spark_timestamp {
            return Ok(Some(Arc::new(Field::new("", session_timestamp(), true))));
        }
        match &self.0 {
            Some(inner) => inner.plan_type_field(sql_type),
            None => Ok(None),
        }
    }
}

/// A table factory that resolves the placeholder zone in the columns of
/// `CREATE EXTERNAL TABLE t (ts TIMESTAMP) ...` (which no analyzer sees) to the
/// session's zone, then asks the factory it wraps.
#[derive(Debug)]
pub struct SessionZoneFactory(pub Arc<dyn TableProviderFactory>);

#[async_trait]
impl TableProviderFactory for SessionZoneFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let zone = session_zone(state.config_options());
        match resolve_schema(&cmd.schema, &zone)? {
            Some(schema) => {
                let mut cmd = cmd.clone();
                cmd.schema = schema;
                self.0.create(state, &cmd).await
            }
            None => self.0.create(state, cmd).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_is_replaced_inside_containers() {
        let zone: Arc<str> = "America/New_York".into();
        let nested = DataType::Struct(Fields::from(vec![
            Field::new("n", DataType::Int32, true),
            Field::new_list("l", Field::new_list_field(session_timestamp(), true), true),
        ]));
        let resolved = resolve_type(&nested, &zone).expect("holds the placeholder");
        assert_eq!(
            resolved.to_string(),
            nested.to_string().replace(SESSION_ZONE, "America/New_York")
        );
        assert_eq!(resolve_type(&DataType::Int32, &zone), None);
        assert_eq!(
            resolve_type(
                &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                &zone
            ),
            None,
            "a real zone stays"
        );
    }

    #[test]
    fn arrow_refuses_the_placeholder_as_a_zone() {
        assert!(SESSION_ZONE.parse::<arrow::array::timezone::Tz>().is_err());
    }
}
