//! Row-group and page pruning on the statistics of shredded leaves, planned per
//! file by [`FilePlanner`] for [`super::VariantScanExec`].
//!
//! DataFusion's pruning only understands top-level columns, so a filter on
//! `variant_get(v, '$.a', 'bigint')` cannot skip anything by itself. Per file,
//! before the scan opens it, the planner evaluates the filter's extraction
//! predicates on the statistics of each path's `typed_value` leaf, per row group
//! and then per page, and returns the surviving row groups and row ranges as a
//! `ParquetAccessPlan`, with the residuals that are all null in the row groups
//! read (so those extractions read only the typed leaf).
//!
//! Pruning on a leaf is sound only where the leaf's residual `value` is all null
//! in that row group (every present value has the shredded type), and the
//! requested type is the shredded type or an exact widening of it (a conversion
//! that can neither fail nor reorder values). Float leaves are not pruned on
//! (Parquet statistics leave NaN out). Everywhere else the row group is kept;
//! the filter above the scan always runs. Tests on the elements of a shredded
//! array (`array_has`) prune row groups too ([`super::element_pruning`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column as LogicalColumn, Result, ScalarValue};

use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::conjunction;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, Literal};
use datafusion::physical_optimizer::pruning::{PruningPredicate, PruningPredicateBuilder};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::SchemaDescriptor;

use super::bounds::PathBounds;
use super::element_pruning::{Elements, element_test, only_known};
use super::shredded_get::{Extraction, ShreddedNode, ValueFreeNodes, exact_widening};

use super::report::ScanMetrics;
/// What one file's scan gets.
pub(super) struct FilePlan {
    pub(super) access: Option<ParquetAccessPlan>,
    pub(super) value_free: ValueFreeNodes,
    /// How each extraction reads the file, for the workload log.
    pub(super) reads: Vec<crate::workload::ExtractionRead>,
}

/// Per-file pruning, prepared once per partition.
pub(super) struct FilePlanner {
    extractions: Vec<Extraction>,
    /// The arrays whose elements a predicate tests (`array_has`), as the
    /// columns `__variant_elem_j` ([`super::element_pruning`]).
    elements: Vec<Elements>,
    /// Each filter predicate with extraction `k` replaced by the column
    /// `__variant_k`, over those columns plus every other column it uses; for
    /// row groups.
    row_groups: Vec<PruningPredicate>,
    /// The predicates on a single extraction `k`, combined, for its leaf's pages
    /// (pages of different leaves do not line up).
    pages: Vec<(usize, PruningPredicate)>,
}

/// The requested type of an extraction as the workload log names it.
fn target_name(e: &Extraction) -> String {
    e.target.as_ref().map_or_else(
        || "variant".to_string(),
        crate::variant::types::SparkType::sql_name,
    )
}

fn synthetic_name(k: usize) -> String {
    format!("__variant_{k}")
}

fn element_name(j: usize) -> String {
    format!("__variant_elem_{j}")
}

