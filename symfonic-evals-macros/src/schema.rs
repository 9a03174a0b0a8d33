//! What each attribute accepts: argument names, types, whether each may be
//! left out, and the rule a given value must satisfy. One table per pack, so
//! the check and the expansion read the same definition. Defaults are not
//! spelled here: the expansion emits only what the attribute gave and the
//! runtime fills in the rest.

/// Which pack an attribute builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[procedural_pack]`.
    Procedural,
    /// `#[approval_resume_pack]`.
    ApprovalResume,
    /// `#[extension_tool_pack]`.
    ExtensionTool,
    /// `#[exactly_once_pack]`.
    ExactlyOnce,
}

impl Kind {
    /// Every pack attribute.
    pub const ALL: [Self; 4] = [
        Self::Procedural,
        Self::ApprovalResume,
        Self::ExtensionTool,
        Self::ExactlyOnce,
    ];
}

impl Kind {
    /// The attribute's name, for messages.
    pub fn attribute(self) -> &'static str {
        match self {
            Self::Procedural => "procedural_pack",
            Self::ApprovalResume => "approval_resume_pack",
            Self::ExtensionTool => "extension_tool_pack",
            Self::ExactlyOnce => "exactly_once_pack",
        }
    }

    /// The pack attribute called `name`, if one is.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.attribute() == name)
    }

    /// The pack-specific arguments, then the ones every pack shares.
    pub fn fields(self) -> impl Iterator<Item = &'static Field> {
        let own: &'static [Field] = match self {
            Self::Procedural => PROCEDURAL,
            Self::ApprovalResume => APPROVAL,
            Self::ExtensionTool => EXTENSION,
            Self::ExactlyOnce => EXACTLY_ONCE,
        };
        own.iter().chain(COMMON)
    }

    /// The field called `name`, if this pack has one.
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields().find(|field| field.name == name)
    }

    /// The names of the pack's probes, for `skip_probes` (the runtime's
    /// list, mirrored; a unit test keeps the two equal).
    pub fn probes(self) -> &'static [&'static str] {
        match self {
            Self::Procedural => &[
                "procedural/enforcement-without-restart",
                "procedural/enforcement-after-restart",
                "procedural/separate-conversations",
                "procedural/review-needs-operator",
                "procedural/identity-bound",
                "procedural/gate-sweep",
                "procedural/decoy-stays-draft",
                "procedural/control-promotes-nothing",
                "procedural/rejected-demonstrations",
                "procedural/paraphrases",
                "procedural/review-binding",
                "procedural/rule-fidelity",
                "procedural/amend",
                "procedural/revoke",
                "procedural/two-procedures",
                "procedural/relearn-after-approval",
                "procedural/reject-draft",
                "procedural/replicas",
                "procedural/multi-call",
                "procedural/through-approval",
                "procedural/one-demonstration-then-control",
            ],
            Self::ApprovalResume => &[
                "approval/restart-between-pause-and-resume",
                "approval/restart-before-replay",
                "approval/crash-inside-resume",
                "approval/forged-token",
                "approval/token-bound-to-conversation",
                "approval/two-conversations",
                "approval/token-predictable",
                "approval/second-request",
                "approval/one-of-two",
                "approval/foreign-answer",
                "approval/pending-call-resolved",
                "approval/question-id-checked",
                "approval/gated-action",
                "approval/deny-answer",
                "approval/unfit-answer",
                "approval/type-confused-answer",
                "approval/amended-answer",
                "approval/edited-call",
                "approval/replicas",
                "approval/reset-between",
            ],
            Self::ExtensionTool => &[
                "extension/repeated-and-fresh-conversation",
                "extension/result-reaches-model",
                "extension/witnessed",
                "extension/fresh-result",
                "extension/mcp-fixture",
            ],
            Self::ExactlyOnce => &["exactly-once/clock-advanced"],
        }
    }

    /// A hint for an argument the attribute once accepted and no longer
    /// does, so an upgrade error says what to write instead.
    pub fn retired(self, name: &str) -> Option<&'static str> {
        match (self, name) {
            (Self::ApprovalResume, "restart_before_replay") => Some(
                "restart placements are probes now, and every placement runs by default \
                 (`approval/restart-between-pause-and-resume`, `approval/restart-before-replay`); \
                 remove the argument, or switch a placement off with `skip_probes`",
            ),
            _ => None,
        }
    }
}

