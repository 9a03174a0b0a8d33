//! What an MCP server on stdio costs a pack: the extension pack against the
//! help desk on the OpenAI Agents SDK, its forecasts served three ways, each
//! the median of `runs` full default runs measured in one process, the desk
//! forked by the fork server as the packs start it:
//!
//! - `http fixture`: `desk.py`, bound to the harness's MCP fixture over
//!   streamable HTTP (`mcp_server_params("openai-agents")`);
//! - `stdio fixture`: `stdio_desk.py --forecasts fixture`, bound to the
//!   same fixture through the harness's stdio bridge
//!   (`mcp_server_params("stdio")`, the `symfonic-evals-mcp-stdio` binary);
//! - `own stdio server`: `stdio_desk.py --forecasts own`, the app's own
//!   `forecast_server.py`, which the SDK starts as a fresh interpreter each
//!   time the desk connects (the fork server forks the desk, not its
//!   grandchild). The pack then has no fixture to check the calls against,
//!   nor a witness from the tool's body (it runs in the other process), so
//!   it runs with `witnessed` off.
//!
//! ```sh
//! cargo build --release -p symfonic-evals --bin symfonic-evals-mcp-stdio
//! cargo bench -p helpdesk --bench mcp_stdio [runs]
//! ```
//!
//! 5 runs by default. Needs an interpreter with `./python[openai-agents]`
//! installed: `SYMFONIC_EVALS_FRAMEWORK_VENV`, or else `target/adapters-venv`.

use std::time::{Duration, Instant};

use helpdesk::frameworks::{self, Framework};
use helpdesk::{python, upstream, Pack};
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::replay::{ReplayConfig, ReplayMode};
use symfonic_evals::{run_pack, PackDefinition, RunOptions};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The median wall time of `runs` runs, each of which must pass. The desk
/// talks straight to the scripted model its cassettes were recorded from
/// (no replay endpoint): the servers differ in the tool's listing and
/// results, so no one cassette replays all three, and each row pays the
/// same for its model.
fn timed(
    label: &str,
    definition: &PackDefinition,
    spec: &ProcessSpec,
    runs: usize,
    upstream: &str,
) -> Duration {
    let spec = spec
        .clone()
        .env("OPENAI_BASE_URL", format!("{upstream}/v1"))
        .env("OPENAI_API_KEY", "not-used");
    let options = RunOptions {
        replay: ReplayConfig::mode(ReplayMode::Off),
        ..RunOptions::default()
    };
    let samples = (0..runs)
        .map(|_| {
            let spec = spec.clone();
            let started = Instant::now();
            let run = run_pack(label, definition, &options, move |ctx| {
                python::start(ctx, &spec)
            });
            let took = started.elapsed();
            assert!(run.passed(), "{label}: {}", run.render());
            took
        })
        .collect();
    median(samples)
}

fn main() {
    // `cargo bench` appends `--bench` to the arguments given after `--`.
    let runs: usize = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let Some(python) = frameworks::bench_python() else {
        eprintln!("no interpreter with the Agents SDK (set SYMFONIC_EVALS_FRAMEWORK_VENV): nothing measured");
        return;
    };
    if symfonic_evals::mcp::stdio_bridge().is_none() {
        eprintln!("the stdio bridge is not built: cargo build --release -p symfonic-evals --bin symfonic-evals-mcp-stdio");
        return;
    }
    let framework = Framework::OpenAiAgents;
    let definition = frameworks::definition(Pack::ExtensionTool);
    let stdio = |forecasts: &str| {
        ProcessSpec::new(&python)
            .arg(framework.dir().join("stdio_desk.py"))
            .args(["--forecasts", forecasts])
            .fork_server(true)
            .spare(true)
    };
    let unwitnessed = match definition.clone() {
        PackDefinition::ExtensionTool(pack) => {
            PackDefinition::ExtensionTool(symfonic_evals::ExtensionToolPack {
                witnessed: false,
                ..pack
            })
        }
        other => other,
    };
    let model = upstream::framework_desk().expect("the scripted model starts");
    let url = model.url().to_owned();
    println!("extension pack on the Agents SDK desk, forked, median of {runs} full default runs");
    let http = timed(
        "mcp_stdio.http",
        &definition,
        &framework.spec(&python, None),
        runs,
        &url,
    );
    let bridged = timed(
        "mcp_stdio.bridge",
        &definition,
        &stdio("fixture"),
        runs,
        &url,
    );
    let own = timed("mcp_stdio.own", &unwitnessed, &stdio("own"), runs, &url);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("  http fixture      {:>9.1} ms", ms(http));
    println!(
        "  stdio fixture     {:>9.1} ms   ({:.2}x the http fixture's)",
        ms(bridged),
        ms(bridged) / ms(http)
    );
    println!(
        "  own stdio server  {:>9.1} ms   ({:.2}x the stdio fixture's)",
        ms(own),
        ms(own) / ms(bridged)
    );
}
