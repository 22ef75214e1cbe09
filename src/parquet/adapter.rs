//! The per-file expression adapter: per file, a VARIANT column becomes
//! [`ReassembleVariant`] for that file's layout, and path extractions become reads
//! of the file's shredded leaves ([`super::shredded_get`]). The rule that installs
//! it on every scan is `VariantGetPushdown` in [`crate::optimizer`].

use std::fmt::{self, Display, Formatter};
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, exec_datafusion_err};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

use super::shredded_get::{Extraction, ValueFreeNodes, rewrite_extraction};
use super::subtree_get::rewrite_subtree;
use crate::array::{VariantInput, is_variant_type, variant_data_type};

/// A placeholder for a rewritten sub-expression while the inner adapter runs, so
/// that it does not try to cast the file's VARIANT struct inside it.
#[derive(Debug, Clone)]
struct Pending {
    field: FieldRef,
    replacement: Arc<dyn PhysicalExpr>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.field == other.field && self.replacement.as_ref() == other.replacement.as_ref()
    }
}

impl Eq for Pending {}

impl Hash for Pending {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.field.hash(state);
        self.replacement.hash(state);
    }
}

impl Display for Pending {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "pending({})", self.replacement)
    }
}

impl PhysicalExpr for Pending {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.field))
    }

    fn evaluate(&self, _batch: &RecordBatch) -> Result<ColumnarValue> {
        Err(exec_datafusion_err!("{self} was not resolved"))
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
        write!(f, "{self}")
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
        let reading = |e| exec_datafusion_err!("reading variant column {}: {e}", self.name);
        let input = VariantInput::try_new(&column).map_err(reading)?;
        Ok(ColumnarValue::Array(input.to_column().map_err(reading)?))
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

/// Installs `VariantExprAdapter`s, delegating everything else to `inner`.
#[derive(Debug)]
pub struct VariantExprAdapterFactory {
    inner: Arc<dyn PhysicalExprAdapterFactory>,
    pushdown: bool,
    value_free: Arc<ValueFreeNodes>,
}

impl VariantExprAdapterFactory {
    /// Wraps another factory (DataFusion's default when `None`), with shredded
    /// pushdown of path extractions.
    pub fn new(inner: Option<Arc<dyn PhysicalExprAdapterFactory>>) -> Self {
        Self {
            inner: inner.unwrap_or_else(|| Arc::new(DefaultPhysicalExprAdapterFactory)),
            pushdown: true,
            value_free: Arc::default(),
        }
    }

    /// Turns the shredded pushdown of extractions on or off (reassembly of
    /// differently shredded files always happens).
    pub fn with_pushdown(mut self, pushdown: bool) -> Self {
        self.pushdown = pushdown;
        self
    }

    /// For the scan of one file: the shredded nodes whose residual is all null in
    /// the row groups read, so extractions there read neither it nor the metadata.
    pub fn with_value_free_nodes(mut self, nodes: Arc<ValueFreeNodes>) -> Self {
        self.value_free = nodes;
        self
    }

    /// The wrapped factory.
    pub fn inner(&self) -> &Arc<dyn PhysicalExprAdapterFactory> {
        &self.inner
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
            pushdown: self.pushdown,
            value_free: Arc::clone(&self.value_free),
        }))
    }
}

/// Rewrites, per file, extractions the file shreds into [`ShreddedGet`] and other
/// references to VARIANT columns that the file stores in another layout into
/// [`ReassembleVariant`], then lets the inner adapter do the rest.
#[derive(Debug)]
struct VariantExprAdapter {
    logical: SchemaRef,
    physical: SchemaRef,
    inner: Arc<dyn PhysicalExprAdapter>,
    pushdown: bool,
    value_free: Arc<ValueFreeNodes>,
}

impl VariantExprAdapter {
    fn reassemble_for(&self, column: &Column) -> Option<Pending> {
        let logical = self.logical.field_with_name(column.name()).ok()?;
        if logical.data_type() != &variant_data_type()
            && !is_unshredded_variant(logical.data_type())
        {
            return None;
        }
        let index = self.physical.index_of(column.name()).ok()?;
        let physical = self.physical.field(index).data_type();
        (physical != logical.data_type() && is_variant_type(physical)).then(|| {
            let name = column.name();
            Pending {
                field: variant_return_field(name),
                replacement: Arc::new(ReassembleVariant::new(
                    name,
                    Arc::new(Column::new(name, index)),
                )),
            }
        })
    }

    fn shredded_get_for(&self, expr: &dyn PhysicalExpr) -> Result<Option<Pending>> {
        if !self.pushdown {
            return Ok(None);
        }
        if let Some(extraction) = Extraction::of(expr)
            && let Some(get) = rewrite_extraction(&extraction, &self.physical, &self.value_free)?
        {
            return Ok(Some(Pending {
                field: extraction.output_field(),
                replacement: Arc::new(get),
            }));
        }
        // Not from leaves: from the subtree of the shredded key prefix.
        let Some(get) = rewrite_subtree(expr, &self.physical)? else {
            return Ok(None);
        };
        Ok(Some(Pending {
            field: get.return_field(&self.physical)?,
            replacement: Arc::new(get),
        }))
    }
}

/// `Struct{metadata, value}` with binary children and no `typed_value`.
fn is_unshredded_variant(dt: &DataType) -> bool {
    matches!(dt, DataType::Struct(f) if f.len() == 2 && f.find("typed_value").is_none())
        && is_variant_type(dt)
}

impl PhysicalExprAdapter for VariantExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        // Extractions first (top-down, so their column argument is still there),
        // then the remaining column references.
        let rewritten = expr
            .transform_down(|e| {
                if let Some(p) = self.shredded_get_for(e.as_ref())? {
                    return Ok(Transformed::new(
                        Arc::new(p) as Arc<dyn PhysicalExpr>,
                        true,
                        TreeNodeRecursion::Jump,
                    ));
                }
                if let Some(c) = e.downcast_ref::<Column>()
                    && let Some(p) = self.reassemble_for(c)
                {
                    return Ok(Transformed::yes(Arc::new(p) as Arc<dyn PhysicalExpr>));
                }
                Ok(Transformed::no(e))
            })?
            .data;
        let adapted = self.inner.rewrite(rewritten)?;
        // Only now the placeholders get their real expressions, which the inner
        // adapter must not see.
        Ok(adapted
            .transform_up(|e| {
                if let Some(p) = e.downcast_ref::<Pending>() {
                    return Ok(Transformed::yes(Arc::clone(&p.replacement)));
                }
                Ok(Transformed::no(e))
            })?
            .data)
    }
}
