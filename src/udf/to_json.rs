//! `to_json(v) -> string` in Spark's exact text format; also of arrays,
//! structs and maps that hold variants.

use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_datafusion_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};

use super::common::{Arrays, any_one, check_variant_arg, session_tz, unary_doc};
use crate::array::from_arrow::{ToVariantMode, array_to_variant, check_convertible};
use crate::array::is_variant_field;
use crate::variant::format::{
    write_cast_string, write_cast_string_checked, write_json, write_json_checked, write_json_string,
};
use crate::variant::tz::SessionTz;

/// `to_json(v)`: compact JSON with keys sorted, Java-style doubles, decimals
/// without trailing zeros, NaN/Infinity as strings, timestamps in the session
/// time zone. An array, struct or map (holding variants or not) prints as
/// Spark prints it: variants embedded as JSON, struct fields and map entries in
/// their own order, struct fields that are SQL NULL left out.
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
        "Renders a VARIANT as JSON text exactly as Spark does: keys sorted, no spaces, doubles printed the Java way (1.0E20), decimals without trailing zeros, NaN/Infinity as strings, timestamps as 'yyyy-MM-dd HH:mm:ss[.f]+hh:mm' in the session time zone. An array, struct or map prints the same way, with its variants embedded, struct fields and map entries in their own order, and struct fields that are SQL NULL left out.",
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
        let container = is_container(arg.data_type());
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
        let input = &arrays.arrays[0];
        let texts = if is_variant_field(&args.arg_fields[0]) || input.data_type() == &DataType::Null
        {
            return arrays.finish(Arc::new(variant_json(input, &tz)?));
        } else {
            // Struct fields and map entries keep their order, as in Spark.
            super::common::guard("to_json", || render(input, &tz, Style::Json))?
        };
        arrays.finish(Arc::new(StringArray::from(texts)))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// `to_spark_string(x)`: the text Spark's `CAST(x AS STRING)` gives for an
/// array, struct or map, `[1, null]`, `{1, x}` (struct fields by position),
/// `{a -> 1.0}`, with variants inside as their JSON and timestamps in the
/// session time zone. `CAST(x AS STRING)` of a container holding variants
/// (and in Spark mode of any container) is rewritten into it.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToSparkStringFunc {
    signature: Signature,
}

impl ToSparkStringFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: any_one(),
        }
    }
}

impl Default for ToSparkStringFunc {
    fn default() -> Self {
        Self::new()
    }
}

static SPARK_STRING_DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        super::DOC_SECTION,
        "The text Spark's CAST(x AS STRING) gives for an array, struct or map: elements separated by ', ', struct fields by position in braces, map entries as 'key -> value', NULL elements as null, strings bare, variants as their JSON, timestamps in the session time zone. CAST(x AS STRING) of an array, struct or map holding variants, and in Spark mode of any one, runs this function.".to_string(),
        "to_spark_string(x)".to_string(),
    )
    .with_sql_example(
        "> SELECT to_spark_string(named_struct('a', 1, 'b', parse_json('{\"x\":\"s\"}')));\n{1, {\"x\":\"s\"}}".to_string(),
    )
    .with_argument("x", "An array, struct or map.")
    .build()
});

impl ScalarUDFImpl for ToSparkStringFunc {
    fn name(&self) -> &'static str {
        "to_spark_string"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [arg] = args.arg_fields else {
            return plan_err!("to_spark_string takes exactly one argument");
        };
        if !is_container(arg.data_type()) || is_variant_field(arg) {
            return plan_err!(
                "to_spark_string: argument 1 must be an ARRAY, STRUCT or MAP, found {}",
                arg.data_type()
            );
        }
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_tz(&args.config_options)?;
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let texts =
            super::common::guard(self.name(), || render(&arrays.arrays[0], &tz, Style::Text))?;
        arrays.finish(Arc::new(StringArray::from(texts)))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&SPARK_STRING_DOC)
    }
}

/// Whether `dt` is an array, struct or map (a VARIANT is a struct too).
pub(crate) fn is_container(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(_, _)
            | DataType::Map(_, _)
            | DataType::Struct(_)
    )
}

/// The JSON text of each row of a VARIANT column, or of any other leaf (a
/// value converted as `CAST(x AS VARIANT)` would convert it).
fn leaf_json(array: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    let variants = if crate::array::is_variant_type(array.data_type())
        || array.data_type() == &DataType::Null
    {
        Arc::clone(array)
    } else {
        array_to_variant(array.as_ref(), ToVariantMode::Cast)
            .map_err(|e| exec_datafusion_err!("to_json: {e}"))?
    };
    let mut out = Vec::with_capacity(array.len());
    each_json(&variants, tz, |text| out.push(text.map(str::to_string)))?;
    Ok(out)
}

