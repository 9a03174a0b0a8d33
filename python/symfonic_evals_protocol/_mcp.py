"""Where the harness's MCP fixture is: the server that serves the extension
pack's tool for the trial, so the pack judges calls by what it received.

A deployment that binds it declares the ``mcp-fixture`` trait and hands
:func:`mcp_server_params` to its MCP client."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

MCP_URL_ENV = "MCP_SERVER_URL"
"""The variable the harness puts the fixture's Streamable HTTP URL in."""

MCP_STDIO_ADDR_ENV = "MCP_STDIO_ADDR"
"""The variable the address of the fixture's stdio side is in."""

MCP_COMMAND_ENV = "MCP_SERVER_COMMAND"
"""The variable the path of the stdio bridge is in, when the harness found it."""

MCP_FIXTURE = "mcp-fixture"
"""The trait a deployment that binds the fixture declares."""


def mcp_url() -> Optional[str]:
    """The fixture's Streamable HTTP URL, or ``None`` outside an extension
    pack run."""
    return os.environ.get(MCP_URL_ENV) or None


def mcp_server_params(shape: str = "mcp") -> Optional[Dict[str, Any]]:
    """The fixture's connection parameters in the shape a common MCP client
    takes, or ``None`` when the trial serves none:

    - ``"mcp"``: keyword arguments of the ``mcp`` package's
      ``streamablehttp_client`` (``{"url": ...}``);
    - ``"langchain"``: one server entry of ``langchain-mcp-adapters``'
      ``MultiServerMCPClient`` (``{"url": ..., "transport": "streamable_http"}``);
    - ``"openai-agents"``: the ``params`` of the OpenAI Agents SDK's
      ``MCPServerStreamableHttp`` (``{"url": ...}``);
    - ``"stdio"``: a stdio server's ``command`` and ``args`` (the ``mcp``
      package's ``StdioServerParameters``, the Agents SDK's
      ``MCPServerStdio`` params): the harness's bridge to the same fixture,
      ``None`` when the bridge was not found."""
    if shape == "stdio":
        command = os.environ.get(MCP_COMMAND_ENV)
        address = os.environ.get(MCP_STDIO_ADDR_ENV)
        if not command or not address:
            return None
        return {"command": command, "args": [address]}
    url = mcp_url()
    if url is None:
        return None
    if shape in ("mcp", "openai-agents"):
        return {"url": url}
    if shape == "langchain":
        return {"url": url, "transport": "streamable_http"}
    raise ValueError(f"unknown MCP client shape {shape!r}: mcp, langchain, openai-agents or stdio")
