//! The model endpoint: one [`ReplaySession`] per pack run (the cassette,
//! the pending file, the upstream), one [`ModelEndpoint`] per trial (a
//! loopback HTTP server answering in that trial's scope).

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{json, Value};

use super::canonical::{volatile_paths, CanonicalRequest, VolatilePath};
use super::cassette::{
    Cassette, Exchange, Lookup, PendingWriter, RecordedRequest, RecordedResponse,
};
use super::config::{ReplayConfig, ReplaySettings};
use super::error::{MissReason, ReplayError, ReplayMiss};
use super::mode::ReplayMode;
use super::record::Forwarder;
use super::scrub::Scrubber;
use super::server::{Handler, HttpServer, Request, Responder};
use super::sse::{frame, is_event_stream, EventSplitter};
use super::stream_scrub::scrub_events;
use super::target::{check_origin_form, shown_path};

/// A method as messages show it: the standard ones verbatim, anything else
/// (client input) digested.
fn shown_method(method: &str) -> String {
    const STANDARD: &[&str] = &["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
    if STANDARD.contains(&method) {
        method.to_owned()
    } else {
        format!(
            "<method {}>",
            crate::redact::short_digest(method.as_bytes())
        )
    }
}

/// One pack run's replay state, shared by the endpoints of its trials.
#[derive(Debug)]
pub struct ReplaySession {
    settings: ReplaySettings,
    cassette: Cassette,
    /// In replay mode: what waits for review, so a miss can say so.
    pending: Option<Cassette>,
    writer: Option<Arc<PendingWriter>>,
    forwarder: Option<Forwarder>,
    volatile: Vec<VolatilePath>,
    scrubber: Scrubber,
}

/// Pending writers by path, so every session of one process that records
/// into the same pending file shares one writer (and truncates it once).
fn writer_for(path: &Path) -> Arc<PendingWriter> {
    static WRITERS: OnceLock<Mutex<HashMap<PathBuf, Arc<PendingWriter>>>> = OnceLock::new();
    let mut writers = WRITERS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    Arc::clone(
        writers
            .entry(path.to_owned())
            .or_insert_with(|| Arc::new(PendingWriter::new(path.to_owned()))),
    )
}

impl ReplaySession {
    /// Opens the session for the pack run `pack`, resolving `config`
    /// against the environment. `None` when the mode is
    /// [`ReplayMode::Off`].
    ///
    /// # Errors
    ///
    /// Any [`ReplayError`] of resolution (`RecordingRefusedInCi`, ...) or of
    /// loading the cassette (`CassetteMalformed` with file and line).
    pub fn open(pack: &str, config: &ReplayConfig) -> Result<Option<Arc<Self>>, ReplayError> {
        let settings = ReplaySettings::resolve(pack, config)?;
        if settings.mode == ReplayMode::Off {
            return Ok(None);
        }
        Self::with_settings(settings).map(|s| Some(Arc::new(s)))
    }

    /// Opens a session on settings resolved elsewhere.
    ///
    /// # Errors
    ///
    /// As [`Self::open`].
    pub fn with_settings(settings: ReplaySettings) -> Result<Self, ReplayError> {
        let cassette = Cassette::load(&settings.cassette, &settings.volatile_fields)?;
        let forwarder = match (&settings.upstream, settings.mode.records()) {
            (Some(upstream), true) => Some(Forwarder::new(upstream.clone())?),
            (None, true) => return Err(ReplayError::NoUpstream),
            _ => None,
        };
        let pending = if settings.mode == ReplayMode::Replay && settings.pending.exists() {
            Some(Cassette::load(
                &settings.pending,
                &settings.volatile_fields,
            )?)
        } else {
            None
        };
        let writer = settings
            .mode
            .records()
            .then(|| writer_for(&settings.pending));
        let literals: Vec<String> = forwarder
            .as_ref()
            .and_then(Forwarder::key)
            .map(str::to_owned)
            .into_iter()
            .collect();
        Ok(Self {
            volatile: volatile_paths(&settings.volatile_fields),
            scrubber: Scrubber::new(&settings.scrub_patterns, &literals),
            cassette,
            pending,
            writer,
            forwarder,
            settings,
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &ReplaySettings {
        &self.settings
    }

    /// The reviewed cassette.
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// Starts the endpoint of trial `trial` of `scenario`.
    ///
    /// # Errors
    ///
    /// `EndpointBindFailed` when no loopback port can be opened.
    pub fn start(
        self: &Arc<Self>,
        scenario: &str,
        trial: u32,
    ) -> Result<ModelEndpoint, ReplayError> {
        let state = Arc::new(TrialState {
            session: Arc::clone(self),
            scenario: scenario.to_owned(),
            trial,
            ordinals: Mutex::new(HashMap::new()),
            step: Mutex::new(None),
            failures: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
        });
        let server = HttpServer::start(
            Arc::clone(&state) as Arc<dyn Handler>,
            "symfonic-evals-model",
        )
        .map_err(|e| ReplayError::Bind(e.to_string()))?;
        Ok(ModelEndpoint {
            url: server.url(),
            server,
            state,
        })
    }
}

/// The most failures kept for one step (see
/// [`ModelEndpoint::take_failures`]); later ones are answered as before,
/// and not kept.
pub const MAX_FAILURES_KEPT: usize = 64;

/// What went wrong at the endpoint during a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointFailure {
    /// A request the cassette could not answer.
    Miss(ReplayMiss),
    /// Recording failed (the upstream, the pending file).
    Error(ReplayError),
}

impl std::fmt::Display for EndpointFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Miss(miss) => miss.fmt(f),
            Self::Error(error) => error.fmt(f),
        }
    }
}

