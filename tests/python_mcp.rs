//! The Python desk binding the harness's MCP fixture with the official
//! `mcp` package (installed into a virtualenv under the target directory):
//! the forecast service's tool runs on the fixture, the extension pack
//! judges every call by what it received, and the desk's MCP twins are
//! caught by the fixture's probe.
#![cfg(unix)]

use helpdesk::python;
use helpdesk::Pack;
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{run_pack, PackRun, Verdict};
use symfonic_evals_e2e::venv_python;

/// The MCP SDK, pinned so a new release cannot change what the desk sends.
const MCP_SDK: &str = "mcp==2.3.0";

fn run(twin: Option<&str>) -> PackRun {
    let python = venv_python(&[MCP_SDK]);
    let mut spec = ProcessSpec::new(python.as_os_str())
        .arg(python::desk_dir().join("helpdesk.py"))
        // The SDK is imported once, by the fork server, not at every start.
        .preload("mcp")
        .fork_server(true);
    if let Some(twin) = twin {
        spec = spec.args(["--twin", twin]);
    }
    run_pack(
        &format!("python.mcp.{}", twin.unwrap_or("reference")),
        &python::definition(Pack::ExtensionTool),
        &python::run_options(),
        move |ctx| python::start(ctx, &spec),
    )
}

#[test]
fn the_python_desk_passes_the_extension_pack_through_the_fixture() {
    let run = run(None);
    run.assert_passed();
    assert!(
        run.scenarios()
            .iter()
            .any(|s| s.name == "extension/mcp-fixture"),
        "the fixture's probe ran: {}",
        run.render()
    );
    assert!(run.probes_not_run().is_empty(), "{}", run.render());
}

fn caught(twin: &str, step: &str, assertion: &str) {
    let run = run(Some(twin));
    assert!(matches!(run.verdict(), Verdict::Failed), "{}", run.render());
    let first = run.first_failure().expect("a failure");
    assert_eq!(
        (
            first.scenario.as_str(),
            first.step_label.as_str(),
            first.assertion.as_str()
        ),
        ("extension/mcp-fixture", step, assertion),
        "{}",
        run.render()
    );
    assert_eq!(run.failed_scenarios(), ["extension/mcp-fixture"]);
}

#[test]
fn a_built_in_tool_declared_as_the_extensions_is_caught() {
    caught(
        "built-in-declared-as-extension",
        "through the fixture",
        "ServedByFixture",
    );
}

#[test]
fn a_server_bound_on_the_first_start_only_is_caught() {
    caught(
        "server-bound-on-first-start-only",
        "after a restart",
        "ServedByFixture",
    );
}

#[test]
fn an_upstream_error_served_as_a_success_is_caught_by_the_injected_error() {
    caught(
        "upstream-error-as-success",
        "upstream error",
        "FixtureErrorReported",
    );
}
