//! Extractions read from the shredded subtree of their longest shredded key
//! prefix, where the leaves alone cannot answer them ([`super::shredded_get`]).
//!
//! A path with an array step (`$.a[0].b`), a wildcard (`$.a[*].b`, `$.a..b`), a
//! key the file does not shred below a shredded one (`$.a.zz`), or one ending
//! at an object or array (`$.a`), would otherwise read and reassemble the whole
//! value. Per file, the call reads the column chunks under the prefix instead,
//! and runs the rest of the path on that part alone:
//!
//! ```text
//! variant_get(v@0, $.a[*].b)
//!   => subtree_get(CAST(v AS STRUCT<metadata, typed_value: STRUCT<a: (a's group)>>),
//!                  rest: $[*].b)            -- a's value + typed_value: for an
//!                                           -- array, list offsets and element leaves
//! ```
//!
//! The cast to a narrower struct is how DataFusion's Parquet reader is told to
//! read only some leaves of a nested column while keeping the structs'
//! validity (a `get_field` of a group would read the whole column).
//!
//! The group under `a` and the metadata are a shredded Variant column of their
//! own (the spec's layout is the same at every level), reassembled only there
//! and given to the same kernel as the full read ([`crate::array::get::variant_get`]),
//! so the answer is the same row for row. A row whose group has neither `value`
//! nor `typed_value` lacks the prefix: NULL, as the full read gives for a path
//! (with or without wildcards) whose keys before the first wildcard are
//! missing. No statistics prune on these reads: the pruning of element leaves
//! is not built.

use std::any::Any;
use std::fmt::{self, Display, Formatter};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, StructArray, new_null_array};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::common::{Result, exec_datafusion_err};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::{CastExpr, Column};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};

use super::shredded_get::{VARIANT_GET_OR_ERROR, literal_str, run_kernel, run_or_error_kernel};
use crate::array::get::{PathArg, TRY_VARIANT_GET, VARIANT_GET};
use crate::array::is_variant_type;
use crate::config::session_tz;
use crate::variant::cast::CastOptions;
use crate::variant::path::{GetPath, PathSegment, Step, parse_get_path, steps_to_string};
use crate::variant::types::SparkType;

/// Where a path's read starts in a shredded layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    /// The field names from the column to the group of the longest prefix of
    /// object keys that the layout shreds (empty: the column itself).
    pub node: Vec<String>,
    /// The steps after that prefix.
    pub rest: Vec<Step>,
    /// The next step is a key the group does not shred: it can only be in the
    /// group's residual `value`, which is all that is read (no reassembly).
    pub residual_only: bool,
}

impl Prefix {
    /// The field names of the leaves' common ancestor that is read: the group,
    /// or its `value` alone.
    pub fn read_path(&self) -> Vec<String> {
        let mut p = self.node.clone();
        if self.residual_only {
            p.push("value".to_string());
        }
        p
    }
}

/// The longest prefix of object keys of `steps` that the layout shreds as
/// groups, and whether the step after it can be read from the residual alone;
/// `None` when neither gains anything over reading the whole value.
pub fn resolve_prefix(column_type: &DataType, steps: &[Step]) -> Option<Prefix> {
    let DataType::Struct(top) = column_type else {
        return None;
    };
    if !is_variant_type(column_type) {
        return None;
    }
    let mut fields: &Fields = top;
    let mut node = Vec::new();
    let mut taken = 0;
    for step in steps {
        let Step::Key(key) = step else { break };
        // `get_field` cannot name an empty key: the read stops above it (and
        // reassembles the group there when the group shreds it).
        if key.is_empty() {
            break;
        }
        let Some((_, typed)) = fields.find("typed_value") else {
            break;
        };
        let DataType::Struct(object) = typed.data_type() else {
            break;
        };
        let Some((_, child)) = object.find(key) else {
            break;
        };
        let DataType::Struct(child_fields) = child.data_type() else {
            break;
        };
        node.push("typed_value".to_string());
        node.push(key.clone());
        fields = child_fields;
        taken += 1;
    }
    // A key the group does not shred lives in its residual `value` if anywhere
    // (a shredded object keeps its other fields there; a value of another type
    // than a shredded primitive or array is there whole).
    let residual_only = match steps.get(taken) {
        Some(Step::Key(key)) => {
            fields.find("value").is_some()
                && match fields.find("typed_value") {
                    Some((_, t)) => match t.data_type() {
                        DataType::Struct(object) => object.find(key).is_none(),
                        _ => true,
                    },
                    None => true,
                }
        }
        _ => false,
    };
    // At the top with nothing shredded on the way, only the residual gains.
    if taken == 0 && !(residual_only && top.find("typed_value").is_some()) {
        return None;
    }
    Some(Prefix {
        node,
        rest: steps[taken..].to_vec(),
        residual_only,
    })
}

