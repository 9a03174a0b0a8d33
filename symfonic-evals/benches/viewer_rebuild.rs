//! How long the evidence viewer takes to rebuild with 500 reports: the
//! index a pack run refreshes (from `index.jsonl`), and a whole rebuild
//! (`symfonic-evals view`: every report read, every page written).
//!
//! ```text
//! cargo bench -p symfonic-evals --bench viewer_rebuild
//! ```
//!
//! The reports are copies of one real run (the extension pack against a
//! desk that passes some scenarios and fails others, so pages carry
//! failures), renamed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use symfonic_evals::{
    build_viewer, refresh_index, run_pack, CapabilityEvidence, ExtensionToolPack, Isolation,
    PackDefinition, PromptRequest, RunOptions, Target, ToolCall, TrialPolicy, TurnError,
    TurnRecord, INDEX_FILE, REPORT_DIR_ENV,
};

const REPORTS: usize = 500;

/// A desk that calls the tool with the wrong city on every third turn.
struct Desk;

static TURNS: AtomicUsize = AtomicUsize::new(0);

impl Target for Desk {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("tools")
            .contributes("extensions", "weather_lookup")
    }

    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let turn = TURNS.fetch_add(1, Ordering::Relaxed);
        let city = if turn % 3 == 2 { "Bergen" } else { "Oslo" };
        Ok(TurnRecord::builder()
            .answer("12 degrees in Oslo")
            .tool_call(ToolCall::succeeded(
                "c1",
                "weather_lookup",
                serde_json::json!({ "city": city }),
                serde_json::json!({ "celsius": 12 }),
            ))
            .build())
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("a directory");
    // SAFETY: single-threaded: no run has started yet.
    unsafe { std::env::set_var(REPORT_DIR_ENV, dir.path()) };
    let pack = ExtensionToolPack {
        prompt: "weather in Oslo?".into(),
        tool_name: "weather_lookup".into(),
        arguments: Some(serde_json::json!({ "city": "Oslo" })),
        expected_fragments: vec!["Oslo".into()],
        policy: TrialPolicy {
            trials: 4,
            required: 3,
            concurrency: 1,
            ..TrialPolicy::default()
        },
        ..ExtensionToolPack::default()
    };
    let definition = PackDefinition::ExtensionTool(pack);
    let thread = RunOptions {
        isolation: Isolation::Thread,
        ..RunOptions::default()
    };
    let run = run_pack("viewer_rebuild.sample", &definition, &thread, |_| Desk);
    let report = run.report_path().expect("a report").to_owned();
    let json = std::fs::read(&report).expect("the report");
    let line = std::fs::read_to_string(dir.path().join(INDEX_FILE)).expect("the index");
    let page = run.viewer_path().expect("a page").to_owned();
    let html = std::fs::read(&page).expect("the page");
    let mut index = String::new();
    for i in 0..REPORTS {
        let name = format!("sample-{i:03}");
        std::fs::write(dir.path().join(format!("{name}.json")), &json).unwrap();
        std::fs::write(dir.path().join(format!("{name}.html")), &html).unwrap();
        let report_name = report.file_name().unwrap().to_string_lossy().into_owned();
        index.push_str(
            &line
                .trim_end()
                .replace(&report_name, &format!("{name}.json")),
        );
        index.push('\n');
    }
    std::fs::write(dir.path().join(INDEX_FILE), index).unwrap();

    let mut index_times = Vec::new();
    for _ in 0..20 {
        let began = Instant::now();
        refresh_index(dir.path()).expect("the index");
        index_times.push(began.elapsed());
    }
    index_times.sort();
    let index_size = std::fs::metadata(dir.path().join("index.html"))
        .unwrap()
        .len();
    println!(
        "index.html from index.jsonl, {REPORTS} runs: median {:?}, max {:?} ({} KiB)",
        index_times[index_times.len() / 2],
        index_times[index_times.len() - 1],
        index_size / 1024
    );

    let out = dir.path().join("rebuilt");
    let mut full_times = Vec::new();
    for _ in 0..5 {
        let began = Instant::now();
        build_viewer(&[dir.path().to_owned()], &out).expect("the viewer");
        full_times.push(began.elapsed());
    }
    full_times.sort();
    let total: u64 = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!(
        "whole viewer from {REPORTS} reports (read, render, write): median {:?}, max {:?} \
         ({} KiB in all, one page {} KiB, one report {} KiB)",
        full_times[full_times.len() / 2],
        full_times[full_times.len() - 1],
        total / 1024,
        html.len() / 1024,
        json.len() / 1024
    );
}
