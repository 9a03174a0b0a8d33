//! The carrier's MCP server, bound with the official SDK's client: in
//! production the carrier runs it; under the packs the harness serves it
//! (the trial's MCP fixture), so what the desk sends and what it is sent
//! back are the harness's to see and decide.

use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

use super::TRACK_SHIPMENT;
use crate::tools::{Tool, ToolEnv, ToolFailure};

/// A session with the carrier's MCP server, on a runtime of its own (the
/// desk itself is synchronous).
pub struct CarrierServer {
    runtime: tokio::runtime::Runtime,
    client: RunningService<RoleClient, ClientConfig>,
}

impl CarrierServer {
    /// Connects to the server at `url` and checks that it lists
    /// `track_shipment`.
    ///
    /// # Errors
    ///
    /// When the server cannot be reached or does not serve the tool.
    pub fn connect(url: &str) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let client = runtime.block_on(async {
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
            );
            let client = ClientConfig::default()
                .serve(transport)
                .await
                .map_err(|e| e.to_string())?;
            let listed = client
                .list_tools(Default::default())
                .await
                .map_err(|e| e.to_string())?;
            if listed.tools.iter().any(|tool| tool.name == TRACK_SHIPMENT) {
                Ok(client)
            } else {
                Err(format!("the carrier server does not list {TRACK_SHIPMENT}"))
            }
        })?;
        Ok(Self { runtime, client })
    }

    /// Calls `track_shipment` with `arguments`: the result the server sent
    /// (its text, read as JSON), or its tool error as a failure.
    fn call(&self, arguments: &Value) -> Result<Value, ToolFailure> {
        let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
        let called = self.runtime.block_on(
            self.client
                .call_tool(CallToolRequestParams::new(TRACK_SHIPMENT).with_arguments(arguments)),
        );
        let result = called.map_err(|e| ToolFailure::new("carrier_unreachable", e.to_string()))?;
        let text: String = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect();
        if result.is_error == Some(true) {
            return Err(ToolFailure::new("carrier_unavailable", text));
        }
        Ok(result
            .structured_content
            .clone()
            .or_else(|| serde_json::from_str(&text).ok())
            .unwrap_or(Value::String(text)))
    }
}

impl Drop for CarrierServer {
    fn drop(&mut self) {
        let token = self.client.cancellation_token();
        token.cancel();
    }
}

/// `track_shipment` as the carrier's server runs it.
pub struct RemoteTracking {
    /// The session the calls go through.
    pub server: CarrierServer,
}

impl Tool for RemoteTracking {
    fn name(&self) -> &str {
        TRACK_SHIPMENT
    }

    // The body runs on the carrier's side: whoever serves it witnesses
    // it (under the packs, the harness's fixture does).
    fn run(&self, arguments: &Value, _env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        self.server.call(arguments)
    }
}
