//! Serving a Rust deployment to the harness from a child process: the other
//! end of [`ProcessTarget`] for a deployment built by the test binary
//! itself.
//!
//! When a pack runs isolated, the harness re-executes the current binary
//! (filtered to the one test) with [`SERVE_RUN_ENV`] naming the pack run and
//! [`CHANNEL_ENV`] naming a private socket. The
//! test runs again up to its `run_pack`, which finds the variables and,
//! instead of judging, serves the deployment its factory builds: the
//! protocol's hello, ready, turns and shutdown over the socket, with a ledger
//! that proxies every effect to the harness. Whatever the deployment keeps in
//! statics dies with this process, so a restart is a real one.

use std::io::{BufRead, BufReader, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, PoisonError};

use super::super::quiet_panics::{panic_text, WORKER_PREFIX};
use super::super::worker::{Factory, TRIAL_STACK};
use crate::evidence::{TurnError, TurnRecord};
use crate::ledger::{Applied, EffectCall, LedgerPeer, SideEffectLedger, Witness};
use crate::process::protocol::{ChildMessage, HarnessMessage, PROTOCOL_VERSION};
#[cfg(doc)]
use crate::process::{ProcessTarget, CHANNEL_ENV};
use crate::process::{PANICKED_CODE, SERVE_RUN_ENV, TOO_DEEP_CODE};
use crate::target::{Target, TargetContext};

/// The pack run this process was started to serve, if it was: the digest
/// of its name (see [`serve_run_value`]) and which of the calling thread's
/// runs under that name it is.
pub(crate) fn requested_run() -> Option<(String, u32)> {
    let run = std::env::var(SERVE_RUN_ENV)
        .ok()
        .filter(|run| !run.is_empty())?;
    let (occurrence, name) = run.split_once(':')?;
    Some((name.to_owned(), occurrence.parse().ok()?))
}

/// What the child's variable calls pack run `name`: a digest, so the
/// variable's value carries neither the adopter's names nor the pack's,
/// and a deployment reading it learns nothing of what is run.
pub(crate) fn run_digest(name: &str) -> String {
    let mut digest = crate::redact::sha256_hex(name.as_bytes());
    digest.truncate(16);
    digest
}

/// The value of [`SERVE_RUN_ENV`] for the `occurrence`-th run (from 0) of
/// pack run `name` on the calling thread: a test that runs one pack twice
/// under one name is served each time by the run it made.
pub(crate) fn serve_run_value(name: &str, occurrence: u32) -> String {
    format!("{occurrence}:{}", run_digest(name))
}

/// Serves the deployment `factory` builds until the harness shuts it down,
/// then ends the process: nothing after the test's `run_pack` may run in a
/// served child.
pub(crate) fn serve(factory: &Factory) -> ! {
    let factory = Arc::clone(factory);
    // The deployment runs on a thread with a trial's roomy stack, as it
    // would in process, and its panics are reported, never printed.
    let served = std::thread::Builder::new()
        .name(format!("{WORKER_PREFIX}serve"))
        .stack_size(TRIAL_STACK)
        .spawn(move || serve_until_shutdown(&factory))
        .map(|thread| thread.join());
    let code = match served {
        Ok(Ok(Ok(()))) => 0,
        _ => 70,
    };
    std::process::exit(code)
}

/// One line to the harness.
type Writer = Arc<Mutex<Box<dyn Write + Send>>>;

fn send(writer: &Writer, message: &ChildMessage) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
    writer.write_all(&line)?;
    writer.flush()
}

/// The harness's side of this child's ledger: every effect is asked for
/// over the channel, and the turn waits for the answer.
struct Peer {
    writer: Writer,
    results: Mutex<Receiver<(String, bool)>>,
    request: AtomicU64,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").finish_non_exhaustive()
    }
}

impl LedgerPeer for Peer {
    fn apply(&self, key: &str, call: EffectCall<'_>) -> Applied {
        let id = self.request.load(Ordering::SeqCst);
        let asked = ChildMessage::LedgerApply {
            id,
            key: key.to_owned(),
            tool: call.tool.map(str::to_owned),
            arguments: call.arguments.cloned(),
        };
        if send(&self.writer, &asked).is_err() {
            // The harness is gone; nothing this child does counts any more.
            std::process::exit(70);
        }
        let results = self.results.lock().unwrap_or_else(PoisonError::into_inner);
        match results.recv() {
            Ok((answered, true)) if answered == key => Applied::Applied,
            Ok((answered, false)) if answered == key => Applied::Duplicate,
            // An answer for another key, or none: the harness broke off.
            _ => std::process::exit(70),
        }
    }

    fn witness(&self, witness: &Witness) {
        let message = ChildMessage::Witness {
            id: self.request.load(Ordering::SeqCst),
            tool: witness.tool.clone(),
            arguments: witness.arguments.clone(),
            outcome: witness.outcome.clone(),
        };
        let _ = send(&self.writer, &message);
    }
}

/// A turn that panicked, as the error the harness reports as a panic.
fn panicked(payload: &(dyn std::any::Any + Send), during: &str) -> TurnError {
    TurnError::new("TargetPanicked", format!("{during}{}", panic_text(payload)))
        .with_code(PANICKED_CODE)
}