/// One trial's model endpoint: a loopback HTTP server speaking the model
/// APIs from the cassette (and, recording, from the upstream). Dropping it
/// stops the server.
pub struct ModelEndpoint {
    url: String,
    state: Arc<TrialState>,
    #[allow(dead_code)] // held for its Drop, which stops the server
    server: HttpServer,
}

impl std::fmt::Debug for ModelEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelEndpoint")
            .field("url", &self.url)
            .field("scenario", &self.state.scenario)
            .field("trial", &self.state.trial)
            .finish_non_exhaustive()
    }
}

impl ModelEndpoint {
    /// `http://127.0.0.1:<port>`: the base URL. OpenAI clients take
    /// `<url>/v1`, Anthropic clients `<url>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Names the step now running, so a miss can say during which step it
    /// happened.
    pub fn set_step(&self, label: Option<&str>) {
        *lock(&self.state.step) = label.map(str::to_owned);
    }

    /// Every failure since the last call, oldest first (the first
    /// [`MAX_FAILURES_KEPT`]; a step fails on its first).
    pub fn take_failures(&self) -> Vec<EndpointFailure> {
        std::mem::take(&mut *lock(&self.state.failures))
    }

    /// How many requests the endpoint has received.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

struct TrialState {
    session: Arc<ReplaySession>,
    scenario: String,
    trial: u32,
    ordinals: Mutex<HashMap<String, u32>>,
    step: Mutex<Option<String>>,
    failures: Mutex<Vec<EndpointFailure>>,
    requests: AtomicU64,
}

/// Headers on every error the endpoint answers with: the official SDKs
/// honour `x-should-retry`, so a miss is surfaced at once, not retried.
const NO_RETRY: &[(&str, &str)] = &[("x-should-retry", "false")];

impl Handler for TrialState {
    fn handle(&self, request: &Request, respond: &mut Responder) -> io::Result<()> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let session = &*self.session;
        if let Err(why) = check_origin_form(&request.target) {
            return self.refuse(ReplayError::TargetRefused(why), 400, respond);
        }
        if request.method != "POST" {
            let what = format!(
                "{} {} (only JSON POST requests are answered)",
                shown_method(&request.method),
                shown_path(request.path())
            );
            return self.miss_unsupported(request, what, 405, respond);
        }
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            let what = "the body is not JSON".to_owned();
            return self.miss_unsupported(request, what, 400, respond);
        };
        let canonical = CanonicalRequest::new(
            &request.method,
            request.path(),
            body,
            &session.volatile,
            &session.scrubber,
        );
        let ordinal = {
            let mut ordinals = lock(&self.ordinals);
            let next = ordinals.entry(canonical.key.clone()).or_insert(0);
            *next += 1;
            *next - 1
        };
        if session.settings.mode != ReplayMode::RecordAll {
            match session
                .cassette
                .lookup(&self.scenario, self.trial, &canonical, ordinal, &|| {
                    respond.gone()
                }) {
                Lookup::Hit(exchange) => return replay(&exchange.response, respond),
                Lookup::Miss(reason) if session.settings.mode == ReplayMode::Replay => {
                    let reason = match &session.pending {
                        Some(p)
                            if p.get(&self.scenario, self.trial, &canonical, ordinal)
                                .is_some() =>
                        {
                            MissReason::PendingReview {
                                pending: session.settings.pending.clone(),
                            }
                        }
                        _ => reason,
                    };
                    return self.miss(request, &canonical, ordinal, reason, 404, respond);
                }
                Lookup::Miss(_) => {}
            }
        }
        self.record(request, canonical, ordinal, respond)
    }
}

