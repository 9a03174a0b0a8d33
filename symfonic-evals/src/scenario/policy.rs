//! How many trials a scenario runs, how many must pass, and how patiently.

use std::time::Duration;

/// Overrides every pack's trial count for one run (as `PROPTEST_CASES`
/// does for properties), so CI can run a nightly `k = 5` without editing
/// tests.
pub const TRIALS_ENV: &str = "SYMFONIC_EVALS_TRIALS";
/// With [`TRIALS_ENV`]: how many of those trials must pass (all of them
/// when unset).
pub const REQUIRED_ENV: &str = "SYMFONIC_EVALS_REQUIRED";

/// How many trials a scenario runs and how many must pass. Each trial starts
/// from a fresh [`TargetContext`](crate::TargetContext).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialPolicy {
    /// Trials to run.
    pub trials: u32,
    /// Trials that must pass.
    pub required: u32,
    /// How long one step may take before the trial ends as hung.
    pub step_timeout: Duration,
    /// How many trials may run at once; `0` means the machine's available
    /// parallelism. Trials wait on a deployment's I/O (a model API), so
    /// running them side by side costs little more than running one.
    pub concurrency: u32,
}

impl Default for TrialPolicy {
    fn default() -> Self {
        Self {
            trials: 1,
            required: 1,
            step_timeout: Duration::from_secs(30),
            concurrency: 0,
        }
    }
}

impl TrialPolicy {
    /// Every one of `trials` must pass.
    pub fn all_of(trials: u32) -> Self {
        Self {
            trials,
            required: trials,
            ..Self::default()
        }
    }

    /// What is wrong with this policy, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.trials == 0 {
            Some("a trial policy must run at least one trial".into())
        } else if self.required == 0 {
            Some("a trial policy must require at least one passing trial".into())
        } else if self.required > self.trials {
            Some(format!(
                "a trial policy cannot require {} passes out of {} trials",
                self.required, self.trials
            ))
        } else if self.step_timeout.is_zero() {
            Some("a step timeout of zero would end every trial before it starts".into())
        } else {
            None
        }
    }

    /// How many trials run at once under this policy.
    pub fn workers(&self) -> usize {
        let limit = match self.concurrency {
            0 => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            n => n as usize,
        };
        limit.clamp(1, self.trials.max(1) as usize)
    }

    /// This policy with the trial counts of [`TRIALS_ENV`] and
    /// [`REQUIRED_ENV`] when they are set.
    ///
    /// # Errors
    ///
    /// A variable that is set but is not a positive count, or a required
    /// count above the trials: a typo must not quietly run the default.
    pub fn overridden_by_env(self) -> Result<Self, String> {
        let trials = std::env::var(TRIALS_ENV).ok();
        let required = std::env::var(REQUIRED_ENV).ok();
        self.overridden_by(trials.as_deref(), required.as_deref())
    }

    /// [`overridden_by_env`](Self::overridden_by_env) with the variables'
    /// values given.
    ///
    /// # Errors
    ///
    /// As [`overridden_by_env`](Self::overridden_by_env).
    pub fn overridden_by(
        self,
        trials: Option<&str>,
        required: Option<&str>,
    ) -> Result<Self, String> {
        let read = |name: &str, text: Option<&str>| -> Result<Option<u32>, String> {
            match text.map(str::trim) {
                None | Some("") => Ok(None),
                Some(text) => match text.parse::<u32>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => Err(format!("{name}={text:?} is not a positive count")),
                },
            }
        };
        let policy = match (read(TRIALS_ENV, trials)?, read(REQUIRED_ENV, required)?) {
            (None, None) => self,
            (Some(trials), required) => Self {
                trials,
                required: required.unwrap_or(trials),
                ..self
            },
            (None, Some(_)) => return Err(format!("{REQUIRED_ENV} needs {TRIALS_ENV} beside it")),
        };
        match policy.problem() {
            Some(problem) => Err(format!("{TRIALS_ENV}/{REQUIRED_ENV}: {problem}")),
            None => Ok(policy),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trial_variables_override_counts_and_keep_the_rest() {
        let policy = TrialPolicy {
            step_timeout: Duration::from_millis(250),
            ..TrialPolicy::default()
        };
        assert_eq!(policy.overridden_by(None, None), Ok(policy));
        let five = policy.overridden_by(Some("5"), None).unwrap();
        assert_eq!((five.trials, five.required), (5, 5));
        assert_eq!(five.step_timeout, Duration::from_millis(250));
        let four_of_five = policy.overridden_by(Some(" 5 "), Some("4")).unwrap();
        assert_eq!((four_of_five.trials, four_of_five.required), (5, 4));
        assert_eq!(policy.overridden_by(Some(""), None), Ok(policy));
    }

    #[test]
    fn a_typo_in_the_trial_variables_is_an_error_not_the_default() {
        for (trials, required) in [
            (Some("five"), None),
            (Some("0"), None),
            (Some("-1"), None),
            (None, Some("2")),
            (Some("2"), Some("3")),
        ] {
            let refused = TrialPolicy::default().overridden_by(trials, required);
            assert!(refused.is_err(), "{trials:?} {required:?}");
        }
    }

    #[test]
    fn workers_follow_the_concurrency_and_never_exceed_the_trials() {
        let policy = |trials, concurrency| TrialPolicy {
            trials,
            concurrency,
            ..TrialPolicy::all_of(trials)
        };
        assert_eq!(policy(5, 2).workers(), 2);
        assert_eq!(policy(1, 8).workers(), 1);
        assert!(policy(4, 0).workers() >= 1);
    }
}
