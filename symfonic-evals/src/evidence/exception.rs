//! The code half of a deployment's traceback, carried on a turn error.
//!
//! A Python (or TypeScript) deployment whose turn raised reports the
//! exception's type, its qualified name and the frames it passed through
//! (file, line, function): enough to tell a `KeyError` in the adopter's code
//! from one in an adapter, without the message, arguments or locals, which
//! may quote turn content. The message comes along only when the adopter
//! opted in (`serve(..., exception_messages=True)`), and is then shown in
//! clear.

use serde::{Deserialize, Serialize};

use crate::redact::sensitive;

/// The most frames a report keeps per exception, the innermost ones.
pub(crate) const MAX_FRAMES: usize = 64;

/// The most causes a report follows beneath an exception.
pub(crate) const MAX_CAUSES: usize = 3;

/// The longest name, file or opted-in message a report keeps, in characters.
const MAX_TEXT: usize = 2000;

/// An exception behind a turn error, as the deployment's companion saw it.
///
/// On the wire (the process protocol's optional `exception` field of an
/// error) the type is `type`; frames are ordered outermost first, the
/// innermost (where it was raised) last, as Python prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionTrace {
    /// The type's own name, e.g. `ValueError`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The type's module and qualified name, e.g. `builtins.ValueError`.
    pub qualified_name: String,
    /// The frames it passed through, outermost first.
    #[serde(default)]
    pub frames: Vec<ExceptionFrame>,
    /// How many outer frames were left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frames_omitted: u64,
    /// The exception's message, present only when the adopter opted in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The exception it was raised from, or while handling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Box<ExceptionTrace>>,
}

/// One frame of an [`ExceptionTrace`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionFrame {
    /// The file, relative to the deployment's working directory, or under
    /// a label such as `<site-packages>/`; never an absolute path.
    pub file: String,
    /// The line being run.
    pub line: u64,
    /// The function's (qualified) name.
    pub function: String,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl ExceptionTrace {
    /// The same trace as a report may carry it: names and files not shaped
    /// like code names and relative paths digested (they are then the
    /// deployment's free text, which could quote a secret), at most
    /// 64 frames (the innermost; the rest counted) and 3 causes. An
    /// opted-in message is kept, capped in length.
    #[must_use]
    pub fn report_safe(&self) -> Self {
        self.safe_to_depth(MAX_CAUSES)
    }

    fn safe_to_depth(&self, causes: usize) -> Self {
        let skip = self.frames.len().saturating_sub(MAX_FRAMES);
        Self {
            type_name: code_name_or_digest(&self.type_name),
            qualified_name: code_name_or_digest(&self.qualified_name),
            frames: self.frames[skip..]
                .iter()
                .map(|frame| ExceptionFrame {
                    file: if is_relative_file(&frame.file) {
                        frame.file.clone()
                    } else {
                        sensitive(&frame.file)
                    },
                    line: frame.line,
                    function: code_name_or_digest(&frame.function),
                })
                .collect(),
            frames_omitted: self.frames_omitted.saturating_add(skip as u64),
            message: self
                .message
                .as_ref()
                .map(|m| m.chars().take(MAX_TEXT).collect()),
            cause: self
                .cause
                .as_ref()
                .filter(|_| causes > 0)
                .map(|cause| Box::new(cause.safe_to_depth(causes - 1))),
        }
    }

    /// The type, its qualified name, the opted-in message (quoted) and
    /// where it was raised, on one line: `ValueError (builtins.ValueError)
    /// at app/desk.py:41 in parse_amount`. Call on a [`report_safe`]
    /// trace.
    ///
    /// [`report_safe`]: Self::report_safe
    pub fn headline(&self) -> String {
        // A JavaScript type has no module path: its qualified name is its name.
        let mut line = if self.qualified_name == self.type_name {
            self.type_name.clone()
        } else {
            format!("{} ({})", self.type_name, self.qualified_name)
        };
        if let Some(message) = &self.message {
            line.push_str(&format!(" {message:?}"));
        }
        if let Some(frame) = self.frames.last() {
            line.push_str(&format!(" at {}", frame.location()));
        }
        if let Some(cause) = &self.cause {
            line.push_str(&format!(", from {}", cause.headline()));
        }
        line
    }

    /// The traceback as lines, as Python prints it (most recent call last),
    /// each cause first under its own heading. Call on a [`report_safe`]
    /// trace.
    ///
    /// [`report_safe`]: Self::report_safe
    pub fn traceback(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(cause) = &self.cause {
            lines.extend(cause.traceback());
            lines.push("raised from the above, or while handling it:".into());
        }
        lines.push("Traceback (most recent call last):".into());
        if self.frames_omitted > 0 {
            lines.push(format!(
                "  ({} outer frame(s) left out)",
                self.frames_omitted
            ));
        }
        for frame in &self.frames {
            lines.push(format!("  {}", frame.location()));
        }
        let message = self
            .message
            .as_ref()
            .map(|m| format!(": {m:?}"))
            .unwrap_or_default();
        lines.push(format!("{}{message}", self.qualified_name));
        lines
    }
}

impl ExceptionFrame {
    /// `file:line in function`.
    pub fn location(&self) -> String {
        format!("{}:{} in {}", self.file, self.line, self.function)
    }
}

/// Whether `name` is shaped like a dotted code name: segments of letters,
/// digits and `_` (not starting with a digit), or a `<locals>`-style
/// segment, joined by dots.
fn is_code_name(name: &str) -> bool {
    let identifier = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    name.len() <= MAX_TEXT
        && name.split('.').all(|segment| {
            identifier(segment)
                || segment
                    .strip_prefix('<')
                    .and_then(|s| s.strip_suffix('>'))
                    .is_some_and(identifier)
        })
}

