"""Driving jiyi's MCP server with the `mcp` SDK's own client, over stdio (a `jiyi mcp` subprocess) and over
streamable HTTP (a real uvicorn server)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client

import jiyi

JIYI_TOOLS = {"memory_add", "memory_search", "memory_get_context", "memory_update", "memory_forget", "memory_list",
              "memory_history", "memory_entities", "memory_relations", "memory_merge_entities", "memory_rename_entity",
              "memory_close_relation"}
MEM0_TOOLS = {"add_memory", "search_memories", "get_memories", "get_memory", "update_memory", "delete_memory",
              "delete_all_memories", "list_entities", "delete_entities"}


def jiyi_mcp(store: Path, *args: str) -> StdioServerParameters:
    """`python -m jiyi mcp …` with its own store and the offline test embedder, running the jiyi these tests
    imported: the SDK starts the server with a minimal environment, without PYTHONPATH, where the installed jiyi
    (another checkout's, in a shared environment) would be the one imported."""
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "jiyi", "mcp", "--store", f"sqlite:///{store}", "--embedder", "hashing",
                                       *args],
                                 env={**get_default_environment(), "PYTHONPATH": str(Path(jiyi.__file__).parents[1])})


@asynccontextmanager
async def over_http(url: str, key: str | None = None, header: str = "Authorization") -> AsyncIterator[Client]:
    """An MCP client of the server at `url` (its /mcp), presenting `key` the way clients are configured to."""
    headers = {} if key is None else {header: f"Bearer {key}" if header == "Authorization" else key}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
        yield client


async def ok(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """A tool's structured answer; the call must succeed."""
    result = await client.call_tool(tool, arguments or {})
    assert not result.is_error, (tool, result.content)
    return result.structured_content


async def refused(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> str:
    """The text of a tool error; the call must fail as a tool result, not as a protocol error."""
    result = await client.call_tool(tool, arguments or {})
    assert result.is_error, (tool, result.structured_content)
    return "".join(getattr(block, "text", "") for block in result.content)
