//! The help desk written in TypeScript (`typescript/examples/`, on the npm
//! companion `symfonic-evals-protocol`), judged over the process protocol
//! under `node` like the Python desk: the plain desk, the desks on
//! LangGraph.js and on the OpenAI Agents SDK for JavaScript through the
//! companion's adapters, the pack arguments each is evaluated with, and
//! their broken twins with where each must be caught.
//! The main job and `tests/typescript_packs.rs` share these definitions.
//!
//! Node cannot be assumed on every machine: [`built`] says why the desks
//! cannot run (no `node`, or the package's dependencies not installed),
//! and the callers say so plainly instead of passing silently.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

use serde_json::json;
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{
    ApprovalResumePack, ExactlyOncePack, ExtensionToolPack, PackDefinition, ProcessTarget,
    TargetContext,
};

use crate::twins::{Catch, Pack};

/// One of the TypeScript desks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsDesk {
    /// The desk on the companion alone (`helpdesk.ts`): `ask_user` pauses.
    Plain,
    /// The desk on LangGraph.js (`langgraph/desk.ts`): the approval sits
    /// on the gated call itself, an `interrupt()` in its node; its
    /// witnessed `weather_lookup` is the contributed extension tool.
    LangGraph,
    /// The desk on the OpenAI Agents SDK for JavaScript
    /// (`openai-agents/desk.ts`): the gated tool has `needsApproval`, the
    /// interrupted run's `RunState` is kept in the token table; its
    /// witnessed `weather_lookup` is the contributed extension tool, served
    /// by the MCP fixture where the pack runs one.
    OpenAiAgents,
}

impl TsDesk {
    /// Every desk, in the order the main job prints them.
    pub const ALL: [Self; 3] = [Self::Plain, Self::LangGraph, Self::OpenAiAgents];

    /// The deployment's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "helpdesk-ts",
            Self::LangGraph => "langgraph-ts",
            Self::OpenAiAgents => "openai-agents-ts",
        }
    }

    /// The compiled entry point, relative to the built examples.
    pub fn script(self) -> &'static str {
        match self {
            Self::Plain => "helpdesk.js",
            Self::LangGraph => "langgraph/desk.js",
            Self::OpenAiAgents => "openai-agents/desk.js",
        }
    }

    /// The packs the desk is meant for: every desk has the gated
    /// escalation and the contributed extension tool.
    pub fn packs(self) -> &'static [Pack] {
        &[Pack::ApprovalResume, Pack::ExtensionTool, Pack::ExactlyOnce]
    }

    /// The call that pauses for the person.
    fn interaction(self) -> &'static str {
        match self {
            Self::Plain => "ask_user",
            Self::LangGraph | Self::OpenAiAgents => "escalate_ticket",
        }
    }
}

/// The arguments `desk` is evaluated with in `pack`.
///
/// # Panics
///
/// For a pack the desk is not meant for (see [`TsDesk::packs`]).
pub fn definition(desk: TsDesk, pack: Pack) -> PackDefinition {
    match pack {
        Pack::ApprovalResume => PackDefinition::ApprovalResume(ApprovalResumePack {
            pause_prompt: "escalate ticket 7 to a supervisor".into(),
            answer: json!({"approved": true}),
            interaction_tool: desk.interaction().into(),
            replay_error: vec!["PauseTokenReplayedError".into(), "pause.replayed".into()],
            gated_tool: Some("escalate_ticket".into()),
            deny_answer: Some(json!({"approved": false})),
            unfit_answer: Some(json!({"approved": "maybe"})),
            ..ApprovalResumePack::default()
        }),
        Pack::ExtensionTool => PackDefinition::ExtensionTool(ExtensionToolPack {
            prompt: "what is the weather in Lisbon".into(),
            tool_name: "weather_lookup".into(),
            arguments: Some(json!({"city": "Lisbon"})),
            expected_fragments: vec!["Lisbon".into(), "sunny".into()],
            witnessed: true,
            second_prompt: Some("what is the weather in Oslo".into()),
            second_arguments: Some(json!({"city": "Oslo"})),
            // What the harness's MCP fixture answers beside its nonce, so
            // the desk bound to it answers like the real service.
            fixture_result: Some(json!({"city": "Lisbon", "forecast": "sunny, 21 C"})),
            ..ExtensionToolPack::default()
        }),
        Pack::ExactlyOnce => PackDefinition::ExactlyOnce(ExactlyOncePack {
            prompt: "escalate ticket 7 to a supervisor".into(),
            answer: Some(json!({"approved": true})),
            ..ExactlyOncePack::default()
        }),
        Pack::Procedural => panic!("the TypeScript desks are not judged by the procedural pack"),
    }
}

