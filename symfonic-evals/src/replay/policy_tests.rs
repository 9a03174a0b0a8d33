//! The server policy at work on the model endpoint's server, one limit per
//! test, at small scale: limits of a few hundred milliseconds, and every
//! wait a wait for an outcome (a closed connection, a freed slot), never a
//! race against the clock.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::server::{Handler, HttpServer, Request, Responder};
use crate::server_policy::ServerPolicy;

/// Answers `/big` with 32 MiB, holds `/hold` until released, streams
/// nothing on `/stream`, and echoes anything else.
#[derive(Default)]
struct Desk {
    release: AtomicBool,
    holding: AtomicUsize,
}

impl Handler for Desk {
    fn handle(&self, request: &Request, respond: &mut Responder) -> io::Result<()> {
        match request.path() {
            "/big" => respond.full(200, "text/plain", &[], &vec![b'x'; 32 << 20]),
            "/hold" => {
                self.holding.fetch_add(1, Ordering::AcqRel);
                while !self.release.load(Ordering::Acquire) && !respond.gone() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                respond.full(200, "text/plain", &[], b"held")
            }
            "/stream" => {
                respond.start_chunked(200, "text/event-stream")?;
                let until = Instant::now() + Duration::from_secs(20);
                while !respond.gone() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
                respond.end()
            }
            _ => respond.full(200, "text/plain", &[], &request.body),
        }
    }
}

fn policy() -> ServerPolicy {
    ServerPolicy {
        head_timeout: Duration::from_millis(300),
        body_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(300),
        write_timeout: Duration::from_millis(300),
        max_connections: 3,
        max_per_peer: 3,
        admission_wait: Duration::from_millis(100),
        max_body_bytes: 1024,
    }
}

fn start(policy: ServerPolicy) -> (HttpServer, Arc<Desk>) {
    let desk = Arc::new(Desk::default());
    let server =
        HttpServer::start_with(Arc::clone(&desk) as Arc<dyn Handler>, "t", policy).unwrap();
    (server, desk)
}

fn address(server: &HttpServer) -> SocketAddr {
    server.url().trim_start_matches("http://").parse().unwrap()
}

