//! What every pack shares: its kind, its argument checks, and applicability.

use serde_json::Value;

use super::probes::{Probe, ProbeNotRun};
use super::{
    ApprovalResumePack, ArgumentError, ExactlyOncePack, ExtensionToolPack, ProceduralPack,
};
use crate::capability::{CapabilityEvidence, Missing, Requirements};
use crate::scenario::{Scenario, TrialPolicy};

/// The three packs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PackKind {
    /// Learned procedures: promoted, reviewed, persisted, enforced.
    Procedural,
    /// A pause for a person, resumed once, replay refused.
    ApprovalResume,
    /// A tool an extension contributes really runs.
    ExtensionTool,
    /// Effects applied exactly once across crashes and retries.
    ExactlyOnce,
}

impl PackKind {
    /// The pack's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Procedural => "procedural-skills",
            Self::ApprovalResume => "approval-resume",
            Self::ExtensionTool => "extension-tools",
            Self::ExactlyOnce => "exactly-once-effects",
        }
    }

    /// The capability whose claim the pack checks.
    pub fn capability(self) -> &'static str {
        match self {
            Self::Procedural => "tools",
            Self::ApprovalResume => "human",
            Self::ExtensionTool => "extensions",
            Self::ExactlyOnce => "tools",
        }
    }

    /// The name of the pack's seed scenario, as its contract gives it.
    pub fn seed_scenario(self) -> &'static str {
        match self {
            Self::Procedural => super::procedural::SEED,
            Self::ApprovalResume => super::approval::SEED,
            Self::ExtensionTool => super::extension::SEED,
            Self::ExactlyOnce => super::exactly_once::SEED,
        }
    }

    /// Every probe the pack can run, in the order it runs them.
    pub fn probes(self) -> &'static [Probe] {
        match self {
            Self::Procedural => super::procedural::PROBES,
            Self::ApprovalResume => super::approval::PROBES,
            Self::ExtensionTool => super::extension::PROBES,
            Self::ExactlyOnce => super::exactly_once::PROBES,
        }
    }
}

/// Either the scenarios a pack runs (its seed scenario first, then its
/// probes), or precisely what the deployment lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum PackResolution {
    /// The pack applies; run these.
    Scenarios(Vec<Scenario>),
    /// The pack does not apply, for these reasons.
    NotApplicable(Vec<Missing>),
}

/// Resolves a pack against the deployment's evidence: its scenarios when
/// nothing is missing, else the list of what is.
pub fn resolve_pack(
    evidence: &CapabilityEvidence,
    requirements: &Requirements,
    build: impl FnOnce() -> Vec<Scenario>,
) -> PackResolution {
    let missing = evidence.missing(requirements);
    if missing.is_empty() {
        PackResolution::Scenarios(build())
    } else {
        PackResolution::NotApplicable(missing)
    }
}

/// One of the three packs, fully specified.
// Built once per pack run, so the size spread between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum PackDefinition {
    /// See [`ProceduralPack`].
    Procedural(ProceduralPack),
    /// See [`ApprovalResumePack`].
    ApprovalResume(ApprovalResumePack),
    /// See [`ExtensionToolPack`].
    ExtensionTool(ExtensionToolPack),
    /// See [`ExactlyOncePack`].
    ExactlyOnce(ExactlyOncePack),
}

impl PackDefinition {
    /// Which pack this is.
    pub fn kind(&self) -> PackKind {
        match self {
            Self::Procedural(_) => PackKind::Procedural,
            Self::ApprovalResume(_) => PackKind::ApprovalResume,
            Self::ExtensionTool(_) => PackKind::ExtensionTool,
            Self::ExactlyOnce(_) => PackKind::ExactlyOnce,
        }
    }

