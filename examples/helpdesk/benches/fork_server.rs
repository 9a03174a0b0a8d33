//! What the fork server saves the Python deployments: the reference Python
//! desk, and the help desk on LangGraph, on the OpenAI Agents SDK, on
//! Pydantic AI and on the Google ADK, and the LangGraph procedural desk
//! (replaying their committed cassettes).
//! For each, start-up (spawn to the handshake's end) and restart (a running
//! desk stopped, as a pack stops it, then the next one started to its
//! handshake) with and without it, median of `starts` each, and each of its
//! packs' full default run with and without it, median of `runs`, all
//! measured in one process. "Fresh" is a new interpreter per start and no
//! spare; "forked" is how the packs start the desk (the framework desks
//! keep a spare, forked ahead of a trial's later restarts, which builds
//! their graph or agent before its handshake). A forked restart is timed
//! after the desk served for 200 ms, as between a pack's restarts, and
//! back to back, before the spare can be ready.
//!
//! ```sh
//! cargo bench -p helpdesk --bench fork_server [starts] [runs] [desk...]
//! ```
//!
//! Defaults: 20 starts, 3 runs (0 measures start-ups and restarts only),
//! every desk (`python`, `langgraph`, `langgraph-procedural`,
//! `openai-agents`, `pydantic-ai`, `google-adk`). The framework desks need an interpreter with
//! `./python[langgraph,openai-agents,pydantic-ai,google-adk]` installed: the virtual environment
//! `SYMFONIC_EVALS_FRAMEWORK_VENV` names, or else `target/adapters-venv`
//! (which CI makes); without one they are skipped, and that is said.

use std::path::Path;
use std::time::{Duration, Instant};

use helpdesk::frameworks::{self, Framework};
use helpdesk::{python, Pack};
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::replay::ReplayConfig;
use symfonic_evals::{run_pack, PackDefinition, ProcessTarget, RunOptions, TargetContext};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:>9.1} ms", d.as_secs_f64() * 1e3)
}

/// One deployment measured: how it starts (forked), and its packs.
struct Desk {
    label: &'static str,
    /// How it starts for the start-up figures.
    starting: ProcessSpec,
    /// How its packs start it.
    forked: ProcessSpec,
    packs: Vec<(Pack, PackDefinition, RunOptions)>,
}

