//! Honest trial statistics: what `c` passing trials out of `n` say about a
//! scenario beyond its k-of-n verdict.
//!
//! The estimators are the unbiased ones tau-bench and Inspect use, with `k`
//! the trial policy's required count:
//!
//! - pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of `k`
//!   trials drawn without replacement from the `n` passed;
//! - pass^k = C(c, k) / C(n, k): the chance that all `k` of them passed.
//!
//! The 95% interval is the Wilson score interval on the per-trial pass rate
//! `p`, carried through `p^k` (for pass^k) and `1 - (1-p)^k` (for pass@k),
//! both monotone in `p`, so each bound maps to a bound, on the assumption
//! that trials are independent.

use serde::{Deserialize, Serialize};

/// The z value of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A scenario's trials as estimates: with `n` trials run, `c` passed and
/// `k` the policy's required passes, the unbiased pass@k = 1 - C(n-c, k) /
/// C(n, k) (at least one of `k` trials drawn from the `n` passed) and
/// pass^k = C(c, k) / C(n, k) (all `k` passed), as tau-bench and Inspect
/// define them. The 95% intervals are the Wilson score interval on the
/// per-trial pass rate `p`, carried through `p^k` and `1 - (1-p)^k`
/// (trials assumed independent).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialStats {
    /// Trials that ran.
    pub n: u32,
    /// Trials that passed.
    pub c: u32,
    /// The policy's required passes, the `k` of pass@k and pass^k.
    pub k: u32,
    /// Unbiased pass@k, `None` when `k` exceeds `n`.
    pub pass_at_k: Option<f64>,
    /// Unbiased pass^k, `None` when `k` exceeds `n`.
    pub pass_hat_k: Option<f64>,
    /// The per-trial pass rate `c / n`, `None` when no trial ran.
    pub rate: Option<f64>,
    /// The 95% Wilson score interval on the per-trial pass rate.
    pub rate_interval: Option<(f64, f64)>,
    /// That interval carried through `p^k`: a 95% interval on pass^k.
    pub pass_hat_k_interval: Option<(f64, f64)>,
    /// That interval carried through `1 - (1-p)^k`: a 95% interval on pass@k.
    pub pass_at_k_interval: Option<(f64, f64)>,
}

/// C(a, k) / C(n, k) for `a <= n`, as a product that never overflows.
fn choose_ratio(a: u32, n: u32, k: u32) -> f64 {
    if k > a {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * f64::from(a - i) / f64::from(n - i))
}

/// The 95% Wilson score interval for `c` successes in `n` trials.
pub fn wilson_interval(c: u32, n: u32) -> Option<(f64, f64)> {
    if n == 0 || c > n {
        return None;
    }
    let n = f64::from(n);
    let p = f64::from(c) / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(((center - half).max(0.0), (center + half).min(1.0)))
}

impl TrialStats {
    /// The estimates for `c` passes in `n` trials under a policy requiring `k`.
    pub fn new(n: u32, c: u32, k: u32) -> Self {
        let c = c.min(n);
        let defined = k <= n && n > 0;
        let rate_interval = wilson_interval(c, n);
        let exponent = i32::try_from(k).unwrap_or(i32::MAX);
        Self {
            n,
            c,
            k,
            pass_at_k: defined.then(|| 1.0 - choose_ratio(n - c, n, k)),
            pass_hat_k: defined.then(|| choose_ratio(c, n, k)),
            rate: (n > 0).then(|| f64::from(c) / f64::from(n)),
            rate_interval,
            pass_hat_k_interval: rate_interval
                .map(|(lo, hi)| (lo.powi(exponent), hi.powi(exponent))),
            pass_at_k_interval: rate_interval.map(|(lo, hi)| {
                (
                    1.0 - (1.0 - lo).powi(exponent),
                    1.0 - (1.0 - hi).powi(exponent),
                )
            }),
        }
    }

