//! One supervised child process: spawned in its own process group with every
//! pipe drained on a thread, shut down in order, killed when it lingers, and
//! always reaped.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use super::pipes::{self, StderrRing, StdoutEvent};
use super::protocol::{encode, HarnessMessage};
use super::spec::{harness_setting, Channel, ProcessSpec, CHANNEL_ENV};
use super::status::failed_status;

/// How much of a served child's stderr is kept, so a child that dies before
/// it connects can be quoted from its panic's first line on.
const SERVED_STDERR_BYTES: usize = 16 << 10;

/// The environment variable that carries the trial's durable directory.
pub const DURABLE_DIR_ENV: &str = "AGENT_DURABLE_DIR";
/// The command-line flag that carries the trial's durable directory.
pub const DURABLE_DIR_FLAG: &str = "--durable-dir";

/// Why waiting for the child's next line ended without one.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Silence {
    /// The deadline passed.
    Timeout,
    /// The stdout reader is gone, so nothing more will come.
    Gone,
}

/// The process behind a supervised child: spawned by this process, or
/// forked by a fork server (see [`ProcessSpec::fork_server`]).
enum Proc {
    Spawned(Child),
    #[cfg(unix)]
    Forked(super::zygote::Forked),
}

impl Proc {
    fn id(&self) -> u32 {
        match self {
            Self::Spawned(child) => child.id(),
            #[cfg(unix)]
            Self::Forked(child) => child.id(),
        }
    }

    /// Whether it has exited, leaving it unreaped.
    fn has_exited(&mut self) -> bool {
        match self {
            Self::Spawned(child) => has_exited(child),
            #[cfg(unix)]
            Self::Forked(child) => child.try_status().is_some(),
        }
    }

    /// How it ended, if it has (a spawned child is reaped by this).
    fn try_status(&mut self) -> Option<ExitStatus> {
        match self {
            Self::Spawned(child) => child.try_wait().ok().flatten(),
            #[cfg(unix)]
            Self::Forked(child) => child.try_status(),
        }
    }

    /// Kills its group, then it, then reaps it.
    fn kill_and_reap(&mut self) -> ExitStatus {
        match self {
            Self::Spawned(child) => kill_and_reap(child),
            #[cfg(unix)]
            Self::Forked(child) => {
                // Unreaped until released, so neither id can be reused yet.
                kill_group(child.id());
                kill_pid(child.id());
                child.wait()
            }
        }
    }
}

/// The three ends of a child's pipes the harness keeps.
struct Ends {
    stdin: Option<Box<dyn std::io::Write + Send>>,
    stdout: Box<dyn std::io::Read + Send>,
    stderr: Box<dyn std::io::Read + Send>,
}

