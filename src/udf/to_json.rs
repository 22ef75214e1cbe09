//! `to_json(v) -> string` in Spark's exact text format.

use std::sync::{Arc, LazyLock};

use arrow::array::StringBuilder;
use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};

use super::common::{
    Arrays, any_one, check_variant_arg, for_each_variant, plain_field, session_tz, unary_doc,
};
use crate::variant::format::write_json;

/// `to_json(v)`: compact JSON with keys sorted, Java-style doubles, decimals
/// without trailing zeros, NaN/Infinity as strings, timestamps in the session
/// time zone.
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
        "Renders a VARIANT as JSON text exactly as Spark does: keys sorted, no spaces, doubles printed the Java way (1.0E20), decimals without trailing zeros, NaN/Infinity as strings, timestamps as 'yyyy-MM-dd HH:mm:ss[.f]+hh:mm' in the session time zone.",
        "to_json(v)",
        "> SELECT to_json(parse_json('{\"b\": 1e20, \"a\": 1.50}'));\n{\"a\":1.5,\"b\":1.0E20}",
    )
});

impl ScalarUDFImpl for ToJsonFunc {
    fn name(&self) -> &str {
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
            return plan_err!("{} takes exactly one argument", self.name());
        };
        check_variant_arg(self.name(), 0, arg)?;
        Ok(plain_field(self.name(), DataType::Utf8))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_tz(&args.config_options)?;
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = StringBuilder::new();
        let mut buf = String::new();
        for_each_variant(self.name(), &arrays.arrays[0], |_, v| {
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