fn connect(server: &HttpServer) -> TcpStream {
    let stream = TcpStream::connect(address(server)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
}

fn read_all(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    out
}

/// Waits (boundedly) until the server holds `n` connections.
fn open_becomes(server: &HttpServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.open_connections() != n {
        assert!(
            Instant::now() < deadline,
            "{} open, not {n}",
            server.open_connections()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `bytes` one at a time, `gap` apart, until the server closes.
fn trickle(stream: &mut TcpStream, bytes: &[u8], gap: Duration) {
    for byte in bytes {
        if stream.write_all(&[*byte]).is_err() {
            return;
        }
        std::thread::sleep(gap);
    }
}

#[test]
fn a_body_that_trickles_is_cut_off_at_its_whole_body_deadline() {
    let (server, _) = start(policy());
    let mut slow = connect(&server);
    slow.write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n")
        .unwrap();
    // A byte every 50 ms never leaves a frame gap of 300 ms, but the
    // whole body would take five seconds.
    let mut reader = slow.try_clone().unwrap();
    let answer = std::thread::spawn(move || read_all(&mut reader));
    trickle(&mut slow, &[b'x'; 100], Duration::from_millis(50));
    let answer = answer.join().unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[test]
fn a_head_that_trickles_is_cut_off_at_the_head_deadline() {
    let (server, _) = start(policy());
    let mut slow = connect(&server);
    let head = b"POST /a HTTP/1.1\r\nhost: x\r\nx-pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\ncontent-length: 0\r\n\r\n";
    trickle(&mut slow, head, Duration::from_millis(50));
    assert!(read_all(&mut slow).is_empty(), "closed, never answered");
    open_becomes(&server, 0);
}

#[test]
fn an_answer_nobody_reads_is_abandoned_at_the_write_timeout() {
    let (server, _) = start(policy());
    let mut reader = connect(&server);
    reader
        .write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    // The server gives up on the unread answer and frees the slot...
    open_becomes(&server, 1);
    open_becomes(&server, 0);
    // ...so what the client reads afterwards is cut short.
    assert!(read_all(&mut reader).len() < 32 << 20);
}

#[test]
fn an_event_stream_without_traffic_is_closed_when_idle() {
    let (server, _) = start(policy());
    let mut stream = connect(&server);
    stream
        .write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let answer = read_all(&mut stream);
    assert!(answer.starts_with(b"HTTP/1.1 200"));
    assert!(
        !answer.ends_with(b"0\r\n\r\n"),
        "ended by the server, not the stream"
    );
    open_becomes(&server, 0);
}

#[test]
fn at_the_limit_the_longest_waiting_connection_makes_room_for_a_new_one() {
    let (server, _) = start(policy());
    let mut idle: Vec<TcpStream> = (0..3).map(|_| connect(&server)).collect();
    open_becomes(&server, 3);
    let mut client = connect(&server);
    client
        .write_all(
            b"POST /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\nhi",
        )
        .unwrap();
    let answer = read_all(&mut client);
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert!(
        read_all(&mut idle[0]).is_empty(),
        "the oldest idle connection was shed"
    );
}

#[test]
fn when_every_connection_is_being_answered_a_new_one_gets_503() {
    let (server, desk) = start(policy());
    let mut held: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = connect(&server);
            stream
                .write_all(b"GET /hold HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                .unwrap();
            stream
        })
        .collect();
    // Once all three are being answered, none waits on its client: a
    // fourth connection is refused, and none is shed.
    let deadline = Instant::now() + Duration::from_secs(20);
    while desk.holding.load(Ordering::Acquire) < 3 {
        assert!(Instant::now() < deadline, "the held requests never arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    let refused = read_all(&mut connect(&server));
    assert!(
        refused.starts_with(b"HTTP/1.1 503"),
        "{}",
        String::from_utf8_lossy(&refused)
    );
    desk.release.store(true, Ordering::Release);
    for stream in &mut held {
        assert!(
            read_all(stream).ends_with(b"held"),
            "the held requests are answered"
        );
    }
}

#[test]
fn one_peer_is_held_below_the_total() {
    let (server, _) = start(ServerPolicy {
        max_connections: 4,
        max_per_peer: 2,
        ..policy()
    });
    let mut first = connect(&server);
    let _second = connect(&server);
    open_becomes(&server, 2);
    // A third from the same address takes its own peer's oldest slot.
    let _third = connect(&server);
    assert!(read_all(&mut first).is_empty(), "shed for its own peer");
    open_becomes(&server, 2);
}

#[test]
fn an_oversized_body_is_refused_by_size() {
    let (server, _) = start(policy());
    let mut large = connect(&server);
    large
        .write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
        .unwrap();
    for _ in 0..3 {
        large.write_all(b"200\r\n").unwrap();
        large.write_all(&[b'x'; 512]).unwrap();
        large.write_all(b"\r\n").unwrap();
    }
    assert!(read_all(&mut large).starts_with(b"HTTP/1.1 413"));
}

#[test]
fn a_kept_alive_connection_lingering_after_its_answer_is_shed_first() {
    let (server, _) = start(policy());
    let mut lingering: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut stream = connect(&server);
            stream
                .write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi")
                .unwrap();
            // Its whole answer, and the connection kept.
            let mut answer = Vec::new();
            let mut byte = [0u8; 1];
            while !answer.ends_with(b"\r\n\r\nhi") {
                stream.read_exact(&mut byte).unwrap();
                answer.push(byte[0]);
            }
            stream
        })
        .collect();
    // A silent connection, newer than both answers: it waits for a
    // request that may be on its way, so a lingering one goes first.
    let mut silent = connect(&server);
    open_becomes(&server, 3);
    let mut client = connect(&server);
    client
        .write_all(
            b"POST /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
        )
        .unwrap();
    assert!(read_all(&mut client).starts_with(b"HTTP/1.1 200"));
    assert!(
        read_all(&mut lingering[0]).is_empty(),
        "the first lingering one was shed"
    );
    silent
        .write_all(
            b"POST /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\nhi",
        )
        .unwrap();
    assert!(
        read_all(&mut silent).starts_with(b"HTTP/1.1 200"),
        "the silent one kept its slot"
    );
    drop(lingering);
}

#[test]
fn while_slots_are_wanted_an_answer_closes_its_connection() {
    let request = b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi";
    let answer_head = |stream: &mut TcpStream| {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    };
    // Room to spare: the connection is kept for the next request.
    let (server, _) = start(policy());
    let mut client = connect(&server);
    client.write_all(request).unwrap();
    assert!(!answer_head(&mut client).contains("connection: close"));
    drop(server);
    // Every slot taken (an idle one beside it): the answer says close,
    // and the next request queues for a slot like a newcomer's.
    let (server, _) = start(ServerPolicy {
        max_connections: 2,
        max_per_peer: 2,
        ..policy()
    });
    let _idle = connect(&server);
    let mut client = connect(&server);
    open_becomes(&server, 2);
    client.write_all(request).unwrap();
    assert!(answer_head(&mut client).contains("connection: close"));
}
