//! `variant_get(v, path[, type])` and `try_variant_get(v, path[, type])`.
//!
//! The path is Spark's JSONPath subset ([`crate::variant::path`]); the type is a
//! Spark type string ([`crate::variant::types::SparkType`]). Without a type the
//! result is a VARIANT holding the sub-value (sharing the row's metadata).
//! A missing path gives NULL. A value that cannot be converted is an error in
//! `variant_get` and NULL in `try_variant_get` (inside containers only the failing
//! element becomes NULL). Invalid literal paths and types are rejected when the
//! query is planned, in both functions.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use parquet_variant::{Variant, VariantMetadata};

use super::common::{
    Arrays, check_string_arg, check_variant_arg, guard, literal_string, session_tz, variant_input,
};
use arrow::array::{BinaryViewArray, BinaryViewBuilder, NullBufferBuilder, StructArray};

use crate::array::{
    EMPTY_METADATA, VARIANT_NULL, variant_data_type, variant_field, variant_fields,
};
use crate::variant::cast::{CastOptions, VariantCaster};
use crate::variant::path::{PathSegment, parse_path};
use crate::variant::raw::get_path;
use crate::variant::types::SparkType;
use crate::variant::validate;

/// `variant_get` / `try_variant_get`: one implementation with a `safe` flag.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGetFunc {
    signature: Signature,
    safe: bool,
}

impl VariantGetFunc {
    /// `safe = true` makes `try_variant_get`.
    pub fn new(safe: bool) -> Self {
        Self {
            signature: Signature::one_of(
                vec![TypeSignature::Any(2), TypeSignature::Any(3)],
                Volatility::Immutable,
            ),
            safe,
        }
    }

    /// Whether this is `try_variant_get`.
    pub fn is_safe(&self) -> bool {
        self.safe
    }
}

static GET_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Extracts the value at a JSONPath ($, .key, ['key'], [n]) from a VARIANT and converts it to the given Spark type with Spark's cast rules; without a type it returns a VARIANT. A missing path gives NULL; a value that cannot be converted is an error.",
        "variant_get(v, path[, type])",
    )
    .with_sql_example("> SELECT variant_get(parse_json('{\"a\": {\"b\": \"42\"}}'), '$.a.b', 'int');\n42")
    .with_argument("v", "A VARIANT.")
    .with_argument("path", "A STRING path such as '$.a[0].b'; a literal is checked when the query is planned.")
    .with_argument("type", "Optional literal Spark type: int, bigint, double, decimal(10,2), string, boolean, date, timestamp, timestamp_ntz, binary, array<..>, struct<..>, map<string,..>, variant.")
    .build()
});

static TRY_GET_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "Like variant_get, but a value that cannot be converted gives NULL (inside arrays, structs and maps only the failing element becomes NULL).",
        "try_variant_get(v, path[, type])",
    )
    .with_sql_example("> SELECT try_variant_get(parse_json('\"x\"'), '$', 'int');\nNULL")
    .with_argument("v", "A VARIANT.")
    .with_argument("path", "A STRING path.")
    .with_argument("type", "Optional literal Spark type.")
    .build()
});

/// The target type of a call: `None` means VARIANT.
fn target_type(func: &str, arg: Option<&ScalarValue>) -> Result<Option<SparkType>> {
    let Some(text) = literal_string(func, "the type argument", arg)? else {
        return plan_err!("{func}: the type argument must not be NULL");
    };
    match SparkType::parse(text) {
        Ok(SparkType::Variant) => Ok(None),
        Ok(t) => Ok(Some(t)),
        Err(e) => plan_err!("{func}: {e}"),
    }
}

