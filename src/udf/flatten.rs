//! `variant_flatten`: Snowflake's `FLATTEN` over VARIANT values, with its
//! columns `(seq, key, path, index, value, this)` and its arguments `input =>`,
//! `path =>`, `outer =>`, `recursive =>` and `mode =>`.
//!
//! Three forms, as for `variant_explode`:
//! - **Lateral**, over the rows of a table, the way Snowflake users write it:
//!
//! ```sql
//! SELECT t.id, f.key, f.value
//! FROM t, LATERAL variant_flatten(input => t.v, path => 'items', recursive => true) f;
//! ```
//! - **Table function** on a constant: `SELECT * FROM variant_flatten(input => parse_json('[1, 2]'))`.
//! - **Scalar function** returning a list of `struct<key, path, index, value, this>`,
//!   to expand with `unnest` (no `seq`: it numbers the input rows of the other
//!   forms). Named arguments work there too, but DataFusion requires every
//!   argument before the last one given.
//!
//! What each argument does (checked against Snowflake's documentation examples
//! in `variant_flatten.slt`):
//! - `path` (default `''`, the value itself): the element to flatten, written
//!   as Snowflake writes it (`b`, `a.b[0]`, `['key with.dot']`) or as a
//!   `variant_get` path (`$.a.b[0]`); no wildcards. It is checked when the query
//!   is planned.
//! - `outer` (default `false`): a row whose element is missing, SQL NULL, not a
//!   container of the kind `mode` flattens, or empty gives one row with NULL
//!   `key`, `index` and `value` instead of none. Its `this` is the element
//!   (NULL when there is none), its `path` the element's path.
//! - `recursive` (default `false`): also flattens every container found, in
//!   document order: each element's row comes before the rows of what it holds.
//! - `mode` (`'object'`, `'array'` or `'both'`, the default): which containers
//!   are flattened; the others are rows of their own but not looked into.
//!
//! Columns: `seq` numbers the input row (unique per row, not ordered); `key`
//! is the field name (NULL for array elements); `path` the element's path from
//! the input (`b[0]`, `c.d`); `index` the array index (NULL for fields); `value`
//! the element; `this` the container it is in. `value` and `this` share the
//! row's bytes: a container's `this` is stored once per input row, however
//! many rows point at it.

use std::sync::{Arc, LazyLock};

use arrow::array::builder::make_view;
use arrow::array::{
    Array, ArrayRef, BinaryViewArray, Int32Builder, Int64Array, ListArray, RecordBatch,
    StringBuilder, StructArray,
};
use arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{
    Result, ScalarValue, exec_datafusion_err, exec_err, plan_datafusion_err, plan_err,
};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
    Volatility,
};

use super::common::{
    Arrays, check_variant_arg, constant_argument, guard, struct_list_element, variant_input,
};
use crate::array::{variant_field, variant_fields};
use crate::variant::encoding::{ARRAY, EMPTY_METADATA, OBJECT, VARIANT_NULL, basic_type};
use crate::variant::path::{PathSegment, parse_get_path};
use crate::variant::raw::{children, get_path};
use crate::variant::validate::{check_metadata, check_value_with};

/// The SQL name.
pub const VARIANT_FLATTEN: &str = "variant_flatten";

/// The parameter names, in position order.
pub const PARAMETERS: [&str; 5] = ["input", "path", "outer", "recursive", "mode"];

/// Which containers `variant_flatten` looks into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlattenMode {
    /// Objects only.
    Object,
    /// Arrays only.
    Array,
    /// Both (the default).
    Both,
}

impl FlattenMode {
    fn flattens(self, basic: u8) -> bool {
        match self {
            FlattenMode::Object => basic == OBJECT,
            FlattenMode::Array => basic == ARRAY,
            FlattenMode::Both => basic == OBJECT || basic == ARRAY,
        }
    }
}

/// The arguments of a call after `input`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlattenOptions {
    /// The element to flatten.
    pub path: Vec<PathSegment>,
    /// One row of NULLs where nothing is flattened.
    pub outer: bool,
    /// Flatten nested containers too.
    pub recursive: bool,
    /// Which containers to flatten.
    pub mode: FlattenMode,
}