/// The type an argument's value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string literal.
    Str,
    /// An array of string literals.
    StrList,
    /// A JSON object, inline or `file("...")`.
    Object,
    /// `true` or `false`.
    Bool,
    /// A positive integer that fits `u32`.
    Count,
    /// A positive integer that fits `u64`.
    Millis,
    /// A string literal, or an array of string literals.
    StrOrList,
    /// One of a few string literals.
    Choice(&'static [&'static str]),
    /// An array of the pack's probe names.
    Probes,
    /// A path to a function.
    Path,
}

impl Ty {
    /// How the type is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Str => "a string literal",
            Self::StrList => "an array of string literals, as in `[\"a\", \"b\"]`",
            Self::Object => "a JSON object literal `{ ... }` or `file(\"path.json\")`",
            Self::Bool => "`true` or `false`",
            Self::Count | Self::Millis => "a positive integer literal",
            Self::StrOrList => "a string literal or an array of string literals",
            Self::Choice(_) => "one of the string literals listed in the docs",
            Self::Probes => "an array of probe names, as in `[\"approval/forged-token\"]`",
            Self::Path => "a path to a function, as in `crate::oracle::count_effects`",
        }
    }
}

/// Whether an argument may be omitted. An omitted argument takes the
/// runtime's default: the expansion emits only what the attribute gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// The argument must be given.
    Required,
    /// The runtime default applies when it is left out.
    Optional,
}

/// What a given value must additionally satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Nothing beyond its type.
    Any,
    /// Not empty (string, list or object); for a list, no empty item either.
    NonEmpty,
    /// A list that may be empty but holds no empty item.
    NoEmptyItem,
}

/// Where the expansion puts an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A field of the pack definition with the argument's name.
    Pack,
    /// Part of the trial policy.
    Policy,
    /// Part of the run options.
    Options,
    /// The effect oracle: a function the generated runner names.
    Effects,
    /// A builder shared by several packs: the function the runner calls
    /// instead of the annotated one.
    Builder,
}

/// One argument an attribute accepts.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The argument name (and, for [`Slot::Pack`], the field name).
    pub name: &'static str,
    /// Its type.
    pub ty: Ty,
    /// Whether it may be left out.
    pub presence: Presence,
    /// Its rule.
    pub rule: Rule,
    /// Where it goes.
    pub slot: Slot,
    /// Why the rule exists: completes "`name` ..." in an error message.
    pub why: &'static str,
}

const fn field(
    name: &'static str,
    ty: Ty,
    presence: Presence,
    rule: Rule,
    why: &'static str,
) -> Field {
    Field {
        name,
        ty,
        presence,
        rule,
        slot: Slot::Pack,
        why,
    }
}

const fn prompt(name: &'static str) -> Field {
    field(
        name,
        Ty::Str,
        Presence::Required,
        Rule::NonEmpty,
        "is a prompt, and an empty prompt gives the deployment nothing to act on",
    )
}

const fn named(name: &'static str) -> Field {
    field(
        name,
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "names where the pack reads its evidence, and an empty name reads nothing",
    )
}

const fn retries() -> Field {
    field(
        "retries",
        Ty::Choice(&["exact", "same_key"]),
        Presence::Optional,
        Rule::Any,
        "",
    )
}

const fn skip_probes() -> Field {
    field(
        "skip_probes",
        Ty::Probes,
        Presence::Optional,
        Rule::NoEmptyItem,
        "name probes to switch off, and an empty name names none",
    )
}

