//! A deployment whose extension contributes a weather tool that really runs,
//! an async twin of it, and a twin whose contributed tool is bound to nothing.

use serde_json::{json, Value};
use symfonic_evals::{
    AsyncTarget, CapabilityEvidence, PromptRequest, Target, TargetContext, ToolCall, TurnError,
    TurnRecord,
};

const TOOL: &str = "weather_lookup";

/// Whether the contributed tool has an implementation behind it.
#[derive(Clone, Copy)]
pub enum Binding {
    Implemented,
    DeclaredOnly,
}

pub struct Weather {
    binding: Binding,
    extensions: bool,
}

impl Weather {
    pub fn open(_ctx: &TargetContext, binding: Binding) -> Self {
        Self {
            binding,
            extensions: true,
        }
    }

    /// A deployment that ships no extension bundle at all.
    pub fn without_extensions() -> Self {
        Self {
            binding: Binding::Implemented,
            extensions: false,
        }
    }

    fn turn(&self, request: &PromptRequest) -> TurnRecord {
        let city = request
            .prompt
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .trim_end_matches('?');
        let arguments = json!({ "city": city });
        let call = match self.binding {
            Binding::Implemented => ToolCall::succeeded("call-1", TOOL, arguments, lookup(city)),
            Binding::DeclaredOnly => {
                ToolCall::failed("call-1", TOOL, arguments, "no handler bound")
            }
        };
        let answer = if call.is_success() {
            format!("{city}: 4 degrees")
        } else {
            "unknown".to_owned()
        };
        TurnRecord::builder().tool_call(call).answer(answer).build()
    }
}

fn lookup(city: &str) -> Value {
    json!({ "city": city, "temp_c": 4 })
}

impl Target for Weather {
    fn capabilities(&self) -> CapabilityEvidence {
        let evidence = CapabilityEvidence::new().capability("tools");
        if self.extensions {
            evidence.contributes("extensions", TOOL)
        } else {
            evidence
        }
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(self.turn(request))
    }
}

/// The same deployment behind an async interface, as most agent frameworks are.
pub struct AsyncWeather(Weather);

impl AsyncWeather {
    pub async fn connect(ctx: &TargetContext) -> Self {
        tokio::task::yield_now().await;
        Self(Weather::open(ctx, Binding::Implemented))
    }
}

impl AsyncTarget for AsyncWeather {
    fn capabilities(&self) -> CapabilityEvidence {
        self.0.capabilities()
    }

    async fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        tokio::task::yield_now().await;
        Ok(self.0.turn(request))
    }
}