impl Default for FlattenOptions {
    fn default() -> Self {
        Self {
            path: Vec::new(),
            outer: false,
            recursive: false,
            mode: FlattenMode::Both,
        }
    }
}

/// Parses the `path` argument: Snowflake's form (`a.b[0]`, `['k']`, `''` for
/// the value itself) or a `variant_get` path starting with `$`: `b[0]` and
/// `$.b[0]` are the same path, `''` is no step, and `a[*]` is refused.
///
/// # Errors
/// A message naming the path when it does not parse or holds a wildcard.
pub fn parse_flatten_path(text: &str) -> std::result::Result<Vec<PathSegment>, String> {
    let full = if text.starts_with('$') {
        text.to_string()
    } else if text.is_empty() || text.starts_with('[') {
        format!("${text}")
    } else {
        format!("$.{text}")
    };
    match parse_get_path(&full) {
        Ok(p) => match p.exact() {
            Some(segments) => Ok(segments.to_vec()),
            None => Err(format!(
                "the path '{text}' holds a wildcard; flatten one element (use recursive => true for nested ones)"
            )),
        },
        Err(e) => Err(format!("{e}")),
    }
}

/// Appends one step to a Snowflake-style path (`a`, `a.b`, `a[0]`, `a['x.y']`).
fn push_step(path: &mut String, step: StepRef<'_>) {
    match step {
        StepRef::Key(k) if identifier(k) => {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
        }
        StepRef::Key(k) if !k.contains('\'') => {
            path.push_str("['");
            path.push_str(k);
            path.push_str("']");
        }
        StepRef::Key(k) => {
            path.push_str("[\"");
            path.push_str(k);
            path.push_str("\"]");
        }
        StepRef::Index(i) => {
            path.push('[');
            path.push_str(&i.to_string());
            path.push(']');
        }
    }
}

/// Whether a key prints bare in a flatten path: letters, digits and `_`, not
/// starting with a digit (others print as `['key']`, which reads back).
fn identifier(k: &str) -> bool {
    let mut chars = k.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[derive(Clone, Copy)]
enum StepRef<'a> {
    Key(&'a str),
    Index(usize),
}

/// The Snowflake-style text of a parsed path (`''` for the value itself).
pub fn flatten_path_text(path: &[PathSegment]) -> String {
    let mut s = String::new();
    for seg in path {
        push_step(
            &mut s,
            match seg {
                PathSegment::Key(k) => StepRef::Key(k),
                PathSegment::Index(i) => StepRef::Index(*i),
            },
        );
    }
    s
}

/// The fields of one flattened element, without `seq`.
pub fn flatten_fields() -> Fields {
    Fields::from(vec![
        Arc::new(Field::new("key", DataType::Utf8, true)),
        Arc::new(Field::new("path", DataType::Utf8, true)),
        Arc::new(Field::new("index", DataType::Int32, true)),
        variant_field("value", true),
        variant_field("this", true),
    ])
}

fn element_field() -> FieldRef {
    struct_list_element(flatten_fields())
}

/// `List<Struct<key, path, index, value, this>>`.
pub fn flatten_type() -> DataType {
    DataType::List(element_field())
}

/// Appends `bytes` to a batch buffer; their offset in it.
fn store(data: &mut Vec<u8>, bytes: &[u8]) -> Result<u32> {
    let start = data.len();
    data.extend_from_slice(bytes);
    u32::try_from(data.len())
        .map(|_| start as u32)
        .map_err(|_| {
            exec_datafusion_err!(
                "{VARIANT_FLATTEN}: the input rows of one batch hold more than 4 GiB"
            )
        })
}

/// One input row, stored once per batch: its bytes and where they were put.
#[derive(Clone, Copy)]
struct Row<'a> {
    metadata: &'a [u8],
    metadata_at: u32,
    value: &'a [u8],
    value_at: u32,
}

