//! The help desk on LangGraph, the OpenAI Agents SDK, Pydantic AI and the
//! Google ADK, each an adopter's graph or agent served by the companion's
//! adapter, judged by the approval, extension and exactly-once packs with
//! every probe; and the LangGraph refund desk that learns and gates
//! procedures, judged by the procedural pack with every probe. The frameworks talk to the harness's model endpoint as they
//! would to OpenAI; it replays the cassettes committed under each example,
//! with no upstream running. Then every twin, each caught where it must
//! be, and every honest variant, passing.
//!
//! The frameworks are installed into a virtual environment: the one
//! `SYMFONIC_EVALS_FRAMEWORK_VENV` names (CI makes it before the tests),
//! or else one made under the target directory from `./python` with its
//! `langgraph`, `openai-agents`, `pydantic-ai` and `google-adk` extras.
//!
//! To re-record the cassettes (one command), then review and accept:
//!
//! ```sh
//! SYMFONIC_EVALS_RECORD=all cargo test -p symfonic-evals-e2e --test e2e framework_desks::committed framework_desks::every_honest framework_desks::every_framework_twin
//! cargo run -p symfonic-evals --bin symfonic-evals-cassette -- accept examples/langgraph-desk/cassettes examples/openai-agents-desk/cassettes examples/pydantic-ai-desk/cassettes examples/google-adk-desk/cassettes
//! ```
#![cfg(unix)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use helpdesk::frameworks::{self, Framework, FrameworkTwin, HONEST, TWINS};
use helpdesk::{python, upstream};
use symfonic_evals::replay::{ReplayConfig, ReplayMode, RECORD_ENV};
use symfonic_evals::{run_pack, NotRunReason, PackKind, PackRun, RunOptions};
use symfonic_evals_e2e::{side_by_side, venv_python};

/// Names the virtual environment that has both frameworks installed.
const VENV_ENV: &str = "SYMFONIC_EVALS_FRAMEWORK_VENV";

fn framework_python() -> PathBuf {
    match std::env::var_os(VENV_ENV) {
        Some(venv) => PathBuf::from(venv).join("bin").join("python"),
        // Pinned as CI installs them (`python/constraints.txt`).
        None => venv_python(&[
            "-c",
            "./python/constraints.txt",
            "./python[langgraph,openai-agents,pydantic-ai,google-adk]",
        ]),
    }
}

/// Whether this run re-records the committed cassettes.
fn recording() -> bool {
    std::env::var(RECORD_ENV).is_ok_and(|v| !v.is_empty())
}

fn options(framework: Framework, pack: helpdesk::Pack, upstream: Option<&str>) -> RunOptions {
    replaying(framework.cassette(pack), upstream)
}

/// Options that replay `cassette`, or record it from `upstream` when one
/// is given.
fn replaying(cassette: PathBuf, upstream: Option<&str>) -> RunOptions {
    RunOptions {
        replay: ReplayConfig {
            cassette: Some(cassette),
            upstream_url: upstream.map(str::to_owned),
            ..ReplayConfig::default()
        },
        ..RunOptions::default()
    }
}

fn run(framework: Framework, pack: helpdesk::Pack, upstream: Option<&str>) -> PackRun {
    let spec = framework.spec(framework_python(), None);
    let kind = frameworks::definition(pack).kind().name();
    run_pack(
        &format!("{}::desk::{kind}", framework.name()),
        &frameworks::definition(pack),
        &options(framework, pack, upstream),
        move |ctx| python::start(ctx, &spec),
    )
}

/// The probes the LangGraph procedural desk's definition leaves out, each
/// with its reason, in the pack's order: the paraphrases (the definition
/// gives none), the replicas (the desk does not declare them) and the
/// restart placement the seed does not take. Every other probe runs there,
/// the review door's and the rejections' included.
const LANGGRAPH_PROCEDURAL_NOT_RUN: &[(&str, &str)] = &[
    (
        "procedural/enforcement-after-restart",
        "restart_before_enforcement = true: the seed already enforces after a restart",
    ),
    ("procedural/paraphrases", "needs `paraphrases`"),
    ("procedural/replicas", "does not declare `replicas`"),
];

