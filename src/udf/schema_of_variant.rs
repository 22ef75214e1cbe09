//! `schema_of_variant(v) -> string`: the Spark type of a Variant value.

use std::sync::{Arc, LazyLock};

use arrow::array::StringBuilder;
use arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, Documentation, ScalarFunctionArgs};

use super::common::{Arrays, for_each_variant_shape, unary_doc, unary_variant_udf};
use crate::variant::schema::schema_of;

unary_variant_udf!(
    /// `schema_of_variant(v)`: `BIGINT`, `DECIMAL(2,1)`, `OBJECT<a: BIGINT>`,
    /// `ARRAY<VOID>`, ... with Spark's names, key quoting and merge rules; `VOID` for a
    /// variant null, NULL for SQL NULL.
    SchemaOfVariantFunc,
    "schema_of_variant",
    returns = DataType::Utf8,
    nullable = true
);

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "Returns the Spark SQL type of a VARIANT value: BIGINT, DECIMAL(p,s), DOUBLE, STRING, OBJECT<key: type, ...>, ARRAY<type>, VOID for a variant null; mixed element types merge as in Spark (VARIANT when incompatible).",
        "schema_of_variant(v)",
        "> SELECT schema_of_variant(parse_json('{\"a\": [1, 2.5]}'));\nOBJECT<a: ARRAY<DECIMAL(21,1)>>",
    )
});

impl SchemaOfVariantFunc {
    fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = StringBuilder::new();
        for_each_variant_shape("schema_of_variant", &arrays.arrays[0], |_, v| {
            match v {
                None => out.append_null(),
                Some(v) => out.append_value(schema_of(v).to_string()),
            }
            Ok(())
        })?;
        arrays.finish(Arc::new(out.finish()))
    }
}
