"""POST /memories/{memory_id}/restore: take a deletion back before the purge removes the memory's text (the console's
restore button, and a client undoing its own delete, as SillyTavern's ledger does when a deleted turn comes back)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Header

from jiyi.server.auth import AccessPolicy
from jiyi.server.responses import MemoryItem, answers
from jiyi.server.routes import COMMON_ERRORS, NOT_FOUND, Caller, Limits, MemoryDep, _expected_version
from jiyi.server.schemas import ErrorBody, _Body

router = APIRouter(responses=COMMON_ERRORS)

NOT_RESTORABLE: dict[int | str, dict[str, Any]] = {409: {"model": ErrorBody, "description": (
    "the memory is not deleted, or is no longer at the version asked for (If-Match / version)")}}


class MemoryRestore(_Body):
    reason: str | None = None
    version: int | None = None


@router.post("/memories/{memory_id}/restore", tags=["memories"], response_model=None,
             responses=answers(MemoryItem, NOT_FOUND, NOT_RESTORABLE, description="the memory, live again"))
async def restore_memory(
    memory_id: str, m: MemoryDep, who: Caller, cap: Limits,
    body: Annotated[MemoryRestore | None, Body(description="optional: why (kept in the RESTORE history row), and "
                                                           "the version the memory must still be at")] = None,
    if_match: Annotated[str | None, Header(description="a memory version: restore only if it is still at it")] = None,
) -> dict[str, Any]:
    """Undo a delete or a forgetting within the purge window (`lifecycle.purge_after_days`, 30 days): the memory is
    searchable again, with a RESTORE row in its history. A user key restores only its own user's memories."""
    reason = body.reason if body else None
    cap.check_query(reason, "reason")
    version = _expected_version(body.version if body else None, if_match)
    return await m.restore(memory_id, reason=reason, version=version, user_id=AccessPolicy.bind_user(who, None),
                           agent_id=AccessPolicy.bind_agent(who, None))
