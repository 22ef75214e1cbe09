//! `parse_json(string) -> variant` and `try_parse_json(string) -> variant`.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};

use super::common::{Arrays, check_string_arg};
use crate::array::{VariantColumnBuilder, variant_data_type, variant_field};
use crate::variant::json::{JsonParseOptions, JsonToVariant};
use crate::variant::json_features::{JsonReadFeatures, rewrite};
use crate::variant::shorten;

/// `parse_json(json)` parses JSON text into a Variant (Spark semantics: integers
/// in the smallest width, fractions as decimals, exponents as doubles, duplicate
/// keys an error, content after the first value ignored). `try_parse_json`
/// returns NULL for invalid JSON instead of failing.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ParseJsonFunc {
    signature: Signature,
    safe: bool,
}

impl ParseJsonFunc {
    /// `safe = true` makes `try_parse_json`.
    pub fn new(safe: bool) -> Self {
        Self {
            signature: Signature::one_of(
                vec![
                    TypeSignature::Exact(vec![DataType::Utf8]),
                    TypeSignature::Exact(vec![DataType::Utf8View]),
                    TypeSignature::Exact(vec![DataType::LargeUtf8]),
                    TypeSignature::Exact(vec![DataType::Null]),
                ],
                Volatility::Immutable,
            ),
            safe,
        }
    }
}

static PARSE_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Parses a JSON string into a VARIANT. Integers get the smallest integer width, numbers with a fraction become decimals (trailing zeros stripped), numbers with an exponent become doubles. Duplicate keys and invalid JSON are errors; content after the first complete value is ignored, as in Spark.",
        "parse_json(json)",
    )
    .with_sql_example("> SELECT to_json(parse_json('{\"b\": 1.50, \"a\": [1, null]}'));\n{\"a\":[1,null],\"b\":1.5}")
    .with_argument("json", "A STRING holding JSON text.")
    .build()
});

static TRY_PARSE_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Like parse_json, but returns NULL instead of failing on invalid JSON.",
        "try_parse_json(json)",
    )
    .with_sql_example("> SELECT try_parse_json('{\"a\":1,\"a\":2}') IS NULL;\ntrue")
    .with_argument("json", "A STRING holding JSON text.")
    .build()
});

impl ScalarUDFImpl for ParseJsonFunc {
    fn name(&self) -> &str {
        if self.safe {
            "try_parse_json"
        } else {
            "parse_json"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [arg] = args.arg_fields else {
            return plan_err!("{} takes exactly one argument", self.name());
        };
        check_string_arg(self.name(), 0, arg)?;
        Ok(variant_field(self.name(), true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let result = parse_array(self.name(), &arrays.arrays[0], self.safe, None)?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(if self.safe {
            &TRY_PARSE_DOC
        } else {
            &PARSE_DOC
        })
    }
}

/// Parses each string of `input`: strict JSON as `parse_json` reads it, and,
/// with `features` (`from_json`'s options), what they admit besides.
fn parse_array(
    func: &str,
    input: &ArrayRef,
    safe: bool,
    features: Option<&JsonReadFeatures>,
) -> Result<ArrayRef> {
    let mut builder = VariantColumnBuilder::new(input.len());
    let features = features.filter(|f| f.any());
    let mut parser = JsonToVariant::new(JsonParseOptions {
        allow_nan: features.is_some_and(|f| f.non_numeric_numbers),
        ..JsonParseOptions::default()
    });
    let mut one = |text: Option<&str>| -> Result<()> {
        let Some(text) = text else {
            builder.append_null();
            return Ok(());
        };
        let parsed = parser.parse(text).or_else(|e| {
            // Strict JSON parses first; the rewrite is for text it refused.
            let Some(features) = features else {
                return Err(e);
            };
            let strict = rewrite(text, features);
            if strict == text {
                return Err(e);
            }
            parser.parse(&strict).map_err(|_| e)
        });
        match parsed {
            Ok(()) => builder.append(parser.metadata(), parser.value()),
            Err(_) if safe => builder.append_null(),
            Err(e) => {
                return exec_err!(
                    "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] {func}: invalid JSON {}: {e}",
                    shorten(text)
                );
            }
        }
        Ok(())
    };
    match input.data_type() {
        DataType::Utf8 => {
            for t in input.as_string::<i32>() {
                one(t)?;
            }
        }
        DataType::LargeUtf8 => {
            for t in input.as_string::<i64>() {
                one(t)?;
            }
        }
        DataType::Utf8View => {
            for t in input.as_string_view() {
                one(t)?;
            }
        }
        DataType::Null => {
            for _ in 0..input.len() {
                one(None)?;
            }
        }
        other => return exec_err!("{func}: expected a string argument, found {other}"),
    }
    Ok(Arc::new(builder.finish_struct()))
}

/// `from_json(json, 'variant'[, options])`: Spark's `from_json` with the
/// `variant` schema, which parses like `parse_json` in PERMISSIVE mode (NULL for
/// invalid JSON, the default) or FAILFAST mode (an error). Other schemas are
/// refused when the query is planned: struct parsing is not implemented.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FromJsonFunc {
    signature: Signature,
}

impl FromJsonFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl Default for FromJsonFunc {
    fn default() -> Self {
        Self::new()
    }
}

static FROM_JSON_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Spark's from_json with the 'variant' schema: parses JSON text into a VARIANT as parse_json does, with Spark's JSON reader options (single quotes, NaN and Infinity by default), returning NULL for invalid JSON (mode PERMISSIVE, the default) or failing (mode FAILFAST). Schemas other than 'variant' are not supported.",
        "from_json(json, 'variant'[, options])",
    )
    .with_sql_example("> SELECT to_json(from_json('{\"b\":1,\"a\":2}', 'variant'));\n{\"a\":2,\"b\":1}")
    .with_argument("json", "A STRING holding JSON text.")
    .with_argument("schema", "The literal 'variant'.")
    .with_argument("options", "Optional MAP<STRING, STRING>: 'mode' is 'PERMISSIVE' (default) or 'FAILFAST'; Spark's JSON reader options allowSingleQuotes and allowNonNumericNumbers (true by default), allowUnquotedFieldNames, allowNumericLeadingZeros, allowComments, allowBackslashEscapingAnyCharacter and allowUnquotedControlChars; other options are ignored.")
    .build()
});

