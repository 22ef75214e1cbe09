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
        let result = parse_array(self.name(), &arrays.arrays[0], self.safe)?;
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

fn parse_array(func: &str, input: &ArrayRef, safe: bool) -> Result<ArrayRef> {
    let mut builder = VariantColumnBuilder::new(input.len());
    let mut parser = JsonToVariant::new(JsonParseOptions::default());
    let mut one = |text: Option<&str>| -> Result<()> {
        let Some(text) = text else {
            builder.append_null();
            return Ok(());
        };
        match parser.parse(text) {
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
