"""What each MCP tool does: parse its (already schema-checked) arguments, call the Memory, shape the answer.

Whose memory: every handler gets the Caller (caller.py); ids are checked on every call, so another user's memory is
"not found", exactly as the REST routes answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from jiyi.entity_view import entity_item, entity_items, entity_store, names_of, relation_item, relation_items
from jiyi.errors import Forbidden, InvalidInput, NotFound
from jiyi.mcp.caller import Caller
from jiyi.mcp.context import conversation_context
from jiyi.memory import AsyncMemory
from jiyi.projects import project_categories
from jiyi.requests import AddRequest, ListRequest, SearchQuery
from jiyi.views import entity_deletion

Handler = Callable[[AsyncMemory, Caller, dict[str, Any]], Awaitable[dict[str, Any]]]

MAX_METADATA_BYTES = 16_384  # as the REST API's default (JIYI_MAX_METADATA_BYTES)
FORGOTTEN_BY_REQUEST = "the user asked to forget it"
_BRIEF_FIELDS = ("id", "memory", "score", "memory_type", "category", "agent_id", "created_at", "updated_at",
                 "event_time")


def _brief(item: dict[str, Any]) -> dict[str, Any]:
    """A memory as a model needs it: no hashes, provenance or bookkeeping."""
    return {key: item[key] for key in _BRIEF_FIELDS if item.get(key) is not None}


def _scope(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return {"user_id": caller.user(args.get("user_id")), "agent_id": caller.agent(args.get("agent_id"))}


def _types(args: dict[str, Any]) -> dict[str, Any] | None:
    types = args.get("memory_types")
    return {"jiyi.memory_type": {"in": types}} if types else None


async def _categories(memory: AsyncMemory, caller: Caller) -> list[Any] | None:
    """The caller's project's own categories (set with mem0's project API), None for mem0's: what the platform
    routes categorise the project's memories in."""
    return await project_categories(memory.store, caller.project_id)


async def _owned(memory: AsyncMemory, caller: Caller, memory_id: str) -> dict[str, Any]:
    """The memory, if this caller may see it; another user's memory is simply not found."""
    item = await memory.get(memory_id)
    if not caller.sees(item):
        raise NotFound(f"memory {memory_id} not found")
    return item


# --- jiyi's tools ----------------------------------------------------------------------------------------------


async def add(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    content = args["content"].strip()
    if not content:
        raise InvalidInput("content must not be blank")
    result = await memory.run_add(AddRequest.build(
        [{"role": "user", "content": content}], **_scope(caller, args), infer=False,
        memory_type=args.get("memory_type"), importance=args.get("importance"),
        custom_categories=await _categories(memory, caller)))
    [added] = result["results"]
    return {"memory_id": added["id"], "memory": added["memory"], "memory_type": added["memory_type"],
            "message": "Remembered."}


async def search(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    result = await memory.run_search(SearchQuery.build(args["query"], **_scope(caller, args),
                                                       top_k=args.get("top_k", 5), filters=_types(args)))
    return {"results": [_brief(item) for item in result["results"]]}


async def get_context(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    messages, conversation = args.get("messages"), args.get("conversation")
    if messages and conversation:
        raise InvalidInput("give the recent conversation once: as messages or as conversation text")
    if conversation is not None:
        messages = [{"role": "user", "content": conversation}] if conversation.strip() else None
    return await conversation_context(memory, **_scope(caller, args), messages=messages or None,
                                      max_tokens=args.get("max_tokens", 1000))


async def update(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    await _owned(memory, caller, args["memory_id"])
    await memory.update(args["memory_id"], text=args["content"], custom_categories=await _categories(memory, caller))
    return {"memory_id": args["memory_id"], "memory": args["content"].strip(), "message": "Updated."}


async def forget(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    await _owned(memory, caller, args["memory_id"])
    reason = (args.get("reason") or "").strip() or FORGOTTEN_BY_REQUEST
    await memory.delete(args["memory_id"], reason=reason)
    return {"memory_id": args["memory_id"], "forgotten": True, "reason": reason,
            "message": "Forgotten: it no longer comes up in search or recall; its history keeps the reason."}


async def list_memories(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    page = args.get("page", 1)
    result = await memory.run_list(ListRequest.build_page(**_scope(caller, args), filters=_types(args), page=page,
                                                          page_size=args.get("limit", 50)))
    return {"count": result["count"], "page": page, "results": [_brief(item) for item in result["results"]]}


async def history(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    memory_id = args["memory_id"]
    if caller.user_id is not None or caller.agent_id is not None:
        # The owner may read a forgotten memory's history too (when and why it was forgotten): look past deletion.
        record = await asyncio.to_thread(memory.store.get, memory_id, True)
        if record is None or not caller.sees(record.scope.as_dict()):
            raise NotFound(f"memory {memory_id} not found")
    return {"memory_id": memory_id, "history": await memory.history(memory_id)}


# --- the user's entity graph (entity_view.py shapes it; the store's EntityStore port keeps it) -------------------


def _graph_user(caller: Caller, args: dict[str, Any]) -> str:
    """Whose graph: the caller's user. The graph is made from all of the user's memories, every agent's, so a
    connection held to one agent reaches none of it."""
    user_id = caller.user(args.get("user_id"))
    assert user_id is not None  # required
    if caller.agent_id is not None:
        raise Forbidden(f"the entity graph is user {user_id}'s as a whole, made from every agent's memories: a "
                        f"connection held to agent {caller.agent_id} can neither read nor change it")
    return user_id


async def entities(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    user_id = _graph_user(caller, args)
    found = await asyncio.to_thread(entity_items, entity_store(memory.store), user_id, args.get("kind"))
    return {"user_id": user_id, "count": len(found), "results": found[:args.get("limit", 100)]}


async def relations(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    user_id = _graph_user(caller, args)
    found = await asyncio.to_thread(relation_items, entity_store(memory.store), user_id, args.get("entity_id"),
                                    bool(args.get("include_closed")))
    return {"user_id": user_id, "count": len(found), "results": found}


async def merge_entities(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    user_id, store = _graph_user(caller, args), entity_store(memory.store)

    def merge() -> dict[str, Any]:
        merged = store.merge_entities(user_id, args["keep_id"], args["merge_id"], memory.clock())
        graph = store.graph(user_id)
        kept = entity_item(merged.entity, graph, names_of(graph, user_id),
                           store.entity_memory_counts(user_id).get(merged.entity.id, 0))
        return {"entity": kept, "merged_id": args["merge_id"], "moved_relations": merged.moved,
                "joined_relations": merged.joined, "dropped_relations": merged.dropped,
                "message": f"Merged into {merged.entity.name}: its aliases are now {', '.join(kept['aliases'])}."}

    return await asyncio.to_thread(merge)


async def rename_entity(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    user_id, store = _graph_user(caller, args), entity_store(memory.store)
    renamed = await asyncio.to_thread(store.rename_entity, user_id, args["entity_id"], args["name"], memory.clock())
    return {"id": renamed.id, "kind": renamed.kind, "name": renamed.name, "aliases": renamed.surface_forms()[1:],
            "message": f"Renamed: {renamed.name}; the old name stays an alias."}


def _moment(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidInput(f"{name} must be an ISO 8601 date or time, such as 2026-03-01 or "
                           "2026-03-01T18:00:00+08:00") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def close_relation(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    user_id, store = _graph_user(caller, args), entity_store(memory.store)
    ended_at = _moment(args.get("ended_at"), "ended_at")

    def close() -> dict[str, Any]:
        closed = store.close_relation(user_id, args["relation_id"], memory.clock(), ended_at)
        return {"relation": relation_item(closed, names_of(store.graph(user_id), user_id)),
                "message": "Closed: kept in the history with when it ended, no longer current."}

    return await asyncio.to_thread(close)


# --- mem0's tools (mem0-mcp-server's names and arguments) --------------------------------------------------------


def _mem0_scope(caller: Caller, args: dict[str, Any], filters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ids a mem0 tool acts on: the caller's user and agent, else what the arguments (or filters) name."""
    caller.check_filters(filters)
    return {"user_id": caller.user(args.get("user_id"), required=False), "agent_id": caller.agent(args.get("agent_id")),
            "run_id": args.get("run_id")}


def _app_filter(args: dict[str, Any]) -> dict[str, Any] | None:
    return {"app_id": args["app_id"]} if args.get("app_id") else None  # a metadata condition: jiyi has no app scope


async def add_memory(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    messages = args.get("messages") or [{"role": "user", "content": args["text"]}]
    metadata = dict(args.get("metadata") or {})
    if args.get("app_id"):
        metadata["app_id"] = args["app_id"]
    size = len(json.dumps(metadata, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is {size:,} bytes as JSON; the limit is {MAX_METADATA_BYTES:,}")
    return await memory.run_add(AddRequest.build(
        messages, **_mem0_scope(caller, args), metadata=metadata or None, remember=not args.get("messages"),
        custom_categories=await _categories(memory, caller)))


async def search_memories(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    filters = args.get("filters")
    return await memory.run_search(SearchQuery.build(args["query"], **_mem0_scope(caller, {}, filters),
                                                     filters=filters, limit=args.get("limit")))


async def get_memories(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    filters, page, page_size = args.get("filters"), args.get("page", 1), args.get("page_size", 100)
    result = await memory.run_list(ListRequest.build_page(**_mem0_scope(caller, {}, filters), filters=filters,
                                                          page=page, page_size=page_size))
    return {**result, "page": page, "page_size": page_size}


async def get_memory(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return await _owned(memory, caller, args["memory_id"])


async def update_memory(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    await _owned(memory, caller, args["memory_id"])
    return {"id": args["memory_id"], **await memory.update(args["memory_id"], text=args["text"],
                                                           custom_categories=await _categories(memory, caller))}


async def delete_memory(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    await _owned(memory, caller, args["memory_id"])
    return {"id": args["memory_id"], **await memory.delete(args["memory_id"])}


async def delete_all_memories(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    return await memory.delete_all(**_mem0_scope(caller, args), filters=_app_filter(args))


async def list_entities(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    found = await memory.entities(user_id=caller.user_id)
    if caller.agent_id is not None:
        found = [e for e in found if e["type"] != "agent" or e["name"] == caller.agent_id]
    return {"results": found}


async def delete_entities(memory: AsyncMemory, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """As its schema says: the connection's user when none is named (deleting that user); a connection tied to no
    user must name what to delete. One user, agent or run is deleted as the REST API's DELETE /v2/entities/ does,
    answering what went; one that an earlier delete emptied (its user's, as mem0's reset() deletes the user first)
    is no error. Several named together, or an app, narrow one deletion of their memories."""
    if caller.user_id is None and not any(args.get(key) for key in ("user_id", "agent_id", "app_id", "run_id")):
        raise InvalidInput("name the user_id, agent_id, app_id or run_id to delete: this connection (an admin key, "
                           "or a server without keys) is not tied to one user")
    scope = _mem0_scope(caller, args)  # refuses another user's or agent's
    named = [(kind, args[f"{kind}_id"]) for kind in ("user", "agent", "run") if args.get(f"{kind}_id")]
    if args.get("app_id") or len(named) > 1:
        return await memory.delete_all(**scope, filters=_app_filter(args))
    kind, name = named[0] if named else ("user", scope["user_id"])
    deleted = await memory.delete_entity(kind, name, user_id=caller.user_id, agent_id=caller.agent_id)
    return entity_deletion(kind, name, deleted)


def changes_made(tool: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The memory changes a write tool's answer reports, as mem0's result items (event, memory_type): what the REST
    routes count in memory_add_total / memory_update_total / memory_delete_total."""
    if tool == "memory.add":
        return [{"event": "ADD", "memory_type": result.get("memory_type")}]
    if tool == "add_memory":
        return list(result.get("results") or [])
    if tool in ("memory.update", "update_memory"):
        return [{"event": "UPDATE"}]
    if tool in ("memory.forget", "delete_memory"):
        return [{"event": "DELETE"}]
    return []


HANDLERS: dict[str, Handler] = {
    "memory.add": add,
    "memory.search": search,
    "memory.get_context": get_context,
    "memory.update": update,
    "memory.forget": forget,
    "memory.list": list_memories,
    "memory.history": history,
    "memory.entities": entities,
    "memory.relations": relations,
    "memory.merge_entities": merge_entities,
    "memory.rename_entity": rename_entity,
    "memory.close_relation": close_relation,
    "add_memory": add_memory,
    "search_memories": search_memories,
    "get_memories": get_memories,
    "get_memory": get_memory,
    "update_memory": update_memory,
    "delete_memory": delete_memory,
    "delete_all_memories": delete_all_memories,
    "list_entities": list_entities,
    "delete_entities": delete_entities,
}
