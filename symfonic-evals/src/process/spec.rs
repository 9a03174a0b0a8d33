//! How to start an out-of-process deployment, and how patiently to treat it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Where the protocol's lines travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Channel {
    /// The child's stdin and stdout; the durable directory is also appended
    /// as `--durable-dir <path>`.
    Stdio,
    /// A Unix socket the harness listens on and the child connects to (its
    /// path in [`CHANNEL_ENV`]); the child's stdout is drained and dropped,
    /// and no argument is appended (a test binary's harness would refuse
    /// one it does not know).
    Socket,
}

/// The default cap on one protocol line from a child, 64 MiB: room for a
/// turn record whose model input is a long document, with the memory a
/// runaway child can make the harness hold still bounded.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

// Every variable the harness sets for a child is named for what it carries,
// never for the harness or for testing, and no value it sets names either:
// a deployment that could tell it is tested could behave only then.

/// The environment variable naming the socket a child speaking over a
/// private socket connects to.
pub const CHANNEL_ENV: &str = "AGENT_CHANNEL";

/// Names the pack run a re-executed binary must serve instead of judge
/// (set only in a child the harness started to serve its own deployment):
/// which run under a name it is and a digest of the name, never the name.
pub const SERVE_RUN_ENV: &str = "AGENT_SERVE_RUN";

/// Names the history file a served child reads its test's earlier runs from.
pub const SERVE_HISTORY_ENV: &str = "AGENT_SERVE_HISTORY";

/// The command that starts a deployment, plus the supervision settings the
/// [`ProcessTarget`](super::ProcessTarget) applies to it.
///
/// The durable directory is appended as `--durable-dir <path>` and exported
/// as `AGENT_DURABLE_DIR`; the spec itself never names it, so one
/// spec serves every trial.
///
/// ```
/// use std::time::Duration;
/// use symfonic_evals::process::ProcessSpec;
/// let spec = ProcessSpec::new("python3")
///     .arg("examples/helpdesk-py/helpdesk.py")
///     .request_timeout(Duration::from_secs(10))
///     .include_stderr_tail(true);
/// assert_eq!(spec.program(), "python3");
/// ```
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub(crate) program: OsString,
    /// Where the protocol runs: the child's stdin and stdout, or a private
    /// socket (for a child whose stdout belongs to someone else, such as a
    /// test binary's harness).
    pub(crate) channel: Channel,
    /// The child is this very binary serving a deployment the harness
    /// built from its own code: its panic reports are the harness's own
    /// words (already digested), so they are shown as such.
    pub(crate) served: bool,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) request_timeout: Duration,
    pub(crate) handshake_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) max_line_bytes: usize,
    pub(crate) stderr_tail: bool,
    pub(crate) stderr_tail_bytes: usize,
    pub(crate) fork_server: bool,
    pub(crate) preload: Vec<String>,
    pub(crate) spare: bool,
}

