//! How an assertion names itself in reports: its kind, and a one-line
//! description of its parameters. Both come from the pack's own definition,
//! never from what a deployment reported.

use super::{Assertion, GateVerdict};

impl Assertion {
    /// The assertion's kind, as failures name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::AttributeEquals { .. } => "AttributeEquals",
            Self::AttributeEqualsIfPresent { .. } => "AttributeEqualsIfPresent",
            Self::AttributeCount { .. } => "AttributeCount",
            Self::AttributesSameNonEmpty { .. } => "AttributesSameNonEmpty",
            Self::PromptRecallContains(_) => "PromptRecallContains",
            Self::PromptRecallExcludes(_) => "PromptRecallExcludes",
            Self::ToolCalled { .. } => "ToolCalled",
            Self::AmendmentApplied { .. } => "AmendmentApplied",
            Self::EditApplied { .. } => "EditApplied",
            Self::ToolSucceeded { .. } => "ToolSucceeded",
            Self::ToolPending { .. } => "ToolPending",
            Self::EveryCallJudged { .. } => "EveryCallJudged",
            Self::ToolCallIdsUnique { .. } => "ToolCallIdsUnique",
            Self::SideEffectCount { .. } => "SideEffectCount",
            Self::EffectsApplied { .. } => "EffectsApplied",
            Self::EffectsFewerThan { .. } => "EffectsFewerThan",
            Self::EffectsWithheld { .. } => "EffectsWithheld",
            Self::EffectNotRepeated => "EffectNotRepeated",
            Self::KeysNotShared { .. } => "KeysNotShared",
            Self::GovernedEffectWithheld { .. } => "GovernedEffectWithheld",
            Self::GovernedEffectReached { .. } => "GovernedEffectReached",
            Self::AskedOrWithheld { .. } => "AskedOrWithheld",
            Self::EffectsOfOneApproval { .. } => "EffectsOfOneApproval",
            Self::RequestsNotCrossed { .. } => "RequestsNotCrossed",
            Self::LedgerDelta { .. } => "LedgerDelta",
            Self::ToolEffects { .. } => "ToolEffects",
            Self::StageObserved { .. } => "StageObserved",
            Self::ResponseContains(_) => "ResponseContains",
            Self::PauseTokenDistinct => "PauseTokenDistinct",
            Self::PauseTokenUnpredictable => "PauseTokenUnpredictable",
            Self::TokenKeptFromModel => "TokenKeptFromModel",
            Self::PendingResolved { .. } => "PendingResolved",
            Self::ProceduresBound { .. } => "ProceduresBound",
            Self::PreconditionVerdict { .. } => "PreconditionVerdict",
            Self::GateAgrees { .. } => "GateAgrees",
            Self::ToolWitnessed { .. } => "ToolWitnessed",
            Self::ToolResultShown { .. } => "ToolResultShown",
            Self::ToolResultFresh { .. } => "ToolResultFresh",
            Self::PublishedRules { .. } => "PublishedRules",
            Self::ServedByFixture { .. } => "ServedByFixture",
            Self::FixtureResultShown { .. } => "FixtureResultShown",
            Self::FixtureErrorReported { .. } => "FixtureErrorReported",
            Self::AttributeSinceStep { .. } => "AttributeSinceStep",
            Self::ReviewRowsInert { .. } => "ReviewRowsInert",
            Self::EffectsMatchOracle => "EffectsMatchOracle",
            Self::CrashedEffectRetried => "CrashedEffectRetried",
        }
    }

    /// The values the assertion names (its parameters, but never a turn's
    /// state): the pack's own, so a report may show them wherever they
    /// turn up.
    pub fn public_values(&self) -> Vec<serde_json::Value> {
        use serde_json::Value;
        let text = |s: &str| Value::String(s.to_owned());
        match self {
            Self::AttributeEquals { name, expected }
            | Self::AttributeEqualsIfPresent { name, expected } => {
                vec![text(name), expected.clone()]
            }
            Self::AttributeCount { name, .. } => vec![text(name)],
            Self::AttributesSameNonEmpty { left, right } => vec![text(left), text(right)],
            Self::PromptRecallContains(f) | Self::PromptRecallExcludes(f) => vec![text(f)],
            Self::ToolCalled {
                tool, arguments, ..
            }
            | Self::ToolWitnessed {
                tool, arguments, ..
            }
            | Self::ServedByFixture {
                tool, arguments, ..
            } => std::iter::once(text(tool))
                .chain(arguments.clone())
                .collect(),
            Self::AmendmentApplied { tool, arguments } => tool
                .iter()
                .map(|t| text(t))
                .chain(std::iter::once(arguments.clone()))
                .collect(),
            // The values come from the deployment's own call: turn content,
            // shown only as digests.
            Self::EditApplied { tool, argument, .. } => vec![text(tool), text(argument)],
            Self::ToolSucceeded { tool, .. }
            | Self::ToolPending { tool, .. }
            | Self::PendingResolved { tool }
            | Self::ToolEffects { tool, .. }
            | Self::ToolResultShown { tool }
            | Self::ToolResultFresh { tool }
            | Self::FixtureResultShown { tool }
            | Self::FixtureErrorReported { tool } => vec![text(tool)],
            Self::StageObserved { stage, .. } => vec![text(stage)],
            Self::EveryCallJudged { tool, stage, .. } => vec![text(tool), text(stage)],
            Self::ResponseContains(fragments) => fragments.iter().map(|f| text(f)).collect(),
            Self::ProceduresBound {
                procedures,
                review_ids,
                enforcement_ids,
                tool,
                ..
            } => vec![
                text(procedures),
                text(review_ids),
                text(enforcement_ids),
                text(tool),
            ],
            // The state is turn content: never public.
            Self::PreconditionVerdict {
                procedures, tool, ..
            } => vec![text(procedures), text(tool)],
            Self::GateAgrees { tool, stage, .. } | Self::GovernedEffectWithheld { tool, stage } => {
                vec![text(tool), text(stage)]
            }
            Self::GovernedEffectReached { tool } => vec![text(tool)],
            // The rules are the pack's own, composed from its states: the
            // states are turn content, so the rules stay out too.
            Self::PublishedRules {
                procedures, tool, ..
            } => vec![text(procedures), text(tool)],
            Self::AttributeSinceStep { name, step, .. } => vec![text(name), text(step)],
            Self::ReviewRowsInert { name } => vec![text(name)],
            Self::ToolCallIdsUnique { .. }
            | Self::SideEffectCount { .. }
            | Self::EffectsApplied { .. }
            | Self::EffectsFewerThan { .. }
            | Self::EffectsWithheld { .. }
            | Self::EffectNotRepeated
            | Self::KeysNotShared { .. }
            | Self::AskedOrWithheld { .. }
            | Self::EffectsOfOneApproval { .. }
            | Self::RequestsNotCrossed { .. }
            | Self::LedgerDelta { .. }
            | Self::PauseTokenDistinct
            | Self::PauseTokenUnpredictable
            | Self::TokenKeptFromModel
            | Self::EffectsMatchOracle
            | Self::CrashedEffectRetried => Vec::new(),
        }
    }

    /// A one-line description naming the assertion's parameters (never any
    /// observed value).
    pub fn describe(&self) -> String {
        match self {
            Self::AttributeEquals { name, .. } => format!("AttributeEquals({name})"),
            Self::AttributeEqualsIfPresent { name, .. } => {
                format!("AttributeEqualsIfPresent({name})")
            }
            Self::AttributeCount { name, minimum } => {
                format!("AttributeCount({name}, minimum={minimum})")
            }
            Self::AttributesSameNonEmpty { left, right } => {
                format!("AttributesSameNonEmpty({left}, {right})")
            }
            Self::PromptRecallContains(_) => "PromptRecallContains(fragment)".into(),
            Self::PromptRecallExcludes(_) => "PromptRecallExcludes(fragment)".into(),
            Self::AmendmentApplied { tool, .. } => match tool {
                Some(tool) => format!("AmendmentApplied({tool})"),
                None => "AmendmentApplied(any tool)".into(),
            },
            Self::EditApplied { tool, argument, .. } => {
                format!("EditApplied({tool}.{argument})")
            }
            Self::ToolCalled {
                tool,
                times,
                arguments,
                matching,
            } => match arguments {
                Some(_) => format!(
                    "ToolCalled({tool}, times={times}, with arguments, {})",
                    matching.as_str()
                ),
                None => format!("ToolCalled({tool}, times={times})"),
            },
            Self::ToolSucceeded { tool, times } => format!("ToolSucceeded({tool}, times={times})"),
            Self::ToolPending { tool, times } => format!("ToolPending({tool}, times={times})"),
            Self::EveryCallJudged {
                tool,
                stage,
                admitted,
            } => {
                let verdict = if *admitted { "admitted" } else { "refused" };
                format!("EveryCallJudged({tool}, {stage}, {verdict})")
            }
            Self::ToolCallIdsUnique {
                minimum,
                across_trial,
            } => {
                let scope = if *across_trial {
                    ", across the trial"
                } else {
                    ""
                };
                format!("ToolCallIdsUnique(minimum={minimum}{scope})")
            }
            Self::SideEffectCount {
                attempts,
                effects,
                duplicates,
            } => format!(
                "SideEffectCount(attempts={attempts}, effects={effects}, duplicates={duplicates})"
            ),
            Self::EffectsApplied { effects } => format!("EffectsApplied({effects})"),
            Self::EffectsFewerThan { effects } => format!("EffectsFewerThan({effects})"),
            Self::EffectsWithheld { approved } => {
                let tools: Vec<String> = approved
                    .iter()
                    .map(|(tool, n)| format!("{}={n}", super::check::tool_label(tool)))
                    .collect();
                format!("EffectsWithheld(approved: {})", tools.join(", "))
            }
            Self::EffectNotRepeated => "EffectNotRepeated".into(),
            Self::KeysNotShared { retries } => {
                format!("KeysNotShared(retries={})", retries.as_str())
            }
            Self::GovernedEffectWithheld { tool, stage } => {
                format!("GovernedEffectWithheld({tool}, {stage})")
            }
            Self::GovernedEffectReached { tool } => format!("GovernedEffectReached({tool})"),
            Self::AskedOrWithheld { approved } => {
                let tools: Vec<&str> = approved
                    .keys()
                    .map(|tool| super::check::tool_label(tool))
                    .collect();
                format!("AskedOrWithheld(approved tools: {})", tools.join(", "))
            }
            Self::EffectsOfOneApproval { approved, .. } => {
                let tools: Vec<String> = approved
                    .iter()
                    .map(|(tool, n)| format!("{}={n}", super::check::tool_label(tool)))
                    .collect();
                format!("EffectsOfOneApproval(approved: {})", tools.join(", "))
            }
            Self::RequestsNotCrossed { request, .. } => {
                let tools: Vec<&str> = request
                    .keys()
                    .map(|tool| super::check::tool_label(tool))
                    .collect();
                format!("RequestsNotCrossed(tools: {})", tools.join(", "))
            }
            Self::ToolEffects {
                tool,
                effects,
                retries,
            } => format!(
                "ToolEffects({tool}, effects+{effects}, retries={})",
                retries.as_str()
            ),
            Self::LedgerDelta {
                attempts,
                effects,
                duplicates,
            } => format!(
                "LedgerDelta(attempts+{attempts}, effects+{effects}, duplicates+{duplicates})"
            ),
            Self::StageObserved {
                stage,
                outcome,
                minimum_counts,
            } => {
                let mut text = format!("StageObserved({stage}");
                if let Some(outcome) = outcome {
                    text.push_str(&format!(", outcome={outcome}"));
                }
                for (name, least) in minimum_counts {
                    text.push_str(&format!(", {name}>={least}"));
                }
                text.push(')');
                text
            }
            Self::ResponseContains(fragments) => {
                format!("ResponseContains({} fragments)", fragments.len())
            }
            Self::PauseTokenDistinct => "PauseTokenDistinct".into(),
            Self::PauseTokenUnpredictable => "PauseTokenUnpredictable".into(),
            Self::TokenKeptFromModel => "TokenKeptFromModel".into(),
            Self::PendingResolved { tool } => format!("PendingResolved({tool})"),
            Self::ProceduresBound {
                procedures,
                review_ids,
                enforcement_ids,
                enforced,
                ..
            } => {
                let scope = if *enforced {
                    format!(", {enforcement_ids}")
                } else {
                    String::new()
                };
                format!("ProceduresBound({procedures}, {review_ids}{scope})")
            }
            Self::PreconditionVerdict { tool, holds, .. } => {
                let verdict = if *holds { "holds" } else { "fails" };
                format!("PreconditionVerdict({tool}, {verdict})")
            }
            Self::GateAgrees {
                tool,
                stage,
                verdict,
            } => {
                let verdict = match verdict {
                    GateVerdict::Admit => "admit",
                    GateVerdict::Refuse => "refuse",
                };
                format!("GateAgrees({tool}, {stage}, {verdict})")
            }
            Self::ToolWitnessed {
                tool,
                arguments,
                matching,
            } => match arguments {
                Some(_) => format!(
                    "ToolWitnessed({tool}, with arguments, {})",
                    matching.as_str()
                ),
                None => format!("ToolWitnessed({tool})"),
            },
            Self::ToolResultShown { tool } => format!("ToolResultShown({tool})"),
            Self::ToolResultFresh { tool } => format!("ToolResultFresh({tool})"),
            Self::ServedByFixture {
                tool,
                times,
                arguments,
                matching,
            } => match arguments {
                Some(_) => format!(
                    "ServedByFixture({tool}, times={times}, with arguments, {})",
                    matching.as_str()
                ),
                None => format!("ServedByFixture({tool}, times={times})"),
            },
            Self::FixtureResultShown { tool } => format!("FixtureResultShown({tool})"),
            Self::FixtureErrorReported { tool } => format!("FixtureErrorReported({tool})"),
            Self::PublishedRules { tool, rules, .. } => {
                let sizes: Vec<String> = rules.iter().map(|r| r.len().to_string()).collect();
                format!(
                    "PublishedRules({tool}, {} rule(s) of [{}] predicate(s))",
                    rules.len(),
                    sizes.join(", ")
                )
            }
            Self::AttributeSinceStep {
                name,
                step,
                unchanged,
            } => {
                let how = if *unchanged { "unchanged" } else { "changed" };
                format!("AttributeSinceStep({name}, {how} since `{step}`)")
            }
            Self::EffectsMatchOracle => "EffectsMatchOracle".into(),
            Self::CrashedEffectRetried => "CrashedEffectRetried".into(),
            Self::ReviewRowsInert { name } => format!("ReviewRowsInert({name})"),
        }
    }
}
