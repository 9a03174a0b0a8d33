//! A scripted upstream on loopback: a model API that answers from a Rust
//! closure. Record mode can be pointed at it, so a team records its
//! cassettes (and tests its recording) without a real model or network.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::server::{Handler, HttpServer, Request, Responder};
use super::sse::frame;

/// A request the scripted upstream received.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamRequest {
    /// `POST`.
    pub method: String,
    /// `/v1/chat/completions` and the like, query included.
    pub path: String,
    /// Every header, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when it is not JSON).
    pub body: Value,
}

impl UpstreamRequest {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the scripted upstream answers.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamReply {
    /// A JSON response.
    Json {
        /// The HTTP status.
        status: u16,
        /// The body.
        body: Value,
        /// Extra response headers (a test can send `set-cookie` to prove it
        /// is never stored).
        headers: Vec<(String, String)>,
    },
    /// A `text/event-stream` response, one chunk per event (each event is
    /// written with its `\n\n` terminator).
    Events(Vec<String>),
}

impl UpstreamReply {
    /// A 200 JSON response.
    pub fn json(body: Value) -> Self {
        Self::Json {
            status: 200,
            body,
            headers: Vec::new(),
        }
    }
}

type Script = dyn Fn(&UpstreamRequest) -> UpstreamReply + Send + Sync;

struct Scripted {
    script: Box<Script>,
    received: Mutex<Vec<UpstreamRequest>>,
}

impl Handler for Scripted {
    fn handle(&self, request: &Request, respond: &mut Responder) -> io::Result<()> {
        let received = UpstreamRequest {
            method: request.method.clone(),
            path: request.target.clone(),
            headers: request.headers.clone(),
            body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
        };
        let reply = (self.script)(&received);
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(received);
        match reply {
            UpstreamReply::Json {
                status,
                body,
                headers,
            } => {
                let extra: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                let bytes = serde_json::to_vec(&body).unwrap_or_default();
                respond.full(status, "application/json", &extra, &bytes)
            }
            UpstreamReply::Events(events) => {
                respond.start_chunked(200, "text/event-stream")?;
                for event in &events {
                    respond.chunk(&frame(event))?;
                }
                respond.end()
            }
        }
    }
}

/// A running scripted upstream; dropping it stops it.
pub struct ScriptedUpstream {
    url: String,
    state: Arc<Scripted>,
    #[allow(dead_code)] // held for its Drop, which stops the server
    server: HttpServer,
}

impl std::fmt::Debug for ScriptedUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedUpstream")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ScriptedUpstream {
    /// Starts answering on 127.0.0.1 with `script`.
    ///
    /// # Errors
    ///
    /// When no loopback port can be opened.
    pub fn start(
        script: impl Fn(&UpstreamRequest) -> UpstreamReply + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let state = Arc::new(Scripted {
            script: Box::new(script),
            received: Mutex::new(Vec::new()),
        });
        let server = HttpServer::start(
            Arc::clone(&state) as Arc<dyn Handler>,
            "symfonic-evals-upstream",
        )?;
        Ok(Self {
            url: server.url(),
            state,
            server,
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<UpstreamRequest> {
        self.state
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
