//! Server-sent events: how a streamed model response is cut into the events
//! a cassette stores, and how each is framed again on replay. An event is
//! everything up to a blank line; it is stored without that terminator and
//! replayed as one HTTP chunk ending in `\n\n`, so a client sees the
//! recorded events in order, one chunk each.

/// Whether a content type is an event stream.
pub(crate) fn is_event_stream(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// The bytes of one replayed event.
pub(crate) fn frame(event: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(event.len() + 2);
    bytes.extend_from_slice(event.as_bytes());
    bytes.extend_from_slice(b"\n\n");
    bytes
}

/// Cuts a byte stream, arriving in arbitrary pieces, into events.
#[derive(Debug, Default)]
pub(crate) struct EventSplitter {
    pending: Vec<u8>,
}

impl EventSplitter {
    /// Feeds `bytes`; returns the events they completed.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some((end, terminator)) = find_terminator(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end + terminator).take(end).collect();
            let event = String::from_utf8_lossy(&event).replace("\r\n", "\n");
            if !event.trim().is_empty() {
                events.push(event);
            }
        }
        events
    }

    /// What is left when the stream ends without a final blank line.
    pub(crate) fn finish(self) -> Option<String> {
        let rest = String::from_utf8_lossy(&self.pending).replace("\r\n", "\n");
        let rest = rest.trim_end_matches('\n');
        (!rest.trim().is_empty()).then(|| rest.to_owned())
    }
}

/// The first blank line: its start and the terminator's length.
fn find_terminator(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_blank_lines_whatever_the_pieces() {
        let stream = "data: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\nevent: done\ndata: [DONE]\n\n";
        for piece in [1, 3, 7, stream.len()] {
            let mut splitter = EventSplitter::default();
            let mut events = Vec::new();
            for bytes in stream.as_bytes().chunks(piece) {
                events.extend(splitter.push(bytes));
            }
            assert_eq!(
                events,
                [
                    "data: {\"a\":1}",
                    "data: {\"b\":2}",
                    "event: done\ndata: [DONE]"
                ]
            );
            assert_eq!(splitter.finish(), None);
        }
    }

    #[test]
    fn an_unterminated_last_event_is_kept() {
        let mut splitter = EventSplitter::default();
        assert!(splitter.push(b"data: x\n").is_empty());
        assert_eq!(splitter.finish().as_deref(), Some("data: x"));
        assert_eq!(frame("data: x"), b"data: x\n\n");
        assert!(is_event_stream("text/event-stream; charset=utf-8"));
        assert!(!is_event_stream("application/json"));
    }
}
