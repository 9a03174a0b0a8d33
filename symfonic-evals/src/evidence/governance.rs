//! The governance trace as a turn reports it: one answer per stage.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What one governance stage decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageOutcome {
    /// The stage looked and admitted.
    Passed,
    /// The stage looked and refused.
    Rejected,
    /// The stage had nothing to judge.
    Abstained,
    /// The stage failed; its failure mode decided what happened next.
    Broken,
    /// The stage would have rejected, but runs in observe mode and admitted.
    Downgraded,
}

impl StageOutcome {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Rejected => "rejected",
            Self::Abstained => "abstained",
            Self::Broken => "broken",
            Self::Downgraded => "downgraded",
        }
    }
}

impl std::fmt::Display for StageOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One stage's answer in a turn's governance trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage's name, as the rulebook knows it.
    pub stage: String,
    /// What it decided.
    pub outcome: StageOutcome,
    /// Named counts such as `checked` and `refused`.
    #[serde(default)]
    pub counts: BTreeMap<String, u64>,
}

impl StageRecord {
    /// A stage answer with no counts yet.
    pub fn new(stage: impl Into<String>, outcome: StageOutcome) -> Self {
        Self {
            stage: stage.into(),
            outcome,
            counts: BTreeMap::new(),
        }
    }

    /// Adds `n` to the count called `name`.
    #[must_use]
    pub fn count(mut self, name: impl Into<String>, n: u64) -> Self {
        *self.counts.entry(name.into()).or_insert(0) += n;
        self
    }
}
