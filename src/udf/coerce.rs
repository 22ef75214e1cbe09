//! `coalesce`, `nvl` (`ifnull`) and `nvl2` with Spark's one implicit
//! conversion to VARIANT: where a VARIANT meets a STRING, the string becomes a
//! VARIANT string (`coalesce(v:x, 'default')` is the variant `"default"`).
//! Spark converts nothing else: `coalesce(v:x, 1)` is `DATA_DIFF_TYPES`.
//!
//! Each is DataFusion's function, wrapped: with no VARIANT argument every call
//! goes to it unchanged. With one, the wrapper accepts the mixed argument types
//! while the query is planned (DataFusion's coercion would fail on them), and
//! the analyzer rule [`crate::sql::VariantCastRewrite`] then wraps the string
//! arguments in `cast_to_variant`, after which DataFusion's function sees only
//! VARIANTs.

use std::sync::Arc;

use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature,
};

use crate::array::{is_variant_type, variant_data_type, variant_field};

/// Whether `dt` may be converted to VARIANT implicitly (Spark: strings and NULL).
pub fn implicitly_variant(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    )
}

/// The first of `types` that is neither a VARIANT nor converts to one
/// implicitly: what Spark names in its error for a mix.
pub fn first_unconvertible<'a>(
    types: impl IntoIterator<Item = &'a DataType>,
) -> Option<&'a DataType> {
    types
        .into_iter()
        .find(|t| !is_variant_type(t) && !implicitly_variant(t))
}

/// Spark's error for a VARIANT mixed with a type that does not convert.
pub fn data_diff_types(func: &str, other: &DataType) -> datafusion::common::DataFusionError {
    datafusion::common::plan_datafusion_err!(
        "[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Input to `{func}` should all be the same type, but it's (\"VARIANT\" or {other}): only STRING and NULL convert to VARIANT implicitly; write CAST(x AS VARIANT)"
    )
}

/// Spark's error for a `map(...)` whose values mix VARIANT with a type that
/// does not convert.
fn create_map_value_diff_types(other: &DataType) -> datafusion::common::DataFusionError {
    datafusion::common::plan_datafusion_err!(
        "[DATATYPE_MISMATCH.CREATE_MAP_VALUE_DIFF_TYPES] The given values of function `map` should all be the same type, but they are (\"VARIANT\" and {other}): only STRING and NULL convert to VARIANT implicitly; write CAST(x AS VARIANT)"
    )
}

/// The argument types the wrapped function's own signature coerces `types` to.
fn coerce_with(inner: &ScalarUDF, types: Vec<DataType>) -> Result<Vec<DataType>> {
    let fields: Vec<FieldRef> = types
        .into_iter()
        .map(|t| Arc::new(arrow::datatypes::Field::new("f", t, true)))
        .collect();
    Ok(
        datafusion::logical_expr::type_coercion::functions::fields_with_udf(&fields, inner)?
            .iter()
            .map(|f| f.data_type().clone())
            .collect(),
    )
}

/// A DataFusion function whose value arguments may mix VARIANT and STRING.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantCoercing {
    inner: Arc<ScalarUDF>,
    /// User-defined, so that DataFusion asks [`Self::coerce_types`], which
    /// applies the wrapped function's own signature when no VARIANT is mixed.
    signature: Signature,
    /// Arguments before this index are not values (`nvl2`'s test).
    first_value: usize,
    /// The result holds the values (`make_array`): its type is the wrapped
    /// function's over VARIANT values. Otherwise it is one of them: VARIANT.
    holds_values: bool,
    /// The values of a `map(k1, v1, ...)` call (planned as `make_array` of
    /// them): another type beside a VARIANT is Spark's
    /// `CREATE_MAP_VALUE_DIFF_TYPES`, not `DATA_DIFF_TYPES`.
    map_values: bool,
}

impl VariantCoercing {
    /// Wraps `inner`, whose arguments from `first_value` on are its values.
    pub fn new(inner: Arc<ScalarUDF>, first_value: usize) -> Self {
        let signature = Signature::user_defined(inner.signature().volatility);
        Self {
            inner,
            signature,
            first_value,
            holds_values: false,
            map_values: false,
        }
    }

    /// Wraps `inner`, whose result holds its values (`make_array`, Spark's
    /// `array`): a VARIANT among strings makes an `ARRAY<VARIANT>`.
    pub fn holding_values(inner: Arc<ScalarUDF>) -> Self {
        Self {
            holds_values: true,
            ..Self::new(inner, 0)
        }
    }

    /// The `make_array` of the values of `map(k1, v1, k2, v2, ...)`, which
    /// DataFusion plans as `map(make_array(k1, k2, ...), make_array(v1, v2, ...))`
    /// with its own `make_array`: strings beside a VARIANT value become VARIANT
    /// strings (Spark: `map('k', v:a, 'j', 'x')` is `{"k":1,"j":"x"}`).
    pub fn map_values() -> Self {
        Self {
            map_values: true,
            ..Self::holding_values(datafusion::functions_nested::make_array::make_array_udf())
        }
    }

