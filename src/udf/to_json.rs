//! `to_json(v) -> string` in Spark's exact text format.

use std::sync::{Arc, LazyLock};

use arrow::array::StringBuilder;
use arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, Documentation, ScalarFunctionArgs};

use super::common::{Arrays, for_each_variant, session_tz, unary_doc, unary_variant_udf};
use crate::variant::format::write_json;

unary_variant_udf!(
    /// `to_json(v)`: compact JSON with keys sorted, Java-style doubles, decimals
    /// without trailing zeros, NaN/Infinity as strings, timestamps in the session
    /// time zone.
    ToJsonFunc,
    "to_json",
    returns = DataType::Utf8,
    nullable = true
);

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "Renders a VARIANT as JSON text exactly as Spark does: keys sorted, no spaces, doubles printed the Java way (1.0E20), decimals without trailing zeros, NaN/Infinity as strings, timestamps as 'yyyy-MM-dd HH:mm:ss[.f]+hh:mm' in the session time zone.",
        "to_json(v)",
        "> SELECT to_json(parse_json('{\"b\": 1e20, \"a\": 1.50}'));\n{\"a\":1.5,\"b\":1.0E20}",
    )
});

impl ToJsonFunc {
    fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_tz(&args.config_options)?;
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = StringBuilder::new();
        let mut buf = String::new();
        for_each_variant("to_json", &arrays.arrays[0], |_, v| {
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
}
