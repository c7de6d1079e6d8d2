"""PostgreSQL + pgvector (`pip install 'jiyi[postgres]'`): importing this package imports psycopg."""

from jiyi.stores.postgres.store import HnswSearch, PostgresStore

__all__ = ["HnswSearch", "PostgresStore"]
