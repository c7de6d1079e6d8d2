"""The MCP server, built from a Memory: no module state, one server object per transport.

Tool errors (bad arguments, another user's memory, a read-only key writing) come back as tool results with
`isError`, so the model reads what to fix; an unknown tool name is a protocol error, as the specification asks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from jiyi import __version__
from jiyi.errors import Forbidden, JiyiError
from jiyi.mcp.caller import READ_ONLY, Caller
from jiyi.mcp.handlers import HANDLERS, changes_made
from jiyi.mcp.tools import DEFAULT_MAX_QUERY_CHARS, DEFAULT_MAX_TEXT_CHARS, ToolNames, ToolSpec, all_tools
from jiyi.memory import AsyncMemory

log = logging.getLogger("jiyi.mcp")

CallerResolver = Callable[[ServerRequestContext[Any, Any]], Caller]

INSTRUCTIONS = (
    "jiyi is the user's long-term memory. At the start of a conversation (and when the topic changes) call "
    "memory.get_context with the recent messages; before answering anything that depends on the user, call "
    "memory.search. When the user tells you something lasting about themselves, save it with memory.add (one short "
    "sentence each); when a memory is wrong or has changed, memory.update; when the user asks you to forget "
    "something, memory.forget with the reason. Who is who in the user's life (names, aliases, relations over time) "
    "is in memory.entities and memory.relations; when the user corrects it, memory.merge_entities, "
    "memory.rename_entity or memory.close_relation.\n"
    "对话开始时（以及话题变化时）调用 memory.get_context；回答与用户有关的问题前先 memory.search；用户说到值得长期"
    "记住的事用 memory.add，信息变了用 memory.update，用户要求忘掉时用 memory.forget 并写明原因。用户生活中的人和事"
    "（名字、别称、随时间变化的关系）在 memory.entities 和 memory.relations 里；用户纠正时用 memory.merge_entities、"
    "memory.rename_entity 或 memory.close_relation。")


def build_mcp_server(memory: AsyncMemory | Callable[[], AsyncMemory], resolve_caller: CallerResolver, *,
                     tool_names: ToolNames | str = ToolNames.UNDERSCORE,
                     max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
                     max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
                     on_changes: Callable[[list[dict[str, Any]]], None] | None = None) -> Server[Any]:
    """An MCP server whose tools act on `memory` for the caller `resolve_caller` names (stdio: the configured user;
    HTTP: the user of the request's key, see http.py). `memory` may be a function: the REST app's Memory is replaced
    by POST /configure. `tool_names`: "underscore" (memory_add, the default: every client takes it) or "dotted"
    (memory.add, the design's names; see tools.py for the clients that refuse dots). `on_changes` is told the memory
    changes each write tool made (mem0's result items), as the REST app counts them in its metrics."""
    names = ToolNames(tool_names)
    current = memory if callable(memory) else (lambda: memory)
    specs = all_tools(max_text_chars, max_query_chars)
    listed = ListToolsResult(tools=[spec.as_tool(names) for spec in specs])
    by_name: dict[str, ToolSpec] = {}
    for spec in specs:  # either spelling is called, whichever is listed (Cursor calls memory_add for memory.add)
        by_name[spec.name] = by_name[spec.name.replace(".", "_")] = spec
    validators = {spec.name: Draft202012Validator(spec.input_schema) for spec in specs}
    instructions = INSTRUCTIONS
    if names is ToolNames.UNDERSCORE:
        for spec in specs:
            instructions = instructions.replace(spec.name, spec.listed_name(names))

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            raise MCPError(code=INVALID_PARAMS, message=f"unknown tool: {params.name[:100]}")
        arguments = params.arguments or {}
        try:
            problems = _problems(validators[spec.name], arguments)
            if problems:
                return _error(f"{spec.listed_name(names)}: {problems}")
            caller = resolve_caller(ctx)
            if spec.writes and not caller.may_write:
                raise Forbidden(READ_ONLY)
            result = await HANDLERS[spec.name](current(), caller, arguments)
            if on_changes is not None and spec.writes:
                on_changes(changes_made(spec.name, result))
        except JiyiError as exc:
            return _error(str(exc))
        except Exception:
            # The arguments are not logged: they may be a user's private text.
            log.exception("MCP tool %s failed", spec.name)
            return _error(f"{spec.listed_name(names)} failed inside jiyi; the server log has the details")
        return CallToolResult(content=[TextContent(text=json.dumps(result, ensure_ascii=False, default=str))],
                              structured_content=result)

    return Server("jiyi", version=__version__, title="jiyi (记忆) long-term memory",
                  instructions=instructions, on_list_tools=list_tools, on_call_tool=call_tool)


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


def _problems(validator: Draft202012Validator, arguments: dict[str, Any]) -> str:
    """What is wrong with the arguments, by place and rule, never echoing a value (it may be private text)."""
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return "; ".join(_say(error) for error in errors[:3])


def _say(error: ValidationError) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".") or "arguments"
    rule, limit = error.validator, error.validator_value
    if rule == "required":
        message: str = error.message  # jsonschema ships no types
        return message.replace("'", "")  # "content is a required property": a name, not a value
    if rule == "enum":
        return f"{where} must be one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in limit)
    if rule == "maxLength":
        return f"{where} must be at most {limit:,} characters"
    if rule == "minLength":
        return f"{where} must not be empty" if limit == 1 else f"{where} must be at least {limit} characters"
    said = {"type": "must be of type", "minimum": "must be at least", "maximum": "must be at most",
            "minItems": "must have at least this many items:", "maxItems": "must have at most this many items:"}
    if rule in said:
        return f"{where} {said[rule]} {limit}"
    if rule == "uniqueItems":
        return f"{where} must not repeat an item"
    return f"{where} is invalid ({rule})"
