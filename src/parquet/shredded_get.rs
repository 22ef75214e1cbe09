//! Shredded pushdown of path extractions.
//!
//! Per file, `variant_get(v, '$.a.b', 'bigint')` (and `try_variant_get`, and the
//! `v:a.b::bigint` syntax that plans to them) becomes [`ShreddedGet`] over the
//! leaves of that path in the file's shredded layout:
//!
//! ```text
//! variant_get(v@0, $.a.b, bigint)
//!   => shredded_get(v.typed_value.a.typed_value.b.typed_value,     -- the typed leaf
//!                   v.typed_value.a.typed_value.b.value,           -- its residual
//!                   v.metadata)                                     -- for the residual
//! ```
//!
//! The leaves are `get_field` calls on the file's column, which DataFusion's
//! Parquet reader turns into a leaf-level projection mask (only those column
//! chunks are read) and accepts in row filters. Where the file's statistics show
//! the residual all-null ([`ValueFreeNodes`]), neither it nor the metadata is read.
//! A path the file does not shred down to a primitive (an array step, an
//! unshredded key, an object or array at the end) keeps the original call over
//! the whole, reassembled value: partial pushdown, decided per file and per
//! extraction.
//!
//! The result is the function's, row for row: typed values pass through when the
//! requested type is the shredded one or an exact widening of it
//! ([`exact_widening`]); everything else goes through the function's own
//! conversion ([`crate::array::get::variant_get`] at `$`) on the leaf's values.

use std::collections::HashSet;
use std::fmt::{self, Display, Formatter};
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, StructArray, new_null_array};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{Column, Literal};

use crate::array::{encode_primitives, is_variant_type, variant_fields};
use std::any::Any;

use crate::array::cast::VariantCaster;
use crate::array::get::GetError;
use crate::array::get::{PathArg, TRY_VARIANT_GET, VARIANT_GET};
pub(crate) use crate::boundary::{
    RAISE_VARIANT_GET_ERROR, VARIANT_GET_OR_ERROR, or_error_fields, run_kernel,
    run_or_error_kernel, without_errors,
};
use crate::config::session_tz;
use crate::variant::cast::{CastOptions, decimal_to_f64};
use crate::variant::encoding::EMPTY_METADATA;
use crate::variant::path::{PathSegment, parse_get_path};
use crate::variant::types::SparkType;
use crate::variant::unshred::for_each_primitive;
use parquet_variant::{Variant, VariantMetadata};

/// A `variant_get` / `try_variant_get` call on a column with a literal path and
/// type: the only calls the reader can answer from shredded leaves.
#[derive(Debug, Clone)]
pub struct Extraction {
    /// The function name, for errors and display.
    pub func: &'static str,
    /// The VARIANT column.
    pub column: Column,
    /// The path as written.
    pub path_text: String,
    /// The parsed path.
    pub path: Vec<PathSegment>,
    /// The requested type (`None`: VARIANT).
    pub target: Option<SparkType>,
    /// `try_variant_get`.
    pub safe: bool,
    /// The call's result field.
    pub return_field: FieldRef,
    /// The session options the call was planned with (time zone).
    pub config: Arc<ConfigOptions>,
    /// `variant_get_or_error`: the result is `{value, error}` (of
    /// `return_field`'s type), conversion errors kept per row.
    pub deferred: bool,
}