/// `to_json` of a VARIANT column as a string array.
fn variant_json(variants: &ArrayRef, tz: &SessionTz) -> Result<StringArray> {
    // Sized before the first row from the values' bytes: JSON repeats the keys
    // that the binary keeps once in its metadata. Growing from nothing copied
    // the text about twice over (a tenth of `sum(length(to_json(v)))`).
    let out = std::cell::RefCell::new(arrow::array::StringBuilder::new());
    each_text_sized(
        variants,
        tz,
        Style::Json,
        |value_bytes| {
            let text = value_bytes.saturating_mul(2).min(i32::MAX as usize);
            *out.borrow_mut() = arrow::array::StringBuilder::with_capacity(variants.len(), text);
        },
        |text| out.borrow_mut().append_option(text),
    )?;
    Ok(out.into_inner().finish())
}

/// Calls `f` with the JSON text of each row of a VARIANT column (`None` for SQL
/// NULL), as `to_json` prints it. Each row's bytes are checked once, then written
/// straight from them ([`write_json_checked`]); the metadata dictionaries of the
/// last few distinct metadata are checked once however many rows share them.
/// Dates and timestamps past chrono's years print too (`"+5881580-07-11"`).
///
/// # Errors
/// When the column is not a VARIANT or a row's bytes are malformed.
pub fn each_json(variants: &ArrayRef, tz: &SessionTz, f: impl FnMut(Option<&str>)) -> Result<()> {
    each_text(variants, tz, Style::Json, f)
}

/// [`each_json`] in `style`: JSON, or Spark's `CAST(v AS STRING)` text.
fn each_text(
    variants: &ArrayRef,
    tz: &SessionTz,
    style: Style,
    f: impl FnMut(Option<&str>),
) -> Result<()> {
    each_text_sized(variants, tz, style, |_| {}, f)
}

/// [`each_text`], first calling `sized` with the bytes of all rows' values.
fn each_text_sized(
    variants: &ArrayRef,
    tz: &SessionTz,
    style: Style,
    sized: impl FnOnce(usize),
    mut f: impl FnMut(Option<&str>),
) -> Result<()> {
    let func = match style {
        Style::Json => "to_json",
        Style::Text => "to_spark_string",
    };
    super::common::guard(func, || {
        let Some(input) = super::common::variant_input(func, variants)? else {
            (0..variants.len()).for_each(|_| f(None));
            return Ok(());
        };
        sized(input.value_bytes());
        let malformed =
            |e: crate::variant::validate::MalformedVariant| exec_datafusion_err!("{func}: {e}");
        let mut dicts = crate::array::get::DictCache::default();
        let mut buf = String::new();
        for row in 0..variants.len() {
            let Some((metadata, value)) = input.get(row) else {
                f(None);
                continue;
            };
            buf.clear();
            let dict = dicts.get(metadata).map_err(malformed)?;
            // Dates and timestamps past chrono's years are accepted: the raw
            // writer prints them without parquet-variant.
            let (len, _) =
                crate::variant::validate::check_value_wide(value, dict).map_err(malformed)?;
            let value = &value[..len];
            let written = match style {
                Style::Json => write_json_checked(dict, value, tz, &mut buf),
                Style::Text => match write_cast_string_checked(dict, value, tz, &mut buf) {
                    Some(true) => true,
                    Some(false) => {
                        // A variant null: SQL NULL.
                        f(None);
                        continue;
                    }
                    None => false,
                },
            };
            if !written {
                // Not reached for checked bytes; the decoder's path says what is wrong.
                let v = super::common::decode_row(func, metadata, value)?;
                match style {
                    Style::Json => write_json(&v, tz, &mut buf),
                    Style::Text => {
                        if !write_cast_string(&v, tz, &mut buf) {
                            f(None);
                            continue;
                        }
                    }
                }
            }
            f(Some(&buf));
        }
        Ok(())
    })
}

/// How [`render`] prints an array, struct or map.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Spark's `to_json`: `[1,"x"]`, `{"a":1}` with SQL NULL fields left out,
    /// map keys as JSON strings.
    Json,
    /// Spark's `CAST(x AS STRING)`: `[1, x]`, `{1, null}` (struct fields by
    /// position), `{k -> v}`; strings bare, variants as their JSON.
    Text,
}

