//! The rulebook: which stages exist, in what order, on which rung, and what
//! happens when one breaks; and [`PipelineError`], why a rulebook, or a
//! pipeline checked against one, was refused.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The credential scrubber's stage name.
pub const CREDENTIAL_SCRUB_STAGE: &str = "credential_scrub";
/// The per-turn tool-call budget's stage name.
pub const BUDGET_CEILING_STAGE: &str = "budget_ceiling";
/// The procedural precondition gate's stage name; the procedural pack reads
/// this stage in the governance trace by default.
pub const PRECONDITION_STAGE: &str = "procedural_precondition";
/// The reflection (critic) pass's stage name.
pub const REFLECTION_STAGE: &str = "reflection";

/// The rung of a turn a stage runs on, named after what it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Before the model reads the query.
    Query,
    /// Before a tool call the model asked for is admitted.
    ToolCall,
    /// Before a tool's result reaches the model.
    ToolResult,
    /// After the draft answer exists, before it is released.
    Draft,
}

impl Phase {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::ToolCall => "tool_call",
            Self::ToolResult => "tool_result",
            Self::Draft => "draft",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the pipeline does when a stage errors or panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureMode {
    /// A broken stage blocks: it guards something that must not pass unchecked.
    FailClosed,
    /// A broken stage is recorded and the subject admitted: it only improves.
    FailOpen,
}

impl fmt::Display for FailureMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::FailClosed => "fail_closed",
            Self::FailOpen => "fail_open",
        })
    }
}

/// One stage's place in the rulebook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// The stage's name.
    pub stage: String,
    /// The rung it belongs to.
    pub phase: Phase,
    /// How it is contained when it breaks.
    pub failure_mode: FailureMode,
}

impl Rule {
    /// A rule for `stage`.
    pub fn new(stage: impl Into<String>, phase: Phase, failure_mode: FailureMode) -> Self {
        Self {
            stage: stage.into(),
            phase,
            failure_mode,
        }
    }
}

/// Ordered rules; a rule's position is its rank, and a pipeline must run its
/// stages in rank order.
///
/// ```
/// use symfonic_evals::contracts::{FailureMode, Phase, RuleBook, CREDENTIAL_SCRUB_STAGE, PRECONDITION_STAGE};
///
/// let book = RuleBook::canonical();
/// let scrub = book.rule_for(CREDENTIAL_SCRUB_STAGE).unwrap();
/// assert_eq!((scrub.phase, scrub.failure_mode), (Phase::Query, FailureMode::FailClosed));
/// assert!(book.rank(CREDENTIAL_SCRUB_STAGE) < book.rank(PRECONDITION_STAGE));
/// assert!(book.validate([PRECONDITION_STAGE, CREDENTIAL_SCRUB_STAGE]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleBook {
    rules: Vec<Rule>,
}

impl RuleBook {
    /// A rulebook from rules in rank order; a stage named twice is refused.
    ///
    /// ```
    /// use symfonic_evals::contracts::{FailureMode, Phase, PipelineError, Rule, RuleBook};
    ///
    /// let book = RuleBook::new(vec![
    ///     Rule::new("credential_scrub", Phase::Query, FailureMode::FailClosed),
    ///     Rule::new("tone_critic", Phase::Draft, FailureMode::FailOpen),
    /// ])
    /// .unwrap();
    /// assert_eq!(book.rank("tone_critic"), Some(1));
    ///
    /// let twice = vec![Rule::new("x", Phase::Query, FailureMode::FailOpen); 2];
    /// assert!(matches!(RuleBook::new(twice), Err(PipelineError::DuplicateStage { .. })));
    /// ```
    pub fn new(rules: Vec<Rule>) -> Result<Self, PipelineError> {
        for (index, rule) in rules.iter().enumerate() {
            if rules[..index]
                .iter()
                .any(|earlier| earlier.stage == rule.stage)
            {
                return Err(PipelineError::DuplicateStage {
                    stage: rule.stage.clone(),
                });
            }
        }
        Ok(Self { rules })
    }

    /// The canonical order:
    /// 1. credential scrubbing, first because every later stage observes the
    ///    payload (it belongs to the query rung and is carried onto the others);
    /// 2. the budget ceiling, then
    /// 3. the procedural precondition, both before a tool call is admitted;
    /// 4. the reflection pass, once a draft answer exists.
    ///
    /// Every guard fails closed; the critic only improves an answer and fails open.
    pub fn canonical() -> Self {
        use FailureMode::{FailClosed, FailOpen};
        Self {
            rules: vec![
                Rule::new(CREDENTIAL_SCRUB_STAGE, Phase::Query, FailClosed),
                Rule::new(BUDGET_CEILING_STAGE, Phase::ToolCall, FailClosed),
                Rule::new(PRECONDITION_STAGE, Phase::ToolCall, FailClosed),
                Rule::new(REFLECTION_STAGE, Phase::Draft, FailOpen),
            ],
        }
    }

