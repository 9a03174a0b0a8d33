//! Record mode's way out: forwarding one request to the configured upstream
//! over HTTP or TLS (rustls, no OpenSSL) with `ureq`, presenting the
//! upstream key from the environment and none of the client's own
//! credentials. Built only with the `record` feature; without it a recording
//! mode fails with `RecordingUnavailable`.

use std::io::Read;

use super::config::{Upstream, UpstreamAuth};
use super::error::ReplayError;
use super::server::Request;
use super::target::{check_origin_form, without_query, UpstreamBase};

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
    /// The upstream's scheme, host, port and base path: every forward URL
    /// is built from these, never from the client's target.
    base: UpstreamBase,
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
    /// `RecordingUnavailable` in a build without the `record` feature;
    /// `UpstreamFailed` when the upstream URL is not
    /// `http(s)://host[:port][/path]`.
    pub(crate) fn new(upstream: Upstream) -> Result<Self, ReplayError> {
        let base =
            UpstreamBase::parse(&upstream.url).map_err(|reason| ReplayError::UpstreamFailed {
                url: without_query(&upstream.url),
                reason: reason.to_owned(),
            })?;
        #[cfg(feature = "record")]
        {
            let config = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(std::time::Duration::from_secs(300)))
                .build();
            Ok(Self {
                upstream,
                base,
                agent: config.into(),
            })
        }
        #[cfg(not(feature = "record"))]
        {
            let _ = (upstream, base);
            Err(ReplayError::RecordingUnavailable)
        }
    }

    /// The upstream URL `request` is forwarded to, as messages may show it
    /// (its query digested).
    pub(crate) fn shown_url(&self, request: &Request) -> String {
        without_query(&self.base.join(&request.target))
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
    /// `TargetRefused` for a target that is not in origin form (checked
    /// again here, so no caller can forward one); `UpstreamFailed` when the
    /// upstream cannot be reached or answers with a broken response.
    pub(crate) fn forward(&self, request: &Request) -> Result<Forwarded, ReplayError> {
        check_origin_form(&request.target).map_err(ReplayError::TargetRefused)?;
        let url = self.base.join(&request.target);
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
            url: without_query(url),
            reason: scrub_reason(&reason, url, self.key()),
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

#[cfg(any(feature = "record", test))]
/// A client error's text, safe to show: the forward URL and its query (the
/// client may quote either), the key and any credential shape removed.
pub(crate) fn scrub_reason(reason: &str, url: &str, key: Option<&str>) -> String {
    let mut text = reason.replace(url, &without_query(url));
    if let Some((_, query)) = url.split_once('?') {
        text = text.replace(query, "<query>");
        // A client may quote one parameter's value on its own.
        for (_, value) in query.split('&').filter_map(|pair| pair.split_once('=')) {
            if value.len() >= 4 {
                text = text.replace(value, "<query value>");
            }
        }
    }
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        text = text.replace(key, crate::contracts::REDACTED);
    }
    crate::contracts::redact_text(&text).0
}

#[cfg(test)]
mod tests {
    use super::scrub_reason;

    #[test]
    fn a_failure_reason_never_carries_the_query_or_the_key() {
        let url = "https://h/v1/x?key=q-secret-value";
        let reason = format!("http: connection refused for {url} (q-secret-value) with k-123456");
        let shown = scrub_reason(&reason, url, Some("k-123456"));
        assert!(!shown.contains("q-secret-value"), "{shown}");
        assert!(!shown.contains("k-123456"), "{shown}");
        assert!(shown.contains("https://h/v1/x?<query sha256:"), "{shown}");
    }
}
