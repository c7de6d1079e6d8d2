"""PostgreSQL + pgvector (`pip install 'jiyi[postgres]'`): importing this package imports psycopg."""

from jiyi.stores.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
