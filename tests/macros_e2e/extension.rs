//! A deployment whose extension contributes a weather tool that really runs
//! (each call under an id of its own, its result shown to the model), an
//! async twin of it, and a twin whose contributed tool is bound to nothing.

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
    /// A random name for this process's run, so call ids stay unique
    /// across restarts.
    run: u64,
    calls: u32,
}

fn run_name() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u8)
}

impl Weather {
    pub fn open(_ctx: &TargetContext, binding: Binding) -> Self {
        Self {
            binding,
            extensions: true,
            run: run_name(),
            calls: 0,
        }
    }

    /// A deployment that ships no extension bundle at all.
    pub fn without_extensions() -> Self {
        Self {
            binding: Binding::Implemented,
            extensions: false,
            run: run_name(),
            calls: 0,
        }
    }

    fn turn(&mut self, request: &PromptRequest) -> TurnRecord {
        let city = request
            .prompt
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .trim_end_matches('?');
        let arguments = json!({ "city": city });
        self.calls += 1;
        let id = format!("call-{:x}-{}", self.run, self.calls);
        let (call, seen) = match self.binding {
            Binding::Implemented => {
                let result = lookup(city);
                let seen = format!("{TOOL} -> {result}");
                (ToolCall::succeeded(id, TOOL, arguments, result), seen)
            }
            Binding::DeclaredOnly => (
                ToolCall::failed(id, TOOL, arguments, "no handler bound"),
                format!("{TOOL} -> error"),
            ),
        };
        let answer = if call.is_success() {
            format!("{city}: 4 degrees")
        } else {
            "unknown".to_owned()
        };
        TurnRecord::builder()
            .model_input(format!("user: {}\n{seen}", request.prompt))
            .tool_call(call)
            .answer(answer)
            .build()
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
