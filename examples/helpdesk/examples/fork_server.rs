//! What the fork server saves the Python desk: start-up (spawn and
//! handshake) with and without it, median of 20, and each pack's full
//! default run with and without it, median of 3, all measured in one
//! process.
//!
//! `cargo run --release -p helpdesk --example fork_server [starts] [runs]`

use std::time::{Duration, Instant};

use helpdesk::{python, Pack};
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{run_pack, ProcessTarget, TargetContext};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:>8.1} ms", d.as_secs_f64() * 1e3)
}

/// The median time from spawning the desk to its handshake's end.
fn start_up(spec: &ProcessSpec, starts: usize) -> Duration {
    // The first start of a forking spec also starts its fork server: a
    // cost paid once per process, shown apart.
    let samples = (0..starts)
        .map(|_| {
            let context = TargetContext::fresh(0).expect("a context");
            let started = Instant::now();
            let target = ProcessTarget::spawn(&context, spec).expect("the desk starts");
            let took = started.elapsed();
            drop(target);
            took
        })
        .collect();
    median(samples)
}

fn pack_run(pack: Pack, spec: &ProcessSpec, runs: usize, label: &str) -> Duration {
    let samples = (0..runs)
        .map(|_| {
            let spec = spec.clone();
            let started = Instant::now();
            let run = run_pack(
                &format!("fork_server.{label}.{pack:?}"),
                &python::definition(pack),
                &python::run_options(),
                move |ctx| python::start(ctx, &spec),
            );
            let took = started.elapsed();
            assert!(run.passed(), "{}", run.render());
            took
        })
        .collect();
    median(samples)
}

fn main() {
    let mut numbers = std::env::args().skip(1).filter_map(|a| a.parse().ok());
    let starts: usize = numbers.next().unwrap_or(20);
    let runs: usize = numbers.next().unwrap_or(3);
    let forked = python::spec(None);
    let fresh = forked.clone().fork_server(false);

    let first = Instant::now();
    let context = TargetContext::fresh(0).expect("a context");
    drop(ProcessTarget::spawn(&context, &forked).expect("the desk starts"));
    let first = first.elapsed();

    let spawned = start_up(&fresh, starts);
    let fork = start_up(&forked, starts);
    println!("Python desk start-up (spawn to handshake), median of {starts}");
    println!("  fresh interpreter {}", ms(spawned));
    println!(
        "  forked            {}   ({:.1}x cheaper; the fork server's own start: {})",
        ms(fork),
        spawned.as_secs_f64() / fork.as_secs_f64(),
        ms(first)
    );
    println!("each pack's full default run, median of {runs}");
    for pack in Pack::ALL {
        let without = pack_run(pack, &fresh, runs, "fresh");
        let with = pack_run(pack, &forked, runs, "forked");
        println!(
            "  {:<22} fresh {}  forked {}  ({:.1}x)",
            python::definition(pack).kind().name(),
            ms(without),
            ms(with),
            without.as_secs_f64() / with.as_secs_f64()
        );
    }
}
