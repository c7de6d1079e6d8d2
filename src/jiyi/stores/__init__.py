"""Stores, picked by one URL: "sqlite:///path/to/memory.db" (default), "sqlite://:memory:",
"postgresql://user:password@host:5432/dbname" (the `postgres` extra)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jiyi.errors import ConfigError
from jiyi.stores.base import MemoryStore, ScoredId

StoreFactory = Callable[[str], MemoryStore]
_REGISTRY: dict[str, StoreFactory] = {}


def register_store(scheme: str, factory: StoreFactory) -> None:
    """`factory(rest)` gets the URL after "scheme://"."""
    _REGISTRY[scheme] = factory


def sqlite_path(url: str) -> Path | None:
    """The file a SQLite store URL names (`~` expanded, relative as given), or None: not SQLite, or in memory.
    sqlite:///relative.db, sqlite:////abs/path.db, sqlite:///~/x.db, a bare path and sqlite://:memory: are accepted."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        rest = "/" + url  # a bare path means a SQLite file: the most common thing to type
    elif scheme.lower() != "sqlite":
        return None
    path = rest[1:] if rest.startswith("/") else rest
    return None if path in ("", ":memory:") else Path(path).expanduser()


def _sqlite(rest: str) -> MemoryStore:
    from jiyi.stores.sqlite import SqliteStore

    path = sqlite_path("sqlite://" + rest)
    return SqliteStore(":memory:" if path is None else path)


register_store("sqlite", _sqlite)


def _postgres(rest: str) -> MemoryStore:
    try:
        from jiyi.stores.postgres import PostgresStore
    except ImportError as exc:
        if not (exc.name or "").startswith("psycopg"):
            raise
        raise ConfigError(f"a postgresql:// store needs the PostgreSQL driver ({exc.name} is not installed): "
                          "pip install 'jiyi[postgres]'") from None
    return PostgresStore("postgresql://" + rest)


register_store("postgresql", _postgres)
register_store("postgres", _postgres)  # libpq takes both spellings


def build_store(url: str) -> MemoryStore:
    scheme, sep, rest = url.partition("://")
    if not sep:
        # A bare path means a SQLite file: the most common thing to type.
        return _sqlite("/" + url)
    factory = _REGISTRY.get(scheme.lower())
    if factory is None:
        # The scheme alone: the rest of a URL may hold a password.
        raise ConfigError(f"unknown store {scheme + '://'!r}; supported: "
                          f"{', '.join(f'{s}://' for s in sorted(_REGISTRY))}")
    return factory(rest)


__all__ = ["MemoryStore", "ScoredId", "build_store", "register_store", "sqlite_path"]
