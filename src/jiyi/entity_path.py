"""Who is who, on the write path: after a turn's facts are applied, the user's messages update the user's entity
graph (core/entities.py reads them, with the rules or, where one is configured, an LLM's reading from
core/llm_entities.py; the store keeps the graph through its EntityStore port).

Runs beside fact extraction, never instead of it: an error here is logged and the turn lands all the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jiyi.core.entities import extract_change
from jiyi.core.entity_claims import Claim
from jiyi.core.messages import evidence_id
from jiyi.records import Scope, StoredMessage
from jiyi.stores.entities import EntityStore

RECENT_MESSAGES = 4  # the user's earlier messages read for "she" / "他" (as the offline extractor reads them)


def remember_entities(store: EntityStore, scope: Scope, messages: Sequence[StoredMessage],
                      earlier: Sequence[str], memory_ids: Sequence[str],
                      claims: Mapping[str, Sequence[Claim]] | None = None, *, with_evidence: bool = True) -> int:
    """Update the user's graph from the user's `messages` of one turn; `earlier`: the user's messages before it,
    oldest first; `memory_ids`: the facts the turn wrote; `claims`: an LLM's reading of each message (by message
    id; the rules read the others). Each message's relations and mentions point to those facts and to the message's
    own evidence record (`with_evidence=False`: a message kept as the memory itself, infer=False, has none). Returns
    how many entities and relations changed."""
    if not scope.user_id:
        return 0  # the graph is a user's: an agent's or a run's own memories have none
    graph = store.graph(scope.user_id)
    recent = list(earlier)[-RECENT_MESSAGES:]
    changed = 0
    for message in messages:
        if message.role != "user" or not message.content.strip():
            continue
        when = message.created_at
        supports = [*memory_ids, evidence_id(message.id)] if with_evidence else list(memory_ids)
        change = extract_change(message.content, graph, recent, when, supports,
                                (claims or {}).get(message.id))
        if change:
            store.save_graph(scope.user_id, change, when)
            changed += len(change.entities) + len(change.relations)
        recent = [*recent, message.content][-RECENT_MESSAGES:]
    return changed