impl ScalarUDFImpl for VariantGetFunc {
    fn name(&self) -> &str {
        if self.safe {
            "try_variant_get"
        } else {
            "variant_get"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        // return_field_from_args decides; this is only used without literals.
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let func = self.name();
        let n = args.arg_fields.len();
        if !(2..=3).contains(&n) {
            return plan_err!("{func} takes 2 or 3 arguments, got {n}");
        }
        check_variant_arg(func, 0, &args.arg_fields[0])?;
        check_string_arg(func, 1, &args.arg_fields[1])?;
        if let Some(Some(path)) = args.scalar_arguments.get(1)
            && let Some(Some(text)) = path.try_as_str()
            && let Err(e) = parse_path(text)
        {
            return plan_err!("{func}: {e}");
        }
        let target = if n == 3 {
            target_type(func, args.scalar_arguments[2])?
        } else {
            None
        };
        Ok(match target {
            None => variant_field(func, true),
            Some(t) => Arc::new(Field::new(func, t.to_arrow(), true)),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let func = self.name();
        let target = match args.args.get(2) {
            Some(ColumnarValue::Scalar(sv)) => target_type(func, Some(sv))?,
            Some(_) => return exec_err!("{func}: the type argument must be a literal"),
            None => None,
        };
        let options = CastOptions {
            safe: self.safe,
            tz: session_tz(&args.config_options)?,
        };
        let scalar_path = match &args.args[1] {
            ColumnarValue::Scalar(sv) => Some(match sv.try_as_str() {
                Some(Some(text)) => Some(parse_path(text).map_err(|e| {
                    datafusion::error::DataFusionError::Execution(format!("{func}: {e}"))
                })?),
                Some(None) => None,
                None => return exec_err!("{func}: the path must be a string"),
            }),
            ColumnarValue::Array(_) => None,
        };
        let arrays = Arrays::new(&args.args[..2], args.number_rows)?;
        let result = guard(func, || {
            extract(
                func,
                &arrays.arrays,
                scalar_path.as_ref(),
                target.as_ref(),
                options,
            )
        })?;
        arrays.finish(result)
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(if self.safe { &TRY_GET_DOC } else { &GET_DOC })
    }

    /// A call that cannot fail (`variant_get` without a type, `try_variant_get`)
    /// on a column with literal arguments moves towards the scan: DataFusion
    /// lifts it out of filters, sorts and aggregates into a projection right
    /// above the table, where the Parquet reader produces it from the shredded
    /// leaves (`reader::pushdown`). A `variant_get` with a type can fail, so it
    /// stays where it is and errors only for the rows that reach it (after
    /// filters); the analyzer splits it into `variant_get(variant_get(v, p), '$',
    /// t)`, whose inner part moves (`sql::casts`).
    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        let base = args.first().copied();
        if (args.len() == 2 || self.safe)
            && matches!(
                base,
                Some(ExpressionPlacement::Column | ExpressionPlacement::MoveTowardsLeafNodes)
            )
            && args[1..].iter().all(|p| *p == ExpressionPlacement::Literal)
        {
            ExpressionPlacement::MoveTowardsLeafNodes
        } else {
            ExpressionPlacement::KeepInPlace
        }
    }
}

/// Variant output: the sub-values; the metadata column is the input's, shared.
struct SubValues {
    values: BinaryViewBuilder,
    nulls: NullBufferBuilder,
}

impl SubValues {
    fn finish(&mut self, metadata: Option<BinaryViewArray>) -> Result<ArrayRef> {
        let values = self.values.finish();
        let nulls = self.nulls.finish();
        let metadata = match metadata {
            Some(m) => m,
            None => BinaryViewArray::from(vec![EMPTY_METADATA; values.len()]),
        };
        let fields = variant_fields();
        Ok(Arc::new(StructArray::try_new(
            fields,
            vec![Arc::new(metadata), Arc::new(values)],
            nulls,
        )?))
    }
}

/// Where the output goes: a Variant column, or a typed caster. One exists per
/// batch, so the size difference of the variants does not matter.
#[allow(clippy::large_enum_variant)]
enum Output {
    Variant(SubValues),
    Typed(VariantCaster),
}

impl Output {
    fn append_null(&mut self) {
        match self {
            Output::Variant(b) => {
                b.values.append_value(VARIANT_NULL);
                b.nulls.append_null();
            }
            Output::Typed(c) => c.append_null(),
        }
    }
}

/// Extracts one path per row. `scalar_path`: `Some(None)` is a NULL literal path,
/// `Some(Some(p))` a literal path, `None` a path column.
fn extract(
    func: &str,
    arrays: &[ArrayRef],
    scalar_path: Option<&Option<Vec<PathSegment>>>,
    target: Option<&SparkType>,
    options: CastOptions,
) -> Result<ArrayRef> {
    let rows = arrays[0].len();
    let mut out = match target {
        None => Output::Variant(SubValues {
            values: BinaryViewBuilder::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
        }),
        Some(t) => Output::Typed(VariantCaster::new(t, options, rows)),
    };
    let input = variant_input(func, &arrays[0])?;
    let path_column = if scalar_path.is_none() {
        Some(arrow::compute::cast(&arrays[1], &DataType::Utf8View)?)
    } else {
        None
    };
    let path_strings = path_column.as_ref().map(|a| a.as_string_view());
    let mut row_path: Vec<PathSegment>;
    // Rows of one document shape carry identical metadata bytes, and a column
    // usually mixes a few shapes: the checked dictionaries of the last few
    // distinct metadata are kept and reused when the bytes match.
    let mut dicts = DictCache::default();
    for row in 0..rows {
        let path: &[PathSegment] = match scalar_path {
            Some(Some(p)) => p,
            Some(None) => {
                out.append_null();
                continue;
            }
            None => {
                let strings =
                    path_strings.expect("path column exists when the path is not a literal");
                if strings.is_null(row) {
                    out.append_null();
                    continue;
                }
                row_path = parse_path(strings.value(row))
                    .map_err(|e| exec_datafusion_err!("{func}: {e}"))?;
                &row_path
            }
        };
        let Some((metadata, value)) = input.as_ref().and_then(|i| i.get(row)) else {
            out.append_null();
            continue;
        };
        // Only the metadata and the bytes on the path are checked (the rest of the
        // row is never read), which keeps extraction proportional to the path.
        let malformed = |e: validate::MalformedVariant| exec_datafusion_err!("{func}: {e}");
        let dict = dicts.get(metadata).map_err(malformed)?;
        let Some(sub) = get_path(dict, value, path).map_err(malformed)? else {
            out.append_null();
            continue;
        };
        let len = validate::check_value_with(sub, dict).map_err(malformed)?;
        let sub = &sub[..len];
        match &mut out {
            Output::Variant(b) => {
                b.values.append_value(sub);
                b.nulls.append_non_null();
            }
            Output::Typed(c) => {
                if c.try_append_raw(sub) {
                    continue;
                }
                let v = Variant::new_with_metadata(VariantMetadata::new(metadata), sub);
                if let Err(e) = c.append_variant(&v) {
                    return exec_err!("{func}: {e}");
                }
            }
        }
    }
    match &mut out {
        Output::Variant(b) => {
            let metadata = input.as_ref().map(|i| i.metadata_view()).transpose()?;
            b.finish(metadata)
        }
        Output::Typed(c) => Ok(c.finish()),
    }
}

/// Checked metadata dictionaries of the last few distinct metadata byte strings
/// of a column (see `extract`).
#[derive(Default)]
struct DictCache<'m> {
    entries: Vec<(&'m [u8], Vec<&'m str>)>,
    last: usize,
    next_victim: usize,
}

impl<'m> DictCache<'m> {
    const SIZE: usize = 8;

