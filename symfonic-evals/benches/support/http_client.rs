//! A minimal HTTP/1.1 client for the replay examples: one kept-alive
//! loopback connection, as an SDK holds one, reading whole responses
//! (with a length or chunked) and nothing more, so the figures measure the
//! endpoint rather than a client library.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One response: its status, its body, and how many chunks carried it
/// (one for a response with a length).
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub chunks: usize,
}

/// One kept-alive connection.
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    pub fn open(url: &str) -> Self {
        let stream = TcpStream::connect(url.trim_start_matches("http://")).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        stream
            .set_read_timeout(Some(Duration::from_secs(300)))
            .expect("timeout");
        Self {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
        }
    }

    pub fn post(&mut self, path: &str, body: &[u8]) -> Reply {
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.writer.write_all(&bytes).expect("write");
        let mut line = String::new();
        let mut status = 0;
        let mut length = None;
        let mut chunked = false;
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("head");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some(rest) = l.strip_prefix("HTTP/1.1 ") {
                status = rest.get(..3).and_then(|s| s.parse().ok()).unwrap_or(0);
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length: ") {
                length = v.parse::<usize>().ok();
            }
            chunked |= lower == "transfer-encoding: chunked";
        }
        if let Some(n) = length {
            let mut body = vec![0; n];
            self.reader.read_exact(&mut body).expect("body");
            return Reply {
                status,
                body,
                chunks: 1,
            };
        }
        assert!(chunked, "a length or chunks");
        let mut reply = Reply {
            status,
            body: Vec::new(),
            chunks: 0,
        };
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("chunk size");
            let size = usize::from_str_radix(line.trim_end(), 16).expect("hex size");
            if size == 0 {
                line.clear();
                self.reader.read_line(&mut line).expect("end");
                return reply;
            }
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).expect("chunk");
            reply.body.extend_from_slice(&chunk[..size]);
            reply.chunks += 1;
        }
    }
}

/// The median of `samples`.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The 99th percentile of `samples`.
pub fn p99(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() * 99 / 100]
}
