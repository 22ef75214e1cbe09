//! Per-file bounds of Variant paths known before a file is opened.
//!
//! A table format's log can carry, per data file, the smallest and largest value
//! of some Variant paths (Delta's per-path `minValues`/`maxValues`). Attached to a
//! `PartitionedFile` as an `Arc<PathBounds>` extension, they let
//! [`super::scan::VariantScanExec`] skip the whole file, footer unread, when the
//! filter's extraction predicates cannot hold for any value in those bounds.
//!
//! The bounds stand for an extraction only where that is sound: the path is object
//! keys only, every row that has the path holds a value of the bound's type (the
//! producer promises that), and the requested type converts each such value
//! exactly and in order — the same type, or integers whose bounds fit the
//! requested width. Floats and decimals are never used (NaN, scale), nor are
//! string maxima of 32 bytes or more (producers truncate long strings, and a
//! truncated maximum is not an upper bound); everything else is "no information".

use std::collections::HashMap;

use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use super::shredded_get::Extraction;
use crate::variant::path::PathSegment;
use crate::variant::types::SparkType;

/// A VARIANT column and the object keys of a path in it.
pub type PathKey = (String, Vec<String>);

/// The smallest and largest value of a path (`None`: unknown).
pub type Bounds = (Option<ScalarValue>, Option<ScalarValue>);

/// Bounds of Variant paths in one file (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathBounds {
    /// Rows in the file, when known.
    pub num_rows: Option<u64>,
    /// `(column, object keys)` to the smallest and largest value of the path, as
    /// Variant primitives: `Int8`..`Int64`, `Boolean`, `Utf8`, `Date32`,
    /// `Timestamp(µs, Some(_))` (an instant) or `Timestamp(µs, None)`;
    /// other types are kept but never used.
    pub paths: HashMap<PathKey, Bounds>,
}

/// Longest string maximum taken as exact.
const MAX_EXACT_STRING: usize = 32;

impl PathBounds {
    /// The bounds of extraction `e`'s values in the type it returns, when sound
    /// (`None` for a side that is unknown).
    pub fn for_extraction(
        &self,
        e: &Extraction,
    ) -> Option<(Option<ScalarValue>, Option<ScalarValue>)> {
        let target = e.target.as_ref()?;
        let keys: Vec<String> = e
            .path
            .iter()
            .map(|s| match s {
                PathSegment::Key(k) => Some(k.clone()),
                PathSegment::Index(_) => None,
            })
            .collect::<Option<_>>()?;
        if keys.is_empty() {
            return None;
        }
        let (min, max) = self.paths.get(&(e.column.name().to_string(), keys))?;
        let out = e.return_field.data_type();
        let (min, max) = sound_bounds(target, min.as_ref(), max.as_ref())?;
        let cast = |s: Option<ScalarValue>| -> Option<Option<ScalarValue>> {
            match s {
                None => Some(None),
                Some(s) => s.cast_to(out).ok().map(Some),
            }
        };
        let (min, max) = (cast(min)?, cast(max)?);
        (min.is_some() || max.is_some()).then_some((min, max))
    }
}

