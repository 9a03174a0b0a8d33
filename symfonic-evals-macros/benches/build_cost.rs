//! What the pack attributes cost at build time.
//!
//! Generates two throwaway crates with the same 100 packs (a third of each
//! kind): one written with the attributes, one by hand with `run_pack`. Both
//! depend on this workspace's runtime by path and share one target
//! directory, so dependencies build once. Then it times `cargo build --tests`
//! for each, clean (the crate's own artifacts removed) and incremental (one
//! pack module touched), and prints the medians and their ratio.
//!
//! Run with `cargo bench -p symfonic-evals-macros --bench build_cost`;
//! `BUILD_COST_RUNS` sets the runs per measurement (default 5) and
//! `BUILD_COST_KEEP` keeps the generated crates for inspection. Under
//! `cargo test` (no `--bench` flag) it does nothing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const MODULES: usize = 10;
const PER_MODULE: usize = 10;

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let runs: usize = std::env::var("BUILD_COST_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let root = std::env::temp_dir().join(format!("symfonic-build-cost-{}", std::process::id()));
    let target = root.join("target");
    let crates = [
        (
            "attribute",
            write_crate(&root, workspace, "attr_packs", Form::Attribute),
        ),
        (
            "hand-written",
            write_crate(&root, workspace, "hand_packs", Form::Hand),
        ),
    ];
    println!("warming dependencies in {}", target.display());
    for (_, dir) in &crates {
        build(dir, &target);
    }
    let mut clean = [Vec::new(), Vec::new()];
    let mut incremental = [Vec::new(), Vec::new()];
    for run in 0..runs {
        // Alternate the order so neither form always builds on a warmer machine.
        let order: [usize; 2] = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (_, dir) = &crates[i];
            let package = dir
                .file_name()
                .and_then(|n| n.to_str())
                .expect("utf-8 name");
            cargo(dir, &target, &["clean", "-p", package]);
            clean[i].push(build(dir, &target));
            let touched = dir.join("tests/packs/m3.rs");
            let text = std::fs::read_to_string(&touched).expect("module");
            std::fs::write(&touched, text).expect("touch");
            incremental[i].push(build(dir, &target));
        }
        println!("run {}/{runs} done", run + 1);
    }
    let mut table = String::new();
    let _ = writeln!(
        table,
        "\n{:<24} {:>12} {:>12} {:>8}",
        "median of runs", "attribute", "hand-written", "ratio"
    );
    for (label, times) in [
        ("clean build --tests", &mut clean),
        ("incremental (touch 1)", &mut incremental),
    ] {
        let a = median(&mut times[0]);
        let h = median(&mut times[1]);
        let ratio = a.as_secs_f64() / h.as_secs_f64();
        let _ = writeln!(
            table,
            "{label:<24} {:>11.2}s {:>11.2}s {ratio:>8.3}",
            a.as_secs_f64(),
            h.as_secs_f64()
        );
    }
    println!(
        "{table}{} packs per crate, {runs} runs each",
        MODULES * PER_MODULE
    );
    if std::env::var_os("BUILD_COST_KEEP").is_some() {
        println!("kept the generated crates in {}", root.display());
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn cargo(dir: &Path, target: &Path, args: &[&str]) {
    let status = Command::new(env!("CARGO"))
        .args(args)
        .args(["--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", target)
        .current_dir(dir)
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "cargo {args:?} failed in {}",
        dir.display()
    );
}

fn build(dir: &Path, target: &Path) -> Duration {
    let start = Instant::now();
    cargo(dir, target, &["build", "--tests"]);
    start.elapsed()
}

#[derive(Clone, Copy, PartialEq)]
enum Form {
    Attribute,
    Hand,
}

fn write_crate(root: &Path, workspace: &Path, name: &str, form: Form) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("tests/packs")).expect("crate dirs");
    let runtime = workspace.join("symfonic-evals");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\nsymfonic-evals = {{ path = {runtime:?} }}\nserde_json = \"1\"\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
    // The workspace's lock pins the same versions and lets the build run offline.
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).expect("lockfile");
    let mut root_file = String::from(DEPLOYMENT);
    for m in 0..MODULES {
        let _ = writeln!(root_file, "#[path = \"packs/m{m}.rs\"]\nmod m{m};");
        let mut module = String::from("use super::Deployment;\n");
        if form == Form::Attribute {
            module.push_str("use symfonic_evals::TargetContext;\n");
        }
        for p in 0..PER_MODULE {
            module.push_str(&pack(form, m, p));
        }
        std::fs::write(dir.join(format!("tests/packs/m{m}.rs")), module).expect("module");
    }
    std::fs::write(dir.join("tests/packs.rs"), root_file).expect("test root");
    dir
}

const DEPLOYMENT: &str = "#![allow(dead_code)]\n\
use symfonic_evals::{CapabilityEvidence, PromptRequest, Target, TargetContext, TurnError, TurnRecord};\n\
pub struct Deployment;\n\
impl Deployment {\n    pub fn open(_: &TargetContext) -> Self { Deployment }\n}\n\
impl Target for Deployment {\n\
    fn capabilities(&self) -> CapabilityEvidence { CapabilityEvidence::new() }\n\
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> { Ok(TurnRecord::builder().build()) }\n\
}\n";

