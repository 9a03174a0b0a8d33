//! The fork server: a Python interpreter that imported the deployment's
//! modules once and forks a fresh child for every start and restart.
//!
//! A framework deployment can take seconds to import, and a pack starts it
//! again for every trial and restart. Forking an interpreter that already
//! imported everything costs milliseconds, and the child is still a new
//! process with nothing of the previous child in memory: its own pipes,
//! process group, environment and durable directory. The zygote
//! (`zygote.py`, standard library only) is started once per interpreter,
//! script, environment and working directory, and lives as long as this
//! process. When it cannot fork safely (a thread started at import, the
//! import failed) the harness starts fresh interpreters and says so once.
//!
//! Each child stays unreaped in the zygote until the harness releases it,
//! so its process and group ids are never reused while the harness may
//! still signal them, as with a spawned child the harness reaps itself.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::spec::ProcessSpec;

/// The zygote's source, run with `-c`.
const SOURCE: &str = include_str!("zygote.py");

/// The largest packet either side sends.
const PACKET: usize = 1 << 20;

/// What one zygote serves: children of these share their imports.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    program: OsString,
    script: OsString,
    preload: Vec<String>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
}

/// A running zygote, shared by every child it forked.
pub(crate) struct Zygote {
    control: OwnedFd,
    /// One fork request at a time, each waiting for the reply with its id.
    requests: Mutex<(u64, Receiver<Reply>)>,
    /// Children's exit statuses as the zygote reports them, and whether the
    /// zygote is still there to report them.
    exits: Arc<(Mutex<Exits>, Condvar)>,
    _process: Mutex<Child>,
}

#[derive(Default)]
struct Exits {
    statuses: HashMap<u32, ExitStatus>,
    /// Children the zygote reaped on release, until their handle sees it.
    released: std::collections::HashSet<u32>,
    zygote_gone: bool,
}

/// A fork request's answer: its id, and the child's process id or why not.
type Reply = (Option<u64>, Result<u32, String>);

type Registry = Mutex<HashMap<Key, Option<Arc<Zygote>>>>;

fn registry() -> &'static Registry {
    static ZYGOTES: OnceLock<Registry> = OnceLock::new();
    ZYGOTES.get_or_init(Registry::default)
}

/// The zygote for `spec`, started on first use; `None` when the spec's
/// deployment cannot be forked (said once on stderr), so the caller spawns.
pub(crate) fn for_spec(spec: &ProcessSpec) -> Option<Arc<Zygote>> {
    let key = key_of(spec)?;
    let mut zygotes = registry().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = zygotes.get(&key) {
        return known.clone();
    }
    let started = Zygote::start(&key, spec.handshake_timeout);
    if let Err(why) = &started {
        eprintln!(
            "symfonic-evals: no fork server for {}: {why}; every start is a fresh interpreter",
            std::path::Path::new(&key.script).display()
        );
    }
    let zygote = started.ok().map(Arc::new);
    zygotes.insert(key, zygote.clone());
    zygote
}

/// Stops forking `spec`'s deployment after its fork server refused a fork
/// (an import it learned started a thread, or `fork` failed): every later
/// start is a fresh interpreter, said once on stderr.
pub(crate) fn give_up(spec: &ProcessSpec, why: &io::Error) {
    let Some(key) = key_of(spec) else { return };
    let mut zygotes = registry().lock().unwrap_or_else(PoisonError::into_inner);
    if zygotes.insert(key.clone(), None).flatten().is_some() {
        eprintln!(
            "symfonic-evals: the fork server for {} stopped forking: {why}; every start from now on is a fresh interpreter",
            std::path::Path::new(&key.script).display()
        );
    }
}

fn key_of(spec: &ProcessSpec) -> Option<Key> {
    Some(Key {
        program: spec.program.clone(),
        script: spec.args.first()?.clone(),
        preload: spec.preload.clone(),
        env: spec.env.clone(),
        cwd: spec.current_dir.clone(),
    })
}

