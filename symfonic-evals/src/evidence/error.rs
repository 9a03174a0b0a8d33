//! A turn that failed, as a typed error a step can expect.

use serde::{Deserialize, Serialize};

/// The longest error kind or code a report prints as it is.
pub const PLAIN_NAME_MAX: usize = 64;

/// A turn the deployment refused or could not run.
///
/// `kind` is what a step's expected error is compared with (for example
/// `PauseTokenReplayedError`); `code` is an optional machine code a framework
/// attaches (for example `gone`), which an expected error may match instead;
/// `message` is for people and is digested in reports because it may quote
/// turn content; `exception` is the code half of the traceback behind it
/// (type, qualified name, frames), which reports show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnError {
    /// The error's kind, compared exactly with a step's expected error.
    pub kind: String,
    /// A human-readable account.
    pub message: String,
    /// A machine code, when the deployment's framework has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The exception behind the error, when the deployment's companion
    /// reports one (optional on the wire, additive in protocol version 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<Box<super::ExceptionTrace>>,
    /// Whether the harness itself wrote this error (a child that would not
    /// start, a protocol breach): its text quotes no turn content, so reports
    /// show it in clear.
    #[serde(skip)]
    pub harness: bool,
}

impl TurnError {
    /// An error of `kind`.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
            code: None,
            exception: None,
            harness: false,
        }
    }

    /// The same error with a machine code.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The same error with the exception behind it.
    #[must_use]
    pub fn with_exception(mut self, exception: super::ExceptionTrace) -> Self {
        self.exception = Some(Box::new(exception));
        self
    }

    /// An error the harness wrote about a deployment, shown in clear.
    pub(crate) fn harness(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            harness: true,
            ..Self::new(kind, message)
        }
    }

    /// What a deployment without the `resume` operation answers a resume with.
    pub fn resume_unsupported() -> Self {
        Self::new(
            "ResumeUnsupported",
            "this deployment declares no resume operation",
        )
    }

    /// What a deployment without the `reset` operation answers a reset with.
    pub fn reset_unsupported() -> Self {
        Self::new(
            "ResetUnsupported",
            "this deployment declares no reset operation",
        )
    }

    /// What a deployment without the `review` operation answers a review with.
    pub fn review_unsupported() -> Self {
        Self::new(
            "ReviewUnsupported",
            "this deployment declares no review operation",
        )
    }
}

/// Whether `name` is a plain name: letters, digits and `_ : . -`, at most
/// 64 characters, the shape the process protocol requires of an error
/// `code`. A kind or code outside that shape is the deployment's free text,
/// which could carry a secret from the turn's state, so reports digest it;
/// a report prints one as it is only if it is also a plain identifier,
/// without hyphens.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= PLAIN_NAME_MAX
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
}

/// Whether a report prints an error kind or code `name` a deployment chose
/// as it is: a plain identifier of letters, digits and `_ . :`, at most
/// [`PLAIN_NAME_MAX`] characters. Anything else is digested, a hyphenated
/// name included: hyphens join the groups of card numbers, UUIDs and
/// tokens, which is what turn content put in a kind looks like.
pub(crate) fn shown_as_is(name: &str) -> bool {
    is_plain_name(name) && !name.contains('-')
}

impl std::fmt::Display for TurnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for TurnError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_short_identifiers() {
        for plain in ["PauseTokenReplayedError", "gone", "http:410", "a.b-c_d"] {
            assert!(is_plain_name(plain), "{plain}");
        }
        let long = "x".repeat(PLAIN_NAME_MAX + 1);
        for free in ["", "token sk-123 spent", "a/b", "é", long.as_str()] {
            assert!(!is_plain_name(free), "{free}");
        }
    }

    #[test]
    fn the_code_is_optional_on_the_wire() {
        let bare: TurnError =
            serde_json::from_str(r#"{"kind": "K", "message": "m"}"#).expect("a bare error");
        assert_eq!(bare.code, None);
        let coded = TurnError::new("K", "m").with_code("gone");
        let json = serde_json::to_value(&coded).unwrap();
        assert_eq!(json["code"], "gone");
        assert!(
            json.get("harness").is_none(),
            "an origin is never on the wire"
        );
    }
}