/// One pack, the same definition in either form.
fn pack(form: Form, m: usize, p: usize) -> String {
    let n = m * PER_MODULE + p;
    let name = format!("pack_{m}_{p}");
    match (n % 3, form) {
        (0, Form::Attribute) => format!(
            "#[symfonic_evals::procedural_pack(\n    demonstrations = [\"refund order {n}a\", \"refund order {n}b\"],\n    \
             draft_prompt = \"refund {n}c\", draft_state = {{ \"region\": \"US\" }},\n    \
             review_prompt = \"approve: governs issue_refund when region eq US\",\n    \
             satisfied_prompt = \"refund {n}d\", satisfied_state = {{ \"region\": \"US\", \"tier\": {n} }},\n    \
             blocked_prompt = \"refund {n}e\", blocked_state = {{ \"region\": \"EU\", \"tier\": {n} }},\n    \
             action_tool = \"issue_refund\", procedure_fragment = \"verify the account region\",\n)]\n\
             fn {name}(ctx: &TargetContext) -> Deployment {{\n    Deployment::open(ctx)\n}}\n\n"
        ),
        (0, Form::Hand) => format!(
            "#[test]\nfn {name}() {{\n    use symfonic_evals::{{run_pack, PackDefinition, ProceduralPack, RunOptions}};\n    \
             let definition = PackDefinition::Procedural(ProceduralPack {{\n        \
             demonstrations: vec![\"refund order {n}a\".into(), \"refund order {n}b\".into()],\n        \
             draft_prompt: \"refund {n}c\".into(), draft_state: serde_json::json!({{ \"region\": \"US\" }}),\n        \
             review_prompt: \"approve: governs issue_refund when region eq US\".into(),\n        \
             satisfied_prompt: \"refund {n}d\".into(), satisfied_state: serde_json::json!({{ \"region\": \"US\", \"tier\": {n} }}),\n        \
             blocked_prompt: \"refund {n}e\".into(), blocked_state: serde_json::json!({{ \"region\": \"EU\", \"tier\": {n} }}),\n        \
             action_tool: \"issue_refund\".into(), procedure_fragment: \"verify the account region\".into(),\n        \
             ..ProceduralPack::default()\n    }});\n    \
             run_pack(concat!(module_path!(), \"::{name}\"), &definition, &RunOptions::default(), Deployment::open).assert_passed();\n}}\n\n"
        ),
        (1, Form::Attribute) => format!(
            "#[symfonic_evals::approval_resume_pack(\n    pause_prompt = \"refund order {n}\",\n    \
             answer = {{ \"approved\": true, \"order\": {n} }},\n    interaction_tool = \"approve_refund\",\n)]\n\
             fn {name}(ctx: &TargetContext) -> Deployment {{\n    Deployment::open(ctx)\n}}\n\n"
        ),
        (1, Form::Hand) => format!(
            "#[test]\nfn {name}() {{\n    use symfonic_evals::{{run_pack, ApprovalResumePack, PackDefinition, RunOptions}};\n    \
             let definition = PackDefinition::ApprovalResume(ApprovalResumePack {{\n        \
             pause_prompt: \"refund order {n}\".into(),\n        \
             answer: serde_json::json!({{ \"approved\": true, \"order\": {n} }}),\n        \
             interaction_tool: \"approve_refund\".into(),\n        ..ApprovalResumePack::default()\n    }});\n    \
             run_pack(concat!(module_path!(), \"::{name}\"), &definition, &RunOptions::default(), Deployment::open).assert_passed();\n}}\n\n"
        ),
        (_, Form::Attribute) => format!(
            "#[symfonic_evals::extension_tool_pack(\n    prompt = \"weather in city {n}?\",\n    tool_name = \"weather_lookup\",\n    \
             arguments = {{ \"city\": \"c{n}\" }},\n    expected_fragments = [\"c{n}\"],\n)]\n\
             fn {name}(ctx: &TargetContext) -> Deployment {{\n    Deployment::open(ctx)\n}}\n\n"
        ),
        (_, Form::Hand) => format!(
            "#[test]\nfn {name}() {{\n    use symfonic_evals::{{run_pack, ExtensionToolPack, PackDefinition, RunOptions}};\n    \
             let definition = PackDefinition::ExtensionTool(ExtensionToolPack {{\n        \
             prompt: \"weather in city {n}?\".into(),\n        tool_name: \"weather_lookup\".into(),\n        \
             arguments: Some(serde_json::json!({{ \"city\": \"c{n}\" }})),\n        \
             expected_fragments: vec![\"c{n}\".into()],\n        ..ExtensionToolPack::default()\n    }});\n    \
             run_pack(concat!(module_path!(), \"::{name}\"), &definition, &RunOptions::default(), Deployment::open).assert_passed();\n}}\n\n"
        ),
    }
}
