//! The TypeScript companion (`typescript/`, the npm package
//! `symfonic-evals-protocol`) judged from this side, with the definitions
//! the main job uses (`helpdesk::typescript`): its plain desk passes the
//! protocol conformance check and every pack it is meant for (approval with
//! the gated-action, denial and unfit-answer probes, extension with the MCP
//! fixture, exactly-once); the desks on LangGraph.js and on the OpenAI
//! Agents SDK pass approval (on the gated call), extension (their witnessed
//! tool, and the MCP fixture bound in its place) and exactly-once; each
//! twin fails exactly the scenarios it is pinned to, first where its catch
//! says; each honest variant (a framework desk served streamed) passes
//! every pack of its desk.
//!
//! Where `node` or the package's dependencies are missing, each test says
//! so and passes without running (CI installs them first:
//! `cd typescript && npm ci && npm test`).
#![cfg(unix)]

use helpdesk::typescript::{self, TsDesk, TsTwin, HONEST, TWINS};
use helpdesk::Pack;
use symfonic_evals::process::{conformance, CheckVerdict, ConformanceInputs, ProcessSpec};
use symfonic_evals::{run_pack, PackRun, RunOptions};

/// The entry point's spec, or `None` after saying why it cannot run here.
fn spec(script: &str) -> Option<ProcessSpec> {
    match typescript::spec(script) {
        Ok(spec) => Some(spec),
        Err(why) => {
            println!("skipped: {why}");
            None
        }
    }
}

fn run(name: &str, desk: TsDesk, pack: Pack, spec: ProcessSpec) -> PackRun {
    run_pack(
        name,
        &typescript::definition(desk, pack),
        &RunOptions::default(),
        move |ctx| typescript::start(ctx, &spec),
    )
}

#[test]
fn the_typescript_desk_speaks_the_protocol() {
    let Some(spec) = spec(TsDesk::Plain.script()) else {
        return;
    };
    let report = conformance(
        &spec,
        &ConformanceInputs::default().effect_prompt("refund order 3"),
    );
    println!("{}", report.render());
    report.assert_passed();
    assert!(
        report
            .checks
            .iter()
            .all(|c| c.verdict == CheckVerdict::Passed),
        "every check ran:\n{}",
        report.render()
    );
}

#[test]
fn each_typescript_desk_passes_every_pack_it_is_meant_for() {
    for desk in TsDesk::ALL {
        for &pack in desk.packs() {
            let Some(spec) = spec(desk.script()) else {
                return;
            };
            let definition = typescript::definition(desk, pack);
            let name = format!("{}.{}", desk.name(), definition.kind().name());
            let run = run(&name, desk, pack, spec);
            run.assert_passed();
            if run.served_elsewhere() {
                continue;
            }
            let names: Vec<&str> = run.scenarios().iter().map(|s| s.name.as_str()).collect();
            println!(
                "{name}: {} scenarios passed in {:.1?}",
                names.len(),
                run.duration()
            );
            // Every probe the definition plans either ran or is listed as
            // not run, with its reason (a declaration the desk lacks).
            let not_run: Vec<&str> = run
                .probes_not_run()
                .iter()
                .map(|p| p.probe.as_str())
                .collect();
            let planned: Vec<String> = definition.scenarios().into_iter().map(|s| s.name).collect();
            let accounted: Vec<&str> = planned
                .iter()
                .map(String::as_str)
                .filter(|p| !not_run.contains(p))
                .collect();
            assert_eq!(names, accounted, "{name}: not run {not_run:?}");
            if pack == Pack::ExtensionTool {
                // Every desk binds the harness's MCP fixture in place of its own tool.
                assert!(
                    names.contains(&"extension/mcp-fixture"),
                    "{name}: {names:?}"
                );
            }
        }
    }
}

#[test]
fn each_streamed_variant_passes_every_pack_of_its_desk() {
    for variant in &HONEST {
        for &pack in variant.desk.packs() {
            let Some(spec) = spec(&variant.script()) else {
                return;
            };
            let kind = typescript::definition(variant.desk, pack).kind().name();
            let name = format!("{}.honest.{}.{kind}", variant.desk.name(), variant.name);
            let run = run(&name, variant.desk, pack, spec);
            run.assert_passed();
            if !run.served_elsewhere() {
                println!(
                    "{name}: {} scenarios passed in {:.1?}",
                    run.scenarios().len(),
                    run.duration()
                );
            }
        }
    }
}

#[test]
fn every_honest_file_is_listed() {
    let dir = typescript::package_dir().join("examples/honest");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the honest variants' folder")
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".ts")
                .map(str::to_owned)
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = HONEST.iter().map(|h| h.name.to_owned()).collect();
    listed.sort();
    assert_eq!(files, listed);
}

#[test]
fn the_plain_desk_is_judged_by_the_strong_approval_probes() {
    let definition = typescript::definition(TsDesk::Plain, Pack::ApprovalResume);
    let names: Vec<String> = definition.scenarios().into_iter().map(|s| s.name).collect();
    for probe in [
        "approval/crash-inside-resume",
        "approval/gated-action",
        "approval/deny-answer",
        "approval/unfit-answer",
        "approval/type-confused-answer",
    ] {
        assert!(names.iter().any(|n| n == probe), "{probe}: {names:?}");
    }
}

fn run_twin(twin: &TsTwin) -> Option<PackRun> {
    let spec = spec(&twin.script())?;
    Some(run(
        &format!("{}.twin.{}", twin.desk.name(), twin.name),
        twin.desk,
        twin.pack,
        spec,
    ))
}

#[test]
fn each_typescript_twin_is_caught_where_pinned_and_nowhere_else() {
    for twin in &TWINS {
        let Some(run) = run_twin(twin) else {
            return;
        };
        if run.served_elsewhere() {
            continue;
        }
        let failed: Vec<&str> = run
            .scenarios()
            .iter()
            .filter(|s| !s.passed())
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            failed, twin.fails,
            "{}: caught there and only there",
            twin.name
        );
        let first = twin
            .catch
            .first_in(&run)
            .unwrap_or_else(|| panic!("{}: no failure in {}", twin.name, twin.catch.scenario));
        assert!(
            twin.catch.matches(&first),
            "{}: first caught at {} `{}` by {} ({}), pinned {:?}",
            twin.name,
            first.scenario,
            first.step_label,
            first.assertion,
            first.description,
            twin.catch
        );
    }
}

#[test]
fn every_twin_file_is_listed() {
    let dir = typescript::package_dir().join("examples/twins");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the twins folder")
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".ts")
                .map(str::to_owned)
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = TWINS.iter().map(|t| t.name.to_owned()).collect();
    listed.sort();
    assert_eq!(files, listed);
}
