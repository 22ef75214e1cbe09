//! The `variant_get` kernel: path extraction and conversion over a whole Variant
//! column. The SQL functions `variant_get` / `try_variant_get` and the Parquet
//! reader's shredded pushdown both call [`variant_get`].

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryViewArray, BinaryViewBuilder, NullBufferBuilder, StructArray,
};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use parquet_variant::{Variant, VariantMetadata};

use super::cast::VariantCaster;
use super::{VariantInput, variant_fields};
use crate::variant::cast::{CastError, CastOptions};
use crate::variant::encoding::VARIANT_NULL;
use crate::variant::encoding::write_array;
use crate::variant::path::{GetPath, PathError, PathSegment, Step, parse_get_path};
use crate::variant::raw::{WildcardError, get_all_under_prefix, get_path};
use crate::variant::types::SparkType;
use crate::variant::validate::{self, MalformedVariant};

/// Variant output: the sub-values; the metadata column is the input's, shared.
struct SubValues {
    values: BinaryViewBuilder,
    nulls: NullBufferBuilder,
}

impl SubValues {
    fn finish(&mut self, metadata: Option<BinaryViewArray>) -> Result<ArrayRef, ArrowError> {
        let values = self.values.finish();
        let nulls = self.nulls.finish();
        let metadata = match metadata {
            Some(m) => m,
            None => super::empty_metadata_column(values.len()),
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

/// The registered name of the `variant_get` function.
pub const VARIANT_GET: &str = "variant_get";
/// The registered name of the `try_variant_get` function.
pub const TRY_VARIANT_GET: &str = "try_variant_get";

/// The path argument of [`variant_get`].
#[derive(Debug, Clone, Copy)]
pub enum PathArg<'a> {
    /// A NULL path: every row is NULL.
    Null,
    /// One parsed path for every row (`&[]` is `$`).
    Literal(&'a [PathSegment]),
    /// One wildcard path for every row: each row gives an array of its matches
    /// (converted to `array<target>` when there is a target), or NULL when the
    /// keys and indexes before the first wildcard find nothing.
    Wildcard(&'a [Step]),
    /// A string column with one path per row (NULL rows give NULL). A
    /// wildcard path in it works without a target only: the type of the
    /// result cannot depend on the row.
    Column(&'a ArrayRef),
}

impl<'a> PathArg<'a> {
    /// The argument for a parsed literal path.
    pub fn of(path: &'a GetPath) -> Self {
        match path {
            GetPath::Exact(p) => PathArg::Literal(p),
            GetPath::Wildcard(steps) => PathArg::Wildcard(steps),
        }
    }
}

/// Why [`variant_get`] failed.
#[derive(Debug)]
pub enum GetError {
    /// The input column is not a Variant column.
    Input(ArrowError),
    /// A path of the path column is not a valid path.
    Path(PathError),
    /// The bytes on the path do not hold together.
    Malformed(MalformedVariant),
    /// A value cannot be converted (strict mode only).
    Cast(CastError),
    /// Building the output failed.
    Arrow(ArrowError),
    /// A wildcard path that cannot be answered (too many matches, an array
    /// too large, or a typed result asked of a path column).
    Wildcard(String),
}

impl std::fmt::Display for GetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(e) | Self::Arrow(e) => e.fmt(f),
            Self::Path(e) => e.fmt(f),
            Self::Malformed(e) => e.fmt(f),
            Self::Cast(e) => e.fmt(f),
            Self::Wildcard(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for GetError {}

impl From<WildcardError> for GetError {
    fn from(e: WildcardError) -> Self {
        match e {
            WildcardError::Malformed(e) => Self::Malformed(e),
            WildcardError::TooMuch(why) => Self::Wildcard(why),
        }
    }
}

impl From<ArrowError> for GetError {
    fn from(e: ArrowError) -> Self {
        Self::Arrow(e)
    }
}

/// The `variant_get` kernel: extracts `path` from every row of a Variant
/// `column` (in any legal physical form; a `Null`-typed column is all NULL) and
/// converts it to `target` with Spark's cast rules, or returns the sub-values as
/// a Variant column sharing the input's metadata when `target` is `None`.
///
/// A missing path is NULL. A value that cannot be converted is an error, or
/// NULL with [`CastOptions::safe`]. Only the metadata and the bytes on the path
/// are read and checked, so extraction is proportional to the path, not to the
/// row.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Array, ArrayRef, AsArray};
/// use arrow::datatypes::Int32Type;
/// use df_variant::array::VariantColumnBuilder;
/// use df_variant::array::get::{PathArg, variant_get};
/// use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
/// use df_variant::variant::path::parse_path;
/// use df_variant::variant::types::SparkType;
///
/// let mut p = JsonToVariant::new(JsonParseOptions::default());
/// let mut b = VariantColumnBuilder::new(2);
/// for doc in [r#"{"a": "42"}"#, r#"{"b": 1}"#] {
///     p.parse(doc).unwrap();
///     b.append(p.metadata(), p.value());
/// }
/// let column: ArrayRef = Arc::new(b.finish());
/// let path = parse_path("$.a").unwrap();
/// let ints = variant_get(&column, PathArg::Literal(&path), Some(&SparkType::Int), Default::default())
///     .unwrap();
/// let ints = ints.as_primitive::<Int32Type>();
/// assert_eq!((ints.value(0), ints.is_null(1)), (42, true));
/// ```
///
/// # Errors
/// [`GetError`] for the first row that fails.
pub fn variant_get(
    column: &ArrayRef,
    path: PathArg<'_>,
    target: Option<&SparkType>,
    options: CastOptions,
) -> Result<ArrayRef, GetError> {
    let rows = column.len();
    // A literal wildcard path converts the array of its matches.
    let array_target;
    let target = match (path, target) {
        (PathArg::Wildcard(_), Some(t)) => {
            array_target = SparkType::Array(Box::new(t.clone()));
            Some(&array_target)
        }
        (_, t) => t,
    };
    let mut out = match target {
        None => Output::Variant(SubValues {
            values: BinaryViewBuilder::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
        }),
        Some(t) => Output::Typed(VariantCaster::new(t, options, rows)),
    };
    let input = if column.data_type() == &DataType::Null {
        None
    } else {
        Some(VariantInput::try_new(column).map_err(GetError::Input)?)
    };
    let path_column = match path {
        PathArg::Column(c) => Some(arrow::compute::cast(c, &DataType::Utf8View)?),
        PathArg::Null | PathArg::Literal(_) | PathArg::Wildcard(_) => None,
    };
    let path_strings = path_column
        .as_ref()
        .map(arrow::array::AsArray::as_string_view);
    let mut row_path: GetPath;
    // Rows of one document shape carry identical metadata bytes, and a column
    // usually mixes a few shapes: the checked dictionaries of the last few
    // distinct metadata are kept and reused when the bytes match.
    let mut dicts = DictCache::default();
    // The matches of a wildcard path and the array built from them.
    let mut matches: Vec<&[u8]> = Vec::new();
    let mut built: Vec<u8> = Vec::new();
    for row in 0..rows {
        let path = match (path, path_strings) {
            (PathArg::Column(_), Some(strings)) if strings.is_valid(row) => {
                row_path = parse_get_path(strings.value(row)).map_err(GetError::Path)?;
                if matches!(row_path, GetPath::Wildcard(_)) && target.is_some() {
                    return Err(GetError::Wildcard(format!(
                        "the wildcard path {} needs a literal path argument when a type is given (the type of the result would depend on the row)",
                        strings.value(row)
                    )));
                }
                PathArg::of(&row_path)
            }
            (PathArg::Literal(_) | PathArg::Wildcard(_), _) => path,
            _ => {
                out.append_null();
                continue;
            }
        };
        let Some((metadata, value)) = input.as_ref().and_then(|i| i.get(row)) else {
            out.append_null();
            continue;
        };
        // Only the metadata and the bytes on the path are checked (the rest of the
        // row is never read), which keeps extraction proportional to the path.
        let malformed = GetError::Malformed;
        let dict = dicts.get(metadata).map_err(malformed)?;
        // Whether the value read holds dates or timestamps past chrono's years.
        let mut wide = false;
        let sub = match path {
            PathArg::Wildcard(steps) => {
                matches.clear();
                if !get_all_under_prefix(dict, value, steps, &mut matches)? {
                    out.append_null();
                    continue;
                }
                for m in &matches {
                    wide |= validate::check_value_wide(m, dict).map_err(malformed)?.1;
                }
                built.clear();
                write_array(&mut built, &matches).map_err(|e| {
                    GetError::Wildcard(format!("row {row}: the array of matches is a {e}"))
                })?;
                built.as_slice()
            }
            PathArg::Literal(p) => {
                let Some(sub) = get_path(dict, value, p).map_err(malformed)? else {
                    out.append_null();
                    continue;
                };
                let len;
                (len, wide) = validate::check_value_wide(sub, dict).map_err(malformed)?;
                &sub[..len]
            }
            PathArg::Null | PathArg::Column(_) => unreachable!("resolved above"),
        };
        match &mut out {
            Output::Variant(b) => {
                b.values.append_value(sub);
                b.nulls.append_non_null();
            }
            Output::Typed(c) => {
                if c.try_append_raw(sub, dict).map_err(GetError::Cast)? {
                    continue;
                }
                if wide {
                    // A date or timestamp past chrono's years inside an object or
                    // array: parquet-variant cannot decode it; this names it.
                    validate::check_value_with(sub, dict).map_err(malformed)?;
                }
                let v = Variant::new_with_metadata(VariantMetadata::new(metadata), sub);
                c.append_variant(&v).map_err(GetError::Cast)?;
            }
        }
    }
    match &mut out {
        Output::Variant(b) => {
            let metadata = input
                .as_ref()
                .map(super::input::VariantInput::metadata_view)
                .transpose()?;
            Ok(b.finish(metadata)?)
        }
        Output::Typed(c) => Ok(c.finish()),
    }
}

/// Checked metadata dictionaries of the last few distinct metadata byte strings
/// of a column (see [`variant_get`]; `to_json` uses it too).
#[derive(Default)]
pub(crate) struct DictCache<'m> {
    entries: Vec<(&'m [u8], Vec<&'m str>)>,
    last: usize,
    next_victim: usize,
}

impl<'m> DictCache<'m> {
    const SIZE: usize = 8;

    /// The dictionary of `metadata`, checked once per distinct bytes held.
    pub(crate) fn get(&mut self, metadata: &'m [u8]) -> Result<&[&'m str], MalformedVariant> {
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
