//! A test's trend over its latest runs as a small inline SVG, drawn here:
//! one bar per run, oldest on the left, its height the run's wall time
//! against the slowest shown, its colour what the run came to.

use maud::{html, Markup};

use super::overview::Outcome;

/// Bar width and gap, and the chart's height, in pixels.
const BAR: u32 = 5;
const GAP: u32 = 2;
const HEIGHT: u32 = 18;

/// The colour of a run's bar.
fn colour(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "#2e7d32",
        Outcome::Caught => "#3f5bb5",
        Outcome::Failed => "#c62828",
        Outcome::Other => "#c08a00",
    }
}

/// The trend of runs given oldest first as (outcome, wall time in µs).
pub(super) fn svg(runs: &[(Outcome, u64)]) -> Markup {
    let slowest = runs.iter().map(|(_, us)| *us).max().unwrap_or(0).max(1);
    let width = u32::try_from(runs.len())
        .unwrap_or(u32::MAX)
        .saturating_mul(BAR + GAP)
        .max(1);
    let words: Vec<&str> = runs.iter().map(|(o, _)| o.word()).collect();
    let summary = format!(
        "last {} run(s), oldest first: {}",
        runs.len(),
        words.join(", ")
    );
    html! {
        svg class="trend" xmlns="http://www.w3.org/2000/svg" width=(width) height=(HEIGHT)
            viewBox={ "0 0 " (width) " " (HEIGHT) } role="img" aria-label=(summary) {
            title { (summary) }
            @for (i, (outcome, us)) in runs.iter().enumerate() {
                @let h = bar_height(*us, slowest);
                @let x = u32::try_from(i).unwrap_or(0) * (BAR + GAP);
                rect x=(x) y=(HEIGHT - h) width=(BAR) height=(h) fill=(colour(*outcome)) {}
            }
        }
    }
}

/// A bar's height: at least 3 px (a run is never invisible), the slowest
/// the full height.
fn bar_height(us: u64, slowest: u64) -> u32 {
    let scaled = u128::from(us) * u128::from(HEIGHT - 3) / u128::from(slowest);
    3 + u32::try_from(scaled).unwrap_or(HEIGHT - 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_run_coloured_by_outcome_scaled_to_the_slowest() {
        let markup = svg(&[
            (Outcome::Passed, 1_000),
            (Outcome::Failed, 4_000),
            (Outcome::Caught, 0),
        ])
        .into_string();
        assert_eq!(markup.matches("<rect").count(), 3);
        assert!(markup.contains("fill=\"#2e7d32\"") && markup.contains("fill=\"#c62828\""));
        assert!(markup.contains("last 3 run(s), oldest first: passed, failed, caught"));
        // The slowest fills the height; a zero-length run still shows.
        assert!(markup.contains(&format!("y=\"0\" width=\"{BAR}\" height=\"{HEIGHT}\"")));
        assert_eq!(bar_height(0, 4_000), 3);
        assert!(svg(&[]).into_string().contains("last 0 run(s)"));
    }
}
