//! The threads that keep a child's pipes flowing.
//!
//! A child blocks when a pipe it writes to is full, and a harness that stops
//! reading one pipe while waiting on another deadlocks with it. So each pipe
//! has a thread of its own: stdout is read line by line (with a size cap) into
//! a channel, stderr is drained continuously into a bounded ring buffer, and
//! stdin is written from a queue so a child that stops reading can never
//! block the harness.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use super::protocol::{decode, ChildMessage};

/// One thing that happened on the child's stdout.
#[derive(Debug)]
pub(crate) enum StdoutEvent {
    /// A well-formed protocol message.
    Message(Box<ChildMessage>),
    /// A line that is not a protocol message; the reason names no content.
    Malformed(String),
    /// A line longer than the cap; its content was discarded.
    Oversized,
    /// The child closed stdout (usually because it exited).
    Closed,
}

/// How much of a line buffer the stdout reader keeps between lines: a long
/// line's buffer is given back once it is decoded, so a child that sent one
/// large message does not hold that much memory for the rest of its life.
const KEPT_LINE_CAPACITY: usize = 1 << 20;

/// Reads `stdout` on a thread and sends one event per line. The first line
/// past the cap is refused as soon as the cap is reached, without reading
/// the rest of it; the thread then drains (and discards) what follows, so
/// the child never blocks on a full pipe before it is killed.
pub(crate) fn spawn_stdout_reader(
    stdout: impl Read + Send + 'static,
    cap: usize,
    events: Sender<StdoutEvent>,
) -> std::io::Result<()> {
    thread::Builder::new()
        .name("symfonic-evals-child-stdout".into())
        .spawn(move || {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut line = Vec::new();
            loop {
                let event = match read_capped_line(&mut reader, cap, &mut line) {
                    Ok(Line::Complete) => Some(match decode(&line) {
                        Ok(message) => StdoutEvent::Message(Box::new(message)),
                        Err(error) => StdoutEvent::Malformed(error.reason),
                    }),
                    Ok(Line::Blank) => None,
                    Ok(Line::Oversized) => {
                        // The receiver may be gone (the target was dropped).
                        let _ = events.send(StdoutEvent::Oversized);
                        drop(line);
                        drain(&mut reader);
                        let _ = events.send(StdoutEvent::Closed);
                        return;
                    }
                    Ok(Line::Eof) | Err(_) => {
                        let _ = events.send(StdoutEvent::Closed);
                        return;
                    }
                };
                if line.capacity() > KEPT_LINE_CAPACITY {
                    line = Vec::new();
                }
                if let Some(event) = event {
                    // The receiver may be gone (the target was dropped); keep
                    // draining anyway until the child closes the pipe.
                    let _ = events.send(event);
                }
            }
        })?;
    Ok(())
}

/// Reads and discards everything until the end of the stream.
fn drain(reader: &mut impl BufRead) {
    while let Ok(available) = reader.fill_buf() {
        let n = available.len();
        if n == 0 {
            return;
        }
        reader.consume(n);
    }
}

/// What [`read_capped_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// `buffer` holds one line, without its terminator.
    Complete,
    /// An empty (or whitespace-only) line, which the protocol ignores.
    Blank,
    /// The line grew past the cap before it ended. Reading stopped there:
    /// the rest of the line is still in the stream, and `buffer` is empty.
    Oversized,
    /// The stream ended (a partial last line is dropped).
    Eof,
}

/// Reads one `\n`-terminated line into `buffer`, never holding more than
/// `cap` bytes of it: the buffer grows with the line (nothing is reserved
/// ahead of what arrived, and never past the cap), and a line that would
/// pass the cap is refused at that point, not at its end.
pub(crate) fn read_capped_line(
    reader: &mut impl BufRead,
    cap: usize,
    buffer: &mut Vec<u8>,
) -> std::io::Result<Line> {
    buffer.clear();
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(Line::Eof);
        }
        let (chunk, found_newline) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        let wanted = buffer.len() + chunk.len();
        if wanted > cap {
            buffer.clear();
            return Ok(Line::Oversized);
        }
        if wanted > buffer.capacity() {
            // Doubling, as `Vec` does, but never past the cap.
            let grown = wanted.max(buffer.capacity() * 2).min(cap);
            buffer.reserve_exact(grown - buffer.len());
        }
        buffer.extend_from_slice(chunk);
        let consumed = chunk.len() + usize::from(found_newline);
        reader.consume(consumed);
        if found_newline {
            if buffer.last() == Some(&b'\r') {
                buffer.pop();
            }
            if buffer.iter().all(u8::is_ascii_whitespace) {
                return Ok(Line::Blank);
            }
            return Ok(Line::Complete);
        }
    }
}