    /// The same argument checks the attribute macros make at compile time.
    ///
    /// # Errors
    ///
    /// Every argument that cannot make a meaningful scenario.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        match self {
            Self::Procedural(pack) => pack.check(),
            Self::ApprovalResume(pack) => pack.check(),
            Self::ExtensionTool(pack) => pack.check(),
            Self::ExactlyOnce(pack) => pack.check(),
        }
    }

    /// What the pack needs the deployment to declare.
    pub fn requirements(&self) -> Requirements {
        match self {
            Self::Procedural(pack) => pack.requirements(),
            Self::ApprovalResume(pack) => pack.requirements(),
            Self::ExtensionTool(pack) => pack.requirements(),
            Self::ExactlyOnce(pack) => pack.requirements(),
        }
    }

    /// The trial policy.
    pub fn policy(&self) -> TrialPolicy {
        match self {
            Self::Procedural(pack) => pack.policy,
            Self::ApprovalResume(pack) => pack.policy,
            Self::ExtensionTool(pack) => pack.policy,
            Self::ExactlyOnce(pack) => pack.policy,
        }
    }

    /// The same pack under another trial policy.
    #[must_use]
    pub fn with_policy(mut self, policy: TrialPolicy) -> Self {
        match &mut self {
            Self::Procedural(pack) => pack.policy = policy,
            Self::ApprovalResume(pack) => pack.policy = policy,
            Self::ExtensionTool(pack) => pack.policy = policy,
            Self::ExactlyOnce(pack) => pack.policy = policy,
        }
        self
    }

    /// The same pack with the probes named in `probes` switched off too
    /// (as the `skip_probes` argument does); [`PackKind::probes`] lists
    /// them, so `skipping` all of them runs the seed scenario alone. A name
    /// that is not one of the pack's probes is refused by
    /// [`check`](Self::check).
    #[must_use]
    pub fn skipping<S: AsRef<str>>(mut self, probes: &[S]) -> Self {
        let names = probes.iter().map(|p| p.as_ref().to_owned());
        match &mut self {
            Self::Procedural(pack) => pack.skip_probes.extend(names),
            Self::ApprovalResume(pack) => pack.skip_probes.extend(names),
            Self::ExtensionTool(pack) => pack.skip_probes.extend(names),
            Self::ExactlyOnce(pack) => pack.skip_probes.extend(names),
        }
        self
    }

    /// A pack of `kind` from a JSON object of its arguments by field name
    /// (the runtime defaults fill the rest), plus an optional `policy`
    /// object `{"trials", "required", "step_timeout_ms"}`. This is what the
    /// attributes expand to, and lets a hand-written suite keep its packs in
    /// JSON files.
    ///
    /// ```
    /// use symfonic_evals::{PackDefinition, PackKind};
    /// let pack = PackDefinition::from_arguments(
    ///     PackKind::ExtensionTool,
    ///     r#"{"prompt": "weather in Oslo?", "tool_name": "weather", "policy": {"trials": 3, "required": 2}}"#,
    /// ).unwrap();
    /// assert_eq!(pack.policy().trials, 3);
    /// assert!(pack.check().is_ok());
    /// ```
    ///
    /// # Errors
    ///
    /// Malformed JSON, an unknown field, or a value of the wrong type.
    pub fn from_arguments(kind: PackKind, json: &str) -> Result<Self, serde_json::Error> {
        let mut fields: serde_json::Map<String, Value> = serde_json::from_str(json)?;
        let policy = match fields.remove("policy") {
            Some(policy) => Some(serde_json::from_value::<PolicyArguments>(policy)?.policy()),
            None => None,
        };
        let fields = Value::Object(fields);
        let mut definition = match kind {
            PackKind::Procedural => Self::Procedural(serde_json::from_value(fields)?),
            PackKind::ApprovalResume => Self::ApprovalResume(serde_json::from_value(fields)?),
            PackKind::ExtensionTool => Self::ExtensionTool(serde_json::from_value(fields)?),
            PackKind::ExactlyOnce => Self::ExactlyOnce(serde_json::from_value(fields)?),
        };
        if let Some(policy) = policy {
            match &mut definition {
                Self::Procedural(pack) => pack.policy = policy,
                Self::ApprovalResume(pack) => pack.policy = policy,
                Self::ExtensionTool(pack) => pack.policy = policy,
                Self::ExactlyOnce(pack) => pack.policy = policy,
            }
        }
        Ok(definition)
    }

    /// A sha-256 (hex) of the whole resolved definition: its kind, every
    /// field with defaults applied (JSON object keys sorted) and its policy.
    /// Two definitions that run the same scenario fingerprint alike however
    /// they were spelled.
    pub fn fingerprint(&self) -> String {
        let fields = match self {
            Self::Procedural(pack) => serde_json::to_value(pack),
            Self::ApprovalResume(pack) => serde_json::to_value(pack),
            Self::ExtensionTool(pack) => serde_json::to_value(pack),
            Self::ExactlyOnce(pack) => serde_json::to_value(pack),
        }
        .map(|fields| sorted(&fields))
        .unwrap_or_default();
        let policy = self.policy();
        let text = format!(
            "{}\n{fields}\ntrials={} required={} step_timeout_ms={}",
            self.kind().name(),
            policy.trials,
            policy.required,
            policy.step_timeout.as_millis()
        );
        crate::redact::sha256_hex(text.as_bytes())
    }

    /// Checks the arguments, then resolves against a deployment's evidence.
    ///
    /// # Errors
    ///
    /// The argument errors of [`check`](Self::check).
    pub fn resolve(
        &self,
        evidence: &CapabilityEvidence,
    ) -> Result<PackResolution, Vec<ArgumentError>> {
        self.check()?;
        Ok(self.resolve_checked(evidence))
    }

    /// [`resolve`](Self::resolve) for a definition already checked.
    pub(crate) fn resolve_checked(&self, evidence: &CapabilityEvidence) -> PackResolution {
        resolve_pack(evidence, &self.requirements(), || {
            self.scenarios_for(evidence)
        })
    }

    /// The tool the harness's MCP fixture serves in this pack's trials:
    /// the extension pack's (see [`crate::mcp`]); no other pack has one.
    pub fn fixture_tool(&self) -> Option<crate::mcp::FixtureTool> {
        match self {
            Self::ExtensionTool(pack) => Some(pack.fixture_tool()),
            _ => None,
        }
    }

    /// The scenarios [`scenarios`](Self::scenarios) lists, less the probes
    /// that need an operation or trait `evidence` does not declare.
    pub fn scenarios_for(&self, evidence: &CapabilityEvidence) -> Vec<Scenario> {
        let probes = self.kind().probes();
        self.scenarios()
            .into_iter()
            .filter(|scenario| {
                probes
                    .iter()
                    .find(|probe| probe.name == scenario.name)
                    .and_then(|probe| probe.declared)
                    .is_none_or(|declaration| evidence.declares(declaration))
            })
            .collect()
    }

    /// Every scenario the pack runs: the seed scenario, then each probe
    /// that is enabled (by default, or by the argument it needs) and not
    /// skipped, on a deployment that declares every operation a probe can
    /// drive ([`scenarios_for`](Self::scenarios_for) leaves out the probes
    /// a given deployment's declaration does not allow).
    pub fn scenarios(&self) -> Vec<Scenario> {
        match self {
            Self::Procedural(pack) => pack.scenarios(),
            Self::ApprovalResume(pack) => pack.scenarios(),
            Self::ExtensionTool(pack) => pack.scenarios(),
            Self::ExactlyOnce(pack) => pack.scenarios(),
        }
    }

    /// The probes [`scenarios`](Self::scenarios) leaves out, in the order
    /// [`PackKind::probes`] lists them, each with why: the argument it
    /// needs, `skip_probes`, or a reason these arguments leave nothing for
    /// it to prove. A pack run carries the same list
    /// ([`PackRun::probes_not_run`](crate::PackRun::probes_not_run)).
    pub fn probes_not_run(&self) -> Vec<ProbeNotRun> {
        let scenarios = self.scenarios();
        let ran: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
        self.probes_left_out(&ran, None)
    }

    /// The pack's probes whose names are not in `ran`, the scenarios a run
    /// actually ran, each with why it did not run.
    pub(crate) fn probes_left_out(
        &self,
        ran: &[&str],
        declared: Option<&CapabilityEvidence>,
    ) -> Vec<ProbeNotRun> {
        let probes = self.kind().probes();
        if probes.iter().all(|p| ran.contains(&p.name)) {
            return Vec::new();
        }
        // What would run with nothing skipped tells an argument not given
        // from a probe switched off.
        let unskipped = self.clone().without_skips().scenarios();
        let would_run: Vec<&str> = unskipped.iter().map(|s| s.name.as_str()).collect();
        super::probes::not_run(
            probes,
            ran,
            &would_run,
            self.skipped(),
            declared,
            |probe| match self {
                Self::Procedural(pack) => pack.placement(probe),
                Self::ApprovalResume(pack) => pack.underivable(probe),
                _ => None,
            },
        )
    }

    /// The probes `skip_probes` names.
    fn skipped(&self) -> &[String] {
        match self {
            Self::Procedural(pack) => &pack.skip_probes,
            Self::ApprovalResume(pack) => &pack.skip_probes,
            Self::ExtensionTool(pack) => &pack.skip_probes,
            Self::ExactlyOnce(pack) => &pack.skip_probes,
        }
    }

    /// The same pack with no probe skipped.
    fn without_skips(mut self) -> Self {
        match &mut self {
            Self::Procedural(pack) => pack.skip_probes.clear(),
            Self::ApprovalResume(pack) => pack.skip_probes.clear(),
            Self::ExtensionTool(pack) => pack.skip_probes.clear(),
            Self::ExactlyOnce(pack) => pack.skip_probes.clear(),
        }
        self
    }

    /// The seed scenario alone, exactly as the pack's contract fixes it.
    pub fn seed_scenario(&self) -> Scenario {
        match self {
            Self::Procedural(pack) => pack.seed(),
            Self::ApprovalResume(pack) => pack.seed(),
            Self::ExtensionTool(pack) => pack.seed(),
            Self::ExactlyOnce(pack) => pack.seed(),
        }
    }
}

