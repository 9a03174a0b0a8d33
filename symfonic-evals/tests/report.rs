//! Every pack run leaves a JSON report: the verdict, and per trial, step and
//! assertion what was required and what was observed.

use crate::common;

use common::approval::{ApprovalFlaw, ManagerDesk};
use common::extension::WeatherDesk;
use common::procedural::RefundDesk;
use serde_json::Value;
use symfonic_evals::{run_pack, CapabilityEvidence, PackRun, RunOptions};

fn report_of(run: &PackRun) -> Value {
    let path = run.report_path().expect("a report was written");
    assert!(path.starts_with(common::private_report_dir("reports")));
    let text = std::fs::read_to_string(path).expect("the report is readable");
    serde_json::from_str(&text).expect("the report is valid JSON")
}

#[test]
fn a_passing_run_reports_every_step_and_assertion() {
    common::private_report_dir("reports");
    let run = run_pack(
        "report.procedural",
        &common::procedural(common::procedural_pack()),
        &RunOptions::default(),
        |ctx| RefundDesk::open(ctx, None),
    );
    run.assert_passed();
    let path = run.report_path().unwrap();
    // The package that ran it leads the name, so crates sharing a target
    // directory never overwrite each other's reports.
    assert_eq!(
        path.file_name().unwrap(),
        "symfonic-evals.report.procedural.json"
    );
    let report = report_of(&run);
    assert_eq!(
        report["schema_version"],
        symfonic_evals::REPORT_SCHEMA_VERSION
    );
    assert_eq!(report["harness"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(report["package"], "symfonic-evals");
    assert_eq!(report["name"], "report.procedural");
    assert_eq!(report["verdict"], "passed");
    assert_eq!(report["fingerprint"], run.fingerprint());
    assert!(report["started_unix_ms"].as_u64().unwrap() > 1_600_000_000_000);
    let scenarios = report["scenarios"].as_array().unwrap();
    assert_eq!(scenarios[0]["name"], "procedural-review-and-enforcement");
    assert_eq!(scenarios[0]["kind"], "seed");
    assert!(scenarios[1..]
        .iter()
        .all(|s| s["kind"] == "probe" && s["passed"] == true));
    let total: u64 = scenarios
        .iter()
        .map(|s| s["trials"][0]["duration_us"].as_u64().unwrap())
        .sum();
    assert!(
        report["duration_us"].as_u64().unwrap() >= total / 2,
        "{report}"
    );
    let steps = scenarios[0]["trials"][0]["steps"].as_array().unwrap();
    let labels: Vec<&str> = steps.iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "demonstration 1",
            "demonstration 2",
            "draft probe",
            "review",
            "satisfied",
            "blocked"
        ]
    );
    assert_eq!(steps[4]["restarted"], true);
    let blocked = steps[5]["assertions"].as_array().unwrap();
    assert_eq!(blocked.len(), 5);
    assert!(blocked.iter().all(|a| a["passed"] == true));
    let kinds: Vec<&str> = blocked
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "AttributesSameNonEmpty",
            "StageObserved",
            "ToolCalled",
            "ToolSucceeded",
            "GovernedEffectWithheld"
        ]
    );
    // The probes these arguments leave out are listed, each with why.
    let not_run: Vec<(&str, &str)> = report["probes_not_run"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["probe"].as_str().unwrap(), p["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        not_run,
        [
            ("procedural/enforcement-after-restart", "not_applicable"),
            ("procedural/decoy-stays-draft", "needs"),
            ("procedural/control-promotes-nothing", "needs"),
            ("procedural/paraphrases", "needs"),
            ("procedural/review-binding", "needs"),
            // The deployment declares neither the review door nor replicas.
            ("procedural/rule-fidelity", "undeclared"),
            ("procedural/amend", "undeclared"),
            ("procedural/revoke", "undeclared"),
            ("procedural/two-procedures", "undeclared"),
            ("procedural/relearn-after-approval", "undeclared"),
            ("procedural/reject-draft", "undeclared"),
            ("procedural/replicas", "undeclared"),
            ("procedural/multi-call", "needs"),
            ("procedural/through-approval", "needs"),
            ("procedural/one-demonstration-then-control", "needs"),
        ]
    );
    assert_eq!(report["probes_not_run"][5]["operation"], "review");
    assert_eq!(
        report["probes_not_run"][1]["argument"],
        "decoy_demonstrations"
    );
    assert_eq!(
        scenarios.len() + not_run.len(),
        1 + run.kind().probes().len()
    );
    assert!(run.render().contains(
        "\n  not run: procedural/enforcement-after-restart (restart_before_enforcement = true: \
         the seed already enforces after a restart), procedural/decoy-stays-draft (add \
         `decoy_demonstrations` to catch a review that approves every draft), \
         procedural/control-promotes-nothing (add `control_demonstrations` to catch a promotion \
         count that is not the cycle's own), procedural/paraphrases (add `paraphrases` to catch \
         a gate judged by tool name), procedural/review-binding (add `interleaved_prompt` to \
         catch a review that binds the approved procedure to whatever tool was called last \
         rather than the draft's), \
         procedural/rule-fidelity (the deployment does not declare \
         `review`), procedural/amend (the deployment does not declare `review`), \
         procedural/revoke (the deployment does not declare `review`), \
         procedural/two-procedures (the deployment does not declare `review`), \
         procedural/relearn-after-approval (the deployment does not declare `review`), \
         procedural/reject-draft (the deployment does not declare `review`), \
         procedural/replicas (the deployment does not declare `replicas`), \
         procedural/multi-call (add `multi_call_prompt` to catch a gate that judges only the \
         first call of a model message), procedural/through-approval (add `approval_prompt` to \
         catch an approved request routed straight to the tool, around the procedure gate), \
         procedural/one-demonstration-then-control (add `control_demonstrations` to catch a \
         promotion threshold counted over turns rather than demonstrations (the turns since a \
         lesson was first seen, or every turn after it))\n"
    ));
    // The gate sweep sends one prompt in many states: the state digest
    // tells its steps apart, where the prompt's cannot.
    let sweep = scenarios
        .iter()
        .find(|s| s["name"] == "procedural/gate-sweep")
        .unwrap();
    let swept: Vec<&Value> = sweep["trials"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["label"].as_str().unwrap().starts_with("sweep "))
        .collect();
    let digests = |field: &str| -> std::collections::BTreeSet<&str> {
        swept.iter().map(|s| s[field].as_str().unwrap()).collect()
    };
    assert!(swept.len() > 1);
    assert_eq!(digests("input_digest").len(), 1);
    assert_eq!(digests("state_digest").len(), swept.len());
    // A step that sends no state carries no state digest.
    assert!(steps[0].get("state_digest").is_none(), "{}", steps[0]);
    assert!(steps[4]["state_digest"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    // The run is listed in the directory's index, by binary and report.
    let index = std::fs::read_to_string(path.with_file_name(symfonic_evals::INDEX_FILE))
        .expect("an index beside the reports");
    let listed: Vec<Value> = index
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .filter(|line: &Value| line["name"] == "report.procedural")
        .collect();
    assert!(!listed.is_empty(), "{index}");
    assert_eq!(listed[0]["verdict"], "passed");
    assert_eq!(listed[0]["report"], "symfonic-evals.report.procedural.json");
    assert!(listed[0]["binary"]
        .as_str()
        .unwrap()
        .starts_with("reports-"));
}

#[test]
fn an_accepted_not_applicable_run_is_a_verdict_of_its_own() {
    common::private_report_dir("reports");
    let run = run_pack(
        "report.accepted",
        &common::extension(common::extension_pack()),
        &RunOptions {
            accept_not_applicable: true,
            ..RunOptions::default()
        },
        |_| Bare,
    );
    assert!(!run.passed());
    assert!(run.accepted_not_applicable());
    run.assert_passed();
    assert_eq!(report_of(&run)["verdict"], "accepted_not_applicable");
    assert!(run
        .render()
        .starts_with("pack extension-tools `report.accepted`: NOT APPLICABLE (accepted)"));
}

#[test]
fn a_failing_run_reports_what_was_expected_and_observed() {
    common::private_report_dir("reports");
    let run = run_pack(
        "report.approval_failing",
        &common::approval(common::approval_pack()),
        &RunOptions::default(),
        |ctx| ManagerDesk::open(ctx, Some(ApprovalFlaw::TokenRedeemedTwice)),
    );
    let report = report_of(&run);
    assert_eq!(report["verdict"], "failed");
    // A failing account names the probes that did not run, as a passing one does.
    assert!(run.render().contains(
        "\n  not run: approval/gated-action (add `gated_tool` to catch a gated action run before \
         the person answered), approval/amended-answer (add `amended_answer` to catch an amended \
         answer read only for its decision), approval/edited-call (the deployment does not declare \
         `editable-calls`), approval/replicas (the deployment does not declare `replicas`), \
         approval/reset-between (the deployment does not declare `reset`)\n"
    ));
    assert_eq!(report["probes_not_run"].as_array().unwrap().len(), 5);
    let steps = report["scenarios"][0]["trials"][0]["steps"]
        .as_array()
        .unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[1]["operation"], "resume");
    assert!(steps[1]["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["passed"] == true));
    let replay = &steps[2];
    assert_eq!(replay["label"], "replay");
    assert_eq!(replay["error"]["kind"], "ExpectedError");
    assert_eq!(replay["error"]["expected"], "error PauseTokenReplayedError");
    assert_eq!(replay["error"]["observed"], "the turn succeeded");
    assert!(replay["input_digest"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
}

#[test]
fn a_failed_assertion_is_reported_with_both_sides() {
    common::private_report_dir("reports");
    let run = run_pack(
        "report.extension_failing",
        &common::extension(common::extension_pack()),
        &RunOptions::default(),
        |_| WeatherDesk::with(Some(common::extension::ExtensionFlaw::CalledButFailed)),
    );
    let report = report_of(&run);
    let assertions = report["scenarios"][0]["trials"][0]["steps"][0]["assertions"]
        .as_array()
        .unwrap();
    let failed: Vec<&Value> = assertions.iter().filter(|a| a["passed"] == false).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        failed[0]["description"],
        "ToolSucceeded(weather_lookup, times=1)"
    );
    assert_eq!(
        failed[0]["expected"],
        "1 successful call(s) of weather_lookup"
    );
    assert_eq!(failed[0]["observed"], "0 of 1 call(s) succeeded");
}

#[test]
fn a_not_applicable_run_reports_what_is_missing() {
    common::private_report_dir("reports");
    let run = run_pack(
        "report.not_applicable",
        &common::extension(common::extension_pack()),
        &RunOptions::default(),
        |_| Bare,
    );
    let report = report_of(&run);
    assert_eq!(report["verdict"], "not_applicable");
    assert_eq!(
        report["missing"],
        serde_json::json!([
            {
                "missing": "capability",
                "name": "extensions",
                "reason": "capability `extensions` is not declared"
            },
            {
                "missing": "contributed_tool",
                "capability": "extensions",
                "tool": "weather_lookup",
                "reason": "capability `extensions` does not contribute tool `weather_lookup`"
            }
        ])
    );
    assert!(report["scenarios"].as_array().unwrap().is_empty());
}

/// Declares nothing and is never asked a turn.
struct Bare;

impl symfonic_evals::Target for Bare {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(
        &mut self,
        _: &symfonic_evals::PromptRequest,
    ) -> Result<symfonic_evals::TurnRecord, symfonic_evals::TurnError> {
        unreachable!("not applicable")
    }
}

#[test]
fn a_rerun_replaces_the_report_and_leaves_no_temporary_files() {
    let dir = common::private_report_dir("reports");
    let name = "report.rerun/with odd:chars";
    for flaw in [Some(common::extension::ExtensionFlaw::NeverCalled), None] {
        let run = run_pack(
            name,
            &common::extension(common::extension_pack()),
            &RunOptions::default(),
            move |_| WeatherDesk::with(flaw),
        );
        let path = run.report_path().unwrap();
        assert_eq!(path.parent().unwrap(), dir);
        let file = path.file_name().unwrap().to_str().unwrap();
        assert!(!file.contains('/') && !file.contains(' ') && !file.contains(':'));
    }
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("symfonic-evals.report.rerun.with.odd.chars.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        report["verdict"], "passed",
        "the second run's report replaced the first"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            // Only this run's: other tests write into the directory meanwhile.
            let file = e.file_name().to_string_lossy().into_owned();
            file.starts_with(".symfonic-evals.report.rerun.with.odd.chars.json.")
                && file.ends_with(".tmp")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Where `value` breaks `schema` (a subset of JSON Schema: `$ref` into
/// `$defs`, `anyOf`/`oneOf`, `const`, `enum`, `type`, `properties` with
/// `required`, `items`), read strictly: a key the schema does not declare
/// is an error too, so a field written but left out of the schema fails.
fn schema_errors(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/$defs/");
        return schema_errors(root, &root["$defs"][name], value, at, out);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema[key].as_array() {
            let fits = branches.iter().any(|branch| {
                let mut errors = Vec::new();
                schema_errors(root, branch, value, at, &mut errors);
                errors.is_empty()
            });
            if !fits {
                out.push(format!("{at}: fits no branch of {key}: {value}"));
            }
            return;
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            out.push(format!("{at}: {value} is not {constant}"));
        }
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            out.push(format!("{at}: {value} is not one of {allowed:?}"));
        }
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let is = |t: &str| match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_u64() || value.is_i64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    };
    if !types.is_empty() && !types.iter().any(|t| is(t)) {
        out.push(format!("{at}: {value} is not {types:?}"));
    }
    if let (Some(object), Some(properties)) = (value.as_object(), schema["properties"].as_object())
    {
        for (key, field) in object {
            match properties.get(key) {
                Some(declared) => schema_errors(root, declared, field, &format!("{at}.{key}"), out),
                None => out.push(format!("{at}.{key}: written but not in the schema")),
            }
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            if !object.contains_key(required.as_str().unwrap_or_default()) {
                out.push(format!("{at}: required {required} missing"));
            }
        }
    }
    if let (Some(items), Some(schema)) = (value.as_array(), schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            schema_errors(root, schema, item, &format!("{at}[{i}]"), out);
        }
    }
}

#[test]
fn the_report_schema_for_other_languages_describes_every_report_and_index_line() {
    let dir = common::private_report_dir("reports");
    let schema: Value = serde_json::from_str(include_str!("../../protocol/report.schema.json"))
        .expect("the schema is JSON");
    let twin = symfonic_evals::RunRole::Twin {
        deployment: "weather".into(),
        twin: "never-called".into(),
        catch: symfonic_evals::PinnedCatch {
            scenario: "extension-tool-execution".into(),
            step: "call".into(),
            assertion: "ToolCalled".into(),
        },
    };
    let with_role = |role| RunOptions {
        role: Some(role),
        ..RunOptions::default()
    };
    let runs = [
        run_pack(
            "report.schema.reference",
            &common::extension(common::extension_pack()),
            &with_role(symfonic_evals::RunRole::Reference {
                deployment: "weather".into(),
            }),
            |_| WeatherDesk::with(None),
        ),
        run_pack(
            "report.schema.twin",
            &common::extension(common::extension_pack()),
            &with_role(twin.clone()),
            |_| WeatherDesk::with(Some(common::extension::ExtensionFlaw::NeverCalled)),
        ),
        run_pack(
            "report.schema.approval_failing",
            &common::approval(common::approval_pack()),
            &RunOptions::default(),
            |ctx| ManagerDesk::open(ctx, Some(ApprovalFlaw::TokenRedeemedTwice)),
        ),
        run_pack(
            "report.schema.not_applicable",
            &common::extension(common::extension_pack()),
            &RunOptions::default(),
            |_| Bare,
        ),
    ];
    assert_eq!(runs[1].role(), Some(&twin));
    let mut errors = Vec::new();
    for run in &runs {
        let report = report_of(run);
        schema_errors(&schema, &schema, &report, run.name(), &mut errors);
        // The typed model reads back what it wrote, field for field.
        let typed: symfonic_evals::ReportDocument =
            serde_json::from_value(report.clone()).expect("the model reads its report");
        assert_eq!(serde_json::to_value(&typed).unwrap(), report);
    }
    assert_eq!(
        report_of(&runs[1])["role"]["catch"]["assertion"],
        "ToolCalled"
    );
    let index = std::fs::read_to_string(dir.join(symfonic_evals::INDEX_FILE)).unwrap();
    let line_schema = serde_json::json!({"$ref": "#/$defs/IndexLine"});
    let mine: Vec<Value> = index
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| {
            l["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("report.schema."))
        })
        .collect();
    assert!(mine.len() >= runs.len(), "{index}");
    for line in &mine {
        schema_errors(&schema, &line_schema, line, "index line", &mut errors);
        let typed: symfonic_evals::IndexLine =
            serde_json::from_value(line.clone()).expect("the model reads its index line");
        assert_eq!(serde_json::to_value(&typed).unwrap(), *line);
    }
    assert!(errors.is_empty(), "{errors:#?}");
    // And the checker does catch a field the schema does not know.
    let mut extra = report_of(&runs[0]);
    extra["surprise"] = Value::Bool(true);
    let mut caught = Vec::new();
    schema_errors(&schema, &schema, &extra, "extra", &mut caught);
    assert_eq!(caught, ["extra.surprise: written but not in the schema"]);
}
