//! Wall-clock time as text, without a date crate: RFC 3339 for the `created` fields of
//! calibration files and judge reports, and a compact form for directory names (no colons,
//! which some file systems refuse).

/// Seconds since the Unix epoch, now (0 if the clock is before 1970).
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Now as RFC 3339 UTC.
pub fn timestamp() -> String {
    rfc3339(now_secs())
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (Hinnant's civil-from-days).
pub fn rfc3339(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `YYYYMMDDTHHMMSSZ`: RFC 3339's basic form, for names of files and directories.
pub fn compact(secs: i64) -> String {
    rfc3339(secs).replace(['-', ':'], "")
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_798_545_600), "2026-12-29T12:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::compact(1_798_545_600), "20261229T120000Z");
    }
}