/// Why a probe did not run, in a few words: the argument or declaration it
/// needs, or the pack's own reason.
fn why_not_run(reason: &NotRunReason) -> String {
    match reason {
        NotRunReason::Needs { argument, .. } => format!("needs `{argument}`"),
        NotRunReason::Undeclared { operation } => format!("does not declare `{operation}`"),
        other => other.to_string(),
    }
}

/// `run`, a procedural run of the LangGraph procedural desk (`who`: the
/// desk or an honest variant of it), left out exactly
/// [`LANGGRAPH_PROCEDURAL_NOT_RUN`] and ran every other probe.
fn assert_langgraph_procedural_probes(run: &PackRun, who: &str) {
    if run.served_elsewhere() {
        return;
    }
    let not_run: Vec<(&str, String)> = run
        .probes_not_run()
        .iter()
        .map(|p| (p.probe.as_str(), why_not_run(&p.reason)))
        .collect();
    let expected: Vec<(&str, String)> = LANGGRAPH_PROCEDURAL_NOT_RUN
        .iter()
        .map(|&(probe, why)| (probe, why.to_owned()))
        .collect();
    assert_eq!(not_run, expected, "{who}: the probes not run");
    let ran: BTreeSet<&str> = run.scenarios().iter().map(|s| s.name.as_str()).collect();
    let left_out: BTreeSet<&str> = LANGGRAPH_PROCEDURAL_NOT_RUN
        .iter()
        .map(|&(p, _)| p)
        .collect();
    let planned: BTreeSet<&str> = std::iter::once(PackKind::Procedural.seed_scenario())
        .chain(PackKind::Procedural.probes().iter().map(|p| p.name))
        .filter(|name| !left_out.contains(name))
        .collect();
    assert_eq!(ran, planned, "{who}: the scenarios run");
}

#[test]
fn committed_cassettes_replay_every_pack_of_every_framework_desk() {
    let upstream = recording().then(|| upstream::framework_desk().expect("a scripted upstream"));
    let url = upstream.as_ref().map(|u| u.url().to_owned());
    let runs: Vec<_> = Framework::ALL
        .into_iter()
        .flat_map(|f| f.packs().iter().map(move |&p| (f, p)))
        .collect();
    let runs = side_by_side(runs, |(framework, pack)| {
        (framework, run(framework, pack, url.as_deref()))
    });
    for (framework, run) in &runs {
        run.assert_passed();
        if *framework == Framework::LangGraphProcedural {
            assert_langgraph_procedural_probes(run, framework.name());
        }
    }
}

fn assert_caught(twin: &FrameworkTwin, upstream: Option<&str>) {
    let spec = twin.framework.spec(framework_python(), Some(twin.name));
    let definition = frameworks::definition(twin.pack);
    let kind = definition.kind().name();
    let mut options = replaying(twin.cassette(), upstream.filter(|_| twin.own_cassette));
    if upstream.is_some() && !twin.own_cassette {
        options.replay.mode = Some(ReplayMode::Replay);
    }
    let run = run_pack(
        &format!("{}::{}::{kind}", twin.framework.name(), twin.name),
        &definition,
        &options,
        move |ctx| python::start(ctx, &spec),
    );
    symfonic_evals_e2e::assert_caught_only(&run, twin.name, &twin.catch, twin.also_fails);
}

/// Every twin is caught where it must be. Recording, the twins with a
/// cassette of their own record it; the others replay the desk's.
#[test]
fn every_framework_twin_is_caught_where_it_must_be() {
    let upstream = recording().then(|| upstream::framework_desk().expect("a scripted upstream"));
    let url = upstream.as_ref().map(|u| u.url().to_owned());
    side_by_side(TWINS, |twin| assert_caught(&twin, url.as_deref()));
}

