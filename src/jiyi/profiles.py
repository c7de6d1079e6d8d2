"""mem0's user profiles, offline: one object per user that says who they are, made from their stable facts.

A profile is the user's core and stable facts (core first, then by importance; passing states and one-off events
left out), grouped by mem0's category — {"personal_details": [...], "food": [...], …} — or, when the project's
settings give a JSON Schema, one value per property: the facts in the category of that name and the facts whose
vectors are near the property's description (an array property gets the facts, a string one the best three joined;
numbers, booleans and objects stay null: reading a value out of a sentence is an LLM's job).

Profiles are kept in the store's state per project and user, with a fingerprint of the facts and settings they were
made from: a read rebuilds a profile whose user's facts changed since (as mem0 rebuilds profiles as memories
arrive), and `generate` rebuilds it now. Generation takes milliseconds offline, so a job is finished when it is
answered; it is kept, with its counts, for the SDKs to read back. Settings are per project (a user key is a project
of one user, as everywhere in the platform API): `enabled` (on unless turned off), and the user profiles' `schema`
and `custom_instructions` (kept and given back; offline generation has no use for instructions).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from jiyi.core.categories import DEFAULT_NAMES, FALLBACK, described
from jiyi.errors import InvalidInput, NotFound
from jiyi.filters import parse_filters
from jiyi.memory import AsyncMemory
from jiyi.records import Category, MemoryRecord, Scope

PROFILE_FACTS = 500  # the most important of a user's facts a profile is made from ...
READ_FACTS = 5000  # ... among their newest facts: a read of a profile stays bounded however much a user has said
PER_FIELD = 10  # facts in one category or array property
STRING_FACTS = 3  # facts joined into a string property
RELEVANT = 0.5  # calibrated relevance a fact needs to fill a schema property it is not categorised under
# Tags of what a profile leaves out unless it is core: passing states, one-off events, summaries of conversations.
PASSING = frozenset({"state", "event", "episode-summary"})
ENTITY_TYPES = ("user",)
OPERATIONS = ("trigger", "sample")
SAMPLE_DEFAULT, SAMPLE_MAX = 3, 10
KEPT_JOBS = 50  # per project; older jobs are forgotten
CAPABILITIES = {"entity_types": list(ENTITY_TYPES), "operations": list(OPERATIONS), "generation": "offline",
                "schema_types_filled": ["array", "string"], "categories": list(DEFAULT_NAMES)}
_FACTS = parse_filters({"jiyi.category": {"in": [Category.CORE.value, Category.FACT.value]}})


def _now() -> str:
    return datetime.now(UTC).isoformat()


# --- settings -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProfileSettings:
    enabled: bool = True
    schema: dict[str, Any] | None = None
    custom_instructions: str | None = None

    def as_json(self) -> dict[str, Any]:
        """mem0's shape: `enabled` for the project, the rest per entity type under `entities`."""
        return {"enabled": self.enabled,
                "entities": {"user": {"schema": self.schema, "custom_instructions": self.custom_instructions}},
                "capabilities": CAPABILITIES}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ProfileSettings:
        data = data or {}
        user = (data.get("entities") or {}).get("user") or {}
        return cls(bool(data.get("enabled", True)), user.get("schema"), user.get("custom_instructions"))

    def updated(self, body: Any) -> ProfileSettings:
        """These settings with a POST's changes (only the fields it names), checked: a 4xx sentence for the rest."""
        if not isinstance(body, dict):
            raise InvalidInput("profile settings are an object: {\"enabled\": …, \"entities\": {\"user\": {…}}}")
        flat = sorted(set(body) - {"enabled", "entities"})
        if flat:
            raise InvalidInput(f"Unsupported settings: {', '.join(flat)}; schema and custom_instructions go under "
                               "entities.user, as the SDKs send them")
        enabled = self.enabled
        if "enabled" in body:
            if not isinstance(body["enabled"], bool):
                raise InvalidInput("enabled must be true or false")
            enabled = body["enabled"]
        entities = body.get("entities") or {}
        if not isinstance(entities, dict) or set(entities) - set(ENTITY_TYPES):
            raise InvalidInput("entities: jiyi keeps profiles of users only ({\"user\": {…}})")
        user = entities.get("user") or {}
        if not isinstance(user, dict) or set(user) - {"schema", "custom_instructions"}:
            raise InvalidInput("entities.user takes schema and custom_instructions")
        schema = self.schema
        if "schema" in user:
            schema = user["schema"]
            if schema is not None:
                check_schema(schema)
        instructions = self.custom_instructions
        if "custom_instructions" in user:
            instructions = user["custom_instructions"]
            if instructions is not None and (not isinstance(instructions, str) or len(instructions) > 10_000):
                raise InvalidInput("custom_instructions must be text of at most 10,000 characters, or null")
        return ProfileSettings(enabled, schema, instructions)


