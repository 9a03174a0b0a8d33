//! A deployment that hangs costs a pack run one step limit, not one per
//! scenario: once a step runs out of time, the scenarios not yet started are
//! reported as not run because the deployment hung.

use crate::common;

use std::time::{Duration, Instant};

use symfonic_evals::{
    run_pack, CapabilityEvidence, Isolation, NotRunReason, PromptRequest, RunOptions, Target,
    TurnError, TurnRecord, Verdict,
};

/// Declares the extension pack's tool, then never answers a turn.
struct Hangs;

impl Target for Hangs {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new().contributes("extensions", common::extension::TOOL)
    }

    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        std::thread::sleep(Duration::from_secs(60));
        Ok(TurnRecord::builder().build())
    }
}

#[test]
fn a_hung_deployment_is_waited_for_once_per_pack_run() {
    let limit = Duration::from_millis(700);
    for isolation in [Isolation::Thread, Isolation::Process] {
        let mut pack = common::extension_pack();
        pack.policy.step_timeout = limit;
        let definition = common::extension(pack);
        let options = RunOptions {
            isolation,
            ..RunOptions::default()
        };
        let started = Instant::now();
        let run = run_pack(
            &format!("hanging.{}", isolation.as_str()),
            &definition,
            &options,
            |_| Hangs,
        );
        let took = started.elapsed();
        assert_eq!(run.verdict(), &Verdict::Failed);
        common::assert_fails_at(&run, "extension call", "StepTimeout");
        // The seed ran and hung; the two probes were never started.
        let seed = run.kind().seed_scenario();
        let ran: Vec<&str> = run.scenarios().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(ran, [seed], "{isolation:?}:\n{}", run.render());
        let hung: Vec<&str> = run
            .probes_not_run()
            .iter()
            .filter(|probe| {
                probe.reason
                    == NotRunReason::DeploymentHung {
                        scenario: seed.to_owned(),
                    }
            })
            .map(|probe| probe.probe.as_str())
            .collect();
        assert_eq!(hung.len(), 2, "{isolation:?}:\n{}", run.render());
        let rendered = run.render();
        assert!(
            rendered.contains(&format!("not started: the deployment hung in {seed}")),
            "{rendered}"
        );
        let report = std::fs::read_to_string(run.report_path().expect("a report")).unwrap();
        assert!(report.contains("\"deployment_hung\""), "{report}");
        eprintln!("{isolation:?}: a hung pack run took {took:?} at a {limit:?} step limit");
        assert!(
            took < limit * 2 + Duration::from_secs(1),
            "{isolation:?}: one step limit, not one per scenario: {took:?}"
        );
    }
}