impl FilePlanner {
    pub(super) fn new(
        extractions: Vec<Extraction>,
        predicates: &[Arc<dyn PhysicalExpr>],
        file_schema: &SchemaRef,
    ) -> Self {
        let mut fields: Vec<Field> = extractions
            .iter()
            .enumerate()
            .map(|(k, e)| Field::new(synthetic_name(k), e.return_field.data_type().clone(), true))
            .collect();
        // Other columns keep their names; they get no statistics here (DataFusion
        // prunes on them itself).
        let mut others: BTreeMap<String, DataType> = BTreeMap::new();
        let mut elements: Vec<Elements> = Vec::new();
        let rewritten: Vec<Arc<dyn PhysicalExpr>> = predicates
            .iter()
            .filter_map(|p| {
                Arc::clone(p)
                    .transform_down(|e| {
                        if let Some((x, needle)) = element_test(e.as_ref()) {
                            let j = elements.iter().position(|y| *y == x).unwrap_or_else(|| {
                                elements.push(x);
                                elements.len() - 1
                            });
                            let compare: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
                                Arc::new(Column::new(&element_name(j), 0)),
                                Operator::Eq,
                                Arc::new(Literal::new(needle)),
                            ));
                            return Ok(Transformed::new(compare, true, TreeNodeRecursion::Jump));
                        }
                        if let Some(x) = Extraction::of(e.as_ref())
                            && let Some(k) = extractions
                                .iter()
                                .position(|y| y.describe() == x.describe())
                        {
                            return Ok(Transformed::new(
                                Arc::new(Column::new(&synthetic_name(k), k))
                                    as Arc<dyn PhysicalExpr>,
                                true,
                                TreeNodeRecursion::Jump,
                            ));
                        }
                        if let Some(c) = e.downcast_ref::<Column>()
                            && !c.name().starts_with("__variant_")
                            && let Ok(f) = file_schema.field_with_name(c.name())
                        {
                            others.insert(c.name().to_string(), f.data_type().clone());
                        }
                        Ok(Transformed::no(e))
                    })
                    .ok()
                    .map(|t| t.data)
            })
            .collect();
        fields.extend(
            elements
                .iter()
                .enumerate()
                .map(|(j, x)| Field::new(element_name(j), x.element.clone(), true)),
        );
        fields.extend(others.iter().map(|(n, t)| Field::new(n, t.clone(), true)));
        let schema = Arc::new(Schema::new(fields));
        // Column indices must match the pruning schema.
        let predicates: Vec<Arc<dyn PhysicalExpr>> = rewritten
            .into_iter()
            .filter_map(|p| {
                p.transform(|e| {
                    if let Some(c) = e.downcast_ref::<Column>()
                        && let Ok(i) = schema.index_of(c.name())
                    {
                        return Ok(Transformed::yes(
                            Arc::new(Column::new(c.name(), i)) as Arc<dyn PhysicalExpr>
                        ));
                    }
                    Ok(Transformed::no(e))
                })
                .ok()
                .map(|t| t.data)
            })
            .collect();
        let build = |predicate: Arc<dyn PhysicalExpr>| {
            PruningPredicateBuilder::new()
                .with_file_schema(Arc::clone(&schema))
                .try_build(predicate)
                .ok()
                .filter(|p| !p.always_true())
        };
        let mut by_leaf: BTreeMap<usize, Vec<Arc<dyn PhysicalExpr>>> = BTreeMap::new();
        for predicate in &predicates {
            let used: HashSet<usize> = columns_of(predicate)
                .into_iter()
                .filter_map(|name| name.strip_prefix("__variant_")?.parse().ok())
                .collect();
            if let [k] = used.into_iter().collect::<Vec<_>>()[..] {
                by_leaf.entry(k).or_default().push(Arc::clone(predicate));
            }
        }
        Self {
            extractions,
            elements,
            row_groups: predicates.into_iter().filter_map(build).collect(),
            pages: by_leaf
                .into_iter()
                .filter_map(|(k, p)| Some((k, build(conjunction(p))?)))
                .collect(),
        }
    }

    pub(super) fn plan(
        &self,
        metadata: &ParquetMetaData,
        file: &datafusion::datasource::listing::PartitionedFile,
        metrics: &ScanMetrics,
    ) -> Result<FilePlan> {
        metrics.files.add(1);
        let descr = metadata.file_metadata().schema_descr();
        let arrow_schema = parquet::arrow::parquet_to_arrow_schema(
            descr,
            metadata.file_metadata().key_value_metadata(),
        )?;
        let row_groups = metadata.row_groups();
        let n = row_groups.len();
        // Where each extraction lives in this file.
        let nodes: Vec<Option<(ShreddedNode, Leaves)>> = self
            .extractions
            .iter()
            .map(|e| {
                let node = e.resolve(&arrow_schema)?;
                let leaves = Leaves::find(descr, e.column.name(), &node)?;
                Some((node, leaves))
            })
            .collect();
        for n in &nodes {
            if n.is_some() {
                metrics.extractions_pushed.add(1);
            } else {
                metrics.extractions_fallback.add(1);
            }
        }
        // Row group r has an all-null residual at extraction k.
        let value_free: Vec<Vec<bool>> = nodes
            .iter()
            .map(|node| match node {
                None => vec![false; n],
                Some((_, leaves)) => (0..n).map(|r| leaves.value_all_null(metadata, r)).collect(),
            })
            .collect();

        // A file-level row selection of the user's is left alone (no pruning);
        // an access plan on the file (the rows a Delta deletion vector keeps,
        // [`super::deletions`], or a user's) is where pruning starts.
        let user_selection = file
            .extensions
            .get::<datafusion::datasource::physical_plan::parquet::ParquetRowSelection>()
            .is_some();
        let given = file
            .extensions
            .get::<ParquetAccessPlan>()
            .filter(|p| p.len() == n)
            .cloned();
        let mut access = given
            .clone()
            .unwrap_or_else(|| ParquetAccessPlan::new_all(n));
        if !user_selection && !self.row_groups.is_empty() && n > 0 {
            let in_range: Vec<bool> = (0..n)
                .map(|r| row_group_in_range(metadata, r, file))
                .collect();
            // Row groups.
            let mut stats = LeafStatistics::row_groups(self, metadata, &nodes, &value_free)?;
            for (j, x) in self.elements.iter().enumerate() {
                if let Some(leaves) = x.leaves(metadata, &arrow_schema) {
                    stats
                        .columns
                        .insert(element_name(j), leaves.statistics(metadata, &x.element)?);
                }
            }
            let keep = self.prune(&stats)?;
            for (r, keep) in keep.into_iter().enumerate() {
                if !in_range[r] || !access.should_scan(r) {
                    continue;
                }
                if keep {
                    metrics.row_groups_matched.add(1);
                } else {
                    metrics.row_groups_pruned.add(1);
                    access.skip(r);
                }
            }
            // Pages.
            if let (Some(column_index), Some(offset_index)) =
                (metadata.column_index(), metadata.offset_index())
            {
                for (r, in_range) in in_range.iter().enumerate() {
                    if !access.should_scan(r) || !in_range {
                        continue;
                    }
                    if let Some(selection) = self.prune_pages(
                        metadata,
                        &nodes,
                        &value_free,
                        r,
                        column_index,
                        offset_index,
                        metrics,
                    )? {
                        let selection = match &access.inner()[r] {
                            RowGroupAccess::Selection(kept) => kept.intersection(&selection),
                            _ => selection,
                        };
                        if selection.selects_any() {
                            access.scan_selection(r, selection);
                        } else {
                            access.skip(r);
                        }
                    }
                }
            }
        }
        // Residuals that are all null in every row group read are not read.
        let mut free = ValueFreeNodes::new();
        for (k, node) in nodes.iter().enumerate() {
            let Some((node, _)) = node else { continue };
            let all = (0..n).all(|r| !access.should_scan(r) || value_free[k][r]);
            if all && node.value {
                free.insert((
                    self.extractions[k].column.name().to_string(),
                    node.node.clone(),
                ));
                metrics.residuals_skipped.add(1);
            }
        }
        let reads = self.reads(metadata, file, &arrow_schema, &nodes, &access, &free);
        let pruned_any = access
            .inner()
            .iter()
            .any(|a| !matches!(a, RowGroupAccess::Scan));
        Ok(FilePlan {
            access: (pruned_any && given.as_ref() != Some(&access)).then_some(access),
            value_free: free,
            reads,
        })
    }

    /// How each extraction reads a file, and the compressed bytes of the leaves
    /// it reads in the row groups scanned.
    fn reads(
        &self,
        metadata: &ParquetMetaData,
        file: &datafusion::datasource::listing::PartitionedFile,
        arrow_schema: &Schema,
        nodes: &[Option<(ShreddedNode, Leaves)>],
        access: &ParquetAccessPlan,
        free: &ValueFreeNodes,
    ) -> Vec<crate::workload::ExtractionRead> {
        use crate::workload::{ExtractionRead, Outcome};
        // A part of a file (its range split off for another partition or task)
        // that holds no row group reads nothing.
        if !(0..metadata.num_row_groups()).any(|r| row_group_in_range(metadata, r, file)) {
            return Vec::new();
        }
        let descr = metadata.file_metadata().schema_descr();
        let scanned: Vec<usize> = (0..metadata.num_row_groups())
            .filter(|&r| access.should_scan(r) && row_group_in_range(metadata, r, file))
            .collect();
        let bytes_of = |leaves: &mut dyn Iterator<Item = usize>| -> u64 {
            let leaves: Vec<usize> = leaves.collect();
            scanned
                .iter()
                .map(|&r| {
                    let rg = metadata.row_group(r);
                    leaves
                        .iter()
                        .map(|&i| rg.column(i).compressed_size().max(0) as u64)
                        .sum::<u64>()
                })
                .sum()
        };
        self.extractions
            .iter()
            .zip(nodes)
            .map(|(e, node)| {
                let column = e.column.name();
                let mut whole = descr
                    .columns()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.path().parts().first().map(String::as_str) == Some(column))
                    .map(|(i, _)| i);
                let whole_bytes = bytes_of(&mut whole);
                let (outcome, bytes, residual_row_groups) = match node {
                    Some((node, leaves)) => {
                        let residual =
                            node.value && !free.contains(&(column.to_string(), node.node.clone()));
                        let outcome = if residual || node.typed.is_none() {
                            Outcome::ResidualRead
                        } else {
                            Outcome::Pushed
                        };
                        let read = leaves
                            .typed
                            .into_iter()
                            .chain(leaves.value.filter(|_| residual));
                        let residual_row_groups = if residual {
                            scanned
                                .iter()
                                .filter(|&&r| !leaves.value_all_null(metadata, r))
                                .count() as u64
                        } else {
                            0
                        };
                        (
                            outcome,
                            bytes_of(&mut read.into_iter()),
                            residual_row_groups,
                        )
                    }
                    None => {
                        let field = arrow_schema.field_with_name(column).ok();
                        let outcome = field.map_or(Outcome::Unshredded, |f| {
                            super::shredded_get::fallback_reason(f.data_type(), &e.path)
                        });
                        // Read under the shredded key prefix when there is one
                        // (`subtree_get`): the metadata and that group's leaves.
                        let prefix = field.and_then(|f| {
                            super::subtree_get::resolve_prefix(
                                f.data_type(),
                                &crate::variant::path::steps_of(&e.path),
                            )
                        });
                        let bytes = match prefix.map(|p| p.read_path()) {
                            Some(node) => {
                                let mut under = descr
                                    .columns()
                                    .iter()
                                    .enumerate()
                                    .filter(|(_, c)| {
                                        let parts = c.path().parts();
                                        parts.first().map(String::as_str) == Some(column)
                                            && (parts.get(1).map(String::as_str)
                                                == Some("metadata")
                                                || parts.get(1..=node.len())
                                                    == Some(node.as_slice()))
                                    })
                                    .map(|(i, _)| i);
                                bytes_of(&mut under)
                            }
                            None => whole_bytes,
                        };
                        (outcome, bytes, 0)
                    }
                };
                ExtractionRead {
                    column: column.to_string(),
                    path: e.path_text.clone(),
                    target: target_name(e),
                    outcome,
                    bytes,
                    whole_bytes,
                    residual_row_groups,
                }
            })
            .collect()
    }

    /// The extractions as a file skipped unread reads them.
    pub(super) fn skipped_reads(&self) -> Vec<crate::workload::ExtractionRead> {
        self.extractions
            .iter()
            .map(|e| crate::workload::ExtractionRead {
                column: e.column.name().to_string(),
                path: e.path_text.clone(),
                target: target_name(e),
                outcome: crate::workload::Outcome::FileSkipped,
                bytes: 0,
                whole_bytes: 0,
                residual_row_groups: 0,
            })
            .collect()
    }

    /// Whether a file with these bounds may hold a row the filter keeps.
    pub(super) fn keep_file(&self, bounds: &PathBounds) -> bool {
        if self.row_groups.is_empty() {
            return true;
        }
        let mut columns = HashMap::new();
        for (k, e) in self.extractions.iter().enumerate() {
            let Some((min, max)) = bounds.for_extraction(e) else {
                continue;
            };
            let target = e.return_field.data_type();
            let array = |s: Option<ScalarValue>| {
                s.unwrap_or(ScalarValue::try_from(target).unwrap_or(ScalarValue::Null))
                    .to_array()
            };
            let (Ok(min), Ok(max)) = (array(min), array(max)) else {
                continue;
            };
            let nulls: ArrayRef = Arc::new(UInt64Array::from(vec![None::<u64>]));
            columns.insert(synthetic_name(k), (min, max, nulls));
        }
        if columns.is_empty() {
            return true;
        }
        let stats = LeafStatistics {
            containers: 1,
            columns,
            row_counts: Arc::new(UInt64Array::from(vec![bounds.num_rows])),
            page_rows: Vec::new(),
        };
        self.prune(&stats)
            .map_or(true, |keep| keep.first().copied().unwrap_or(true))
    }

    fn prune(&self, stats: &LeafStatistics) -> Result<Vec<bool>> {
        let mut keep = vec![true; stats.containers];
        for pruning in &self.row_groups {
            for (k, p) in keep.iter_mut().zip(pruning.prune(stats)?) {
                *k &= p;
            }
        }
        Ok(keep)
    }

    #[allow(clippy::too_many_arguments)]
    fn prune_pages(
        &self,
        metadata: &ParquetMetaData,
        nodes: &[Option<(ShreddedNode, Leaves)>],
        value_free: &[Vec<bool>],
        r: usize,
        column_index: &parquet::file::metadata::ParquetColumnIndex,
        offset_index: &parquet::file::metadata::ParquetOffsetIndex,
        metrics: &ScanMetrics,
    ) -> Result<Option<RowSelection>> {
        let mut result: Option<RowSelection> = None;
        for (k, pruning) in &self.pages {
            let k = *k;
            let Some((_, leaves)) = &nodes[k] else {
                continue;
            };
            if !value_free[k][r] || !self.prunable(k, leaves) {
                continue;
            }
            let Some(stats) =
                LeafStatistics::pages(self, metadata, k, leaves, r, column_index, offset_index)?
            else {
                continue;
            };
            let keep = pruning.prune(&stats)?;
            let mut selectors = Vec::with_capacity(keep.len());
            for (keep, rows) in keep.iter().zip(&stats.page_rows) {
                if *keep {
                    metrics.pages_matched.add(1);
                    selectors.push(RowSelector::select(*rows));
                } else {
                    metrics.pages_pruned.add(1);
                    selectors.push(RowSelector::skip(*rows));
                }
            }
            let selection = RowSelection::from(selectors);
            result = Some(match result {
                None => selection,
                Some(prev) => prev.intersection(&selection),
            });
        }
        if let Some(selection) = &result {
            let rows = metadata.row_group(r).num_rows() as usize;
            metrics
                .rows_pruned_by_pages
                .add(rows.saturating_sub(selection.row_count()));
        }
        Ok(result)
    }

    /// Whether extraction `k`'s leaf statistics can stand for its values (given an
    /// all-null residual).
    fn prunable(&self, k: usize, leaves: &Leaves) -> bool {
        let e = &self.extractions[k];
        let Some(typed) = &leaves.typed_type else {
            return false;
        };
        e.target.is_some()
            && !matches!(
                typed,
                DataType::Float16 | DataType::Float32 | DataType::Float64
            )
            && exact_widening(typed, e.return_field.data_type())
    }
}

