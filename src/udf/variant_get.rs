//! `variant_get(v, path[, type])` and `try_variant_get(v, path[, type])`.
//!
//! The path is Spark's JSONPath subset ([`crate::variant::path`]); the type is a
//! Spark type string ([`crate::variant::types::SparkType`]). Without a type the
//! result is a VARIANT holding the sub-value (sharing the row's metadata).
//! A missing path gives NULL. A value that cannot be converted is an error in
//! `variant_get` and NULL in `try_variant_get` (inside containers only the failing
//! element becomes NULL). Invalid literal paths and types are rejected when the
//! query is planned, in both functions.

use std::sync::{Arc, LazyLock};

use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::common::{
    Arrays, check_string_arg, check_variant_arg, guard, literal_string, session_tz,
};
use crate::array::get::{PathArg, TRY_VARIANT_GET, VARIANT_GET, variant_get};
use crate::array::{variant_data_type, variant_field};
use crate::boundary::get_error;
use crate::boundary::{
    RAISE_VARIANT_GET_ERROR, VARIANT_GET_OR_ERROR, or_error_fields, run_or_error_kernel,
};
use crate::variant::cast::CastOptions;
use crate::variant::path::{GetPath, parse_get_path};
use crate::variant::types::SparkType;

/// `variant_get` / `try_variant_get`: one implementation with a `safe` flag.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGetFunc {
    signature: Signature,
    safe: bool,
}

impl VariantGetFunc {
    /// `safe = true` makes `try_variant_get`.
    pub fn new(safe: bool) -> Self {
        Self {
            signature: Signature::one_of(
                vec![TypeSignature::Any(2), TypeSignature::Any(3)],
                Volatility::Immutable,
            ),
            safe,
        }
    }

    /// Whether this is `try_variant_get`.
    pub fn is_safe(&self) -> bool {
        self.safe
    }
}

static GET_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Extracts the value at a JSONPath ($, .key, ['key'], [n]) from a VARIANT and converts it to the given Spark type with Spark's cast rules; without a type it returns a VARIANT. A missing path gives NULL; a value that cannot be converted is an error. Beyond Spark, the wildcards [*] (every element), .* (every field value) and ..key (the field key at any depth) give an array of every match (array<type> with a type; [] when nothing matches).",
        "variant_get(v, path[, type])",
    )
    .with_sql_example("> SELECT variant_get(parse_json('{\"a\": {\"b\": \"42\"}}'), '$.a.b', 'int');\n42\n> SELECT variant_get(parse_json('{\"a\": [{\"b\": 1}, {\"c\": 2}, {\"b\": \"3\"}]}'), '$.a[*].b', 'int');\n[1, 3]")
    .with_argument("v", "A VARIANT.")
    .with_argument("path", "A STRING path such as '$.a[0].b' or '$.a[*].b'; a literal is checked when the query is planned. A wildcard path with a type must be a literal.")
    .with_argument("type", "Optional literal Spark type: int, bigint, double, decimal(10,2), string, boolean, date, timestamp, timestamp_ntz, binary, array<..>, struct<..>, map<string,..>, variant.")
    .build()
});

static TRY_GET_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Like variant_get, but a value that cannot be converted gives NULL (inside arrays, structs and maps only the failing element becomes NULL).",
        "try_variant_get(v, path[, type])",
    )
    .with_sql_example("> SELECT try_variant_get(parse_json('\"x\"'), '$', 'int');\nNULL")
    .with_argument("v", "A VARIANT.")
    .with_argument("path", "A STRING path.")
    .with_argument("type", "Optional literal Spark type.")
    .build()
});

/// The target type of a call: `None` means VARIANT.
fn target_type(func: &str, arg: Option<&ScalarValue>) -> Result<Option<SparkType>> {
    let Some(text) = literal_string(func, "the type argument", arg)? else {
        return plan_err!("{func}: the type argument must not be NULL");
    };
    match SparkType::parse(text) {
        Ok(SparkType::Variant) => Ok(None),
        Ok(t) => Ok(Some(t)),
        Err(e) => plan_err!("{func}: {e}"),
    }
}

