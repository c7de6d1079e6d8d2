"""jiyi's MCP server (official `mcp` SDK): jiyi's memory tools and mem0's, over stdio and streamable HTTP."""

from jiyi.mcp.caller import Caller, caller_for_principal
from jiyi.mcp.http import McpEndpoint
from jiyi.mcp.server import build_mcp_server
from jiyi.mcp.stdio import serve_stdio
from jiyi.mcp.tools import ToolNames

__all__ = ["Caller", "McpEndpoint", "ToolNames", "build_mcp_server", "caller_for_principal", "serve_stdio"]