impl Zygote {
    fn start(key: &Key, limit: Duration) -> Result<Self, String> {
        let (ours, theirs) = seqpacket_pair().map_err(|e| format!("no control socket: {e}"))?;
        let mut command = Command::new(&key.program);
        command
            .arg("-c")
            .arg(SOURCE)
            .arg(&key.script)
            .args(&key.preload)
            .envs(key.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // A forked child's process keeps the environment its fork server
        // started with (`/proc/self/environ`), so the harness's own
        // settings (an upstream's key among them) never reach the server.
        for (name, _) in std::env::vars_os().filter(|(name, _)| super::spec::harness_setting(name))
        {
            command.env_remove(name);
        }
        if let Some(dir) = &key.cwd {
            command.current_dir(dir);
        }
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut process = command
            .spawn()
            .map_err(|e| format!("the interpreter did not start: {e}"))?;
        let ready = recv_packet(&ours, Some(limit))
            .map_err(|e| e.to_string())
            .and_then(|packet| packet.ok_or_else(|| "it exited before it was ready".to_owned()))
            .and_then(|packet| {
                let reply: Value = serde_json::from_slice(&packet)
                    .map_err(|_| "it answered something other than JSON".to_owned())?;
                match reply.get("ready") {
                    Some(Value::Bool(true)) => Ok(()),
                    _ => Err(reply
                        .get("why")
                        .and_then(Value::as_str)
                        .unwrap_or("it refused")
                        .to_owned()),
                }
            });
        if let Err(why) = ready {
            let _ = process.kill();
            let _ = process.wait();
            return Err(why);
        }
        let exits = Arc::new((Mutex::new(Exits::default()), Condvar::new()));
        let (replies, requests) = mpsc::channel();
        let reader = ours.try_clone().map_err(|e| e.to_string())?;
        let shared = Arc::clone(&exits);
        std::thread::Builder::new()
            .name("symfonic-evals-zygote".into())
            .spawn(move || read_replies(&reader, &replies, &shared))
            .map_err(|e| e.to_string())?;
        Ok(Self {
            control: ours,
            requests: Mutex::new((0, requests)),
            exits,
            _process: Mutex::new(process),
        })
    }

    /// Forks a child running the script with `argv` (the script first),
    /// exactly `env` and `cwd`, on the three descriptors given (standard
    /// input, output and error); waits `limit` at most for its id.
    pub(crate) fn fork(
        self: &Arc<Self>,
        argv: &[OsString],
        env: &[(OsString, OsString)],
        cwd: Option<&std::path::Path>,
        fds: [OwnedFd; 3],
        limit: Duration,
    ) -> io::Result<Forked> {
        let text = |s: &std::ffi::OsStr| String::from_utf8_lossy(s.as_bytes()).into_owned();
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.0 += 1;
        let id = requests.0;
        let request = json!({
            "id": id,
            "argv": argv.iter().map(|a| text(a)).collect::<Vec<_>>(),
            "env": env.iter().map(|(k, v)| (text(k), Value::String(text(v)))).collect::<serde_json::Map<_, _>>(),
            "cwd": cwd.map(|dir| text(dir.as_os_str())),
        });
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        send_with_fds(&self.control, request.to_string().as_bytes(), &raw)?;
        // The zygote holds its own copies now.
        drop(fds);
        let deadline = Instant::now() + limit;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match requests.1.recv_timeout(wait) {
                // A late answer to an earlier request that gave up.
                Ok((answered, _)) if answered != Some(id) => continue,
                Ok((_, Ok(pid))) => {
                    return Ok(Forked {
                        pid,
                        zygote: Arc::clone(self),
                        status: None,
                    })
                }
                Ok((_, Err(why))) => {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        format!("the fork server refused: {why}"),
                    ))
                }
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the fork server did not answer in time",
                    ))
                }
            }
        }
    }
}

/// Reads the zygote's packets until it is gone: fork replies to the waiting
/// request, exit statuses to the shared table.
fn read_replies(control: &OwnedFd, replies: &Sender<Reply>, exits: &(Mutex<Exits>, Condvar)) {
    while let Ok(Some(packet)) = recv_packet(control, None) {
        let Ok(reply) = serde_json::from_slice::<Value>(&packet) else {
            continue;
        };
        let pid = |field: &str| reply.get(field).and_then(Value::as_u64).map(|p| p as u32);
        if let Some(child) = pid("exited") {
            let raw = match (reply.get("code"), reply.get("signal")) {
                (Some(code), _) => (code.as_i64().unwrap_or(255) as i32 & 0xff) << 8,
                (None, Some(signal)) => signal.as_i64().unwrap_or(9) as i32 & 0x7f,
                (None, None) => 255 << 8,
            };
            let (table, changed) = exits;
            let mut table = table.lock().unwrap_or_else(PoisonError::into_inner);
            table
                .statuses
                .insert(child, std::os::unix::process::ExitStatusExt::from_raw(raw));
            changed.notify_all();
        } else if let Some(child) = pid("released") {
            let (table, changed) = exits;
            let mut table = table.lock().unwrap_or_else(PoisonError::into_inner);
            table.released.insert(child);
            changed.notify_all();
        } else if let Some(child) = pid("forked") {
            let _ = replies.send((reply.get("id").and_then(Value::as_u64), Ok(child)));
        } else if let Some(why) = reply.get("error").and_then(Value::as_str) {
            let id = reply.get("id").and_then(Value::as_u64);
            let _ = replies.send((id, Err(why.to_owned())));
        }
    }
    let (table, changed) = exits;
    table
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .zygote_gone = true;
    changed.notify_all();
}

/// A child the zygote forked: signalled by this process, reaped by the
/// zygote once released.
pub(crate) struct Forked {
    pid: u32,
    zygote: Arc<Zygote>,
    status: Option<ExitStatus>,
}