fn int_of(s: &ScalarValue) -> Option<i64> {
    match s {
        ScalarValue::Int8(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int16(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int32(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int64(Some(v)) => Some(*v),
        _ => None,
    }
}

/// The bounds usable for `target`, or `None` when they say nothing sound.
fn sound_bounds(
    target: &SparkType,
    min: Option<&ScalarValue>,
    max: Option<&ScalarValue>,
) -> Option<Bounds> {
    // Both sides must agree on the type when both are present.
    if let (Some(a), Some(b)) = (min, max)
        && a.data_type() != b.data_type()
        && !(int_of(a).is_some() && int_of(b).is_some())
    {
        return None;
    }
    let range = match target {
        SparkType::Byte => Some((i64::from(i8::MIN), i64::from(i8::MAX))),
        SparkType::Short => Some((i64::from(i16::MIN), i64::from(i16::MAX))),
        SparkType::Int => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
        SparkType::Long => Some((i64::MIN, i64::MAX)),
        _ => None,
    };
    if let Some((lo, hi)) = range {
        let lo_v = min.map(int_of);
        let hi_v = max.map(int_of);
        // A non-integer bound: the path is not an integer in this file.
        if matches!(lo_v, Some(None)) || matches!(hi_v, Some(None)) {
            return None;
        }
        let (lo_v, hi_v) = (lo_v.flatten(), hi_v.flatten());
        let narrowing = (lo, hi) != (i64::MIN, i64::MAX);
        if narrowing {
            // Every value must fit: both bounds known and inside the range.
            let (Some(a), Some(b)) = (lo_v, hi_v) else {
                return None;
            };
            if a < lo || b > hi {
                return None;
            }
        }
        return Some((
            lo_v.map(|v| ScalarValue::Int64(Some(v))),
            hi_v.map(|v| ScalarValue::Int64(Some(v))),
        ));
    }
    let same =
        |s: Option<&ScalarValue>, ok: &dyn Fn(&DataType) -> bool| -> Option<Option<ScalarValue>> {
            match s {
                None => Some(None),
                Some(s) if ok(&s.data_type()) && !s.is_null() => Some(Some(s.clone())),
                Some(_) => None,
            }
        };
    match target {
        SparkType::Boolean => {
            let ok = |t: &DataType| t == &DataType::Boolean;
            Some((same(min, &ok)?, same(max, &ok)?))
        }
        SparkType::Date => {
            let ok = |t: &DataType| t == &DataType::Date32;
            Some((same(min, &ok)?, same(max, &ok)?))
        }
        SparkType::Timestamp => {
            let ok = |t: &DataType| matches!(t, DataType::Timestamp(_, Some(_)));
            Some((same(min, &ok)?, same(max, &ok)?))
        }
        SparkType::TimestampNtz => {
            let ok = |t: &DataType| matches!(t, DataType::Timestamp(_, None));
            Some((same(min, &ok)?, same(max, &ok)?))
        }
        SparkType::String => {
            let ok = |t: &DataType| {
                matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
            };
            let min = same(min, &ok)?;
            let max = same(max, &ok)?.filter(|m| {
                m.try_as_str()
                    .flatten()
                    .is_some_and(|s| s.len() < MAX_EXACT_STRING)
            });
            Some((min, max))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> Option<ScalarValue> {
        Some(ScalarValue::Int64(Some(v)))
    }

    #[test]
    fn integers_widen_and_narrow_only_within_range() {
        let b = |t, lo: i64, hi: i64| sound_bounds(&t, i(lo).as_ref(), i(hi).as_ref());
        assert_eq!(b(SparkType::Long, 1, 5), Some((i(1), i(5))));
        assert_eq!(b(SparkType::Int, 1, 5), Some((i(1), i(5))));
        assert_eq!(b(SparkType::Int, 1, 1 << 40), None);
        assert_eq!(b(SparkType::Byte, -129, 0), None);
        // One side unknown: fine for BIGINT, not for a narrower type.
        assert_eq!(
            sound_bounds(&SparkType::Long, i(3).as_ref(), None),
            Some((i(3), None))
        );
        assert_eq!(sound_bounds(&SparkType::Int, i(3).as_ref(), None), None);
        // Small ints count as integers.
        let small = ScalarValue::Int8(Some(2));
        assert_eq!(
            sound_bounds(&SparkType::Int, Some(&small), i(9).as_ref()),
            Some((i(2), i(9)))
        );
    }

    #[test]
    fn other_types_must_match() {
        let s = |v: &str| ScalarValue::Utf8(Some(v.to_string()));
        assert_eq!(
            sound_bounds(&SparkType::String, Some(&s("a")), Some(&s("b"))),
            Some((Some(s("a")), Some(s("b"))))
        );
        let long = "x".repeat(32);
        assert_eq!(
            sound_bounds(&SparkType::String, Some(&s("a")), Some(&s(&long))),
            Some((Some(s("a")), None))
        );
        assert_eq!(
            sound_bounds(&SparkType::Long, Some(&s("a")), Some(&s("b"))),
            None
        );
        assert_eq!(
            sound_bounds(&SparkType::String, i(1).as_ref(), i(2).as_ref()),
            None
        );
        let d = ScalarValue::Float64(Some(1.0));
        assert_eq!(sound_bounds(&SparkType::Double, Some(&d), Some(&d)), None);
        let t = ScalarValue::Boolean(Some(true));
        assert_eq!(
            sound_bounds(&SparkType::Boolean, Some(&t), Some(&t)),
            Some((Some(t.clone()), Some(t)))
        );
    }
}