/// The per-file rewrite of a `variant_get` / `try_variant_get` call on a column
/// with a literal path (and type) into a [`SubtreeGet`], or `None` when the file
/// shreds none of the path's keys.
pub fn rewrite_subtree(expr: &dyn PhysicalExpr, physical: &Schema) -> Result<Option<SubtreeGet>> {
    let Some(call) = (expr as &dyn Any).downcast_ref::<ScalarFunctionExpr>() else {
        return Ok(None);
    };
    // `variant_get_or_error` converts as `variant_get` does, keeping errors.
    let (func, deferred) = match call.fun().name() {
        VARIANT_GET => (VARIANT_GET, false),
        TRY_VARIANT_GET => (TRY_VARIANT_GET, false),
        VARIANT_GET_OR_ERROR => (VARIANT_GET, true),
        _ => return Ok(None),
    };
    let args = call.args();
    let literal = |i: usize| literal_str(args, i);
    let Some(column) = args.first().and_then(|a| a.downcast_ref::<Column>()) else {
        return Ok(None);
    };
    let Some(path_text) = literal(1) else {
        return Ok(None);
    };
    let Ok(path) = parse_get_path(&path_text) else {
        return Ok(None);
    };
    let target = match args.len() {
        2 => None,
        3 => match literal(2).map(|t| SparkType::parse(&t)) {
            Some(Ok(SparkType::Variant)) => None,
            Some(Ok(t)) => Some(t),
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let steps = match &path {
        GetPath::Exact(segments) => crate::variant::path::steps_of(segments),
        GetPath::Wildcard(steps) => steps.clone(),
    };
    let Ok(index) = physical.index_of(column.name()) else {
        return Ok(None);
    };
    let Some(prefix) = resolve_prefix(physical.field(index).data_type(), &steps) else {
        return Ok(None);
    };
    let Prefix {
        node,
        rest,
        residual_only,
    } = prefix.clone();
    let wildcard = matches!(path, GetPath::Wildcard(_));
    let rest = if wildcard {
        GetPath::Wildcard(rest)
    } else {
        GetPath::Exact(
            rest.into_iter()
                .filter_map(|s| match s {
                    Step::Key(k) => Some(PathSegment::Key(k)),
                    Step::Index(i) => Some(PathSegment::Index(i)),
                    _ => None,
                })
                .collect(),
        )
    };
    let column_field = physical.field(index);
    let Some(clipped) = clipped_type(column_field.data_type(), &prefix.read_path()) else {
        return Ok(None);
    };
    // A cast of the column to the type without the other fields: the Parquet
    // reader reads only the leaves the cast keeps, and rebuilds the structs'
    // validity on the way (which `get_field` of a group would lose).
    let clipped: Arc<dyn PhysicalExpr> = Arc::new(CastExpr::new_with_target_field(
        Arc::new(Column::new(column.name(), index)),
        Arc::new(Field::new(column.name(), clipped, true)),
        None,
    ));
    let keys: Vec<&str> = node.iter().skip(1).step_by(2).map(String::as_str).collect();
    Ok(Some(SubtreeGet {
        description: format!(
            "{}: {} under ${}{}{}",
            column.name(),
            path_text,
            if keys.is_empty() { "" } else { "." },
            keys.join("."),
            if residual_only { " (residual)" } else { "" }
        ),
        func,
        rest,
        target,
        options: CastOptions {
            safe: func == TRY_VARIANT_GET,
            tz: session_tz(call.config_options())?,
        },
        return_field: call.return_field(&Schema::empty())?,
        deferred,
        clipped,
        node,
        residual_only,
    }))
}

/// `column_type` with only `metadata` and the fields on the way to `node` (all
/// of its own fields kept); `None` if a name is missing.
fn clipped_type(column_type: &DataType, node: &[String]) -> Option<DataType> {
    fn clip(fields: &Fields, path: &[String]) -> Option<Fields> {
        let Some((name, rest)) = path.split_first() else {
            return Some(fields.clone());
        };
        let (_, field) = fields.find(name)?;
        if rest.is_empty() {
            // The group (or a group's `value` leaf) itself, whole.
            return Some(Fields::from(vec![Arc::clone(field)]));
        }
        let DataType::Struct(children) = field.data_type() else {
            return None;
        };
        let kept = clip(children, rest)?;
        Some(Fields::from(vec![Arc::new(
            field
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(kept)),
        )]))
    }
    let DataType::Struct(top) = column_type else {
        return None;
    };
    let (_, metadata) = top.find("metadata")?;
    let mut kept = vec![Arc::clone(metadata)];
    kept.extend(clip(top, node)?.iter().cloned());
    Some(DataType::Struct(Fields::from(kept)))
}

/// An extraction answered from the shredded subtree of its key prefix (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct SubtreeGet {
    description: String,
    func: &'static str,
    rest: GetPath,
    target: Option<SparkType>,
    options: CastOptions,
    return_field: FieldRef,
    /// `variant_get_or_error`: `{value, error}` out, errors kept per row.
    deferred: bool,
    /// The column cast to [`clipped_type`].
    clipped: Arc<dyn PhysicalExpr>,
    /// The field names from the column to the group.
    node: Vec<String>,
    /// Only the group's residual `value` is read ([`Prefix::residual_only`]).
    residual_only: bool,
}

