//! Row-group pruning on the elements of a shredded array: "some element of
//! `$.tags[*]` equals `'x'`".
//!
//! A filter conjunct `array_has(<elements of $.p[*] as T>, literal)` becomes, for
//! the row-group pruning of [`super::pruning::FilePlanner`], a comparison of a
//! synthetic column with the literal, whose statistics are those of the array's
//! element `typed_value` leaf:
//!
//! ```text
//! FilterExec: array_has(variant_get(variant_get(v@1, $.tags[*]), $, array<string>), x)
//!   VariantScanExec: extractions=[], pruning_predicate=[array_has(...)]
//! => per file, per row group:
//!   __variant_elem_0 = x     min/max of v.typed_value.tags.typed_value.list.element.typed_value
//! ```
//!
//! The element leaf's min/max bound every element of every row in a row group
//! only where nothing of the array lives elsewhere: the array group's residual
//! `value` and the elements' residual `value` are all null there (no row holds
//! `$.tags` outside the shredded list, no element has another type), and the
//! requested element type is the leaf's type or an exact widening of it. Float
//! leaves are never pruned on (Parquet statistics leave NaN out). Null counts are
//! not given: the leaf's null count counts list slots, not rows. Everywhere else
//! the row group is kept; the filter above the scan always runs.
//!
//! Pages are not pruned on element leaves, and the workload log does not list
//! these tests.

use std::sync::Arc;

use arrow::array::{ArrayRef, UInt64Array};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use datafusion::common::ScalarValue;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;

use super::shredded_get::{exact_widening, literal_str, variant_get_call};
use crate::variant::path::{GetPath, Step, parse_get_path};

/// DataFusion's `array_has` (also called as `array_contains` and `list_has`).
const ARRAY_HAS: &str = "array_has";

/// The elements of `$.k1.k2[*]` of a VARIANT column, converted to a primitive
/// type: `variant_get(variant_get(v, '$.k[*]'), '$', 'array<T>')` as the
/// analyzer splits it, or `variant_get(v, '$.k[*]', 'T')` (and the `try_` forms).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Elements {
    pub(super) column: String,
    /// The keys before `[*]`.
    keys: Vec<String>,
    path_text: String,
    /// The requested element type.
    pub(super) element: DataType,
}

