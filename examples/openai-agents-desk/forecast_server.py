"""The forecasts as an app's own MCP server over stdio, as the MCP SDK's
quick-start writes one: the Agents SDK starts it (a fresh interpreter
importing the ``mcp`` package) each time the desk connects its
``MCPServerStdio``. ``stdio_desk.py`` binds it; the harness's fork
server forks the desk, but not this grandchild."""

from mcp.server.mcpserver import MCPServer

FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}
server = MCPServer("forecasts")


@server.tool()
def weather_lookup(city: str) -> dict:
    """Look up the weather in a city."""
    return {"city": city, "forecast": FORECASTS.get(city, "no forecast")}


if __name__ == "__main__":
    server.run("stdio")
