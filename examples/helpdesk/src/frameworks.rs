//! The help desk on agent frameworks, served through the companion's
//! adapters: LangGraph (`examples/langgraph-desk/`, the help desk and a
//! refund desk that learns and gates procedures), the OpenAI Agents
//! SDK (`examples/openai-agents-desk/`), Pydantic AI
//! (`examples/pydantic-ai-desk/`) and Google's ADK
//! (`examples/google-adk-desk/`). Each talks to the harness's model
//! endpoint as they would to OpenAI, and replay the cassettes committed
//! beside them. Here: how they are started, the packs they are judged with,
//! and their twins with where each must be caught. `tests/framework_desks.rs`
//! runs them; [`crate::upstream::framework_desk`] is the scripted model their
//! cassettes were recorded from.

use std::ffi::OsString;
use std::path::PathBuf;

use serde_json::json;
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{ApprovalResumePack, PackDefinition};

use crate::python;
use crate::twins::{Catch, Pack};

/// A framework the help desk is written on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Framework {
    /// LangGraph 1.x: `interrupt()` in the tool, a SQLite checkpointer.
    LangGraph,
    /// LangGraph 1.x, a refund desk that learns procedures from
    /// demonstrations and gates its refunds on the approved ones
    /// (`examples/langgraph-desk/procedural.py`): a gate node between the
    /// model and the tool node, the review door and operator turns through
    /// the adapter's procedural seams.
    LangGraphProcedural,
    /// The OpenAI Agents SDK: `needs_approval`, a saved `RunState`.
    OpenAiAgents,
    /// Pydantic AI: `requires_approval`, `DeferredToolRequests`, the
    /// message history kept in the durable directory.
    PydanticAi,
    /// Google's Agent Development Kit: `require_confirmation`, SQLite
    /// sessions in the durable directory.
    GoogleAdk,
}

impl Framework {
    /// Every framework.
    pub const ALL: [Framework; 5] = [
        Framework::LangGraph,
        Framework::LangGraphProcedural,
        Framework::OpenAiAgents,
        Framework::PydanticAi,
        Framework::GoogleAdk,
    ];

    /// The desk's name, which names its runs.
    pub fn name(self) -> &'static str {
        match self {
            Framework::LangGraph => "langgraph-desk",
            Framework::LangGraphProcedural => "langgraph-procedural-desk",
            Framework::OpenAiAgents => "openai-agents-desk",
            Framework::PydanticAi => "pydantic-ai-desk",
            Framework::GoogleAdk => "google-adk-desk",
        }
    }

    /// The example's directory: both LangGraph desks live in
    /// `examples/langgraph-desk/`.
    pub fn dir(self) -> PathBuf {
        let dir = match self {
            Framework::LangGraphProcedural => Framework::LangGraph.name(),
            framework => framework.name(),
        };
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(dir)
    }

    /// The desk's script in [`Framework::dir`].
    pub fn script(self) -> &'static str {
        match self {
            Framework::LangGraphProcedural => "procedural.py",
            _ => "desk.py",
        }
    }

    /// The packs the desk is meant for.
    pub fn packs(self) -> &'static [Pack] {
        match self {
            Framework::LangGraphProcedural => &[Pack::Procedural],
            _ => &[Pack::ApprovalResume, Pack::ExtensionTool, Pack::ExactlyOnce],
        }
    }

    /// The committed cassette `pack` replays.
    pub fn cassette(self, pack: Pack) -> PathBuf {
        let name = definition(pack).kind().name();
        self.dir().join("cassettes").join(format!("{name}.jsonl"))
    }

    /// The command that starts the honest variant `variant` of the desk
    /// (`--variant`): a correct desk shaped another way, which must pass
    /// every pack the desk passes.
    pub fn variant_spec(self, python: impl Into<OsString>, variant: &str) -> ProcessSpec {
        self.spec(python, None).args(["--variant", variant])
    }

    /// The command that starts the desk, or its twin `twin`, under
    /// `python` (an interpreter with the framework and the companion
    /// installed), forked from an interpreter that imported it once, with
    /// a spare forked ahead of a trial's later restarts: where the desk's
    /// factory is staged, the spare has its graph or agent built before
    /// the handshake.
    pub fn spec(self, python: impl Into<OsString>, twin: Option<&str>) -> ProcessSpec {
        let spec = ProcessSpec::new(python)
            .arg(self.dir().join(self.script()))
            .fork_server(true)
            .spare(true);
        match twin {
            Some(twin) => spec.args(["--twin", twin]),
            None => spec,
        }
    }
}

