//! The main job: every pack against the reference desk and against each
//! broken twin. Prints each pack's table, the not-applicable reasons, the
//! twins and where each was caught, the totals and the report path. Exits
//! non-zero if the reference fails a pack or a twin escapes.

use std::process::ExitCode;
use std::time::Instant;

use helpdesk::packs::definition;
use helpdesk::{Flaw, Helpdesk, Pack};
use serde_json::json;
use symfonic_evals::{report_dir, run_pack, RunOptions, Verdict};

const PACKS: [(Pack, &str); 3] = [
    (Pack::Procedural, "procedural-skills"),
    (Pack::ApprovalResume, "approval-resume"),
    (Pack::ExtensionTool, "extension-tools"),
];

fn main() -> ExitCode {
    let started = Instant::now();
    let options = RunOptions::default();
    let (mut reference_passed, mut twins_caught, mut twins_total) = (0, 0, 0);
    let mut summary = Vec::new();
    for (index, (pack, name)) in PACKS.into_iter().enumerate() {
        let twins: Vec<Flaw> = Flaw::ALL.into_iter().filter(|f| f.pack() == pack).collect();
        eprintln!(
            "[{}/{}] {name}: reference and {} twin(s)",
            index + 1,
            PACKS.len(),
            twins.len()
        );
        let run = run_pack(
            &format!("helpdesk::reference::{name}"),
            &definition(pack),
            &options,
            Helpdesk::open,
        );
        println!("{}", run.render());
        if let Verdict::NotApplicable(missing) = run.verdict() {
            for reason in missing {
                println!("  not applicable: {reason}");
            }
        }
        if run.passed() {
            reference_passed += 1;
        }
        let mut twin_rows = Vec::new();
        for flaw in twins {
            twins_total += 1;
            let twin = run_pack(
                &format!("helpdesk::twin::{}", flaw.name()),
                &definition(pack),
                &options,
                move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
            );
            let failure = twin.first_failure();
            let caught = !twin.passed()
                && failure
                    .as_ref()
                    .is_some_and(|f| flaw.expected_catch().matches(f));
            if caught {
                twins_caught += 1;
            }
            let at = failure.as_ref().map_or_else(
                || "not caught: the pack passed".to_owned(),
                |f| format!("step `{}` by {}", f.step_label, f.description),
            );
            println!(
                "  twin {:<36} {} at {at}",
                flaw.name(),
                if caught { "caught" } else { "ESCAPED" }
            );
            twin_rows.push(json!({ "twin": flaw.name(), "caught": caught, "at": at }));
        }
        println!();
        summary.push(json!({
            "pack": name,
            "reference_passed": run.passed(),
            "reference_report": run.report_path().map(|p| p.display().to_string()),
            "twins": twin_rows,
        }));
    }
    println!(
        "{reference_passed} packs passed against the reference; {twins_caught} of {twins_total} twins caught ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    let path = report_dir().join("helpdesk-summary.json");
    let written = std::fs::create_dir_all(report_dir()).and_then(|()| {
        std::fs::write(
            &path,
            serde_json::to_vec_pretty(&json!({ "packs": summary })).unwrap_or_default(),
        )
    });
    match written {
        Ok(()) => println!("report: {}", path.display()),
        Err(error) => eprintln!("report not written: {error}"),
    }
    if reference_passed == PACKS.len() && twins_caught == twins_total {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
