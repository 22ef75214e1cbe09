//! The functions that change variants (Spark 4.3): `variant_insert`,
//! `variant_set`, `variant_array_append` (each with a `try_` form),
//! `variant_delete` and `variant_strip_nulls`, and `is_valid_variant`. The
//! byte-level work is [`crate::variant::mutate`]; this file holds argument
//! checks (at plan time), NULL handling and the `try_` rule.

use std::sync::LazyLock;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
    Volatility,
};

use super::common::{
    Arrays, check_string_arg, check_variant_arg, guard, unexpected_input_type, variant_input,
};
use crate::array::from_arrow::{ToVariantMode, array_to_variant, check_convertible};
use crate::array::{
    VariantColumnBuilder, VariantInput, is_variant_field, variant_data_type, variant_field,
};
use crate::variant::mutate::{MutateError, Mutation, mutate, strip_nulls};
use crate::variant::path::{PathSegment, parse_path};
use crate::variant::validate::is_valid;

/// Spark's message for a path that is not a target of `func`.
fn invalid_path(func: &str, text: &str) -> String {
    format!(
        "[INVALID_VARIANT_PATH] The path {} is not a valid `{func}` target. A valid path should start with `$` and is followed by segments like `[123]`, `.name`, `['name']`, or `[\"name\"]`.",
        crate::variant::shorten_quoted(text, '\'')
    )
}

/// Parses the path `text` as a target of `func`: `$` alone only when
/// `root_allowed` (`variant_array_append`).
fn parse_target(func: &str, text: &str, root_allowed: bool) -> Result<Vec<PathSegment>, String> {
    match parse_path(text) {
        Ok(p) if p.is_empty() && !root_allowed => Err(invalid_path(func, text)),
        Ok(p) => Ok(p),
        Err(_) => Err(invalid_path(func, text)),
    }
}

/// Spark's `WRONG_NUM_ARGS` message.
fn wrong_num_args(func: &str, expected: &str, n: usize) -> String {
    format!(
        "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `{func}` requires {expected} parameters but the actual number is {n}."
    )
}

/// Plan-time check of a path argument: a string, and a valid target when it
/// is a literal.
fn check_path_arg(
    func: &str,
    pos: usize,
    field: &Field,
    literal: Option<&ScalarValue>,
    root_allowed: bool,
) -> Result<()> {
    check_string_arg(func, pos, field)?;
    if let Some(Some(text)) = literal.and_then(ScalarValue::try_as_str)
        && let Err(e) = parse_target(func, text, root_allowed)
    {
        return plan_err!("{e}");
    }
    Ok(())
}

/// Plan-time check of the value argument: a VARIANT, NULL, or a type that
/// `CAST(x AS VARIANT)` accepts (Spark refuses structs and maps there).
fn check_value_arg(func: &str, field: &Field) -> Result<()> {
    if is_variant_field(field) || field.data_type() == &DataType::Null {
        return Ok(());
    }
    check_convertible(field.data_type(), ToVariantMode::Cast).or_else(|e| {
        plan_err!(
            "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] {func}: cannot cast \"{}\" to \"VARIANT\": {e}",
            field.data_type()
        )
    })
}

/// The arguments that must be constant BOOLEANs, as `(function, position,
/// name)`: Spark folds them when the query is planned. Their type is checked
/// here ([`check_bool_arg`]); that they are constant, by the plan checks
/// (`crate::sql::checks`), since a constant expression such as
/// `CAST(NULL AS BOOLEAN)` is not a literal until DataFusion folds it.
pub(crate) const CONSTANT_BOOLEAN_ARGUMENTS: &[(&str, usize, &str)] = &[
    ("variant_set", 3, "create_if_missing"),
    ("try_variant_set", 3, "create_if_missing"),
    ("variant_strip_nulls", 1, "include_arrays"),
];

/// Plan-time check of a constant boolean argument: a BOOLEAN (a typed NULL
/// included) or an untyped NULL; Spark refuses a string `'true'`.
fn check_bool_arg(func: &str, pos: usize, field: &Field) -> Result<()> {
    match field.data_type() {
        DataType::Boolean | DataType::Null => Ok(()),
        other => Err(unexpected_input_type(func, pos, "BOOLEAN", other)),
    }
}