/// The text of each row of an array, struct or map (holding variants or not)
/// in `style`: elements and map entries in order, struct fields in schema
/// order, a NULL element or map value as `null`. A NULL row is `None`.
fn render(array: &ArrayRef, tz: &SessionTz, style: Style) -> Result<Vec<Option<String>>> {
    use arrow::array::{Array, AsArray};
    let valid = |i: usize| array.is_valid(i);
    let (comma, arrow) = match style {
        Style::Json => (",", ":"),
        Style::Text => (", ", " -> "),
    };
    Ok(match array.data_type() {
        t if crate::array::is_variant_type(t) => leaf_json(array, tz)?,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => {
            let (values, ranges) = list_ranges(array);
            let elements = render(&values, tz, style)?;
            ranges
                .into_iter()
                .enumerate()
                .map(|(i, (a, b))| {
                    valid(i).then(|| {
                        let items: Vec<&str> = elements[a..b]
                            .iter()
                            .map(|e| e.as_deref().unwrap_or("null"))
                            .collect();
                        format!("[{}]", items.join(comma))
                    })
                })
                .collect()
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let children = s
                .columns()
                .iter()
                .map(|c| render(c, tz, style))
                .collect::<Result<Vec<_>>>()?;
            // to_json names each field and leaves SQL NULL fields out; the
            // cast prints every field by position.
            let names: Vec<Option<String>> = fields
                .iter()
                .map(|f| {
                    (style == Style::Json).then(|| {
                        let mut name = String::new();
                        write_json_string(f.name(), &mut name);
                        name
                    })
                })
                .collect();
            (0..s.len())
                .map(|i| {
                    valid(i).then(|| {
                        let parts: Vec<String> = names
                            .iter()
                            .zip(&children)
                            .filter_map(|(name, c)| match (name, c[i].as_deref()) {
                                (Some(name), Some(v)) => Some(format!("{name}:{v}")),
                                (Some(_), None) => None,
                                (None, v) => Some(v.unwrap_or("null").to_string()),
                            })
                            .collect();
                        format!("{{{}}}", parts.join(comma))
                    })
                })
                .collect()
        }
        DataType::Map(_, _) => {
            let m = array.as_map();
            let keys = match style {
                Style::Json => json_map_keys(m.keys(), tz)?,
                Style::Text => render(m.keys(), tz, style)?,
            };
            let values = render(m.values(), tz, style)?;
            let o = m.value_offsets();
            (0..m.len())
                .map(|i| {
                    valid(i).then(|| {
                        let (a, b) = (o[i] as usize, o[i + 1] as usize);
                        let parts: Vec<String> = (a..b)
                            .map(|j| {
                                let key = keys[j].as_deref().unwrap_or("null");
                                let value = values[j].as_deref().unwrap_or("null");
                                format!("{key}{arrow}{value}")
                            })
                            .collect();
                        format!("{{{}}}", parts.join(comma))
                    })
                })
                .collect()
        }
        DataType::Timestamp(_, zone) if style == Style::Json => {
            // Microseconds, as Spark keeps them (the same zone: the same instants).
            micros(array)?
                .iter()
                .map(|v| v.and_then(|m| json_timestamp(m, zone.is_some(), tz)))
                .collect()
        }
        _ if style == Style::Json => leaf_json(array, tz)?,
        _ => leaf_text(array, tz)?,
    })
}

/// A timestamp column as microseconds since the epoch.
fn micros(array: &ArrayRef) -> Result<arrow::array::TimestampMicrosecondArray> {
    use arrow::array::AsArray;
    let DataType::Timestamp(_, zone) = array.data_type() else {
        return datafusion::common::internal_err!("micros of {}", array.data_type());
    };
    let cast = arrow::compute::cast(
        array,
        &DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, zone.clone()),
    )?;
    Ok(cast
        .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
        .clone())
}