/// Every honest variant passes every pack of its desk. Recording, the
/// variants with a cassette of their own record it; the others replay the
/// desk's, which only `committed_cassettes_…` records.
#[test]
fn every_honest_framework_variant_passes_every_pack() {
    let upstream = recording().then(|| upstream::framework_desk().expect("a scripted upstream"));
    let url = upstream.as_ref().map(|u| u.url().to_owned());
    let runs: Vec<_> = HONEST
        .into_iter()
        .flat_map(|v| v.framework.packs().iter().map(move |&p| (v, p)))
        .collect();
    let runs = side_by_side(runs, |(variant, pack)| {
        let spec = variant
            .framework
            .variant_spec(framework_python(), variant.name);
        let definition = variant.definition(pack);
        let kind = definition.kind().name();
        let mut options = replaying(
            variant.cassette(pack),
            url.as_deref().filter(|_| variant.own_cassette(pack)),
        );
        if url.is_some() && !variant.own_cassette(pack) {
            options.replay.mode = Some(ReplayMode::Replay);
        }
        let run = run_pack(
            &format!("{}::{}::{kind}", variant.framework.name(), variant.name),
            &definition,
            &options,
            move |ctx| python::start(ctx, &spec),
        );
        (variant, run)
    });
    for (variant, run) in &runs {
        run.assert_passed();
        if variant.framework == Framework::LangGraphProcedural {
            assert_langgraph_procedural_probes(run, variant.name);
        }
    }
}

