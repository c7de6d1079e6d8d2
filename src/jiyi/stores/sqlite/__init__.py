from jiyi.stores.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
