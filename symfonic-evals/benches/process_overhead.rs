//! What running a deployment out of process costs: the protocol round trip
//! per step (median, against an in-process no-op target), what the v1
//! additive fields add to it (an operator request answered with a pause
//! carrying a question and its id, a pending call, a resolved call and a
//! tool witness), and one real restart (orderly shutdown of the old child,
//! spawn and handshake of the new one).
//!
//! `cargo bench -p symfonic-evals --bench process_overhead`
//! (needs `python3`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{
    CapabilityEvidence, ProcessTarget, PromptRequest, Role, Target, TargetContext, TurnError,
    TurnRecord,
};

const TURNS: usize = 2_000;
const RESTARTS: usize = 30;

/// The same no-op deployment, in process.
struct Noop;

impl Target for Noop {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().answer("ok").build())
    }
}

/// A Python deployment that answers every turn with an empty record, through
/// the companion module: what remains is the protocol and the two runtimes.
fn python_noop(root: &std::path::Path) -> ProcessSpec {
    let script = format!(
        "import sys\nsys.path.insert(0, {python:?})\n\
         from symfonic_evals_protocol import Deployment, TurnRecord, serve\n\
         class Noop(Deployment):\n    def run_turn(self, request, turn):\n        \
         return TurnRecord(answer='ok')\n\
         sys.exit(serve(Noop))\n",
        python = root.join("python").to_string_lossy()
    );
    ProcessSpec::new("python3").args(["-c", &script])
}

/// The same no-op, answering with every field protocol v1 added: what the
/// harness then validates and the companion serialises on every step.
fn python_rich(root: &std::path::Path) -> ProcessSpec {
    let script = format!(
        "import sys\nsys.path.insert(0, {python:?})\n\
         from symfonic_evals_protocol import Deployment, Pause, ResolvedCall, ToolCall, TurnRecord, serve\n\
         class Rich(Deployment):\n    def run_turn(self, request, turn):\n        \
         turn.witness('lookup', {{'order': 7}}, result={{'status': 'in transit'}})\n        \
         record = TurnRecord(answer='ok', tool_calls=[ToolCall.pending('call-1', 'ask_user', {{'q': 'ok?'}})], \
         resolved=[ResolvedCall.succeeded('call-0', {{'approved': True}})])\n        \
         record.pause = Pause('ask_user', True, 'tok', {{'question': 'ok?', 'schema': {{'approved': 'boolean'}}}}, 'q-1')\n        \
         return record\n\
         sys.exit(serve(Rich))\n",
        python = root.join("python").to_string_lossy()
    );
    ProcessSpec::new("python3").args(["-c", &script])
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn per_turn(target: &mut impl Target, request: &PromptRequest) -> Duration {
    for _ in 0..100 {
        target.run_turn(request).expect("warm-up turn");
    }
    let samples = (0..TURNS)
        .map(|_| {
            let started = Instant::now();
            target.run_turn(request).expect("a no-op turn");
            started.elapsed()
        })
        .collect();
    median(samples)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let context = TargetContext::fresh(0).expect("a durable directory");

    let plain =
        PromptRequest::new("bench", "hello").with_state(serde_json::json!({"region": "US"}));
    let in_process = per_turn(&mut Noop, &plain);
    let mut child = ProcessTarget::spawn(&context, &python_noop(&root)).expect("python3 starts");
    let out_of_process = per_turn(&mut child, &plain);
    drop(child);
    let operator = plain.clone().by(Role::Operator);
    let mut child = ProcessTarget::spawn(&context, &python_rich(&root)).expect("python3 starts");
    let rich = per_turn(&mut child, &operator);
    drop(child);

    let helpdesk = ProcessSpec::new("python3").arg(root.join("examples/helpdesk-py/helpdesk.py"));
    let mut target = Some(ProcessTarget::spawn(&context, &helpdesk).expect("helpdesk starts"));
    let (mut shutdowns, mut starts) = (Vec::new(), Vec::new());
    for _ in 0..RESTARTS {
        let started = Instant::now();
        drop(target.take());
        shutdowns.push(started.elapsed());
        let started = Instant::now();
        target = Some(ProcessTarget::spawn(&context, &helpdesk).expect("helpdesk restarts"));
        starts.push(started.elapsed());
    }
    let restarts = shutdowns
        .iter()
        .zip(&starts)
        .map(|(a, b)| *a + *b)
        .collect();
    let restart = median(restarts);
    let (shutdown, start) = (median(shutdowns), median(starts));

    println!("per-step median over {TURNS} turns:");
    println!("  in-process no-op target   {in_process:>12.3?}");
    println!("  python no-op over protocol {out_of_process:>11.3?}");
    println!(
        "  protocol round-trip overhead {:>9.3?}",
        out_of_process.saturating_sub(in_process)
    );
    println!(
        "  with every v1 field        {rich:>11.3?} (+{:.3?})",
        rich.saturating_sub(out_of_process)
    );
    println!("one real restart of helpdesk-py (median of {RESTARTS}): {restart:.3?}");
    println!("  orderly shutdown and reap  {shutdown:>11.3?}");
    println!("  spawn and handshake        {start:>11.3?}");
}