/// The interpreter with the four frameworks and the companion installed,
/// for the benches: the virtual environment `SYMFONIC_EVALS_FRAMEWORK_VENV`
/// names, or else `target/adapters-venv` (which CI makes); `None` when
/// neither has one.
pub fn bench_python() -> Option<PathBuf> {
    let venv = std::env::var_os("SYMFONIC_EVALS_FRAMEWORK_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/adapters-venv")
        });
    let python = venv.join("bin").join("python");
    python.exists().then_some(python)
}

/// The approval pack for the framework desks. The approval sits on the
/// gated call itself (LangGraph's `interrupt()` inside `escalate_ticket`,
/// the Agents SDK's `needs_approval`), so the pause's interaction is the
/// gated tool: approval runs it once, a denial resolves it unrun.
pub fn approval() -> PackDefinition {
    PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "escalate ticket 7 to a supervisor".into(),
        answer: json!({"approved": true}),
        interaction_tool: "escalate_ticket".into(),
        resumable: true,
        replay_error: vec!["PauseTokenReplayedError".into(), "pause.replayed".into()],
        gated_tool: Some("escalate_ticket".into()),
        deny_answer: Some(json!({"approved": false})),
        unfit_answer: Some(json!({"approved": "maybe"})),
        ..ApprovalResumePack::default()
    })
}

/// The definition of `pack` for the framework desks: the approval pack
/// above; the others are the Python desk's (the same escalation, tool,
/// arguments and forecasts). The LangGraph procedural desk honours every
/// argument of the Python desk's procedural pack (decoys, controls,
/// several calls in one message, a whole order's refund approved by a
/// manager before the gate, a forecast between the draft and the review,
/// the gate sweep), so it is judged with that definition unchanged.
pub fn definition(pack: Pack) -> PackDefinition {
    match pack {
        Pack::ApprovalResume => approval(),
        _ => python::definition(pack),
    }
}

/// An honest variant of a framework desk: a correct deployment shaped the
/// way real adopters shape it, which passes every pack the desk passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HonestVariant {
    /// The desk.
    pub framework: Framework,
    /// The `--variant` name.
    pub name: &'static str,
    /// Whether the variant is judged with the arguments a newcomer writes
    /// ([`crate::packs::as_a_newcomer_writes`]): the approval pack then
    /// infers from its own runs what a denial must withhold, which is
    /// where a desk that does something of its own on a denial could be
    /// wrongly failed.
    pub as_a_newcomer: bool,
    /// The packs the variant replays a cassette of its own for: those in
    /// which it asks the model something the desk never does (a tool
    /// result of its own, or the runs a newcomer's approval pack infers
    /// the gated effects from).
    pub own_cassettes: &'static [Pack],
}

impl HonestVariant {
    /// Whether the variant replays a cassette of its own for `pack`
    /// ([`HonestVariant::own_cassettes`]).
    pub fn own_cassette(&self, pack: Pack) -> bool {
        self.own_cassettes.contains(&pack)
    }

    /// The committed cassette the variant replays for `pack`: its own
    /// (`cassettes/<variant>.<pack>.jsonl`, beside the desk's, so one
    /// `accept` of the folder takes both) or the desk's.
    pub fn cassette(&self, pack: Pack) -> PathBuf {
        if !self.own_cassette(pack) {
            return self.framework.cassette(pack);
        }
        let kind = self.definition(pack).kind().name();
        self.framework
            .dir()
            .join("cassettes")
            .join(format!("{}.{kind}.jsonl", self.name))
    }

    /// The definition of `pack` this variant is judged with.
    pub fn definition(&self, pack: Pack) -> PackDefinition {
        let definition = definition(pack);
        if self.as_a_newcomer {
            crate::packs::as_a_newcomer_writes(definition)
        } else {
            definition
        }
    }
}

