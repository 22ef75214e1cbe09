//! `to_json(v) -> string` in Spark's exact text format; also of arrays,
//! structs and maps that hold variants.

use std::sync::{Arc, LazyLock};

use arrow::array::StringBuilder;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_datafusion_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};

use super::common::{Arrays, any_one, check_variant_arg, for_each_variant, session_tz, unary_doc};
use crate::array::from_arrow::{ToVariantMode, array_to_variant, check_convertible};
use crate::array::is_variant_field;
use crate::variant::format::write_json;

/// `to_json(v)`: compact JSON with keys sorted, Java-style doubles, decimals
/// without trailing zeros, NaN/Infinity as strings, timestamps in the session
/// time zone. An array, struct or map (holding variants or not) prints as
/// Spark prints it: variants embedded as JSON, struct fields that are SQL NULL
/// left out.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToJsonFunc {
    signature: Signature,
}

impl ToJsonFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: any_one(),
        }
    }
}

impl Default for ToJsonFunc {
    fn default() -> Self {
        Self::new()
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "Renders a VARIANT as JSON text exactly as Spark does: keys sorted, no spaces, doubles printed the Java way (1.0E20), decimals without trailing zeros, NaN/Infinity as strings, timestamps as 'yyyy-MM-dd HH:mm:ss[.f]+hh:mm' in the session time zone. An array, struct or map prints the same way, with its variants embedded and struct fields that are SQL NULL left out.",
        "to_json(v)",
        "> SELECT to_json(parse_json('{\"b\": 1e20, \"a\": 1.50}'));\n{\"a\":1.5,\"b\":1.0E20}",
    )
});

impl ScalarUDFImpl for ToJsonFunc {
    fn name(&self) -> &'static str {
        "to_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [arg] = args.arg_fields else {
            return plan_err!("to_json takes exactly one argument");
        };
        let container = matches!(
            arg.data_type(),
            DataType::List(_)
                | DataType::LargeList(_)
                | DataType::FixedSizeList(_, _)
                | DataType::Map(_, _)
                | DataType::Struct(_)
        );
        if is_variant_field(arg)
            || !container
            || check_convertible(arg.data_type(), ToVariantMode::ToJson).is_err()
        {
            check_variant_arg("to_json", 0, arg)?;
        }
        Ok(Arc::new(Field::new("to_json", DataType::Utf8, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_tz(&args.config_options)?;
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let input = if is_variant_field(&args.arg_fields[0])
            || arrays.arrays[0].data_type() == &DataType::Null
        {
            Arc::clone(&arrays.arrays[0])
        } else {
            super::common::guard("to_json", || {
                array_to_variant(arrays.arrays[0].as_ref(), ToVariantMode::ToJson)
                    .map_err(|e| exec_datafusion_err!("to_json: {e}"))
            })?
        };
        let mut out = StringBuilder::new();
        let mut buf = String::new();
        for_each_variant("to_json", &input, |_, v| {
            match v {
                None => out.append_null(),
                Some(v) => {
                    buf.clear();
                    write_json(v, &tz, &mut buf);
                    out.append_value(&buf);
                }
            }
            Ok(())
        })?;
        arrays.finish(Arc::new(out.finish()))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}