fn replay(response: &RecordedResponse, respond: &mut Responder) -> io::Result<()> {
    if let Some(events) = &response.events {
        respond.start_chunked(response.status, &response.content_type)?;
        for event in events {
            respond.chunk(&frame(event))?;
        }
        return respond.end();
    }
    let body = match (&response.body, &response.text) {
        (Some(body), _) => serde_json::to_vec(body).unwrap_or_default(),
        (None, Some(text)) => text.clone().into_bytes(),
        (None, None) => Vec::new(),
    };
    respond.full(response.status, &response.content_type, &[], &body)
}

fn error_body(kind: &str, message: &str) -> Vec<u8> {
    // Shaped like the providers' errors, so SDKs surface the message.
    serde_json::to_vec(&json!({
        "error": { "type": kind, "code": kind, "message": message },
        "type": "error",
    }))
    .unwrap_or_default()
}

impl TrialState {
    /// Keeps `failure` for the step, unless the step has already kept
    /// [`MAX_FAILURES_KEPT`]: a client sending bad requests in a loop must
    /// not grow the endpoint's memory without bound.
    fn record_failure(&self, failure: EndpointFailure) {
        let mut failures = lock(&self.failures);
        if failures.len() < MAX_FAILURES_KEPT {
            failures.push(failure);
        }
    }

    fn step(&self) -> Option<String> {
        lock(&self.step).clone()
    }

    fn miss_unsupported(
        &self,
        request: &Request,
        what: String,
        status: u16,
        respond: &mut Responder,
    ) -> io::Result<()> {
        let canonical = CanonicalRequest::new(
            &request.method,
            request.path(),
            Value::Null,
            &[],
            &Scrubber::default(),
        );
        self.miss(
            request,
            &canonical,
            0,
            MissReason::Unsupported(what),
            status,
            respond,
        )
    }

    fn miss(
        &self,
        request: &Request,
        canonical: &CanonicalRequest,
        ordinal: u32,
        reason: MissReason,
        status: u16,
        respond: &mut Responder,
    ) -> io::Result<()> {
        let miss = ReplayMiss {
            step: self.step(),
            scenario: self.scenario.clone(),
            trial: self.trial,
            method: shown_method(&request.method),
            path: shown_path(request.path()),
            digest: canonical.short(),
            ordinal,
            cassette: self.session.settings.cassette.clone(),
            reason,
        };
        let message = miss.to_string();
        self.record_failure(EndpointFailure::Miss(miss));
        respond.full(
            status,
            "application/json",
            NO_RETRY,
            &error_body("ModelReplayMiss", &message),
        )
    }

    fn fail(&self, error: ReplayError, respond: &mut Responder) -> io::Result<()> {
        self.refuse(error, 502, respond)
    }

    fn refuse(&self, error: ReplayError, status: u16, respond: &mut Responder) -> io::Result<()> {
        let message = error.to_string();
        let name = error.name();
        self.record_failure(EndpointFailure::Error(error));
        respond.full(
            status,
            "application/json",
            NO_RETRY,
            &error_body(name, &message),
        )
    }