impl Row<'_> {
    /// A view of `part`, a slice of the row's value bytes (found by walking
    /// them), pointing into the stored row.
    fn view(&self, part: &[u8]) -> u128 {
        let within = part.as_ptr() as usize - self.value.as_ptr() as usize;
        make_view(part, 0, self.value_at + within as u32)
    }

    fn metadata_view(&self) -> u128 {
        make_view(self.metadata, 0, self.metadata_at)
    }
}

/// The output being built for one batch. `value` and `this` are views into one
/// buffer holding each input row's value bytes once; `metadata` into another.
struct Flattened {
    key: StringBuilder,
    path: StringBuilder,
    index: Int32Builder,
    metadata_data: Vec<u8>,
    value_data: Vec<u8>,
    metadata: Vec<u128>,
    value: Vec<u128>,
    this: Vec<u128>,
    value_valid: Vec<bool>,
    this_valid: Vec<bool>,
}

impl Flattened {
    fn new(capacity: usize) -> Self {
        Self {
            key: StringBuilder::with_capacity(capacity, capacity * 8),
            path: StringBuilder::with_capacity(capacity, capacity * 8),
            index: Int32Builder::with_capacity(capacity),
            metadata_data: Vec::new(),
            value_data: Vec::new(),
            metadata: Vec::with_capacity(capacity),
            value: Vec::with_capacity(capacity),
            this: Vec::with_capacity(capacity),
            value_valid: Vec::with_capacity(capacity),
            this_valid: Vec::with_capacity(capacity),
        }
    }

    fn len(&self) -> usize {
        self.value_valid.len()
    }

    fn store(&mut self, metadata: &'_ [u8], value: &'_ [u8]) -> Result<(u32, u32)> {
        Ok((
            store(&mut self.metadata_data, metadata)?,
            store(&mut self.value_data, value)?,
        ))
    }

    /// A row for one element of `this`.
    fn element(
        &mut self,
        row: &Row<'_>,
        key: Option<&str>,
        path: &str,
        index: Option<usize>,
        value: &[u8],
        this: &[u8],
    ) -> Result<()> {
        self.key.append_option(key);
        self.path.append_value(path);
        match index {
            Some(i) => self.index.append_value(i32::try_from(i).map_err(|_| {
                exec_datafusion_err!("{VARIANT_FLATTEN}: an array index past 2^31")
            })?),
            None => self.index.append_null(),
        }
        self.metadata.push(row.metadata_view());
        self.value.push(row.view(value));
        self.this.push(row.view(this));
        self.value_valid.push(true);
        self.this_valid.push(true);
        Ok(())
    }

    /// The one row of `outer => true` where nothing was flattened: `this` is
    /// the element at the path, if there is one.
    fn nothing(&mut self, row: Option<&Row<'_>>, path: &str, this: Option<&[u8]>) {
        self.key.append_null();
        self.path.append_value(path);
        self.index.append_null();
        self.metadata.push(match row {
            Some(r) => r.metadata_view(),
            None => make_view(EMPTY_METADATA, 0, 0),
        });
        self.value.push(make_view(VARIANT_NULL, 0, 0));
        self.value_valid.push(false);
        match (row, this) {
            (Some(r), Some(t)) => {
                self.this.push(r.view(t));
                self.this_valid.push(true);
            }
            _ => {
                self.this.push(make_view(VARIANT_NULL, 0, 0));
                self.this_valid.push(false);
            }
        }
    }

    fn finish(mut self) -> Result<StructArray> {
        let views = |views: Vec<u128>, data: &Buffer| {
            BinaryViewArray::try_new(ScalarBuffer::from(views), vec![data.clone()], None)
        };
        let metadata_data = Buffer::from_vec(std::mem::take(&mut self.metadata_data));
        let value_data = Buffer::from_vec(std::mem::take(&mut self.value_data));
        let metadata: ArrayRef =
            Arc::new(views(std::mem::take(&mut self.metadata), &metadata_data)?);
        let variant = |v: Vec<u128>, valid: Vec<bool>| -> Result<ArrayRef> {
            Ok(Arc::new(StructArray::try_new(
                variant_fields(),
                vec![Arc::clone(&metadata), Arc::new(views(v, &value_data)?)],
                Some(NullBuffer::from(valid)),
            )?))
        };
        let value = variant(
            std::mem::take(&mut self.value),
            std::mem::take(&mut self.value_valid),
        )?;
        let this = variant(
            std::mem::take(&mut self.this),
            std::mem::take(&mut self.this_valid),
        )?;
        Ok(StructArray::try_new(
            flatten_fields(),
            vec![
                Arc::new(self.key.finish()),
                Arc::new(self.path.finish()),
                Arc::new(self.index.finish()),
                value,
                this,
            ],
            None,
        )?)
    }
}

