//! Harness overhead per step, and what a long scenario costs in time and memory.
//!
//! Run with `cargo bench -p symfonic-evals --bench runner`. Figures are
//! medians of several runs within this one process:
//! - per-step harness work: the runner driving a no-op target, minus the same
//!   turns called directly in a loop, divided by the step count;
//! - a 10,000-step scenario's wall time and peak heap, and the peak heap at
//!   1,000 / 10,000 / 100,000 steps to show memory grows linearly.
//!
//! Peak heap is measured by a counting global allocator, so it is exact and
//! unaffected by whatever else the machine is doing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use symfonic_evals::{
    run_scenario, Assertion, CapabilityEvidence, PromptRequest, Scenario, Step, Target,
    TrialPolicy, TurnError, TurnRecord,
};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `dealloc`, passed on unchanged.
        unsafe { System.dealloc(ptr, layout) };
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Answers every turn with an empty record.
struct NoOp;

impl Target for NoOp {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

fn scenario(steps: usize, assertions: bool) -> Scenario {
    let step = Step::prompt("step", "a prompt of ordinary length for one turn", "bench");
    let step = if assertions {
        step.asserting([
            Assertion::tool_called("issue_refund", 0),
            Assertion::SideEffectCount {
                attempts: 0,
                effects: 0,
                duplicates: 0,
            },
            Assertion::PromptRecallExcludes("verify the account region".into()),
        ])
    } else {
        step
    };
    Scenario::new(
        "bench",
        vec![step; steps],
        TrialPolicy {
            step_timeout: Duration::from_secs(600),
            ..TrialPolicy::default()
        },
    )
}

/// The same turns without the harness: the floor the overhead is measured from.
fn direct(steps: usize) -> Duration {
    let mut target = NoOp;
    let request = PromptRequest::new("bench", "a prompt of ordinary length for one turn");
    let started = Instant::now();
    for _ in 0..steps {
        black_box(target.run_turn(black_box(&request)).ok());
    }
    started.elapsed()
}

fn harnessed(scenario: &Scenario) -> Duration {
    let started = Instant::now();
    let trials = run_scenario(scenario, |_| NoOp);
    let elapsed = started.elapsed();
    assert!(
        trials.iter().all(|t| t.passed()),
        "the no-op scenario must pass"
    );
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn per_step_ns(total: Duration, steps: usize) -> f64 {
    total.as_secs_f64() * 1e9 / steps as f64
}

fn peak_heap(scenario: &Scenario) -> usize {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    black_box(run_scenario(scenario, |_| NoOp));
    PEAK.load(Ordering::Relaxed) - base
}

fn main() {
    const STEPS: usize = 10_000;
    const RUNS: usize = 9;
    for assertions in [false, true] {
        let plan = scenario(STEPS, assertions);
        harnessed(&plan); // warm-up
        let with = median((0..RUNS).map(|_| harnessed(&plan)).collect());
        let without = median((0..RUNS).map(|_| direct(STEPS)).collect());
        let overhead = per_step_ns(with.saturating_sub(without), STEPS);
        println!(
            "per-step harness work ({} assertions/step): median {:.0} ns/step over {STEPS} steps, {RUNS} runs (scenario {:.2} ms, direct {:.3} ms)",
            if assertions { 3 } else { 0 },
            overhead,
            with.as_secs_f64() * 1e3,
            without.as_secs_f64() * 1e3,
        );
    }
    let plan = scenario(STEPS, true);
    let wall = median((0..RUNS).map(|_| harnessed(&plan)).collect());
    println!(
        "10,000-step scenario: median wall {:.2} ms, peak heap {} KiB",
        wall.as_secs_f64() * 1e3,
        peak_heap(&plan) / 1024
    );
    let mut previous: Option<(usize, usize)> = None;
    for steps in [1_000, 10_000, 100_000] {
        let plan = scenario(steps, true);
        let peak = peak_heap(&plan);
        let ratio = previous.map_or(String::new(), |(s, p)| {
            format!(
                " (x{:.1} heap for x{} steps)",
                peak as f64 / p as f64,
                steps / s
            )
        });
        println!(
            "peak heap at {steps} steps: {} KiB, {:.0} bytes/step{ratio}",
            peak / 1024,
            peak as f64 / steps as f64
        );
        previous = Some((steps, peak));
    }
}