fn answer(id: u64, result: std::thread::Result<Result<TurnRecord, TurnError>>) -> ChildMessage {
    match result {
        // Measured before it is serialised: the harness would refuse it, and
        // writing it out would walk every level.
        Ok(Ok(record)) => match record.too_deep_at() {
            None => ChildMessage::TurnRecord { id, record },
            Some(at) => {
                record.dismantle();
                let message = format!(
                    "{at} nests deeper than {} levels, more than the harness reads",
                    crate::evidence::MAX_JSON_DEPTH
                );
                ChildMessage::TurnError {
                    id,
                    error: TurnError::new("EvidenceTooDeep", message).with_code(TOO_DEEP_CODE),
                }
            }
        },
        Ok(Err(error)) => ChildMessage::TurnError { id, error },
        Err(payload) => ChildMessage::TurnError {
            id,
            error: panicked(&*payload, ""),
        },
    }
}

#[cfg(unix)]
fn connect() -> std::io::Result<(Box<dyn std::io::Read + Send>, Box<dyn Write + Send>)> {
    let path = std::env::var_os(crate::process::CHANNEL_ENV)
        .ok_or_else(|| std::io::Error::other("no channel to serve on"))?;
    let stream = std::os::unix::net::UnixStream::connect(path)?;
    Ok((Box::new(stream.try_clone()?), Box::new(stream)))
}

#[cfg(not(unix))]
fn connect() -> std::io::Result<(Box<dyn std::io::Read + Send>, Box<dyn Write + Send>)> {
    Err(std::io::Error::other("serving needs a Unix platform"))
}

fn serve_until_shutdown(factory: &Factory) -> std::io::Result<()> {
    let (reader, writer) = connect()?;
    let writer: Writer = Arc::new(Mutex::new(writer));
    let (requests_tx, requests) = mpsc::channel::<HarnessMessage>();
    let (results_tx, results) = mpsc::channel::<(String, bool)>();
    std::thread::Builder::new()
        .name("serve-reader".into())
        .spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { return };
                let Ok(message) = serde_json::from_str::<HarnessMessage>(&line) else {
                    return;
                };
                let routed = match message {
                    HarnessMessage::LedgerResult { key, applied, .. } => {
                        results_tx.send((key, applied)).is_ok()
                    }
                    other => requests_tx.send(other).is_ok(),
                };
                if !routed {
                    return;
                }
            }
        })?;
    let Ok(HarnessMessage::Hello {
        durable_dir,
        trial,
        clock_offset_ms,
        ..
    }) = requests.recv()
    else {
        return Ok(());
    };
    let peer = Arc::new(Peer {
        writer: Arc::clone(&writer),
        results: Mutex::new(results),
        request: AtomicU64::new(0),
    });
    let mut context = TargetContext::served(
        durable_dir.into(),
        trial,
        SideEffectLedger::proxy(peer.clone()),
    )
    .with_clock_offset(std::time::Duration::from_millis(clock_offset_ms));
    if let Ok(url) = std::env::var(crate::replay::MODEL_URL_ENV) {
        context = context.with_model_url(url);
    }
    if let Ok(url) = std::env::var(crate::mcp::MCP_URL_ENV) {
        context = context.with_mcp_url(url);
    }
    if let Ok(address) = std::env::var(crate::mcp::MCP_STDIO_ADDR_ENV) {
        context = context.with_mcp_stdio(address);
    }
    let mut target = match catch_unwind(AssertUnwindSafe(|| factory(&context))) {
        Ok(Ok(target)) => target,
        Ok(Err(error)) => return send(&writer, &ChildMessage::TurnError { id: 0, error }),
        Err(payload) => {
            let error = panicked(&*payload, "");
            return send(&writer, &ChildMessage::TurnError { id: 0, error });
        }
    };
    let capabilities = catch_unwind(AssertUnwindSafe(|| target.capabilities()));
    let Ok(capabilities) = capabilities else {
        let error = TurnError::new("TargetPanicked", "declaring capabilities panicked")
            .with_code(PANICKED_CODE);
        return send(&writer, &ChildMessage::TurnError { id: 0, error });
    };
    send(
        &writer,
        &ChildMessage::Ready {
            protocol_version: PROTOCOL_VERSION,
            capabilities,
        },
    )?;
    while let Ok(message) = requests.recv() {
        let (id, result) = match message {
            HarnessMessage::Prompt { id, request } => {
                peer.request.store(id, Ordering::SeqCst);
                (
                    id,
                    catch_unwind(AssertUnwindSafe(|| target.run_turn(&request))),
                )
            }
            HarnessMessage::Resume { id, request } => {
                peer.request.store(id, Ordering::SeqCst);
                (
                    id,
                    catch_unwind(AssertUnwindSafe(|| target.resume(&request))),
                )
            }
            HarnessMessage::Review { id, request } => {
                peer.request.store(id, Ordering::SeqCst);
                (
                    id,
                    catch_unwind(AssertUnwindSafe(|| target.review_procedure(&request))),
                )
            }
            HarnessMessage::Reset { id, request } => {
                peer.request.store(id, Ordering::SeqCst);
                (
                    id,
                    catch_unwind(AssertUnwindSafe(|| target.reset(&request))),
                )
            }
            HarnessMessage::Shutdown => break,
            HarnessMessage::Hello { .. } | HarnessMessage::LedgerResult { .. } => continue,
        };
        send(&writer, &answer(id, result))?;
    }
    // A drop that panics ends the process like any other exit: the harness
    // has every answer it asked for.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(target)));
    Ok(())
}