def check_schema(schema: Any) -> None:
    """A profile schema as mem0 takes it: a JSON Schema object whose every property has a description."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict) or not schema["properties"]:
        raise InvalidInput("schema must be a JSON Schema object with properties, such as {\"type\": \"object\", "
                           "\"properties\": {\"diet\": {\"type\": \"string\", \"description\": \"what they eat\"}}}")
    if len(schema["properties"]) > 100:
        raise InvalidInput("schema: at most 100 properties")
    for name, spec in schema["properties"].items():
        if not isinstance(spec, dict) or not isinstance(spec.get("description"), str) or not spec["description"]:
            raise InvalidInput(f"schema: property {str(name)[:64]!r} needs a description (it says how to fill it)")
    if len(json.dumps(schema)) > 50_000:
        raise InvalidInput("schema: at most 50,000 characters of JSON")


# --- what a profile is made of ------------------------------------------------------------------------------------


def stable_facts(records: Sequence[MemoryRecord], now: datetime) -> list[MemoryRecord]:
    """A user's facts a profile is made from: live, not expired, not a passing state or a one-off event (unless it is
    core); core first, then the most important, then the newest."""
    kept = [r for r in records
            if (r.expiration_date is None or r.expiration_date > now)
            and (r.category is Category.CORE or not PASSING.intersection(r.tags))]
    kept.sort(key=lambda r: (r.category is not Category.CORE, -r.importance, -r.created_at.timestamp()))
    return kept[:PROFILE_FACTS]


def fingerprint(facts: Sequence[MemoryRecord], settings: ProfileSettings) -> str:
    """What a profile was made from: its facts (each at its version) and the schema."""
    digest = hashlib.sha256(json.dumps(settings.schema, sort_keys=True, default=str).encode())
    for record in sorted(facts, key=lambda r: r.id):
        digest.update(f"{record.id}:{record.version}".encode())
    return digest.hexdigest()[:32]


def by_category(facts: Sequence[MemoryRecord]) -> dict[str, list[str]]:
    """The facts under their first category, mem0's categories in mem0's order first, a project's own after, misc
    (and facts without any, written before categories were kept) last."""
    grouped: dict[str, list[str]] = {}
    for record in facts:
        name = record.categories[0] if record.categories else FALLBACK
        if len(grouped.setdefault(name, [])) < PER_FIELD:
            grouped[name].append(record.content)
    order = {name: i for i, name in enumerate(n for n in DEFAULT_NAMES if n != FALLBACK)}
    return {name: grouped[name] for name in sorted(grouped, key=lambda n: (n == FALLBACK, order.get(n, 99), n))}


def _types(spec: dict[str, Any]) -> set[str]:
    kind = spec.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()


def by_schema(schema: dict[str, Any], facts: Sequence[MemoryRecord], relevance: np.ndarray) -> dict[str, Any]:
    """One value per schema property. `relevance[i, j]`: how near fact j is to property i's description (0-1). A
    fact categorised under the property's name counts as relevant whatever its vector says."""
    out: dict[str, Any] = {}
    for i, (name, spec) in enumerate(schema["properties"].items()):
        scores = [(1.0 + float(relevance[i, j]) if name in record.categories else float(relevance[i, j]), j)
                  for j, record in enumerate(facts)]
        chosen = [facts[j].content for score, j in sorted(scores, key=lambda s: (-s[0], s[1])) if score >= RELEVANT]
        kinds = _types(spec) or {"string"}
        if "array" in kinds:
            out[name] = chosen[:PER_FIELD]
        elif "string" in kinds:
            out[name] = "; ".join(chosen[:STRING_FACTS]) or None
        else:
            out[name] = None  # a number, a flag or an object is read out of the facts by an LLM, not offline
    return out


def _property_words(properties: dict[str, Any], facts: Sequence[MemoryRecord]) -> np.ndarray:
    """(properties, facts): how much each fact says the words of each property's name and description."""
    taxonomy = described([(name, spec["description"]) for name, spec in properties.items()])
    return np.stack([taxonomy.word_scores(record.content) for record in facts]).T if facts else \
        np.zeros((len(properties), 0), dtype=np.float32)


# --- the service --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Job:
    id: str
    operation: str
    entity_ids: list[str]
    status: str = "succeeded"
    created_at: str = field(default_factory=_now)
    succeeded: int = 0
    failed: int = 0
    skipped: int = 0
    errors: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """GET /v2/profiles/jobs/{id}/: mem0's counts (total, completed = succeeded + failed + skipped)."""
        return {"id": self.id, "operation": self.operation, "entity_type": "user", "status": self.status,
                "total": len(self.entity_ids), "enumeration_complete": True,
                "completed": self.succeeded + self.failed + self.skipped, "succeeded": self.succeeded,
                "failed": self.failed, "skipped": self.skipped, "entity_ids": self.entity_ids,
                "errors": self.errors, "created_at": self.created_at}


