"""Who is who, on the write path: after a turn's facts are applied, the user's messages update the user's entity
graph (core/entities.py reads them, with the rules or, where one is configured, an LLM's reading from
core/llm_entities.py; the store keeps the graph through its EntityStore port).

Each message is read and saved in one EntityStore.update_graph: the store lets no other writer change the user's
graph in between, so two adds naming the same new person at once make one entity, not two.

Runs beside fact extraction, never instead of it: an error here is logged and the turn lands all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime

from jiyi.core.entities import extract_change
from jiyi.core.entity_claims import Claim
from jiyi.core.messages import evidence_id, speaker_of, speaker_prefix, without_speaker
from jiyi.core.not_names import not_a_name_en
from jiyi.records import Scope, StoredMessage
from jiyi.stores.entities import EntityStore, Graph, GraphChange

RECENT_MESSAGES = 4  # the user's earlier messages read for "she" / "他" (as the offline extractor reads them)


def named_speakers(messages: Sequence[StoredMessage], earlier: Sequence[str]) -> set[str]:
    """The speakers of a conversation between named people: each message's `name`, and the "Name: " its text opens
    with where at least two names do so among these messages and the user's earlier ones (one "Dinner: pasta" note,
    or two, is not a conversation)."""
    given = {m.name for m in messages if m.name}
    prefixed = {name for name in (*(speaker_of(m) for m in messages if not m.name), *map(speaker_prefix, earlier))
                if name}
    found = given | (prefixed if len(prefixed) >= 2 else set())
    return {name for name in found if not not_a_name_en(name)}


def remember_entities(store: EntityStore, scope: Scope, messages: Sequence[StoredMessage],
                      earlier: Sequence[str], memory_ids: Sequence[str],
                      claims: Mapping[str, Sequence[Claim]] | None = None, *, with_evidence: bool = True,
                      speakers: Collection[str] | None = None) -> int:
    """Update the user's graph from the user's `messages` of one turn; `earlier`: the user's messages before it,
    oldest first; `memory_ids`: the facts the turn wrote; `claims`: an LLM's reading of each message (by message
    id; the rules read the others). Each message's relations and mentions point to those facts and to the message's
    own evidence record (`with_evidence=False`: a message kept as the memory itself, infer=False, has none).
    `speakers`: the conversation's named speakers (named_speakers of these messages when None), made people of the
    graph whoever speaks. Returns how many entities and relations changed."""
    if not scope.user_id:
        return 0  # the graph is a user's: an agent's or a run's own memories have none
    user_id = scope.user_id
    conversation = named_speakers(messages, earlier) if speakers is None else set(speakers)
    recent = [without_speaker(text) for text in earlier[-RECENT_MESSAGES:]]  # "Jon: …" mentions no Jon
    changed = 0
    speakers_now = sorted(conversation)
    for message in messages:
        when = message.created_at
        if message.role != "user" or not message.content.strip():
            if speaker_of(message) in conversation:
                changed += len(store.update_graph(user_id, _reading("", [], when, [], None, speakers_now),
                                                  when).entities)
            continue
        text = message.content if message.name else without_speaker(message.content)
        supports = [*memory_ids, evidence_id(message.id)] if with_evidence else list(memory_ids)
        read = (claims or {}).get(message.id)
        change = store.update_graph(user_id, _reading(text, recent, when, supports, read, speakers_now), when)
        changed += len(change.entities) + len(change.relations)
        recent = [*recent, text][-RECENT_MESSAGES:]
    return changed


def _reading(text: str, recent: Sequence[str], when: datetime, supports: Sequence[str],
             claims: Sequence[Claim] | None, speakers: Sequence[str]) -> Callable[[Graph], GraphChange]:
    """What update_graph runs on the graph as it stands once no one else is writing it."""
    return lambda graph: extract_change(text, graph, recent, when, supports, claims, speakers)