    /// The rules in rank order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule for `stage`, if the rulebook knows it.
    pub fn rule_for(&self, stage: &str) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.stage == stage)
    }

    /// The rank of `stage` (0 first), if the rulebook knows it.
    pub fn rank(&self, stage: &str) -> Option<usize> {
        self.rules.iter().position(|rule| rule.stage == stage)
    }

    /// Checks that `names` are known, distinct, and in rank order.
    pub fn validate<'a, I>(&self, names: I) -> Result<(), PipelineError>
    where
        I: IntoIterator<Item = &'a str>,
    {
        let mut previous: Option<(usize, &str)> = None;
        for name in names {
            let rank = self.rank(name).ok_or_else(|| PipelineError::UnknownStage {
                stage: name.to_owned(),
            })?;
            if let Some((previous_rank, previous_name)) = previous {
                if rank == previous_rank {
                    return Err(PipelineError::DuplicateStage {
                        stage: name.to_owned(),
                    });
                }
                if rank < previous_rank {
                    return Err(PipelineError::OutOfOrder {
                        stage: name.to_owned(),
                        after: previous_name.to_owned(),
                    });
                }
            }
            previous = Some((rank, name));
        }
        Ok(())
    }
}

impl Default for RuleBook {
    fn default() -> Self {
        Self::canonical()
    }
}

/// Why a pipeline (or rulebook) was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipelineError {
    /// A pipeline with no stage at all examines nothing.
    Empty,
    /// The rulebook has no rule for this stage.
    UnknownStage {
        /// The stage's name.
        stage: String,
    },
    /// The stage appears twice.
    DuplicateStage {
        /// The stage's name.
        stage: String,
    },
    /// The stage runs after one the rulebook ranks later.
    OutOfOrder {
        /// The stage placed too late.
        stage: String,
        /// The stage it was placed after.
        after: String,
    },
    /// The stage declares another rung than its rule.
    PhaseMismatch {
        /// The stage's name.
        stage: String,
        /// What the stage declares.
        declared: Phase,
        /// What the rulebook says.
        rule: Phase,
    },
    /// The stage declares another failure mode than its rule.
    FailureModeMismatch {
        /// The stage's name.
        stage: String,
        /// What the stage declares.
        declared: FailureMode,
        /// What the rulebook says.
        rule: FailureMode,
    },
    /// Observe mode was asked for a stage this pipeline does not run.
    NotInPipeline {
        /// The stage's name.
        stage: String,
    },
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "a governance pipeline needs at least one stage"),
            Self::UnknownStage { stage } => {
                write!(f, "stage `{stage}` has no rule in the rulebook")
            }
            Self::DuplicateStage { stage } => write!(f, "stage `{stage}` appears twice"),
            Self::OutOfOrder { stage, after } => write!(
                f,
                "stage `{stage}` is placed after `{after}`, which the rulebook ranks later"
            ),
            Self::PhaseMismatch {
                stage,
                declared,
                rule,
            } => write!(
                f,
                "stage `{stage}` declares phase {declared} but its rule says {rule}"
            ),
            Self::FailureModeMismatch {
                stage,
                declared,
                rule,
            } => write!(
                f,
                "stage `{stage}` declares {declared} but its rule says {rule}"
            ),
            Self::NotInPipeline { stage } => {
                write!(f, "stage `{stage}` is not in this pipeline")
            }
        }
    }
}

impl std::error::Error for PipelineError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rulebook_naming_a_stage_twice_is_refused() {
        let rule = Rule::new("x", Phase::Query, FailureMode::FailOpen);
        assert_eq!(
            RuleBook::new(vec![rule.clone(), rule]),
            Err(PipelineError::DuplicateStage { stage: "x".into() })
        );
    }

    #[test]
    fn validation_names_the_offence() {
        let book = RuleBook::canonical();
        assert!(book
            .validate([CREDENTIAL_SCRUB_STAGE, REFLECTION_STAGE])
            .is_ok());
        assert_eq!(
            book.validate(["critic"]),
            Err(PipelineError::UnknownStage {
                stage: "critic".into()
            })
        );
        assert_eq!(
            book.validate([BUDGET_CEILING_STAGE, BUDGET_CEILING_STAGE]),
            Err(PipelineError::DuplicateStage {
                stage: BUDGET_CEILING_STAGE.into()
            })
        );
        assert_eq!(
            book.validate([PRECONDITION_STAGE, BUDGET_CEILING_STAGE]),
            Err(PipelineError::OutOfOrder {
                stage: BUDGET_CEILING_STAGE.into(),
                after: PRECONDITION_STAGE.into()
            })
        );
    }
}