/// The value of a constant boolean argument (`create_if_missing`,
/// `include_arrays`) as the function runs: `None` for NULL.
fn constant_bool(func: &str, name: &str, arg: &ColumnarValue) -> Result<Option<bool>> {
    match arg {
        ColumnarValue::Scalar(ScalarValue::Boolean(b)) => Ok(*b),
        ColumnarValue::Scalar(ScalarValue::Null) => Ok(None),
        _ => plan_err!(
            "[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] {func}: the input `{name}` should be a foldable \"BOOLEAN\" expression"
        ),
    }
}

/// The string rows of a path argument (any string type), cast once.
fn strings(array: &ArrayRef) -> Result<ArrayRef> {
    Ok(arrow::compute::cast(array, &DataType::Utf8)?)
}

/// The value argument as a Variant column: itself, or converted as
/// `CAST(x AS VARIANT)` converts it. `None` when it is untyped NULL.
fn value_input(func: &str, field: &Field, array: &ArrayRef) -> Result<Option<VariantInput>> {
    if array.data_type() == &DataType::Null {
        return Ok(None);
    }
    let variant = if is_variant_field(field) {
        std::sync::Arc::clone(array)
    } else {
        array_to_variant(array.as_ref(), ToVariantMode::Cast)
            .map_err(|e| exec_datafusion_err!("{func}: {e}"))?
    };
    variant_input(func, &variant)
}

/// Which mutation a [`VariantMutateFunc`] makes.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
pub enum MutateKind {
    /// `variant_insert`.
    Insert,
    /// `variant_set`.
    Set,
    /// `variant_array_append`.
    ArrayAppend,
}

/// `variant_insert(v, path, val)`, `variant_set(v, path, val[,
/// create_if_missing])` and `variant_array_append(v, path, val)`, and their
/// `try_` forms, which return NULL where the others fail on a path that does
/// not fit the value (or, for insert, a key that exists).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantMutateFunc {
    signature: Signature,
    kind: MutateKind,
    safe: bool,
}

impl VariantMutateFunc {
    /// The function of `kind`; `safe` makes the `try_` form.
    pub fn new(kind: MutateKind, safe: bool) -> Self {
        let signature = Signature::user_defined(Volatility::Immutable);
        // Spark accepts named arguments for variant_set only.
        let signature = match kind {
            MutateKind::Set => signature
                .with_parameter_names(vec!["v", "path", "val", "create_if_missing"])
                .expect("four distinct names"),
            _ => signature,
        };
        Self {
            signature,
            kind,
            safe,
        }
    }
}

macro_rules! mutate_doc {
    ($name:ident, $desc:expr, $syntax:expr, $example:expr) => {
        static $name: LazyLock<Documentation> = LazyLock::new(|| {
            Documentation::builder(super::DOC_SECTION, $desc, $syntax)
                .with_sql_example($example)
                .with_argument("v", "A VARIANT.")
                .with_argument(
                    "path",
                    "A STRING path such as '$.a[0].b' ($ alone is not a target).",
                )
                .with_argument("val", "A VARIANT, or any value CAST(x AS VARIANT) accepts.")
                .build()
        });
    };
}

mutate_doc!(
    INSERT_DOC,
    "Inserts a value at a path: a new object field (an error if it exists), or an array element at an index, shifting later ones right (past the end, nulls pad the array). Missing keys and indexes on the way are created. NULL if any argument is NULL.",
    "variant_insert(v, path, val)",
    "> SELECT to_json(variant_insert(parse_json('[\"a\",\"b\"]'), '$[1]', 'z'));\n[\"a\",\"z\",\"b\"]"
);
mutate_doc!(
    TRY_INSERT_DOC,
    "Like variant_insert, but NULL where the key exists or the path does not fit the value.",
    "try_variant_insert(v, path, val)",
    "> SELECT to_json(try_variant_insert(parse_json('{\"a\": 1}'), '$.a', 2));\nNULL"
);
mutate_doc!(
    SET_DOC,
    "Sets a value at a path: replaces an existing field or element, and creates missing ones (padding arrays with nulls) unless create_if_missing is false, which leaves the variant unchanged. NULL if any argument is NULL.",
    "variant_set(v, path, val[, create_if_missing])",
    "> SELECT to_json(variant_set(parse_json('{\"a\": {\"b\": 1}}'), '$.a.c.d', 2));\n{\"a\":{\"b\":1,\"c\":{\"d\":2}}}"
);
mutate_doc!(
    TRY_SET_DOC,
    "Like variant_set, but NULL where the path does not fit the value.",
    "try_variant_set(v, path, val[, create_if_missing])",
    "> SELECT to_json(try_variant_set(parse_json('{\"a\": 1}'), '$.a.b', 2));\nNULL"
);
mutate_doc!(
    APPEND_DOC,
    "Appends a value to the array at a path ($ is the whole variant). A missing path leaves the variant unchanged; a target that is not an array is an error. NULL if any argument is NULL.",
    "variant_array_append(v, path, val)",
    "> SELECT to_json(variant_array_append(parse_json('{\"a\": [1, 2]}'), '$.a', 3));\n{\"a\":[1,2,3]}"
);
mutate_doc!(
    TRY_APPEND_DOC,
    "Like variant_array_append, but NULL where the path does not fit the value or the target is not an array.",
    "try_variant_array_append(v, path, val)",
    "> SELECT to_json(try_variant_array_append(parse_json('{\"a\": 1}'), '$.a', 2));\nNULL"
);

