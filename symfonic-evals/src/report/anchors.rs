//! Names the viewer's pages and anchors, and formats times, the same way
//! for the runner (a failure's link) and the viewer (the page it links to).

use std::fmt::Write as _;

/// The page of the report file `report` (`X.json` gives `X.html`).
pub(crate) fn page_name(report: &str) -> String {
    let stem = report.strip_suffix(".json").unwrap_or(report);
    format!("{stem}.html")
}

/// An element id for a sequence of names: letters, digits and `-` kept,
/// anything else as `_xx` hex, so distinct names never share an id.
pub(crate) fn id_of(parts: &[&str]) -> String {
    let mut out = String::from("v");
    for part in parts {
        out.push('-');
        for byte in part.bytes() {
            if byte.is_ascii_alphanumeric() {
                out.push(char::from(byte));
            } else {
                let _ = write!(out, "_{byte:02x}");
            }
        }
    }
    out
}

/// The anchor of a scenario on its run's page.
pub(crate) fn scenario_anchor(scenario: &str) -> String {
    id_of(&[scenario])
}

/// The anchor of a trial on its run's page (`trial` zero-based).
pub(crate) fn trial_anchor(scenario: &str, trial: u64) -> String {
    id_of(&[scenario, &format!("t{}", trial + 1)])
}

/// The anchor of a step on its run's page (`trial` and `step` zero-based).
pub(crate) fn step_anchor(scenario: &str, trial: u64, step: u64) -> String {
    id_of(&[
        scenario,
        &format!("t{}", trial + 1),
        &format!("s{}", step + 1),
    ])
}

/// `YYYY-MM-DD HH:MM:SS UTC` for milliseconds since the Unix epoch.
pub(crate) fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// Microseconds as milliseconds with one decimal.
pub(crate) fn millis(micros: u64) -> String {
    // Precision loss past 2^53 µs (285 years) is immaterial here.
    #[allow(clippy::cast_precision_loss)]
    let ms = micros as f64 / 1000.0;
    format!("{ms:.1} ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_leave_no_markup_and_never_collide() {
        assert_eq!(
            id_of(&["approval/forged token"]),
            "v-approval_2fforged_20token"
        );
        assert_ne!(id_of(&["a.b"]), id_of(&["a_b"]));
        assert_eq!(step_anchor("s", 0, 2), "v-s-t1-s3");
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_156_594_397), "2026-12-01 20:23:14 UTC");
    }
}
