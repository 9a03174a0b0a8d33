//! Starting the trial's MCP server fixture, when the pack serves one and
//! the crate was built with the `mcp` feature (without it, no fixture
//! starts, and a deployment that looks for one finds none).

use crate::mcp::{FixtureLog, FixtureTool};
use crate::target::TargetContext;

/// A running fixture, kept for as long as the trial runs.
#[derive(Debug)]
pub(crate) struct TrialFixture {
    #[cfg(feature = "mcp")]
    server: crate::mcp::McpFixture,
    /// Without the server, no fixture is ever running.
    #[cfg(not(feature = "mcp"))]
    never: std::convert::Infallible,
}

impl TrialFixture {
    /// Starts a fixture serving `tool`, if there is one to serve.
    pub(crate) fn start(tool: Option<&FixtureTool>) -> std::io::Result<Option<Self>> {
        let Some(tool) = tool else {
            return Ok(None);
        };
        #[cfg(feature = "mcp")]
        {
            crate::mcp::McpFixture::start(tool.clone()).map(|server| Some(Self { server }))
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = tool;
            Ok(None)
        }
    }

    /// The fixture's record.
    pub(crate) fn log(&self) -> &FixtureLog {
        #[cfg(feature = "mcp")]
        {
            self.server.log()
        }
        #[cfg(not(feature = "mcp"))]
        match self.never {}
    }

    /// `context` pointed at this fixture.
    pub(crate) fn bind(&self, context: TargetContext) -> TargetContext {
        #[cfg(feature = "mcp")]
        {
            context
                .with_mcp_url(self.server.url())
                .with_mcp_stdio(self.server.stdio_locator())
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = context;
            match self.never {}
        }
    }
}

/// `context`, pointed at `fixture` when there is one.
pub(crate) fn bind(fixture: Option<&TrialFixture>, context: TargetContext) -> TargetContext {
    match fixture {
        Some(fixture) => fixture.bind(context),
        None => context,
    }
}
