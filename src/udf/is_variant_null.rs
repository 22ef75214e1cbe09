//! `is_variant_null(v) -> boolean`.

use std::sync::{Arc, LazyLock};

use arrow::array::BooleanBuilder;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};
use parquet_variant::Variant;

use super::common::{Arrays, any_one, check_variant_arg, for_each_variant, unary_doc};

/// `is_variant_null(v)`: true only for a Variant null; **false** (not NULL) for a
/// SQL NULL, as in Spark.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct IsVariantNullFunc {
    signature: Signature,
}

impl IsVariantNullFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: any_one(),
        }
    }
}

impl Default for IsVariantNullFunc {
    fn default() -> Self {
        Self::new()
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "True if the VARIANT holds a variant null (JSON null); false for any other value and for SQL NULL.",
        "is_variant_null(v)",
        "> SELECT is_variant_null(parse_json('null')), is_variant_null(NULL::variant);\ntrue false",
    )
});

impl ScalarUDFImpl for IsVariantNullFunc {
    fn name(&self) -> &str {
        "is_variant_null"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [arg] = args.arg_fields else {
            return plan_err!("{} takes exactly one argument", self.name());
        };
        check_variant_arg(self.name(), 0, arg)?;
        Ok(Arc::new(Field::new(self.name(), DataType::Boolean, false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let mut out = BooleanBuilder::new();
        for_each_variant(self.name(), &arrays.arrays[0], |_, v| {
            out.append_value(matches!(v, Some(Variant::Null)));
            Ok(())
        })?;
        arrays.finish(Arc::new(out.finish()))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}
