//! `ExtractionRepair`: the logical optimizer rule, run after DataFusion's, that
//! mends two plans DataFusion 55's leaf-expression extraction
//! (`extract_leaf_expressions`, `push_down_leaf_projections`) leaves unable to
//! run when what it extracted is one of our Variant extractions
//! (`variant_get_or_error`, `variant_get`, `try_variant_get`, which say
//! `MoveTowardsLeafNodes`).
//!
//! **A join key over an aliased table.** The extraction moves below the join as
//! `__datafusion_extracted_N`, but the key that still wraps it refers to that
//! column without the alias's qualifier, and DataFusion's join planning then
//! looks for a field named after the unqualified key (`No field named
//! "raise_variant_get_error(__datafusion_extracted_1)"`). The column is given
//! the qualifier of the side it comes from:
//!
//! ```text
//! Inner Join: raise_variant_get_error(__datafusion_extracted_1) = raise_variant_get_error(__datafusion_extracted_2)
//!   SubqueryAlias: a
//!     Projection: variant_get_or_error(m.v, Utf8("$.id"), Utf8("bigint")) AS __datafusion_extracted_1
//!       TableScan: m
//!   SubqueryAlias: b ...
//! =>
//! Inner Join: raise_variant_get_error(a.__datafusion_extracted_1) = raise_variant_get_error(b.__datafusion_extracted_2)
//!   (inputs unchanged)
//! ```
//!
//! **`DELETE` and `UPDATE`.** DataFusion hands a table's `delete_from` and
//! `update` the predicates of the `Filter`s under the statement (and the
//! assignments of its projection), to be evaluated against the table's own
//! columns, where `__datafusion_extracted_N` does not exist (`No field named
//! __datafusion_extracted_1`), nor the `__common_expr_N` that common
//! subexpression elimination makes of an extraction repeated in the predicate
//! (`coalesce(v:x::bigint, 0) < 20`). Under a `DELETE` or `UPDATE`, each such column is
//! replaced by the extraction it names, wherever the columns the extraction
//! reads are there (not above a projection that dropped them, as in a
//! subquery):
//!
//! ```text
//! Dml: op=[Delete] table=[m]
//!   Projection: m.rn, m.v
//!     Filter: raise_variant_get_error(__datafusion_extracted_1) = Int32(1)
//!       Projection: variant_get_or_error(m.v, Utf8("$.a"), Utf8("int")) AS __datafusion_extracted_1, m.rn, m.v
//!         TableScan: m
//! =>
//! Dml: op=[Delete] table=[m]
//!   Projection: m.rn, m.v
//!     Filter: raise_variant_get_error(variant_get_or_error(m.v, Utf8("$.a"), Utf8("int"))) = Int32(1)
//!       Projection: variant_get_or_error(m.v, Utf8("$.a"), Utf8("int")) AS __datafusion_extracted_1, m.rn, m.v
//!         TableScan: m
//! ```
//!
//! It changes nothing else: only columns named `__datafusion_extracted_*` or
//! `__common_expr_*` whose definition below calls one of our extractions are
//! touched, so a plan without
//! VARIANT (a `get_field` extraction included) is DataFusion's. Both are
//! DataFusion bugs (apache/datafusion#22895 and its neighbours, fixed after 55);
//! the rule can go when we move past them.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, WriteOp};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

use crate::array::get::{TRY_VARIANT_GET, VARIANT_GET};
use crate::boundary::{RAISE_VARIANT_GET_ERROR, VARIANT_GET_OR_ERROR};

/// The prefixes DataFusion gives the columns it extracts, and those its common
/// subexpression elimination makes (`coalesce(v:x::bigint, 0)` repeats the
/// extraction inside the `CASE` it becomes).
const MOVED: [&str; 2] = ["__datafusion_extracted", "__common_expr"];

/// The rule described in the module docs.
#[derive(Debug, Default)]
pub struct ExtractionRepair;