impl Elements {
    /// Recognises the elements of a wildcard extraction.
    fn of(expr: &dyn PhysicalExpr) -> Option<Self> {
        let (call, _) = variant_get_call(expr)?;
        let args = call.args();
        let literal = |i: usize| literal_str(args, i);
        let element = match call.return_field(&Schema::empty()).ok()?.data_type() {
            DataType::List(f) | DataType::LargeList(f) => f.data_type().clone(),
            _ => return None,
        };
        if element.is_nested() || crate::array::is_variant_type(&element) {
            return None;
        }
        let (column, path_text) = match args[0].downcast_ref::<Column>() {
            // `variant_get(v, '$.k[*]', 'T')`.
            Some(column) => (column.name().to_string(), literal(1)?),
            // `variant_get(variant_get(v, '$.k[*]'), '$', 'array<T>')`.
            None => {
                if literal(1)? != "$" {
                    return None;
                }
                let (inner, _) = variant_get_call(args[0].as_ref())?;
                let inner_args = inner.args();
                let untyped = match inner_args.len() {
                    2 => true,
                    3 => inner_args[2]
                        .downcast_ref::<Literal>()
                        .and_then(|l| l.value().try_as_str().flatten())
                        .is_some_and(|t| t.eq_ignore_ascii_case("variant")),
                    _ => false,
                };
                let column = inner_args.first()?.downcast_ref::<Column>()?;
                let path = inner_args
                    .get(1)?
                    .downcast_ref::<Literal>()?
                    .value()
                    .try_as_str()
                    .flatten()?
                    .to_string();
                if !untyped {
                    return None;
                }
                (column.name().to_string(), path)
            }
        };
        let GetPath::Wildcard(steps) = parse_get_path(&path_text).ok()? else {
            return None;
        };
        let (last, keys) = steps.split_last()?;
        if *last != Step::Elements {
            return None;
        }
        let keys = keys
            .iter()
            .map(|s| match s {
                Step::Key(k) => Some(k.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            column,
            keys,
            path_text,
            element,
        })
    }

    /// Where the array's leaves are in one file, when its elements are shredded
    /// to a primitive type the requested one widens exactly.
    pub(super) fn leaves(
        &self,
        metadata: &ParquetMetaData,
        file: &Schema,
    ) -> Option<ElementLeaves> {
        let mut fields: &Fields = match file.field_with_name(&self.column).ok()?.data_type() {
            DataType::Struct(f) if crate::array::is_variant_type(&DataType::Struct(f.clone())) => f,
            _ => return None,
        };
        let mut node = vec![self.column.clone()];
        for key in &self.keys {
            let (_, typed) = fields.find("typed_value")?;
            let DataType::Struct(object) = typed.data_type() else {
                return None;
            };
            let DataType::Struct(child) = object.find(key)?.1.data_type() else {
                return None;
            };
            node.push("typed_value".to_string());
            node.push(key.clone());
            fields = child;
        }
        let (DataType::List(item) | DataType::LargeList(item)) =
            fields.find("typed_value")?.1.data_type()
        else {
            return None;
        };
        let DataType::Struct(element) = item.data_type() else {
            return None;
        };
        let typed_type = element.find("typed_value")?.1.data_type().clone();
        if typed_type.is_nested()
            || matches!(
                typed_type,
                DataType::Float16 | DataType::Float32 | DataType::Float64
            )
            || !exact_widening(&typed_type, &self.element)
        {
            return None;
        }
        // Leaves by their path: `node.value`, and under `node.typed_value` the
        // element's `value` and `typed_value` (whatever the list's group names).
        let descr = metadata.file_metadata().schema_descr();
        let mut list = node.clone();
        list.push("typed_value".to_string());
        let mut array_value = None;
        let mut element_value = None;
        let mut element_typed = None;
        for (i, c) in descr.columns().iter().enumerate() {
            let parts = c.path().parts();
            if parts.len() == node.len() + 1
                && parts.starts_with(&node)
                && parts[node.len()] == "value"
            {
                array_value = Some(i);
            } else if parts.len() == list.len() + 3 && parts.starts_with(&list) {
                match parts[list.len() + 2].as_str() {
                    "value" => element_value = Some(i),
                    "typed_value" => element_typed = Some(i),
                    _ => {}
                }
            }
        }
        Some(ElementLeaves {
            array_value,
            element_value,
            element_typed: element_typed?,
            field: Field::new("typed_value", typed_type, true),
        })
    }
}

/// `array_has(elements, literal)` with a non-null literal: the elements and the
/// literal.
pub(super) fn element_test(expr: &dyn PhysicalExpr) -> Option<(Elements, ScalarValue)> {
    let call = (expr as &dyn std::any::Any).downcast_ref::<ScalarFunctionExpr>()?;
    if call.fun().name() != ARRAY_HAS || call.args().len() != 2 {
        return None;
    }
    let elements = Elements::of(call.args()[0].as_ref())?;
    let needle = call.args()[1].downcast_ref::<Literal>()?.value();
    if needle.is_null() {
        return None;
    }
    let needle = needle.cast_to(&elements.element).ok()?;
    Some((elements, needle))
}

/// Whether `expr` holds an element test.
pub(super) fn has_element_test(expr: &Arc<dyn PhysicalExpr>) -> bool {
    let mut found = false;
    let _ = expr.apply(|e| {
        found = element_test(e.as_ref()).is_some();
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    found
}

/// The leaves of a shredded array in one file.
#[derive(Debug)]
pub(super) struct ElementLeaves {
    /// The array group's residual `value`.
    array_value: Option<usize>,
    /// The elements' residual `value`.
    element_value: Option<usize>,
    /// The elements' `typed_value`.
    element_typed: usize,
    /// The arrow field of the elements' `typed_value`.
    field: Field,
}

impl ElementLeaves {
    /// Row group `r` holds nothing of the array outside the element leaf.
    fn all_typed(&self, metadata: &ParquetMetaData, r: usize) -> bool {
        let all_null = |leaf: Option<usize>| {
            leaf.is_none_or(|i| {
                let chunk = metadata.row_group(r).column(i);
                chunk
                    .statistics()
                    .and_then(parquet::file::statistics::Statistics::null_count_opt)
                    .is_some_and(|nulls| nulls as i64 == chunk.num_values())
            })
        };
        all_null(self.array_value) && all_null(self.element_value)
    }

    /// Per row group, the min and max of the elements as `element` (NULL where
    /// they do not bound every element), and unknown null counts.
    pub(super) fn statistics(
        &self,
        metadata: &ParquetMetaData,
        element: &DataType,
    ) -> datafusion::common::Result<(ArrayRef, ArrayRef, ArrayRef)> {
        let descr = metadata.file_metadata().schema_descr();
        let row_groups = metadata.row_groups();
        let converter =
            StatisticsConverter::from_column_index(self.element_typed, &self.field, descr)?;
        let known: Vec<bool> = (0..row_groups.len())
            .map(|r| self.all_typed(metadata, r))
            .collect();
        let mins = arrow::compute::cast(&converter.row_group_mins(row_groups.iter())?, element)?;
        let maxes = arrow::compute::cast(&converter.row_group_maxes(row_groups.iter())?, element)?;
        let nulls: ArrayRef = Arc::new(UInt64Array::from(vec![None::<u64>; row_groups.len()]));
        Ok((only_known(mins, &known)?, only_known(maxes, &known)?, nulls))
    }
}

/// Nulls out the entries of `array` where `known` is false (unknown statistics).
pub(super) fn only_known(array: ArrayRef, known: &[bool]) -> datafusion::common::Result<ArrayRef> {
    let unknown = arrow::array::BooleanArray::from(known.iter().map(|k| !k).collect::<Vec<_>>());
    Ok(arrow::compute::nullif(&array, &unknown)?)
}
