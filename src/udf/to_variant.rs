//! `to_variant_object(x) -> variant` and `cast_to_variant(x) -> variant` (what
//! `CAST(x AS VARIANT)` plans to).

use std::sync::LazyLock;

use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, exec_datafusion_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};

use super::common::{Arrays, any_one, guard};
use crate::array::from_arrow::{ToVariantMode, array_to_variant, check_convertible};
use crate::array::{is_variant_field, variant_data_type, variant_field};

/// Converts SQL values into VARIANT with Spark's rules: `cast` mode accepts
/// scalars and arrays; `to_variant_object` mode accepts structs, maps and arrays of
/// them.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToVariantFunc {
    signature: Signature,
    mode: Mode,
}

#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Mode {
    Cast,
    Object,
}

impl ToVariantFunc {
    /// `cast_to_variant(x)`: the function behind `CAST(x AS VARIANT)`.
    pub fn cast() -> Self {
        Self {
            signature: any_one(),
            mode: Mode::Cast,
        }
    }

    /// `to_variant_object(x)`.
    pub fn to_variant_object() -> Self {
        Self {
            signature: any_one(),
            mode: Mode::Object,
        }
    }

    fn arrow_mode(&self) -> ToVariantMode {
        match self.mode {
            Mode::Cast => ToVariantMode::Cast,
            Mode::Object => ToVariantMode::ToVariantObject,
        }
    }
}

static CAST_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Converts a scalar or an array into a VARIANT (the function behind CAST(x AS VARIANT)). Decimals lose trailing zeros; structs and maps need to_variant_object.",
        "cast_to_variant(x)",
    )
    .with_sql_example("> SELECT to_json(CAST(1.50 AS VARIANT));\n1.5")
    .with_argument("x", "A scalar or an array of scalars or variants.")
    .build()
});

static OBJECT_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Converts a struct, a map with string keys, or an array of them into a VARIANT object (or array of objects).",
        "to_variant_object(x)",
    )
    .with_sql_example("> SELECT to_json(to_variant_object(named_struct('a', 1, 'b', 'x')));\n{\"a\":1,\"b\":\"x\"}")
    .with_argument("x", "A STRUCT, MAP<STRING, ...> or ARRAY of them.")
    .build()
});

impl ScalarUDFImpl for ToVariantFunc {
    fn name(&self) -> &str {
        match self.mode {
            Mode::Cast => "cast_to_variant",
            Mode::Object => "to_variant_object",
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
        if !(self.mode == Mode::Cast && is_variant_field(arg))
            && let Err(e) = check_convertible(arg.data_type(), self.arrow_mode())
        {
            return plan_err!("{}: {e}", self.name());
        }
        Ok(variant_field(self.name(), true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let input = &arrays.arrays[0];
        if self.mode == Mode::Cast && is_variant_field(&args.arg_fields[0]) {
            return Ok(args.args[0].clone());
        }
        let result = guard(self.name(), || {
            array_to_variant(input.as_ref(), self.arrow_mode())
                .map_err(|e| exec_datafusion_err!("{}: {e}", self.name()))
        })?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(match self.mode {
            Mode::Cast => &CAST_DOC,
            Mode::Object => &OBJECT_DOC,
        })
    }
}