impl ScalarUDFImpl for VariantGetFunc {
    fn name(&self) -> &str {
        if self.safe {
            TRY_VARIANT_GET
        } else {
            VARIANT_GET
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        // return_field_from_args decides; this is only used without literals.
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let func = self.name();
        let n = args.arg_fields.len();
        if !(2..=3).contains(&n) {
            return plan_err!("{func} takes 2 or 3 arguments, got {n}");
        }
        check_variant_arg(func, 0, &args.arg_fields[0])?;
        check_string_arg(func, 1, &args.arg_fields[1])?;
        let mut wildcard = false;
        if let Some(Some(path)) = args.scalar_arguments.get(1)
            && let Some(Some(text)) = path.try_as_str()
        {
            match parse_get_path(text) {
                Ok(p) => wildcard = matches!(p, GetPath::Wildcard(_)),
                Err(e) => return plan_err!("{func}: {e}"),
            }
        }
        let target = if n == 3 {
            target_type(func, args.scalar_arguments[2])?
        } else {
            None
        };
        Ok(match target {
            None => variant_field(func, true),
            // A wildcard path gives an array of its matches.
            Some(t) if wildcard => Arc::new(Field::new(
                func,
                SparkType::Array(Box::new(t)).to_arrow(),
                true,
            )),
            Some(t) => Arc::new(Field::new(func, t.to_arrow(), true)),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let func = self.name();
        let target = invoked_target(func, &args)?;
        let options = CastOptions {
            safe: self.safe,
            tz: session_tz(&args.config_options)?,
        };
        with_path_arg(func, &args, |column, path| {
            guard(func, || {
                variant_get(column, path, target.as_ref(), options).map_err(|e| get_error(func, e))
            })
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(if self.safe { &TRY_GET_DOC } else { &GET_DOC })
    }

    /// A call that cannot fail (`variant_get` without a type, `try_variant_get`)
    /// on a column with literal arguments moves towards the scan: DataFusion
    /// lifts it out of filters, sorts and aggregates into a projection right
    /// above the table, where the Parquet reader produces it from the shredded
    /// leaves (`parquet::shredded_get`). A `variant_get` with a type can fail, so it
    /// stays where it is and errors only for the rows that reach it (after
    /// filters); the analyzer splits it into `raise_variant_get_error(
    /// variant_get_or_error(v, p, t))`, whose inner part moves
    /// (`optimizer::variant_get_split`).
    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        let base = args.first().copied();
        if (args.len() == 2 || self.safe)
            && matches!(
                base,
                Some(ExpressionPlacement::Column | ExpressionPlacement::MoveTowardsLeafNodes)
            )
            && args[1..].iter().all(|p| *p == ExpressionPlacement::Literal)
        {
            ExpressionPlacement::MoveTowardsLeafNodes
        } else {
            ExpressionPlacement::KeepInPlace
        }
    }
}

/// The target type of an invoked call (its third argument, a literal).
fn invoked_target(func: &str, args: &ScalarFunctionArgs) -> Result<Option<SparkType>> {
    match args.args.get(2) {
        Some(ColumnarValue::Scalar(sv)) => target_type(func, Some(sv)),
        Some(_) => exec_err!("{func}: the type argument must be a literal"),
        None => Ok(None),
    }
}

/// Runs `kernel` on the VARIANT argument and the path argument (parsed once
/// when it is a scalar) of an invoked `variant_get`-like call.
fn with_path_arg(
    func: &str,
    args: &ScalarFunctionArgs,
    kernel: impl FnOnce(&arrow::array::ArrayRef, PathArg<'_>) -> Result<arrow::array::ArrayRef>,
) -> Result<ColumnarValue> {
    let scalar_path = match &args.args[1] {
        ColumnarValue::Scalar(sv) => Some(match sv.try_as_str() {
            Some(Some(text)) => {
                Some(parse_get_path(text).map_err(|e| exec_datafusion_err!("{func}: {e}"))?)
            }
            Some(None) => None,
            None => return exec_err!("{func}: the path must be a string"),
        }),
        ColumnarValue::Array(_) => None,
    };
    let arrays = Arrays::new(&args.args[..2], args.number_rows)?;
    let path = match &scalar_path {
        Some(Some(p)) => PathArg::of(p),
        Some(None) => PathArg::Null,
        None => PathArg::Column(&arrays.arrays[1]),
    };
    let result = kernel(&arrays.arrays[0], path)?;
    arrays.finish(result)
}

/// `variant_get_or_error(v, path, type)`: `variant_get(v, path, type)` that
/// never fails: a struct `{value, error}` holding, per row, the converted value
/// or the error `variant_get` would raise. The analyzer splits a typed
/// `variant_get` into `raise_variant_get_error(variant_get_or_error(v, p, t))`
/// (`optimizer::variant_get_split`): the inner call moves into the
/// scan, where a shredded file answers it from its typed leaves, and the error
/// is raised only for the rows that reach the outer call, after the filters.
///
/// ```text
/// > SELECT variant_get_or_error(parse_json('"x"'), '$', 'int');
/// {value: NULL, error: variant_get: [INVALID_VARIANT_CAST] The variant value `"x"` cannot be cast into `"INT"`.}
/// ```
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGetOrErrorFunc {
    signature: Signature,
}

impl VariantGetOrErrorFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

impl Default for VariantGetOrErrorFunc {
    fn default() -> Self {
        Self::new()
    }
}

static OR_ERROR_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "variant_get(v, path, type) that never fails: a struct {value, error} with, per row, the converted value or the error variant_get would raise. Typed variant_get calls are planned as raise_variant_get_error(variant_get_or_error(v, path, type)), so that the extraction runs in the scan (from shredded leaves) and the error only for rows that pass the filters.",
        "variant_get_or_error(v, path, type)",
    )
    .with_sql_example("> SELECT variant_get_or_error(parse_json('{\"a\": \"7\"}'), '$.a', 'int');\n{value: 7, error: NULL}")
    .with_argument("v", "A VARIANT.")
    .with_argument("path", "A STRING path.")
    .with_argument("type", "A literal Spark type other than variant.")
    .build()
});

impl ScalarUDFImpl for VariantGetOrErrorFunc {
    fn name(&self) -> &str {
        VARIANT_GET_OR_ERROR
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("{VARIANT_GET_OR_ERROR} needs a literal type")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let value = VariantGetFunc::new(false).return_field_from_args(ReturnFieldArgs {
            arg_fields: args.arg_fields,
            scalar_arguments: args.scalar_arguments,
        })?;
        if crate::array::is_variant_field(&value) {
            return plan_err!("{VARIANT_GET_OR_ERROR}: the type must not be variant");
        }
        Ok(Arc::new(Field::new(
            VARIANT_GET_OR_ERROR,
            DataType::Struct(or_error_fields(value.data_type())),
            true,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let Some(target) = invoked_target(VARIANT_GET, &args)? else {
            return exec_err!("{VARIANT_GET_OR_ERROR}: the type must not be variant");
        };
        let tz = session_tz(&args.config_options)?;
        with_path_arg(VARIANT_GET, &args, |column, path| {
            run_or_error_kernel(column, path, &target, tz)
        })
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&OR_ERROR_DOC)
    }

    /// It cannot fail: it moves towards the scan as `try_variant_get` does.
    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        VariantGetFunc::new(true).placement(args)
    }
}

/// `raise_variant_get_error(s)`: the `value` of a [`VariantGetOrErrorFunc`]
/// result, raising the first row's `error` when a row has one.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RaiseVariantGetErrorFunc {
    signature: Signature,
}

impl RaiseVariantGetErrorFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for RaiseVariantGetErrorFunc {
    fn default() -> Self {
        Self::new()
    }
}

static RAISE_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "The value of a variant_get_or_error result, or its error raised: the second half of a typed variant_get.",
        "raise_variant_get_error(variant_get_or_error(v, path, type))",
    )
    .with_sql_example("> SELECT raise_variant_get_error(variant_get_or_error(parse_json('7'), '$', 'int'));\n7")
    .with_argument("s", "A variant_get_or_error result.")
    .build()
});

