//! Nothing of the harness's own settings reaches a deployment's process:
//! a child, spawned or forked, sees only the variables the harness sets for
//! it (the durable directory, under a name that says nothing of testing),
//! never the ones the harness itself was run with (trials, the upstream's
//! key), which would tell it it is under test.
//!
//! One test in this binary: it sets variables of its own process, which no
//! other test may see half-way.
#![cfg(unix)]

use std::path::PathBuf;
use std::time::Duration;

use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{ProcessTarget, PromptRequest, Target, TargetContext};

#[test]
fn a_child_sees_none_of_the_harness_variables_it_was_not_given() {
    // SAFETY: the only test of this binary, before it starts any thread.
    unsafe {
        std::env::set_var("SYMFONIC_EVALS_TRIALS", "3");
        std::env::set_var("SYMFONIC_EVALS_UPSTREAM_KEY", "sk-never-for-the-deployment");
        std::env::set_var("symfonic_evals_lower_case", "1");
    }
    let children = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children");
    for (script, forked) in [("misbehave.py", false), ("misbehave_forkable.py", true)] {
        let spec = ProcessSpec::new("python3")
            .arg(children.join(script))
            .handshake_timeout(Duration::from_secs(20))
            .fork_server(forked);
        let context = TargetContext::fresh(0).unwrap();
        let mut target = ProcessTarget::spawn(&context, &spec).expect("the handshake succeeds");
        let record = target
            .run_turn(&PromptRequest::new("environment", "harness_env"))
            .expect("a turn");
        assert_eq!(
            record.attributes()["names"],
            serde_json::json!([]),
            "forked: {forked}"
        );
    }
}