/// The child's environment beyond what it inherits: the spec's variables,
/// the durable directory, then the model endpoint's (last, so the child
/// cannot be pointed past the endpoint by accident).
fn child_env(
    spec: &ProcessSpec,
    durable_dir: &Path,
    endpoints: &[(&'static str, String)],
) -> Vec<(OsString, OsString)> {
    let mut env = spec.env.clone();
    env.push((DURABLE_DIR_ENV.into(), durable_dir.into()));
    env.extend(
        endpoints
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env
}

/// Whether `key` is one of the harness's own variables, which a
/// deployment's process does not inherit from this one: its settings
/// (trials, recording, the upstream's key...) are none of the deployment's
/// business, and a deployment that can see them can tell it is under test.
/// Only what the harness sets for the child (the durable directory, the
/// model endpoint, the MCP fixture) reaches it, under the protocol's
/// variables, whose names and values say nothing of testing or of this
/// project. A served child keeps them: it is the adopter's own test binary,
/// which was started with them, and it re-runs that test up to its
/// `run_pack`, which must go as in the parent.
fn inherited_harness_var(spec: &ProcessSpec, key: &std::ffi::OsStr) -> bool {
    !spec.served && harness_setting(key)
}

/// Starts the child: forked by the spec's fork server when it has one that
/// works, spawned otherwise.
fn start(
    spec: &ProcessSpec,
    args: &[OsString],
    env: &[(OsString, OsString)],
    stdin_null: bool,
) -> std::io::Result<(Proc, Ends)> {
    #[cfg(unix)]
    if spec.forks() {
        if let Some(zygote) = super::zygote::for_spec(spec) {
            let pipes = super::zygote::pipes(stdin_null)?;
            let mut full: Vec<(OsString, OsString)> = std::env::vars_os()
                .filter(|(key, _)| !inherited_harness_var(spec, key))
                .collect();
            for (key, value) in env {
                full.retain(|(k, _)| k != key);
                full.push((key.clone(), value.clone()));
            }
            let mut argv = vec![spec.args[0].clone()];
            argv.extend(args.iter().skip(1).cloned());
            match zygote.fork(
                &argv,
                &full,
                spec.current_dir.as_deref(),
                pipes.child,
                spec.handshake_timeout,
            ) {
                Ok(forked) => {
                    let ends = Ends {
                        stdin: (!stdin_null)
                            .then(|| Box::new(pipes.stdin) as Box<dyn std::io::Write + Send>),
                        stdout: Box::new(pipes.stdout),
                        stderr: Box::new(pipes.stderr),
                    };
                    return Ok((Proc::Forked(forked), ends));
                }
                // Refused: forking is no longer safe there; spawn instead.
                Err(error) if error.kind() == std::io::ErrorKind::Unsupported => {
                    super::zygote::give_up(spec, &error);
                }
                Err(error) => return Err(error),
            }
        }
    }
    let mut command = Command::new(&spec.program);
    for (key, _) in std::env::vars_os().filter(|(key, _)| inherited_harness_var(spec, key)) {
        command.env_remove(key);
    }
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(if stdin_null {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &spec.current_dir {
        command.current_dir(dir);
    }
    #[cfg(unix)]
    {
        // Its own group, so a shell wrapper's children die with it and a
        // terminal's signals reach the harness, not the deployment.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let mut child = command.spawn()?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        kill_and_reap(&mut child);
        return Err(std::io::Error::other("the child's pipes were not created"));
    };
    let stdin = child
        .stdin
        .take()
        .map(|stdin| Box::new(stdin) as Box<dyn std::io::Write + Send>);
    let ends = Ends {
        stdin,
        stdout: Box::new(stdout),
        stderr: Box::new(stderr),
    };
    Ok((Proc::Spawned(child), ends))
}

/// A running child and the threads that serve its pipes.
pub(crate) struct Supervised {
    child: Proc,
    stdin: Option<Sender<Vec<u8>>>,
    events: Receiver<StdoutEvent>,
    stderr: StderrRing,
    status: Option<ExitStatus>,
}

impl Supervised {
    /// Spawns the child with the durable directory as a trailing
    /// `--durable-dir <path>` argument and in [`DURABLE_DIR_ENV`], and the
    /// trial's endpoints (the model endpoint in the variables SDKs read,
    /// the MCP fixture), if any.
    pub(crate) fn spawn(
        spec: &ProcessSpec,
        durable_dir: &Path,
        endpoints: &[(&'static str, String)],
    ) -> std::io::Result<Self> {
        let mut args = spec.args.clone();
        let mut env = child_env(spec, durable_dir, endpoints);
        let socket = match spec.channel {
            Channel::Stdio => {
                args.push(DURABLE_DIR_FLAG.into());
                args.push(durable_dir.into());
                None
            }
            Channel::Socket => {
                let socket = socket::Listening::bind()?;
                env.insert(0, (CHANNEL_ENV.into(), socket.path().into()));
                Some(socket)
            }
        };
        let (mut child, ends) = start(spec, &args, &env, socket.is_some())?;
        let Ends {
            stdin,
            stdout,
            stderr,
        } = ends;
        // Keep only as much stderr as a failure may quote: none unless the
        // adopter opted in (it may hold turn content), or the child serves
        // this binary (whose stderr before it connects is the test's or the
        // program's own, and says why it never connected). Either way the
        // pipe is drained, so a chatty child never blocks on it.
        let ring = StderrRing::new(match (spec.stderr_tail, spec.served) {
            (_, true) => spec.stderr_tail_bytes.max(SERVED_STDERR_BYTES),
            (true, false) => spec.stderr_tail_bytes,
            (false, false) => 0,
        });
        let (line_tx, line_rx) = mpsc::channel();
        let (event_tx, event_rx) = mpsc::channel();
        let started = pipes::spawn_stderr_drain(stderr, ring.clone()).and_then(|()| {
            match socket {
                None => match stdin {
                    Some(stdin) => pipes::spawn_stdin_writer(stdin, line_rx).and_then(|()| {
                        pipes::spawn_stdout_reader(stdout, spec.max_line_bytes, event_tx)
                    }),
                    None => Err(std::io::Error::other("the child's stdin was not created")),
                },
                Some(socket) => {
                    // The child's stdout is not the protocol's: drain it so
                    // the child never blocks on it, and keep nothing.
                    pipes::spawn_stderr_drain(stdout, StderrRing::new(0))?;
                    let stream = socket
                        .accept(&mut child, spec.handshake_timeout)
                        .map_err(|error| quoting_stderr(error, &ring, spec.stderr_tail_bytes))?;
                    let reader = stream.try_clone()?;
                    pipes::spawn_stdin_writer(stream, line_rx)?;
                    pipes::spawn_stdout_reader(reader, spec.max_line_bytes, event_tx)
                }
            }
        });
        if let Err(error) = started {
            child.kill_and_reap();
            return Err(error);
        }
        Ok(Self {
            child,
            stdin: Some(line_tx),
            events: event_rx,
            stderr: ring,
            status: None,
        })
    }

    /// The child's process id (also its process group id).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the child has exited (it stays unreaped until dropped).
    pub(crate) fn has_exited(&mut self) -> bool {
        self.status.is_some() || self.child.has_exited()
    }

    /// Queues one message for the child's stdin. Never blocks.
    pub(crate) fn send(&self, message: &HarnessMessage) {
        if let Some(stdin) = &self.stdin {
            // A closed queue means the writer saw the pipe break; the reader
            // will report the child's exit, which names the real cause.
            let _ = stdin.send(encode(message));
        }
    }

    /// Queues one raw line (newline included) for the child: for probing
    /// how a child treats what the typed messages cannot say.
    pub(crate) fn send_line(&self, line: Vec<u8>) {
        if let Some(stdin) = &self.stdin {
            let _ = stdin.send(line);
        }
    }

    /// Closes the child's input without a shutdown message.
    pub(crate) fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The child's next stdout event, waiting until `deadline` at most.
    pub(crate) fn next_event(&self, deadline: Instant) -> Result<StdoutEvent, Silence> {
        let wait = deadline.saturating_duration_since(Instant::now());
        self.events.recv_timeout(wait).map_err(|error| match error {
            RecvTimeoutError::Timeout => Silence::Timeout,
            RecvTimeoutError::Disconnected => Silence::Gone,
        })
    }

    /// At most `max_bytes` of what the child last wrote to stderr.
    pub(crate) fn stderr_tail(&self, max_bytes: usize) -> String {
        self.stderr.tail(max_bytes)
    }

    /// Waits up to `grace` for the child to exit on its own, without reaping
    /// it: an exited but unreaped child still holds its process group id, so
    /// the group can be killed afterwards without hitting a reused id.
    pub(crate) fn wait_for_exit(&mut self, grace: Duration) -> bool {
        let deadline = Instant::now() + grace;
        loop {
            if self.status.is_some() || self.child.has_exited() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Orderly shutdown: the shutdown message, end-of-file on stdin, `grace`
    /// to exit, then a kill. The child is reaped either way.
    pub(crate) fn shutdown(&mut self, grace: Duration) -> ExitStatus {
        if self.status.is_none() {
            self.send(&HarnessMessage::Shutdown);
        }
        self.stdin = None;
        self.wait_for_exit(grace);
        self.kill()
    }

    /// Kills the child's process group (so nothing it started outlives it)
    /// and the child itself, then reaps it. Idempotent.
    ///
    /// Its input closes only after the kill: a child blocked on the
    /// harness's answer (an injected crash kills it right after granting an
    /// effect) must not wake to an end of input first and run on. A
    /// framework that catches the broken pipe as a tool error would go on
    /// with its turn, calling the model or applying effects, until the
    /// signal landed.
    pub(crate) fn kill(&mut self) -> ExitStatus {
        let status = match self.status {
            Some(status) => status,
            None => self.child.kill_and_reap(),
        };
        self.status = Some(status);
        self.stdin = None;
        status
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `error` (a child that exited before it connected) followed by the last
/// of what the child wrote to stderr: a served child dies before it
/// connects only in the test's or program's own code before `run_pack` (a
/// panic, an `exit`), and its stderr is the only account of why. No turn
/// has run in it, so there is no turn content to quote.
fn quoting_stderr(error: std::io::Error, ring: &StderrRing, max_bytes: usize) -> std::io::Error {
    if error.kind() == std::io::ErrorKind::TimedOut {
        return error;
    }
    ring.wait_drained(Duration::from_millis(500));
    let kept = ring.tail(usize::MAX);
    // A panic's backtrace can push its message out of the last bytes:
    // quote from the panic's first line when there is one.
    let from = match kept.rfind("panicked at") {
        Some(at) => kept[..at].rfind('\n').map_or(0, |line| line + 1),
        None => kept.len().saturating_sub(max_bytes),
    };
    let boundary = |mut at: usize, step: fn(usize) -> usize| {
        while !kept.is_char_boundary(at) {
            at = step(at);
        }
        at
    };
    let from = boundary(from, |at| at + 1);
    let to = boundary((from + max_bytes).min(kept.len()), |at| at - 1);
    let tail = kept[from..to].trim();
    if tail.is_empty() {
        return std::io::Error::new(error.kind(), format!("{error}; it wrote nothing to stderr"));
    }
    std::io::Error::new(error.kind(), format!("{error}; its stderr:\n{tail}"))
}

/// Kills the whole group, then the child, then waits for it so no zombie
/// remains. The child is reaped last, so its id cannot have been reused by
/// the time the group is signalled.
fn kill_and_reap(child: &mut Child) -> ExitStatus {
    kill_group(child.id());
    let _ = child.kill();
    child.wait().unwrap_or_else(|_| failed_status())
}

/// Whether the child has exited, leaving it unreaped.
#[cfg(unix)]
fn has_exited(child: &mut Child) -> bool {
    let pid: libc::id_t = child.id();
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid(2), which
    // writes only into it; WNOWAIT leaves the child waitable for `wait`.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        libc::waitid(libc::P_PID, pid, &mut info, flags) == 0 && info.si_pid() != 0
    }
}

#[cfg(not(unix))]
fn has_exited(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(Some(_)))
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals that process group; it
        // touches no memory of ours and fails harmlessly when the group is gone.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

#[cfg(unix)]
fn kill_pid(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) touches no memory of ours; the child is unreaped,
        // so its id still names it.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The private socket a [`Channel::Socket`] child connects to.
#[cfg(unix)]
mod socket {
    use std::io;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::path::Path;
    use std::time::{Duration, Instant};

    use super::Proc;

    /// A listening socket in a directory of its own, removed when dropped.
    pub(super) struct Listening {
        listener: UnixListener,
        dir: tempfile::TempDir,
    }

    impl Listening {
        /// Binds a fresh socket. The directory lives under the scratch
        /// root, whose short path keeps the socket's within the platform's
        /// limit.
        pub(super) fn bind() -> io::Result<Self> {
            let dir = crate::scratch::tempdir("sock-")?;
            let listener = UnixListener::bind(dir.path().join("s"))?;
            listener.set_nonblocking(true)?;
            Ok(Self { listener, dir })
        }

        /// The socket's path, for the child's environment.
        pub(super) fn path(&self) -> std::path::PathBuf {
            self.dir.path().join("s")
        }

        /// Waits for the child to connect, giving up when it exits first or
        /// `limit` passes.
        pub(super) fn accept(self, child: &mut Proc, limit: Duration) -> io::Result<UnixStream> {
            let deadline = Instant::now() + limit;
            // A child connects within a millisecond or two when the machine
            // is idle, but can take seconds on a loaded one: the pause
            // between polls grows, so waiting does not burn the cores the
            // child needs to start.
            let mut pause = Duration::from_micros(100);
            loop {
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false)?;
                        return Ok(stream);
                    }
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                    Err(error) => return Err(error),
                }
                if let Some(status) = child.try_status() {
                    return Err(io::Error::other(format!(
                        "the child exited ({status}) before it connected"
                    )));
                }
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the child did not connect in time",
                    ));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        }
    }

    /// Whether `path` names a socket a child can connect to.
    #[allow(dead_code)]
    pub(super) fn exists(path: &Path) -> bool {
        path.exists()
    }
}

#[cfg(not(unix))]
mod socket {
    use std::io;
    use std::time::Duration;

    use super::Proc;

    /// Sockets are Unix-only; a socket channel cannot start elsewhere.
    pub(super) struct Listening;

    impl Listening {
        pub(super) fn bind() -> io::Result<Self> {
            Err(io::Error::other("a socket channel needs a Unix platform"))
        }
        pub(super) fn path(&self) -> std::path::PathBuf {
            std::path::PathBuf::new()
        }
        pub(super) fn accept(self, _: &mut Proc, _: Duration) -> io::Result<std::fs::File> {
            Err(io::Error::other("a socket channel needs a Unix platform"))
        }
    }
}
