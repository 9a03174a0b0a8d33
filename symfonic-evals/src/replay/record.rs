//! Record mode's way out: forwarding one request to the configured upstream
//! over HTTP or TLS (rustls, no OpenSSL) with `ureq`, presenting the
//! upstream key from the environment and none of the client's own
//! credentials. Built only with the `record` feature; without it a recording
//! mode fails with `RecordingUnavailable`.

use std::io::Read;

use super::config::{Upstream, UpstreamAuth};
use super::error::ReplayError;
use super::server::Request;

/// Request headers passed through to the upstream: what selects an API
/// version or a beta, never a credential or a cookie.
const FORWARDED_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "anthropic-version",
    "anthropic-beta",
    "openai-beta",
];

/// What the upstream answered.
pub(crate) struct Forwarded {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    /// The body, read as it arrives (an event stream is relayed event by
    /// event).
    pub(crate) body: Box<dyn Read + Send>,
}

/// The upstream client for one pack run.
pub(crate) struct Forwarder {
    upstream: Upstream,
    #[cfg(feature = "record")]
    agent: ureq::Agent,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

impl Forwarder {
    /// A client for `upstream`.
    ///
    /// # Errors
    ///
    /// `RecordingUnavailable` in a build without the `record` feature.
    pub(crate) fn new(upstream: Upstream) -> Result<Self, ReplayError> {
        #[cfg(feature = "record")]
        {
            let config = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(std::time::Duration::from_secs(300)))
                .build();
            Ok(Self {
                upstream,
                agent: config.into(),
            })
        }
        #[cfg(not(feature = "record"))]
        {
            let _ = upstream;
            Err(ReplayError::RecordingUnavailable)
        }
    }

    /// The upstream URL `request` is forwarded to.
    pub(crate) fn url_for(&self, request: &Request) -> String {
        format!("{}{}", self.upstream.url, request.target)
    }

    /// The key header for `path`, if the upstream has a key.
    fn auth_header(&self, path: &str) -> Option<(&'static str, String)> {
        let key = self.upstream.key.as_ref()?;
        let x_api_key = match self.upstream.auth {
            UpstreamAuth::XApiKey => true,
            UpstreamAuth::Bearer => false,
            UpstreamAuth::Auto => path.ends_with("/messages"),
        };
        Some(if x_api_key {
            ("x-api-key", key.clone())
        } else {
            ("authorization", format!("Bearer {key}"))
        })
    }

    /// The upstream key, for the scrubber.
    pub(crate) fn key(&self) -> Option<&str> {
        self.upstream.key.as_deref()
    }

    /// Sends `request` upstream.
    ///
    /// # Errors
    ///
    /// `UpstreamFailed` when the upstream cannot be reached or answers
    /// with a broken response.
    pub(crate) fn forward(&self, request: &Request) -> Result<Forwarded, ReplayError> {
        let url = self.url_for(request);
        let headers: Vec<(&str, String)> = request
            .headers
            .iter()
            .filter(|(name, _)| FORWARDED_HEADERS.contains(&name.as_str()))
            .map(|(name, value)| (name.as_str(), value.clone()))
            .chain(self.auth_header(request.path()))
            .collect();
        self.send(&url, &request.method, &headers, &request.body)
    }

    #[cfg(feature = "record")]
    fn send(
        &self,
        url: &str,
        method: &str,
        headers: &[(&str, String)],
        body: &[u8],
    ) -> Result<Forwarded, ReplayError> {
        let failed = |reason: String| ReplayError::UpstreamFailed {
            url: url.to_owned(),
            reason,
        };
        if method != "POST" {
            return Err(failed(format!("only POST is forwarded, not {method}")));
        }
        let mut builder = self.agent.post(url);
        for (name, value) in headers {
            builder = builder.header(*name, value.as_str());
        }
        let response = builder.send(body).map_err(|e| failed(e.to_string()))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/octet-stream")
            .to_owned();
        let reader = response.into_body().into_reader();
        Ok(Forwarded {
            status,
            content_type,
            body: Box::new(reader),
        })
    }

    #[cfg(not(feature = "record"))]
    fn send(
        &self,
        _url: &str,
        _method: &str,
        _headers: &[(&str, String)],
        _body: &[u8],
    ) -> Result<Forwarded, ReplayError> {
        Err(ReplayError::RecordingUnavailable)
    }
}
