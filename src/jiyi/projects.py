"""A project's settings as mem0's platform keeps them (custom instructions, custom categories), in the store's state.

A project is what an API key stands for (server/auth.py: a user key is a project of one user, the admin key or an
open server is "default"). The settings are written through mem0's project API and read wherever memories are
written for that project — the platform routes and the MCP tools — so a project's own categories apply to every
memory written for it, whichever way it came in.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jiyi.stores.base import Coordination

DEFAULT_PROJECT = "default"  # the admin key's, an open server's and `jiyi mcp --user-id …`'s


def _key(project_id: str) -> str:
    return f"platform:project:{project_id}"


async def project_settings(store: Coordination, project_id: str) -> dict[str, Any]:
    """The project's settings as last written ({} for none)."""
    raw = await asyncio.to_thread(store.get_state, _key(project_id))
    settings: dict[str, Any] = json.loads(raw) if raw else {}
    return settings


async def update_project_settings(store: Coordination, project_id: str, changes: dict[str, Any]) -> None:
    settings = {**await project_settings(store, project_id), **changes}
    await asyncio.to_thread(store.set_state, _key(project_id), json.dumps(settings, ensure_ascii=False))


async def project_categories(store: Coordination, project_id: str) -> list[Any] | None:
    """The project's custom_categories, or None for mem0's default list."""
    return (await project_settings(store, project_id)).get("custom_categories") or None
