//! Evaluating an assertion against one step's evidence.

mod answers;
mod effects;
mod every_call;
pub(crate) use effects::tool_label;
mod fixture;
mod pause;
pub(crate) mod procedures;
mod record;
mod requests;
mod routes;
pub(crate) mod tools;

use super::{Assertion, Evidence};

/// The answer of one assertion: whether it held, and expected vs observed as
/// report-safe text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Whether the assertion held.
    pub passed: bool,
    /// What the assertion required (from the pack's own definition).
    pub expected: String,
    /// What the evidence showed; values that could carry turn content are digests.
    pub observed: String,
    /// The evidence the assertion reads was not in the shape the pack's
    /// contract fixes (a published procedure that is not an object, a
    /// precondition the evaluator cannot read, an oracle that failed): the
    /// step breaks with a named error rather than merely failing a check.
    pub malformed: bool,
}

impl Check {
    pub(crate) fn new(
        passed: bool,
        expected: impl Into<String>,
        observed: impl Into<String>,
    ) -> Self {
        Self {
            passed,
            expected: expected.into(),
            observed: observed.into(),
            malformed: false,
        }
    }

    pub(crate) fn malformed(expected: impl Into<String>, observed: impl Into<String>) -> Self {
        Self {
            malformed: true,
            ..Self::new(false, expected, observed)
        }
    }
}

impl Assertion {
    /// Checks this assertion against a step's evidence.
    ///
    /// ```
    /// use symfonic_evals::{Assertion, Evidence, LedgerCounts, TurnRecord};
    /// let record = TurnRecord::builder().attribute("procedural_promoted", 2).build();
    /// let check = Assertion::AttributeCount { name: "procedural_promoted".into(), minimum: 1 }
    ///     .check(&Evidence::of(&record, LedgerCounts::default()));
    /// assert!(check.passed);
    /// ```
    pub fn check(&self, evidence: &Evidence<'_>) -> Check {
        let record = evidence.record;
        let no_public = crate::redact::PublicValues::default();
        let public = evidence.public.unwrap_or(&no_public);
        match self {
            Self::AttributeEquals { name, expected } => {
                record::attribute_equals(record, name, expected, public)
            }
            Self::AttributeEqualsIfPresent { name, expected } => match record.fact(name) {
                None => Check::new(
                    true,
                    format!("{name} absent, or = {expected}"),
                    format!("{name} absent"),
                ),
                Some(_) => record::attribute_equals(record, name, expected, public),
            },
            Self::AttributeCount { name, minimum } => {
                record::attribute_count(record, name, *minimum)
            }
            Self::AttributesSameNonEmpty { left, right } => {
                record::same_non_empty(record, left, right, public)
            }
            Self::PromptRecallContains(fragment) => record::recall(record, fragment, true),
            Self::PromptRecallExcludes(fragment) => record::recall(record, fragment, false),
            Self::StageObserved {
                stage,
                outcome,
                minimum_counts,
            } => record::stage_observed(record, stage, *outcome, minimum_counts),
            Self::ResponseContains(fragments) => record::response_contains(record, fragments),
            Self::ToolCalled {
                tool,
                times,
                arguments,
                matching,
            } => tools::called(record, tool, *times, arguments.as_ref(), *matching, public),
            Self::AmendmentApplied { tool, arguments } => {
                answers::amendment_applied(record, tool.as_deref(), arguments, public)
            }
            Self::EditApplied {
                call,
                tool,
                argument,
                original,
                edited,
            } => answers::edit_applied(evidence, call, tool, argument, (original, edited)),
            Self::ToolSucceeded { tool, times } => tools::succeeded(record, tool, *times),
            Self::ToolPending { tool, times } => tools::pending(record, tool, *times),
            Self::EveryCallJudged {
                tool,
                stage,
                admitted,
            } => every_call::judged(record, tool, stage, *admitted),
            Self::ToolCallIdsUnique {
                minimum,
                across_trial,
            } => tools::ids_unique(evidence, *minimum, *across_trial),
            Self::ToolWitnessed {
                tool,
                arguments,
                matching,
            } => tools::witnessed(evidence, tool, arguments.as_ref(), *matching, public),
            Self::ToolResultShown { tool } => tools::result_shown(record, tool),
            Self::ToolResultFresh { tool } => tools::result_fresh(evidence, record, tool),
            Self::ServedByFixture {
                tool,
                times,
                arguments,
                matching,
            } => fixture::served(
                evidence,
                tool,
                *times,
                arguments.as_ref(),
                *matching,
                public,
            ),
            Self::FixtureResultShown { tool } => fixture::result_shown(evidence, tool),
            Self::FixtureErrorReported { tool } => fixture::error_reported(evidence, tool),
            Self::SideEffectCount {
                attempts,
                effects,
                duplicates,
            } => effects::counts(evidence, *attempts, *effects, *duplicates),
            Self::LedgerDelta {
                attempts,
                effects,
                duplicates,
            } => effects::delta(evidence, *attempts, *effects, *duplicates),
            Self::EffectsApplied { effects } => effects::applied(evidence, *effects),
            Self::ToolEffects {
                tool,
                effects,
                retries,
            } => effects::of_tool(evidence, tool, *effects, *retries),
            Self::EffectsFewerThan { effects } => effects::fewer_than(evidence, *effects),
            Self::EffectsWithheld { approved } => effects::withheld(evidence, approved),
            Self::EffectNotRepeated => effects::not_repeated(evidence),
            Self::GovernedEffectWithheld { tool, stage } => routes::withheld(evidence, tool, stage),
            Self::GovernedEffectReached { tool } => routes::reached(evidence, tool),
            Self::KeysNotShared { retries } => effects::keys_not_shared(evidence, *retries),
            Self::AskedOrWithheld { approved } => effects::asked_or_withheld(evidence, approved),
            Self::EffectsOfOneApproval { approved, retries } => {
                effects::of_one_approval(evidence, approved, *retries)
            }
            Self::RequestsNotCrossed { request, earlier } => {
                requests::not_crossed(evidence, request, earlier)
            }
            Self::EffectsMatchOracle => effects::oracle(evidence),
            Self::CrashedEffectRetried => effects::crash_retried(evidence),
            Self::ReviewRowsInert { name } => record::rows_inert(record, name),
            Self::PauseTokenDistinct => pause::token_distinct(evidence),
            Self::PauseTokenUnpredictable => pause::token_unpredictable(evidence),
            Self::TokenKeptFromModel => pause::token_kept_from_model(evidence),
            Self::PendingResolved { tool } => pause::pending_resolved(evidence, tool),
            Self::ProceduresBound {
                procedures,
                review_ids,
                enforcement_ids,
                tool,
                enforced,
            } => procedures::bound(
                record,
                procedures::Names {
                    procedures,
                    review_ids,
                    enforcement_ids,
                },
                tool,
                *enforced,
            ),
            Self::PreconditionVerdict {
                procedures,
                tool,
                state,
                holds,
            } => procedures::verdict(record, procedures, tool, state, *holds),
            Self::GateAgrees {
                tool,
                stage,
                verdict,
            } => procedures::gate_agrees(evidence, tool, stage, *verdict),
            Self::PublishedRules {
                procedures,
                tool,
                rules,
            } => procedures::rules(record, procedures, tool, rules),
            Self::AttributeSinceStep {
                name,
                step,
                unchanged,
            } => record::since_step(evidence, name, step, *unchanged),
        }
    }
}