const STATE_WHY: &str = "needs explicit state: a precondition judged against nothing refuses \
                         everything, which would pass a gate that reads nothing";

static PROCEDURAL: &[Field] = &[
    field(
        "demonstrations",
        Ty::StrList,
        Presence::Required,
        Rule::NonEmpty,
        "needs at least one non-empty turn for the consolidation to generalise from",
    ),
    prompt("review_prompt"),
    field(
        "draft_prompt",
        Ty::Str,
        Presence::Required,
        Rule::NonEmpty,
        "is the pre-approval draft probe, which needs a prompt and state",
    ),
    prompt("satisfied_prompt"),
    prompt("blocked_prompt"),
    field(
        "satisfied_state",
        Ty::Object,
        Presence::Required,
        Rule::NonEmpty,
        STATE_WHY,
    ),
    field(
        "blocked_state",
        Ty::Object,
        Presence::Required,
        Rule::NonEmpty,
        STATE_WHY,
    ),
    field(
        "draft_state",
        Ty::Object,
        Presence::Required,
        Rule::NonEmpty,
        "is the state of the pre-approval draft probe, which needs a prompt and state",
    ),
    field(
        "action_tool",
        Ty::Str,
        Presence::Required,
        Rule::NonEmpty,
        "names the tool the procedure governs, which the review row must name",
    ),
    field(
        "procedure_fragment",
        Ty::Str,
        Presence::Required,
        Rule::NonEmpty,
        "is looked for in the model input, and an empty fragment is found everywhere",
    ),
    named("promotion_attribute"),
    named("review_attribute"),
    named("review_identity_attribute"),
    named("enforcement_identity_attribute"),
    named("precondition_stage"),
    named("procedures_attribute"),
    field(
        "restart_before_enforcement",
        Ty::Bool,
        Presence::Optional,
        Rule::Any,
        "",
    ),
    named("conversation"),
    field(
        "decoy_demonstrations",
        Ty::StrList,
        Presence::Optional,
        Rule::NonEmpty,
        "are the turns that promote a second draft; give at least one, or leave the argument out",
    ),
    field(
        "decoy_fragment",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is looked for in the model input, and an empty fragment is found everywhere",
    ),
    field(
        "control_demonstrations",
        Ty::StrList,
        Presence::Optional,
        Rule::NonEmpty,
        "are turns that must promote nothing; give at least one, or leave the argument out",
    ),
    field(
        "rejected_demonstrations",
        Ty::StrList,
        Presence::Optional,
        Rule::NonEmpty,
        "lists on-topic demonstrations a reviewer rejected; give at least one, or leave the \
         argument out and the pack's own demonstrations are sent rejected",
    ),
    field(
        "paraphrases",
        Ty::StrList,
        Presence::Optional,
        Rule::NonEmpty,
        "lists other wordings of the action prompt, each run through the blocked and the \
         satisfied step; give at least one, or leave the argument out",
    ),
    field(
        "interleaved_prompt",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is a turn that calls another tool between the draft and the review, and an empty \
         prompt gives the deployment nothing to act on",
    ),
    field(
        "multi_call_prompt",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is one request naming several subjects, each a governed call; an empty prompt names none",
    ),
    field(
        "approval_prompt",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is the request the deployment holds for a person's approval; an empty prompt asks nothing",
    ),
    field(
        "approval_answer",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "is the person's answer that approves the paused request, and an empty one says nothing",
    ),
    field(
        "gate_sweep",
        Ty::Count,
        Presence::Optional,
        Rule::NonEmpty,
        "is how many states the gate sweep judges, at least one (skip the probe to run none)",
    ),
    retries(),
    skip_probes(),
];