class Profiles:
    """Profiles, their settings and generation jobs, kept in the Memory's store (its state rows)."""

    def __init__(self, memory: AsyncMemory) -> None:
        self.memory = memory

    async def _get(self, key: str) -> Any:
        raw = await asyncio.to_thread(self.memory.store.get_state, key)
        return json.loads(raw) if raw else None

    async def _set(self, key: str, value: Any) -> None:
        await asyncio.to_thread(self.memory.store.set_state, key, json.dumps(value, ensure_ascii=False))

    # settings

    async def settings(self, project: str) -> ProfileSettings:
        return ProfileSettings.from_json(await self._get(f"profiles:settings:{project}"))

    async def update_settings(self, project: str, body: Any) -> ProfileSettings:
        changed = (await self.settings(project)).updated(body)
        await self._set(f"profiles:settings:{project}", changed.as_json())
        return changed

    # profiles

    async def _facts(self, user_id: str) -> list[MemoryRecord]:
        records = await asyncio.to_thread(self.memory.store.list_records, Scope(user_id), _FACTS, READ_FACTS)
        if not records and not await asyncio.to_thread(self._known, user_id):
            raise NotFound(f"user {user_id} not found")
        return stable_facts(records, self.memory.clock())

    def _known(self, user_id: str) -> bool:
        """A user with memories or with messages (whose facts may be yet to come, or none worth keeping)."""
        scope = Scope(user_id)
        return bool(self.memory.store.count_records(scope) or self.memory.store.list_messages(scope, 1))

    async def get(self, project: str, user_id: str) -> dict[str, Any]:
        """The user's profile as mem0's get_profile answers it; rebuilt first when the facts changed."""
        settings = await self.settings(project)
        facts = await self._facts(user_id)
        if not settings.enabled:
            return self._answer(user_id, {"status": "not_enabled", "profile": {}})
        kept = await self._get(f"profiles:user:{project}:{user_id}")
        if kept is None or kept.get("fingerprint") != fingerprint(facts, settings):
            kept = await self._generate(project, user_id, settings, facts, kept)
        return self._answer(user_id, kept)

    async def _generate(self, project: str, user_id: str, settings: ProfileSettings, facts: list[MemoryRecord],
                        before: dict[str, Any] | None) -> dict[str, Any]:
        count = int((before or {}).get("generation_count", 0))
        kept: dict[str, Any]
        if not facts:
            kept = {"status": "insufficient_data", "profile": {}, "updated_at": None, "generation_count": count,
                    "error": None, "fingerprint": fingerprint(facts, settings)}
        else:
            try:
                profile = await self._profile(settings, facts)
                kept = {"status": "succeeded", "profile": profile, "updated_at": _now(),
                        "generation_count": count + 1, "error": None, "fingerprint": fingerprint(facts, settings)}
            except Exception as exc:  # the embedder is down: the last profile stays, with why it is not newer
                kept = {**(before or {"profile": {}, "updated_at": None}), "status": "failed",
                        "generation_count": count, "error": f"{type(exc).__name__}: {exc}"[:300], "fingerprint": None}
        await self._set(f"profiles:user:{project}:{user_id}", kept)
        return kept

    async def _profile(self, settings: ProfileSettings, facts: list[MemoryRecord]) -> dict[str, Any]:
        if settings.schema is None:
            return by_category(facts)
        properties = settings.schema["properties"]
        questions = [f"{name.replace('_', ' ')}: {spec['description']}" for name, spec in properties.items()]
        embedding = self.memory.embedding
        calibration = self.memory.embedder.calibration
        asked = await asyncio.gather(*(embedding.aembed_query(q) for q in questions))
        vectors = await asyncio.to_thread(self.memory.store.get_vectors, [r.id for r in facts])
        dims = len(asked[0]) if asked else 0
        matrix = np.stack([vectors.get(r.id, np.zeros(dims, np.float32)) for r in facts])
        cosines = np.stack(asked) @ matrix.T
        relevance = np.array([[calibration.for_query(q).relevance(float(c)) for c in row]
                              for q, row in zip(questions, cosines, strict=True)])
        # A property is also a category of its own: a fact that says its words (diet -> vegetarian, by the lexicon)
        # is relevant to it whatever the vectors say.
        words = await asyncio.to_thread(_property_words, properties, facts)
        return by_schema(settings.schema, facts, np.maximum(relevance, np.minimum(words, 1.0)))

    def _answer(self, user_id: str, kept: dict[str, Any]) -> dict[str, Any]:
        return {"profile": kept.get("profile") or {}, "status": kept["status"], "entity_type": "user",
                "entity_id": user_id, "updated_at": kept.get("updated_at"),
                "generation_count": int(kept.get("generation_count", 0)), "error": kept.get("error")}

    # jobs

    async def start_job(self, project: str, operation: str, entity_type: str, entity_id: str | None,
                        limit: int | None, idempotency_key: str | None, allowed_users: Sequence[str] | None = None
                        ) -> dict[str, Any]:
        """A generation: `trigger` one user's profile, or `sample` a few users'. The same idempotency key gives back
        the same job (replayed), doing nothing again. `allowed_users`: the users this caller may name (None: any)."""
        if operation not in OPERATIONS:
            raise InvalidInput(f"operation must be one of {', '.join(OPERATIONS)}, got {str(operation)[:40]!r}")
        if entity_type not in ENTITY_TYPES:
            raise InvalidInput(f"entity_type must be user: jiyi keeps profiles of users only, got {entity_type!r}")
        if idempotency_key is not None and not 8 <= len(idempotency_key) <= 128:
            raise InvalidInput("the Idempotency-Key header must be 8 to 128 characters")
        key = f"profiles:job-key:{project}:{hashlib.sha256((idempotency_key or '').encode()).hexdigest()}"
        if idempotency_key is not None and (earlier := await self._get(key)) is not None:
            job = await self._get(f"profiles:job:{project}:{earlier}")
            if job is not None:
                return self._accepted(Job(**job), replayed=True)
        settings = await self.settings(project)
        if not settings.enabled:
            raise InvalidInput("profiles are not enabled for this project: update_profile_settings(enabled=True)")
        if operation == "trigger":
            if not entity_id:
                raise InvalidInput("a trigger names the user: entity_id")
            if allowed_users is not None and entity_id not in allowed_users:
                raise NotFound(f"user {entity_id} not found")
            await self._facts(entity_id)  # 404 for a user with no memories, before a job is made
            users = [entity_id]
        else:
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                      or not 1 <= limit <= SAMPLE_MAX):
                raise InvalidInput(f"limit must be an integer from 1 to {SAMPLE_MAX}")
            users = await self._sample(limit or SAMPLE_DEFAULT, allowed_users)
        job = Job(str(uuid.uuid4()), operation, users)
        for user_id in users:
            facts = await self._facts(user_id)
            before = await self._get(f"profiles:user:{project}:{user_id}")
            kept = await self._generate(project, user_id, settings, facts, before)
            if kept["status"] == "succeeded":
                job.succeeded += 1
            elif kept["status"] == "failed":
                job.failed += 1
                job.errors[user_id] = kept["error"]
            else:
                job.skipped += 1  # no stable fact to make a profile of
        job.status = "failed" if job.failed and not job.succeeded else "succeeded"
        await self._keep_job(project, job, key if idempotency_key is not None else None)
        return self._accepted(job, replayed=False)

    async def _sample(self, limit: int, allowed_users: Sequence[str] | None) -> list[str]:
        """The users with the most memories (a sample that shows a schema at its fullest)."""
        entities = await asyncio.to_thread(self.memory.store.entities)
        users = [e for e in entities if e.kind == "user" and (allowed_users is None or e.name in allowed_users)]
        users.sort(key=lambda e: (-e.memories, e.name))
        return [e.name for e in users[:limit]]

    async def _keep_job(self, project: str, job: Job, key: str | None) -> None:
        await self._set(f"profiles:job:{project}:{job.id}", asdict(job))
        if key is not None:
            await self._set(key, job.id)
        index = [job.id, *(await self._get(f"profiles:jobs:{project}") or [])]
        for dropped in index[KEPT_JOBS:]:
            await self._set(f"profiles:job:{project}:{dropped}", None)
        await self._set(f"profiles:jobs:{project}", index[:KEPT_JOBS])

    async def job(self, project: str, job_id: str) -> dict[str, Any]:
        kept = await self._get(f"profiles:job:{project}:{job_id}")
        if kept is None:
            raise NotFound(f"profile job {job_id} not found")
        return {"job": Job(**kept).as_json()}

    @staticmethod
    def _accepted(job: Job, *, replayed: bool) -> dict[str, Any]:
        answer = {"job_id": job.id, "status": job.status, "status_url": f"/v2/profiles/jobs/{job.id}/",
                  "operation": job.operation, "entity_type": "user", "entity_count_reserved": len(job.entity_ids),
                  "event_id": None, "replayed": replayed}
        if job.operation == "sample":
            answer |= {"sampled": len(job.entity_ids), "entity_ids": job.entity_ids}
        return answer