/// `from_json`'s options (a map literal, keys in any case): the parse mode,
/// `true` for FAILFAST (DROPMALFORMED is refused, any other mode is
/// PERMISSIVE, as in Spark), and the JSON reader options from Spark's defaults;
/// other keys are ignored.
fn from_json_options(
    options: Option<&datafusion::common::ScalarValue>,
) -> Result<(bool, JsonReadFeatures)> {
    let mut features = JsonReadFeatures::SPARK_DEFAULTS;
    let Some(options) = options else {
        return Ok((false, features));
    };
    let datafusion::common::ScalarValue::Map(map) = options else {
        return plan_err!(
            "from_json: the options must be a MAP literal, found {}",
            options.data_type()
        );
    };
    let entries = map.value(0);
    let keys = arrow::compute::cast(entries.column(0), &DataType::Utf8)?;
    let values = arrow::compute::cast(entries.column(1), &DataType::Utf8)?;
    let (keys, values) = (keys.as_string::<i32>(), values.as_string::<i32>());
    let mut failfast = false;
    for i in 0..keys.len() {
        if keys.is_null(i) || values.is_null(i) {
            continue;
        }
        let (key, value) = (keys.value(i), values.value(i));
        if !key.eq_ignore_ascii_case("mode") {
            if let Err(e) = features.set(key, value) {
                return plan_err!("from_json: {e}");
            }
            continue;
        }
        failfast = match value.to_ascii_uppercase().as_str() {
            "FAILFAST" => true,
            "DROPMALFORMED" => {
                return plan_err!(
                    "[PARSE_MODE_UNSUPPORTED] The function `from_json` doesn't support the DROPMALFORMED mode. Acceptable modes are PERMISSIVE and FAILFAST."
                );
            }
            _ => false,
        };
    }
    Ok((failfast, features))
}

impl ScalarUDFImpl for FromJsonFunc {
    fn name(&self) -> &'static str {
        "from_json"
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
        let n = args.arg_fields.len();
        if !(2..=3).contains(&n) {
            return plan_err!(
                "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `from_json` requires [2, 3] parameters but the actual number is {n}."
            );
        }
        check_string_arg("from_json", 0, &args.arg_fields[0])?;
        match args.scalar_arguments[1]
            .and_then(datafusion::common::ScalarValue::try_as_str)
            .flatten()
        {
            Some(schema) if schema.trim().eq_ignore_ascii_case("variant") => {}
            Some(schema) => {
                return plan_err!(
                    "from_json: only the 'variant' schema is supported (Spark's struct, array and map schemas are not), got {}",
                    shorten(schema)
                );
            }
            None => return plan_err!("from_json: the schema must be the string literal 'variant'"),
        }
        from_json_options(args.scalar_arguments.get(2).copied().flatten())?;
        Ok(variant_field("from_json", true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (failfast, features) = match args.args.get(2) {
            Some(ColumnarValue::Scalar(options)) => from_json_options(Some(options))?,
            Some(ColumnarValue::Array(_)) => {
                return plan_err!("from_json: the options must be a MAP literal");
            }
            None => from_json_options(None)?,
        };
        let arrays = Arrays::new(&args.args[..1], args.number_rows)?;
        let result = parse_array("from_json", &arrays.arrays[0], !failfast, Some(&features))?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&FROM_JSON_DOC)
    }
}
