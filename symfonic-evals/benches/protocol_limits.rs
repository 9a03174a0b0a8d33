//! What the harness's limits cost when a deployment pushes them.
//!
//! - the largest protocol line the default cap admits (a 60 MB model
//!   input, as a long-context deployment reports), read from a child
//!   process: time, and this process's peak resident memory before and
//!   after;
//! - a line that never ends, refused at the default 64 MiB cap: time to
//!   the refusal;
//! - a deployment that hangs on every turn, under the extension pack (a
//!   seed and two probes) run isolated in a process: the wall time of the
//!   whole pack run at the step limit, beside what one limit per scenario
//!   would cost.
//!
//! `cargo bench -p symfonic-evals --bench protocol_limits [step limit in seconds]`
//!
//! The step limit defaults to the packs' default of 30 s. The child process
//! is the Python script the large-line tests use (`python3` must be on the
//! path). The binary re-executes itself to serve the isolated run, so the
//! figures are printed by the process that was not started to serve.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use symfonic_evals::process::{kinds, ProcessSpec, DEFAULT_MAX_LINE_BYTES};
use symfonic_evals::{
    run_pack, CapabilityEvidence, ExtensionToolPack, Isolation, PackDefinition, ProcessTarget,
    PromptRequest, RunOptions, Target, TargetContext, TurnError, TurnRecord,
};

/// Declares the extension's tool, then never answers a turn.
struct Hangs;

impl Target for Hangs {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new().contributes("extensions", "weather_lookup")
    }

    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        std::thread::sleep(Duration::from_secs(3600));
        Ok(TurnRecord::builder().build())
    }
}

/// The process's peak resident memory so far, in MiB (Linux only).
fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

fn shown(mib: Option<u64>) -> String {
    mib.map_or_else(|| "unknown".to_owned(), |m| format!("{m} MiB"))
}

/// One turn of the misbehaving child, timed.
fn child_turn(prompt: &str) -> (Result<TurnRecord, TurnError>, Duration) {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children/misbehave.py");
    let spec = ProcessSpec::new("python3")
        .arg(script)
        .request_timeout(Duration::from_secs(60))
        .handshake_timeout(Duration::from_secs(10))
        .shutdown_grace(Duration::from_millis(500));
    let context = TargetContext::fresh(0).expect("a context");
    let mut target = ProcessTarget::spawn(&context, &spec).expect("the handshake succeeds");
    let started = Instant::now();
    let result = target.run_turn(&PromptRequest::new("limits", prompt));
    (result, started.elapsed())
}

fn hung_pack(limit: Duration) -> (Duration, usize) {
    let mut pack = ExtensionToolPack {
        prompt: "what is the weather in Oslo".into(),
        tool_name: "weather_lookup".into(),
        arguments: Some(json!({ "city": "Oslo" })),
        expected_fragments: vec!["Oslo".into()],
        ..ExtensionToolPack::default()
    };
    pack.policy.step_timeout = limit;
    let options = RunOptions {
        isolation: Isolation::Process,
        ..RunOptions::default()
    };
    let started = Instant::now();
    let run = run_pack(
        "protocol_limits.hangs",
        &PackDefinition::ExtensionTool(pack),
        &options,
        |_| Hangs,
    );
    let scenarios = run.scenarios().len() + run.probes_not_run().len();
    (started.elapsed(), scenarios)
}

fn main() {
    // `cargo bench` appends `--bench` to the arguments given after `--`.
    let limit = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(Duration::from_secs(30), Duration::from_secs_f64);
    // The isolated run re-executes this binary; only the parent measures
    // the lines, and only it prints.
    let (took, scenarios) = hung_pack(limit);

    let before = peak_rss_mib();
    let (record, read) = child_turn("big:60000000");
    let length = record.map(|r| r.model_input().len());
    let after = peak_rss_mib();
    let (refused, refused_in) = child_turn("endless");

    println!("protocol limits");
    println!(
        "  60 MB line: read {length:?} bytes of model input in {:.0} ms; peak RSS {} before, {} after",
        read.as_secs_f64() * 1e3,
        shown(before),
        shown(after)
    );
    let kind = refused.map_or_else(|e| e.kind, |_| "read in full".to_owned());
    println!(
        "  endless line: {kind} at the {} MiB cap after {:.0} ms (expected {})",
        DEFAULT_MAX_LINE_BYTES >> 20,
        refused_in.as_secs_f64() * 1e3,
        kinds::MESSAGE_TOO_LARGE
    );
    println!(
        "  hung deployment, extension pack ({scenarios} scenarios), {:.1} s step limit: \
         {:.1} s for the whole run (one limit per scenario would be {:.1} s)",
        limit.as_secs_f64(),
        took.as_secs_f64(),
        limit.as_secs_f64() * scenarios as f64
    );
}
