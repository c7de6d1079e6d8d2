"""The `jiyi` command: serve, add, search, list, history, export, import, worker, maintain, keys, mcp."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jiyi.errors import JiyiError
from jiyi.settings import Settings


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    for key in ("store", "embedder", "config_file", "home"):
        value = getattr(args, key, None)
        if value is not None:
            overrides[key] = value
    if getattr(args, "host", None):
        overrides["host"] = args.host
    if getattr(args, "port", None):
        overrides["port"] = args.port
    if getattr(args, "insecure", False):
        overrides["insecure"] = True
    if getattr(args, "workers", None):
        overrides["workers"] = args.workers
    return Settings(**overrides)


def _memory(args: argparse.Namespace) -> Any:
    from jiyi.memory import Memory

    return Memory.from_config(_settings(args).to_config())


def _print(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _scope_args(args: argparse.Namespace) -> dict[str, str]:
    return {k: v for k in ("user_id", "agent_id", "run_id") if (v := getattr(args, k, None))}


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    settings = _settings(args)
    keyless = not (_loopback(settings.host) or settings.admin_api_key or settings.api_keys or settings.insecure)
    if keyless and not _store_has_keys(args):
        # Without keys every route is open: /reset and DELETE /memories to anyone who can reach the address.
        print(f"jiyi: refusing to serve on {settings.host} with no keys: anyone who can reach it could read, change "
              "and reset every memory. Set JIYI_ADMIN_API_KEY (admin routes) and JIYI_API_KEYS, or issue keys with "
              "`jiyi keys create` (one key per user), or pass --insecure (JIYI_INSECURE=1) if the network itself is "
              "trusted.", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if settings.workers > 1:
        # Each worker process builds its own app from the environment (the command's flags are passed on there).
        # They share nothing but the store, which is built for it: turns are claimed, locks and versions are in the
        # store, and each user's maintenance runs in one process at a time.
        for key in ("store", "embedder", "config_file", "home"):
            if getattr(args, key, None) is not None:
                os.environ[f"JIYI_{key.upper()}"] = str(getattr(args, key))
        print(f"jiyi: {settings.workers} worker processes · http://{settings.host}:{settings.port}/docs",
              file=sys.stderr)
        uvicorn.run("jiyi.cli.main:app_from_environment", factory=True, workers=settings.workers,
                    host=settings.host, port=settings.port, log_level=settings.log_level.lower(),
                    timeout_graceful_shutdown=settings.shutdown_grace, timeout_keep_alive=KEEP_ALIVE_SECONDS)
        return 0
    app = _app(settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level.lower(),
                            timeout_graceful_shutdown=settings.shutdown_grace, timeout_keep_alive=KEEP_ALIVE_SECONDS)
    _serve_until_stopped(uvicorn.Server(config), settings.shutdown_grace + SHUTDOWN_MARGIN)
    return 0


def _app(settings: Settings) -> Any:
    from jiyi.memory import AsyncMemory
    from jiyi.server import create_app
    from jiyi.server.limits import RequestLimits
    from jiyi.webhooks.dispatcher import WebhookOptions
    from jiyi.wiring import redact

    memory = AsyncMemory.from_config(settings.to_config())
    app = create_app(memory, admin_api_key=settings.admin_api_key, user_api_keys=settings.api_keys,
                     cors_origins=settings.cors_origin_list(), maintenance_interval=settings.maintenance_interval,
                     limits=RequestLimits(**settings.request_limits()),
                     webhooks=WebhookOptions(**settings.webhook_options()), mcp_tool_names=settings.mcp_tool_names)
    print(f"jiyi {redact(memory.store.url)} · embedder {memory.embedder.model_id} · pid {os.getpid()} · "
          f"http://{settings.host}:{settings.port}/docs", file=sys.stderr)
    return app


def app_from_environment() -> Any:
    """The server app as the JIYI_* variables describe it: what each worker process of `jiyi serve --workers N`
    runs (uvicorn's factory)."""
    _one_blas_thread()
    return _app(Settings(**{}))


# After the grace, the lifespan shutdown (worker, scheduler, store; bounded in server/app.py) gets this long before
# the process exits anyway.
SHUTDOWN_MARGIN = 2.0
# An idle keep-alive connection is closed by the client first: uvicorn's default (5 s) equals httpx's own expiry (the
# mem0 SDKs, most Python clients), and a request sent on a connection the server closed at that very moment failed
# with ReadError (seen once under 64 clients in tests/reliability/test_concurrency.py). Longer than the usual load
# balancer idle timeout (60 s) for the same reason: the proxy in front should be the one to close.
KEEP_ALIVE_SECONDS = 75


def _loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def _serve_until_stopped(server: Any, deadline: float) -> None:
    """Run a uvicorn server until SIGTERM or Ctrl+C, and be gone within `deadline` seconds of the signal.

    Requests and extractions may be stuck in a worker thread (an embedding, a store call): Python cannot interrupt
    them, and the interpreter joins such threads on exit. Nothing is lost by not waiting: a turn is stored before it
    is processed, and one left unfinished is processed again after the next start."""
    armed = threading.Event()

    def exit_after(seconds: float) -> None:
        if not armed.is_set():
            armed.set()
            timer = threading.Timer(seconds, _exit_now, args=(seconds,))
            timer.daemon = True
            timer.start()

    exit_on_signal = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        exit_on_signal(sig, frame)
        exit_after(deadline)

    server.handle_exit = handle_exit
    # uvicorn raises the signal it caught again once it is done; the default SIGTERM action would end the process
    # with status 143 before the event loop closes. How to exit is decided here instead.
    previous = signal.signal(signal.SIGTERM, lambda sig, frame: None)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    exit_after(SHUTDOWN_MARGIN)  # idle pool threads are joined at once on exit; a busy one is not waited for


def _exit_now(after: float) -> None:
    logging.getLogger("jiyi.server").warning("shutdown still waiting for worker threads after %g s; exiting without "
                                             "them (unfinished turns stay queued for the next start)", after)
    logging.shutdown()  # flushes every handler
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def cmd_mcp(args: argparse.Namespace) -> int:
    """An MCP server over stdio for one user, launched by a desktop client (Claude Desktop, Cursor, Cherry Studio)."""
    import asyncio

    from jiyi.mcp import Caller, serve_stdio
    from jiyi.memory import AsyncMemory

    settings = _settings(args)
    # Standard output carries the protocol: logs go to standard error, and only warnings.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    memory = AsyncMemory.from_config(settings.to_config())
    asyncio.run(serve_stdio(memory, Caller(args.user_id, args.agent_id), tool_names=args.tool_names))
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        metadata = json.loads(args.metadata) if args.metadata else None
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
    with _memory(args) as memory:
        filters = json.loads(args.filters) if args.filters else None
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


def _key_store(args: argparse.Namespace) -> Any:
    """The store alone: managing keys needs no embedding model."""
    from jiyi.stores.base import KeyStore
    from jiyi.wiring import build_store, normalize_config

    store = build_store(normalize_config(_settings(args).to_config())["store"])
    if not isinstance(store, KeyStore):
        store.close()
        raise JiyiError(f"this store ({type(store).__name__}) cannot keep API keys")
    return store


def _store_has_keys(args: argparse.Namespace) -> bool:
    try:
        store = _key_store(args)
    except JiyiError:
        return False
    try:
        return bool(store.keys_issued())
    finally:
        store.close()


def cmd_keys(args: argparse.Namespace) -> int:
    from jiyi.keys import new_key
    from jiyi.records import utcnow

    store = _key_store(args)
    try:
        if args.keys_command == "create":
            key, secret = new_key(args.scope, args.user, args.agent, args.name)
            store.add_api_key(key)
            _print({**key.as_dict(), "key": secret})
            print("jiyi: this is the only time the key is shown; it is stored hashed", file=sys.stderr)
        elif args.keys_command == "list":
            keys = store.list_api_keys()
            _print([k.as_dict() for k in keys if args.all or k.active])
        elif not store.revoke_api_key(args.key_id, utcnow()):
            raise JiyiError(f"no active key {args.key_id!r} (jiyi keys list --all shows every key)")
        else:
            _print({"revoked": args.key_id})
    finally:
        store.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jiyi", description="jiyi (记忆): long-term memory for AI chat assistants")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", help="store URL (default sqlite:///~/.jiyi/memory.db; env JIYI_STORE)")
    common.add_argument("--embedder", help='"e5" (default), "use", "hashing" or "openai:<model>" (env JIYI_EMBEDDER)')
    common.add_argument("--config", dest="config_file",
                        help="TOML/JSON config file, jiyi's or mem0's (env JIYI_CONFIG_FILE)")
    common.add_argument("--home", help="data directory (default ~/.jiyi; env JIYI_HOME)")
    scoped = argparse.ArgumentParser(add_help=False)
    scoped.add_argument("--user-id", "-u", dest="user_id")
    scoped.add_argument("--agent-id", "-a", dest="agent_id")
    scoped.add_argument("--run-id", "-r", dest="run_id")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", parents=[common], help="run the REST server (mem0-compatible)")
    p.add_argument("--host", help="default 127.0.0.1 (env JIYI_HOST)")
    p.add_argument("--port", type=int, help="default 8888 (env JIYI_PORT)")
    p.add_argument("--workers", type=int, help="server processes on one port and one store (env JIYI_WORKERS; "
                                                "default 1)")
    p.add_argument("--insecure", action="store_true",
                   help="allow a non-loopback --host with no API keys (env JIYI_INSECURE=1); only on a trusted network")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", parents=[common], help="an MCP server over stdio for one user (Claude Desktop, Cursor…)")
    p.add_argument("--user-id", "-u", dest="user_id", required=True, help="whose memories the tools use")
    p.add_argument("--agent-id", "-a", dest="agent_id", help="limit the tools to this agent's memories of the user")
    p.add_argument("--tool-names", choices=["underscore", "dotted"], default="underscore",
                   help="memory_add (default: every client takes it) or memory.add (clients that allow dots)")
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("add", parents=[common, scoped], help="store text as memories (or extract facts: --infer)")
    p.add_argument("text", nargs="+", help="one message per argument")
    p.add_argument("--infer", action="store_true", help="extract facts and reconcile them (LLM or offline rules)")
    p.add_argument("--role", default="user")
    p.add_argument("--metadata", help="JSON object")
    p.add_argument("--timestamp", help="when it was said (ISO 8601)")
    p.add_argument("--expiration-date", dest="expiration_date", help="YYYY-MM-DD")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("search", parents=[common, scoped], help="hybrid search within a scope")
    p.add_argument("query")
    p.add_argument("--top-k", "-k", dest="top_k", type=int, default=5)
    p.add_argument("--filters", help="JSON object in mem0's filter grammar")
    p.add_argument("--threshold", type=float)
    p.add_argument("--explain", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("list", parents=[common, scoped], help="list memories of a scope, newest first")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--show-expired", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("history", parents=[common], help="the history rows of one memory")
    p.add_argument("memory_id")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("export", parents=[common, scoped], help="write memories and history as JSON Lines")
    p.add_argument("output", nargs="?", default="-", help="file (default: standard output)")
    p.add_argument("--include-deleted", action="store_true",
                   help="deleted memories too; without -u/-a/-r, also the history rows of those purged since")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", parents=[common], help="load a JSON Lines export (existing ids are kept)")
    p.add_argument("input")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("worker", parents=[common], help="extract queued turns: async adds and LLM retries")
    p.add_argument("--once", action="store_true", help="process what is due now, then exit")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between polls when idle")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("keys", help="issue, list and revoke API keys (kept hashed in the store)")
    keys = p.add_subparsers(dest="keys_command", required=True)
    k = keys.add_parser("create", parents=[common], help="a new key for one user (printed once)")
    k.add_argument("--user", help="the user the key reaches (not with --scope admin)")
    k.add_argument("--agent", help="limit the key to this agent of the user")
    k.add_argument("--scope", choices=["read", "write", "admin"], default="write",
                   help="read: search and recall only; write (default): also add, change, forget; admin: every "
                        "user and the admin routes")
    k.add_argument("--name", help="a label to tell keys apart in `jiyi keys list`")
    k.set_defaults(func=cmd_keys)
    k = keys.add_parser("list", parents=[common], help="the keys (never the keys themselves): user, scope, last use")
    k.add_argument("--all", action="store_true", help="revoked keys too")
    k.set_defaults(func=cmd_keys)
    k = keys.add_parser("revoke", parents=[common], help="revoke a key by its id (key_…); servers stop taking it "
                                                         "within seconds")
    k.add_argument("key_id")
    k.set_defaults(func=cmd_keys)

    p = sub.add_parser("maintain", parents=[common], help="run a lifecycle pass: decay, forget, review, consolidate")
    p.add_argument("--user-id", dest="user_id", help="one user (default: every user)")
    p.set_defaults(func=cmd_maintain)
    return parser


def _one_blas_thread() -> None:
    # A scope's matrix-vector product gains nothing from a second BLAS thread, and idle BLAS threads spin on the cores
    # the embedder needs (bench/scale.py measured e5 search 27 → 40 ms p50 beside another process's searches).
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _one_blas_thread()
    try:
        return int(args.func(args))
    except JiyiError as exc:
        print(f"jiyi: {exc}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"jiyi: invalid JSON argument: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
