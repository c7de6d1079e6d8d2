"""The commands on memories: add, search, list, history, export, import, worker, maintain, mcp."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from jiyi.cli.config import load_settings, memory_config
from jiyi.errors import InvalidInput, JiyiError


def _memory(args: argparse.Namespace) -> Any:
    from jiyi.memory import Memory

    return Memory.from_config(memory_config(load_settings(args), args))


def _print(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _json_object(value: str | None, flag: str) -> dict[str, Any] | None:
    """A flag's JSON object, read before anything is opened."""
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{flag}: not valid JSON ({exc.msg} at character {exc.pos}); expected an object, e.g. "
                           f"'{{\"source\": \"diary\"}}'") from None
    if not isinstance(parsed, dict):
        raise InvalidInput(f"{flag}: expected a JSON object {{...}}, got {type(parsed).__name__}")
    return parsed


def _scope_args(args: argparse.Namespace) -> dict[str, str]:
    return {k: v for k in ("user_id", "agent_id", "run_id") if (v := getattr(args, k, None))}


def cmd_mcp(args: argparse.Namespace) -> int:
    """An MCP server over stdio for one user, launched by a desktop client (Claude Desktop, Cursor, Cherry Studio)."""
    import asyncio

    from jiyi.cli.serve import export_traces_if_asked
    from jiyi.mcp import Caller, serve_stdio
    from jiyi.memory import AsyncMemory

    settings = load_settings(args)
    config = memory_config(settings, args)
    # Standard output carries the protocol: logs go to standard error, and only warnings.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    export_traces_if_asked()
    memory = AsyncMemory.from_config(config)
    asyncio.run(serve_stdio(memory, Caller(args.user_id, args.agent_id), tool_names=args.tool_names))
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    metadata = _json_object(args.metadata, "--metadata")
    with _memory(args) as memory:
        messages = [{"role": args.role, "content": text} for text in args.text]
        _print(memory.add(messages, infer=args.infer, metadata=metadata, timestamp=args.timestamp,
                          expiration_date=args.expiration_date, remember=len(args.text) == 1, **_scope_args(args)))
    return 0


def cmd_maintain(args: argparse.Namespace) -> int:
    """One maintenance pass; prints what it did."""
    with _memory(args) as memory:
        _print(memory.maintain(user_id=args.user_id))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Extract queued turns (async adds, LLM retries) until interrupted, or once with --once."""
    with _memory(args) as memory:
        if args.once:
            done = 0
            while (batch := memory.process_pending()) > 0:
                done += batch
            _print({"processed": done})
            return 0
        try:
            while True:
                if memory.process_pending() == 0:
                    time.sleep(args.interval)
        except KeyboardInterrupt:
            return 0


def cmd_search(args: argparse.Namespace) -> int:
    filters = _json_object(args.filters, "--filters")
    with _memory(args) as memory:
        _print(memory.search(args.query, top_k=args.top_k, filters=filters, threshold=args.threshold,
                             explain=args.explain, **_scope_args(args)))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        _print(memory.get_all(limit=args.limit, show_expired=args.show_expired, **_scope_args(args)))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        _print(memory.history(args.memory_id))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from jiyi.records import Scope
    from jiyi.transfer import export_jsonl

    with _memory(args) as memory:
        scope = Scope(**_scope_args(args))
        if args.output == "-":
            count = export_jsonl(memory.store, sys.stdout, scope, args.include_deleted)
        else:
            with open(args.output, "w", encoding="utf-8") as out:
                count = export_jsonl(memory.store, out, scope, args.include_deleted)
    print(f"exported {count} memories", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from jiyi.transfer import import_jsonl

    path = Path(args.input)
    if not path.is_file():
        raise JiyiError(f"no such file: {path}")
    with _memory(args) as memory, path.open(encoding="utf-8") as lines, tqdm(
        total=path.stat().st_size, unit="B", unit_scale=True, desc="import", disable=args.quiet,
        file=sys.stderr,
    ) as bar:
        report = import_jsonl(memory.store, memory.embedder, lines, on_progress=bar.update)
    _print({"imported": report.imported, "skipped_existing": report.skipped_existing,
            "history_rows": report.history_rows, "messages": report.messages, "errors": report.errors[:20],
            "error_count": len(report.errors)})
    return 1 if report.errors else 0