impl Forked {
    /// The child's process id (also its process group id).
    pub(crate) fn id(&self) -> u32 {
        self.pid
    }

    /// How the child ended, if it has; it stays unreaped until [`wait`].
    ///
    /// [`wait`]: Self::wait
    pub(crate) fn try_status(&self) -> Option<ExitStatus> {
        if self.status.is_some() {
            return self.status;
        }
        let table = self
            .zygote
            .exits
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        table
            .statuses
            .get(&self.pid)
            .copied()
            .or_else(|| table.zygote_gone.then(super::status::failed_status))
    }

    /// Waits for the child to end, then has the zygote reap it and waits
    /// for that too, so no zombie is left once this returns.
    pub(crate) fn wait(&mut self) -> ExitStatus {
        if let Some(status) = self.status {
            return status;
        }
        let pid = self.pid;
        let status = self
            .wait_for(|table| table.statuses.remove(&pid))
            .unwrap_or_else(super::status::failed_status);
        let release = json!({ "release": pid }).to_string();
        if send_with_fds(&self.zygote.control, release.as_bytes(), &[]).is_ok() {
            self.wait_for(|table| table.released.remove(&pid).then_some(()));
        }
        self.status = Some(status);
        status
    }

    /// Waits until `seen` finds what it looks for in the zygote's reports;
    /// `None` when the zygote is gone or a minute passed.
    fn wait_for<T>(&self, mut seen: impl FnMut(&mut Exits) -> Option<T>) -> Option<T> {
        let (table, changed) = &*self.zygote.exits;
        let mut table = table.lock().unwrap_or_else(PoisonError::into_inner);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(found) = seen(&mut table) {
                return Some(found);
            }
            if table.zygote_gone || Instant::now() >= deadline {
                return None;
            }
            table = changed
                .wait_timeout(table, Duration::from_millis(50))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// The three pipes of a forked child: the child's ends (to hand to the
/// zygote) and ours (stdin to write, stdout and stderr to read).
pub(crate) struct Pipes {
    pub(crate) child: [OwnedFd; 3],
    pub(crate) stdin: File,
    pub(crate) stdout: File,
    pub(crate) stderr: File,
}

/// Fresh pipes for a forked child; `stdin_null` gives it `/dev/null` as
/// its input instead (a socket-channel child).
pub(crate) fn pipes(stdin_null: bool) -> io::Result<Pipes> {
    let (in_read, in_write) = pipe()?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let input = if stdin_null {
        OwnedFd::from(File::open("/dev/null")?)
    } else {
        in_read
    };
    Ok(Pipes {
        child: [input, out_write, err_write],
        stdin: File::from(in_write),
        stdout: File::from(out_read),
        stderr: File::from(err_read),
    })
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [libc::c_int; 2] = [0; 2];
    // SAFETY: pipe2(2) writes two descriptors into the array on success;
    // both are then owned here alone.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [libc::c_int; 2] = [0; 2];
    // SAFETY: socketpair(2) writes two descriptors into the array on
    // success; both are then owned here alone.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// Sends one packet carrying `fds` as `SCM_RIGHTS`.
fn send_with_fds(socket: &OwnedFd, data: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let payload = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(payload as u32) } as usize;
    let mut control = vec![0u8; if fds.is_empty() { 0 } else { space }];
    // SAFETY: a zeroed msghdr is valid; every pointer set below points into
    // `iov`, `control` or `fds`, which outlive the sendmsg(2) call, and the
    // control buffer is CMSG_SPACE bytes, room for one header and the fds.
    unsafe {
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        if !fds.is_empty() {
            message.msg_control = control.as_mut_ptr().cast();
            message.msg_controllen = space as _;
            let header = libc::CMSG_FIRSTHDR(&message);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(payload as u32) as _;
            std::ptr::copy_nonoverlapping(
                fds.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(header),
                payload,
            );
        }
        if libc::sendmsg(socket.as_raw_fd(), &message, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one packet, waiting `limit` at most (forever when `None`);
/// `None` at end of stream.
fn recv_packet(socket: &OwnedFd, limit: Option<Duration>) -> io::Result<Option<Vec<u8>>> {
    if let Some(limit) = limit {
        let mut poll = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(limit.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: poll(2) reads and writes only the one pollfd given.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready < 0 {
            return Err(io::Error::last_os_error());
        }
        if ready == 0 {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the fork server was not ready in time",
            ));
        }
    }
    let mut buffer = vec![0u8; PACKET];
    loop {
        // SAFETY: recv(2) writes at most `buffer.len()` bytes into it.
        let read = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                0,
            )
        };
        if read < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        if read == 0 {
            return Ok(None);
        }
        buffer.truncate(read as usize);
        return Ok(Some(buffer));
    }
}