/// The median time from spawning the desk to its handshake's end.
fn start_up(spec: &ProcessSpec, starts: usize) -> Duration {
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

/// The median time of a restart: from stopping a running desk (its
/// shutdown included, as a pack's restart waits for it) to the next one's
/// handshake, over the same durable directory. Each desk serves for
/// `served` before it is stopped, as a pack's desk answers turns between
/// restarts: a spare started ahead of the restart has that long to build
/// what it builds before its handshake.
fn restart(spec: &ProcessSpec, restarts: usize, served: Duration) -> Duration {
    let context = TargetContext::fresh(0).expect("a context");
    let mut target = Some(ProcessTarget::spawn(&context, spec).expect("the desk starts"));
    let samples = (0..restarts)
        .map(|_| {
            std::thread::sleep(served);
            let started = Instant::now();
            drop(target.take());
            target = Some(ProcessTarget::spawn(&context, spec).expect("the desk restarts"));
            started.elapsed()
        })
        .collect();
    median(samples)
}

/// How long each desk serves before a restart in the restart figures: a
/// turn's length, about what a pack's desk serves between restarts.
const SERVED: Duration = Duration::from_millis(200);

fn pack_run(
    name: &str,
    definition: &PackDefinition,
    options: &RunOptions,
    spec: &ProcessSpec,
    runs: usize,
) -> Duration {
    let samples = (0..runs)
        .map(|_| {
            let spec = spec.clone();
            let started = Instant::now();
            let run = run_pack(name, definition, options, move |ctx| {
                python::start(ctx, &spec)
            });
            let took = started.elapsed();
            assert!(run.passed(), "{}", run.render());
            took
        })
        .collect();
    median(samples)
}

fn python_desk() -> Desk {
    Desk {
        label: "python",
        starting: python::spec(None),
        forked: python::spec(None),
        packs: Pack::ALL
            .into_iter()
            .map(|p| (p, python::definition(p), python::run_options()))
            .collect(),
    }
}

fn framework_desk(framework: Framework, label: &'static str, python: &Path) -> Desk {
    let replaying = |pack| RunOptions {
        replay: ReplayConfig {
            cassette: Some(framework.cassette(pack)),
            ..ReplayConfig::default()
        },
        ..RunOptions::default()
    };
    let forked = framework.spec(python, None);
    Desk {
        label,
        // A start-up has no model endpoint, and the frameworks' clients
        // refuse to be built without an address and a key: these are
        // never called.
        starting: forked
            .clone()
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .env("OPENAI_API_KEY", "not-used"),
        forked,
        packs: framework
            .packs()
            .iter()
            .map(|&p| (p, frameworks::definition(p), replaying(p)))
            .collect(),
    }
}

fn measure(desk: &Desk, starts: usize, runs: usize) {
    // The first forked start also starts the fork server: a cost paid once
    // per process, shown apart.
    let first = Instant::now();
    let context = TargetContext::fresh(0).expect("a context");
    drop(ProcessTarget::spawn(&context, &desk.starting).expect("the desk starts"));
    let first = first.elapsed();

    let spawned = start_up(&desk.starting.clone().fork_server(false), starts);
    let forked = start_up(&desk.starting, starts);
    let fresh = desk.forked.clone().fork_server(false).spare(false);
    println!(
        "{} desk start-up (spawn to handshake), median of {starts}",
        desk.label
    );
    println!("  fresh interpreter {}", ms(spawned));
    println!(
        "  forked            {}   ({:.1}x cheaper; the fork server's own start: {})",
        ms(forked),
        spawned.as_secs_f64() / forked.as_secs_f64(),
        ms(first)
    );
    let cold = desk.starting.clone().fork_server(false).spare(false);
    let fresh_restart = restart(&cold, starts, Duration::ZERO);
    let back_to_back = restart(&desk.starting, starts, Duration::ZERO);
    let forked_restart = restart(&desk.starting, starts, SERVED);
    println!("  restart (stop, then start to handshake), median of {starts}");
    println!("    fresh interpreter {}", ms(fresh_restart));
    println!(
        "    forked            {}   ({:.1}x cheaper; back to back, before a spare is ready: {})",
        ms(forked_restart),
        fresh_restart.as_secs_f64() / forked_restart.as_secs_f64(),
        ms(back_to_back)
    );
    if runs == 0 {
        return;
    }
    println!("  each pack's full default run, median of {runs}");
    for (pack, definition, options) in &desk.packs {
        let name = |how: &str| format!("fork_server.{}.{how}.{pack:?}", desk.label);
        let without = pack_run(&name("fresh"), definition, options, &fresh, runs);
        let with = pack_run(&name("forked"), definition, options, &desk.forked, runs);
        println!(
            "    {:<22} fresh {}  forked {}  ({:.1}x faster)",
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
    let starts: usize = numbers.next().unwrap_or(20);
    let runs: usize = numbers.next().unwrap_or(3);
    let chosen: Vec<&str> = args
        .iter()
        .filter(|a| a.parse::<usize>().is_err())
        .map(String::as_str)
        .collect();
    let wanted = |label: &str| chosen.is_empty() || chosen.contains(&label);

    let mut desks = Vec::new();
    if wanted("python") {
        desks.push(python_desk());
    }
    let frameworks = [
        (Framework::LangGraph, "langgraph"),
        (Framework::LangGraphProcedural, "langgraph-procedural"),
        (Framework::OpenAiAgents, "openai-agents"),
        (Framework::PydanticAi, "pydantic-ai"),
        (Framework::GoogleAdk, "google-adk"),
    ];
    if frameworks.iter().any(|(_, label)| wanted(label)) {
        match frameworks::bench_python() {
            Some(python) => desks.extend(
                frameworks
                    .into_iter()
                    .filter(|(_, label)| wanted(label))
                    .map(|(framework, label)| framework_desk(framework, label, &python)),
            ),
            None => println!(
                "framework desks skipped: no interpreter with ./python[langgraph,openai-agents,pydantic-ai,google-adk] \
                 (set SYMFONIC_EVALS_FRAMEWORK_VENV to a virtual environment that has it)"
            ),
        }
    }
    for desk in &desks {
        measure(desk, starts, runs);
    }
}
