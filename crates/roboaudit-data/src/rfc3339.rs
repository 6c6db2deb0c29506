//! RFC 3339 timestamps <-> seconds since the Unix epoch (UTC), without a date crate.
//!
//! The calendar arithmetic is Howard Hinnant's `days_from_civil` / `civil_from_days`
//! (proleptic Gregorian), which is exact for every year `0000..=9999` that RFC 3339 allows.

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (RFC 3339 §5.6; `t`, `z` and a space
/// in place of `T` are accepted) into `(unix_seconds, nanos)`.
///
/// A leap second (`:60`) is accepted and lands on the first second of the next minute.
/// Fractions beyond nanoseconds are truncated.
///
/// # Errors
/// A message saying which part of the text is malformed.
pub(crate) fn parse(text: &str) -> Result<(i64, u32), String> {
    let b = text.as_bytes();
    let bad = |what: &str| {
        Err(format!(
            "expected an RFC 3339 timestamp ({what}), got \"{text}\""
        ))
    };
    if b.len() < 20 {
        return bad("too short");
    }
    let sep_ok = b[4] == b'-' && b[7] == b'-' && b[13] == b':' && b[16] == b':';
    if !sep_ok || !matches!(b[10], b'T' | b't' | b' ') {
        return bad("separators");
    }
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        digits(&b[0..4]),
        digits(&b[5..7]),
        digits(&b[8..10]),
        digits(&b[11..13]),
        digits(&b[14..16]),
        digits(&b[17..19]),
    ) else {
        return bad("digits");
    };
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return bad("date out of range");
    }
    if hour > 23 || minute > 59 || second > 60 {
        return bad("time out of range");
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(b[i] - b'0');
            }
            i += 1;
        }
        let n = i - start;
        if n == 0 {
            return bad("empty fraction");
        }
        for _ in n..9 {
            nanos *= 10;
        }
    }
    let offset_seconds: i64 = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(oh), Some(om)) = (digits(&[*h1, *h2]), digits(&[*m1, *m2])) else {
                return bad("offset digits");
            };
            if oh > 23 || om > 59 {
                return bad("offset out of range");
            }
            let magnitude = i64::from(oh * 3600 + om * 60);
            if *sign == b'-' { -magnitude } else { magnitude }
        }
        _ => return bad("offset"),
    };
    let days = days_from_civil(i64::from(year), month, day);
    let seconds =
        days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second)
            - offset_seconds;
    Ok((seconds, nanos))
}

/// Formats `(unix_seconds, nanos)` as RFC 3339 in UTC (`Z`), with the fraction only when
/// `nanos > 0` and without trailing zeros. Inverse of [`parse`] for years 0000..=9999.
pub(crate) fn format(unix_seconds: i64, nanos: u32) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs_of_day = unix_seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60);
    let mut out = format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}");
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

fn is_leap(y: u32) -> bool {
    (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400)
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn known_instants_match_python_datetime() {
        // Values from Python: int(datetime.fromisoformat(s).timestamp()).
        let cases = [
            ("1970-01-01T00:00:00Z", 0, 0),
            ("2000-02-29T12:34:56Z", 951_827_696, 0),
            ("2026-11-29T17:32:40+01:30", 1_795_968_160, 0),
            ("1969-12-31T23:59:59.5Z", -1, 500_000_000),
            ("1900-03-01t00:00:00-05:00", -2_203_873_200, 0),
            ("2024-12-31 23:59:60Z", 1_735_689_600, 0),
            (
                "2021-06-01T08:00:00.123456789123Z",
                1_622_534_400,
                123_456_789,
            ),
        ];
        for (text, secs, nanos) in cases {
            assert_eq!(parse(text).unwrap(), (secs, nanos), "{text}");
        }
    }

    #[test]
    fn rejects_malformed() {
        for text in [
            "2021-02-29T00:00:00Z",
            "2021-13-01T00:00:00Z",
            "2021-01-01T24:00:00Z",
            "2021-01-01T00:00:00",
            "2021-01-01T00:00:00.Z",
            "2021-01-01T00:00:00+0100",
            "2021/01/01T00:00:00Z",
            "17",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn format_inverts_parse() {
        for (secs, nanos) in [
            (0, 0),
            (-1, 500_000_000),
            (1_795_966_960, 7),
            (-62_135_596_800, 0),
        ] {
            let text = format(secs, nanos);
            assert_eq!(parse(&text).unwrap(), (secs, nanos), "{text}");
        }
        assert_eq!(format(951_827_696, 120_000_000), "2000-02-29T12:34:56.12Z");
    }
}
