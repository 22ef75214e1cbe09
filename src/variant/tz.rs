//! The session time zone, as Spark uses it to print and parse timestamps.

use chrono::{FixedOffset, NaiveDateTime, Offset, TimeZone};

/// A session time zone: a fixed offset (`+02:00`, `UTC`) or an IANA name
/// (`America/Los_Angeles`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SessionTz {
    /// A fixed UTC offset.
    Fixed(FixedOffset),
    /// A named zone with daylight-saving rules.
    Named(chrono_tz::Tz),
}

impl Default for SessionTz {
    fn default() -> Self {
        Self::utc()
    }
}

/// A time zone text that is neither an offset nor a known zone name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTimeZone {
    /// The text as given.
    pub text: String,
}

impl std::fmt::Display for InvalidTimeZone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid time zone '{}'", self.text)
    }
}

impl std::error::Error for InvalidTimeZone {}

impl SessionTz {
    /// UTC.
    pub fn utc() -> Self {
        Self::Fixed(FixedOffset::east_opt(0).expect("zero offset is valid"))
    }

    /// Parses `UTC`, `Z`, `+hh:mm`, `-hh:mm`, `+hhmm`, `+hh` or an IANA zone name.
    ///
    /// # Errors
    /// A message naming the text when it is neither an offset nor a known zone.
    pub fn parse(s: &str) -> Result<Self, InvalidTimeZone> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("utc") || t.eq_ignore_ascii_case("z") || t == "GMT" {
            return Ok(Self::utc());
        }
        if let Some(off) = parse_offset(t) {
            return Ok(Self::Fixed(off));
        }
        t.parse::<chrono_tz::Tz>()
            .map(Self::Named)
            .map_err(|_| InvalidTimeZone {
                text: s.to_string(),
            })
    }

    /// The zone's offset at the given UTC instant.
    pub fn offset_at_utc(&self, utc: &NaiveDateTime) -> FixedOffset {
        match self {
            Self::Fixed(o) => *o,
            Self::Named(tz) => tz.offset_from_utc_datetime(utc).fix(),
        }
    }

    /// The zone's offset in seconds at an instant given in microseconds since the
    /// epoch. Past chrono's years (±262,143), the offset at chrono's nearest end is
    /// used: zone rules stop changing long before.
    pub fn offset_secs_at_micros(&self, utc_micros: i64) -> i32 {
        let utc = match chrono::DateTime::from_timestamp_micros(utc_micros) {
            Some(t) => t.naive_utc(),
            None if utc_micros > 0 => NaiveDateTime::MAX,
            None => NaiveDateTime::MIN,
        };
        self.offset_at_utc(&utc).local_minus_utc()
    }

    /// The UTC instant, in microseconds since the epoch, of a wall-clock time given
    /// in microseconds since 1970-01-01T00:00 (as [`SessionTz::local_to_utc`]);
    /// `None` when the instant is beyond the `i64` range.
    pub fn local_micros_to_utc(&self, local_micros: i128) -> Option<i64> {
        // Within ±262,000 years chrono converts; beyond, the offset at its end holds.
        const CHRONO_SAFE: i128 = 262_000 * 365 * 86_400_000_000;
        if local_micros.abs() < CHRONO_SAFE {
            let local = chrono::DateTime::from_timestamp_micros(i64::try_from(local_micros).ok()?)?
                .naive_utc();
            return Some(self.local_to_utc(&local).and_utc().timestamp_micros());
        }
        let edge = if local_micros > 0 {
            NaiveDateTime::MAX
        } else {
            NaiveDateTime::MIN
        };
        let offset = self.offset_at_utc(&edge).local_minus_utc();
        i64::try_from(local_micros - i128::from(offset) * 1_000_000).ok()
    }

    /// Converts a wall-clock time in this zone to UTC. In a gap (spring forward)
    /// the time is shifted forward by the gap, in an overlap the earlier instant is
    /// taken, as Java does.
    pub fn local_to_utc(&self, local: &NaiveDateTime) -> NaiveDateTime {
        match self {
            Self::Fixed(o) => *local - *o,
            Self::Named(tz) => match tz.offset_from_local_datetime(local) {
                chrono::LocalResult::Single(o) => *local - o.fix(),
                chrono::LocalResult::Ambiguous(a, b) => {
                    let (a, b) = (*local - a.fix(), *local - b.fix());
                    a.min(b)
                }
                chrono::LocalResult::None => {
                    // In a gap: use the offset from before the gap.
                    let before = *local - chrono::Duration::hours(3);
                    let off = match tz.offset_from_local_datetime(&before) {
                        chrono::LocalResult::Single(o) => o.fix(),
                        chrono::LocalResult::Ambiguous(o, _) => o.fix(),
                        chrono::LocalResult::None => chrono::Utc.fix(),
                    };
                    *local - off
                }
            },
        }
    }
}

/// Parses `+hh:mm`, `-hh:mm`, `+hhmm`, `+hh`, `+h`, and the same after `UTC`/`GMT`.
pub fn parse_offset(s: &str) -> Option<FixedOffset> {
    let s = s
        .strip_prefix("UTC")
        .or_else(|| s.strip_prefix("GMT"))
        .unwrap_or(s);
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = if let Some((h, m)) = rest.split_once(':') {
        (h, m)
    } else if rest.len() == 4 {
        (&rest[..2], &rest[2..])
    } else {
        (rest, "0")
    };
    if h.is_empty() || h.len() > 2 || m.is_empty() || m.len() > 2 {
        return None;
    }
    let h: i32 = h.parse().ok()?;
    let m: i32 = m.parse().ok()?;
    if h > 18 || m > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_offsets_and_names() {
        assert_eq!(SessionTz::parse("UTC").unwrap(), SessionTz::utc());
        assert_eq!(
            SessionTz::parse("+02:00").unwrap(),
            SessionTz::Fixed(FixedOffset::east_opt(7200).unwrap())
        );
        assert_eq!(
            SessionTz::parse("-0530").unwrap(),
            SessionTz::Fixed(FixedOffset::east_opt(-19800).unwrap())
        );
        assert!(matches!(
            SessionTz::parse("America/Los_Angeles").unwrap(),
            SessionTz::Named(_)
        ));
        assert!(SessionTz::parse("Mars/Base").is_err());
    }

    #[test]
    fn named_zone_offsets_follow_dst() {
        let tz = SessionTz::parse("America/Los_Angeles").unwrap();
        let winter = chrono::NaiveDate::from_ymd_opt(2024, 1, 15)
            .unwrap()
            .and_hms_opt(10, 0, 0)
            .unwrap();
        assert_eq!(tz.offset_at_utc(&winter).local_minus_utc(), -8 * 3600);
        let local = winter;
        assert_eq!(tz.local_to_utc(&local), winter + chrono::Duration::hours(8));
    }
}
