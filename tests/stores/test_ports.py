"""Which ports each store declares (stores/base.py: a store names the ports it implements as its bases), that it
implements every method of them itself, and that each port has contract tests that call every one of its methods."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from jiyi.stores import base
from jiyi.stores.entities import EntityStore
from jiyi.stores.postgres import PostgresStore
from jiyi.stores.sqlite import SqliteStore
from jiyi.webhooks.store import WebhookStore

TESTS = Path(__file__).resolve().parent.parent
# Each port and the modules that hold its contract tests, run on every store (conftest.STORE_KINDS).
CONTRACTS: dict[type, list[str]] = {
    base.MemoryIndex: ["stores/test_memory_index.py"],
    base.MessageLog: ["stores/test_message_log.py"],
    base.TurnQueue: ["stores/test_turn_queue.py"],
    base.Coordination: ["stores/test_coordination.py"],
    base.KeyStore: ["stores/test_keys_and_sessions.py"],
    base.SessionStore: ["stores/test_keys_and_sessions.py"],
    base.ConsoleStore: ["ui/test_console_store.py"],
    EntityStore: ["stores/test_entity_graph.py"],
    WebhookStore: ["stores/test_webhook_store.py"],
}
STORES = [SqliteStore, PostgresStore]


def methods(port: type) -> list[str]:
    return [name for name, value in vars(port).items() if inspect.isfunction(value) and not name.startswith("_")]


@pytest.mark.parametrize("store", STORES, ids=lambda s: s.__name__)
def test_every_store_declares_every_port_and_implements_it_itself(store: type) -> None:
    assert base.MemoryStore in store.__mro__
    for port in CONTRACTS:
        assert port in store.__mro__, f"{store.__name__} does not declare {port.__name__}"
        for name in methods(port):
            # a method left to the port would be its stub, answering None
            assert getattr(store, name) is not getattr(port, name), f"{store.__name__}.{name} is the port's stub"


def test_a_memory_store_is_its_four_roles() -> None:
    roles = (base.MemoryIndex, base.MessageLog, base.TurnQueue, base.Coordination)
    assert base.MemoryStore.__mro__[1:5] == roles
    assert set(methods(base.MemoryStore)) == {"reset", "close"}  # everything else belongs to a role
    every = [name for role in roles for name in methods(role)]
    assert len(every) == len(set(every))  # no method in two roles


@pytest.mark.parametrize("port", list(CONTRACTS), ids=lambda p: p.__name__)
def test_each_ports_contract_tests_call_each_of_its_methods(port: type) -> None:
    text = "".join((TESTS / module).read_text(encoding="utf-8") for module in CONTRACTS[port])
    uncalled = [name for name in methods(port) if not re.search(rf"\.{name}\(", text)]
    assert not uncalled, f"{port.__name__}'s contract tests never call {uncalled}"
