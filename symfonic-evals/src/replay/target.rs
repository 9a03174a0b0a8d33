//! Which request targets the endpoint accepts, and where record mode sends
//! them.
//!
//! Record mode holds the upstream key, so the URL it forwards to must be
//! the configured upstream and nothing a client can steer. A request target
//! is accepted only in origin form (`/path?query`): a single leading `/`,
//! no authority, no scheme, no userinfo, no backslash, no dot segments, and
//! none of those spelled with percent escapes. The forward URL is then
//! built from the upstream's own scheme, host and port, with the target
//! appended to its path, so no spelling of a target can change the host.
//!
//! Everything here is decided before any connection is made.

use std::fmt;

/// Why the endpoint refused a request target. The target itself is never
/// quoted: it is client input and may carry anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetRefusal {
    /// It does not begin with `/` (absolute form, authority form, `*`).
    NotOriginForm,
    /// `//` somewhere: a network-path reference to another host.
    DoubleSlash,
    /// `@`: userinfo, which puts the configured host before another one.
    Userinfo,
    /// `\`: some URL parsers read it as `/`.
    Backslash,
    /// A scheme separator spelled with escapes (`:%2f`); a literal `://`
    /// is refused as [`Self::DoubleSlash`].
    Scheme,
    /// A `.` or `..` path segment.
    DotSegment,
    /// A percent escape of `/`, `\`, `@`, `:`, `.`, `%` or a control byte.
    EncodedDelimiter,
    /// Whitespace, a control byte, a fragment or a byte outside ASCII.
    IllegalByte,
    /// Longer than the longest target accepted (8 KiB).
    TooLong,
}

/// The longest request target accepted.
pub(crate) const MAX_TARGET_BYTES: usize = 8 * 1024;

impl fmt::Display for TargetRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotOriginForm => "the request target is not in origin form (it must begin with one `/`)",
            Self::DoubleSlash => "the request target holds `//`",
            Self::Userinfo => "the request target holds `@`",
            Self::Backslash => "the request target holds a backslash",
            Self::Scheme => "the request target names a scheme",
            Self::DotSegment => "the request target holds a `.` or `..` segment",
            Self::EncodedDelimiter => {
                "the request target percent-encodes a delimiter (`/`, `\\`, `@`, `:`, `.`, `%`) or a control byte"
            }
            Self::IllegalByte => {
                "the request target holds whitespace, a control byte, a fragment or a non-ASCII byte"
            }
            Self::TooLong => "the request target is longer than 8 KiB",
        })
    }
}

/// Checks that `target` is an origin-form target that cannot move a
/// forwarded request to another host.
pub(crate) fn check_origin_form(target: &str) -> Result<(), TargetRefusal> {
    if target.len() > MAX_TARGET_BYTES {
        return Err(TargetRefusal::TooLong);
    }
    let bytes = target.as_bytes();
    if bytes.first() != Some(&b'/') {
        return Err(TargetRefusal::NotOriginForm);
    }
    if bytes
        .iter()
        .any(|b| !b.is_ascii() || b.is_ascii_control() || *b == b' ' || *b == b'#')
    {
        return Err(TargetRefusal::IllegalByte);
    }
    if target.contains('\\') {
        return Err(TargetRefusal::Backslash);
    }
    if target.contains('@') {
        return Err(TargetRefusal::Userinfo);
    }
    if target.contains("//") {
        return Err(TargetRefusal::DoubleSlash);
    }
    // A literal `://` already failed as `//`; its escaped spelling is left.
    if target.to_ascii_lowercase().contains(":%2f") {
        return Err(TargetRefusal::Scheme);
    }
    if has_encoded_delimiter(bytes) {
        return Err(TargetRefusal::EncodedDelimiter);
    }
    let path = target.split('?').next().unwrap_or_default();
    if path.split('/').any(|segment| matches!(segment, "." | "..")) {
        return Err(TargetRefusal::DotSegment);
    }
    Ok(())
}

fn has_encoded_delimiter(bytes: &[u8]) -> bool {
    bytes.windows(3).any(|w| {
        if w[0] != b'%' {
            return false;
        }
        let hex = |b: u8| char::from(b).to_digit(16);
        match (hex(w[1]), hex(w[2])) {
            (Some(hi), Some(lo)) => {
                let byte = (hi * 16 + lo) as u8;
                byte < 0x20
                    || byte == 0x7f
                    || matches!(byte, b'/' | b'\\' | b'@' | b':' | b'.' | b'%')
            }
            // A `%` not followed by two hex digits is malformed.
            _ => true,
        }
    })
}

/// The configured upstream, split so a forward URL is always built from
/// its own scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UpstreamBase {
    /// `http` or `https`.
    scheme: String,
    /// `host[:port]`, brackets kept for IPv6.
    authority: String,
    /// The base path, without a trailing `/` (may be empty).
    path: String,
}

