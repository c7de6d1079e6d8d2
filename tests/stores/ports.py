"""A store as one of its ports, for the contract tests of that port (tests/stores/test_<port>.py)."""

from __future__ import annotations

from typing import Any, TypeVar

Port = TypeVar("Port")


def as_port(store: Any, port: type[Port]) -> Port:
    """`store`, checked to declare `port` (a store names the ports it implements as its bases)."""
    assert port in type(store).__mro__, f"{type(store).__name__} does not declare {port.__name__}"
    return store  # type: ignore[no-any-return]