/// The `value` field of a `variant_get_or_error` result type.
fn or_error_value(dt: &DataType) -> Option<&FieldRef> {
    match dt {
        DataType::Struct(f)
            if f.len() == 2
                && f[0].name() == "value"
                && f[1].name() == "error"
                && f[1].data_type() == &DataType::Utf8 =>
        {
            Some(&f[0])
        }
        _ => None,
    }
}

impl ScalarUDFImpl for RaiseVariantGetErrorFunc {
    fn name(&self) -> &str {
        RAISE_VARIANT_GET_ERROR
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types.first().and_then(or_error_value) {
            Some(value) => Ok(value.data_type().clone()),
            None => plan_err!("{RAISE_VARIANT_GET_ERROR} takes a {VARIANT_GET_OR_ERROR} result"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        use arrow::array::{Array, AsArray};
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let s = arrays.arrays[0].as_struct_opt().ok_or_else(|| {
            exec_datafusion_err!("{RAISE_VARIANT_GET_ERROR} takes a {VARIANT_GET_OR_ERROR} result")
        })?;
        let errors = s.column(1).as_string::<i32>();
        if errors.null_count() < errors.len()
            && let Some(error) = (0..s.len())
                .filter(|&i| s.is_valid(i))
                .find_map(|i| errors.is_valid(i).then(|| errors.value(i)))
        {
            return Err(datafusion::common::DataFusionError::Execution(
                error.to_string(),
            ));
        }
        let values = s.column(0);
        let result = match s.nulls() {
            None => Arc::clone(values),
            Some(nulls) => {
                let data = values
                    .to_data()
                    .into_builder()
                    .nulls(arrow::buffer::NullBuffer::union(
                        Some(nulls),
                        values.nulls(),
                    ))
                    .build()?;
                arrow::array::make_array(data)
            }
        };
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&RAISE_DOC)
    }
}
