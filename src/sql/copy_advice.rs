//! `COPY ... OPTIONS ('variant.shredding_schema' 'advice')`: the re-shred in one
//! statement. Before the `COPY` is planned, the one table its source reads is
//! looked up, its `variant_shredding_advice` is taken, and the option becomes the
//! advised schema (or `'variant.shredding' 'off'` where the advice is to shred
//! nothing):
//!
//! ```text
//! COPY (SELECT * FROM events) TO 'new/' OPTIONS ('variant.shredding_schema' 'advice')
//!   =>  COPY (SELECT * FROM events) TO 'new/'
//!         OPTIONS ('variant.shredding_schema' 'STRUCT<commit: STRUCT<collection: STRING>>')
//! ```
//!
//! Errors, at plan time: a source that reads no table or more than one, the
//! advice's own errors (a table without files, without a VARIANT column, or
//! without logged extractions), and VARIANT columns advised different schemas
//! (the option applies to every VARIANT column written).

use std::collections::BTreeSet;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, plan_datafusion_err, plan_err};
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::parser::{CopyToSource, CopyToStatement, Statement};
use datafusion::sql::sqlparser::ast;

const OPTION: &str = "variant.shredding_schema";

/// `statement` with an `'advice'` shredding schema replaced by the advice; any
/// other statement as it is.
pub(crate) async fn resolve(state: &SessionState, statement: Statement) -> Result<Statement> {
    let Statement::CopyTo(mut copy) = statement else {
        return Ok(statement);
    };
    let Some(at) = copy.options.iter().position(|(key, value)| {
        key.eq_ignore_ascii_case(OPTION)
            && matches!(value, ast::Value::SingleQuotedString(s) if s.eq_ignore_ascii_case("advice"))
    }) else {
        return Ok(Statement::CopyTo(copy));
    };
    let table = source_table(state, &copy).await?;
    let advised = advised_schema(state, &table).await?;
    match advised {
        Some(ddl) => copy.options[at].1 = ast::Value::SingleQuotedString(ddl),
        None => {
            copy.options.remove(at);
            copy.options
                .retain(|(key, _)| !key.eq_ignore_ascii_case("variant.shredding"));
            copy.options.push((
                "variant.shredding".to_string(),
                ast::Value::SingleQuotedString("off".to_string()),
            ));
        }
    }
    Ok(Statement::CopyTo(copy))
}

/// The one table the `COPY` reads.
async fn source_table(state: &SessionState, copy: &CopyToStatement) -> Result<String> {
    let query = match &copy.source {
        CopyToSource::Relation(name) => return Ok(name.to_string()),
        CopyToSource::Query(query) => query.clone(),
    };
    let plan = state
        .statement_to_plan(Statement::Statement(Box::new(ast::Statement::Query(query))))
        .await?;
    let mut tables = BTreeSet::new();
    plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            tables.insert(scan.table_name.to_string());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    let mut tables = tables.into_iter();
    match (tables.next(), tables.next()) {
        (Some(table), None) => Ok(table),
        (None, _) => plan_err!(
            "{OPTION} 'advice' needs a COPY that reads one table, whose workload the advice \
             comes from; this one reads none"
        ),
        (Some(a), Some(b)) => plan_err!(
            "{OPTION} 'advice' needs a COPY that reads one table, whose workload the advice \
             comes from; this one reads {a}, {b}{}",
            if tables.next().is_some() { ", ..." } else { "" }
        ),
    }
}

/// The schema `variant_shredding_advice(table)` proposes, the same for every
/// VARIANT column; `None` where it proposes to shred nothing.
async fn advised_schema(state: &SessionState, table: &str) -> Result<Option<String>> {
    let ctx = datafusion::prelude::SessionContext::new_with_state(state.clone());
    let sql = format!(
        "SELECT \"column\", type FROM variant_shredding_advice('{}') WHERE action = 'schema' \
         ORDER BY \"column\"",
        table.replace('\'', "''")
    );
    let batches = ctx.sql(&sql).await?.collect().await?;
    let mut advice: Vec<(String, Option<String>)> = Vec::new();
    for batch in &batches {
        let text = |i: usize| {
            arrow::compute::cast(batch.column(i), &arrow::datatypes::DataType::Utf8)
                .map_err(|e| plan_datafusion_err!("{OPTION} 'advice': {e}"))
        };
        let (columns, types) = (text(0)?, text(1)?);
        let (columns, types) = (
            arrow::array::AsArray::as_string::<i32>(&columns),
            arrow::array::AsArray::as_string::<i32>(&types),
        );
        for i in 0..batch.num_rows() {
            advice.push((
                columns.value(i).to_string(),
                arrow::array::Array::is_valid(types, i).then(|| types.value(i).to_string()),
            ));
        }
    }
    let distinct: BTreeSet<&Option<String>> = advice.iter().map(|(_, t)| t).collect();
    match distinct.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => Ok((*one).clone()),
        [] => plan_err!("{OPTION} 'advice': variant_shredding_advice('{table}') gave no schema"),
        _ => plan_err!(
            "{OPTION} 'advice': the VARIANT columns of {table} are advised different schemas \
             ({}), and the option applies to every VARIANT column written; give the schema",
            advice
                .iter()
                .map(|(c, t)| format!("{c}: {}", t.as_deref().unwrap_or("none")))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}