    /// The estimates in one phrase, as the table shows them:
    /// `pass^2 0.30 [0.05, 0.78], pass@2 0.90 [0.41, 0.99]; p 0.60 [0.23, 0.88], 95% Wilson`
    /// (for `k` = 1 the three are one number: `pass^1 = pass@1 = p ...`).
    pub fn phrase(&self) -> String {
        let k = self.k;
        let estimate = |value: Option<f64>, interval: Option<(f64, f64)>| match (value, interval) {
            (Some(v), Some((lo, hi))) => format!("{v:.2} [{lo:.2}, {hi:.2}]"),
            (Some(v), None) => format!("{v:.2}"),
            (None, _) => "n/a".to_owned(),
        };
        let rate = match (self.rate, self.rate_interval) {
            (Some(p), Some((lo, hi))) => format!("p {p:.2} [{lo:.2}, {hi:.2}]"),
            _ => "p n/a".to_owned(),
        };
        if k == 1 {
            // pass^1 and pass@1 are both the per-trial rate.
            return format!("pass^1 = pass@1 = {rate}, 95% Wilson");
        }
        format!(
            "pass^{k} {}, pass@{k} {}; {rate}, 95% Wilson",
            estimate(self.pass_hat_k, self.pass_hat_k_interval),
            estimate(self.pass_at_k, self.pass_at_k_interval),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn estimators_match_hand_computed_values() {
        // n=5, c=3, k=2: C(5,2)=10, C(3,2)=3, C(2,2)=1.
        let s = TrialStats::new(5, 3, 2);
        assert!(close(s.pass_hat_k.unwrap(), 3.0 / 10.0));
        assert!(close(s.pass_at_k.unwrap(), 1.0 - 1.0 / 10.0));
        // n=4, c=3, k=4: C(3,4)=0, C(1,4)=0.
        let s = TrialStats::new(4, 3, 4);
        assert!(close(s.pass_hat_k.unwrap(), 0.0));
        assert!(close(s.pass_at_k.unwrap(), 1.0));
        // n=10, c=7, k=3: C(7,3)=35, C(3,3)=1, C(10,3)=120.
        let s = TrialStats::new(10, 7, 3);
        assert!(close(s.pass_hat_k.unwrap(), 35.0 / 120.0));
        assert!(close(s.pass_at_k.unwrap(), 119.0 / 120.0));
        // k=1: both are the pass rate.
        let s = TrialStats::new(8, 6, 1);
        assert!(close(s.pass_hat_k.unwrap(), 0.75));
        assert!(close(s.pass_at_k.unwrap(), 0.75));
        // All pass / none pass.
        assert!(close(TrialStats::new(3, 3, 3).pass_hat_k.unwrap(), 1.0));
        assert!(close(TrialStats::new(3, 0, 1).pass_at_k.unwrap(), 0.0));
        // k beyond the trials that ran: undefined, not invented.
        let s = TrialStats::new(2, 2, 3);
        assert_eq!((s.pass_at_k, s.pass_hat_k), (None, None));
        assert_eq!(TrialStats::new(0, 0, 1).rate_interval, None);
    }

    #[test]
    fn wilson_matches_hand_computed_bounds() {
        // c=3, n=5 (p=0.6): the textbook 95% Wilson interval 0.2307..0.8824.
        let (lo, hi) = wilson_interval(3, 5).unwrap();
        assert!((lo - 0.230_7).abs() < 1e-4, "{lo}");
        assert!((hi - 0.882_4).abs() < 1e-4, "{hi}");
        // c=0, n=10: lower bound 0, upper 0.2775.
        let (lo, hi) = wilson_interval(0, 10).unwrap();
        assert!(close(lo, 0.0));
        assert!((hi - 0.277_5).abs() < 1e-4, "{hi}");
        // c=n=1: 0.2065..1.
        let (lo, hi) = wilson_interval(1, 1).unwrap();
        assert!((lo - 0.206_5).abs() < 1e-4 && close(hi, 1.0), "{lo} {hi}");
        // The interval on pass^k is the rate interval raised to k.
        let s = TrialStats::new(5, 3, 2);
        let (plo, phi) = s.pass_hat_k_interval.unwrap();
        assert!(close(plo, lo_sq(3, 5)) && phi <= 1.0, "{plo} {phi}");
    }

    fn lo_sq(c: u32, n: u32) -> f64 {
        let (lo, _) = wilson_interval(c, n).unwrap();
        lo * lo
    }

    #[test]
    fn the_phrase_names_k_and_the_interval() {
        let phrase = TrialStats::new(5, 3, 2).phrase();
        assert_eq!(
            phrase,
            "pass^2 0.30 [0.05, 0.78], pass@2 0.90 [0.41, 0.99]; p 0.60 [0.23, 0.88], 95% Wilson"
        );
        assert_eq!(
            TrialStats::new(1, 0, 1).phrase(),
            "pass^1 = pass@1 = p 0.00 [0.00, 0.79], 95% Wilson"
        );
    }
}
