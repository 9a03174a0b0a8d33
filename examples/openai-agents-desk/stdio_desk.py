"""The help desk of ``desk.py`` with its forecasts over an MCP server on
stdio, the shape an Agents SDK app with a server of its own has
(``MCPServerStdio``): ``--forecasts own`` starts ``forecast_server.py``,
the app's own server, each time the desk connects; ``--forecasts fixture``
binds the harness's MCP fixture through its stdio bridge
(``mcp_server_params("stdio")``), a small native process that forwards to
the fixture the trial already runs. Everything else is ``desk.py``'s.

``cargo bench -p helpdesk --bench mcp_stdio`` times the extension
pack both ways, beside ``desk.py``'s binding of the fixture over HTTP.
"""

from __future__ import annotations

import argparse
import os
import sys

from agents.mcp import MCPServerStdio

from desk import build_agent
from symfonic_evals_protocol import mcp_server_params, serve
from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment

HERE = os.path.dirname(os.path.abspath(__file__))


def stdio_agent(forecasts: str):
    """``desk.py``'s agent, its forecasts served over stdio."""
    agent = build_agent()
    if forecasts == "fixture":
        params = mcp_server_params("stdio")
    else:
        params = {"command": sys.executable, "args": [os.path.join(HERE, "forecast_server.py")]}
    server = MCPServerStdio(params=params, name="forecasts", cache_tools_list=True, client_session_timeout_seconds=30)
    tools = [tool for tool in agent.tools if tool.name != "weather_lookup"]
    return agent.clone(tools=tools, mcp_servers=[server])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="The help desk, its forecasts over MCP on stdio.")
    parser.add_argument("--forecasts", choices=["own", "fixture"], default="own")
    known, _ = parser.parse_known_args(argv)
    factory = OpenAIAgentsDeployment.factory(
        lambda: stdio_agent(known.forecasts), traits=["idempotent-effects"], extension_tools=["weather_lookup"]
    )
    return serve(factory, argv=argv)


if __name__ == "__main__":
    sys.exit(main())