/// A broken variant of a TypeScript desk: its own entry point under
/// `twins/`, written as the framework's users report the flaw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsTwin {
    /// The twin's name (its file under `twins/`, without `.js`).
    pub name: &'static str,
    /// The desk it breaks.
    pub desk: TsDesk,
    /// The pack that must catch it.
    pub pack: Pack,
    /// Where: the first failure of the run.
    pub catch: Catch,
    /// Every scenario the full pack fails it in (the catch's first); every
    /// other scenario passes.
    pub fails: &'static [&'static str],
}

impl TsTwin {
    /// The compiled entry point, relative to the built examples.
    pub fn script(&self) -> String {
        format!("twins/{}.js", self.name)
    }
}

const fn twin(
    name: &'static str,
    desk: TsDesk,
    catch: (&'static str, &'static str, &'static str, &'static str),
    fails: &'static [&'static str],
) -> TsTwin {
    TsTwin {
        name,
        desk,
        pack: Pack::ApprovalResume,
        catch: Catch::at(catch),
        fails,
    }
}

/// Every TypeScript twin, with where it must be caught.
pub const TWINS: [TsTwin; 6] = [
    // The token is verified but never spent: a replay after a restart is
    // applied again.
    twin(
        "unspent-token",
        TsDesk::Plain,
        (
            "approval/restart-before-replay",
            "replay",
            "ExpectedError",
            "",
        ),
        &["approval/restart-before-replay"],
    ),
    // `if (answer.approved)`: "maybe" and "false" approve.
    twin(
        "lax-answer",
        TsDesk::Plain,
        ("approval/unfit-answer", "unfit answer", "ExpectedError", ""),
        &["approval/unfit-answer", "approval/type-confused-answer"],
    ),
    // LangGraph.js's `MemorySaver`: the pause dies with the process.
    twin(
        "langgraph-memory-saver",
        TsDesk::LangGraph,
        (
            "approval/restart-between-pause-and-resume",
            "resume after the restart",
            "UnexpectedError",
            "",
        ),
        &[
            "approval/restart-between-pause-and-resume",
            "approval/crash-inside-resume",
        ],
    ),
    // The effect written before the node's `interrupt()`: LangGraph re-runs
    // the node from its start on resume, so it is applied at the pause and
    // again on resume; the crash inside the resume shows it first (the
    // effect the pause applied is applied again), the gated action and the
    // denial at the pause itself.
    twin(
        "langgraph-effect-before-interrupt",
        TsDesk::LangGraph,
        (
            "approval/crash-inside-resume",
            "resume killed at its first effect",
            "CrashedEffectRetried",
            "",
        ),
        &[
            "approval/crash-inside-resume",
            "approval/gated-action",
            "approval/deny-answer",
        ],
    ),
    // The interrupted run's `RunState` kept in a map in the process, as
    // the SDK's human-in-the-loop examples keep it: the token survives a
    // restart, the state it continues does not.
    twin(
        "openai-agents-state-in-memory",
        TsDesk::OpenAiAgents,
        (
            "approval/restart-between-pause-and-resume",
            "resume after the restart",
            "UnexpectedError",
            "",
        ),
        &[
            "approval/restart-between-pause-and-resume",
            "approval/crash-inside-resume",
        ],
    ),
    // No spent mark, trusting the saved `RunState` to know it was resumed:
    // it still holds the approval, so a replay runs the approved tool
    // again. The seed's replay shows it first; every probe that replays a
    // redeemed token (or redeems one twice) fails with it.
    twin(
        "openai-agents-approval-applied-twice",
        TsDesk::OpenAiAgents,
        (
            "approval-pause-resume-and-replay-refusal",
            "replay",
            "ExpectedError",
            "",
        ),
        &[
            "approval-pause-resume-and-replay-refusal",
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
        ],
    ),
];

