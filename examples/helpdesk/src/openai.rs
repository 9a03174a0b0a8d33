//! The desk's model over HTTP: a small OpenAI-compatible Chat Completions
//! client on `std::net`, so the desk can run against the harness's model
//! endpoint (replayed from a cassette) or any compatible server.
//!
//! [`Helpdesk::open_over_http`] selects it; [`Helpdesk::open`] keeps the
//! embedded scripted model. The client speaks plain HTTP/1.1 with
//! keep-alive, which is what a loopback endpoint needs; [`post`] also keeps
//! a chunked response's chunks apart, so tests can check that a stream is
//! replayed chunk for chunk.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};
use symfonic_evals::TargetContext;

use crate::model::{Model, ModelStep};
use crate::Helpdesk;

/// The model name the desk asks for.
pub const MODEL: &str = "helpdesk-scripted";

/// One HTTP response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body (a chunked body's chunks joined).
    pub body: Vec<u8>,
    /// A chunked body's chunks, as the server framed them.
    pub chunks: Vec<Vec<u8>>,
}

impl Reply {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A keep-alive HTTP/1.1 connection to one `http://host:port` base URL.
#[derive(Debug)]
pub struct Client {
    authority: String,
    connection: Option<(BufReader<TcpStream>, TcpStream)>,
}

impl Client {
    /// A client for `base_url` (`http://127.0.0.1:<port>`, any path ignored).
    pub fn new(base_url: &str) -> Self {
        let rest = base_url.strip_prefix("http://").unwrap_or(base_url);
        let authority = rest.split('/').next().unwrap_or(rest).to_owned();
        Self {
            authority,
            connection: None,
        }
    }