/// `value` with every object's keys in sorted order, so that a fingerprint
/// (or a result's digest) does not depend on how the JSON was written.
pub(crate) fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// A trial policy as JSON spells it (a duration in milliseconds).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyArguments {
    trials: u32,
    required: u32,
    #[serde(default)]
    step_timeout_ms: Option<u64>,
    #[serde(default)]
    concurrency: Option<u32>,
}

impl PolicyArguments {
    /// The runtime default timeout unless one was given.
    fn policy(&self) -> TrialPolicy {
        let mut policy = TrialPolicy {
            trials: self.trials,
            required: self.required,
            ..TrialPolicy::default()
        };
        if let Some(ms) = self.step_timeout_ms {
            policy.step_timeout = std::time::Duration::from_millis(ms);
        }
        if let Some(concurrency) = self.concurrency {
            policy.concurrency = concurrency;
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn extension(json: &str) -> PackDefinition {
        PackDefinition::from_arguments(PackKind::ExtensionTool, json).unwrap()
    }

    #[test]
    fn skipping_every_probe_leaves_the_seed_alone_and_unknown_names_are_refused() {
        let pack =
            extension(r#"{"prompt":"p","tool_name":"t","witnessed":true,"second_prompt":"q"}"#);
        assert_eq!(
            pack.scenarios().len(),
            1 + PackKind::ExtensionTool.probes().len()
        );
        let names: Vec<&str> = PackKind::ExtensionTool
            .probes()
            .iter()
            .map(|p| p.name)
            .collect();
        let seed = pack.clone().skipping(&names);
        let scenarios = seed.scenarios();
        assert_eq!(scenarios.len(), 1);
        assert_eq!(scenarios[0].name, PackKind::ExtensionTool.seed_scenario());
        assert!(seed.check().is_ok());
        assert!(pack.skipping(&["extension/nonsense"]).check().is_err());
    }

    fn approval(json: &str) -> PackDefinition {
        PackDefinition::from_arguments(PackKind::ApprovalResume, json).unwrap()
    }

    fn not_run(pack: &PackDefinition) -> Vec<String> {
        pack.probes_not_run()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn probes_left_out_by_default_name_the_argument_they_need() {
        let pack =
            approval(r#"{"pause_prompt":"p","interaction_tool":"ask","answer":{"ok":true}}"#);
        assert!(pack.check().is_ok());
        // The denial and the unfit answer are derived from `answer`.
        assert_eq!(
            not_run(&pack),
            [
                "approval/gated-action (add `gated_tool` to catch a gated action run before the person answered)",
                "approval/amended-answer (add `amended_answer` to catch an amended answer read only for its decision)",
            ]
        );
        // Every probe either runs or is listed, never both.
        let ran = pack.scenarios().len() - 1;
        assert_eq!(
            ran + pack.probes_not_run().len(),
            PackKind::ApprovalResume.probes().len()
        );
        // An answer with no single boolean to flip tells no denial.
        let pack =
            approval(r#"{"pause_prompt":"p","interaction_tool":"ask","answer":{"pick":"a"}}"#);
        assert_eq!(
            not_run(&pack),
            [
                "approval/gated-action (add `gated_tool` to catch a gated action run before the person answered)",
                "approval/deny-answer (`answer` holds no single true boolean to flip into a \
                 denial: give deny_answer)",
                "approval/type-confused-answer (`answer` holds no single boolean deciding it, \
                 whose look-alikes could be coerced)",
                "approval/amended-answer (add `amended_answer` to catch an amended answer read only for its decision)",
            ]
        );
        let all =
            extension(r#"{"prompt":"p","tool_name":"t","witnessed":true,"second_prompt":"q"}"#);
        assert!(all.probes_not_run().is_empty());
        let unwitnessed = extension(r#"{"prompt":"p","tool_name":"t"}"#);
        assert_eq!(
            not_run(&unwitnessed),
            [
                "extension/witnessed (add `witnessed` to catch a tool bridge that drops arguments or turns the \
                 tool's error into a success)",
                "extension/fresh-result (add `second_prompt` to catch an earlier call's result shown to the \
                 model in place of this one)",
            ]
        );
        let once = PackDefinition::ExactlyOnce(crate::ExactlyOncePack::default());
        assert!(once.probes_not_run().is_empty());
    }

    #[test]
    fn a_skipped_probe_says_so_unless_it_lacks_its_argument_too() {
        let pack = approval(
            r#"{"pause_prompt":"p","interaction_tool":"ask","answer":{"ok":true},
                "gated_tool":"refund"}"#,
        )
        .skipping(&[
            "approval/forged-token",
            "approval/gated-action",
            "approval/unfit-answer",
        ]);
        assert!(pack.check().is_ok());
        assert_eq!(
            not_run(&pack),
            [
                "approval/forged-token (skipped by skip_probes)",
                "approval/gated-action (skipped by skip_probes)",
                "approval/unfit-answer (skipped by skip_probes)",
                "approval/amended-answer (add `amended_answer` to catch an amended answer read only for its decision)",
            ]
        );
    }

    #[test]
    fn lifecycle_probes_need_the_review_operation_and_rules_the_states_allow() {
        let pack = |satisfied, blocked| {
            PackDefinition::Procedural(crate::ProceduralPack {
                satisfied_state: satisfied,
                blocked_state: blocked,
                ..crate::ProceduralPack::default()
            })
        };
        let lifecycle = |scenarios: Vec<crate::Scenario>| {
            scenarios
                .into_iter()
                .filter(|s| {
                    PackKind::Procedural
                        .probes()
                        .iter()
                        .any(|p| p.name == s.name && p.declared.is_some())
                })
                .count()
        };
        let both = pack(json!({"region": "US"}), json!({"region": "EU"}));
        // Declared, the five that need no decoy run (rejecting a draft at
        // the door among them); undeclared, none does.
        let declared = CapabilityEvidence::new().operation("review");
        assert_eq!(lifecycle(both.scenarios_for(&declared)), 5);
        assert_eq!(lifecycle(both.scenarios_for(&CapabilityEvidence::new())), 0);
        let ran: Vec<String> = both
            .scenarios_for(&CapabilityEvidence::new())
            .into_iter()
            .map(|s| s.name)
            .collect();
        let ran: Vec<&str> = ran.iter().map(String::as_str).collect();
        let left_out = both.probes_left_out(&ran, Some(&CapabilityEvidence::new()));
        let revoke = left_out
            .iter()
            .find(|p| p.probe == "procedural/revoke")
            .expect("revoke left out");
        assert_eq!(
            revoke.reason.to_string(),
            "the deployment does not declare `review`"
        );
        // A blocked state that adds nothing: no reversed rule, so no amend.
        let subset = pack(json!({"region": "US", "tier": 2}), json!({"tier": 2}));
        let names: Vec<String> = subset.scenarios().into_iter().map(|s| s.name).collect();
        assert!(names.iter().any(|n| n == "procedural/revoke"));
        assert!(!names.iter().any(|n| n == "procedural/amend"));
        // Rejecting a draft composes no rule: it runs on any states.
        let flat = pack(json!({"tier": 2}), json!({"tier": 2, "region": "EU"}));
        let names: Vec<String> = flat.scenarios().into_iter().map(|s| s.name).collect();
        assert!(names.iter().any(|n| n == "procedural/reject-draft"));
        assert!(!names.iter().any(|n| n == "procedural/revoke"));
        let why = subset
            .probes_not_run()
            .into_iter()
            .find(|p| p.probe == "procedural/amend")
            .expect("amend left out");
        assert!(why.reason.to_string().contains("amended rule"), "{why}");
    }

    #[test]
    fn the_enforcement_probe_the_seed_stands_in_for_says_why() {
        let procedural = |restart: bool| {
            PackDefinition::Procedural(crate::ProceduralPack {
                restart_before_enforcement: restart,
                satisfied_state: serde_json::json!({"region": "US"}),
                blocked_state: serde_json::json!({"region": "EU"}),
                ..crate::ProceduralPack::default()
            })
        };
        assert_eq!(
            not_run(&procedural(true)),
            [
                "procedural/enforcement-after-restart (restart_before_enforcement = true: the \
                 seed already enforces after a restart)",
                "procedural/decoy-stays-draft (add `decoy_demonstrations` to catch a review that approves every draft)",
                "procedural/control-promotes-nothing (add `control_demonstrations` to catch a promotion count that is not the cycle's own)",
                "procedural/paraphrases (add `paraphrases` to catch a gate judged by tool name)",
                "procedural/review-binding (add `interleaved_prompt` to catch a review that binds the approved procedure to whatever tool was called last rather than the draft's)",
                "procedural/two-procedures (add `decoy_demonstrations` to catch a gate that judges only one of two approved procedures on a tool)",
                "procedural/multi-call (add `multi_call_prompt` to catch a gate that judges only the first call of a model message)",
                "procedural/through-approval (add `approval_prompt` to catch an approved request routed straight to the tool, around the procedure gate)",
                "procedural/one-demonstration-then-control (add `control_demonstrations` to catch a promotion threshold counted over turns rather than demonstrations (the turns since a lesson was first seen, or every turn after it))",
            ]
        );
        let without = procedural(false).probes_not_run();
        assert_eq!(without[0].probe, "procedural/enforcement-without-restart");
        assert_eq!(
            without[0].reason.to_string(),
            "restart_before_enforcement = false: the seed already enforces without a restart"
        );
        // Skipped, a probe on by default says so, whatever its placement.
        let skipped = procedural(true).skipping(&["procedural/enforcement-after-restart"]);
        assert_eq!(
            skipped.probes_not_run()[0].reason,
            crate::packs::NotRunReason::Skipped
        );
    }

    #[test]
    fn a_probe_not_run_is_plain_json_naming_arguments_only() {
        let pack =
            approval(r#"{"pause_prompt":"p","interaction_tool":"ask","answer":{"ok":"hunter2"}}"#)
                .skipping(&["approval/forged-token"]);
        let json = serde_json::to_value(pack.probes_not_run()).unwrap();
        assert_eq!(
            json[0],
            serde_json::json!({"probe": "approval/forged-token", "reason": "skipped"})
        );
        assert_eq!(
            json[1],
            serde_json::json!({
                "probe": "approval/gated-action", "reason": "needs", "argument": "gated_tool",
                "catches": "a gated action run before the person answered"
            })
        );
        assert!(!json.to_string().contains("hunter2"));
        let back: Vec<ProbeNotRun> = serde_json::from_value(json).unwrap();
        assert_eq!(back, pack.probes_not_run());
        let placed = PackDefinition::Procedural(crate::ProceduralPack::default());
        let json = serde_json::to_value(placed.probes_not_run()).unwrap();
        assert_eq!(json[0]["reason"], "not_applicable");
        assert!(json[0]["why"].as_str().unwrap().contains("restart"));
    }

    #[test]
    fn fingerprints_follow_the_resolved_definition_not_its_spelling() {
        let plain = extension(r#"{"prompt":"p","tool_name":"t","arguments":{"a":1,"b":2}}"#);
        let spelled = extension(
            r#"{"arguments":{"b":2,"a":1},"tool_name":"t","prompt":"p","conversation":"extensions",
                "policy":{"trials":1,"required":1,"step_timeout_ms":30000}}"#,
        );
        let other = extension(r#"{"prompt":"p","tool_name":"t","arguments":{"a":1,"b":3}}"#);
        let stricter = extension(
            r#"{"prompt":"p","tool_name":"t","arguments":{"a":1,"b":2},"policy":{"trials":3,"required":3}}"#,
        );
        assert_eq!(plain.fingerprint(), spelled.fingerprint());
        assert_ne!(plain.fingerprint(), other.fingerprint());
        assert_ne!(plain.fingerprint(), stricter.fingerprint());
        assert_eq!(plain.fingerprint().len(), 64);
    }

    #[test]
    fn answers_and_tool_arguments_must_be_objects_as_the_attributes_require() {
        let approval = |answer: &str| {
            PackDefinition::from_arguments(
                PackKind::ApprovalResume,
                &format!(r#"{{"pause_prompt":"p","interaction_tool":"ask","answer":{answer}}}"#),
            )
            .unwrap()
            .check()
        };
        assert!(approval(r#"{"approved":true}"#).is_ok());
        for answer in ["true", "5", r#""yes""#, "[1]", "{}"] {
            let errors = approval(answer).unwrap_err();
            assert_eq!(errors[0].argument, "answer", "{answer}");
        }
        let errors = extension(r#"{"prompt":"p","tool_name":"t","arguments":"Oslo"}"#)
            .check()
            .unwrap_err();
        assert_eq!(errors[0].argument, "arguments");
    }

    #[test]
    fn arguments_of_the_wrong_shape_are_refused() {
        for json in [
            r#"{"tool_nam":"t"}"#,
            r#"{"tool_name":3}"#,
            r#"{"policy":{"trials":1}}"#,
            "[]",
        ] {
            assert!(
                PackDefinition::from_arguments(PackKind::ExtensionTool, json).is_err(),
                "{json}"
            );
        }
    }
}
