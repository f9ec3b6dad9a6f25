"""``replaykit mcp``: an MCP server over the run store, for coding agents (stdio, or streamable HTTP
on 127.0.0.1 with a token). Built on the official MCP Python SDK (the ``mcp`` extra).

    from replaykit.mcp.server import build_server
    build_server(RunStore("runs")).run("stdio")

Above the engines and exporters, like ``replaykit/viewer/``: the core never imports it. See docs/mcp.md.
"""