impl Extraction {
    /// Recognises an extraction; anything else (a path column, a NULL path, a call
    /// over an expression) is `None`.
    pub fn of(expr: &dyn PhysicalExpr) -> Option<Self> {
        if let Some(call) = (expr as &dyn Any).downcast_ref::<ScalarFunctionExpr>() {
            match call.fun().name() {
                // The analyzer's split of a strict typed `variant_get`
                // (`optimizer::variant_get_split`): that extraction, for pruning.
                RAISE_VARIANT_GET_ERROR => {
                    let inner = Extraction::of(call.args().first()?.as_ref())?;
                    return inner.deferred.then_some(Self {
                        deferred: false,
                        ..inner
                    });
                }
                VARIANT_GET_OR_ERROR => return Self::or_error(call),
                _ => {}
            }
        }
        let (call, safe) = variant_get_call(expr)?;
        let args = call.args();
        let literal = |i: usize| literal_str(args, i);
        let path_text = literal(1)?;
        // A wildcard path is answered from the whole value.
        let mut path = parse_get_path(&path_text).ok()?.exact()?.to_vec();
        let target = match args.len() {
            2 => None,
            3 => match SparkType::parse(&literal(2)?).ok()? {
                SparkType::Variant => None,
                t => Some(t),
            },
            _ => return None,
        };
        // `variant_get(variant_get(v, p), '$', t)`, as the analyzer splits a
        // conversion off its path.
        let (column, path_text) = match args[0].downcast_ref::<Column>() {
            Some(c) => (c.clone(), path_text),
            None => {
                let inner = Extraction::of(args[0].as_ref())?;
                if !path.is_empty() || inner.target.is_some() {
                    return None;
                }
                path = inner.path;
                (inner.column, inner.path_text)
            }
        };
        Some(Self {
            func: if safe {
                "try_variant_get"
            } else {
                "variant_get"
            },
            column,
            path_text,
            path,
            target,
            safe,
            return_field: call.return_field(&Schema::empty()).ok()?,
            config: Arc::new(call.config_options().clone()),
            deferred: false,
        })
    }

    /// `variant_get_or_error(column, path, type)` with literal arguments and
    /// an exact path.
    fn or_error(call: &ScalarFunctionExpr) -> Option<Self> {
        let args = call.args();
        let literal = |i: usize| literal_str(args, i);
        let column = args.first()?.downcast_ref::<Column>()?.clone();
        let path_text = literal(1)?;
        let path = parse_get_path(&path_text).ok()?.exact()?.to_vec();
        let target = match SparkType::parse(&literal(2)?).ok()? {
            SparkType::Variant => return None,
            t => t,
        };
        let DataType::Struct(fields) = call
            .return_field(&Schema::empty())
            .ok()?
            .data_type()
            .clone()
        else {
            return None;
        };
        let value = fields.first()?;
        Some(Self {
            func: VARIANT_GET,
            column,
            path_text,
            path,
            target: Some(target),
            safe: false,
            return_field: Arc::new(Field::new(VARIANT_GET, value.data_type().clone(), true)),
            config: Arc::new(call.config_options().clone()),
            deferred: true,
        })
    }

    /// The field the extraction's expression produces: `return_field`, or
    /// `{value, error}` around it for `variant_get_or_error`.
    pub fn output_field(&self) -> FieldRef {
        if self.deferred {
            Arc::new(Field::new(
                VARIANT_GET_OR_ERROR,
                DataType::Struct(or_error_fields(self.return_field.data_type())),
                true,
            ))
        } else {
            Arc::clone(&self.return_field)
        }
    }

    /// `v: $.a.b AS bigint`, for plans and metrics.
    pub fn describe(&self) -> String {
        let target = self
            .target
            .as_ref()
            .map_or_else(|| "variant".to_string(), SparkType::sql_name);
        format!("{}: {} AS {target}", self.column.name(), self.path_text)
    }

    /// Where this path lives in a file's layout of the column, when it can be read
    /// from there.
    pub fn resolve(&self, physical: &Schema) -> Option<ShreddedNode> {
        let field = physical.field_with_name(self.column.name()).ok()?;
        resolve_path(field.data_type(), &self.path)
    }
}

/// Argument `i` of a call, when it is a string literal.
pub(super) fn literal_str(args: &[Arc<dyn PhysicalExpr>], i: usize) -> Option<String> {
    let l = args.get(i)?.downcast_ref::<Literal>()?;
    l.value().try_as_str().flatten().map(str::to_string)
}

/// A `variant_get` / `try_variant_get` call, and whether it is the `try_` form.
///
/// Recognised by the function's registered name ([`VARIANT_GET`],
/// [`TRY_VARIANT_GET`]), so that the Parquet layer does not depend on the function
/// layer; the arguments are checked by the caller.
pub(super) fn variant_get_call(expr: &dyn PhysicalExpr) -> Option<(&ScalarFunctionExpr, bool)> {
    let call = (expr as &dyn Any).downcast_ref::<ScalarFunctionExpr>()?;
    let safe = match call.fun().name() {
        VARIANT_GET => false,
        TRY_VARIANT_GET => true,
        _ => return None,
    };
    Some((call, safe))
}