    /// The dictionary of `metadata`, checked once per distinct bytes held.
    fn get(&mut self, metadata: &'m [u8]) -> Result<&[&'m str], validate::MalformedVariant> {
        let hit = |m: &&[u8]| m.len() == metadata.len() && *m == metadata;
        if !self.entries.get(self.last).is_some_and(|(m, _)| hit(m)) {
            match self.entries.iter().position(|(m, _)| hit(m)) {
                Some(i) => self.last = i,
                None => {
                    let mut dict = Vec::new();
                    validate::check_metadata_into(metadata, &mut dict)?;
                    if self.entries.len() < Self::SIZE {
                        self.entries.push((metadata, dict));
                        self.last = self.entries.len() - 1;
                    } else {
                        self.last = self.next_victim;
                        self.entries[self.last] = (metadata, dict);
                        self.next_victim = (self.next_victim + 1) % Self::SIZE;
                    }
                }
            }
        }
        Ok(&self.entries[self.last].1)
    }
}

/// `variant_get(column, '$', target)` over a whole Variant column, for readers
/// that have already located the sub-values (the shredded pushdown of
/// `reader::pushdown`). Same conversions, errors and guard as the function.
pub(crate) fn extract_root(
    func: &str,
    column: &ArrayRef,
    target: Option<&SparkType>,
    options: CastOptions,
) -> Result<ArrayRef> {
    let root: Option<Vec<PathSegment>> = Some(Vec::new());
    guard(func, || {
        extract(
            func,
            std::slice::from_ref(column),
            Some(&root),
            target,
            options,
        )
    })
}
