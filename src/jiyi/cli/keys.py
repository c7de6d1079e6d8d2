"""`jiyi keys create | list | revoke | reopen`: API keys kept hashed in the store (jiyi/keys.py).

Standard output carries the JSON a script reads; what a person needs to know next goes to standard error."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from jiyi.cli.config import load_settings, memory_config
from jiyi.errors import JiyiError


def key_store(args: argparse.Namespace) -> Any:
    """The store alone: managing keys needs no embedding model."""
    from jiyi.stores import build_store
    from jiyi.stores.base import KeyStore
    from jiyi.wiring import normalize_config

    store = build_store(normalize_config(memory_config(load_settings(args), args))["store"])
    if not isinstance(store, KeyStore):
        store.close()
        raise JiyiError(f"this store ({type(store).__name__}) cannot keep API keys")
    return store


def store_closes_servers(args: argparse.Namespace, config: dict[str, Any]) -> bool:
    """Whether keys issued on the store close the servers on it (revoked ones too, until `jiyi keys reopen`).
    A SQLite file not made yet has none, and is not made to say so."""
    from jiyi.keys import keys_close_server
    from jiyi.stores import sqlite_path
    from jiyi.wiring import normalize_config

    path = sqlite_path(normalize_config(config)["store"])
    if path is not None and not path.exists():
        return False
    try:
        store = key_store(args)
    except JiyiError:
        return False
    try:
        return keys_close_server(store)
    finally:
        store.close()


def cmd_keys(args: argparse.Namespace) -> int:
    from jiyi.keys import active_keys, end_reopening, new_key, reopen, reopened
    from jiyi.records import utcnow

    store = key_store(args)
    try:
        if args.keys_command == "create":
            key, secret = new_key(args.scope, args.user, args.agent, args.name)
            store.add_api_key(key)
            end_reopening(store)
            _print({**key.as_dict(), "key": secret})
            print("jiyi: this is the only time the key is shown; it is stored hashed", file=sys.stderr)
        elif args.keys_command == "list":
            keys = store.list_api_keys()
            _print([k.as_dict() for k in keys if args.all or k.active])
        elif args.keys_command == "reopen":
            if not store.keys_issued() or reopened(store):
                _print({"reopened": False})
                print("jiyi: no key closes this store's servers: they already take requests without a key",
                      file=sys.stderr)
                return 0
            reopen(store, utcnow())
            _print({"reopened": True})
            print("jiyi: servers on this store take requests without a key again within 2 seconds (those on "
                  "127.0.0.1, or started with --insecure; one on another address keeps asking for a key). The next "
                  "`jiyi keys create` closes them again.", file=sys.stderr)
        elif not store.revoke_api_key(args.key_id, utcnow()):
            raise JiyiError(f"no active key {args.key_id!r} (jiyi keys list --all shows every key)")
        else:
            _print({"revoked": args.key_id})
            if not active_keys(store):
                # Revoking does not open the door (server/auth.py says why); say how to, where it was shut.
                print("jiyi: that was the last active key. Servers on this store still refuse requests without a "
                      "key (401): a revoked key must not open them to everyone. To take requests without a key "
                      "again (open local mode): jiyi keys reopen. To give someone access: jiyi keys create --user "
                      "ID.", file=sys.stderr)
    finally:
        store.close()
    return 0


def _print(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))
