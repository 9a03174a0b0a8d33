//! The failure tables as an adopter reads them, pinned: the first line that
//! says where the run first failed, only the failing scenario step by step,
//! structural diffs (the JSON shape, differing paths, leaves digested
//! unless public), and the closing line on how to see values; and a passing
//! table, which still names the probes that did not run. Any change to
//! the wording shows up here for review (`cargo insta review`).

use crate::common;

use common::extension::{ExtensionFlaw, WeatherDesk};
use symfonic_evals::{run_pack, Isolation, RunOptions};

fn thread() -> RunOptions {
    RunOptions {
        isolation: Isolation::Thread,
        ..RunOptions::default()
    }
}

/// The report's path is the machine's; everything else is the harness's.
fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"report: \S+", "report: [path]");
    settings.add_filter(r"viewer: \S+\.html", "viewer: [path].html");
    settings
}

/// The rendered run of the weather pack against the desk with `flaw`.
fn rendered(name: &str, flaw: Option<ExtensionFlaw>) -> String {
    common::private_report_dir("reports");
    let run = run_pack(
        name,
        &common::extension(common::extension_pack()),
        &thread(),
        move |_| WeatherDesk::with(flaw),
    );
    run.render()
}

#[test]
fn a_failing_table_with_a_structural_diff() {
    let table = rendered(
        "render.wrong_arguments",
        Some(ExtensionFlaw::WrongArguments),
    );
    settings().bind(|| insta::assert_snapshot!(table));
}

#[test]
fn a_failing_table_where_a_call_failed() {
    let table = rendered(
        "render.called_but_failed",
        Some(ExtensionFlaw::CalledButFailed),
    );
    settings().bind(|| insta::assert_snapshot!(table));
}

#[test]
fn a_passing_table_names_the_probes_that_did_not_run() {
    let table = rendered("render.passing", None);
    settings().bind(|| insta::assert_snapshot!(table));
}