/// The map keys of a `to_json` object, each a JSON string: keys print as
/// Spark's `to_json` prints them, a string as itself, a number or boolean as its
/// text (`{"1":2}`, `{"1.0E20":1}`), a DATE as its day number (`{"18262":1}`),
/// a DECIMAL with its scale (`{"1.50":1}`) and a TIMESTAMP as its microseconds
/// since the epoch, which is what Spark holds for each.
fn json_map_keys(keys: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    use arrow::compute::cast;
    // What Spark holds for the key, as a number's text.
    let held: Option<ArrayRef> = match keys.data_type() {
        DataType::Date32 | DataType::Date64 => {
            Some(cast(&cast(keys, &DataType::Date32)?, &DataType::Int32)?)
        }
        DataType::Timestamp(_, _) => Some(cast(
            &(Arc::new(micros(keys)?) as ArrayRef),
            &DataType::Int64,
        )?),
        t if t.is_decimal() => Some(Arc::clone(keys)),
        _ => None,
    };
    let texts = match held {
        Some(held) => utf8_texts(&held)?,
        None => render(keys, tz, Style::Json)?,
    };
    // A string key is already a JSON string; anything else becomes one.
    Ok(texts
        .into_iter()
        .map(|k| {
            k.map(|k| {
                if k.starts_with('"') {
                    k
                } else {
                    let mut quoted = String::new();
                    write_json_string(&k, &mut quoted);
                    quoted
                }
            })
        })
        .collect())
}

/// Each row of `array` as Arrow's cast to text prints it.
fn utf8_texts(array: &ArrayRef) -> Result<Vec<Option<String>>> {
    use arrow::array::AsArray;
    let utf8 = arrow::compute::cast(array, &DataType::Utf8)?;
    Ok(utf8
        .as_string::<i32>()
        .iter()
        .map(|t| t.map(str::to_string))
        .collect())
}

/// The text of each row of a column that is not a container, as Spark's
/// `CAST(x AS STRING)` prints it: strings as they are, decimals with their
/// scale, other values through the variant cast, whose text is Spark's
/// (`2024-01-15 10:20:30` in the session time zone, `1.0E20`, binary as its
/// bytes read as UTF-8). A type the variant cast does not take (intervals)
/// prints as Arrow prints it.
fn leaf_text(array: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    use arrow::array::Array;
    match array.data_type() {
        DataType::Null => Ok(vec![None; array.len()]),
        DataType::Dictionary(_, value) => {
            let plain = arrow::compute::cast(array, value)?;
            render(&plain, tz, Style::Text)
        }
        t if t.is_string() || t.is_decimal() => utf8_texts(array),
        _ => {
            let Ok(variants) = array_to_variant(array.as_ref(), ToVariantMode::Cast) else {
                return utf8_texts(array);
            };
            let mut out = Vec::with_capacity(array.len());
            each_text(&variants, tz, Style::Text, |text| {
                out.push(text.map(str::to_string));
            })?;
            Ok(out)
        }
    }
}

/// The values of a list array and each row's range in them.
fn list_ranges(array: &ArrayRef) -> (ArrayRef, Vec<(usize, usize)>) {
    use arrow::array::{Array, AsArray};
    fn offsets<O: arrow::array::OffsetSizeTrait>(
        l: &arrow::array::GenericListArray<O>,
    ) -> (ArrayRef, Vec<(usize, usize)>) {
        let ranges = l
            .value_offsets()
            .windows(2)
            .map(|w| (w[0].as_usize(), w[1].as_usize()))
            .collect();
        (Arc::clone(l.values()), ranges)
    }
    match array.data_type() {
        DataType::List(_) => offsets(array.as_list::<i32>()),
        DataType::LargeList(_) => offsets(array.as_list::<i64>()),
        _ => {
            let l = array.as_fixed_size_list();
            let n = l.value_length() as usize;
            (
                Arc::clone(l.values()),
                (0..l.len()).map(|i| (i * n, (i + 1) * n)).collect(),
            )
        }
    }
}

/// A TIMESTAMP (with a zone: `with_zone`) or TIMESTAMP_NTZ field as Spark's
/// JSON writer prints it by default (`yyyy-MM-dd'T'HH:mm:ss[.SSS]XXX`):
/// `"2024-01-01T00:00:00.000Z"`, `"2024-01-01T02:00:00.000+02:00"` in the
/// session time zone; without a zone `"2024-01-01T00:00:00.000"`.
fn json_timestamp(micros: i64, with_zone: bool, tz: &SessionTz) -> Option<String> {
    let offset = with_zone.then(|| tz.offset_secs_at_micros(micros));
    let local = i128::from(micros) + i128::from(offset.unwrap_or(0)) * 1_000_000;
    let mut out = String::from("\"");
    crate::variant::format::write_iso_millis(local, &mut out);
    match offset {
        None => {}
        Some(0) => out.push('Z'),
        Some(secs) => {
            let abs = secs.unsigned_abs();
            out.push(if secs < 0 { '-' } else { '+' });
            out.push_str(&format!("{:02}:{:02}", abs / 3600, abs / 60 % 60));
        }
    }
    out.push('"');
    Some(out)
}