/// A container being flattened: its children and the next one to emit.
struct Frame<'d, 'v> {
    container: &'v [u8],
    path: String,
    kids: Vec<crate::variant::raw::Child<'d, 'v>>,
    next: usize,
}

/// The frame of `container` when `mode` flattens it.
fn open<'d, 'v>(
    dict: &[&'d str],
    container: &'v [u8],
    path: String,
    mode: FlattenMode,
) -> Result<Option<Frame<'d, 'v>>> {
    let bad = |e: &dyn std::fmt::Display| exec_datafusion_err!("{VARIANT_FLATTEN}: {e}");
    let header = *container.first().ok_or_else(|| bad(&"an empty value"))?;
    if !mode.flattens(basic_type(header)) {
        return Ok(None);
    }
    Ok(children(dict, container)
        .map_err(|e| bad(&e))?
        .map(|kids| Frame {
            container,
            path,
            kids,
            next: 0,
        }))
}

/// Flattens every row of a Variant column into a list of
/// `(key, path, index, value, this)`, as the module docs describe.
///
/// # Errors
/// When a row's bytes are malformed, or a batch's output passes Arrow's limits.
pub fn flatten_column(column: &ArrayRef, options: &FlattenOptions) -> Result<ListArray> {
    guard(VARIANT_FLATTEN, || {
        let input = variant_input(VARIANT_FLATTEN, column)?;
        let rows = column.len();
        let base_path = flatten_path_text(&options.path);
        let mut out = Flattened::new(rows);
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0i32);
        for row in 0..rows {
            let before = out.len();
            let mut stored = None;
            let mut target = None;
            if let Some((m, v)) = input.as_ref().and_then(|i| i.get(row)) {
                let bad =
                    |e: &dyn std::fmt::Display| exec_datafusion_err!("{VARIANT_FLATTEN}: {e}");
                let dict = check_metadata(m).map_err(|e| bad(&e))?;
                let len = check_value_with(v, &dict).map_err(|e| bad(&e))?;
                let v = &v[..len];
                let (metadata_at, value_at) = out.store(m, v)?;
                let r = Row {
                    metadata: m,
                    metadata_at,
                    value: v,
                    value_at,
                };
                target = get_path(&dict, v, &options.path).map_err(|e| bad(&e))?;
                stored = Some(r);
                // Pre-order without recursion: each element's row, then (when
                // recursive) the rows of what it holds, then its next sibling.
                let mut stack: Vec<Frame<'_, '_>> = Vec::new();
                if let Some(t) = target
                    && let Some(frame) = open(&dict, t, base_path.clone(), options.mode)?
                {
                    stack.push(frame);
                }
                while let Some(frame) = stack.last_mut() {
                    let Some(&(name, child)) = frame.kids.get(frame.next) else {
                        stack.pop();
                        continue;
                    };
                    let i = frame.next;
                    frame.next += 1;
                    let mut child_path = frame.path.clone();
                    push_step(
                        &mut child_path,
                        match name {
                            Some(k) => StepRef::Key(k),
                            None => StepRef::Index(i),
                        },
                    );
                    let container = frame.container;
                    out.element(
                        &r,
                        name,
                        &child_path,
                        name.is_none().then_some(i),
                        child,
                        container,
                    )?;
                    if options.recursive
                        && let Some(inner) = open(&dict, child, child_path, options.mode)?
                    {
                        stack.push(inner);
                    }
                }
            }
            if out.len() == before && options.outer {
                out.nothing(stored.as_ref(), &base_path, target);
            }
            offsets.push(i32::try_from(out.len()).map_err(|_| {
                exec_datafusion_err!(
                    "{VARIANT_FLATTEN}: more than 2^31 flattened rows in one batch"
                )
            })?);
        }
        let values = out.finish()?;
        Ok(ListArray::try_new(
            element_field(),
            OffsetBuffer::new(offsets.into()),
            Arc::new(values),
            None::<NullBuffer>,
        )?)
    })
}

