//! One supervised child process: spawned in its own process group with every
//! pipe drained on a thread, shut down in order, killed when it lingers, and
//! always reaped.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use super::pipes::{self, StderrRing, StdoutEvent};
use super::protocol::{encode, HarnessMessage};
use super::spec::{Channel, ProcessSpec, CHANNEL_ENV};

/// How much of a served child's stderr is kept, so a child that dies before
/// it connects can be quoted from its panic's first line on.
const SERVED_STDERR_BYTES: usize = 16 << 10;

/// The environment variable that carries the trial's durable directory.
pub const DURABLE_DIR_ENV: &str = "SYMFONIC_EVALS_DURABLE_DIR";
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

/// A running child and the threads that serve its pipes.
pub(crate) struct Supervised {
    child: Child,
    stdin: Option<Sender<Vec<u8>>>,
    events: Receiver<StdoutEvent>,
    stderr: StderrRing,
    status: Option<ExitStatus>,
}

impl Supervised {
    /// Spawns the child with the durable directory as a trailing
    /// `--durable-dir <path>` argument and in [`DURABLE_DIR_ENV`], and the
    /// trial's model endpoint (if any) in the variables SDKs read.
    pub(crate) fn spawn(
        spec: &ProcessSpec,
        durable_dir: &Path,
        model_url: Option<&str>,
    ) -> std::io::Result<Self> {
        let mut command = Command::new(&spec.program);
        command.args(&spec.args);
        let socket = match spec.channel {
            Channel::Stdio => {
                command.arg(DURABLE_DIR_FLAG).arg(durable_dir);
                command.stdin(Stdio::piped());
                None
            }
            Channel::Socket => {
                let socket = socket::Listening::bind()?;
                command.env(CHANNEL_ENV, socket.path());
                command.stdin(Stdio::null());
                Some(socket)
            }
        };
        command
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env(DURABLE_DIR_ENV, durable_dir)
            // Model replay: after the spec's own variables, so the child
            // cannot be pointed past the endpoint by accident.
            .envs(model_url.map(crate::replay::child_env).unwrap_or_default())
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
                None => match child.stdin.take() {
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
            kill_and_reap(&mut child);
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
            if self.status.is_some() || has_exited(&mut self.child) {
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
    pub(crate) fn kill(&mut self) -> ExitStatus {
        self.stdin = None;
        if let Some(status) = self.status {
            return status;
        }
        let status = kill_and_reap(&mut self.child);
        self.status = Some(status);
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
fn failed_status() -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(libc::SIGKILL)
}

#[cfg(windows)]
fn failed_status() -> ExitStatus {
    std::os::windows::process::ExitStatusExt::from_raw(1)
}

/// The private socket a [`Channel::Socket`] child connects to.
#[cfg(unix)]
mod socket {
    use std::io;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::path::Path;
    use std::process::Child;
    use std::time::{Duration, Instant};

    /// A listening socket in a directory of its own, removed when dropped.
    pub(super) struct Listening {
        listener: UnixListener,
        dir: tempfile::TempDir,
    }

    impl Listening {
        /// Binds a fresh socket. The directory lives under the system's
        /// temporary directory, whose short path keeps the socket's within
        /// the platform's limit.
        pub(super) fn bind() -> io::Result<Self> {
            let dir = tempfile::Builder::new().prefix("se-").tempdir()?;
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
        pub(super) fn accept(self, child: &mut Child, limit: Duration) -> io::Result<UnixStream> {
            let deadline = Instant::now() + limit;
            loop {
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false)?;
                        return Ok(stream);
                    }
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                    Err(error) => return Err(error),
                }
                if let Ok(Some(status)) = child.try_wait() {
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
                std::thread::sleep(Duration::from_micros(200));
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
    use std::process::Child;
    use std::time::Duration;

    /// Sockets are Unix-only; a socket channel cannot start elsewhere.
    pub(super) struct Listening;

    impl Listening {
        pub(super) fn bind() -> io::Result<Self> {
            Err(io::Error::other("a socket channel needs a Unix platform"))
        }
        pub(super) fn path(&self) -> std::path::PathBuf {
            std::path::PathBuf::new()
        }
        pub(super) fn accept(self, _: &mut Child, _: Duration) -> io::Result<std::fs::File> {
            Err(io::Error::other("a socket channel needs a Unix platform"))
        }
    }
}