/// A path's node in a shredded layout: the field names from the column down to
/// the group holding the path's `value` / `typed_value`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShreddedNode {
    /// `["typed_value", "a", "typed_value", "b"]` for `$.a.b`; empty for `$`.
    pub node: Vec<String>,
    /// Whether the group has a residual `value`.
    pub value: bool,
    /// The group's primitive `typed_value`, if any.
    pub typed: Option<DataType>,
}

impl ShreddedNode {
    /// The field names of the residual `value` leaf.
    pub fn value_path(&self) -> Vec<String> {
        let mut p = self.node.clone();
        p.push("value".to_string());
        p
    }

    /// The field names of the `typed_value` leaf.
    pub fn typed_path(&self) -> Vec<String> {
        let mut p = self.node.clone();
        p.push("typed_value".to_string());
        p
    }
}

/// Follows `path` through a shredded VARIANT layout. `None` when the column is
/// not shredded, the path is `$`, a step is an array index or a key that is not
/// shredded, or the node's `typed_value` is an object or array (those are read
/// whole).
pub fn resolve_path(column_type: &DataType, path: &[PathSegment]) -> Option<ShreddedNode> {
    let DataType::Struct(top) = column_type else {
        return None;
    };
    // `$` itself stays with the full read: at the top level a row whose `value` and
    // `typed_value` are both null is a Variant null (not a missing field), which
    // the leaves alone cannot tell from a NULL row.
    if path.is_empty() || !is_variant_type(column_type) || top.find("typed_value").is_none() {
        return None;
    }
    let mut fields: &Fields = top;
    let mut node = Vec::new();
    for segment in path {
        let PathSegment::Key(key) = segment else {
            return None;
        };
        // DataFusion's `get_field` cannot name an empty key (another writer's
        // file may shred one): such a path is read whole.
        if key.is_empty() {
            return None;
        }
        let (_, typed) = fields.find("typed_value")?;
        let DataType::Struct(object) = typed.data_type() else {
            return None;
        };
        let (_, child) = object.find(key)?;
        let DataType::Struct(child_fields) = child.data_type() else {
            return None;
        };
        node.push("typed_value".to_string());
        node.push(key.clone());
        fields = child_fields;
    }
    let value = fields
        .find("value")
        .is_some_and(|(_, f)| matches!(f.data_type(), DataType::Binary | DataType::BinaryView));
    let typed = match fields.find("typed_value") {
        None => None,
        Some((_, f)) if f.data_type().is_nested() => return None,
        Some((_, f)) => Some(f.data_type().clone()),
    };
    (value || typed.is_some()).then_some(ShreddedNode { node, value, typed })
}

/// Why [`resolve_path`] found no node for `path`: how the extraction reads the
/// file instead, for the workload log.
pub fn fallback_reason(column_type: &DataType, path: &[PathSegment]) -> crate::workload::Outcome {
    use crate::workload::Outcome;
    let DataType::Struct(top) = column_type else {
        return Outcome::Unshredded;
    };
    if !is_variant_type(column_type) || top.find("typed_value").is_none() {
        return Outcome::Unshredded;
    }
    if path.is_empty() {
        return Outcome::WholeValue;
    }
    let mut fields: &Fields = top;
    for segment in path {
        let PathSegment::Key(key) = segment else {
            return Outcome::ArrayStep;
        };
        let Some((_, typed)) = fields.find("typed_value") else {
            return Outcome::NotShredded;
        };
        let DataType::Struct(object) = typed.data_type() else {
            return Outcome::NotShredded;
        };
        let Some((_, child)) = object.find(key) else {
            return Outcome::NotShredded;
        };
        let DataType::Struct(child_fields) = child.data_type() else {
            return Outcome::NotShredded;
        };
        fields = child_fields;
    }
    match fields.find("typed_value") {
        Some((_, f)) if f.data_type().is_nested() => Outcome::ObjectOrArray,
        _ => Outcome::NotShredded,
    }
}

