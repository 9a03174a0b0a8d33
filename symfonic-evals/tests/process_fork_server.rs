//! The fork server: every robustness case holds for forked children as for
//! spawned ones, each start is a new process with nothing of the last, and
//! a script that cannot be forked safely is started fresh instead.
#![cfg(unix)]

/// Every child here is forked by the fork server.
const FORK_SERVER: bool = true;

include!("process_support/robustness_cases.rs");

fn probe(env: &[(&str, &str)]) -> ProcessSpec {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children/fork_probe.py");
    env.iter().fold(
        ProcessSpec::new("python3")
            .arg(script)
            .arg("--desk-flag")
            .handshake_timeout(Duration::from_secs(20))
            .fork_server(true),
        |spec, (key, value)| spec.env(*key, *value),
    )
}

/// One turn's attributes from a fresh target in a fresh context.
fn report(spec: &ProcessSpec) -> (serde_json::Value, TargetContext) {
    let context = TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&context, spec).expect("the handshake succeeds");
    let record = target.run_turn(&prompt("who are you")).expect("a turn");
    let pid = target.pid().expect("running");
    drop(target);
    assert!(reaped(pid), "child {pid} is left behind");
    (serde_json::json!(record.attributes()), context)
}

#[test]
fn each_start_is_a_new_forked_process_with_nothing_of_the_last() {
    let spec = probe(&[("FORK_PROBE_MARKER", "forked")]);
    let (first, first_context) = report(&spec);
    let (second, second_context) = report(&spec);
    let ours = serde_json::json!(std::process::id());
    for (attributes, context) in [(&first, &first_context), (&second, &second_context)] {
        // Forked by the zygote, not started by this process.
        assert_ne!(attributes["ppid"], ours, "{attributes}");
        // Its own process group, the child's own id.
        assert_eq!(attributes["pgid"], attributes["pid"], "{attributes}");
        // One deployment built in it: nothing of the earlier child.
        assert_eq!(attributes["built"], 1, "{attributes}");
        assert_eq!(attributes["marker"], "forked", "{attributes}");
        let dir = context.durable_dir().to_str().unwrap();
        assert_eq!(
            attributes["argv"],
            serde_json::json!(["--desk-flag", "--durable-dir", dir]),
            "{attributes}"
        );
    }
    assert_ne!(first["pid"], second["pid"]);
    // The same zygote forked both.
    assert_eq!(first["ppid"], second["ppid"]);
}

#[test]
fn a_script_that_starts_a_thread_at_import_is_started_fresh() {
    let spec = probe(&[("FORK_PROBE_THREAD", "1")]);
    let (attributes, _) = report(&spec);
    assert_eq!(
        attributes["ppid"],
        serde_json::json!(std::process::id()),
        "started by this process: {attributes}"
    );
    assert_eq!(attributes["built"], 1, "{attributes}");
}

#[test]
fn a_child_finds_in_memory_what_an_earlier_child_imported_while_building() {
    let spec = probe(&[("FORK_PROBE_MARKER", "learning")]);
    let (first, _) = report(&spec);
    let (second, _) = report(&spec);
    assert_eq!(first["lazy_preloaded"], false, "{first}");
    assert_eq!(second["lazy_preloaded"], true, "{second}");
    // Still a fresh child of the same zygote, with one deployment built.
    assert_eq!(second["built"], 1, "{second}");
    assert_eq!(first["ppid"], second["ppid"]);
}

#[test]
fn a_learned_import_that_starts_a_thread_stops_the_forking() {
    let modules = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/process_modules");
    let spec = probe(&[("FORK_PROBE_LAZY_THREAD", "1"), ("PYTHONPATH", modules)]);
    let ours = serde_json::json!(std::process::id());
    let (first, _) = report(&spec);
    assert_ne!(first["ppid"], ours, "forked: {first}");
    // The zygote imported the module the first child did, a thread
    // started, and it refuses to fork: the harness starts the deployment
    // itself, from now on.
    for _ in 0..2 {
        let (next, _) = report(&spec);
        assert_eq!(next["ppid"], ours, "started by this process: {next}");
        assert_eq!(next["built"], 1, "{next}");
    }
}

/// A script written to `dir` that reports the globals it runs with and a
/// version, as a deployment of the Python companion.
fn globals_probe(dir: &std::path::Path, version: &str, fork_server: bool) -> ProcessSpec {
    let script = dir.join("globals_probe.py");
    std::fs::write(
        &script,
        format!(
            "import os, sys\n\
             from symfonic_evals_protocol import Deployment, TurnRecord, serve\n\
             GLOBALS = {{'name': __name__, 'file': __file__, 'package': __package__,\n    \
             'spec': repr(__spec__), 'loader': type(__loader__).__name__,\n    \
             'cached': __cached__, 'builtins': type(__builtins__).__name__}}\n\
             class Probe(Deployment):\n    \
             def run_turn(self, request, turn):\n        \
             return TurnRecord(answer='ok', attributes={{'globals': GLOBALS, 'version': '{version}', 'ppid': os.getppid()}})\n\
             if __name__ == '__main__':\n    \
             sys.exit(serve(Probe))\n"
        ),
    )
    .unwrap();
    let companion = concat!(env!("CARGO_MANIFEST_DIR"), "/../python");
    ProcessSpec::new("python3")
        .arg(script)
        .env("PYTHONPATH", companion)
        .handshake_timeout(Duration::from_secs(20))
        .fork_server(fork_server)
}

#[test]
fn a_forked_child_runs_the_script_with_the_globals_a_fresh_interpreter_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    let (fresh, _) = report(&globals_probe(dir.path(), "one", false));
    let (forked, _) = report(&globals_probe(dir.path(), "one", true));
    // One started by this process, the other forked by the fork server.
    assert_eq!(fresh["ppid"], serde_json::json!(std::process::id()));
    assert_ne!(forked["ppid"], fresh["ppid"]);
    assert_eq!(forked["globals"], fresh["globals"]);
    assert_eq!(forked["globals"]["name"], "__main__", "{forked}");
    assert_eq!(forked["globals"]["loader"], "SourceFileLoader", "{forked}");
}

#[test]
fn a_script_edited_between_starts_runs_as_edited() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = report(&globals_probe(dir.path(), "one", true));
    assert_eq!(first["version"], "one", "{first}");
    // The fork server compiled the script once; the edit must reach the
    // next child all the same.
    let (second, _) = report(&globals_probe(dir.path(), "two, edited", true));
    assert_eq!(second["version"], "two, edited", "{second}");
    assert_eq!(first["ppid"], second["ppid"], "one fork server forked both");
}
