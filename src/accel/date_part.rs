//! DataFusion's `date_part` (and so `EXTRACT`), answering the year, month,
//! day, hour and minute of a timestamp in UTC, without a time zone or at a
//! fixed offset (`+05:30`) by integer arithmetic.
//!
//! DataFusion's kernel (arrow's `date_part`) asks chrono-tz for the offset of
//! every row of a `Timestamp(_, "UTC")`; JSONBench Q3's
//! `date_part('hour', to_timestamp_micros(...))` spent a quarter of its time
//! there. A fixed offset is the same for every row, so [`FastDatePart`] adds
//! it once per row and divides. Everything else (another part, a named zone
//! such as `Europe/Berlin`, a date, a scalar, a value chrono cannot place) is
//! DataFusion's own code, which this function wraps: the name, signature,
//! return type, preimage and documentation are DataFusion's, so plans and
//! their bytes do not change.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let ctx = df_variant::accel::accelerated_context();
//! let batches = ctx
//!     .sql("SELECT date_part('hour', to_timestamp_micros(1700000000123456)) AS h")
//!     .await?
//!     .collect()
//!     .await?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| 22 |"), "{text}");
//! # Ok::<_, datafusion::error::DataFusionError>(())
//! # }).unwrap();
//! ```
//!
//! `variant.fast_date_part = false` leaves every row to DataFusion's kernel.

use std::str::FromStr;
use std::sync::Arc;

use chrono::{NaiveDateTime, Offset, TimeZone};
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int32Array};
use datafusion::arrow::compute::kernels::cast_utils::IntervalUnit;
use datafusion::arrow::datatypes::{
    DataType, FieldRef, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::{Result, ScalarValue};
use datafusion::functions::datetime::date_part::DatePartFunc;
use datafusion::logical_expr::preimage::PreimageResult;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature,
};

use crate::config::VariantOptions;
use crate::variant::calendar::civil_from_days;

/// DataFusion's `date_part` with the fast path of the module docs.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct FastDatePart {
    inner: DatePartFunc,
}

impl FastDatePart {
    /// The function, replacing `current` only where `current` is DataFusion's
    /// own `date_part` (not, say, Spark's).
    pub fn replacing(current: &ScalarUDF) -> Option<ScalarUDF> {
        current
            .inner()
            .is::<DatePartFunc>()
            .then(|| ScalarUDF::from(Self::default()))
    }
}

impl ScalarUDFImpl for FastDatePart {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if VariantOptions::enabled(&args.config_options, |o| o.fast_date_part)
            && let Some(answer) = fast(&args.args)
        {
            return Ok(ColumnarValue::Array(answer));
        }
        self.inner.invoke_with_args(args)
    }

    fn preimage(
        &self,
        args: &[Expr],
        lit_expr: &Expr,
        info: &SimplifyContext,
    ) -> Result<PreimageResult> {
        self.inner.preimage(args, lit_expr, info)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// The parts answered here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Year,
    Month,
    Day,
    Hour,
    Minute,
}

/// The answer for `date_part(part, array)`, or `None` to leave it to DataFusion.
fn fast(args: &[ColumnarValue]) -> Option<ArrayRef> {
    let [ColumnarValue::Scalar(part), ColumnarValue::Array(array)] = args else {
        return None;
    };
    let part = match part {
        ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)) => part_of(p)?,
        _ => return None,
    };
    let DataType::Timestamp(unit, tz) = array.data_type() else {
        return None;
    };
    let offset = match tz {
        None => 0,
        Some(tz) => fixed_offset(tz)?,
    };
    let values = match unit {
        TimeUnit::Second => parts::<1>(
            array.as_primitive::<TimestampSecondType>().values(),
            offset,
            part,
        ),
        TimeUnit::Millisecond => parts::<1_000>(
            array.as_primitive::<TimestampMillisecondType>().values(),
            offset,
            part,
        ),
        TimeUnit::Microsecond => parts::<1_000_000>(
            array.as_primitive::<TimestampMicrosecondType>().values(),
            offset,
            part,
        ),
        TimeUnit::Nanosecond => parts::<1_000_000_000>(
            array.as_primitive::<TimestampNanosecondType>().values(),
            offset,
            part,
        ),
    }?;
    Some(Arc::new(Int32Array::new(
        values.into(),
        array.nulls().cloned(),
    )))
}

/// The part DataFusion would extract for `text` (its own normalisation: one
/// pair of quotes stripped, then arrow's interval unit names and plurals).
fn part_of(text: &str) -> Option<Part> {
    let text = text
        .strip_prefix(['\'', '"'])
        .and_then(|s| s.strip_suffix(['\'', '"']))
        .unwrap_or(text);
    match IntervalUnit::from_str(text).ok()? {
        IntervalUnit::Year => Some(Part::Year),
        IntervalUnit::Month => Some(Part::Month),
        IntervalUnit::Day => Some(Part::Day),
        IntervalUnit::Hour => Some(Part::Hour),
        IntervalUnit::Minute => Some(Part::Minute),
        _ => None,
    }
}

/// The offset from UTC in seconds of a time zone that has one offset: `UTC`
/// and `+hh:mm`-style offsets, as arrow parses them. Named zones are `None`.
fn fixed_offset(tz: &str) -> Option<i64> {
    if !(tz == "UTC" || tz.starts_with(['+', '-'])) {
        return None;
    }
    let tz = Tz::from_str(tz).ok()?;
    let offset = tz.offset_from_utc_datetime(&NaiveDateTime::default()).fix();
    Some(i64::from(offset.local_minus_utc()))
}

