//! The MCP server fixture: the extension's tool, served by the harness.
//!
//! A deployment that binds its extension tools over the Model Context
//! Protocol can bind the one the extension pack names to a server the
//! harness owns, started for every trial. The fixture sees every
//! `tools/list` and `tools/call` arrive with the arguments as received,
//! answers each call with a result of its own (a fresh nonce beside the
//! adopter's fixed content), and returns a tool error when a step asks it
//! to. The pack then judges the extension from what the fixture saw,
//! rather than from what the deployment says it did: a bridge that drops
//! arguments, a cache, an earlier result shown to the model, an error
//! dressed up as a success and a built-in tool passed off as the
//! extension's all show.
//!
//! The deployment finds the fixture in its context
//! ([`TargetContext::mcp_url`](crate::TargetContext::mcp_url)), or in a
//! child process in [`MCP_URL_ENV`], and declares [`MCP_FIXTURE`] so the
//! pack knows to judge by it. The server itself needs the `mcp` feature
//! (on by default); the records and the checks over them do not.

#[cfg(feature = "mcp")]
mod delivery;
mod log;
#[cfg(feature = "mcp")]
mod server;
#[cfg(feature = "mcp")]
mod sessions;

#[cfg(feature = "mcp")]
pub use delivery::ACK_TIMEOUT;
pub(crate) use log::mask_nonces;
pub use log::{Delivery, FixtureCall, FixtureLog, FixtureRefusal, FixtureTool, SETTLE_TIMEOUT};
#[cfg(feature = "mcp")]
pub use server::McpFixture;
#[cfg(feature = "mcp")]
pub use sessions::{
    SessionLimits, MAX_SESSIONS, MAX_SESSIONS_ENV, OPEN_BURST, OPEN_BURST_ENV, OPEN_PER_SECOND,
    OPEN_PER_SECOND_ENV, SESSION_IDLE, SESSION_IDLE_ENV,
};

/// The trait a deployment declares when it binds the extension's tool to
/// the harness's MCP fixture: the extension pack then runs its
/// `extension/mcp-fixture` probe and judges calls by what the fixture
/// received.
pub const MCP_FIXTURE: &str = "mcp-fixture";

/// The variable a deployment in a child process reads the fixture's
/// Streamable HTTP URL from.
pub const MCP_URL_ENV: &str = "MCP_SERVER_URL";

/// The variable a deployment in a child process reads the locator of the
/// fixture's stdio side from (the bridge's argument): `<host:port>/<secret>`,
/// the line side's address and the trial's secret, without which the line
/// side serves no one.
pub const MCP_STDIO_ADDR_ENV: &str = "MCP_STDIO_ADDR";

/// The variable a deployment in a child process reads the stdio bridge's
/// path from, when the harness found it; also where the harness looks
/// first.
pub const MCP_STDIO_BIN_ENV: &str = "MCP_SERVER_COMMAND";

/// The bridge binary's name.
pub const STDIO_BRIDGE: &str = "symfonic-evals-mcp-stdio";

/// A command that speaks MCP over its stdin and stdout, as a deployment
/// launches a stdio server: the crate's bridge, connected to the trial's
/// fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpCommand {
    /// The program to launch.
    pub program: std::path::PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

/// Where the stdio bridge is: [`MCP_STDIO_BIN_ENV`] if set, else beside
/// the running executable or its parent directory (where cargo puts a
/// workspace's binaries next to its tests), else on `PATH`
/// (`cargo install symfonic-evals --bin symfonic-evals-mcp-stdio`).
pub fn stdio_bridge() -> Option<std::path::PathBuf> {
    if let Some(path) = std::env::var_os(MCP_STDIO_BIN_ENV) {
        return Some(path.into());
    }
    let name = format!("{STDIO_BRIDGE}{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().ok();
    let dir = exe.as_deref().and_then(std::path::Path::parent);
    let beside: Vec<std::path::PathBuf> = [dir, dir.and_then(std::path::Path::parent)]
        .into_iter()
        .flatten()
        .map(|dir| dir.join(&name))
        .collect();
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(&name));
    beside
        .into_iter()
        .chain(on_path)
        .find(|path| path.is_file())
}

/// The most calls one trial's fixture answers; past it, every call is
/// refused with a protocol error and the flood is recorded.
///
/// Any local process that reaches the fixture's port can spend this
/// budget, and that is kept on purpose: the fixture cannot tell the
/// deployment's calls from another process's (both arrive on loopback at
/// the URL the deployment was given, and whatever credential the deployment
/// is handed, in its environment or its arguments, a process of the same
/// user can read), and counting only delivered calls would not help, since
/// such a process reads its answers. What the limit guards is the trial's
/// record, which must stay bounded; a flood does not pass unseen: each
/// refused call is recorded as [`FixtureRefusal::Flooded`], and the
/// fixture check the extension pack runs fails a trial with a refusal.
pub const CALL_LIMIT: usize = 256;
