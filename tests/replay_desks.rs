//! The reference desks with their models behind the harness's replay
//! endpoint: the Rust desk's OpenAI-compatible HTTP client and the Python
//! desk on the official OpenAI SDK (installed by the tests into a virtual
//! environment under the target directory).
//!
//! The packs replay from the cassettes committed under
//! `examples/helpdesk/cassettes/` and `examples/helpdesk-py/cassettes/`
//! with no upstream running. To re-record them (one command), then review
//! and accept:
//!
//! ```sh
//! SYMFONIC_EVALS_RECORD=all cargo test -p symfonic-evals-e2e --test e2e replay_desks::committed
//! cargo run -p symfonic-evals --bin symfonic-evals-cassette -- accept examples/helpdesk/cassettes examples/helpdesk-py/cassettes
//! ```
#![cfg(unix)]

use std::path::{Path, PathBuf};

use helpdesk::{packs, python, upstream, Helpdesk, Pack};
use symfonic_evals::replay::{accept_pending, Cassette, ReplayConfig, ReplayMode, RECORD_ENV};
use symfonic_evals::{
    run_pack, Isolation, PackDefinition, PackRun, RunOptions, TargetContext, TrialPolicy,
};
use symfonic_evals_e2e::{side_by_side, venv_python};

/// The OpenAI SDK the Python desk's model client runs on, pinned so a new
/// release cannot change the requests the committed cassettes replay.
const OPENAI_SDK: &str = "openai==3.57.0";

const PACKS: [Pack; 3] = [Pack::Procedural, Pack::ApprovalResume, Pack::ExtensionTool];

fn name(pack: Pack) -> &'static str {
    packs::definition(pack).kind().name()
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn options(config: ReplayConfig) -> RunOptions {
    RunOptions {
        replay: config,
        ..RunOptions::default()
    }
}

fn on_a_thread(config: ReplayConfig) -> RunOptions {
    RunOptions {
        isolation: Isolation::Thread,
        ..options(config)
    }
}

/// Whether this run re-records the committed cassettes.
fn recording() -> bool {
    std::env::var(RECORD_ENV).is_ok_and(|v| !v.is_empty())
}

fn python_factory(python: &Path) -> impl Fn(&TargetContext) -> symfonic_evals::ProcessTarget {
    let spec = python::model_spec(python);
    move |ctx| python::start(ctx, &spec)
}

fn with_trials(definition: PackDefinition, trials: u32) -> PackDefinition {
    definition.with_policy(TrialPolicy::all_of(trials))
}

#[test]
fn committed_cassettes_replay_every_rust_desk_pack() {
    let upstream = recording().then(|| upstream::rust_desk().expect("a scripted upstream"));
    let runs = side_by_side(PACKS, |pack| {
        let config = ReplayConfig {
            cassette: Some(examples().join(format!("helpdesk/cassettes/{}.jsonl", name(pack)))),
            upstream_url: upstream.as_ref().map(|u| u.url().to_owned()),
            ..ReplayConfig::default()
        };
        run_pack(
            &format!("helpdesk-http::{}", name(pack)),
            &packs::definition(pack),
            &options(config),
            Helpdesk::open_over_http,
        )
    });
    runs.iter().for_each(PackRun::assert_passed);
}

#[test]
fn committed_cassettes_replay_every_python_desk_pack_through_the_openai_sdk() {
    let python = venv_python(&[OPENAI_SDK]);
    let upstream = recording().then(|| upstream::python_desk().expect("a scripted upstream"));
    side_by_side(PACKS, |pack| {
        let config = ReplayConfig {
            cassette: Some(examples().join(format!("helpdesk-py/cassettes/{}.jsonl", name(pack)))),
            upstream_url: upstream.as_ref().map(|u| u.url().to_owned()),
            ..ReplayConfig::default()
        };
        let definition = with_trials(python::definition(pack), 2);
        let run = run_pack(
            &format!("helpdesk-py-openai::{}", name(pack)),
            &definition,
            &options(config),
            python_factory(&python),
        );
        run.assert_passed();
    });
}

/// Records every pack against `start`ed upstream into `dir`, accepts the
/// pending files, stops the upstream and replays: every pack must pass with
/// nothing to forward to. The packs run on a thread: `dir` is a temporary
/// directory of this test process, which a re-executed child would not
/// share.
fn record_stop_replay<T, F>(
    dir: &Path,
    label: &str,
    definition: impl Fn(Pack) -> PackDefinition + Sync,
    start: impl Fn() -> std::io::Result<symfonic_evals::replay::ScriptedUpstream>,
    factory: F,
) where
    T: symfonic_evals::Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + Clone + 'static,
{
    let cassette = |pack: Pack| dir.join(format!("{}.jsonl", name(pack)));
    let upstream = start().expect("a scripted upstream");
    side_by_side(PACKS, |pack| {
        let config = ReplayConfig::mode(ReplayMode::RecordAll)
            .with_cassette(cassette(pack))
            .with_upstream(upstream.url())
            .allowing_loopback_recording_in_ci();
        let run = run_pack(
            &format!("{label}::record::{}", name(pack)),
            &definition(pack),
            &on_a_thread(config),
            factory.clone(),
        );
        run.assert_passed();
        assert!(!cassette(pack).exists(), "nothing is accepted silently");
        let accepted = accept_pending(&cassette(pack), &[]).expect("pending exchanges");
        assert!(accepted.added > 0, "{} made no model calls", name(pack));
    });
    let forwarded = upstream.received().len();
    drop(upstream);
    let recorded: usize = PACKS
        .iter()
        .map(|p| Cassette::load(&cassette(*p), &[]).unwrap().len())
        .sum();
    assert_eq!(recorded, forwarded, "every forwarded exchange was recorded");
    side_by_side(PACKS, |pack| {
        let config = ReplayConfig::mode(ReplayMode::Replay).with_cassette(cassette(pack));
        let run = run_pack(
            &format!("{label}::replay::{}", name(pack)),
            &definition(pack),
            &on_a_thread(config),
            factory.clone(),
        );
        run.assert_passed();
    });
}

#[test]
fn the_rust_desk_records_then_replays_with_no_upstream_running() {
    let dir = tempfile::tempdir().unwrap();
    record_stop_replay(
        dir.path(),
        "rust",
        packs::definition,
        upstream::rust_desk,
        Helpdesk::open_over_http,
    );
}

#[test]
fn the_python_desk_records_then_replays_with_no_upstream_running() {
    let python = venv_python(&[OPENAI_SDK]);
    let dir = tempfile::tempdir().unwrap();
    let spec = python::model_spec(&python);
    record_stop_replay(
        dir.path(),
        "python",
        python::definition,
        upstream::python_desk,
        move |ctx: &TargetContext| python::start(ctx, &spec),
    );
}
