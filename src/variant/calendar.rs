//! The proleptic Gregorian calendar over every date and microsecond timestamp a
//! Variant can hold.
//!
//! A Variant DATE is any `i32` of days from 1970-01-01 and a TIMESTAMP any `i64` of
//! microseconds, so Spark 4.3 writes dates from `-5877641-06-23` to `+5881580-07-11`
//! and timestamps from `-290308-12-21 19:59:05.224192` to
//! `+294247-01-10 04:00:54.775807`. chrono, which parquet-variant decodes into,
//! stops at the years ±262,143, so these values never reach parquet-variant
//! ([`super::validate`] keeps them from it): printing, parsing and casting them go
//! through the integer arithmetic here, which has no such limit.
//!
//! ```
//! use df_variant::variant::calendar::{civil_from_days, days_from_civil};
//! assert_eq!(civil_from_days(i64::from(i32::MAX)), (5_881_580, 7, 11));
//! assert_eq!(days_from_civil(-5_877_641, 6, 23), Some(i64::from(i32::MIN)));
//! assert_eq!(days_from_civil(2023, 2, 29), None);
//! ```

/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Days from 0000-03-01 to 1970-01-01.
const EPOCH_FROM_MARCH_0000: i64 = 719_468;
/// Days in 400 Gregorian years.
const DAYS_PER_ERA: i64 = 146_097;

/// `(year, month, day)` of a day count from 1970-01-01, for any count (years
/// before 1 are astronomical: 0 is 1 BCE).
///
/// The computation counts in 400-year eras of years that start on March 1, so
/// that the leap day ends a year (H. Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + EPOCH_FROM_MARCH_0000;
    let era = z.div_euclid(DAYS_PER_ERA);
    let day_of_era = z.rem_euclid(DAYS_PER_ERA);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// Days from 1970-01-01 of a date; `None` when the month or the day does not
/// exist (`2023-02-29`) or the year is beyond ±10^12.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i64> {
    if year.unsigned_abs() > 1_000_000_000_000
        || !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
    {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let march_month = i64::from((month + 9) % 12);
    let day_of_year = (153 * march_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * DAYS_PER_ERA + day_of_era - EPOCH_FROM_MARCH_0000)
}

fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A microsecond count from 1970-01-01T00:00 split into days and the microseconds
/// of that day (`0..MICROS_PER_DAY`, also before 1970).
pub fn split_micros(micros: i128) -> (i64, i64) {
    let per_day = i128::from(MICROS_PER_DAY);
    // |micros| < 2^127, so the quotient fits an i64 for every i64 count plus an offset.
    let days = i64::try_from(micros.div_euclid(per_day)).unwrap_or(i64::MAX);
    (days, micros.rem_euclid(per_day) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Datelike, NaiveDate};

    #[test]
    fn agrees_with_chrono_where_chrono_reaches() {
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        let mut days: i64 = -95_000_000;
        while days < 95_000_000 {
            let d = epoch + chrono::TimeDelta::days(days);
            let want = (i64::from(d.year()), d.month(), d.day());
            assert_eq!(civil_from_days(days), want, "days {days}");
            assert_eq!(days_from_civil(want.0, want.1, want.2), Some(days));
            days += 9_973;
        }
        for days in -1_000..1_000 {
            let d = epoch + chrono::TimeDelta::days(days);
            assert_eq!(
                civil_from_days(days),
                (i64::from(d.year()), d.month(), d.day())
            );
        }
    }

    #[test]
    fn covers_the_ends_of_spark_range() {
        assert_eq!(civil_from_days(i64::from(i32::MIN)), (-5_877_641, 6, 23));
        assert_eq!(days_from_civil(5_881_580, 7, 11), Some(i64::from(i32::MAX)));
        assert_eq!(
            days_from_civil(5_881_580, 7, 12),
            Some(i64::from(i32::MAX) + 1)
        );
        let (days, of_day) = split_micros(i128::from(i64::MAX));
        assert_eq!(civil_from_days(days), (294_247, 1, 10));
        assert_eq!(of_day, 4 * 3_600_000_000 + 54_775_807);
        let (days, of_day) = split_micros(i128::from(i64::MIN));
        assert_eq!(civil_from_days(days), (-290_308, 12, 21));
        assert_eq!(of_day, 19 * 3_600_000_000 + 59 * 60_000_000 + 5_224_192);
        assert_eq!(split_micros(-1), (-1, MICROS_PER_DAY - 1));
    }

    #[test]
    fn refuses_days_that_do_not_exist() {
        assert_eq!(days_from_civil(2024, 2, 29), Some(19_782));
        assert_eq!(days_from_civil(1900, 2, 29), None);
        assert_eq!(days_from_civil(2000, 2, 29), Some(11_016));
        assert_eq!(days_from_civil(2024, 4, 31), None);
        assert_eq!(days_from_civil(2024, 13, 1), None);
        assert_eq!(days_from_civil(2024, 1, 0), None);
        assert_eq!(days_from_civil(i64::MAX, 1, 1), None);
    }
}
