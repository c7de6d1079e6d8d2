"""The `jiyi` command's arguments: every command says what it does, shows an example, and explains each option."""

from __future__ import annotations

import argparse
import shutil
import textwrap
from collections.abc import Callable
from typing import Any

from jiyi.cli import commands, keys, serve

Command = Callable[[argparse.Namespace], int]


def _about(*paragraphs: str) -> str:
    """Paragraphs filled to the terminal (a command's description; examples keep their own lines)."""
    width = max(40, min(shutil.get_terminal_size().columns, 100) - 2)
    return "\n\n".join(textwrap.fill(" ".join(p.split()), width) for p in paragraphs)


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _command(sub: Any, name: str, func: Command | None, summary: str, about: str | tuple[str, ...],
             examples: tuple[str, ...], parents: tuple[argparse.ArgumentParser, ...] = ()) -> argparse.ArgumentParser:
    paragraphs = (about,) if isinstance(about, str) else about
    parser: argparse.ArgumentParser = sub.add_parser(
        name, parents=list(parents), help=summary, description=_about(*paragraphs), epilog=_examples(*examples),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    if func is not None:
        parser.set_defaults(func=func)
    return parser


def _store_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("where memories are kept (flags win over JIYI_* variables, which win over "
                                      "--config)")
    group.add_argument("--store", metavar="URL",
                       help="sqlite:///memory.db (a path relative to the working directory), sqlite:////srv/jiyi/"
                            "memory.db (four slashes: absolute; its folder must exist), or postgresql://user:pass@"
                            "host/db (the postgres extra); default: memory.db in the data folder (env JIYI_STORE)")
    group.add_argument("--embedder", metavar="NAME",
                       help='how text becomes vectors: "e5" (default, multilingual, offline), "use", "hashing" '
                            '(fast, for tests) or "openai:<model>" with JIYI_EMBEDDER_BASE_URL; a store keeps the '
                            "embedder it was made with (env JIYI_EMBEDDER)")
    group.add_argument("--config", dest="config_file", metavar="FILE",
                       help="a TOML or JSON config file, jiyi's or a mem0 config dict (env JIYI_CONFIG_FILE)")
    group.add_argument("--home", metavar="DIR",
                       help="jiyi's data folder, made if missing; the default store is DIR/memory.db "
                            "(default ~/.jiyi; env JIYI_HOME)")
    return common


def _scope_options(purpose: str) -> argparse.ArgumentParser:
    """-u/-a/-r: whose memories (mem0's three ids)."""
    scoped = argparse.ArgumentParser(add_help=False)
    group = scoped.add_argument_group("whose memories", purpose)
    group.add_argument("--user-id", "-u", dest="user_id", metavar="ID",
                       help="the person the memories are about (e.g. alice)")
    group.add_argument("--agent-id", "-a", dest="agent_id", metavar="ID",
                       help="the assistant or character that keeps them (e.g. travel-bot); alone, the agent's own "
                            "memories")
    group.add_argument("--run-id", "-r", dest="run_id", metavar="ID",
                       help="one conversation or session, when memories belong to it alone")
    return scoped


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jiyi", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_about("jiyi (记忆): long-term memory for AI chat assistants. It remembers a person across days, "
                           "forgets like a person, and answers mem0's REST API.",
                           "Settings come from the flags, then JIYI_* environment variables (JIYI_STORE, JIYI_PORT, "
                           "JIYI_LLM, ...), then a --config file. `jiyi COMMAND --help` explains a command."),
        epilog=_examples("jiyi serve                                   # REST API, /docs and the console /ui on "
                         "http://127.0.0.1:8888",
                         "jiyi add -u alice \"I'm allergic to shellfish\"",
                         "jiyi search -u alice \"what can't alice eat?\""))
    parser.add_argument("--version", action="version", version=_version(),
                        help="print jiyi's version, where it is installed and the Python running it, then exit")
    common = _store_options()
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _command(sub, "serve", serve.cmd_serve, "run the REST server (mem0-compatible), the console and MCP over HTTP",
                 ("Run the REST API (mem0-compatible; try it at /docs), the web console (/ui) and MCP over HTTP "
                  "(/mcp). The server also extracts queued turns and runs a maintenance pass every hour "
                  "(JIYI_MAINTENANCE_INTERVAL).",
                  "On 127.0.0.1 nobody else can reach it, and no key is needed until one is issued with `jiyi keys "
                  "create`. On any other address it needs keys (JIYI_API_KEYS, JIYI_ADMIN_API_KEY or issued ones) "
                  "or --insecure."),
                 ("jiyi serve",
                  "jiyi serve --port 9000 --store sqlite:////srv/jiyi/memory.db",
                  "JIYI_API_KEYS='{\"<a long random key>\": \"alice\"}' jiyi serve --host 0.0.0.0"),
                 (common,))
    p.add_argument("--host", metavar="ADDR",
                   help="the address to listen on: 127.0.0.1 (default: this machine only), 0.0.0.0 (every "
                        "interface: needs keys or --insecure) or one of this machine's addresses (env JIYI_HOST)")
    p.add_argument("--port", type=int, metavar="N", help="the TCP port, 1 to 65535 (default 8888; env JIYI_PORT)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="server processes on one port and one store, 1 to 64 (default 1; env JIYI_WORKERS); each "
                        "loads its own embedding model")
    p.add_argument("--insecure", action="store_true",
                   help="serve an address other than loopback with no keys at all: anyone who can reach it may read, "
                        "change and reset every memory; only on a network you trust (env JIYI_INSECURE=1)")

    p = _command(sub, "mcp", commands.cmd_mcp, "an MCP server over stdio for one user (Claude Desktop, Cursor...)",
                 ("Serve jiyi's memory tools to one user over MCP's stdio transport. A desktop client (Claude "
                  "Desktop, Cursor, Cherry Studio) starts this command itself: put it in the client's MCP "
                  "configuration. Standard output carries the protocol; warnings go to standard error."),
                 ("jiyi mcp -u alice",
                  "# in the client's MCP config: {\"command\": \"jiyi\", \"args\": [\"mcp\", \"-u\", \"alice\"]}"),
                 (common,))
    p.add_argument("--user-id", "-u", dest="user_id", metavar="ID", required=True,
                   help="whose memories the tools read and write (required)")
    p.add_argument("--agent-id", "-a", dest="agent_id", metavar="ID",
                   help="keep the tools to this agent's memories of the user")
    p.add_argument("--tool-names", choices=["underscore", "dotted"], default="underscore",
                   help="memory_add (underscore, the default: every client takes it) or memory.add (dotted, for "
                        "clients that allow dots)")

    p = _command(sub, "add", commands.cmd_add, "store messages as memories (or extract facts: --infer)",
                 ("Store what was said. Each TEXT is one message. By default each message is kept as it is, one "
                  "memory each. With --infer, facts are extracted and reconciled with what is already known: ADD, "
                  "UPDATE, DELETE or NONE, each change kept in the memory's history (with an LLM if JIYI_LLM is "
                  "set, offline rules otherwise). Prints the changes as JSON."),
                 ("jiyi add -u alice \"I'm allergic to shellfish\"",
                  "jiyi add -u alice --infer \"We moved to Shanghai last month\" \"My daughter starts school in "
                  "September\"",
                  "jiyi add -u alice -a travel-bot --expiration-date 2026-01-31 \"Booked a hotel in Kyoto\""),
                 (common, _scope_options("at least one of -u, -a, -r")))
    p.add_argument("text", nargs="+", metavar="TEXT", help="a message; give several for a conversation")
    p.add_argument("--infer", action="store_true",
                   help="extract facts and reconcile them with existing memories instead of keeping the text as is")
    p.add_argument("--role", default="user", metavar="ROLE",
                   help="who said the messages: user (default) or assistant")
    p.add_argument("--metadata", metavar="JSON",
                   help="a JSON object kept with each memory, e.g. '{\"source\": \"diary\"}'; search --filters can "
                        "match it")
    p.add_argument("--timestamp", metavar="WHEN",
                   help="when it was said, ISO 8601 (2025-05-01 or 2025-05-01T20:30:00+08:00; default: now); "
                        "\"yesterday\" in the text is read from it")
    p.add_argument("--expiration-date", dest="expiration_date", metavar="DATE",
                   help="YYYY-MM-DD from which the memories are left out of search and list (list --show-expired "
                        "shows them)")

    p = _command(sub, "search", commands.cmd_search, "find the memories that answer a question",
                 ("Find a scope's memories that answer a question, in any language: by meaning (vectors) and by "
                  "words (BM25), fused, and weighed by how well each memory is still remembered. The memories "
                  "found count as recalled: a recalled memory is forgotten more slowly. Prints the results, best "
                  "first, as JSON."),
                 ("jiyi search -u alice \"what can't alice eat?\"",
                  "jiyi search -u alice -k 3 --threshold 0.3 \"where does she live\"",
                  "jiyi search -u alice --filters '{\"created_at\": {\"gte\": \"2025-01-01\"}}' --explain \"trips\""),
                 (common, _scope_options("at least one of -u, -a, -r: a search never crosses users")))
    p.add_argument("query", help="what to look for")
    p.add_argument("--top-k", "-k", dest="top_k", type=int, default=5, metavar="N",
                   help="how many results at most, 1 to 1000 (default 5)")
    p.add_argument("--filters", metavar="JSON",
                   help="narrow the search with mem0's filter grammar: '{\"source\": \"diary\"}' (metadata), "
                        "'{\"created_at\": {\"gte\": \"2025-01-01\"}}', {\"AND\": [...]}, {\"OR\": [...]}")
    p.add_argument("--threshold", type=float, metavar="SCORE",
                   help="leave out results whose score (shown with each result) is below this, 0 to 1; "
                        "default: no cut, the best N are returned")
    p.add_argument("--explain", action="store_true",
                   help="add score_details to each result: its rank and relevance on each path (vector, keyword, "
                        "rules), the weights used and the timings")

    p = _command(sub, "list", commands.cmd_list, "list a scope's memories, newest first",
                 "A scope's memories, newest first, as JSON. Memories past their expiration date are left out "
                 "unless --show-expired. Deleted ones are not listed (`jiyi history MEMORY_ID` still shows them).",
                 ("jiyi list -u alice", "jiyi list -u alice -a travel-bot --limit 20 --show-expired"),
                 (common, _scope_options("at least one of -u, -a, -r")))
    p.add_argument("--limit", type=int, default=100, metavar="N", help="at most this many, 1 to 1000 (default 100)")
    p.add_argument("--show-expired", action="store_true",
                   help="also memories whose expiration date has passed (hidden by default, as in mem0)")

    p = _command(sub, "history", commands.cmd_history, "every change of one memory",
                 "Every change of one memory, oldest first, as JSON: ADD, UPDATE (the old text and the new), DELETE, "
                 "with when, who and why. A deleted memory keeps its history.",
                 ("jiyi history 0193f3c2-7a1e-7c3b-9d2a-5e8f1b6c4d21",),
                 (common,))
    p.add_argument("memory_id", metavar="MEMORY_ID", help="the memory's id, as add, search and list print it")

    p = _command(sub, "export", commands.cmd_export, "write memories, history and messages as JSON Lines",
                 "Write memories with their history and the messages they came from as JSON Lines: a backup, or a "
                 "move to another store, that `jiyi import` reads back. Without -u/-a/-r, everything in the store. "
                 "The count goes to standard error.",
                 ("jiyi export backup.jsonl", "jiyi export -u alice > alice.jsonl",
                  "jiyi export --include-deleted --store sqlite:////srv/jiyi/memory.db all.jsonl"),
                 (common, _scope_options("only this scope's memories (default: every memory in the store)")))
    p.add_argument("output", nargs="?", default="-", metavar="FILE",
                   help="the file to write (default: standard output)")
    p.add_argument("--include-deleted", action="store_true",
                   help="also deleted memories (with their history), and without -u/-a/-r the history rows of "
                        "those purged since: a backup that loses nothing")

    p = _command(sub, "import", commands.cmd_import, "load a JSON Lines export",
                 "Load a `jiyi export` file into the store. A memory whose id is already there is kept as it is and "
                 "skipped, so an import can be run again. Vectors are made anew with this store's embedder. Bad lines "
                 "are reported and the rest imported; then the exit status is 1. Prints a report as JSON.",
                 ("jiyi import backup.jsonl", "jiyi import -q alice.jsonl --store sqlite:////srv/jiyi/memory.db"),
                 (common,))
    p.add_argument("input", metavar="FILE", help="the JSON Lines file `jiyi export` wrote")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = _command(sub, "worker", commands.cmd_worker, "extract queued turns: async adds and LLM retries",
                 "Process queued turns outside a server: adds made with async_mode, and extractions waiting to retry "
                 "an LLM that failed. A running `jiyi serve` does this itself; a worker is for a store no server "
                 "runs on, or more hands on a busy one. Runs until Ctrl+C, or once with --once.",
                 ("jiyi worker", "jiyi worker --once     # from cron: process what is due, print the count, exit"),
                 (common,))
    p.add_argument("--once", action="store_true", help="process what is due now, print how many, then exit")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="how long to wait between looks when the queue is empty (default 2)")

    keys_parser = _command(
        sub, "keys", None, "issue, list, revoke API keys, or reopen a store whose keys were all revoked",
        ("API keys kept in the store, hashed. From the first `jiyi keys create` on, every server on the store needs "
         "a key (within 2 seconds). A key reaches one user (and, with --agent, one agent of theirs), or every user "
         "with --scope admin.",
         "Revoking the last key does not open the servers again: a revoked key is often a leaked one. `jiyi keys "
         "reopen` does, for servers on 127.0.0.1 (or started with --insecure)."),
        ("jiyi keys create --user alice --name \"alice's phone\"", "jiyi keys list",
         "jiyi keys revoke key_3f9a1c2b7d4e", "jiyi keys reopen"))
    keys_sub = keys_parser.add_subparsers(dest="keys_command", required=True, metavar="KEYS_COMMAND")
    k = _command(keys_sub, "create", keys.cmd_keys, "issue a key for one user (printed once)",
                 "Issue a key and print it, with its id, as JSON. This is the only time the key is shown: the store "
                 "keeps its SHA-256. Servers on the store need a key from then on.",
                 ("jiyi keys create --user alice --name \"alice's phone\"",
                  "jiyi keys create --user alice --agent travel-bot --scope read", "jiyi keys create --scope admin"),
                 (common,))
    k.add_argument("--user", metavar="ID", help="the user the key reaches (required, except with --scope admin)")
    k.add_argument("--agent", metavar="ID", help="keep the key to this agent of the user")
    k.add_argument("--scope", choices=["read", "write", "admin"], default="write",
                   help="read: search and recall only; write (default): also add, change, forget; admin: every "
                        "user and the admin routes")
    k.add_argument("--name", help="a label to tell keys apart in `jiyi keys list`")
    k = _command(keys_sub, "list", keys.cmd_keys, "the keys' ids, users, scopes, last use (never the keys)",
                 "The store's active keys as JSON: id, user, agent, scope, name, when made and last used. Never the "
                 "keys themselves, which the store does not have.",
                 ("jiyi keys list", "jiyi keys list --all"), (common,))
    k.add_argument("--all", action="store_true", help="revoked keys too")
    k = _command(keys_sub, "revoke", keys.cmd_keys, "revoke a key by its id; servers stop taking it within seconds",
                 "Revoke a key by its id (key_..., from `jiyi keys list`): servers on the store refuse it within 2 "
                 "seconds. When it was the last active key, servers still ask for a key; `jiyi keys reopen` lets "
                 "them take requests without one again.",
                 ("jiyi keys revoke key_3f9a1c2b7d4e",), (common,))
    k.add_argument("key_id", metavar="KEY_ID", help="the key's id (key_...), not the key")
    _command(keys_sub, "reopen", keys.cmd_keys, "let servers take requests without a key again (all keys revoked)",
             ("Return a store whose keys were all revoked to open local mode: servers on it take requests without "
              "a key again, within 2 seconds. Refused while a key is still active. The next `jiyi keys create` "
              "closes them again.",
              "Only servers on 127.0.0.1 (or started with --insecure) open: one on another address keeps asking for "
              "a key, and its 401 says so."),
             ("jiyi keys reopen", "jiyi keys revoke key_3f9a1c2b7d4e && jiyi keys reopen"), (common,))

    p = _command(sub, "maintain", commands.cmd_maintain, "run a lifecycle pass: decay, forget, review, consolidate",
                 "Run one lifecycle pass now, as a server does every hour: memories fade along the forgetting curve, "
                 "those that have faded are forgotten (deleted, with a history row saying why), near-duplicates are "
                 "merged, and lasting ones are promoted. Prints what it did, counted, as JSON.",
                 ("jiyi maintain", "jiyi maintain -u alice"), (common,))
    p.add_argument("--user-id", "-u", dest="user_id", metavar="ID", help="only this user (default: every user)")
    return parser


def _version() -> str:
    import platform
    from pathlib import Path

    import jiyi

    return f"jiyi {jiyi.__version__} from {Path(jiyi.__file__).parent} (Python {platform.python_version()})"