/// Whether a typed leaf of type `from` converts to the requested `to` exactly and
/// infallibly, in the same order: then the leaf passes through (and its
/// statistics can prune). Spark's casts agree with Arrow's on these.
pub fn exact_widening(from: &DataType, to: &DataType) -> bool {
    use DataType::{
        Binary, BinaryView, Decimal128, Float32, Float64, Int8, Int16, Int32, Int64, LargeBinary,
        LargeUtf8, Utf8, Utf8View,
    };
    if from == to {
        return true;
    }
    match (from, to) {
        (Utf8View | LargeUtf8, Utf8) | (BinaryView | LargeBinary, Binary) => true,
        (Utf8 | LargeUtf8, Utf8View) | (Binary | LargeBinary, BinaryView) => true,
        (Int8, Int16 | Int32 | Int64) | (Int16, Int32 | Int64) | (Int32, Int64) => true,
        (Float32, Float64) => true,
        (Decimal128(p1, s1), Decimal128(p2, s2)) => s1 == s2 && p2 >= p1,
        _ => false,
    }
}

/// The shredded nodes, per column, whose residual `value` is known to be all null
/// in the row groups a scan of one file reads (from the file's statistics).
pub type ValueFreeNodes = HashSet<(String, Vec<String>)>;

/// A `get_field(column, names...)` on the file's column.
fn leaf(column: &Column, names: &[String], physical: &Schema) -> Result<Arc<dyn PhysicalExpr>> {
    let mut args: Vec<Arc<dyn PhysicalExpr>> = vec![Arc::new(column.clone())];
    args.extend(
        names
            .iter()
            .map(|n| Arc::new(Literal::new(ScalarValue::Utf8(Some(n.clone())))) as _),
    );
    Ok(Arc::new(ScalarFunctionExpr::try_new(
        datafusion::functions::core::get_field(),
        args,
        physical,
        Arc::new(ConfigOptions::default()),
    )?))
}

/// The per-file rewrite of an extraction, or `None` when this file cannot answer
/// it from leaves.
pub fn rewrite_extraction(
    extraction: &Extraction,
    physical: &Schema,
    value_free: &ValueFreeNodes,
) -> Result<Option<ShreddedGet>> {
    let Some(node) = extraction.resolve(physical) else {
        return Ok(None);
    };
    let Ok(index) = physical.index_of(extraction.column.name()) else {
        return Ok(None);
    };
    let column = Column::new(extraction.column.name(), index);
    let residual = node.value
        && !value_free.contains(&(extraction.column.name().to_string(), node.node.clone()));
    let value = residual
        .then(|| leaf(&column, &node.value_path(), physical))
        .transpose()?;
    let metadata = residual
        .then(|| leaf(&column, &["metadata".to_string()], physical))
        .transpose()?;
    let typed = node
        .typed
        .is_some()
        .then(|| leaf(&column, &node.typed_path(), physical))
        .transpose()?;
    Ok(Some(ShreddedGet {
        description: extraction.describe(),
        func: extraction.func,
        target: extraction.target.clone(),
        options: CastOptions {
            safe: extraction.safe,
            tz: session_tz(&extraction.config)?,
        },
        return_field: extraction.output_field(),
        deferred: extraction.deferred,
        metadata,
        value,
        typed,
    }))
}

/// An extraction answered from one file's shredded leaves (see the module docs).
#[derive(Debug, Clone)]
pub struct ShreddedGet {
    description: String,
    func: &'static str,
    target: Option<SparkType>,
    options: CastOptions,
    return_field: FieldRef,
    /// `variant_get_or_error`: `{value, error}` out, errors kept per row.
    deferred: bool,
    metadata: Option<Arc<dyn PhysicalExpr>>,
    value: Option<Arc<dyn PhysicalExpr>>,
    typed: Option<Arc<dyn PhysicalExpr>>,
}

