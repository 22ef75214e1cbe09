//! `is_variant_null(v) -> boolean`.

use std::sync::{Arc, LazyLock};

use arrow::array::BooleanBuilder;
use arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, Documentation, ScalarFunctionArgs};
use parquet_variant::Variant;

use super::common::{Arrays, for_each_variant_shape, unary_doc, unary_variant_udf};

unary_variant_udf!(
    /// `is_variant_null(v)`: true only for a Variant null; **false** (not NULL) for a
    /// SQL NULL, as in Spark.
    IsVariantNullFunc,
    "is_variant_null",
    returns = DataType::Boolean,
    nullable = false
);

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "True if the VARIANT holds a variant null (JSON null); false for any other value and for SQL NULL.",
        "is_variant_null(v)",
        "> SELECT is_variant_null(parse_json('null')), is_variant_null(NULL::variant);\ntrue false",
    )
});

impl IsVariantNullFunc {
    fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = BooleanBuilder::new();
        for_each_variant_shape("is_variant_null", &arrays.arrays[0], |_, v| {
            out.append_value(matches!(v, Some(Variant::Null)));
            Ok(())
        })?;
        arrays.finish(Arc::new(out.finish()))
    }
}