/// The twins (or, with `table = "HONEST"`, the honest variants) each desk
/// offers, as its table lists them.
fn offered(framework: Framework, table: &str) -> BTreeSet<String> {
    let module = framework.script().trim_end_matches(".py");
    let script = format!("import {module}; print('\\n'.join(getattr({module}, '{table}', {{}})))");
    let output = Command::new(framework_python())
        .current_dir(framework.dir())
        .args(["-c", &script])
        .output()
        .expect("the framework's interpreter runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_twin_a_framework_desk_offers_is_tested() {
    for framework in Framework::ALL {
        let tested: BTreeSet<String> = TWINS
            .iter()
            .filter(|t| t.framework == framework)
            .map(|t| t.name.to_owned())
            .collect();
        assert_eq!(offered(framework, "TWINS"), tested, "{}", framework.name());
        let honest: BTreeSet<String> = HONEST
            .iter()
            .filter(|v| v.framework == framework)
            .map(|v| v.name.to_owned())
            .collect();
        assert_eq!(offered(framework, "HONEST"), honest, "{}", framework.name());
    }
}

/// The lines an adopter writes: code lines (no blank lines, comments or
/// docstrings) that exist for no twin, i.e. not marked `# twin` and not
/// between the `# -- twins` and `# -- end of twins` markers. A line marked
/// `# adopter:` (one an adopter writes in another shape) counts.
fn adopter_lines(source: &str) -> Vec<&str> {
    let (mut in_docstring, mut in_twins, mut lines) = (false, false, Vec::new());
    for line in source.lines() {
        let code = line.trim();
        if in_docstring {
            in_docstring = !code.contains(r#"""""#);
        } else if let Some(rest) = code.strip_prefix(r#"""""#) {
            in_docstring = !rest.contains(r#"""""#);
        } else if code.starts_with("# -- twins") {
            in_twins = true;
        } else if code.starts_with("# -- end of twins") {
            in_twins = false;
        } else if !(in_twins || code.is_empty() || code.starts_with('#') || line.contains("# twin"))
        {
            lines.push(line);
        }
    }
    lines
}

/// The adopter's lines that face the harness: those that name the
/// companion package, or a name imported from it (`serve`, `effects`, the
/// adapter's deployment class, ...). The rest is the adopter's own app.
fn harness_facing<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let imported: Vec<&str> = lines
        .iter()
        .filter_map(|line| line.trim().strip_prefix("from symfonic_evals_protocol"))
        .filter_map(|rest| rest.split_once(" import ").map(|(_, names)| names))
        .flat_map(|names| names.split(','))
        .filter_map(|name| name.split(" as ").last().map(str::trim))
        .filter(|name| !name.is_empty())
        .collect();
    let names_one = |line: &str, name: &str| {
        line.match_indices(name).any(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + name.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !word(before) && !word(after)
        })
    };
    lines
        .iter()
        .copied()
        .filter(|line| {
            line.contains("symfonic_evals_protocol")
                || imported.iter().any(|name| names_one(line, name))
        })
        .collect()
}

/// The adopter's lines of `framework`'s desk and those of them facing the
/// harness, printed.
fn counted(framework: Framework) -> (Vec<String>, Vec<String>) {
    let source = std::fs::read_to_string(framework.dir().join(framework.script())).unwrap();
    let lines = adopter_lines(&source);
    let facing = harness_facing(&lines);
    eprintln!(
        "{}: {} adopter lines, {} facing the harness",
        framework.name(),
        lines.len(),
        facing.len()
    );
    let owned = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect();
    (owned(&lines), owned(&facing))
}

#[test]
fn each_framework_desk_is_under_forty_adopter_lines_and_ten_facing_the_harness() {
    let help_desks = Framework::ALL
        .into_iter()
        .filter(|f| *f != Framework::LangGraphProcedural);
    for framework in help_desks {
        let (lines, facing) = counted(framework);
        // Above 20: the count sees the tools, the graph or agent, and the
        // factory, not only the imports. At least 5 facing: the rule still
        // finds the imports, the effects and the serving.
        assert!(
            (20..40).contains(&lines.len()),
            "{}: {lines:#?}",
            framework.name()
        );
        assert!(
            (5..=10).contains(&facing.len()),
            "{}: {facing:#?}",
            framework.name()
        );
    }
}

/// The procedural desk's store, tools, graph and review words are the
/// adopter's own app; what faces the harness stays a handful: the imports,
/// the effect, the rejected-feedback check, the gate's two reports and the
/// predicate check, the review door's errors, the identity, the
/// deployment and the serving (its three procedural hooks are keyword
/// arguments, which the rule does not see).
#[test]
fn the_langgraph_procedural_desk_faces_the_harness_in_at_most_sixteen_lines() {
    let (lines, facing) = counted(Framework::LangGraphProcedural);
    // Above 100: the count sees the store, the tools and the graph.
    assert!((100..170).contains(&lines.len()), "{lines:#?}");
    assert!((10..=16).contains(&facing.len()), "{facing:#?}");
}

#[test]
fn harness_facing_lines_are_those_naming_the_companion_or_its_imports() {
    let lines = [
        "from symfonic_evals_protocol import serve",
        "from symfonic_evals_protocol.adapters import effects, require_approval as approval",
        "def observe(x):",
        "    effects.apply(f\"k:{x}\")",
        "    side_effects = 1",
        "    return approval",
        "sys.exit(serve(desk))",
        "reserve = 2",
    ];
    assert_eq!(
        harness_facing(&lines),
        [lines[0], lines[1], lines[3], lines[5], lines[6]]
    );
}

#[test]
fn adopter_lines_skip_docstrings_comments_and_twins() {
    let source = "\"\"\"A module.\n\nMore.\n\"\"\"\nimport a\n# a comment\n\ndef f():\n    \"\"\"One line.\"\"\"\n    return 1  # twin: 2\n    return 3  # adopter: return 2\n    return 2\n# -- twins\nclass T: pass\n# -- end of twins\nmain()\n";
    assert_eq!(adopter_lines(source).len(), 5);
}

/// The Agents SDK desk with its forecasts behind `MCPServerStdio`, bound to
/// the harness's fixture through the stdio bridge
/// (`mcp_server_params("stdio")`): the adapter recognises the bridge as the
/// fixture, so the extension pack checks every call against what the
/// fixture received, and the desk's committed cassette replays (the
/// fixture lists and answers the same tool either way).
#[test]
fn the_agents_sdk_desk_reaches_the_fixture_through_the_stdio_bridge() {
    if symfonic_evals::mcp::stdio_bridge().is_none() {
        // `cargo test --workspace` (the README's command, and CI) builds
        // the bridge beside the test binaries; a filtered build may not.
        assert!(
            std::env::var_os("CI").is_none(),
            "the stdio bridge is not built"
        );
        eprintln!(
            "skipped: build the bridge with `cargo build -p symfonic-evals --bin symfonic-evals-mcp-stdio`"
        );
        return;
    }
    let framework = Framework::OpenAiAgents;
    let pack = helpdesk::Pack::ExtensionTool;
    let spec = symfonic_evals::process::ProcessSpec::new(framework_python())
        .arg(framework.dir().join("stdio_desk.py"))
        .args(["--forecasts", "fixture"])
        .fork_server(true);
    let mut options = options(framework, pack, None);
    options.replay.mode = Some(ReplayMode::Replay);
    let run = run_pack(
        "openai-agents-desk::stdio-fixture::extension-tools",
        &frameworks::definition(pack),
        &options,
        move |ctx| python::start(ctx, &spec),
    );
    run.assert_passed();
    assert!(
        run.probes_not_run()
            .iter()
            .all(|p| p.probe != "extension/mcp-fixture"),
        "the fixture was not recognised behind the stdio bridge: {:?}",
        run.probes_not_run()
    );
}
