//! The extension tool pack: the contributed tool is called and really runs;
//! and its probes (repeated turns and a fresh conversation, the result
//! reaching the model, the tool body's own witness, a second request whose
//! result must be its own).

use serde_json::Value;

use super::arguments::ArgumentChecks;
use super::probes::{Probe, Selection};
use super::{ArgumentError, PackKind};
use crate::assertion::{ArgumentMatch, Assertion};
use crate::capability::Requirements;
use crate::scenario::{Scenario, Step, TrialPolicy};

/// The name of the seed scenario, as the pack's contract gives it.
pub const SEED: &str = "extension-tool-execution";

/// The probes of the extension pack, in the order they run.
pub const PROBES: &[Probe] = &[
    Probe::default_on(
        "extension/repeated-and-fresh-conversation",
        "call ids that restart every turn, conversation or process, and a tool that works only \
         once: the prompt runs twice in one conversation, once in another, and once more after \
         a restart",
    ),
    Probe::default_on(
        "extension/result-reaches-model",
        "a result the loop reports but never shows the model: its text must appear in the \
         model input",
    ),
    Probe::enabled_by(
        "extension/witnessed",
        "witnessed",
        "a tool bridge that drops arguments or turns the tool's error into a success: the \
         tool body's own witness must show the arguments and a clean outcome",
    ),
    Probe::enabled_by(
        "extension/fresh-result",
        "second_prompt",
        "an earlier call's result shown to the model in place of this one, and a result \
         served from a cache: after the prompt, a second request (with `second_arguments`, if \
         given) must return a result unlike the first, and that result must reach the model; \
         then the prompt again, and with `witnessed` every call must be the tool body's own",
    ),
    Probe::on_declaring(
        "extension/mcp-fixture",
        crate::mcp::MCP_FIXTURE,
        "evidence that rests on the deployment's word: with the tool bound to the harness's MCP \
         fixture, every call must reach it with the model's arguments (a built-in copy, a \
         cache or a bridge that drops arguments fails), each call's own result must reach the \
         model (an earlier or another conversation's fails), the tool must be bound again \
         after a restart, and an upstream error must be reported as a failed call",
    ),
];