impl PartialEq for ShreddedGet {
    fn eq(&self, other: &Self) -> bool {
        self.description == other.description
            && self.func == other.func
            && self.deferred == other.deferred
            && self.children() == other.children()
    }
}

impl Eq for ShreddedGet {}

impl Hash for ShreddedGet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.description.hash(state);
        self.func.hash(state);
        self.deferred.hash(state);
        for c in self.children() {
            c.hash(state);
        }
    }
}

impl Display for ShreddedGet {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "shredded_get({}", self.description)?;
        if self.value.is_none() {
            write!(f, ", typed only")?;
        }
        write!(f, ")")
    }
}

impl ShreddedGet {
    /// The values of a typed leaf without residual, converted to the target as
    /// [`variant_get`](crate::array::get::variant_get) converts them (same
    /// values, same errors), without rebuilding a Variant column: numbers to
    /// DOUBLE directly, everything else from each value's Variant encoding.
    /// `None` when the leaf is not a primitive shredded type.
    fn convert_typed(&self, typed: &ArrayRef) -> Result<Option<ArrayRef>> {
        let Some(target) = &self.target else {
            return Ok(None);
        };
        if let Some(values) = numbers_to_double(typed, target) {
            return Ok(Some(values));
        }
        // A deferred call raises (and falls back) on the batch's first error.
        let options = CastOptions {
            safe: self.options.safe && !self.deferred,
            ..self.options
        };
        crate::boundary::guard(self.func, || {
            let mut caster = VariantCaster::new(target, options, typed.len());
            let cast_error = |e| crate::boundary::get_error(self.func, GetError::Cast(e));
            // Strings as the Variant strings reassembly would decode to (short
            // under 64 bytes), without writing and re-checking their bytes.
            if let Some(strings) = string_values(typed) {
                for s in strings {
                    match s {
                        Some(s) => caster
                            .append_variant(&Variant::from(s))
                            .map_err(cast_error)?,
                        None => caster.append_null(),
                    }
                }
                return Ok(Some(caster.finish()));
            }
            let metadata = VariantMetadata::new(EMPTY_METADATA);
            let converted = for_each_primitive(typed, |bytes| {
                let Some(value) = bytes else {
                    caster.append_null();
                    return Ok(());
                };
                if !caster.try_append_raw(value, &[])? {
                    caster.append_variant(&Variant::new_with_metadata(metadata.clone(), value))?;
                }
                Ok(())
            })
            .map_err(cast_error)?;
            // A row reassembly cannot encode: the general path reports it.
            Ok(matches!(converted, Some(Ok(()))).then(|| caster.finish()))
        })
    }
}

/// The values of a string column, of any of Arrow's string types.
fn string_values(typed: &ArrayRef) -> Option<Box<dyn Iterator<Item = Option<&str>> + '_>> {
    use arrow::array::AsArray;
    Some(match typed.data_type() {
        DataType::Utf8 => Box::new(typed.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(typed.as_string::<i64>().iter()),
        DataType::Utf8View => Box::new(typed.as_string_view().iter()),
        _ => return None,
    })
}

/// Integers, floats and decimals to DOUBLE, as Spark converts each (the
/// nearest double; see [`crate::variant::cast`]): no value can fail.
fn numbers_to_double(typed: &ArrayRef, target: &SparkType) -> Option<ArrayRef> {
    use arrow::array::{AsArray, Float64Array};
    use arrow::datatypes::{
        Decimal128Type, Float32Type, Int8Type, Int16Type, Int32Type, Int64Type,
    };
    if *target != SparkType::Double {
        return None;
    }
    let values: Float64Array = match typed.data_type() {
        DataType::Int8 => typed.as_primitive::<Int8Type>().unary(f64::from),
        DataType::Int16 => typed.as_primitive::<Int16Type>().unary(f64::from),
        DataType::Int32 => typed.as_primitive::<Int32Type>().unary(f64::from),
        DataType::Int64 => typed.as_primitive::<Int64Type>().unary(|x| x as f64),
        DataType::Float32 => typed.as_primitive::<Float32Type>().unary(f64::from),
        DataType::Decimal128(_, scale) => {
            let scale = u8::try_from(*scale).ok()?;
            typed
                .as_primitive::<Decimal128Type>()
                .unary(|u| decimal_to_f64(u, scale))
        }
        _ => return None,
    };
    Some(Arc::new(values))
}

