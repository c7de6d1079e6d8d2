"""The MCP tools: names, JSON schemas and descriptions written for the model that reads them.

Two families. jiyi's own (`memory.add`, `memory.search`, `memory.get_context`, `memory.update`, `memory.forget`,
`memory.list`, `memory.history`; the design's §7; and for the user's entity graph `memory.entities`,
`memory.relations`, `memory.merge_entities`, `memory.rename_entity`, `memory.close_relation`), and mem0's MCP
server's, with its exact names and argument names (mem0-mcp-server 0.2.1 on PyPI, github.com/mem0ai/mem0-mcp) so
that an agent prompt or a client set up for mem0's server works unchanged. mem0's server has no tools for its graph,
and its `list_entities` means the users, agents and runs that have memories: so the graph's tools are jiyi's own,
named as jiyi's are (`memory.entities`, not another `list_entities`).

Tool names: the MCP specification (2025-11-25) allows dots, but several clients refuse them — Claude Desktop rejects
the whole tool list (names must match ^[a-zA-Z0-9_-]{1,64}$), OpenAI's API and Codex, GitHub Copilot CLI and any client
passing names straight to the Anthropic API answer 400, Cursor calls `docs_find` for `docs.find`. So jiyi's tools are
listed as `memory_add` … by default (`ToolNames.UNDERSCORE`), and as `memory.add` … only when asked
(`ToolNames.DOTTED`); a call by either spelling works whichever is listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mcp.types import Tool, ToolAnnotations

from jiyi.stores.entities import ENTITY_KINDS

DEFAULT_MAX_TEXT_CHARS = 65_536
DEFAULT_MAX_QUERY_CHARS = 4_000


class ToolNames(StrEnum):
    UNDERSCORE = "underscore"  # memory_add: every client
    DOTTED = "dotted"  # memory.add: the design's names; clients that follow the 2025-11-25 specification


MEMORY_TYPES = ["fact", "preference", "episodic", "semantic", "procedural"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str  # as the design or mem0 names it: "memory.add", "add_memory"
    title: str
    description: str
    input_schema: dict[str, Any]
    writes: bool = False  # refused to read-only keys
    destructive: bool = False

    def listed_name(self, names: ToolNames) -> str:
        return self.name.replace(".", "_") if names is ToolNames.UNDERSCORE else self.name

    def as_tool(self, names: ToolNames) -> Tool:
        description = self.description
        if names is ToolNames.UNDERSCORE:  # the descriptions point at each other by name
            for dotted in JIYI_TOOL_NAMES:
                description = description.replace(dotted, dotted.replace(".", "_"))
        return Tool(
            name=self.listed_name(names),
            title=self.title,
            description=description,
            input_schema=self.input_schema,
            annotations=ToolAnnotations(title=self.title, read_only_hint=not self.writes,
                                        destructive_hint=self.destructive if self.writes else None,
                                        idempotent_hint=True if not self.writes else None, open_world_hint=False),
        )


JIYI_TOOL_NAMES = ("memory.add", "memory.search", "memory.get_context", "memory.update", "memory.forget",
                   "memory.list", "memory.history", "memory.entities", "memory.relations", "memory.merge_entities",
                   "memory.rename_entity", "memory.close_relation")
MEM0_TOOL_NAMES = ("add_memory", "search_memories", "get_memories", "get_memory", "update_memory", "delete_memory",
                   "delete_all_memories", "list_entities", "delete_entities")


def _string(description: str, max_length: int = 256) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


USER_ID = _string("Whose memories. Leave it out when the connection belongs to one user (a user's API key, or "
                  "`jiyi mcp --user-id …`): that user is used. Required with an admin key or a server without keys.")
AGENT_ID = _string("Optional: the assistant or character whose memories of the user these are (one user can have "
                   "several). Leave it out for the user's memories as a whole.")
MEMORY_ID = _string("The memory's id, as memory.search, memory.list or memory.get_context return it.")
MEMORY_TYPE_LIST = {"type": "array", "items": {"type": "string", "enum": MEMORY_TYPES}, "minItems": 1,
                    "uniqueItems": True, "description": "Only memories of these types."}


def _message(max_text_chars: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "role": {"type": "string", "enum": ["user", "assistant", "system"]},
            "content": {"type": "string", "maxLength": max_text_chars},
            "name": _string("Optional: the speaker's name."),
        },
        "required": ["role", "content"],
    }


FILTERS = {
    "type": "object",
    "description": ("Optional conditions in mem0's filter grammar, ANDed with the connection's user: field "
                    "conditions {\"created_at\": {\"gte\": \"2026-01-01\"}}, metadata keys {\"topic\": \"travel\"}, "
                    "operators eq ne gt gte lt lte in nin contains icontains, and {\"AND\": […]}, {\"OR\": […]}, "
                    "{\"NOT\": …}. With an admin key, name the user here: {\"user_id\": \"alice\"}."),
}
ENABLE_GRAPH = {"type": "boolean", "description": "Accepted for mem0 compatibility and ignored here: these tools do "
                                                  "not answer relations (memory.relations does; so does the REST "
                                                  "API)."}
ENTITY_ID = _string("The entity's id, as memory.entities returns it.")


def jiyi_tools(max_text_chars: int, max_query_chars: int) -> list[ToolSpec]:
    text = _string("", max_text_chars)
    return [
        ToolSpec("memory.add", "Remember something", description=(
            "Save one thing worth remembering about the user for later conversations: a fact, a preference, a plan, "
            "an event. Write it as one short self-contained sentence in the user's language, about the user in the "
            "third person (\"用户…\" / \"User …\"), with absolute dates when you know today's date. One memory per "
            "call; it is stored as written. Use it when the user tells you something lasting about themselves or "
            "asks you to remember it (\"记住…\", \"remember that…\"), not for chit-chat or what only matters for "
            "this reply.\n"
            "Examples:\n"
            "- 用户说“我对海鲜过敏” → {\"content\": \"用户对海鲜过敏\", \"memory_type\": \"fact\", "
            "\"importance\": 0.9}\n"
            "- User: \"I always take the window seat\" → {\"content\": \"User prefers window seats\", "
            "\"memory_type\": \"preference\"}\n"
            "- 用户说“3 月 11 日去上海面试” → {\"content\": \"用户 3 月 11 日去上海面试\", \"memory_type\": "
            "\"episodic\", \"importance\": 0.6}"),
            input_schema=_object({
                "content": {**text, "description": "What to remember, as one sentence about the user."},
                "memory_type": {"type": "string", "enum": MEMORY_TYPES, "description": (
                    "fact: a lasting fact (health, family, work, where they live); preference: likes, dislikes, "
                    "habits (kept as stable); episodic (the default): something that happened or will happen; "
                    "semantic: general knowledge the user shared; procedural: how the user wants things done.")},
                "importance": {"type": "number", "minimum": 0, "maximum": 1, "description": (
                    "How much it matters, 0 to 1 (default 0.5). Important memories fade slower: 0.8–1 for health, "
                    "safety and identity, 0.5 for ordinary facts, 0.2 for small details.")},
                "user_id": USER_ID,
                "agent_id": AGENT_ID,
            }, ["content"]),
            writes=True),
        ToolSpec("memory.search", "Search memories", description=(
            "Search the user's long-term memory by meaning and by keywords, in Chinese and English (and across the "
            "two). Use it before answering anything that depends on what you know about the user — preferences, "
            "facts, plans, earlier conversations — and when they ask what you remember. Best matches first, each "
            "with its id (for memory.update and memory.forget), text, type and a score from 0 to 1.\n"
            "Examples:\n"
            "- 用户问“晚饭吃什么好？” → {\"query\": \"饮食 过敏 喜欢吃 不吃\", \"top_k\": 5}\n"
            "- \"Where does my sister live?\" → {\"query\": \"user's sister lives in\", \"top_k\": 3}\n"
            "- only preferences → {\"query\": \"旅行偏好\", \"memory_types\": [\"preference\"]}"),
            input_schema=_object({
                "query": _string("What to look for: a question or keywords.", max_query_chars),
                "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                          "description": "How many results at most (default 5)."},
                "memory_types": MEMORY_TYPE_LIST,
                "user_id": USER_ID,
                "agent_id": AGENT_ID,
            }, ["query"])),
        ToolSpec("memory.get_context", "Memory for this conversation", description=(
            "The memory to have in mind before replying, in one call: the user's core profile (what always "
            "matters: who they are, allergies, lasting preferences) and the memories relevant to the recent "
            "conversation, as one text block within a token budget. Call it when a conversation starts and when the "
            "topic changes. Pass the recent conversation as `messages` (the last one the user's) or as plain "
            "`conversation` text; with neither you get the profile and the latest memories.\n"
            "Examples:\n"
            "- {\"messages\": [{\"role\": \"user\", \"content\": \"晚饭吃什么好？\"}], \"max_tokens\": 800}\n"
            "- {\"conversation\": \"User: any ideas for the weekend?\", \"max_tokens\": 500}\n"
            "- a new chat, nothing said yet → {\"max_tokens\": 1000}"),
            input_schema=_object({
                "max_tokens": {"type": "integer", "minimum": 50, "maximum": 8000, "default": 1000,
                               "description": "The most the block may take, in tokens (estimated; default 1000)."},
                "messages": {"type": "array", "items": _message(max_text_chars), "maxItems": 100,
                             "description": "The recent conversation, oldest first, as role/content messages."},
                "conversation": {**text, "description": "The recent conversation as plain text (instead of "
                                                        "messages)."},
                "user_id": USER_ID,
                "agent_id": AGENT_ID,
            })),
        ToolSpec("memory.update", "Correct a memory", description=(
            "Replace the text of one memory that has changed or was wrong; the old text stays in its history. "
            "Find the id with memory.search first.\n"
            "Examples:\n"
            "- 用户说“我搬到深圳了”，记忆“用户住在上海”的 id 是 m1 → {\"memory_id\": \"m1\", \"content\": "
            "\"用户住在深圳\"}\n"
            "- \"I'm vegetarian now\" → {\"memory_id\": \"<id of 'User eats meat'>\", \"content\": "
            "\"User is vegetarian\"}"),
            input_schema=_object({"memory_id": MEMORY_ID,
                                  "content": {**text, "description": "The memory's new text."}},
                                 ["memory_id", "content"]),
            writes=True, destructive=True),
        ToolSpec("memory.forget", "Forget a memory", description=(
            "Forget one memory: the user asked you to (\"忘掉…\", \"别记着…\", \"forget that…\"), it is wrong and not "
            "worth correcting, or it is private. It is gone from search and recall at once; that it was forgotten, "
            "and why, stays in its history (memory.history). Find the id with memory.search first and forget only "
            "what the user meant.\n"
            "Examples:\n"
            "- 用户说“把我前任的事都忘了吧” → memory.search “前任”, then {\"memory_id\": \"<id>\", \"reason\": "
            "\"用户要求忘记前任相关的事\"}\n"
            "- \"Forget my old phone number\" → {\"memory_id\": \"<id>\", \"reason\": "
            "\"the user asked to forget it\"}"),
            input_schema=_object({"memory_id": MEMORY_ID,
                                  "reason": _string("Why it is forgotten (kept in the history; default: the user "
                                                    "asked to forget it).", 1000)},
                                 ["memory_id"]),
            writes=True, destructive=True),
        ToolSpec("memory.list", "List memories", description=(
            "The user's memories, newest first, a page at a time: for \"what do you remember about me?\" / "
            "\"你都记得我什么？\", or to look them over before tidying up. To find something specific, memory.search "
            "is better.\n"
            "Examples: {\"limit\": 20}; {\"limit\": 20, \"page\": 2}; {\"memory_types\": [\"preference\"]}"),
            input_schema=_object({
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50,
                          "description": "Memories per page (default 50)."},
                "page": {"type": "integer", "minimum": 1, "default": 1, "description": "Which page, from 1."},
                "memory_types": MEMORY_TYPE_LIST,
                "user_id": USER_ID,
                "agent_id": AGENT_ID,
            })),
        ToolSpec("memory.history", "History of a memory", description=(
            "How one memory came to be: when it was added, every change (old and new text), and when and why it was "
            "forgotten. For \"when did I tell you that?\" / \"你什么时候记下的？\", or to explain a change.\n"
            "Example: {\"memory_id\": \"<id from memory.search or memory.list>\"}"),
            input_schema=_object({"memory_id": MEMORY_ID}, ["memory_id"])),
        *entity_tools(),
    ]


def entity_tools() -> list[ToolSpec]:
    """The user's entity graph (issue 32): who and what is in the user's life, how they are related, and the
    corrections a person makes when the extraction got it wrong."""
    return [
        ToolSpec("memory.entities", "People and things in the user's life", description=(
            "The people, pets, places, organisations, things and events jiyi knows from the user's conversations, "
            "each with its id, kind, name, aliases (表姐, my cousin…), how many memories mention it and its current "
            "relations to the user and to each other (\"Arjun brother_of alice\"). Use it for \"who is in my "
            "life?\" / \"你都知道我家里有谁？\", or to find the ids to correct with memory.merge_entities, "
            "memory.rename_entity or memory.close_relation. (mem0's list_entities lists users, agents and runs "
            "instead.)\n"
            "Examples: {}; {\"kind\": \"pet\"}; {\"kind\": \"person\", \"limit\": 20}"),
            input_schema=_object({
                "kind": {"type": "string", "enum": list(ENTITY_KINDS), "description": "Only entities of this kind."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100,
                          "description": "How many at most (default 100), those most talked about first."},
                "user_id": USER_ID,
            })),
        ToolSpec("memory.relations", "Relations over time", description=(
            "How the people and things in the user's life are related, with when each relation began (valid_at) "
            "and, for one that ended, when (invalid_at: a move closes \"lives_in Denver\", a breakup closes "
            "\"girlfriend_of\"), and the ids of the memories it came from. Current ones only unless "
            "include_closed; one entity's only with entity_id. For \"我哥现在在哪？\" / \"where did my sister "
            "live before?\", or to find a relation's id for memory.close_relation.\n"
            "Examples: {}; {\"entity_id\": \"<id from memory.entities>\", \"include_closed\": true}"),
            input_schema=_object({
                "entity_id": {**ENTITY_ID, "description": "Only this entity's relations."},
                "include_closed": {"type": "boolean", "default": False,
                                   "description": "Also the relations that ended (default: current ones only)."},
                "user_id": USER_ID,
            })),
        ToolSpec("memory.merge_entities", "Merge two entities", description=(
            "Two entities that are one (阿俊 and Arjun, both the user's brother; \"my cousin\" and 小雅) become the "
            "one kept: its aliases gain the other's name and aliases, the other's relations and memories move to "
            "it (a relation both had becomes one), and the other is gone. Each change stays in the graph's history. "
            "Only when the user confirms they are the same; find the ids with memory.entities.\n"
            "Example: {\"keep_id\": \"<id of Arjun>\", \"merge_id\": \"<id of 阿俊>\"}"),
            input_schema=_object({
                "keep_id": {**ENTITY_ID, "description": "The entity that stays (its name and kind are kept)."},
                "merge_id": {**ENTITY_ID, "description": "The entity merged into it, then gone."},
                "user_id": USER_ID,
            }, ["keep_id", "merge_id"]),
            writes=True, destructive=True),
        ToolSpec("memory.rename_entity", "Rename an entity", description=(
            "Give an entity its right name (\"我妈\" → 王丽, a nickname → the full name); the old name stays an alias, "
            "so what was said with it still finds the entity.\n"
            "Example: {\"entity_id\": \"<id>\", \"name\": \"王丽\"}"),
            input_schema=_object({
                "entity_id": ENTITY_ID,
                "name": _string("The new name.", 200),
                "user_id": USER_ID,
            }, ["entity_id", "name"]),
            writes=True),
        ToolSpec("memory.close_relation", "End a relation", description=(
            "A relation that no longer holds (the user left a job, moved away, broke up: \"我已经从那家公司离职了\") "
            "is closed: it stays in the "
            "history with when it ended, and is no longer current, so search and memory.entities stop treating it "
            "as true. Find its id with memory.relations.\n"
            "Examples: {\"relation_id\": \"<id>\"}; {\"relation_id\": \"<id>\", \"ended_at\": \"2026-03-01\"}"),
            input_schema=_object({
                "relation_id": _string("The relation's id, as memory.relations or memory.entities returns it."),
                "ended_at": _string("When it ended, as an ISO 8601 date or time (default: now).", 40),
                "user_id": USER_ID,
            }, ["relation_id"]),
            writes=True),
    ]


def mem0_tools(max_text_chars: int, max_query_chars: int) -> list[ToolSpec]:
    scope = {
        "user_id": _string("The user (default: the connection's user; another user only with an admin key)."),
        "agent_id": _string("Optional agent scope."),
        "app_id": _string("Optional app: jiyi keeps it as metadata.app_id and filters by it."),
        "run_id": _string("Optional run (session) scope."),
    }
    return [
        ToolSpec("add_memory", "Add memory (mem0)", description=(
            "mem0's add_memory: store a preference, fact or piece of conversation. jiyi extracts the facts worth "
            "keeping and reconciles them with what it already knows (new facts added, changed ones updated, "
            "repeats ignored); the answer lists what changed. `text` is a sentence; `messages` (role/content), when "
            "given, is stored instead. The connection's user is used unless an admin key names one.\n"
            "Examples: {\"text\": \"我对花生过敏\"}; {\"text\": \"I'm moving to Berlin in May\"}; "
            "{\"text\": \"出差\", \"messages\": [{\"role\": \"user\", \"content\": \"我下个月去成都出差\"}, "
            "{\"role\": \"assistant\", \"content\": \"好的，记住了\"}]}"),
            input_schema=_object({
                "text": _string("A sentence to remember (required even when messages are given).", max_text_chars),
                "messages": {"type": "array", "items": _message(max_text_chars), "maxItems": 100,
                             "description": "A conversation to remember from, instead of text."},
                **scope,
                "metadata": {"type": "object", "description": "Any JSON object to keep with the memories."},
                "enable_graph": ENABLE_GRAPH,
            }, ["text"]),
            writes=True),
        ToolSpec("search_memories", "Search memories (mem0)", description=(
            "mem0's search_memories: semantic and keyword search over the user's memories, best first. The "
            "connection's user is added to the filters.\n"
            "Examples: {\"query\": \"饮食偏好\"}; {\"query\": \"where does my sister live\", \"limit\": 3}; "
            "{\"query\": \"trip\", \"filters\": {\"AND\": [{\"created_at\": {\"gte\": \"2026-01-01\"}}]}}"),
            input_schema=_object({
                "query": _string("What to find, in natural language.", max_query_chars),
                "filters": FILTERS,
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Most results (default 20)."},
                "enable_graph": ENABLE_GRAPH,
            }, ["query"])),
        ToolSpec("get_memories", "List memories (mem0)", description=(
            "mem0's get_memories: page through the user's memories (newest first) with filters instead of a query.\n"
            "Examples: {}; {\"page\": 2, \"page_size\": 20}; {\"filters\": {\"topic\": \"travel\"}}"),
            input_schema=_object({
                "filters": FILTERS,
                "page": {"type": "integer", "minimum": 1, "description": "Page number, from 1."},
                "page_size": {"type": "integer", "minimum": 1, "maximum": 1000,
                              "description": "Memories per page (default 100)."},
                "enable_graph": ENABLE_GRAPH,
            })),
        ToolSpec("get_memory", "Get a memory (mem0)", description=(
            "mem0's get_memory: one memory by its id. Example: {\"memory_id\": \"<id>\"}"),
            input_schema=_object({"memory_id": _string("The memory's id.")}, ["memory_id"])),
        ToolSpec("update_memory", "Update a memory (mem0)", description=(
            "mem0's update_memory: replace one memory's text (the old text stays in its history). "
            "Example: {\"memory_id\": \"<id>\", \"text\": \"用户住在深圳\"}"),
            input_schema=_object({"memory_id": _string("The memory's id."),
                                  "text": _string("The new text.", max_text_chars)},
                                 ["memory_id", "text"]),
            writes=True, destructive=True),
        ToolSpec("delete_memory", "Delete a memory (mem0)", description=(
            "mem0's delete_memory: delete one memory, once the user has confirmed which. "
            "Example: {\"memory_id\": \"<id>\"}"),
            input_schema=_object({"memory_id": _string("The memory's id.")}, ["memory_id"]),
            writes=True, destructive=True),
        ToolSpec("delete_all_memories", "Delete all memories (mem0)", description=(
            "mem0's delete_all_memories: delete every memory of the user (narrowed by agent_id, run_id or app_id "
            "when given). Only when the user clearly asks to erase everything (\"把关于我的记忆全部删掉\", "
            "\"delete everything you know about me\"). Example: {}"),
            input_schema=_object(dict(scope)),
            writes=True, destructive=True),
        ToolSpec("list_entities", "List entities (mem0)", description=(
            "mem0's list_entities: the users, agents and runs that have memories, with counts (with a user's key, "
            "only that user's). Example: {}"),
            input_schema=_object({})),
        ToolSpec("delete_entities", "Delete entities (mem0)", description=(
            "mem0's delete_entities: remove a user, agent, app or run and all its memories (with nothing named, the "
            "connection's user). The answer says what went: how many memories, and the agents and runs left with "
            "none. One that an earlier delete already emptied (a user's run, after the user) answers that nothing "
            "was left, not an error. Examples: {\"run_id\": \"<session id>\"}; {}"),
            input_schema=_object(dict(scope)),
            writes=True, destructive=True),
    ]


def all_tools(max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
              max_query_chars: int = DEFAULT_MAX_QUERY_CHARS) -> list[ToolSpec]:
    return [*jiyi_tools(max_text_chars, max_query_chars), *mem0_tools(max_text_chars, max_query_chars)]
