//! Shared plumbing of the SQL functions: argument checks, array/scalar dispatch,
//! literal arguments, the session time zone, and guarded row decoding.

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, plan_err};
use datafusion::logical_expr::ColumnarValue;
use parquet_variant::Variant;

use crate::array::{VariantInput, is_variant_field};
pub use crate::boundary::guard;
pub use crate::config::session_tz;
use crate::variant::validate;

/// Plan-time check that argument `pos` (0-based) of `func` is a Variant.
pub fn check_variant_arg(func: &str, pos: usize, field: &Field) -> Result<()> {
    if is_variant_field(field) || field.data_type() == &DataType::Null {
        Ok(())
    } else {
        Err(unexpected_input_type(
            func,
            pos,
            "VARIANT",
            field.data_type(),
        ))
    }
}

/// Spark's error for an argument of the wrong type (`is_valid_variant('1')`):
/// `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] is_valid_variant: the first
/// parameter requires the "VARIANT" type, however it has the type "STRING"`.
pub fn unexpected_input_type(
    func: &str,
    pos: usize,
    required: &str,
    found: &DataType,
) -> datafusion::error::DataFusionError {
    const ORDINALS: [&str; 5] = ["first", "second", "third", "4th", "5th"];
    let ordinal = ORDINALS
        .get(pos)
        .map_or_else(|| format!("{}th", pos + 1), |o| (*o).to_string());
    datafusion::error::DataFusionError::Plan(format!(
        "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] {func}: the {ordinal} parameter requires the \"{required}\" type, however it has the type \"{}\"",
        crate::array::from_arrow::sql_type_name(found)
    ))
}

/// Plan-time check that argument `pos` of `func` is a string (or NULL).
pub fn check_string_arg(func: &str, pos: usize, field: &Field) -> Result<()> {
    match field.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => Ok(()),
        DataType::Dictionary(_, v) if v.is_string() => Ok(()),
        other => Err(unexpected_input_type(func, pos, "STRING", other)),
    }
}

/// The text of a literal string argument; `Ok(None)` for a NULL literal.
pub fn literal_string<'a>(
    func: &str,
    what: &str,
    arg: Option<&'a ScalarValue>,
) -> Result<Option<&'a str>> {
    match arg {
        Some(sv) => match sv.try_as_str() {
            Some(s) => Ok(s),
            None => plan_err!(
                "{func}: {what} must be a string literal, found {}",
                sv.data_type()
            ),
        },
        None => plan_err!("{func}: {what} must be a literal"),
    }
}

/// Arguments expanded to arrays, remembering whether every one was a scalar so
/// the result can be a scalar again.
pub struct Arrays {
    /// The arguments, scalars expanded to arrays (of one row when all are scalars).
    pub arrays: Vec<ArrayRef>,
    /// Whether every argument was a scalar.
    pub all_scalar: bool,
}

impl Arrays {
    /// Expands `args` for `number_rows` rows.
    pub fn new(args: &[ColumnarValue], number_rows: usize) -> Result<Self> {
        let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let n = if all_scalar { 1 } else { number_rows };
        let arrays = args
            .iter()
            .map(|a| a.to_array(n))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { arrays, all_scalar })
    }

    /// Wraps a result array as the function's return value.
    pub fn finish(&self, result: ArrayRef) -> Result<ColumnarValue> {
        if self.all_scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                &result, 0,
            )?))
        } else {
            Ok(ColumnarValue::Array(result))
        }
    }
}

/// Opens a Variant argument for row access. A `Null`-typed argument reads as all
/// SQL NULLs.
pub fn variant_input(func: &str, array: &ArrayRef) -> Result<Option<VariantInput>> {
    if array.data_type() == &DataType::Null {
        return Ok(None);
    }
    VariantInput::try_new(array)
        .map(Some)
        .map_err(|e| exec_datafusion_err!("{func}: {e}"))
}

/// Decodes one row's bytes with the crate's guard; the error names the function
/// and what is wrong. It names no row: a function sees a batch, and a position
/// inside one depends on partitioning and batch sizes, so it would not find the
/// row again.
#[inline]
pub fn decode_row<'m, 'v>(
    func: &str,
    metadata: &'m [u8],
    value: &'v [u8],
) -> Result<Variant<'m, 'v>> {
    validate::decode(metadata, value).map_err(|e| exec_datafusion_err!("{func}: {e}"))
}

/// [`for_each_variant`] for functions that read only the types and shape of a
/// value (`schema_of_variant`, `variant_typeof`, ...): dates and timestamps past
/// chrono's years are decoded as chrono's nearest ones
/// ([`validate::decode_shape`]), which have the same type.
///
/// # Errors
/// When the column is not a VARIANT, a row's bytes are malformed, or `f` fails.
pub fn for_each_variant_shape(
    func: &str,
    array: &ArrayRef,
    f: impl FnMut(usize, Option<&Variant<'_, '_>>) -> Result<()>,
) -> Result<()> {
    each_row(func, array, true, f)
}

/// Calls `f` with every row of a Variant argument, decoded through the guard:
/// `None` for SQL NULL. Malformed bytes are an error naming `func` and the problem.
pub fn for_each_variant(
    func: &str,
    array: &ArrayRef,
    f: impl FnMut(usize, Option<&Variant<'_, '_>>) -> Result<()>,
) -> Result<()> {
    each_row(func, array, false, f)
}