impl ProcessSpec {
    /// Runs `program` (looked up on `PATH` like [`std::process::Command`]).
    ///
    /// Defaults: 20 s per request and for the handshake (under the runner's
    /// 30 s step timeout, so the process target names the hang itself), 2 s
    /// shutdown grace, a 64 MiB line cap ([`DEFAULT_MAX_LINE_BYTES`]), no
    /// stderr in errors.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            channel: Channel::Stdio,
            served: false,
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            request_timeout: Duration::from_secs(20),
            handshake_timeout: Duration::from_secs(20),
            shutdown_grace: Duration::from_secs(2),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            stderr_tail: false,
            stderr_tail_bytes: 2048,
            fork_server: false,
            preload: Vec::new(),
            spare: false,
        }
    }

    /// Appends one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends several arguments.
    #[must_use]
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs the child in `dir`. Without it the child runs where the
    /// harness runs: the harness never moves it (into the durable
    /// directory, say), since the command's relative paths are the
    /// adopter's.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// How long one request may take, ledger round trips included, before
    /// the step ends with `ProcessTimeout`.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the child has to start and answer the handshake before
    /// spawning fails with `ProcessTimeout`. Separate from the request
    /// timeout because an interpreter's start-up can dwarf a turn.
    #[must_use]
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How long the child has to exit after the shutdown message before it
    /// is killed.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The longest protocol line accepted from the child. A line is held in
    /// memory only as far as it has arrived, and one that grows past the cap
    /// ends the step with `MessageTooLarge` as soon as it does, without the
    /// rest of it being read.
    #[must_use]
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes.max(1);
        self
    }

    /// Whether a process error quotes the last bytes of the child's stderr,
    /// after its own account and a `--- stderr tail ---` line. Off by
    /// default because stderr may hold turn content. Either way the error
    /// is the harness's, judged by its kind (a crash the harness injected is
    /// still retried, a child that died is still a process failure); a
    /// report shows the account in clear and the quoted stderr as a digest
    /// (in full with `SYMFONIC_EVALS_SHOW_VALUES=1`).
    #[must_use]
    pub fn include_stderr_tail(mut self, include: bool) -> Self {
        self.stderr_tail = include;
        self
    }

    /// How many bytes of stderr an error quotes when the tail is included.
    #[must_use]
    pub fn stderr_tail_bytes(mut self, bytes: usize) -> Self {
        self.stderr_tail_bytes = bytes;
        self
    }

    /// Starts a Python deployment by forking an interpreter that already
    /// imported it, instead of a fresh interpreter each time (Unix only).
    ///
    /// The program must be a Python interpreter (3.9 or later) and the
    /// first argument the deployment's script. The harness starts one fork
    /// server per interpreter, script, environment and working directory:
    /// it imports the script as a module (its `if __name__ == "__main__"`
    /// block does not run, so nothing is built) and forks a child for every
    /// start and restart, which runs the script as `__main__` with its
    /// imports already in memory. Each child is a new process, with its own
    /// pipes, process group, arguments and environment (the durable
    /// directory included) and nothing of an earlier child; crashes,
    /// timeouts, stderr tails and the kill of its process group work as
    /// for a spawned child. What a child imports while it builds the
    /// deployment (an installed package's submodules, never a module of the
    /// script's own directory) the server imports after that child ends,
    /// so later children find it in memory. When forking is unsafe
    /// (importing the script, or a module learned so, started a thread, or
    /// the import failed) every start is a fresh interpreter, and that is
    /// said once on stderr.
    ///
    /// ```
    /// use symfonic_evals::process::ProcessSpec;
    /// let spec = ProcessSpec::new("python3")
    ///     .arg("examples/helpdesk-py/helpdesk.py")
    ///     .fork_server(true);
    /// assert!(spec.forks());
    /// ```
    #[must_use]
    pub fn fork_server(mut self, fork: bool) -> Self {
        self.fork_server = fork;
        self
    }

    /// Has the fork server also import `module` after the script, for a
    /// module the script imports only under some arguments (an SDK behind
    /// a `--model` flag, say), so forked children find it imported too.
    /// Turns the fork server on.
    ///
    /// ```
    /// use symfonic_evals::process::ProcessSpec;
    /// let spec = ProcessSpec::new("python3")
    ///     .args(["desk.py", "--model", "openai"])
    ///     .preload("openai_desk");
    /// assert!(spec.forks());
    /// ```
    #[must_use]
    pub fn preload(mut self, module: impl Into<String>) -> Self {
        self.fork_server = true;
        self.preload.push(module.into());
        self
    }

    /// Keeps one more process of this spec started ahead in each trial
    /// that has restarted once, waiting for its handshake, so every later
    /// restart answers from it instead of a cold start: for runtimes that
    /// cannot fork an initialised process (Node), whose every restart
    /// otherwise pays the runtime's start and the framework's import
    /// again, and for forked deployments that build much before their
    /// handshake (a Python companion's two-stage factory, `staged`, builds
    /// its graph or agent and their model clients there). The spare has
    /// the same arguments and environment as the start it stands in for,
    /// and is killed with its trial. A step after a restart a spare
    /// answered says so in the report ("from a spare").
    ///
    /// Sound only for a deployment that reads nothing durable before its
    /// handshake, which names the durable directory: the companions build
    /// the durable part of the deployment after it (`serve(factory)` calls
    /// the factory, or a staged factory's second stage, then). Ignored for
    /// a child on a private socket.
    ///
    /// ```
    /// use symfonic_evals::process::ProcessSpec;
    /// let spec = ProcessSpec::new("node").arg("desk.js").spare(true);
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn spare(mut self, spare: bool) -> Self {
        self.spare = spare;
        self
    }

    /// Whether starts keep a spare (see [`ProcessSpec::spare`]).
    pub(crate) fn keeps_spare(&self) -> bool {
        self.spare && self.channel == Channel::Stdio
    }

    /// Whether starts go through the fork server (see
    /// [`ProcessSpec::fork_server`]); always `false` off Unix.
    pub fn forks(&self) -> bool {
        cfg!(unix) && self.fork_server && !self.args.is_empty()
    }

    /// The same spec speaking over a private socket, to a child serving
    /// this binary's own deployment.
    #[must_use]
    pub(crate) fn serving(mut self) -> Self {
        self.channel = Channel::Socket;
        self.served = true;
        self
    }

    /// The program this spec runs.
    pub fn program(&self) -> &str {
        self.program.to_str().unwrap_or("<non-UTF-8 program>")
    }
}

/// Whether `key` names one of the harness's own settings (`SYMFONIC_EVALS_*`,
/// in any case).
pub(crate) fn harness_setting(key: &std::ffi::OsStr) -> bool {
    key.to_str()
        .is_some_and(|key| key.to_ascii_uppercase().starts_with("SYMFONIC_EVALS"))
}