/// The options of a call from its literal arguments after `input` (`None`
/// where an argument is not a literal).
///
/// # Errors
/// A plan error naming the argument that is not a literal of its type, or a
/// path or mode that does not parse.
pub fn flatten_options(args: &[Option<&ScalarValue>]) -> Result<FlattenOptions> {
    let mut options = FlattenOptions::default();
    for (i, arg) in args.iter().enumerate() {
        let name = PARAMETERS.get(i + 1).copied().unwrap_or("?");
        let Some(value) = arg else {
            return plan_err!("{VARIANT_FLATTEN}: argument '{name}' must be a literal");
        };
        let null = || plan_datafusion_err!("{VARIANT_FLATTEN}: argument '{name}' must not be NULL");
        match name {
            "path" | "mode" => {
                let Some(text) = value.try_as_str() else {
                    return plan_err!(
                        "{VARIANT_FLATTEN}: argument '{name}' must be a string, found {}",
                        value.data_type()
                    );
                };
                let text = text.ok_or_else(null)?;
                if name == "path" {
                    options.path = parse_flatten_path(text)
                        .map_err(|e| plan_datafusion_err!("{VARIANT_FLATTEN}: {e}"))?;
                } else {
                    options.mode = match text.to_ascii_lowercase().as_str() {
                        "object" => FlattenMode::Object,
                        "array" => FlattenMode::Array,
                        "both" => FlattenMode::Both,
                        _ => {
                            return plan_err!(
                                "{VARIANT_FLATTEN}: mode must be 'object', 'array' or 'both', got '{text}'"
                            );
                        }
                    };
                }
            }
            "outer" | "recursive" => {
                let ScalarValue::Boolean(flag) = value else {
                    return plan_err!(
                        "{VARIANT_FLATTEN}: argument '{name}' must be a BOOLEAN, found {}",
                        value.data_type()
                    );
                };
                let flag = flag.ok_or_else(null)?;
                if name == "outer" {
                    options.outer = flag;
                } else {
                    options.recursive = flag;
                }
            }
            _ => {
                return plan_err!(
                    "{VARIANT_FLATTEN} takes at most {} arguments: {}",
                    PARAMETERS.len(),
                    PARAMETERS.join(", ")
                );
            }
        }
    }
    Ok(options)
}

/// `variant_flatten(input[, path[, outer[, recursive[, mode]]]])` as a scalar
/// function: a list of `struct<key, path, index, value, this>`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantFlattenFunc {
    signature: Signature,
}

impl Default for VariantFlattenFunc {
    fn default() -> Self {
        Self::new()
    }
}

impl VariantFlattenFunc {
    /// The function.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable)
                .with_parameter_names(PARAMETERS.to_vec())
                .expect("five distinct names"),
        }
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Snowflake's FLATTEN over a VARIANT: one row per element of the array or object at path (recursively with recursive => true), with the columns seq, key, path, index, value and this. In FROM over a constant or LATERAL over a table's rows; in SELECT a list of struct<key, path, index, value, this> to expand with unnest.",
        "variant_flatten(input [, path [, outer [, recursive [, mode]]]])",
    )
    .with_sql_example(
        "> SELECT key, path, index, to_json(value) FROM variant_flatten(input => parse_json('{\"a\":1, \"b\":[77,88]}'), recursive => true);\na a NULL 1\nb b NULL [77,88]\nNULL b[0] 0 77\nNULL b[1] 1 88",
    )
    .with_argument("input", "A VARIANT.")
    .with_argument("path", "The element to flatten: '' (the default) for the value itself, 'a.b[0]' or '$.a.b[0]'. A literal.")
    .with_argument("outer", "true: one row of NULLs (key, index, value) where nothing is flattened. Default false.")
    .with_argument("recursive", "true: flatten nested containers too, each after its element's row. Default false.")
    .with_argument("mode", "'object', 'array' or 'both' (the default): which containers are flattened.")
    .build()
});