    /// Forwards upstream, relays the answer, and writes a 2xx exchange to
    /// the pending file.
    fn record(
        &self,
        request: &Request,
        canonical: CanonicalRequest,
        ordinal: u32,
        respond: &mut Responder,
    ) -> io::Result<()> {
        let session = &*self.session;
        let Some(forwarder) = &session.forwarder else {
            return self.fail(ReplayError::NoUpstream, respond);
        };
        let forwarded = match forwarder.forward(request) {
            Ok(forwarded) => forwarded,
            Err(error) => return self.fail(error, respond),
        };
        let url = forwarder.shown_url(request);
        let upstream_failed = |e: &io::Error| ReplayError::UpstreamFailed {
            url: url.clone(),
            reason: format!("reading the answer: {e}"),
        };
        let mut body = forwarded.body;
        if is_event_stream(&forwarded.content_type) {
            respond.start_chunked(forwarded.status, &forwarded.content_type)?;
            let mut splitter = EventSplitter::default();
            let mut events = Vec::new();
            let mut buffer = vec![0; 16 * 1024];
            loop {
                let n = match body.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) => {
                        let error = upstream_failed(&e);
                        self.record_failure(EndpointFailure::Error(error));
                        return respond.end();
                    }
                };
                for event in splitter.push(&buffer[..n]) {
                    respond.chunk(&frame(&event))?;
                    events.push(event);
                }
            }
            if let Some(event) = splitter.finish() {
                respond.chunk(&frame(&event))?;
                events.push(event);
            }
            let events = scrub_events(&session.scrubber, events);
            let response = RecordedResponse {
                status: forwarded.status,
                content_type: forwarded.content_type,
                body: None,
                text: None,
                events: Some(events),
            };
            // Stored before the stream's last chunk: once the client has the
            // whole answer, the exchange is on disk.
            self.store(canonical, ordinal, response);
            respond.end()
        } else {
            let mut bytes = Vec::new();
            if let Err(e) = body.read_to_end(&mut bytes) {
                return self.fail(upstream_failed(&e), respond);
            }
            let (body, text) = match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut value) => {
                    session.scrubber.value(&mut value);
                    (Some(value), None)
                }
                Err(_) => (
                    None,
                    Some(session.scrubber.text(&String::from_utf8_lossy(&bytes)).0),
                ),
            };
            let status = forwarded.status;
            let content_type = forwarded.content_type.clone();
            self.store(
                canonical,
                ordinal,
                RecordedResponse {
                    status,
                    content_type: forwarded.content_type,
                    body,
                    text,
                    events: None,
                },
            );
            respond.full(status, &content_type, &[], &bytes)
        }
    }

    /// Writes a 2xx exchange to the pending file. An upstream error is
    /// relayed but never recorded: a cassette must not replay an outage as
    /// if it were the model's answer.
    fn store(&self, canonical: CanonicalRequest, ordinal: u32, response: RecordedResponse) {
        let session = &*self.session;
        if !(200..300).contains(&response.status) {
            return;
        }
        let exchange = Exchange {
            scenario: self.scenario.clone(),
            trial: self.trial,
            ordinal,
            request: RecordedRequest {
                method: canonical.method,
                path: canonical.path,
                body: canonical.body,
            },
            response,
            recorded: Some(session.settings.mode.as_str().to_owned()),
        };
        if let Some(writer) = &session.writer {
            if let Err(error) = writer.append(&exchange) {
                self.record_failure(EndpointFailure::Error(error));
            }
        }
    }
}

/// The variables a child process gets so an unmodified SDK talks to the
/// endpoint at `url`: [`MODEL_URL_ENV`](super::MODEL_URL_ENV), the base URLs
/// the official OpenAI and Anthropic SDKs read, and placeholder keys for
/// both (the SDKs refuse to start without one; a real key in the
/// harness's environment never reaches the child).
pub fn child_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        (super::MODEL_URL_ENV, url.to_owned()),
        ("OPENAI_BASE_URL", format!("{url}/v1")),
        ("ANTHROPIC_BASE_URL", url.to_owned()),
        ("OPENAI_API_KEY", super::PLACEHOLDER_KEY.to_owned()),
        ("ANTHROPIC_API_KEY", super::PLACEHOLDER_KEY.to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn a_step_keeps_at_most_its_first_failures() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("empty.jsonl");
        std::fs::write(&cassette, "").unwrap();
        let settings = ReplaySettings::resolve_with(
            "s",
            &ReplayConfig::mode(ReplayMode::Replay).with_cassette(&cassette),
            |_| None,
        )
        .unwrap();
        let session = Arc::new(ReplaySession::with_settings(settings).unwrap());
        let endpoint = session.start("s", 0).unwrap();
        let address = endpoint.url().trim_start_matches("http://").to_owned();
        for _ in 0..MAX_FAILURES_KEPT + 10 {
            let mut stream = std::net::TcpStream::connect(&address).unwrap();
            stream
                .write_all(b"GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                .unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).unwrap();
            assert!(answer.starts_with(b"HTTP/1.1 405"));
        }
        let failures = endpoint.take_failures();
        assert_eq!(failures.len(), MAX_FAILURES_KEPT);
        assert!(matches!(failures[0], EndpointFailure::Miss(_)));
        assert!(endpoint.take_failures().is_empty(), "taken");
    }
}
