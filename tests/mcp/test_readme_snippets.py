"""The MCP client configurations of docs/mcp.md work as written: the stdio block's command is started and the HTTP
blocks are connected to, each with the MCP SDK's own client speaking the initialize handshake, as today's desktop
clients do (what changes: the checkout's path, the store, the key)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import RunningServer
from tests.markdown import page
from tests.mcp.helpers import JIYI_TOOLS, MEM0_TOOLS, ok

README = page("docs/mcp.md")
CONFIGS = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", README, re.S) if "mcpServers" in block]


def config(needs: str) -> dict[str, Any]:
    [server] = [c["mcpServers"]["jiyi"] for c in CONFIGS if needs in c["mcpServers"]["jiyi"]
                and "mcp-remote" not in json.dumps(c)]
    return dict(server)


def test_the_stdio_config_starts_the_server(tmp_path: Path) -> None:
    server = config("command")
    assert server["command"].endswith("/.venv/bin/jiyi") and server["args"][0] == "mcp"
    jiyi = Path(sys.executable).parent / "jiyi"  # the checkout's .venv/bin/jiyi, here the venv running the tests
    # The store: a fresh data directory instead of ~/.jiyi; the embedder is the default, as a user runs it.
    params = StdioServerParameters(command=str(jiyi), args=server["args"],
                                   env={**server.get("env", {}), "JIYI_HOME": str(tmp_path / "home")})

    async def scenario() -> None:
        async with Client(params, mode="legacy") as client:  # the initialize handshake, as desktop clients do
            assert {tool.name for tool in (await client.list_tools()).tools} == JIYI_TOOLS | MEM0_TOOLS
            added = await ok(client, "memory_add", {"content": "用户对海鲜过敏", "memory_type": "fact"})
            found = await ok(client, "memory_search", {"query": "海鲜"})
            assert found["results"][0]["id"] == added["memory_id"]

    asyncio.run(scenario())
    assert (tmp_path / "home" / "memory.db").is_file()


def test_the_http_configs_reach_the_keys_user(make_server: Callable[..., RunningServer]) -> None:
    key = "readme-key-of-alice-0d5e"
    running = make_server(user_api_keys={key: "alice"})
    cursor, cherry = config("url"), config("baseUrl")
    assert cherry["type"] == "streamableHttp"

    async def connect(server: dict[str, Any]) -> set[str]:
        url = (server.get("url") or server["baseUrl"]).replace("http://127.0.0.1:8888", running.url)
        headers = {name: value.replace("YOUR_KEY", key) for name, value in server["headers"].items()}
        async with httpx2.AsyncClient(headers=headers) as http, \
                Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            await ok(client, "memory_add", {"content": "用户喜欢爬山"})
            assert (await ok(client, "memory_list", {}))["results"][0]["memory"] == "用户喜欢爬山"
            return {tool.name for tool in (await client.list_tools()).tools}

    for server in (cursor, cherry):
        assert asyncio.run(connect(server)) == JIYI_TOOLS | MEM0_TOOLS