/// Every honest variant of the framework desks.
pub const HONEST: [HonestVariant; 6] = [
    // Thread ids with a tenant prefix, through the LangGraph adapter's
    // `thread_config` seam: pauses stay resumable and resumes bound to
    // their checkpoint (the adapter once looked the checkpoint up under
    // the bare conversation, and reported neither).
    HonestVariant {
        framework: Framework::LangGraph,
        name: "namespaced-threads",
        as_a_newcomer: false,
        own_cassettes: &[],
    },
    // A denial tells the requester so: a second effect, of another tool,
    // that only the denial produces. The approval pack's inferred gated
    // effects must not count it against the denial.
    HonestVariant {
        framework: Framework::LangGraph,
        name: "notify-on-denial",
        as_a_newcomer: true,
        own_cassettes: &[Pack::ApprovalResume],
    },
    // The escalation is announced on the desk's channel when it is held
    // for a person and again when it runs, each notice under a key of its
    // own: the held notice is posted again (under the same key) when
    // LangGraph runs the tool again on resume, which no probe may count
    // as a second request. Its notices add crash points, so its
    // exactly-once pack replays a cassette of its own.
    HonestVariant {
        framework: Framework::LangGraph,
        name: "notice-on-governed-calls",
        as_a_newcomer: false,
        own_cassettes: &[Pack::ExactlyOnce],
    },
    // Escalated tickets are remembered in process memory only: the same
    // request again is answered "already done" without asking or acting,
    // and after a restart the desk asks again (and the ledger keeps the
    // escalation once); a second approval of the same ticket finds it
    // done. Its tool answers the model what the desk never does, so its
    // approval pack replays a cassette of its own.
    HonestVariant {
        framework: Framework::LangGraph,
        name: "asks-again-after-restart",
        as_a_newcomer: false,
        own_cassettes: &[Pack::ApprovalResume],
    },
    // Each lesson's supporting episodes kept as a running total in the
    // desk's store, not counted again from the episodes on every turn:
    // the promotion threshold is the same, so every procedural probe's
    // promotion, decoy, control and single-demonstration counts hold.
    HonestVariant {
        framework: Framework::LangGraphProcedural,
        name: "running-totals",
        as_a_newcomer: false,
        own_cassettes: &[],
    },
    // The same through the Agents SDK's own seam for a rejection, the
    // run's `tool_error_formatter`.
    HonestVariant {
        framework: Framework::OpenAiAgents,
        name: "notify-on-denial",
        as_a_newcomer: true,
        own_cassettes: &[Pack::ApprovalResume],
    },
];

/// A broken twin of a framework desk, a defect real adopters of the
/// framework hit, selected with `--twin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameworkTwin {
    /// The desk.
    pub framework: Framework,
    /// The `--twin` name.
    pub name: &'static str,
    /// The pack that must catch it.
    pub pack: Pack,
    /// Where: the first failure of the run.
    pub catch: Catch,
    /// The other scenarios that fail with it; every other one passes.
    pub also_fails: &'static [&'static str],
    /// Whether the twin replays a cassette of its own: one whose defect
    /// changes what the model is asked (a prompt that recalls a draft, a
    /// tool result the desk never gives), which the desk's cassette cannot
    /// answer.
    pub own_cassette: bool,
}

impl FrameworkTwin {
    /// The committed cassette the twin replays: its own
    /// (`cassettes/<twin>.<pack>.jsonl`, beside the desk's) or the desk's.
    pub fn cassette(&self) -> PathBuf {
        if !self.own_cassette {
            return self.framework.cassette(self.pack);
        }
        let kind = definition(self.pack).kind().name();
        self.framework
            .dir()
            .join("cassettes")
            .join(format!("{}.{kind}.jsonl", self.name))
    }

    /// The twin, replaying a cassette of its own.
    const fn with_own_cassette(mut self) -> Self {
        self.own_cassette = true;
        self
    }
}

const fn twin(
    framework: Framework,
    name: &'static str,
    pack: Pack,
    catch: (&'static str, &'static str, &'static str, &'static str),
    also_fails: &'static [&'static str],
) -> FrameworkTwin {
    FrameworkTwin {
        framework,
        name,
        pack,
        catch: Catch::at(catch),
        also_fails,
        own_cassette: false,
    }
}

/// The approval probes after the seed that replay a redeemed token: a
/// desk that never refuses a replay fails each of them.
const REPLAYING_PROBES: &[&str] = &[
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
    "approval/question-id-checked",
    "approval/gated-action",
    "approval/deny-answer",
    "approval/unfit-answer",
];