impl ScalarUDFImpl for VariantMutateFunc {
    fn name(&self) -> &str {
        match (self.kind, self.safe) {
            (MutateKind::Insert, false) => "variant_insert",
            (MutateKind::Insert, true) => "try_variant_insert",
            (MutateKind::Set, false) => "variant_set",
            (MutateKind::Set, true) => "try_variant_set",
            (MutateKind::ArrayAppend, false) => "variant_array_append",
            (MutateKind::ArrayAppend, true) => "try_variant_array_append",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(arg_types.to_vec())
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let func = self.name();
        let n = args.arg_fields.len();
        let arity_ok = match self.kind {
            MutateKind::Set => n == 3 || n == 4,
            _ => n == 3,
        };
        if !arity_ok {
            let expected = if self.kind == MutateKind::Set {
                "[3, 4]"
            } else {
                "3"
            };
            return plan_err!("{}", wrong_num_args(func, expected, n));
        }
        check_variant_arg(func, 0, &args.arg_fields[0])?;
        let root = self.kind == MutateKind::ArrayAppend;
        check_path_arg(func, 1, &args.arg_fields[1], args.scalar_arguments[1], root)?;
        check_value_arg(func, &args.arg_fields[2])?;
        if n == 4 {
            check_bool_arg(func, 3, &args.arg_fields[3])?;
        }
        Ok(variant_field(func, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let func = self.name();
        let create = match args.args.get(3) {
            None => Some(true),
            Some(arg) => constant_bool(func, "create_if_missing", arg)?,
        };
        let arrays = Arrays::new(&args.args[..3], args.number_rows)?;
        let rows = arrays.arrays[0].len();
        let root = self.kind == MutateKind::ArrayAppend;
        let result = guard(func, || {
            let mut out = VariantColumnBuilder::new(rows);
            let (Some(input), Some(create)) = (variant_input(func, &arrays.arrays[0])?, create)
            else {
                (0..rows).for_each(|_| out.append_null());
                return Ok(out.finish());
            };
            let paths = strings(&arrays.arrays[1])?;
            let paths = paths.as_string::<i32>();
            let values = value_input(func, &args.arg_fields[2], &arrays.arrays[2])?;
            let mut parsed: Option<(String, Vec<PathSegment>)> = None;
            for row in 0..rows {
                let (Some((m, v)), Some((nm, nv)), false) = (
                    input.get(row),
                    values.as_ref().and_then(|vals| vals.get(row)),
                    paths.is_null(row),
                ) else {
                    out.append_null();
                    continue;
                };
                let text = paths.value(row);
                if parsed.as_ref().is_none_or(|(t, _)| t != text) {
                    let path =
                        parse_target(func, text, root).map_err(|e| exec_datafusion_err!("{e}"))?;
                    parsed = Some((text.to_string(), path));
                }
                let path = parsed
                    .as_ref()
                    .map(|(_, p)| p.as_slice())
                    .unwrap_or_default();
                let mutation = match self.kind {
                    MutateKind::Insert => Mutation::Insert((nm, nv)),
                    MutateKind::Set => Mutation::Set {
                        value: (nm, nv),
                        create,
                    },
                    MutateKind::ArrayAppend => Mutation::Append((nm, nv)),
                };
                append_mutated(
                    &mut out,
                    func,
                    self.safe,
                    (m, v),
                    text,
                    path,
                    mutate(m, v, path, mutation),
                )?;
            }
            Ok(out.finish())
        })?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(match (self.kind, self.safe) {
            (MutateKind::Insert, false) => &INSERT_DOC,
            (MutateKind::Insert, true) => &TRY_INSERT_DOC,
            (MutateKind::Set, false) => &SET_DOC,
            (MutateKind::Set, true) => &TRY_SET_DOC,
            (MutateKind::ArrayAppend, false) => &APPEND_DOC,
            (MutateKind::ArrayAppend, true) => &TRY_APPEND_DOC,
        })
    }
}

/// Appends the outcome of one row's mutation: the new bytes (or the old ones
/// where nothing changed), NULL for a `try_` form's path errors, or the error.
fn append_mutated(
    out: &mut VariantColumnBuilder,
    func: &str,
    safe: bool,
    (m, v): (&[u8], &[u8]),
    text: &str,
    path: &[PathSegment],
    result: Result<crate::variant::mutate::Mutated, MutateError>,
) -> Result<()> {
    match result {
        Ok(done) => {
            let m = done.metadata.as_deref().unwrap_or(m);
            match done.value.as_deref() {
                Some(new) => out.append(m, new),
                None => out.append(m, v),
            }
            Ok(())
        }
        Err(MutateError::PathTypeMismatch { .. } | MutateError::DuplicateKey(_)) if safe => {
            out.append_null();
            Ok(())
        }
        Err(e) => Err(exec_datafusion_err!("{}", e.message(func, text, path))),
    }
}

/// `variant_delete(v, path1[, path2, ...])`: removes the fields and elements
/// at the paths, left to right. NULL paths are skipped; a path that is missing
/// or does not fit the value changes nothing.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantDeleteFunc {
    signature: Signature,
}

impl VariantDeleteFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl Default for VariantDeleteFunc {
    fn default() -> Self {
        Self::new()
    }
}

static DELETE_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Removes the object fields or array elements at one or more paths, applied left to right. NULL paths are skipped; missing paths change nothing. NULL if v is NULL.",
        "variant_delete(v, path1[, path2, ...])",
    )
    .with_sql_example("> SELECT to_json(variant_delete(parse_json('{\"a\": 1, \"b\": [1, 2]}'), '$.a', '$.b[0]'));\n{\"b\":[2]}")
    .with_argument("v", "A VARIANT.")
    .with_argument("path1, path2, ...", "STRING paths ($ alone is not a target).")
    .build()
});

