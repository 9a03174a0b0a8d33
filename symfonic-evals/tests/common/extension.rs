//! A deployment whose `extensions` capability contributes a weather tool.

use serde_json::json;
use symfonic_evals::{CapabilityEvidence, PromptRequest, Target, ToolCall, TurnError, TurnRecord};

/// The contributed tool.
pub const TOOL: &str = "weather_lookup";

/// One way the deployment can be broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionFlaw {
    /// The tool is bound but fails when called.
    CalledButFailed,
    /// The model describes the tool instead of calling it.
    NeverCalled,
    /// The tool is called with other arguments than the pack requires.
    WrongArguments,
}

/// The deployment.
pub struct WeatherDesk {
    /// Which flaw, if any.
    pub flaw: Option<ExtensionFlaw>,
    /// Calls made so far, for ids unique across the desk's turns.
    pub calls: u32,
}

impl WeatherDesk {
    /// The desk with `flaw` switched on.
    pub fn with(flaw: Option<ExtensionFlaw>) -> Self {
        Self { flaw, calls: 0 }
    }
}

impl Target for WeatherDesk {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("tools")
            .contributes("extensions", TOOL)
    }

    fn run_turn(&mut self, _request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let city = if self.flaw == Some(ExtensionFlaw::WrongArguments) {
            "Bergen"
        } else {
            "Oslo"
        };
        let arguments = json!({ "city": city });
        self.calls += 1;
        let id = super::call_id();
        let result = json!({"celsius": 12, "sky": "clear"});
        let record = TurnRecord::builder()
            .answer("Oslo: 12 degrees, clear")
            .model_input(format!("user: weather?\ntool {TOOL} -> {result}"));
        let record = match self.flaw {
            Some(ExtensionFlaw::NeverCalled) => record,
            Some(ExtensionFlaw::CalledButFailed) => {
                record.tool_call(ToolCall::failed(id, TOOL, arguments, "not bound"))
            }
            _ => record.tool_call(ToolCall::succeeded(id, TOOL, arguments, result)),
        };
        Ok(record.build())
    }
}