/// An answer from someone not entitled carrying out the held call.
const FOREIGN_ANSWER_HEARD: (&str, &str, &str, &str) = (
    "approval/foreign-answer",
    "foreign answer",
    "EffectsWithheld",
    "EffectsWithheld",
);

/// A restart between the pause and its resume losing the pause.
const PAUSE_LOST_ON_RESTART: (&str, &str, &str, &str) = (
    "approval/restart-between-pause-and-resume",
    "resume after the restart",
    "UnexpectedError",
    "the turn succeeds",
);

/// The seed's replay of a spent token succeeding.
const REPLAY_ACCEPTED: (&str, &str, &str, &str) = (
    "approval-pause-resume-and-replay-refusal",
    "replay",
    "ExpectedError",
    "PauseTokenReplayedError",
);

/// Every approval probe that answers a pause, less the one that catches a
/// re-posted notice first and the replicas probe, which no framework desk
/// declares. The foreign-answer probe's foreign answer is refused before
/// the graph runs; its resume then re-posts the notice.
const NOTICE_REPOSTED: &[&str] = &[
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
];

/// The procedural probes that run the seed's steps (or a later request
/// under another state) in the seed's conversation: a desk that judges a
/// thread's later requests on its first account fails each of them. Those
/// that move each request to a conversation of its own, or enforce only
/// where nothing governs, pass.
const ACCOUNT_KEPT: &[&str] = &[
    "procedural/enforcement-without-restart",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
    "procedural/rule-fidelity",
    "procedural/amend",
    "procedural/two-procedures",
    "procedural/relearn-after-approval",
    "procedural/multi-call",
    "procedural/through-approval",
];

/// The procedural probes with a draft probe, or whose draft (a revoked
/// lesson taught again, a rejected draft) is still on file when the
/// model is asked: a desk recalling drafts shows it.
const DRAFTS_RECALLED: &[&str] = &[
    "procedural/enforcement-without-restart",
    "procedural/separate-conversations",
    "procedural/review-needs-operator",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
    "procedural/revoke",
    "procedural/reject-draft",
    "procedural/multi-call",
    "procedural/through-approval",
];