impl ScalarUDFImpl for VariantDeleteFunc {
    fn name(&self) -> &'static str {
        "variant_delete"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(arg_types.to_vec())
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let func = self.name();
        let n = args.arg_fields.len();
        if n < 2 {
            return plan_err!("{}", wrong_num_args(func, "> 1", n));
        }
        check_variant_arg(func, 0, &args.arg_fields[0])?;
        for pos in 1..n {
            check_path_arg(
                func,
                pos,
                &args.arg_fields[pos],
                args.scalar_arguments[pos],
                false,
            )?;
        }
        Ok(variant_field(func, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let func = self.name();
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let rows = arrays.arrays[0].len();
        let result = guard(func, || {
            let mut out = VariantColumnBuilder::new(rows);
            let Some(input) = variant_input(func, &arrays.arrays[0])? else {
                (0..rows).for_each(|_| out.append_null());
                return Ok(out.finish());
            };
            let paths = arrays.arrays[1..]
                .iter()
                .map(strings)
                .collect::<Result<Vec<_>>>()?;
            let mut parsed: Vec<Option<(String, Vec<PathSegment>)>> = vec![None; paths.len()];
            for row in 0..rows {
                let Some((m, v)) = input.get(row) else {
                    out.append_null();
                    continue;
                };
                let mut current: Option<Vec<u8>> = None;
                for (p, column) in paths.iter().enumerate() {
                    let column = column.as_string::<i32>();
                    if column.is_null(row) {
                        continue;
                    }
                    let text = column.value(row);
                    if parsed[p].as_ref().is_none_or(|(t, _)| t != text) {
                        let path = parse_target(func, text, false)
                            .map_err(|e| exec_datafusion_err!("{e}"))?;
                        parsed[p] = Some((text.to_string(), path));
                    }
                    let path = parsed[p]
                        .as_ref()
                        .map(|(_, p)| p.as_slice())
                        .unwrap_or_default();
                    let value = current.as_deref().unwrap_or(v);
                    let done = mutate(m, value, path, Mutation::Delete)
                        .map_err(|e| exec_datafusion_err!("{}", e.message(func, text, path)))?;
                    if let Some(new) = done.value {
                        current = Some(new);
                    }
                }
                out.append(m, current.as_deref().unwrap_or(v));
            }
            Ok(out.finish())
        })?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DELETE_DOC)
    }
}