impl UpstreamBase {
    /// Parses `url` as `scheme://host[:port][/path]`. A URL with userinfo,
    /// a query or a fragment is refused: none of them belongs in a base
    /// that paths are appended to.
    pub(crate) fn parse(url: &str) -> Result<Self, &'static str> {
        let url = url.trim();
        let (scheme, rest) = url
            .split_once("://")
            .ok_or("the upstream URL has no scheme")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err("the upstream URL's scheme is not http or https");
        }
        if rest.contains(['?', '#']) {
            return Err("the upstream URL carries a query or a fragment");
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains(['@', '\\', ' ']) {
            return Err("the upstream URL's host is empty or carries userinfo");
        }
        Ok(Self {
            scheme,
            authority: authority.to_owned(),
            path: path.trim_end_matches('/').to_owned(),
        })
    }

    /// The URL a checked origin-form `target` is forwarded to.
    pub(crate) fn join(&self, target: &str) -> String {
        format!("{}://{}{}{target}", self.scheme, self.authority, self.path)
    }
}

/// `url` with its query replaced by a digest: keys travel in queries
/// (`?key=...`), and a message or report never carries one.
pub(crate) fn without_query(url: &str) -> String {
    match url.split_once('?') {
        Some((base, query)) => format!(
            "{base}?<query {}>",
            crate::redact::short_digest(query.as_bytes())
        ),
        None => url.to_owned(),
    }
}

/// The paths of the model APIs the endpoint speaks, shown as they are in
/// messages; any other path is client input and is shown as a digest.
const KNOWN_PATHS: &[&str] = &[
    "/v1/chat/completions",
    "/chat/completions",
    "/v1/responses",
    "/responses",
    "/v1/messages",
    "/messages",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/models",
];

/// A request path as a message may show it: a known API path verbatim,
/// anything else digested (a path can carry a key or turn content).
pub(crate) fn shown_path(path: &str) -> String {
    if KNOWN_PATHS.contains(&path) {
        path.to_owned()
    } else {
        format!("<path {}>", crate::redact::short_digest(path.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_form_paths_with_queries_are_accepted() {
        for target in [
            "/v1/chat/completions",
            "/v1/messages?beta=true",
            "/v1beta/models/gemini-2.0-flash:generateContent?alt=sse",
            "/v1/responses/resp_1",
            "/a%20b",
        ] {
            assert_eq!(check_origin_form(target), Ok(()), "{target}");
        }
    }

    #[test]
    fn every_spelling_that_could_change_the_host_is_refused() {
        use TargetRefusal::*;
        let cases: &[(&str, TargetRefusal)] = &[
            ("@127.0.0.2:8080/v1/chat/completions", NotOriginForm),
            ("http://127.0.0.2/v1", NotOriginForm),
            ("127.0.0.2:80/v1", NotOriginForm),
            ("*", NotOriginForm),
            ("", NotOriginForm),
            ("//127.0.0.2/v1", DoubleSlash),
            ("/v1//x", DoubleSlash),
            ("/@127.0.0.2/v1", Userinfo),
            ("/v1?u=a@b", Userinfo),
            ("/\\127.0.0.2/v1", Backslash),
            ("/v1/http:%2f%2fx", Scheme),
            ("/x?next=http://127.0.0.2/", DoubleSlash),
            ("/%2f127.0.0.2/v1", EncodedDelimiter),
            ("/%2F%2F127.0.0.2", EncodedDelimiter),
            ("/%5c127.0.0.2", EncodedDelimiter),
            ("/%40127.0.0.2", EncodedDelimiter),
            ("/v1/%3a", EncodedDelimiter),
            ("/v1/%2e%2e/x", EncodedDelimiter),
            ("/v1/%252f", EncodedDelimiter),
            ("/v1/%0d%0aHost:x", EncodedDelimiter),
            ("/v1/%zz", EncodedDelimiter),
            ("/v1/../admin", DotSegment),
            ("/v1/./x", DotSegment),
            ("/v1 x", IllegalByte),
            ("/v1#frag", IllegalByte),
            ("/v1\t", IllegalByte),
            ("/v1/é", IllegalByte),
        ];
        for (target, why) in cases {
            assert_eq!(check_origin_form(target), Err(*why), "{target:?}");
        }
        assert_eq!(
            check_origin_form(&format!("/{}", "a".repeat(MAX_TARGET_BYTES))),
            Err(TooLong)
        );
    }

    #[test]
    fn the_forward_url_keeps_the_configured_host_and_base_path() {
        let base = UpstreamBase::parse("https://api.example.com/openai/").unwrap();
        assert_eq!(
            base.join("/v1/chat/completions"),
            "https://api.example.com/openai/v1/chat/completions"
        );
        let base = UpstreamBase::parse("http://127.0.0.1:9000").unwrap();
        assert_eq!(base.join("/v1/x?a=1"), "http://127.0.0.1:9000/v1/x?a=1");
        for bad in [
            "127.0.0.1:9000",
            "ftp://h",
            "http://user@h",
            "http://h?key=1",
            "http://",
        ] {
            assert!(UpstreamBase::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_known_api_paths_are_shown_as_they_are() {
        assert_eq!(shown_path("/v1/chat/completions"), "/v1/chat/completions");
        let odd = shown_path("/v1/sk-livesecretsecretsecret/x");
        assert!(odd.starts_with("<path sha256:"), "{odd}");
        assert!(!odd.contains("secret"));
    }

    #[test]
    fn a_query_never_reaches_a_message() {
        let shown = without_query("https://h/v1/x?key=AIzaSecretSecretSecretSecretSecret1");
        assert!(
            shown.starts_with("https://h/v1/x?<query sha256:"),
            "{shown}"
        );
        assert!(!shown.contains("AIza"));
        assert_eq!(without_query("https://h/v1"), "https://h/v1");
    }
}