static APPROVAL: &[Field] = &[
    prompt("pause_prompt"),
    field(
        "answer",
        Ty::Object,
        Presence::Required,
        Rule::NonEmpty,
        "is what the person replies; redeeming a token with nothing to validate proves only \
         that it was spent",
    ),
    field(
        "interaction_tool",
        Ty::Str,
        Presence::Required,
        Rule::NonEmpty,
        "is the registered interaction name the pause must carry",
    ),
    field("resumable", Ty::Bool, Presence::Optional, Rule::Any, ""),
    named("resume_attribute"),
    named("resume_outcome"),
    named("continued_attribute"),
    named("checkpoint_attribute"),
    field(
        "replay_error",
        Ty::StrOrList,
        Presence::Optional,
        Rule::NonEmpty,
        "names the error kinds or codes a replayed token may fail with, and an empty one names none",
    ),
    named("conversation"),
    field(
        "gated_tool",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "names the action the pause gates, and an empty name gates nothing",
    ),
    retries(),
    field(
        "deny_answer",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "is the answer a person gives to say no, and an empty one says nothing",
    ),
    field("unfit_answer", Ty::Object, Presence::Optional, Rule::Any, ""),
    field(
        "foreign_answer",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "is an approval from someone not entitled, and an empty one names nobody",
    ),
    field(
        "amended_answer",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "is the approval with the person's change, and an empty one changes nothing",
    ),
    field(
        "amended_call",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "names the arguments the amended call carries, and an empty one names none",
    ),
    field(
        "second_prompt",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is a second request of the same kind, and an empty one requests nothing",
    ),
    skip_probes(),
];

static EXTENSION: &[Field] = &[
    prompt("prompt"),
    field(
        "tool_name",
        Ty::Str,
        Presence::Required,
        Rule::NonEmpty,
        "is the tool the extension contributes, which the turn must call",
    ),
    field("arguments", Ty::Object, Presence::Optional, Rule::Any, ""),
    field(
        "argument_match",
        Ty::Choice(&["exact", "subset"]),
        Presence::Optional,
        Rule::Any,
        "",
    ),
    field(
        "expected_fragments",
        Ty::StrList,
        Presence::Optional,
        Rule::NoEmptyItem,
        "are looked for in the answer, and an empty fragment matches every answer",
    ),
    field("witnessed", Ty::Bool, Presence::Optional, Rule::Any, ""),
    field(
        "second_prompt",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is a second request for the tool, whose result must be its own, and an empty \
         prompt asks for nothing",
    ),
    field(
        "second_arguments",
        Ty::Object,
        Presence::Optional,
        Rule::Any,
        "",
    ),
    field("tool_schema", Ty::Object, Presence::Optional, Rule::Any, ""),
    field(
        "fixture_result",
        Ty::Object,
        Presence::Optional,
        Rule::Any,
        "",
    ),
    named("conversation"),
    skip_probes(),
];

static EXACTLY_ONCE: &[Field] = &[
    prompt("prompt"),
    field(
        "state",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "is the turn's explicit state; leave it out rather than give none",
    ),
    field(
        "answer",
        Ty::Object,
        Presence::Optional,
        Rule::NonEmpty,
        "is what the person replies to the pause; redeeming with nothing to validate proves \
         only that a token was spent",
    ),
    field(
        "second_prompt",
        Ty::Str,
        Presence::Optional,
        Rule::NonEmpty,
        "is a second request with effects of its own, and an empty prompt has none",
    ),
    named("conversation"),
    retries(),
    skip_probes(),
];