    /// Whether the call mixes VARIANT with other types among its values
    /// (checking that the others are strings or NULL).
    fn mixed(&self, types: &[DataType]) -> Result<bool> {
        let values = types.get(self.first_value..).unwrap_or_default();
        if !values.iter().any(is_variant_type) || values.iter().all(is_variant_type) {
            return Ok(false);
        }
        self.check_others(values)?;
        Ok(true)
    }

    /// Whether any value argument is a VARIANT (all of them, or mixed with
    /// strings: DataFusion's own signatures of `nvl` and `nvl2` take no struct).
    fn with_variant(&self, types: &[DataType]) -> Result<bool> {
        let values = types.get(self.first_value..).unwrap_or_default();
        if !values.iter().any(is_variant_type) {
            return Ok(false);
        }
        self.check_others(values)?;
        Ok(true)
    }

    /// Checks that the non-VARIANT values are strings or NULL.
    fn check_others(&self, values: &[DataType]) -> Result<()> {
        match first_unconvertible(values) {
            Some(other) if self.map_values => Err(create_map_value_diff_types(other)),
            Some(other) => Err(data_diff_types(self.name(), other)),
            None => Ok(()),
        }
    }

    /// The index of the first value argument.
    pub fn first_value(&self) -> usize {
        self.first_value
    }
}

