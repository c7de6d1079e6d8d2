-- Runs once, when the compose stack's database is created: pgvector in jiyi's database, so the store's migrations
-- do not need to create an extension themselves.
CREATE EXTENSION IF NOT EXISTS vector;