/// Every framework twin, and where its pack catches it by default.
pub const TWINS: [FrameworkTwin; 19] = [
    // LangGraph re-runs a node from its start on resume: the notice before
    // `interrupt()` goes out again under a new key.
    twin(
        Framework::LangGraph,
        "notice-before-interrupt",
        Pack::ExactlyOnce,
        (
            "exactly-once-effects",
            "crash at effect 1",
            "CrashedEffectRetried",
            "retried under its idempotency key",
        ),
        &[],
    ),
    // With the notice's arguments on its effect, the resume that runs the
    // node again is seen posting it twice, without a crash.
    twin(
        Framework::LangGraph,
        "notice-before-interrupt",
        Pack::ApprovalResume,
        (
            "approval/restart-between-pause-and-resume",
            "resume",
            "EffectNotRepeated",
            "EffectNotRepeated",
        ),
        NOTICE_REPOSTED,
    ),
    // LangGraph accepts a second `Command(resume=...)`.
    twin(
        Framework::LangGraph,
        "trusts-framework-replay",
        Pack::ApprovalResume,
        REPLAY_ACCEPTED,
        REPLAYING_PROBES,
    ),
    // The quickstart's in-memory checkpointer: a restart loses the pause.
    twin(
        Framework::LangGraph,
        "checkpoint-in-memory",
        Pack::ApprovalResume,
        PAUSE_LOST_ON_RESTART,
        &["approval/crash-inside-resume"],
    ),
    // The interrupt names who may answer, but the approver check is left
    // to the graph, which reads only `approved`: anyone's yes escalates.
    twin(
        Framework::LangGraph,
        "any-approver-accepted",
        Pack::ApprovalResume,
        FOREIGN_ANSWER_HEARD,
        &[],
    ),
    // The account is loaded into the thread's state once and kept there
    // (LangGraph persists a thread's state across turns): the satisfied
    // request, a later turn of the same thread, is judged on the draft
    // probe's account and refused.
    twin(
        Framework::LangGraphProcedural,
        "account-kept-on-thread",
        Pack::Procedural,
        (
            "procedural-review-and-enforcement",
            "satisfied",
            "ToolSucceeded",
            "ToolSucceeded(issue_refund",
        ),
        ACCOUNT_KEPT,
    )
    .with_own_cassette(),
    // Recall shows every lesson learned, drafts included.
    twin(
        Framework::LangGraphProcedural,
        "drafts-recalled",
        Pack::Procedural,
        (
            "procedural-review-and-enforcement",
            "draft probe",
            "PromptRecallExcludes",
            "PromptRecallExcludes(fragment)",
        ),
        DRAFTS_RECALLED,
    )
    .with_own_cassette(),
    // The gate judges the first call of a model message; the others go
    // to the tool node unjudged.
    twin(
        Framework::LangGraphProcedural,
        "gate-judges-first-call",
        Pack::Procedural,
        (
            "procedural/multi-call",
            "several calls, blocked",
            "EveryCallJudged",
            "EveryCallJudged(issue_refund, procedural_precondition, refused)",
        ),
        &[],
    )
    .with_own_cassette(),
    // A saved RunState runs again, approved tool included.
    twin(
        Framework::OpenAiAgents,
        "saved-state-run-twice",
        Pack::ApprovalResume,
        REPLAY_ACCEPTED,
        REPLAYING_PROBES,
    ),
    // Refused only by the process that resumed: a restart forgets.
    twin(
        Framework::OpenAiAgents,
        "trusts-sdk-to-refuse",
        Pack::ApprovalResume,
        (
            "approval/restart-before-replay",
            "replay",
            "ExpectedError",
            "PauseTokenReplayedError",
        ),
        &[],
    ),
    // The answer read by truthiness: `{"approved": "maybe"}` approves.
    twin(
        Framework::OpenAiAgents,
        "lax-answer",
        Pack::ApprovalResume,
        (
            "approval/unfit-answer",
            "unfit answer",
            "ExpectedError",
            "an error (any kind)",
        ),
        &["approval/type-confused-answer"],
    ),
    // The desk names who may approve (the duty supervisor, the ticket's
    // owner), but the check is left to the SDK, whose `RunState.approve()`
    // takes no person: anyone's yes escalates.
    twin(
        Framework::OpenAiAgents,
        "any-approver-accepted",
        Pack::ApprovalResume,
        FOREIGN_ANSWER_HEARD,
        &[],
    ),
    // The docs' pattern: a paused run's messages kept in a variable. A
    // restart loses the pause.
    twin(
        Framework::PydanticAi,
        "history-in-memory",
        Pack::ApprovalResume,
        PAUSE_LOST_ON_RESTART,
        &["approval/crash-inside-resume"],
    ),
    // A resume handler written for approve and reject hears an edit as a
    // yes: Pydantic AI runs the call with the model's arguments.
    twin(
        Framework::PydanticAi,
        "edit-heard-as-approval",
        Pack::ApprovalResume,
        (
            "approval/edited-call",
            "edited resume",
            "EditApplied",
            "EditApplied(escalate_ticket.ticket)",
        ),
        &[],
    ),
    // Pydantic AI runs the same approvals on the same history again.
    twin(
        Framework::PydanticAi,
        "trusts-pydantic-ai",
        Pack::ApprovalResume,
        REPLAY_ACCEPTED,
        REPLAYING_PROBES,
    ),
    // The approvers published, the check left to Pydantic AI, whose
    // `ToolApproved()` says yes but never who said it.
    twin(
        Framework::PydanticAi,
        "any-approver-accepted",
        Pack::ApprovalResume,
        FOREIGN_ANSWER_HEARD,
        &[],
    ),
    // The quickstart's InMemorySessionService: a restart loses the
    // pending confirmation.
    twin(
        Framework::GoogleAdk,
        "sessions-in-memory",
        Pack::ApprovalResume,
        PAUSE_LOST_ON_RESTART,
        &["approval/crash-inside-resume"],
    ),
    // The ADK answers a second confirmation of the same call with silence,
    // which a desk trusting it reports as a finished turn.
    twin(
        Framework::GoogleAdk,
        "trusts-adk",
        Pack::ApprovalResume,
        REPLAY_ACCEPTED,
        REPLAYING_PROBES,
    ),
    // The approvers published, the check left to the ADK, whose
    // `ToolConfirmation` carries `confirmed` and a payload, never who
    // confirmed.
    twin(
        Framework::GoogleAdk,
        "any-approver-accepted",
        Pack::ApprovalResume,
        FOREIGN_ANSWER_HEARD,
        &[],
    ),
];
