//! What a spare process saves the TypeScript desks, which `node` cannot
//! fork: for the plain desk and the desk on LangGraph.js, a cold start
//! (spawn to the handshake's end), a restart cold and a restart answered by
//! a spare (a running desk stopped, as a pack stops it, then the next one
//! to its handshake), median of `restarts` each, and each of the desk's
//! packs' full default run without and with spares, median of `runs`, all
//! in one process.
//!
//! ```sh
//! cargo bench -p helpdesk --bench node_spare [restarts] [runs] [plain|langgraph...]
//! ```
//!
//! Defaults: 20 restarts, 1 run (0 measures restarts only), both desks.
//! A pack's restarts come between turns, while its spare starts; the
//! restart figure gives the spare the same head start (`HEAD_START`), so it
//! shows a restart as packs see it, not the spare's own start.

use std::time::{Duration, Instant};

use helpdesk::typescript::{self, TsDesk};
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{run_pack, ProcessTarget, RunOptions, TargetContext};

/// How long a spare has to start before it is asked for: about one turn.
const HEAD_START: Duration = Duration::from_millis(1500);

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:>9.1} ms", d.as_secs_f64() * 1e3)
}

/// The median time from stopping a running desk to the next one's
/// handshake, over one trial's durable directory, each restart after the
/// head start a pack's turn would give.
fn restart(spec: &ProcessSpec, restarts: usize) -> (Duration, usize) {
    let context = TargetContext::fresh(0).expect("a context");
    let mut target = Some(ProcessTarget::spawn(&context, spec).expect("the desk starts"));
    let mut from_spare = 0;
    let samples = (0..restarts)
        .map(|_| {
            std::thread::sleep(HEAD_START);
            let started = Instant::now();
            drop(target.take());
            let next = ProcessTarget::spawn(&context, spec).expect("the desk restarts");
            let took = started.elapsed();
            from_spare += usize::from(next.from_spare());
            target = Some(next);
            took
        })
        .collect();
    (median(samples), from_spare)
}

fn measure(desk: TsDesk, restarts: usize, runs: usize) {
    let spare = typescript::spec(desk.script()).expect("the package is built");
    let cold = spare.clone().spare(false);
    let (cold_restart, _) = restart(&cold, restarts);
    let (warm_restart, answered) = restart(&spare, restarts);
    println!(
        "{} restart (stop, then start to handshake), median of {restarts}",
        desk.name()
    );
    println!("  cold       {}", ms(cold_restart));
    println!(
        "  from spare {}   ({:.1}x cheaper; {answered} of {restarts} answered by a spare)",
        ms(warm_restart),
        cold_restart.as_secs_f64() / warm_restart.as_secs_f64()
    );
    if runs == 0 {
        return;
    }
    println!("  each pack's full default run, median of {runs}");
    for &pack in desk.packs() {
        let definition = typescript::definition(desk, pack);
        let time = |spec: &ProcessSpec, how: &str| {
            let samples = (0..runs)
                .map(|_| {
                    let spec = spec.clone();
                    let started = Instant::now();
                    let run = run_pack(
                        &format!("node_spare.{}.{how}.{pack:?}", desk.name()),
                        &definition,
                        &RunOptions::default(),
                        move |ctx| typescript::start(ctx, &spec),
                    );
                    assert!(run.passed(), "{}", run.render());
                    started.elapsed()
                })
                .collect();
            median(samples)
        };
        let without = time(&cold, "cold");
        let with = time(&spare, "spare");
        println!(
            "    {:<22} cold {}  with spares {}  ({:.1}x faster)",
            definition.kind().name(),
            ms(without),
            ms(with),
            without.as_secs_f64() / with.as_secs_f64()
        );
    }
}

fn main() {
    // `cargo bench` appends `--bench` to the arguments given after `--`.
    let args: Vec<String> = std::env::args()
        .filter(|a| a != "--bench")
        .skip(1)
        .collect();
    let mut numbers = args.iter().filter_map(|a| a.parse().ok());
    let restarts: usize = numbers.next().unwrap_or(20);
    let runs: usize = numbers.next().unwrap_or(1);
    let chosen: Vec<&str> = args
        .iter()
        .filter(|a| a.parse::<usize>().is_err())
        .map(String::as_str)
        .collect();
    if let Err(why) = typescript::built() {
        println!("TypeScript desks not measured: {why}");
        return;
    }
    for (desk, label) in [(TsDesk::Plain, "plain"), (TsDesk::LangGraph, "langgraph")] {
        if chosen.is_empty() || chosen.contains(&label) {
            measure(desk, restarts, runs);
        }
    }
}