fn columns_of(expr: &Arc<dyn PhysicalExpr>) -> Vec<String> {
    let mut out = Vec::new();
    let _ = expr.apply(|e| {
        if let Some(c) = e.downcast_ref::<Column>() {
            out.push(c.name().to_string());
        }
        Ok(TreeNodeRecursion::Continue)
    });
    out
}

/// Whether row group `r` belongs to the byte range of this (possibly split) file,
/// for counting it once; the scan applies the range itself.
fn row_group_in_range(
    metadata: &ParquetMetaData,
    r: usize,
    file: &datafusion::datasource::listing::PartitionedFile,
) -> bool {
    let Some(range) = &file.range else {
        return true;
    };
    let rg = metadata.row_group(r);
    let Some(first) = rg.columns().first() else {
        return true;
    };
    let offset = first
        .dictionary_page_offset()
        .unwrap_or_else(|| first.data_page_offset());
    offset >= range.start && offset < range.end
}

/// The Parquet leaves of one extraction in one file.
#[derive(Debug)]
pub(super) struct Leaves {
    value: Option<usize>,
    typed: Option<usize>,
    typed_type: Option<DataType>,
    typed_field: Option<Field>,
}

impl Leaves {
    fn find(descr: &SchemaDescriptor, column: &str, node: &ShreddedNode) -> Option<Self> {
        let index_of = |names: Vec<String>| -> Option<usize> {
            let mut full = vec![column.to_string()];
            full.extend(names);
            descr
                .columns()
                .iter()
                .position(|c| c.path().parts() == full.as_slice())
        };
        let value = if node.value {
            Some(index_of(node.value_path())?)
        } else {
            None
        };
        let typed = match &node.typed {
            Some(_) => Some(index_of(node.typed_path())?),
            None => None,
        };
        Some(Self {
            value,
            typed,
            typed_type: node.typed.clone(),
            typed_field: node
                .typed
                .as_ref()
                .map(|t| Field::new("typed_value", t.clone(), true)),
        })
    }

