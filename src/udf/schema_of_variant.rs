//! `schema_of_variant(v) -> string`: the Spark type of a Variant value.

use std::sync::{Arc, LazyLock};

use arrow::array::StringBuilder;
use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};

use super::common::{Arrays, any_one, check_variant_arg, for_each_variant, plain_field, unary_doc};
use crate::variant::schema::schema_of;

/// `schema_of_variant(v)`: `BIGINT`, `DECIMAL(2,1)`, `OBJECT<a: BIGINT>`,
/// `ARRAY<VOID>`, ... with Spark's names, key quoting and merge rules; `VOID` for a
/// variant null, NULL for SQL NULL.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SchemaOfVariantFunc {
    signature: Signature,
}

impl SchemaOfVariantFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: any_one(),
        }
    }
}

impl Default for SchemaOfVariantFunc {
    fn default() -> Self {
        Self::new()
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "Returns the Spark SQL type of a VARIANT value: BIGINT, DECIMAL(p,s), DOUBLE, STRING, OBJECT<key: type, ...>, ARRAY<type>, VOID for a variant null; mixed element types merge as in Spark (VARIANT when incompatible).",
        "schema_of_variant(v)",
        "> SELECT schema_of_variant(parse_json('{\"a\": [1, 2.5]}'));\nOBJECT<a: ARRAY<DECIMAL(21,1)>>",
    )
});

impl ScalarUDFImpl for SchemaOfVariantFunc {
    fn name(&self) -> &str {
        "schema_of_variant"
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
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = StringBuilder::new();
        for_each_variant(self.name(), &arrays.arrays[0], |_, v| {
            match v {
                None => out.append_null(),
                Some(v) => out.append_value(schema_of(v).to_string()),
            }
            Ok(())
        })?;
        arrays.finish(Arc::new(out.finish()))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}