impl ScalarUDFImpl for VariantCoercing {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if self.with_variant(arg_types)? {
            return Ok(arg_types.to_vec());
        }
        coerce_with(&self.inner, arg_types.to_vec())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        if self.with_variant(arg_types)? {
            if self.holds_values {
                let types: Vec<DataType> = arg_types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if i >= self.first_value {
                            variant_data_type()
                        } else {
                            t.clone()
                        }
                    })
                    .collect();
                return self.inner.return_type(&types);
            }
            return Ok(variant_data_type());
        }
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        if self.with_variant(&types)? {
            if self.holds_values {
                // As the analyzer rule leaves the call: every value a VARIANT.
                let fields: Vec<FieldRef> = args
                    .arg_fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        if i >= self.first_value {
                            variant_field(f.name(), f.is_nullable())
                        } else {
                            Arc::clone(f)
                        }
                    })
                    .collect();
                let scalars: Vec<Option<&ScalarValue>> = vec![None; fields.len()];
                return self.inner.return_field_from_args(ReturnFieldArgs {
                    arg_fields: &fields,
                    scalar_arguments: &scalars,
                });
            }
            return Ok(variant_field(self.name(), true));
        }
        self.inner.return_field_from_args(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        if self.mixed(&types)? {
            // The analyzer rule converts the strings before execution.
            return plan_err!(
                "{}: a VARIANT mixed with strings reached execution unconverted",
                self.name()
            );
        }
        self.inner.invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.inner().simplify(args, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner.inner().short_circuits()
    }

    fn conditional_arguments<'a>(
        &self,
        args: &'a [Expr],
    ) -> Option<(Vec<&'a Expr>, Vec<&'a Expr>)> {
        self.inner.inner().conditional_arguments(args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// The wrapped `coalesce`, `nvl` (alias `ifnull`), `nvl2` and `make_array`
/// (and, where datafusion-spark is registered, Spark's `if` and `array`), and the string
/// functions listed below, each wrapping the function `lookup`
/// finds under its name (datafusion-spark's `concat` or `length` in Spark
/// mode), else DataFusion's. A function that is already a wrapper is left out.
pub fn coercing_functions_over(
    lookup: &dyn Fn(&str) -> Option<Arc<ScalarUDF>>,
) -> Vec<Arc<ScalarUDF>> {
    use datafusion::functions::core;
    let current = |default: Arc<ScalarUDF>| -> Option<Arc<ScalarUDF>> {
        let f = lookup(default.name()).unwrap_or(default);
        let inner: &dyn std::any::Any = f.inner().as_ref();
        (!inner.is::<VariantCoercing>() && !inner.is::<VariantAsString>()).then_some(f)
    };
    let values = [(core::coalesce(), 0), (core::nvl(), 0), (core::nvl2(), 1)]
        .into_iter()
        .filter_map(|(f, first)| {
            current(f).map(|f| Arc::new(ScalarUDF::new_from_impl(VariantCoercing::new(f, first))))
        });
    // Spark's `if(cond, a, b)` and `array(...)`, where datafusion-spark is
    // registered; DataFusion's `make_array` always.
    let spark = |name: &str| {
        lookup(name).filter(|f| {
            let inner: &dyn std::any::Any = f.inner().as_ref();
            !inner.is::<VariantCoercing>()
        })
    };
    let values = values
        .chain(spark("if").map(|f| Arc::new(ScalarUDF::new_from_impl(VariantCoercing::new(f, 1)))))
        .chain(
            current(datafusion::functions_nested::make_array::make_array_udf())
                .into_iter()
                .chain(spark("array"))
                .map(|f| Arc::new(ScalarUDF::new_from_impl(VariantCoercing::holding_values(f)))),
        );
    // Spark's own string functions, where datafusion-spark is registered.
    let spark_strings = ["split", "hex"].into_iter().filter_map(|name| {
        lookup(name).filter(|f| {
            let inner: &dyn std::any::Any = f.inner().as_ref();
            !inner.is::<VariantAsString>()
        })
    });
    let strings = string_function_defaults()
        .into_iter()
        .filter_map(current)
        .chain(spark_strings)
        .map(|f| Arc::new(ScalarUDF::new_from_impl(VariantAsString::new(f))));
    values.chain(strings).collect()
}

/// DataFusion's function behind `f`: the one it wraps where `f` is one of this
/// module's wrappers (which leave every call without a VARIANT to it), `f`
/// itself otherwise.
pub fn unwrapped(f: &Arc<ScalarUDF>) -> &Arc<ScalarUDF> {
    let inner: &dyn std::any::Any = f.inner().as_ref();
    if let Some(c) = inner.downcast_ref::<VariantCoercing>() {
        return &c.inner;
    }
    if let Some(s) = inner.downcast_ref::<VariantAsString>() {
        return &s.inner;
    }
    f
}

/// [`coercing_functions_over`] DataFusion's own functions.
pub fn coercing_functions() -> Vec<Arc<ScalarUDF>> {
    coercing_functions_over(&|_| None)
}

/// A DataFusion string function that, as in Spark, takes a VARIANT argument as
/// the STRING `CAST(v AS STRING)` gives (a string variant without its quotes,
/// anything else its JSON text, a variant null NULL): `length(v:arr)`,
/// `upper(v:name)`. The analyzer rule [`crate::sql::VariantCastRewrite`]
/// makes the conversion explicit (`variant_get(v, '$', 'string')`) before
/// type coercion; without a VARIANT argument every call is DataFusion's.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantAsString {
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

impl VariantAsString {
    /// Wraps `inner`.
    pub fn new(inner: Arc<ScalarUDF>) -> Self {
        let signature = Signature::user_defined(inner.signature().volatility);
        Self { inner, signature }
    }

    /// `types` with every VARIANT a string.
    fn as_strings(types: &[DataType]) -> Vec<DataType> {
        types
            .iter()
            .map(|t| {
                if is_variant_type(t) {
                    DataType::Utf8
                } else {
                    t.clone()
                }
            })
            .collect()
    }
}

impl ScalarUDFImpl for VariantAsString {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let coerced = coerce_with(&self.inner, Self::as_strings(arg_types))?;
        // A VARIANT argument stays one until the analyzer converts it.
        Ok(arg_types
            .iter()
            .zip(coerced)
            .map(|(t, c)| if is_variant_type(t) { t.clone() } else { c })
            .collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(&Self::as_strings(arg_types))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let fields: Vec<FieldRef> = args
            .arg_fields
            .iter()
            .map(|f| {
                if is_variant_type(f.data_type()) {
                    Arc::new(arrow::datatypes::Field::new(f.name(), DataType::Utf8, true))
                } else {
                    Arc::clone(f)
                }
            })
            .collect();
        self.inner.return_field_from_args(ReturnFieldArgs {
            arg_fields: &fields,
            scalar_arguments: args.scalar_arguments,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if args
            .arg_fields
            .iter()
            .any(|f| is_variant_type(f.data_type()))
        {
            return plan_err!(
                "{}: a VARIANT argument reached execution unconverted",
                self.name()
            );
        }
        self.inner.invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.inner().simplify(args, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner.inner().short_circuits()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// DataFusion's string functions that take a VARIANT as Spark does once
/// wrapped (with their aliases: `length`, `char_length`, `trim`, `substring`,
/// `instr`, `substring_index`, ...); pyspark 4.3.0 converts a VARIANT to a
/// STRING in each (`interop/spark_probe/string_functions.txt`).
fn string_function_defaults() -> Vec<Arc<ScalarUDF>> {
    use datafusion::functions::{regex, string, unicode};
    [
        string::upper(),
        string::lower(),
        string::btrim(),
        string::ltrim(),
        string::rtrim(),
        string::concat(),
        string::concat_ws(),
        string::replace(),
        string::split_part(),
        string::starts_with(),
        string::ends_with(),
        string::octet_length(),
        unicode::character_length(),
        unicode::substr(),
        unicode::lpad(),
        unicode::rpad(),
        unicode::reverse(),
        unicode::left(),
        unicode::right(),
        unicode::strpos(),
        unicode::initcap(),
        string::repeat(),
        string::ascii(),
        string::bit_length(),
        string::levenshtein(),
        string::contains(),
        unicode::translate(),
        unicode::find_in_set(),
        unicode::substr_index(),
        datafusion::functions::core::overlay(),
        regex::regexp_replace(),
        regex::regexp_like(),
        regex::regexp_count(),
        regex::regexp_instr(),
    ]
    .into_iter()
    .collect()
}
