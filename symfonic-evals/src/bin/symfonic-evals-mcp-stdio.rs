//! The stdio side of the harness's MCP fixture: a deployment that launches
//! its MCP servers as commands launches this one, and its stdin and stdout
//! are carried to the trial's fixture over loopback, line for line.
//!
//! `symfonic-evals-mcp-stdio <host:port>/<secret>` (also read from
//! `MCP_STDIO_ADDR`); `TargetContext::mcp_command` gives the
//! whole command. The trial's secret is sent as the first line: the
//! fixture serves only a connection that carries it. Exits when either
//! side closes.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;

fn pipe(mut from: impl Read, mut to: impl Write) -> io::Result<u64> {
    let mut buffer = [0u8; 16 * 1024];
    let mut total = 0;
    loop {
        let n = from.read(&mut buffer)?;
        if n == 0 {
            return Ok(total);
        }
        to.write_all(&buffer[..n])?;
        to.flush()?;
        total += n as u64;
    }
}

fn main() -> ExitCode {
    let address = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("MCP_STDIO_ADDR").ok());
    let Some(address) = address else {
        eprintln!(
            "usage: symfonic-evals-mcp-stdio <host:port>/<secret> (the fixture's stdio locator)"
        );
        return ExitCode::from(2);
    };
    let Some((address, secret)) = address.split_once('/') else {
        eprintln!("symfonic-evals-mcp-stdio: the locator carries no secret (<host:port>/<secret>)");
        return ExitCode::from(2);
    };
    let mut stream = match TcpStream::connect(address) {
        Ok(stream) => stream,
        Err(error) => {
            eprintln!("symfonic-evals-mcp-stdio: cannot reach the MCP fixture: {error}");
            return ExitCode::from(1);
        }
    };
    if stream.write_all(format!("{secret}\n").as_bytes()).is_err() {
        eprintln!("symfonic-evals-mcp-stdio: the MCP fixture closed the connection");
        return ExitCode::from(1);
    }
    let Ok(upstream) = stream.try_clone() else {
        return ExitCode::from(1);
    };
    // Requests: stdin to the fixture; when stdin closes, so does the
    // session's write side.
    std::thread::spawn(move || {
        let _ = pipe(io::stdin().lock(), &upstream);
        let _ = upstream.shutdown(std::net::Shutdown::Write);
    });
    // Responses: the fixture to stdout, until it closes.
    match pipe(&stream, io::stdout().lock()) {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}