/// Seconds from the epoch beyond which a value is left to DataFusion: well
/// inside chrono's range (about ±262,000 years), so every value here is one
/// that DataFusion's kernel also places.
const PLACEABLE_SECONDS: i64 = 8_000_000_000_000;

/// The part of each value (`PER_SECOND` units a second) at `offset` seconds
/// from UTC, or `None` when a value lies beyond [`PLACEABLE_SECONDS`] (slots
/// under NULL included: their values are arbitrary).
fn parts<const PER_SECOND: i64>(values: &[i64], offset: i64, part: Part) -> Option<Vec<i32>> {
    let placeable = values
        .iter()
        .all(|v| v.div_euclid(PER_SECOND).unsigned_abs() <= PLACEABLE_SECONDS as u64);
    if !placeable {
        return None;
    }
    let local = |v: &i64| v.div_euclid(PER_SECOND) + offset;
    // Every result fits an i32: hours, minutes and days of month are small,
    // and years stay within ±300,000.
    Some(match part {
        Part::Hour => values
            .iter()
            .map(|v| (local(v).rem_euclid(86_400) / 3_600) as i32)
            .collect(),
        Part::Minute => values
            .iter()
            .map(|v| (local(v).rem_euclid(3_600) / 60) as i32)
            .collect(),
        Part::Year | Part::Month | Part::Day => values
            .iter()
            .map(|v| {
                let (year, month, day) = civil_from_days(local(v).div_euclid(86_400));
                match part {
                    Part::Year => year as i32,
                    Part::Month => month as i32,
                    _ => day as i32,
                }
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::TimestampMicrosecondArray;
    use datafusion::arrow::datatypes::Field;
    use datafusion::common::config::ConfigOptions;

    use super::*;

    /// DataFusion's answer and ours for `date_part(part, array)`.
    fn both(part: &str, array: ArrayRef) -> (ArrayRef, ArrayRef) {
        let invoke = |fast: bool| {
            let mut config = ConfigOptions::new();
            config.extensions.insert(VariantOptions {
                fast_date_part: fast,
                ..Default::default()
            });
            let args = ScalarFunctionArgs {
                args: vec![
                    ColumnarValue::Scalar(ScalarValue::Utf8(Some(part.into()))),
                    ColumnarValue::Array(Arc::clone(&array)),
                ],
                arg_fields: vec![
                    Arc::new(Field::new("p", DataType::Utf8, false)),
                    Arc::new(Field::new("t", array.data_type().clone(), true)),
                ],
                number_rows: array.len(),
                return_field: Arc::new(Field::new("date_part", DataType::Int32, true)),
                config_options: Arc::new(config),
            };
            FastDatePart::default()
                .invoke_with_args(args)
                .unwrap()
                .into_array(array.len())
                .unwrap()
        };
        (invoke(false), invoke(true))
    }

    /// Values around the epoch, leap days, year ends and far centuries,
    /// negative ones included, and a NULL.
    fn micros() -> Vec<Option<i64>> {
        let mut values = vec![None, Some(0), Some(-1), Some(1)];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..2_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Within about ±4,500 years of 1970, in microseconds.
            values.push(Some((state as i64) >> 6));
        }
        // Within a day of 2000-02-29, 2100-03-01 and 1900-01-01.
        for base in [951_782_400_i64, 4_107_542_400, -2_208_988_800] {
            for s in (-90_000..90_000).step_by(1_799) {
                values.push(Some((base + s) * 1_000_000 + 7));
            }
        }
        values
    }

    #[test]
    fn answers_as_datafusion_does() {
        let zones = [
            None,
            Some("UTC"),
            Some("+05:30"),
            Some("-0800"),
            Some("+14"),
            Some("Europe/Berlin"),
        ];
        for tz in zones {
            let array: ArrayRef = Arc::new(
                TimestampMicrosecondArray::from(micros()).with_timezone_opt(tz.map(str::to_string)),
            );
            for part in [
                "year", "MONTH", "day", "hour", "'hours'", "minute", "second", "dow",
            ] {
                let (theirs, ours) = both(part, Arc::clone(&array));
                assert_eq!(
                    theirs.as_ref(),
                    ours.as_ref(),
                    "date_part({part}) in {tz:?}"
                );
            }
        }
    }

    #[test]
    fn fast_path_fires_only_for_fixed_offsets_and_its_parts() {
        let array = |tz: Option<&str>| -> ArrayRef {
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(3_600_000_000)])
                    .with_timezone_opt(tz.map(str::to_string)),
            )
        };
        let args = |part: &str, a: ArrayRef| {
            vec![
                ColumnarValue::Scalar(ScalarValue::Utf8(Some(part.into()))),
                ColumnarValue::Array(a),
            ]
        };
        assert!(fast(&args("hour", array(Some("UTC")))).is_some());
        assert!(fast(&args("hour", array(Some("+01:00")))).is_some());
        assert!(fast(&args("hour", array(None))).is_some());
        assert!(fast(&args("hour", array(Some("Europe/Berlin")))).is_none());
        assert!(fast(&args("hour", array(Some("+99:00")))).is_none());
        assert!(fast(&args("second", array(Some("UTC")))).is_none());
        let far: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![i64::MAX]));
        assert!(fast(&args("hour", far)).is_none());
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-719_468), (0, 3, 1));
    }
}
