//! The per-file expression adapter and the rule that installs it.

use std::any::Any;
use std::fmt::{self, Display, Formatter};
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, exec_datafusion_err};
use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use crate::array::{VariantColumnBuilder, VariantInput, is_variant_type, variant_data_type};

/// A placeholder for a VARIANT column reference while the inner adapter runs, so
/// that it does not try to cast the file's struct itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PendingVariant {
    name: String,
    index: usize,
}

impl Display for PendingVariant {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "pending_variant({}@{})", self.name, self.index)
    }
}

impl PhysicalExpr for PendingVariant {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(variant_return_field(&self.name))
    }

    fn evaluate(&self, _batch: &RecordBatch) -> Result<ColumnarValue> {
        Err(exec_datafusion_err!(
            "pending_variant({}) was not resolved",
            self.name
        ))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(self)
    }

    fn fmt_sql(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

fn variant_return_field(name: &str) -> FieldRef {
    Arc::new(
        Field::new(name, variant_data_type(), true)
            .with_metadata(crate::array::variant_extension_metadata()),
    )
}

/// Rebuilds the unshredded binary form of a VARIANT column read in the file's
/// own (shredded) layout.
#[derive(Debug, Clone)]
pub struct ReassembleVariant {
    name: String,
    child: Arc<dyn PhysicalExpr>,
}

impl ReassembleVariant {
    /// Reassembles the value of `child` (a column of the file batch).
    pub fn new(name: &str, child: Arc<dyn PhysicalExpr>) -> Self {
        Self {
            name: name.to_string(),
            child,
        }
    }
}

impl PartialEq for ReassembleVariant {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.child.as_ref() == other.child.as_ref()
    }
}

impl Eq for ReassembleVariant {}

impl Hash for ReassembleVariant {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.child.hash(state);
    }
}

impl Display for ReassembleVariant {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "reassemble_variant({})", self.child)
    }
}

impl PhysicalExpr for ReassembleVariant {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(variant_return_field(&self.name))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let column = self.child.evaluate(batch)?.into_array(batch.num_rows())?;
        if column.data_type() == &variant_data_type() {
            return Ok(ColumnarValue::Array(column));
        }
        let input = VariantInput::try_new(&column)
            .map_err(|e| exec_datafusion_err!("reading variant column {}: {e}", self.name))?;
        let mut out = VariantColumnBuilder::new(input.len());
        for row in 0..input.len() {
            match input.get(row) {
                Some((m, v)) => out.append(m, v),
                None => out.append_null(),
            }
        }
        Ok(ColumnarValue::Array(out.finish()))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.child]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let child = children
            .pop()
            .ok_or_else(|| exec_datafusion_err!("reassemble_variant needs one child"))?;
        Ok(Arc::new(Self::new(&self.name, child)))
    }

    fn fmt_sql(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

/// Installs [`VariantExprAdapter`]s, delegating everything else to `inner`.
#[derive(Debug)]
pub struct VariantExprAdapterFactory {
    inner: Arc<dyn PhysicalExprAdapterFactory>,
}

impl VariantExprAdapterFactory {
    /// Wraps another factory (DataFusion's default when `None`).
    pub fn new(inner: Option<Arc<dyn PhysicalExprAdapterFactory>>) -> Self {
        Self {
            inner: inner.unwrap_or_else(|| Arc::new(DefaultPhysicalExprAdapterFactory)),
        }
    }
}

impl PhysicalExprAdapterFactory for VariantExprAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let inner = self.inner.create(
            Arc::clone(&logical_file_schema),
            Arc::clone(&physical_file_schema),
        )?;
        Ok(Arc::new(VariantExprAdapter {
            logical: logical_file_schema,
            physical: physical_file_schema,
            inner,
        }))
    }
}

/// Rewrites references to unshredded VARIANT columns that a file stores in another
/// layout into [`ReassembleVariant`], then lets the inner adapter do the rest.
#[derive(Debug)]
struct VariantExprAdapter {
    logical: SchemaRef,
    physical: SchemaRef,
    inner: Arc<dyn PhysicalExprAdapter>,
}

impl VariantExprAdapter {
    fn reassemble_for(&self, column: &Column) -> Option<PendingVariant> {
        let logical = self.logical.field_with_name(column.name()).ok()?;
        if logical.data_type() != &variant_data_type()
            && !is_unshredded_variant(logical.data_type())
        {
            return None;
        }
        let index = self.physical.index_of(column.name()).ok()?;
        let physical = self.physical.field(index).data_type();
        (physical != logical.data_type() && is_variant_type(physical)).then(|| PendingVariant {
            name: column.name().to_string(),
            index,
        })
    }
}

/// `Struct{metadata, value}` with binary children and no `typed_value`.
fn is_unshredded_variant(dt: &DataType) -> bool {
    matches!(dt, DataType::Struct(f) if f.len() == 2 && f.find("typed_value").is_none())
        && is_variant_type(dt)
}

impl PhysicalExprAdapter for VariantExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        let rewritten = expr
            .transform_up(|e| {
                if let Some(c) = (e.as_ref() as &dyn Any).downcast_ref::<Column>()
                    && let Some(r) = self.reassemble_for(c)
                {
                    return Ok(Transformed::yes(Arc::new(r) as Arc<dyn PhysicalExpr>));
                }
                Ok(Transformed::no(e))
            })?
            .data;
        let adapted = self.inner.rewrite(rewritten)?;
        // Only now the placeholders get their real column, which the inner adapter
        // must not see.
        Ok(adapted
            .transform_up(|e| {
                if let Some(p) = (e.as_ref() as &dyn Any).downcast_ref::<PendingVariant>() {
                    let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(&p.name, p.index));
                    return Ok(Transformed::yes(
                        Arc::new(ReassembleVariant::new(&p.name, column)) as Arc<dyn PhysicalExpr>,
                    ));
                }
                Ok(Transformed::no(e))
            })?
            .data)
    }
}

/// Gives every Parquet scan a [`VariantExprAdapterFactory`].
#[derive(Debug, Default)]
pub struct VariantAdapterRule;

impl PhysicalOptimizerRule for VariantAdapterRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(exec) = (node.as_ref() as &dyn Any).downcast_ref::<DataSourceExec>() else {
                return Ok(Transformed::no(node));
            };
            let Some(config) =
                (exec.data_source().as_ref() as &dyn Any).downcast_ref::<FileScanConfig>()
            else {
                return Ok(Transformed::no(node));
            };
            let has_variant = config
                .file_schema()
                .fields()
                .iter()
                .any(|f| is_variant_type(f.data_type()));
            // Wrapping twice is harmless: the outer adapter leaves no Column behind
            // for the inner one to rewrite again.
            if !has_variant {
                return Ok(Transformed::no(node));
            }
            let factory = VariantExprAdapterFactory::new(config.expr_adapter_factory.clone());
            let new_config = FileScanConfigBuilder::from(config.clone())
                .with_expr_adapter(Some(Arc::new(factory)))
                .build();
            Ok(Transformed::yes(
                DataSourceExec::from_data_source(new_config) as Arc<dyn ExecutionPlan>,
            ))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "VariantAdapterRule"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