fn evaluate_opt(
    expr: Option<&Arc<dyn PhysicalExpr>>,
    batch: &arrow::array::RecordBatch,
) -> Result<Option<ArrayRef>> {
    expr.map(|e| e.evaluate(batch)?.into_array(batch.num_rows()))
        .transpose()
}

impl PhysicalExpr for ShreddedGet {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.return_field))
    }

    fn evaluate(&self, batch: &arrow::array::RecordBatch) -> Result<ColumnarValue> {
        let rows = batch.num_rows();
        // The converted values' type (inside `{value, error}` when deferred).
        let out_type = match self.return_field.data_type() {
            DataType::Struct(f) if self.deferred && !f.is_empty() => f[0].data_type(),
            t => t,
        };
        // Values that cannot have failed, as the expression returns them.
        let done = |values: ArrayRef| -> Result<ColumnarValue> {
            Ok(ColumnarValue::Array(if self.deferred {
                without_errors(values)?
            } else {
                values
            }))
        };
        let typed = evaluate_opt(self.typed.as_ref(), batch)?;
        let value = evaluate_opt(self.value.as_ref(), batch)?;
        let residual_empty = value
            .as_ref()
            .is_none_or(|v| v.logical_null_count() == v.len());
        if residual_empty {
            match &typed {
                None => return done(new_null_array(out_type, rows)),
                Some(t) if self.target.is_some() && exact_widening(t.data_type(), out_type) => {
                    return done(arrow::compute::cast(t, out_type)?);
                }
                // A VARIANT of the typed values: encoded directly, as reassembly
                // would, with the empty metadata a primitive needs.
                Some(t) if self.target.is_none() => {
                    if let Some((values, nulls)) = encode_primitives(t)? {
                        let metadata = crate::array::empty_metadata_column(rows);
                        return Ok(ColumnarValue::Array(Arc::new(StructArray::try_new(
                            variant_fields(),
                            vec![Arc::new(metadata), Arc::new(values)],
                            nulls,
                        )?)));
                    }
                }
                // Other conversions from the typed values alone (no Variant
                // column is rebuilt); a deferred call whose batch has an error
                // takes the general path, which keeps the errors per row.
                Some(t) => match self.convert_typed(t) {
                    Ok(Some(values)) => return done(values),
                    Ok(None) => {}
                    Err(e) if !self.deferred => return Err(e),
                    Err(_) => {}
                },
            }
        }
        // The general case: the leaf's values as a Variant column, converted by
        // the function itself.
        let metadata = match evaluate_opt(self.metadata.as_ref(), batch)? {
            Some(m) => m,
            None => Arc::new(crate::array::empty_metadata_column(rows)) as ArrayRef,
        };
        // A row is present when the path has a residual or a typed value there;
        // otherwise the path is missing (or the whole value is NULL).
        let presence = |a: &Option<ArrayRef>| -> Option<NullBuffer> {
            a.as_ref().map(|a| {
                a.logical_nulls()
                    .unwrap_or_else(|| NullBuffer::new_valid(a.len()))
            })
        };
        let valid = match (presence(&value), presence(&typed)) {
            (Some(v), Some(t)) => NullBuffer::new(v.inner() | t.inner()),
            (Some(n), None) | (None, Some(n)) => n,
            (None, None) => NullBuffer::new_null(rows),
        };
        let mut fields = vec![Field::new("metadata", metadata.data_type().clone(), true)];
        let mut columns = vec![metadata];
        if let Some(v) = value {
            fields.push(Field::new("value", v.data_type().clone(), true));
            columns.push(v);
        }
        if let Some(t) = typed {
            fields.push(Field::new("typed_value", t.data_type().clone(), true));
            columns.push(t);
        }
        let column: ArrayRef = Arc::new(StructArray::try_new(
            Fields::from(fields),
            columns,
            Some(valid),
        )?);
        let result = match (&self.target, self.deferred) {
            (Some(target), true) => {
                run_or_error_kernel(&column, PathArg::Literal(&[]), target, self.options.tz)?
            }
            _ => run_kernel(
                self.func,
                &column,
                PathArg::Literal(&[]),
                self.target.as_ref(),
                self.options,
            )?,
        };
        Ok(ColumnarValue::Array(result))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        [&self.metadata, &self.value, &self.typed]
            .into_iter()
            .flatten()
            .collect()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let mut children = children.into_iter();
        let mut next =
            |slot: &Option<Arc<dyn PhysicalExpr>>| slot.as_ref().and_then(|_| children.next());
        let mut new = self.as_ref().clone();
        new.metadata = next(&self.metadata);
        new.value = next(&self.value);
        new.typed = next(&self.typed);
        Ok(Arc::new(new))
    }

    fn fmt_sql(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shredding::shred;
    use crate::variant::path::parse_path;
    use arrow::datatypes::DataType::*;

    /// The physical type of a column shredded as `typed` (a typed shape).
    fn shredded(typed: &DataType) -> DataType {
        let column = crate::array::VariantColumnBuilder::new(0).finish();
        shred(&(Arc::new(column) as ArrayRef), typed)
            .unwrap()
            .data_type()
            .clone()
    }

    fn object(fields: Vec<(&str, DataType)>) -> DataType {
        Struct(Fields::from(
            fields
                .into_iter()
                .map(|(n, t)| Field::new(n, t, true))
                .collect::<Vec<_>>(),
        ))
    }

    fn resolve(column: &DataType, path: &str) -> Option<ShreddedNode> {
        resolve_path(column, &parse_path(path).unwrap())
    }

    #[test]
    fn resolve_path_finds_shredded_leaves() {
        let t = shredded(&object(vec![
            ("a", Int64),
            ("b", object(vec![("c", Utf8)])),
        ]));
        let a = resolve(&t, "$.a").unwrap();
        assert_eq!(a.node, ["typed_value", "a"]);
        assert_eq!(a.typed, Some(Int64));
        assert!(a.value);
        assert_eq!(a.typed_path(), ["typed_value", "a", "typed_value"]);
        let c = resolve(&t, "$.b.c").unwrap();
        assert_eq!(c.node, ["typed_value", "b", "typed_value", "c"]);
        assert_eq!(c.typed, Some(Utf8View));
    }

    #[test]
    fn resolve_path_does_not_fire_where_the_leaves_cannot_answer() {
        let t = shredded(&object(vec![
            ("a", Int64),
            ("b", object(vec![("c", Utf8)])),
            ("l", List(Arc::new(Field::new("element", Int64, true)))),
        ]));
        // `$` (a Variant null is not a missing field), an array step, a path
        // that is not shredded, a path ending at an object or a list.
        for path in ["$", "$.l[0]", "$.a[0]", "$.x", "$.b.x", "$.b", "$.l"] {
            assert_eq!(resolve(&t, path), None, "{path}");
        }
        // An unshredded column, and a column that is not a variant.
        let unshredded = crate::array::variant_data_type();
        assert_eq!(resolve(&unshredded, "$.a"), None);
        assert_eq!(resolve(&Int64, "$.a"), None);
    }

    #[test]
    fn exact_widening_only_for_conversions_that_cannot_fail_or_reorder() {
        for (from, to) in [
            (Int8, Int64),
            (Int32, Int64),
            (Float32, Float64),
            (Utf8View, Utf8),
            (BinaryView, Binary),
            (Decimal128(9, 2), Decimal128(18, 2)),
            (Int64, Int64),
        ] {
            assert!(exact_widening(&from, &to), "{from} -> {to}");
        }
        for (from, to) in [
            (Int64, Int32),
            (Int64, Float64),
            (Float64, Float32),
            (Utf8, Int64),
            (Decimal128(9, 2), Decimal128(18, 3)),
            (Decimal128(18, 2), Decimal128(9, 2)),
            (Int64, Utf8),
        ] {
            assert!(!exact_widening(&from, &to), "{from} -> {to}");
        }
    }
}