    /// The residual of row group `r` holds no value (or does not exist).
    fn value_all_null(&self, metadata: &ParquetMetaData, r: usize) -> bool {
        let Some(v) = self.value else {
            return true;
        };
        let rg = metadata.row_group(r);
        let chunk = rg.column(v);
        chunk
            .statistics()
            .and_then(parquet::file::statistics::Statistics::null_count_opt)
            .is_some_and(|nulls| nulls as i64 == rg.num_rows())
    }
}

/// Statistics of the typed leaves, as `__variant_k` columns, for row groups or for
/// the pages of one row group.
pub(super) struct LeafStatistics {
    containers: usize,
    columns: HashMap<String, (ArrayRef, ArrayRef, ArrayRef)>,
    row_counts: ArrayRef,
    page_rows: Vec<usize>,
}

impl LeafStatistics {
    fn row_groups(
        planner: &FilePlanner,
        metadata: &ParquetMetaData,
        nodes: &[Option<(ShreddedNode, Leaves)>],
        value_free: &[Vec<bool>],
    ) -> Result<Self> {
        let descr = metadata.file_metadata().schema_descr();
        let row_groups = metadata.row_groups();
        let mut columns = HashMap::new();
        for (k, node) in nodes.iter().enumerate() {
            let Some((_, leaves)) = node else { continue };
            let (Some(typed), Some(field)) = (leaves.typed, &leaves.typed_field) else {
                continue;
            };
            if !planner.prunable(k, leaves) {
                continue;
            }
            let target = planner.extractions[k].return_field.data_type();
            let converter = StatisticsConverter::from_column_index(typed, field, descr)?;
            let mins = arrow::compute::cast(&converter.row_group_mins(row_groups.iter())?, target)?;
            let maxes =
                arrow::compute::cast(&converter.row_group_maxes(row_groups.iter())?, target)?;
            let nulls: ArrayRef = Arc::new(converter.row_group_null_counts(row_groups.iter())?);
            let known = &value_free[k];
            columns.insert(
                synthetic_name(k),
                (
                    only_known(mins, known)?,
                    only_known(maxes, known)?,
                    only_known(nulls, known)?,
                ),
            );
        }
        let row_counts: ArrayRef = Arc::new(UInt64Array::from(
            row_groups
                .iter()
                .map(|r| r.num_rows() as u64)
                .collect::<Vec<_>>(),
        ));
        Ok(Self {
            containers: row_groups.len(),
            columns,
            row_counts,
            page_rows: Vec::new(),
        })
    }

