"""MCP over stdio: one user's memory for a desktop client that launches `jiyi mcp --user-id alice`."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from jiyi.mcp.caller import Caller
from jiyi.mcp.server import build_mcp_server
from jiyi.mcp.tools import ToolNames
from jiyi.memory import AsyncMemory


async def serve_stdio(memory: AsyncMemory, caller: Caller, *,
                      tool_names: ToolNames | str = ToolNames.UNDERSCORE) -> None:
    """Serve until the client closes stdin, then close the Memory. Standard output carries only the protocol."""
    server = build_mcp_server(memory, lambda ctx: caller, tool_names=tool_names)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await memory.close()
