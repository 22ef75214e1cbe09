//! Structure helpers: `variant_typeof(v)`, `variant_object_keys(v)` and
//! `variant_array_length(v)` — what Snowflake (`TYPEOF`, `OBJECT_KEYS`,
//! `ARRAY_SIZE`) and DuckDB (`variant_typeof`, `json_keys`, `json_array_length`)
//! users reach for. Spark 4.3 has no such functions for VARIANT; the type names are
//! those of `schema_of_variant` at the top level.

use std::sync::{Arc, LazyLock};

use arrow::array::{Int32Builder, ListBuilder, StringBuilder};
use arrow::datatypes::{DataType, Field};
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, Documentation, ScalarFunctionArgs};
use parquet_variant::Variant;

use super::common::{Arrays, for_each_variant_shape, unary_doc, unary_variant_udf};
use crate::variant::schema::schema_of;

unary_variant_udf!(
    /// `variant_typeof(v)`: the type of the top-level value, as `schema_of_variant`
    /// names it but without the structure of objects and arrays (`OBJECT`, `ARRAY`,
    /// `BIGINT`, `DECIMAL(2,1)` for 1.50, `STRING`, `VOID` for a variant null, ...).
    VariantTypeofFunc,
    "variant_typeof",
    returns = DataType::Utf8,
    nullable = true
);

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "The type name of the top-level value of a VARIANT (OBJECT, ARRAY, BIGINT, DECIMAL(p,s), DOUBLE, STRING, BOOLEAN, DATE, TIMESTAMP, VOID for a variant null, ...); NULL for SQL NULL.",
        "variant_typeof(v)",
        "> SELECT variant_typeof(parse_json('{\"a\": 1}')), variant_typeof(parse_json('1.50'));\nOBJECT DECIMAL(2,1)",
    )
});

impl VariantTypeofFunc {
    fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = StringBuilder::new();
        for_each_variant_shape("variant_typeof", &arrays.arrays[0], |_, v| {
            match v {
                None => out.append_null(),
                Some(Variant::Object(_)) => out.append_value("OBJECT"),
                Some(Variant::List(_)) => out.append_value("ARRAY"),
                Some(v) => out.append_value(schema_of(v).to_string()),
            }
            Ok(())
        })?;
        arrays.finish(Arc::new(out.finish()))
    }
}

pub use keys::VariantObjectKeysFunc;
pub use length::VariantArrayLengthFunc;

mod keys {
    use super::{
        Arc, Arrays, ColumnarValue, DataType, Documentation, Field, LazyLock, ListBuilder, Result,
        ScalarFunctionArgs, StringBuilder, Variant, for_each_variant_shape, unary_doc,
        unary_variant_udf,
    };

    unary_variant_udf!(
        /// `variant_object_keys(v)`: the keys of an object, in the Variant's (sorted)
        /// order; NULL for other values.
        VariantObjectKeysFunc,
        "variant_object_keys",
        returns = DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
        nullable = true
    );

    static DOC: LazyLock<Documentation> = LazyLock::new(|| {
        unary_doc(
            "The keys of a VARIANT object as an array of strings, sorted as the Variant stores them; NULL when the value is not an object or is SQL NULL.",
            "variant_object_keys(v)",
            "> SELECT variant_object_keys(parse_json('{\"b\": 1, \"a\": {\"c\": 2}}'));\n[a, b]",
        )
    });

    impl VariantObjectKeysFunc {
        fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let arrays = Arrays::new(&args.args, args.number_rows)?;
            let mut out = ListBuilder::new(StringBuilder::new());
            for_each_variant_shape("variant_object_keys", &arrays.arrays[0], |_, v| {
                match v {
                    Some(Variant::Object(o)) => {
                        for (name, _) in o.iter() {
                            out.values().append_value(name);
                        }
                        out.append(true);
                    }
                    _ => out.append_null(),
                }
                Ok(())
            })?;
            arrays.finish(Arc::new(out.finish()))
        }
    }
}

mod length {
    use super::{
        Arc, Arrays, ColumnarValue, DataType, Documentation, Int32Builder, LazyLock, Result,
        ScalarFunctionArgs, Variant, for_each_variant_shape, unary_doc, unary_variant_udf,
    };

    unary_variant_udf!(
        /// `variant_array_length(v)`: the number of elements of an array; NULL for
        /// other values.
        VariantArrayLengthFunc,
        "variant_array_length",
        returns = DataType::Int32,
        nullable = true
    );

    static DOC: LazyLock<Documentation> = LazyLock::new(|| {
        unary_doc(
            "The number of elements of a VARIANT array; NULL when the value is not an array or is SQL NULL.",
            "variant_array_length(v)",
            "> SELECT variant_array_length(parse_json('[1, [2, 3]]')), variant_array_length(parse_json('{}'));\n2 NULL",
        )
    });

    impl VariantArrayLengthFunc {
        fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let arrays = Arrays::new(&args.args, args.number_rows)?;
            let mut out = Int32Builder::new();
            for_each_variant_shape("variant_array_length", &arrays.arrays[0], |_, v| {
                match v {
                    Some(Variant::List(l)) => out.append_value(l.len() as i32),
                    _ => out.append_null(),
                }
                Ok(())
            })?;
            arrays.finish(Arc::new(out.finish()))
        }
    }
}