impl ScalarUDFImpl for VariantFlattenFunc {
    fn name(&self) -> &str {
        VARIANT_FLATTEN
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(arg_types.to_vec())
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(flatten_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let n = args.arg_fields.len();
        if !(1..=PARAMETERS.len()).contains(&n) {
            return plan_err!(
                "{VARIANT_FLATTEN} takes 1 to {} arguments ({}), got {n}",
                PARAMETERS.len(),
                PARAMETERS.join(", ")
            );
        }
        check_variant_arg(VARIANT_FLATTEN, 0, &args.arg_fields[0])?;
        flatten_options(&args.scalar_arguments[1..])?;
        Ok(Arc::new(Field::new(VARIANT_FLATTEN, flatten_type(), false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let mut literals = Vec::with_capacity(args.args.len().saturating_sub(1));
        for arg in &args.args[1..] {
            match arg {
                ColumnarValue::Scalar(sv) => literals.push(Some(sv)),
                ColumnarValue::Array(_) => {
                    return exec_err!("{VARIANT_FLATTEN}: only `input` may be a column");
                }
            }
        }
        let options = flatten_options(&literals)?;
        let arrays = Arrays::new(&args.args[..1], args.number_rows)?;
        let list = flatten_column(&arrays.arrays[0], &options)?;
        arrays.finish(Arc::new(list))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The columns of the table forms: `seq` then [`flatten_fields`].
pub fn flatten_table_fields() -> Fields {
    let mut fields = vec![Arc::new(Field::new("seq", DataType::Int64, false))];
    fields.extend(flatten_fields().iter().cloned());
    Fields::from(fields)
}

/// The table function `variant_flatten(<constant>, ...)` (one input row, so
/// `seq` is 1).
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantFlattenTable;

impl TableFunctionImpl for VariantFlattenTable {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let Some((input, rest)) = exprs.split_first() else {
            return plan_err!("{VARIANT_FLATTEN} needs its input argument");
        };
        if !input.column_refs().is_empty() {
            return plan_err!(
                "{VARIANT_FLATTEN} in FROM takes a constant; for rows of a table write FROM t, LATERAL {VARIANT_FLATTEN}(input => t.v)"
            );
        }
        let evaluate = |e: &datafusion::logical_expr::Expr| constant_argument(args.session(), e);
        let value = evaluate(input)?;
        if !crate::array::is_variant_type(value.data_type()) && value.data_type() != &DataType::Null
        {
            return plan_err!(
                "{VARIANT_FLATTEN} expects a VARIANT, got {}",
                value.data_type()
            );
        }
        let literals = rest
            .iter()
            .map(|e| ScalarValue::try_from_array(&evaluate(e)?, 0))
            .collect::<Result<Vec<_>>>()?;
        let options = flatten_options(&literals.iter().map(Some).collect::<Vec<_>>())?;
        let list = flatten_column(&value, &options)?;
        let rows = list
            .values()
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| exec_datafusion_err!("{VARIANT_FLATTEN}: unexpected list values"))?;
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(vec![1i64; rows.len()]))];
        columns.extend(rows.columns().iter().cloned());
        let schema = Arc::new(Schema::new(flatten_table_fields()));
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snowflake_paths_and_dollar_paths_parse_alike() {
        assert_eq!(
            parse_flatten_path("b[0]").unwrap(),
            vec![PathSegment::Key("b".into()), PathSegment::Index(0)]
        );
        assert_eq!(
            parse_flatten_path("$.b[0]").unwrap(),
            parse_flatten_path("b[0]").unwrap()
        );
        assert!(parse_flatten_path("").unwrap().is_empty());
        assert!(parse_flatten_path("a[*]").is_err());
    }
}