    fn pages(
        planner: &FilePlanner,
        metadata: &ParquetMetaData,
        k: usize,
        leaves: &Leaves,
        r: usize,
        column_index: &parquet::file::metadata::ParquetColumnIndex,
        offset_index: &parquet::file::metadata::ParquetOffsetIndex,
    ) -> Result<Option<Self>> {
        let descr = metadata.file_metadata().schema_descr();
        let (Some(typed), Some(field)) = (leaves.typed, &leaves.typed_field) else {
            return Ok(None);
        };
        if column_index.get(r).and_then(|c| c.get(typed)).is_none()
            || offset_index.get(r).and_then(|c| c.get(typed)).is_none()
        {
            return Ok(None);
        }
        let target = planner.extractions[k].return_field.data_type();
        let converter = StatisticsConverter::from_column_index(typed, field, descr)?;
        let groups = [r];
        let mins = converter.data_page_mins(column_index, offset_index, groups.iter())?;
        let maxes = converter.data_page_maxes(column_index, offset_index, groups.iter())?;
        let nulls: ArrayRef =
            Arc::new(converter.data_page_null_counts(column_index, offset_index, groups.iter())?);
        let Some(rows) =
            converter.data_page_row_counts(offset_index, metadata.row_groups(), groups.iter())?
        else {
            return Ok(None);
        };
        if rows.null_count() > 0 || rows.len() != mins.len() {
            return Ok(None);
        }
        let page_rows: Vec<usize> = rows.values().iter().map(|r| *r as usize).collect();
        let mut columns = HashMap::new();
        columns.insert(
            synthetic_name(k),
            (
                arrow::compute::cast(&mins, target)?,
                arrow::compute::cast(&maxes, target)?,
                nulls,
            ),
        );
        Ok(Some(Self {
            containers: page_rows.len(),
            columns,
            row_counts: Arc::new(rows),
            page_rows,
        }))
    }
}

impl PruningStatistics for LeafStatistics {
    fn min_values(&self, column: &LogicalColumn) -> Option<ArrayRef> {
        self.columns.get(column.name()).map(|c| Arc::clone(&c.0))
    }

    fn max_values(&self, column: &LogicalColumn) -> Option<ArrayRef> {
        self.columns.get(column.name()).map(|c| Arc::clone(&c.1))
    }

    fn num_containers(&self) -> usize {
        self.containers
    }

    fn null_counts(&self, column: &LogicalColumn) -> Option<ArrayRef> {
        self.columns.get(column.name()).map(|c| Arc::clone(&c.2))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::clone(&self.row_counts))
    }

    fn contained(
        &self,
        _column: &LogicalColumn,
        _values: &HashSet<ScalarValue>,
    ) -> Option<BooleanArray> {
        None
    }
}