impl OptimizerRule for ExtractionRepair {
    fn name(&self) -> &'static str {
        "variant_extraction_repair"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Join(join) => {
                let left = ours(&join.left)?;
                let right = ours(&join.right)?;
                if left.is_empty() && right.is_empty() {
                    return Ok(Transformed::no(LogicalPlan::Join(join)));
                }
                let mut join = join;
                let mut changed = false;
                let on = std::mem::take(&mut join.on);
                for (l, r) in on {
                    let l = qualify(l, join.left.schema(), &left)?;
                    let r = qualify(r, join.right.schema(), &right)?;
                    changed |= l.transformed || r.transformed;
                    join.on.push((l.data, r.data));
                }
                Ok(Transformed::new_transformed(
                    LogicalPlan::Join(join),
                    changed,
                ))
            }
            LogicalPlan::Dml(ref dml) if matches!(dml.op, WriteOp::Delete | WriteOp::Update) => {
                let definitions = ours(&dml.input)?;
                if definitions.is_empty() {
                    return Ok(Transformed::no(node));
                }
                node.map_children(|input| {
                    input.transform_up(|n| {
                        let projection = matches!(n, LogicalPlan::Projection(_));
                        // Only where the extraction's own columns are there
                        // (not above a projection that dropped them).
                        let inputs: Vec<_> =
                            n.inputs().iter().map(|i| Arc::clone(i.schema())).collect();
                        let usable: HashMap<String, Expr> = definitions
                            .iter()
                            .filter(|(_, d)| {
                                d.column_refs()
                                    .iter()
                                    .all(|c| inputs.iter().any(|s| s.has_column(c)))
                            })
                            .map(|(k, d)| (k.clone(), d.clone()))
                            .collect();
                        if usable.is_empty() {
                            return Ok(Transformed::no(n));
                        }
                        // A definition may name another (a common expression
                        // over an extracted column): until none is left.
                        let mut n = Transformed::no(n);
                        for _ in 0..=MOVED.len() {
                            let step =
                                n.data.map_expressions(|e| inline(e, &usable, projection))?;
                            let changed = step.transformed;
                            n = Transformed::new(step.data, n.transformed || changed, n.tnr);
                            if !changed {
                                break;
                            }
                        }
                        Ok(n)
                    })
                })
            }
            other => Ok(Transformed::no(other)),
        })
    }
}

/// The extracted columns defined in `plan` (by name) whose definition calls
/// one of our extractions.
fn ours(plan: &LogicalPlan) -> Result<HashMap<String, Expr>> {
    let mut found = HashMap::new();
    plan.apply(|node| {
        if let LogicalPlan::Projection(p) = node {
            for e in &p.expr {
                if let Expr::Alias(alias) = e
                    && MOVED.iter().any(|p| alias.name.starts_with(p))
                    && calls_an_extraction(&alias.expr)
                {
                    found.insert(alias.name.clone(), alias.expr.as_ref().clone());
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(found)
}

fn calls_an_extraction(e: &Expr) -> bool {
    e.exists(|e| {
        Ok(matches!(e, Expr::ScalarFunction(f)
            if [VARIANT_GET, TRY_VARIANT_GET, VARIANT_GET_OR_ERROR, RAISE_VARIANT_GET_ERROR]
                .contains(&f.func.name())))
    })
    .unwrap_or(false)
}

/// `key` with each unqualified column of `ours` qualified as in `schema`.
fn qualify(
    key: Expr,
    schema: &DFSchema,
    ours: &HashMap<String, Expr>,
) -> Result<Transformed<Expr>> {
    key.transform(|e| {
        if let Expr::Column(c) = &e
            && c.relation.is_none()
            && ours.contains_key(&c.name)
            && let Ok((Some(qualifier), _)) = schema.qualified_field_with_unqualified_name(&c.name)
        {
            let column = Column::new(Some(qualifier.clone()), c.name.clone());
            return Ok(Transformed::yes(Expr::Column(column)));
        }
        Ok(Transformed::no(e))
    })
}

/// `e` with each column of `definitions` replaced by its definition; a
/// projection's bare column keeps its name.
fn inline(
    e: Expr,
    definitions: &HashMap<String, Expr>,
    projection: bool,
) -> Result<Transformed<Expr>> {
    if projection
        && let Expr::Column(c) = &e
        && let Some(d) = definitions.get(&c.name)
    {
        return Ok(Transformed::yes(d.clone().alias(c.name.clone())));
    }
    e.transform(|e| match &e {
        Expr::Column(c) => match definitions.get(&c.name) {
            Some(d) => Ok(Transformed::yes(d.clone())),
            None => Ok(Transformed::no(e)),
        },
        _ => Ok(Transformed::no(e)),
    })
}