/// `variant_strip_nulls(v[, include_arrays])`: removes, at every level, object
/// fields whose value is a variant null, and null array elements unless
/// `include_arrays` is false.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantStripNullsFunc {
    signature: Signature,
}

impl VariantStripNullsFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable)
                .with_parameter_names(vec!["v", "include_arrays"])
                .expect("two distinct names"),
        }
    }
}

impl Default for VariantStripNullsFunc {
    fn default() -> Self {
        Self::new()
    }
}

static STRIP_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Recursively removes object fields whose value is a variant null, and null array elements unless include_arrays is false. Containers it empties stay. NULL if any argument is NULL.",
        "variant_strip_nulls(v[, include_arrays])",
    )
    .with_sql_example("> SELECT to_json(variant_strip_nulls(parse_json('{\"a\": {\"b\": null, \"c\": [1, null]}}')));\n{\"a\":{\"c\":[1]}}")
    .with_argument("v", "A VARIANT.")
    .with_argument("include_arrays", "A constant BOOLEAN, default true.")
    .build()
});

impl ScalarUDFImpl for VariantStripNullsFunc {
    fn name(&self) -> &'static str {
        "variant_strip_nulls"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(arg_types.to_vec())
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let func = self.name();
        let n = args.arg_fields.len();
        if !(1..=2).contains(&n) {
            return plan_err!("{}", wrong_num_args(func, "[1, 2]", n));
        }
        check_variant_arg(func, 0, &args.arg_fields[0])?;
        if n == 2 {
            check_bool_arg(func, 1, &args.arg_fields[1])?;
        }
        Ok(variant_field(func, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let func = self.name();
        let include_arrays = match args.args.get(1) {
            None => Some(true),
            Some(arg) => constant_bool(func, "include_arrays", arg)?,
        };
        let arrays = Arrays::new(&args.args[..1], args.number_rows)?;
        let rows = arrays.arrays[0].len();
        let result = guard(func, || {
            let mut out = VariantColumnBuilder::new(rows);
            let (Some(input), Some(include_arrays)) =
                (variant_input(func, &arrays.arrays[0])?, include_arrays)
            else {
                (0..rows).for_each(|_| out.append_null());
                return Ok(out.finish());
            };
            for row in 0..rows {
                match input.get(row) {
                    None => out.append_null(),
                    Some((m, v)) => {
                        let stripped = strip_nulls(m, v, include_arrays)
                            .map_err(|e| exec_datafusion_err!("{}", e.message(func, "$", &[])))?;
                        out.append(m, stripped.as_deref().unwrap_or(v));
                    }
                }
            }
            Ok(out.finish())
        })?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&STRIP_DOC)
    }
}

super::common::unary_variant_udf!(
    /// `is_valid_variant(v) -> boolean`: whether the bytes are a well-formed
    /// Variant (Spark 4.2+); NULL for NULL.
    IsValidVariantFunc,
    "is_valid_variant",
    returns = DataType::Boolean,
    nullable = true
);

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    super::common::unary_doc(
        "Returns true if the VARIANT's bytes are well formed, false if they are malformed, NULL for NULL. Other functions fail on malformed bytes; this one lets a query find them.",
        "is_valid_variant(v)",
        "> SELECT is_valid_variant(parse_json('[{\"b\":true,\"a\":0}]'));\ntrue",
    )
});

impl IsValidVariantFunc {
    fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let func = "is_valid_variant";
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let array = &arrays.arrays[0];
        let result = guard(func, || {
            let Some(input) = variant_input(func, array)? else {
                return Ok(arrow::array::new_null_array(
                    &DataType::Boolean,
                    array.len(),
                ));
            };
            let valid: BooleanArray = (0..array.len())
                .map(|row| input.get(row).map(|(m, v)| is_valid(m, v)))
                .collect();
            Ok(std::sync::Arc::new(valid) as ArrayRef)
        })?;
        arrays.finish(result)
    }
}