impl PartialEq for SubtreeGet {
    fn eq(&self, other: &Self) -> bool {
        self.description == other.description
            && self.func == other.func
            && self.target == other.target
            && self.deferred == other.deferred
            && self.clipped.as_ref() == other.clipped.as_ref()
            && self.node == other.node
    }
}

impl Eq for SubtreeGet {}

impl Hash for SubtreeGet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.description.hash(state);
        self.func.hash(state);
        self.clipped.hash(state);
        self.node.hash(state);
    }
}

impl Display for SubtreeGet {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let rest = match &self.rest {
            GetPath::Exact(p) => crate::variant::path::path_to_string(p),
            GetPath::Wildcard(s) => steps_to_string(s),
        };
        write!(f, "subtree_get({}, rest {rest})", self.description)
    }
}

impl SubtreeGet {
    /// The group and the metadata as a Variant column of their own (see the
    /// module docs for the rows that lack the group).
    fn subtree_column(&self, clipped: &StructArray) -> Result<ArrayRef> {
        let rows = clipped.len();
        let missing = || exec_datafusion_err!("{}: the clipped column lost a field", self.func);
        let metadata = Arc::clone(clipped.column_by_name("metadata").ok_or_else(missing)?);
        // The group, valid where the row and every object on the way are.
        let mut nulls = clipped.nulls().cloned();
        let mut node = clipped;
        for name in &self.node {
            node = node
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StructArray>())
                .ok_or_else(missing)?;
            nulls = NullBuffer::union(nulls.as_ref(), node.nulls());
        }
        let value = node.column_by_name("value");
        let typed = if self.residual_only {
            None
        } else {
            node.column_by_name("typed_value")
        };
        // A row has the group where its `value` or `typed_value` is present
        // (and the row and every object on the way are): elsewhere it lacks
        // the prefix (or is NULL), which is NULL for any path, wildcards
        // included. (Parquet leaves a NULL row's required `metadata`
        // undefined, so only the group tells.) Whole buffers, no row loop.
        let presence = |a: Option<&ArrayRef>| {
            a.map_or_else(
                || NullBuffer::new_null(rows),
                |a| {
                    a.logical_nulls()
                        .unwrap_or_else(|| NullBuffer::new_valid(rows))
                },
            )
        };
        let present = NullBuffer::new(presence(value).inner() | presence(typed).inner());
        let valid = NullBuffer::union(nulls.as_ref(), Some(&present)).unwrap_or(present);
        let value = value.map_or_else(|| new_null_array(&DataType::BinaryView, rows), Arc::clone);
        let mut fields = vec![
            Field::new("metadata", metadata.data_type().clone(), true),
            Field::new("value", value.data_type().clone(), true),
        ];
        let mut columns = vec![metadata, value];
        if let Some(t) = typed {
            fields.push(Field::new("typed_value", t.data_type().clone(), true));
            columns.push(Arc::clone(t));
        }
        Ok(Arc::new(StructArray::try_new(
            Fields::from(fields),
            columns,
            Some(valid),
        )?))
    }
}

impl PhysicalExpr for SubtreeGet {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(&self.return_field))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let rows = batch.num_rows();
        let clipped = self.clipped.evaluate(batch)?.into_array(rows)?;
        let Some(clipped) = clipped.as_any().downcast_ref::<StructArray>() else {
            return Err(exec_datafusion_err!(
                "{}: the clipped column is a {}, not a struct",
                self.func,
                clipped.data_type()
            ));
        };
        let column = self.subtree_column(clipped)?;
        let result = match (&self.target, self.deferred) {
            (Some(target), true) => {
                run_or_error_kernel(&column, PathArg::of(&self.rest), target, self.options.tz)?
            }
            _ => run_kernel(
                self.func,
                &column,
                PathArg::of(&self.rest),
                self.target.as_ref(),
                self.options,
            )?,
        };
        Ok(ColumnarValue::Array(result))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.clipped]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let [clipped]: [Arc<dyn PhysicalExpr>; 1] = children
            .try_into()
            .map_err(|_| exec_datafusion_err!("subtree_get takes one child"))?;
        let mut new = self.as_ref().clone();
        new.clipped = clipped;
        Ok(Arc::new(new))
    }

    fn fmt_sql(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}