/// An honest variant of a TypeScript desk: a correct desk shaped another
/// way (its own entry point under `honest/`), which every pack its desk
/// passes must pass too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsHonest {
    /// The variant's name (its file under `honest/`, without `.js`).
    pub name: &'static str,
    /// The desk it reshapes; it is judged by the desk's packs.
    pub desk: TsDesk,
}

impl TsHonest {
    /// The compiled entry point, relative to the built examples.
    pub fn script(&self) -> String {
        format!("honest/{}.js", self.name)
    }
}

/// Every honest TypeScript variant: each framework desk served with
/// `stream: true`, so the packs judge the adapters' streamed paths.
pub const HONEST: [TsHonest; 2] = [
    TsHonest {
        name: "langgraph-streamed",
        desk: TsDesk::LangGraph,
    },
    TsHonest {
        name: "openai-agents-streamed",
        desk: TsDesk::OpenAiAgents,
    },
];

/// Where the compiled examples are, built from the sources when any source
/// is newer than the build (a stale build would judge old code), or why
/// they cannot run on this machine.
pub fn built() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

/// The companion's folder.
pub fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../typescript")
}

fn build() -> Result<PathBuf, String> {
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|out| out.status.success()) {
        return Err("`node` is not on PATH".into());
    }
    let dir = package_dir();
    if !dir.join("node_modules").is_dir() {
        return Err(format!(
            "the package's dependencies are not installed (run `npm ci` in {})",
            dir.display()
        ));
    }
    let sources = [
        "src",
        "examples",
        "test",
        "tsconfig.json",
        "tsconfig.test.json",
    ]
    .map(|part| newest(&dir.join(part)));
    let sources = sources.into_iter().flatten().max();
    // Every build rewrites its outputs whole, so the newest output of
    // each says when it last ran.
    let build = ["build/examples", "dist"].map(|part| newest(&dir.join(part)));
    let stale = match (sources, build) {
        (Some(source), [Some(examples), Some(dist)]) => source > examples.min(dist),
        _ => true,
    };
    if stale {
        for script in ["build", "build:test"] {
            let status = Command::new("npm")
                .args(["run", "--silent", script])
                .current_dir(&dir)
                .status()
                .map_err(|e| format!("npm could not start: {e}"))?;
            if !status.success() {
                return Err(format!("`npm run {script}` in {} failed", dir.display()));
            }
        }
    }
    Ok(dir.join("build/examples"))
}

/// The newest modification time of a file under `path` (itself if a file).
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .flatten()
        .filter_map(|entry| newest(&entry.path()))
        .max()
}

/// The command that starts `script` (see [`TsDesk::script`],
/// [`TsTwin::script`]) under `node`, or why it cannot run here.
///
/// # Errors
///
/// See [`built`].
pub fn spec(script: &str) -> Result<ProcessSpec, String> {
    let dir = built()?;
    // Node cannot fork an initialised process: each restart is answered by
    // a spare started ahead, its runtime and framework already loaded.
    Ok(ProcessSpec::new("node")
        .arg(dir.join(script))
        .include_stderr_tail(true)
        .spare(true))
}

/// Starts the desk for one trial.
///
/// # Panics
///
/// When the process cannot start (the harness reports it as the step it
/// broke on).
pub fn start(ctx: &TargetContext, spec: &ProcessSpec) -> ProcessTarget {
    ProcessTarget::spawn(ctx, spec).unwrap_or_else(|error| panic!("{error}"))
}
