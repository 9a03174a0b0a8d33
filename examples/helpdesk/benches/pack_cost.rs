//! What the probes cost: each pack's wall time against the reference desks,
//! the seed scenario alone against the full default run (every probe), and
//! for the procedural pack the full run without the gate sweep, so the
//! sweep's own share shows. Medians of several runs, measured in one
//! process, in the default process isolation.
//!
//! `cargo bench -p helpdesk --bench pack_cost [runs]` (5 runs by
//! default; the Python desk, over the protocol, runs half as many).

use std::time::{Duration, Instant};

use helpdesk::{packs, python, Helpdesk, Pack};
use symfonic_evals::{run_pack, PackDefinition, RunOptions, Target, TargetContext};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The median wall time of `runs` runs of `definition`, each of which
/// must pass (a cost is only worth quoting for a passing run).
fn timed<T, F>(
    label: &str,
    definition: &PackDefinition,
    options: &RunOptions,
    runs: usize,
    factory: F,
) -> Duration
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Clone + Send + Sync + 'static,
{
    let samples = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let run = run_pack(label, definition, options, factory.clone());
            let took = started.elapsed();
            assert!(run.passed(), "{}", run.render());
            took
        })
        .collect();
    median(samples)
}

fn every_probe(definition: &PackDefinition) -> Vec<&'static str> {
    definition.kind().probes().iter().map(|p| p.name).collect()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn row<T, F>(desk: &str, definition: &PackDefinition, options: &RunOptions, runs: usize, factory: F)
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Clone + Send + Sync + 'static,
{
    let name = definition.kind().name();
    let label = format!("pack_cost::{desk}::{name}");
    let seed_only = definition.clone().skipping(&every_probe(definition));
    let seed = timed(&label, &seed_only, options, runs, factory.clone());
    let full = timed(&label, definition, options, runs, factory.clone());
    let scenarios = definition.scenarios().len();
    let mut line = format!(
        "{desk:<12} {name:<22} {scenarios:>2} scenarios  seed {:>9}  full {:>9}  ratio {:>5.1}x",
        ms(seed),
        ms(full),
        full.as_secs_f64() / seed.as_secs_f64()
    );
    if definition.kind() == symfonic_evals::PackKind::Procedural {
        let no_sweep = definition.clone().skipping(&["procedural/gate-sweep"]);
        let without = timed(&label, &no_sweep, options, runs, factory);
        line.push_str(&format!(
            "  gate sweep adds {}",
            ms(full.saturating_sub(without))
        ));
    }
    println!("{line}");
}

fn main() {
    // `cargo bench` appends `--bench` to the arguments given after `--`.
    let runs: usize = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5)
        .max(1);
    println!(
        "medians of {runs} run(s) (Python desk: {}):",
        runs.div_ceil(2)
    );
    for pack in Pack::ALL {
        row(
            "helpdesk",
            &packs::definition(pack),
            &packs::run_options(),
            runs,
            Helpdesk::open,
        );
    }
    let spec = python::spec(None);
    for pack in Pack::ALL {
        let spec = spec.clone();
        row(
            "helpdesk-py",
            &python::definition(pack),
            &python::run_options(),
            runs.div_ceil(2),
            move |ctx: &TargetContext| python::start(ctx, &spec),
        );
    }
}