fn code_name_or_digest(name: &str) -> String {
    if is_code_name(name) {
        name.to_owned()
    } else {
        sensitive(name)
    }
}

/// Whether `file` is a relative path of plain segments (letters, digits,
/// `_ - . + @`), optionally under a leading `<label>`, or a pseudo-file
/// such as `<string>`: never absolute, never climbing out with `..`.
fn is_relative_file(file: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '@'))
    };
    let label = |s: &str| {
        s.strip_prefix('<')
            .and_then(|s| s.strip_suffix('>'))
            .is_some_and(|inner| plain(inner) || inner.split(' ').all(plain))
    };
    let mut segments = file.split('/');
    let first = segments.next().unwrap_or("");
    file.len() <= MAX_TEXT && (plain(first) || label(first)) && segments.all(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(file: &str, function: &str) -> ExceptionFrame {
        ExceptionFrame {
            file: file.into(),
            line: 7,
            function: function.into(),
        }
    }

    fn trace(frames: Vec<ExceptionFrame>) -> ExceptionTrace {
        ExceptionTrace {
            type_name: "ValueError".into(),
            qualified_name: "builtins.ValueError".into(),
            frames,
            frames_omitted: 0,
            message: None,
            cause: None,
        }
    }

    #[test]
    fn code_names_and_relative_files_are_shown_the_rest_digested() {
        let shown = trace(vec![
            frame("app/desk.py", "Desk.run_turn.<locals>.charge"),
            frame("<site-packages>/langgraph/pregel/main.py", "<module>"),
            frame("<frozen importlib._bootstrap>", "_call"),
        ])
        .report_safe();
        assert_eq!(
            shown
                .frames
                .iter()
                .map(ExceptionFrame::location)
                .collect::<Vec<_>>(),
            [
                "app/desk.py:7 in Desk.run_turn.<locals>.charge",
                "<site-packages>/langgraph/pregel/main.py:7 in <module>",
                "<frozen importlib._bootstrap>:7 in _call",
            ]
        );
        let hidden = trace(vec![
            frame("/home/someone/app/desk.py", "run turn"),
            frame("../../etc/passwd", "f"),
            frame("app/card 4111 1111.py", "f"),
        ])
        .report_safe();
        for frame in &hidden.frames[..2] {
            assert!(frame.file.starts_with("sha256:"), "{frame:?}");
        }
        assert!(hidden.frames[0].function.starts_with("sha256:"));
        assert!(hidden.frames[2].file.starts_with("sha256:"));
        let mut odd = trace(Vec::new());
        odd.type_name = "token sk-1".into();
        assert!(odd.report_safe().type_name.starts_with("sha256:"));
    }

    #[test]
    fn the_innermost_frames_and_a_few_causes_are_kept() {
        let deep = ExceptionTrace {
            frames_omitted: 2,
            ..trace(
                (0..MAX_FRAMES + 5)
                    .map(|i| frame("a.py", &format!("f{i}")))
                    .collect(),
            )
        };
        let mut chain = deep.clone();
        for _ in 0..MAX_CAUSES + 2 {
            chain = ExceptionTrace {
                cause: Some(Box::new(chain)),
                ..trace(Vec::new())
            };
        }
        let safe = deep.report_safe();
        assert_eq!(safe.frames.len(), MAX_FRAMES);
        assert_eq!(safe.frames_omitted, 7);
        assert_eq!(
            safe.frames.last().unwrap().function,
            format!("f{}", MAX_FRAMES + 4)
        );
        let mut depth = 0;
        let mut at = &chain.report_safe();
        while let Some(cause) = &at.cause {
            depth += 1;
            at = cause;
        }
        assert_eq!(depth, MAX_CAUSES);
    }

    #[test]
    fn headline_and_traceback_name_type_and_frames() {
        let mut raised = trace(vec![
            frame("desk.py", "run_turn"),
            frame("parse.py", "amount"),
        ]);
        raised.cause = Some(Box::new(ExceptionTrace {
            type_name: "KeyError".into(),
            qualified_name: "builtins.KeyError".into(),
            ..trace(vec![frame("desk.py", "lookup")])
        }));
        assert_eq!(
            raised.headline(),
            "ValueError (builtins.ValueError) at parse.py:7 in amount, \
             from KeyError (builtins.KeyError) at desk.py:7 in lookup"
        );
        assert_eq!(
            raised.traceback(),
            [
                "Traceback (most recent call last):",
                "  desk.py:7 in lookup",
                "builtins.KeyError",
                "raised from the above, or while handling it:",
                "Traceback (most recent call last):",
                "  desk.py:7 in run_turn",
                "  parse.py:7 in amount",
                "builtins.ValueError",
            ]
        );
        let bare = ExceptionTrace {
            type_name: "TypeError".into(),
            qualified_name: "TypeError".into(),
            ..trace(vec![frame("desk.js", "Desk.runTurn")])
        };
        assert_eq!(bare.headline(), "TypeError at desk.js:7 in Desk.runTurn");
        raised.message = Some("opted\nin".into());
        assert!(raised.headline().contains(r#""opted\nin""#));
    }

    #[test]
    fn the_wire_form_names_the_type_type() {
        let wire = serde_json::json!({
            "type": "ValueError", "qualified_name": "builtins.ValueError",
            "frames": [{"file": "desk.py", "line": 3, "function": "run_turn"}]
        });
        let parsed: ExceptionTrace = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(parsed.type_name, "ValueError");
        assert_eq!(serde_json::to_value(&parsed).unwrap(), wire);
    }
}