/// The last bytes a child wrote to stderr, bounded so a flood costs a fixed
/// amount of memory.
#[derive(Debug, Clone)]
pub(crate) struct StderrRing {
    inner: Arc<Mutex<VecDeque<u8>>>,
    capacity: usize,
    /// Set once the child's stderr reached its end and every byte is in.
    drained: Arc<AtomicBool>,
}

impl StderrRing {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(VecDeque::with_capacity(capacity))),
            capacity,
            drained: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Waits up to `limit` for the child's stderr to reach its end, so a
    /// child that has exited is quoted up to its last words; whether it did.
    pub(crate) fn wait_drained(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while !self.drained.load(Ordering::Acquire) {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            thread::sleep(std::time::Duration::from_millis(1));
        }
        true
    }

    fn push(&self, bytes: &[u8]) {
        let mut ring = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = &bytes[bytes.len().saturating_sub(self.capacity)..];
        let overflow = (ring.len() + bytes.len()).saturating_sub(self.capacity);
        ring.drain(..overflow);
        ring.extend(bytes);
    }

    /// At most `max_bytes` of the most recent output, lossily decoded.
    pub(crate) fn tail(&self, max_bytes: usize) -> String {
        let ring = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let skip = ring.len().saturating_sub(max_bytes);
        let bytes: Vec<u8> = ring.iter().skip(skip).copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// How many bytes the ring holds now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Drains `stderr` on a thread into `ring` until the child closes it.
pub(crate) fn spawn_stderr_drain(
    mut stderr: impl Read + Send + 'static,
    ring: StderrRing,
) -> std::io::Result<()> {
    thread::Builder::new()
        .name("symfonic-evals-child-stderr".into())
        .spawn(move || {
            let mut chunk = [0_u8; 8192];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                ring.push(&chunk[..n]);
            }
            ring.drained.store(true, Ordering::Release);
        })?;
    Ok(())
}

/// Writes queued lines to `stdin` on a thread; the child sees end-of-file
/// when the queue's sender is dropped or a write fails.
pub(crate) fn spawn_stdin_writer(
    mut stdin: impl Write + Send + 'static,
    lines: Receiver<Vec<u8>>,
) -> std::io::Result<()> {
    thread::Builder::new()
        .name("symfonic-evals-child-stdin".into())
        .spawn(move || {
            for line in lines {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(Line, Vec<u8>)> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        let mut buffer = Vec::new();
        loop {
            let line = read_capped_line(&mut reader, cap, &mut buffer).unwrap();
            if line == Line::Eof {
                return out;
            }
            let stop = line == Line::Oversized;
            out.push((line, buffer.clone()));
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn splits_lines_across_small_buffers_and_stops_at_a_long_one() {
        let got = lines(b"abc\r\n\n  \nxy\n0123456789\nnever", 8);
        let kinds: Vec<&Line> = got.iter().map(|(kind, _)| kind).collect();
        assert_eq!(
            kinds,
            [
                &Line::Complete,
                &Line::Blank,
                &Line::Blank,
                &Line::Complete,
                &Line::Oversized
            ]
        );
        assert_eq!(got[0].1, b"abc");
        assert_eq!(got[3].1, b"xy");
        assert!(got[4].1.is_empty());
    }

    #[test]
    fn a_long_line_is_refused_at_the_cap_with_the_rest_unread() {
        let mut input = b"0123456789".repeat(100);
        input.push(b'\n');
        let mut reader = BufReader::with_capacity(16, &input[..]);
        let mut buffer = Vec::new();
        let line = read_capped_line(&mut reader, 64, &mut buffer).unwrap();
        assert_eq!(line, Line::Oversized);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert!(
            rest.len() > 900,
            "{} bytes were read past the cap",
            1001 - rest.len()
        );
    }

    #[test]
    fn the_buffer_grows_with_the_line_and_never_past_the_cap() {
        let mut input = vec![b'x'; 1000];
        input.push(b'\n');
        let mut reader = BufReader::with_capacity(7, &input[..]);
        let mut buffer = Vec::new();
        let line = read_capped_line(&mut reader, 1000, &mut buffer).unwrap();
        assert_eq!(line, Line::Complete);
        assert_eq!(buffer.len(), 1000);
        assert_eq!(buffer.capacity(), 1000);
    }

    #[test]
    fn a_line_exactly_at_the_cap_is_kept() {
        let got = lines(b"12345678\n", 8);
        assert_eq!(got, [(Line::Complete, b"12345678".to_vec())]);
    }

    #[test]
    fn the_ring_keeps_only_the_newest_bytes() {
        let ring = StderrRing::new(10);
        ring.push(b"0123456789abc");
        assert_eq!(ring.tail(100), "3456789abc");
        ring.push(b"XY");
        assert_eq!(ring.len(), 10);
        assert_eq!(ring.tail(4), "bcXY");
    }
}