/// [`for_each_variant`], or with `shape` [`for_each_variant_shape`].
fn each_row(
    func: &str,
    array: &ArrayRef,
    shape: bool,
    mut f: impl FnMut(usize, Option<&Variant<'_, '_>>) -> Result<()>,
) -> Result<()> {
    guard(func, || {
        let input = variant_input(func, array)?;
        let mut scratch = Vec::new();
        for row in 0..array.len() {
            match input.as_ref().and_then(|i| i.get(row)) {
                None => f(row, None)?,
                Some((m, v)) if shape => {
                    let variant = validate::decode_shape(m, v, &mut scratch)
                        .map_err(|e| exec_datafusion_err!("{func}: {e}"))?;
                    f(row, Some(&variant))?;
                }
                Some((m, v)) => {
                    let variant = decode_row(func, m, v)?;
                    f(row, Some(&variant))?;
                }
            }
        }
        Ok(())
    })
}

/// Builds a `Documentation` with one VARIANT argument.
pub fn unary_doc(
    description: &str,
    syntax: &str,
    example: &str,
) -> datafusion::logical_expr::Documentation {
    datafusion::logical_expr::Documentation::builder(
        super::DOC_SECTION,
        description.to_string(),
        syntax.to_string(),
    )
    .with_sql_example(example.to_string())
    .with_argument("v", "A VARIANT.")
    .build()
}

/// The signature of every function taking one argument of any type.
pub fn any_one() -> datafusion::logical_expr::Signature {
    datafusion::logical_expr::Signature::any(1, datafusion::logical_expr::Volatility::Immutable)
}

/// Defines a scalar function of one VARIANT argument: the struct, its
/// constructors and the `ScalarUDFImpl` plumbing. The file that uses it supplies
/// a `static DOC: LazyLock<Documentation>` and `fn invoke(&self, ScalarFunctionArgs)`.
macro_rules! unary_variant_udf {
    ($(#[$meta:meta])* $ty:ident, $sql:literal, returns = $ret:expr, nullable = $nullable:expr) => {
        $crate::udf::common::unary_variant_udf!(
            $(#[$meta])* $ty, $sql, returns = $ret, nullable = $nullable, param = None
        );
    };
    ($(#[$meta:meta])* $ty:ident, $sql:literal, returns = $ret:expr, nullable = $nullable:expr, param = $param:expr) => {
        $(#[$meta])*
        #[derive(Debug, PartialEq, Eq, Hash)]
        pub struct $ty {
            signature: datafusion::logical_expr::Signature,
        }

        impl $ty {
            /// Creates the function.
            pub fn new() -> Self {
                let signature = $crate::udf::common::any_one();
                // The name of the argument for named calls (`f(input => x)`),
                // where Spark accepts one.
                let param: Option<&str> = $param;
                let signature = match param {
                    Some(name) => signature
                        .with_parameter_names(vec![name])
                        .expect("one name for one argument"),
                    None => signature,
                };
                Self { signature }
            }
        }

        impl Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }

        impl datafusion::logical_expr::ScalarUDFImpl for $ty {
            fn name(&self) -> &str {
                $sql
            }

            fn signature(&self) -> &datafusion::logical_expr::Signature {
                &self.signature
            }

            fn return_type(
                &self,
                _arg_types: &[arrow::datatypes::DataType],
            ) -> datafusion::common::Result<arrow::datatypes::DataType> {
                Ok($ret)
            }

            fn return_field_from_args(
                &self,
                args: datafusion::logical_expr::ReturnFieldArgs,
            ) -> datafusion::common::Result<arrow::datatypes::FieldRef> {
                let [arg] = args.arg_fields else {
                    return datafusion::common::plan_err!("{} takes exactly one argument", $sql);
                };
                $crate::udf::common::check_variant_arg($sql, 0, arg)?;
                Ok(std::sync::Arc::new(arrow::datatypes::Field::new($sql, $ret, $nullable)))
            }

            fn invoke_with_args(
                &self,
                args: datafusion::logical_expr::ScalarFunctionArgs,
            ) -> datafusion::common::Result<datafusion::logical_expr::ColumnarValue> {
                self.invoke(args)
            }

            fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
                Some(&DOC)
            }
        }
    };
}

pub(crate) use unary_variant_udf;

/// The list element field of a function returning `List<Struct<fields>>`.
pub fn struct_list_element(fields: arrow::datatypes::Fields) -> arrow::datatypes::FieldRef {
    std::sync::Arc::new(Field::new_list_field(DataType::Struct(fields), true))
}

/// The value of a constant argument of a table function (one row).
///
/// # Errors
/// When the expression cannot be planned or evaluated without a table.
pub fn constant_argument(
    session: &dyn datafusion::catalog::Session,
    expr: &datafusion::logical_expr::Expr,
) -> Result<ArrayRef> {
    use arrow::array::{RecordBatch, RecordBatchOptions};
    let one_row = RecordBatch::try_new_with_options(
        std::sync::Arc::new(arrow::datatypes::Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )?;
    session
        .create_physical_expr(expr.clone(), &datafusion::common::DFSchema::empty())?
        .evaluate(&one_row)?
        .into_array(1)
}
