//! A deployment cannot tell it is tested: a child that searches its whole
//! environment, its arguments and its durable directory for the harness's
//! name or the word "harness" finds only what its adopter put there.
//!
//! The child runs in the test's own environment, which under cargo names
//! this project (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`...); those are the
//! adopter's variables, which a deployment inherits as it would anywhere.
//! So a hit passes only when the variable is the adopter's, unchanged: a
//! variable the harness added or altered, or a harness setting it failed to
//! strip, fails.
//!
//! One test in this binary: it sets variables of its own process, which no
//! other test may see half-way.
#![cfg(unix)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use symfonic_evals::mcp::MCP_URL_ENV;
use symfonic_evals::process::{ProcessSpec, DURABLE_DIR_ENV};
use symfonic_evals::replay::MODEL_URL_ENV;
use symfonic_evals::{ProcessTarget, PromptRequest, Target, TargetContext};

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| item.as_str().expect("a string").to_owned())
        .collect()
}

/// The interpreter itself, not a shim in front of it: a shim is a shell
/// script that sets variables of its own (`PWD`, its tool's directory)
/// from the working directory, which would muddle what the harness gave.
fn interpreter() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn a_deployment_that_searches_for_the_harness_finds_only_its_adopter() {
    // SAFETY: the only test of this binary, before it starts any thread.
    unsafe {
        std::env::set_var("SYMFONIC_EVALS_TRIALS", "3");
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children/blind.py");
    let cwd = std::env::current_dir().unwrap();
    let python = interpreter();
    for forked in [false, true] {
        let spec = ProcessSpec::new(&python)
            .arg(&script)
            .handshake_timeout(Duration::from_secs(20))
            .fork_server(forked);
        let context = TargetContext::fresh(0)
            .unwrap()
            .with_model_url("http://127.0.0.1:9")
            .with_mcp_url("http://127.0.0.1:10/mcp");
        let mut target = ProcessTarget::spawn(&context, &spec).expect("the handshake succeeds");
        let record = target
            .run_turn(&PromptRequest::new("blind", "look around"))
            .expect("a turn");
        let found = record.attributes();

        let started = found["environ"].as_array().expect("a list");
        for hit in found["env"]
            .as_array()
            .expect("a list")
            .iter()
            .chain(started)
        {
            let (name, value) = (hit[0].as_str().unwrap(), hit[1].as_str().unwrap());
            let adopters = !name.to_ascii_uppercase().starts_with("SYMFONIC_EVALS")
                && std::env::var(name).as_deref() == Ok(value);
            assert!(
                adopters,
                "forked: {forked}: the harness gave the child {name}={value}"
            );
        }
        // The script's own path is the adopter's argument; whatever the
        // harness appended (the durable directory) must be neutral.
        let script = script.to_str().unwrap();
        let argv = strings(&found["argv"]);
        assert!(
            argv.iter().all(|arg| arg == script),
            "forked: {forked}: {argv:?}"
        );
        if !forked {
            // As the kernel recorded it: the interpreter, then the same
            // arguments. A forked child's record is its fork server's
            // command line, which is the harness's own (not checked here).
            let cmdline = strings(&found["cmdline"]);
            assert!(cmdline.iter().all(|arg| arg == script), "{cmdline:?}");
        }
        assert_eq!(found["durable"], serde_json::json!([]), "forked: {forked}");
        // The child runs where the adopter runs it (here, the repository,
        // whose path may name the project): the harness leaves the working
        // directory alone, since a deployment's relative paths are the
        // adopter's, so it is compared, not searched.
        assert_eq!(found["cwd"], cwd.to_str().unwrap(), "forked: {forked}");
        // The search ran where the protocol's variables are: the child was
        // given them, under their neutral names.
        let names = strings(&found["names"]);
        for given in [
            DURABLE_DIR_ENV,
            MODEL_URL_ENV,
            MCP_URL_ENV,
            "OPENAI_API_KEY",
        ] {
            assert!(
                names.iter().any(|name| name == given),
                "forked: {forked}: {given}"
            );
        }
    }
}