/// Arguments of the extension tool pack.
///
#[doc = include_str!("../../../docs/extension_tool.md")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtensionToolPack {
    /// The turn that should call the tool.
    pub prompt: String,
    /// The tool the `extensions` capability contributes.
    pub tool_name: String,
    /// The arguments the call must carry, if given.
    pub arguments: Option<Value>,
    /// How the arguments are compared: exactly (the default) or as a
    /// subset, so a tool that adds a defaulted argument is not a failure.
    pub argument_match: ArgumentMatch,
    /// Fragments the answer must contain.
    pub expected_fragments: Vec<String>,
    /// Require the tool body's witness (see the `extension/witnessed` probe),
    /// and on every call of the fresh-result probe.
    pub witnessed: bool,
    /// A second request for the tool, whose result must differ from the
    /// prompt's (enables the `extension/fresh-result` probe).
    pub second_prompt: Option<String>,
    /// The arguments the second request's call must carry, if given;
    /// compared as `argument_match` says.
    pub second_arguments: Option<Value>,
    /// The tool's input schema, as the harness's MCP fixture lists it
    /// (derived from `arguments` when not given: each argument typed by
    /// its value).
    pub tool_schema: Option<Value>,
    /// Fields every result of the MCP fixture carries beside its `nonce`
    /// (an object), so the deployment's answer can read like a real one.
    pub fixture_result: Option<Value>,
    /// The conversation the seed step runs in (probes derive theirs).
    pub conversation: String,
    /// Probes to switch off, by name (see [`PackKind::probes`](super::PackKind::probes)).
    pub skip_probes: Vec<String>,
    /// Trials and passes required (not read from JSON: a policy holds a
    /// duration, which the attribute spells as `step_timeout_ms`).
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ExtensionToolPack {
    fn default() -> Self {
        Self {
            prompt: String::new(),
            tool_name: String::new(),
            arguments: None,
            argument_match: ArgumentMatch::Exact,
            expected_fragments: Vec::new(),
            witnessed: false,
            second_prompt: None,
            second_arguments: None,
            tool_schema: None,
            fixture_result: None,
            conversation: "extensions".into(),
            skip_probes: Vec::new(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ExtensionToolPack {
    /// Refuses arguments that would make the pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.text("prompt", &self.prompt);
        checks.text("tool_name", &self.tool_name);
        checks.text("conversation", &self.conversation);
        checks.require(
            self.arguments.as_ref().is_none_or(Value::is_object),
            "arguments",
            "must be a JSON object of the tool's arguments",
        );
        checks.optional_text("second_prompt", self.second_prompt.as_ref());
        checks.require(
            self.second_prompt.as_deref() != Some(self.prompt.as_str()),
            "second_prompt",
            "equals `prompt`: the second request must be a distinct one, with a result of its own",
        );
        checks.require(
            self.second_arguments.as_ref().is_none_or(Value::is_object),
            "second_arguments",
            "must be a JSON object of the second call's arguments",
        );
        checks.require(
            self.second_arguments.is_none() || self.second_prompt.is_some(),
            "second_arguments",
            "is read only by the fresh-result probe; give `second_prompt` too",
        );
        checks.require(
            self.second_arguments.is_none() || self.second_arguments != self.arguments,
            "second_arguments",
            "equals `arguments`: the second call must ask for something else",
        );
        checks.require(
            self.tool_schema
                .as_ref()
                .is_none_or(|schema| schema.get("type").and_then(Value::as_str) == Some("object")),
            "tool_schema",
            "must be a JSON Schema of an object (`{\"type\": \"object\", ...}`), as MCP tools take",
        );
        checks.require(
            self.fixture_result.as_ref().is_none_or(|result| {
                result
                    .as_object()
                    .is_some_and(|fields| !fields.contains_key("nonce"))
            }),
            "fixture_result",
            "must be a JSON object without a `nonce` field (the fixture adds each call's own)",
        );
        checks.require(
            self.expected_fragments.iter().all(|f| !f.is_empty()),
            "expected_fragments",
            "an empty fragment matches every answer",
        );
        checks.probes(&self.skip_probes, PROBES);
        checks.policy(&self.policy);
        checks.finish()
    }

    /// The tool the harness's MCP fixture serves for this pack.
    pub fn fixture_tool(&self) -> crate::mcp::FixtureTool {
        crate::mcp::FixtureTool::new(
            &self.tool_name,
            self.tool_schema.as_ref(),
            self.arguments.as_ref(),
            self.fixture_result.as_ref(),
        )
    }

    /// The `extensions` capability contributing exactly this tool.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::ExtensionTool.capability().into()],
            contributed_tools: vec![(
                PackKind::ExtensionTool.capability().into(),
                self.tool_name.clone(),
            )],
            ..Requirements::default()
        }
    }

    fn called(&self) -> Assertion {
        self.called_with(self.arguments.clone())
    }

    fn called_with(&self, arguments: Option<Value>) -> Assertion {
        Assertion::ToolCalled {
            tool: self.tool_name.clone(),
            times: 1,
            arguments,
            matching: self.argument_match,
        }
    }

    /// The tool body's witness of a call with `arguments`, when the pack
    /// asks for witnesses.
    fn witness(&self, arguments: Option<Value>) -> Option<Assertion> {
        self.witnessed.then(|| Assertion::ToolWitnessed {
            tool: self.tool_name.clone(),
            arguments,
            matching: self.argument_match,
        })
    }

    fn call(&self, label: &str, conversation: &str) -> Step {
        Step::prompt(label, &self.prompt, conversation)
    }

    /// The seed scenario: one turn that calls the tool once, which runs
    /// without error, with unique call ids and the answer's fragments.
    pub fn seed(&self) -> Scenario {
        let mut assertions = vec![
            self.called(),
            Assertion::tool_succeeded(&self.tool_name, 1),
            Assertion::ToolCallIdsUnique {
                minimum: 1,
                across_trial: false,
            },
        ];
        if !self.expected_fragments.is_empty() {
            assertions.push(Assertion::ResponseContains(self.expected_fragments.clone()));
        }
        let step = self
            .call("extension call", &self.conversation)
            .asserting(assertions);
        Scenario::new(SEED, vec![step], self.policy)
    }

    /// The seed scenario and every enabled probe.
    pub fn scenarios(&self) -> Vec<Scenario> {
        let selection = Selection::new(&self.skip_probes);
        let mut scenarios = vec![self.seed()];
        for probe in PROBES {
            let given = match probe.needs {
                None => true,
                Some("witnessed") => self.witnessed,
                Some(_) => self.second_prompt.is_some(),
            };
            if selection.runs(probe, given) {
                scenarios.push(self.probe(probe.name));
            }
        }
        scenarios
    }

    /// The MCP fixture probe's steps: the call twice, in a fresh
    /// conversation and after a restart, each received by the fixture as
    /// the model made it and its own result shown; then an upstream error,
    /// reported as one.
    fn fixture_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let tool = self.tool_name.as_str();
        let served = |step: Step| {
            step.asserting([
                self.called(),
                Assertion::ServedByFixture {
                    tool: tool.to_owned(),
                    times: 1,
                    arguments: self.arguments.clone(),
                    matching: self.argument_match,
                },
                Assertion::FixtureResultShown {
                    tool: tool.to_owned(),
                },
                Assertion::ToolCallIdsUnique {
                    minimum: 1,
                    across_trial: true,
                },
            ])
        };
        vec![
            served(self.call("through the fixture", c)),
            served(self.call("called again", c)),
            served(self.call("fresh conversation", &format!("{c}-fresh"))),
            served(self.call("after a restart", c).restarting(true)),
            // A model may rightly retry a failed call, so only how the
            // failure is reported is judged.
            self.call("upstream error", &format!("{c}-error"))
                .failing_fixture_calls()
                .asserting([Assertion::FixtureErrorReported {
                    tool: tool.to_owned(),
                }]),
        ]
    }

    fn probe(&self, name: &'static str) -> Scenario {
        let c = self.conversation.as_str();
        let tool = self.tool_name.as_str();
        let steps = match name {
            "extension/repeated-and-fresh-conversation" => {
                let each = |step: Step| {
                    step.asserting([
                        self.called(),
                        Assertion::tool_succeeded(tool, 1),
                        Assertion::ToolCallIdsUnique {
                            minimum: 1,
                            across_trial: true,
                        },
                    ])
                };
                vec![
                    each(self.call("first call", c)),
                    each(self.call("second call", c)),
                    each(self.call("fresh conversation", &format!("{c}-fresh"))),
                    each(self.call("after a restart", c).restarting(true)),
                ]
            }
            "extension/result-reaches-model" => vec![self.call("extension call", c).asserting([
                Assertion::tool_succeeded(tool, 1),
                Assertion::ToolResultShown {
                    tool: tool.to_owned(),
                },
            ])],
            "extension/witnessed" => vec![self.call("extension call", c).asserting([
                self.called(),
                Assertion::ToolWitnessed {
                    tool: tool.to_owned(),
                    arguments: self.arguments.clone(),
                    matching: self.argument_match,
                },
            ])],
            "extension/fresh-result" => {
                // Witnessed, each call must be the body's own: the prompt
                // asked again may rightly return its first result, but not
                // one served from a cache, which no body witnessed.
                let shown = |arguments: Option<Value>| {
                    [
                        self.called_with(arguments.clone()),
                        Assertion::tool_succeeded(tool, 1),
                        Assertion::ToolResultShown {
                            tool: tool.to_owned(),
                        },
                    ]
                    .into_iter()
                    .chain(self.witness(arguments))
                };
                let second = self.second_prompt.clone().unwrap_or_default();
                vec![
                    self.call("first request", c)
                        .asserting(shown(self.arguments.clone())),
                    Step::prompt("second request", &second, c)
                        .asserting(shown(self.second_arguments.clone()))
                        .asserting([Assertion::ToolResultFresh {
                            tool: tool.to_owned(),
                        }]),
                    self.call("first request again", c)
                        .asserting(shown(self.arguments.clone())),
                ]
            }
            "extension/mcp-fixture" => self.fixture_steps(),
            other => unreachable!("the extension pack has no probe {other}"),
        };
        Scenario::probe(name, steps, self.policy)
    }
}