    /// POSTs `body` to `path` with `headers`; reconnects once if a kept-alive
    /// connection turned out closed.
    ///
    /// # Errors
    ///
    /// When the server cannot be reached or answers with broken HTTP.
    pub fn post(&mut self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Reply> {
        let reused = self.connection.is_some();
        match self.try_post(path, headers, body) {
            Err(_) if reused => {
                self.connection = None;
                self.try_post(path, headers, body)
            }
            other => other,
        }
    }

    fn try_post(&mut self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Reply> {
        if self.connection.is_none() {
            let stream = TcpStream::connect(&self.authority)?;
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(Duration::from_secs(60)))?;
            self.connection = Some((BufReader::new(stream.try_clone()?), stream));
        }
        let (reader, writer) = self.connection.as_mut().expect("connected above");
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            self.authority,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        writer.write_all(&bytes)?;
        let reply = read_reply(reader);
        let close = reply.as_ref().map_or(true, |r| {
            r.header("connection")
                .is_some_and(|c| c.eq_ignore_ascii_case("close"))
        });
        if close {
            self.connection = None;
        }
        reply
    }
}

/// One POST on a fresh connection.
///
/// # Errors
///
/// As [`Client::post`].
pub fn post(
    base_url: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<Reply> {
    Client::new(base_url).post(path, headers, body)
}

fn broken(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

fn line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut text = String::new();
    if reader.read_line(&mut text)? == 0 {
        return Err(broken("connection closed"));
    }
    Ok(text.trim_end_matches(['\r', '\n']).to_owned())
}

fn read_reply(reader: &mut BufReader<TcpStream>) -> io::Result<Reply> {
    let status_line = line(reader)?;
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| broken("bad status line"))?;
    let mut reply = Reply {
        status,
        ..Reply::default()
    };
    loop {
        let header = line(reader)?;
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            reply
                .headers
                .push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let chunked = reply
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    if chunked {
        loop {
            let size = line(reader)?;
            let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| broken("bad chunk size"))?;
            if size == 0 {
                while !line(reader)?.is_empty() {}
                break;
            }
            let mut chunk = vec![0; size];
            reader.read_exact(&mut chunk)?;
            let mut crlf = [0; 2];
            reader.read_exact(&mut crlf)?;
            reply.body.extend_from_slice(&chunk);
            reply.chunks.push(chunk);
        }
    } else if let Some(length) = reply.header("content-length") {
        let length: usize = length.parse().map_err(|_| broken("bad content-length"))?;
        reply.body = vec![0; length];
        reader.read_exact(&mut reply.body)?;
    } else {
        reader.read_to_end(&mut reply.body)?;
    }
    Ok(reply)
}

/// The tools the rendered input lists, as Chat Completions function tools.
fn tools_of(shown: &str) -> Vec<Value> {
    shown
        .lines()
        .find_map(|l| l.strip_prefix("tools: "))
        .map(|list| {
            list.split(", ")
                .filter(|t| !t.is_empty())
                .map(|name| {
                    json!({
                        "type": "function",
                        "function": { "name": name, "parameters": { "type": "object" } },
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The Chat Completions request the desk sends for one step.
pub fn chat_request(shown: &str) -> Value {
    json!({
        "model": MODEL,
        "messages": [
            { "role": "system", "content": "Decide the next step: call one tool, or answer." },
            { "role": "user", "content": shown },
        ],
        "tools": tools_of(shown),
        "temperature": 0,
    })
}

/// Reads the step out of a Chat Completions response.
pub fn step_of(response: &Value) -> Option<ModelStep> {
    let message = response.pointer("/choices/0/message")?;
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut calls = calls
        .iter()
        .map(|call| {
            let call = call.get("function")?;
            let tool = call.get("name")?.as_str()?.to_owned();
            let arguments = match call.get("arguments") {
                Some(Value::String(text)) => serde_json::from_str(text).ok()?,
                Some(other) => other.clone(),
                None => json!({}),
            };
            Some((tool, arguments))
        })
        .collect::<Option<Vec<_>>>()?;
    // Several calls in one message are run as the model sent them.
    match calls.len() {
        0 => {}
        1 => {
            let (tool, arguments) = calls.remove(0);
            return Some(ModelStep::Call { tool, arguments });
        }
        _ => return Some(ModelStep::Several(calls)),
    }
    Some(ModelStep::Answer(
        message.get("content")?.as_str()?.to_owned(),
    ))
}

/// The desk's model as an OpenAI-compatible HTTP client.
#[derive(Debug)]
pub struct OpenAiModel {
    client: Option<Client>,
}

impl OpenAiModel {
    /// A client for the endpoint at `base_url`; `None` (no endpoint) makes
    /// every step answer that the model is unavailable.
    pub fn new(base_url: Option<&str>) -> Self {
        Self {
            client: base_url.map(Client::new),
        }
    }

    fn ask(&mut self, shown: &str) -> Result<ModelStep, String> {
        let client = self.client.as_mut().ok_or("no model endpoint")?;
        let body = serde_json::to_vec(&chat_request(shown)).map_err(|e| e.to_string())?;
        let reply = client
            .post(
                "/v1/chat/completions",
                &[(
                    "authorization",
                    "Bearer sk-proj-4f9c2a7e1b8d3065c9e2f1a4b7d0e3c6",
                )],
                &body,
            )
            .map_err(|e| e.to_string())?;
        if reply.status != 200 {
            let kind = reply
                .json()
                .and_then(|v| {
                    v.pointer("/error/code")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .unwrap_or_default();
            return Err(format!("HTTP {} {kind}", reply.status));
        }
        reply
            .json()
            .as_ref()
            .and_then(step_of)
            .ok_or_else(|| "a response without a message".to_owned())
    }
}

impl Model for OpenAiModel {
    fn next_step(&mut self, shown: &str) -> ModelStep {
        // The trait has no error path: an unreachable model ends the turn
        // with an answer saying so. Under replay the endpoint itself fails
        // the step with `ModelReplayMiss`, naming the request.
        self.ask(shown)
            .unwrap_or_else(|why| ModelStep::Answer(format!("The model is unavailable ({why}).")))
    }
}

impl Helpdesk {
    /// Opens the reference desk with its model reached over HTTP at the
    /// trial's model endpoint ([`TargetContext::model_url`]) instead of the
    /// embedded scripted model.
    ///
    /// # Panics
    ///
    /// As [`Helpdesk::open`].
    pub fn open_over_http(ctx: &TargetContext) -> Self {
        Self::open(ctx).with_model(Box::new(OpenAiModel::new(ctx.model_url())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_and_an_answer_are_read_back() {
        let call = json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "issue_refund", "arguments": "{\"order\":4}"}}]}}]});
        assert_eq!(
            step_of(&call),
            Some(ModelStep::Call {
                tool: "issue_refund".into(),
                arguments: json!({"order": 4})
            })
        );
        let answer = json!({"choices": [{"message": {"content": "done"}}]});
        assert_eq!(step_of(&answer), Some(ModelStep::Answer("done".into())));
        assert_eq!(step_of(&json!({})), None);
    }

    #[test]
    fn the_request_lists_the_offered_tools() {
        let request = chat_request("system: x\ntools: issue_refund, ask_user\nuser: hi");
        let names: Vec<&str> = request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["issue_refund", "ask_user"]);
    }
}