static COMMON: &[Field] = &[
    Field {
        name: "trials",
        ty: Ty::Count,
        presence: Presence::Optional,
        rule: Rule::NonEmpty,
        slot: Slot::Policy,
        why: "is the number of fresh trials to run, at least one",
    },
    Field {
        name: "require",
        ty: Ty::Count,
        presence: Presence::Optional,
        rule: Rule::NonEmpty,
        slot: Slot::Policy,
        why: "is how many trials must pass, at least one",
    },
    Field {
        name: "step_timeout_ms",
        ty: Ty::Millis,
        presence: Presence::Optional,
        rule: Rule::NonEmpty,
        slot: Slot::Policy,
        why: "is a per-step deadline, which cannot be zero",
    },
    Field {
        name: "concurrency",
        ty: Ty::Count,
        presence: Presence::Optional,
        rule: Rule::NonEmpty,
        slot: Slot::Policy,
        why: "is how many trials may run at once, at least one",
    },
    Field {
        name: "isolation",
        ty: Ty::Choice(&["process", "thread"]),
        presence: Presence::Optional,
        rule: Rule::Any,
        slot: Slot::Options,
        why: "",
    },
    Field {
        name: "builder",
        ty: Ty::Path,
        presence: Presence::Optional,
        rule: Rule::Any,
        slot: Slot::Builder,
        why: "",
    },
    Field {
        name: "effects_probe",
        ty: Ty::Path,
        presence: Presence::Optional,
        rule: Rule::Any,
        slot: Slot::Effects,
        why: "",
    },
    Field {
        name: "accept_not_applicable",
        ty: Ty::Bool,
        presence: Presence::Optional,
        rule: Rule::Any,
        slot: Slot::Options,
        why: "",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pack argument the attribute accepts is a field the runtime
    /// deserialises: a rename on either side fails here, not in an adopter's
    /// test run.
    #[test]
    fn every_pack_argument_is_a_runtime_field() {
        for (kind, runtime) in [
            (Kind::Procedural, symfonic_evals::PackKind::Procedural),
            (
                Kind::ApprovalResume,
                symfonic_evals::PackKind::ApprovalResume,
            ),
            (Kind::ExtensionTool, symfonic_evals::PackKind::ExtensionTool),
            (Kind::ExactlyOnce, symfonic_evals::PackKind::ExactlyOnce),
        ] {
            for field in kind.fields().filter(|f| f.slot == Slot::Pack) {
                let sample = match field.ty {
                    Ty::Str => serde_json::json!("x"),
                    Ty::StrList | Ty::StrOrList => serde_json::json!(["x"]),
                    Ty::Probes => {
                        serde_json::json!(kind.probes().iter().take(1).collect::<Vec<_>>())
                    }
                    Ty::Choice(choices) => serde_json::json!(choices[0]),
                    Ty::Object => serde_json::json!({"a": 1}),
                    Ty::Bool => serde_json::json!(true),
                    Ty::Count | Ty::Millis => serde_json::json!(1),
                    Ty::Path => unreachable!("a path is never a pack field"),
                };
                let arguments = serde_json::json!({ (field.name): sample }).to_string();
                let resolved = symfonic_evals::PackDefinition::from_arguments(runtime, &arguments);
                assert!(resolved.is_ok(), "{}: {:?}", field.name, resolved.err());
            }
        }
    }

    /// The probe names `skip_probes` accepts are exactly the runtime's.
    #[test]
    fn probe_names_mirror_the_runtime() {
        for (kind, runtime) in [
            (Kind::Procedural, symfonic_evals::PackKind::Procedural),
            (
                Kind::ApprovalResume,
                symfonic_evals::PackKind::ApprovalResume,
            ),
            (Kind::ExtensionTool, symfonic_evals::PackKind::ExtensionTool),
            (Kind::ExactlyOnce, symfonic_evals::PackKind::ExactlyOnce),
        ] {
            let names: Vec<&str> = runtime.probes().iter().map(|p| p.name).collect();
            assert_eq!(kind.probes(), names.as_slice());
        }
    }

    #[test]
    fn every_pack_has_unique_argument_names() {
        for kind in Kind::ALL {
            let names: Vec<&str> = kind.fields().map(|f| f.name).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{}", kind.attribute());
        }
    }

    #[test]
    fn required_rules_carry_a_reason() {
        for kind in Kind::ALL {
            for field in kind.fields() {
                if field.rule != Rule::Any {
                    assert!(!field.why.is_empty(), "{}", field.name);
                }
            }
        }
    }
}
