"""mem0's profile routes, the ones its SDKs call (get_profile, generate_profile, sample_profiles, get_profile_job,
get/update_profile_settings; getProfile … in npm), answered offline from what jiyi knows (jiyi/profiles.py).

A user key is a project of one user, as everywhere in the platform API: its settings are its own, and another user's
profile is not found."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Header
from pydantic import BaseModel, ConfigDict, Field

from jiyi.errors import InvalidInput, NotFound
from jiyi.profiles import Profiles
from jiyi.server.auth import Principal
from jiyi.server.responses import ProfileAnswer, ProfileJobAccepted, ProfileJobAnswer, ProfileSettingsAnswer, answers
from jiyi.server.routes import COMMON_ERRORS, NOT_FOUND, Caller, MemoryDep

router = APIRouter(tags=["mem0 profiles"], responses=COMMON_ERRORS)


class ProfileJobCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")
    operation: str | None = Field(None, description="trigger (one user's profile, entity_id) or sample (a few users')")
    entity_type: str = Field("user", description="user: jiyi keeps profiles of users")
    entity_id: str | None = Field(None, max_length=256, description="the user, for trigger")
    limit: int | None = Field(None, description="how many users a sample takes, 1-10 (3)")


def _own_user(who: Principal, user_id: str) -> None:
    """A user key sees its own user's profile only: another user's is not found."""
    if who.kind == "user" and user_id != who.user_id:
        raise NotFound(f"user {user_id} not found")


@router.get("/v2/entities/{entity_type}/{entity_id}/profile/", response_model=None,
            responses=answers(ProfileAnswer, NOT_FOUND))
async def get_profile(entity_type: str, entity_id: str, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """The user's profile: their stable facts by category, or filled into the project's schema. Made at the first
    read, and again whenever their facts have changed since; `status` says where it is (succeeded, not_enabled,
    insufficient_data, failed)."""
    if entity_type not in ("user", "users"):
        raise InvalidInput(f"jiyi keeps profiles of users only, not of {entity_type[:40]!r}")
    _own_user(who, entity_id)
    return await Profiles(m).get(who.project_id, entity_id)


@router.post("/v2/profiles/jobs/", response_model=None, responses=answers(ProfileJobAccepted, NOT_FOUND))
async def create_profile_job(body: ProfileJobCreate, m: MemoryDep, who: Caller,
                             idempotency_key: Annotated[str | None, Header(description=(
                                 "8-128 characters: sent again with the same key, the same job comes back "
                                 "(replayed) and nothing is generated again"))] = None) -> dict[str, Any]:
    """Generate now: one user's profile (`trigger`, as generate_profile sends it) or a few users' (`sample`). Offline
    generation takes milliseconds, so the job is finished when this answers; its status_url reads it back."""
    operation = body.operation or ("trigger" if body.entity_id else None)
    if operation is None:
        raise InvalidInput("operation is required: trigger (with entity_id) or sample")
    allowed = [who.user_id] if who.kind == "user" and who.user_id else None
    return await Profiles(m).start_job(who.project_id, operation, body.entity_type, body.entity_id, body.limit,
                                       idempotency_key, allowed)


@router.get("/v2/profiles/jobs/{job_id}/", response_model=None, responses=answers(ProfileJobAnswer, NOT_FOUND))
async def get_profile_job(job_id: str, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """A generation job of this project: its status and counts (total, completed, succeeded, failed, skipped)."""
    return await Profiles(m).job(who.project_id, job_id)


@router.get("/v2/profiles/settings/", response_model=None, responses=answers(ProfileSettingsAnswer))
async def get_profile_settings(m: MemoryDep, who: Caller) -> dict[str, Any]:
    """The project's profile settings: `enabled`, and the user profiles' schema and custom_instructions."""
    return (await Profiles(m).settings(who.project_id)).as_json()


@router.post("/v2/profiles/settings/", response_model=None, responses=answers(ProfileSettingsAnswer))
async def update_profile_settings(m: MemoryDep, who: Caller,
                                  body: Annotated[dict[str, Any], Body(examples=[{
                                      "enabled": True, "entities": {"user": {"schema": {
                                          "type": "object", "properties": {"diet": {
                                              "type": "string", "description": "what the user eats and avoids"}}},
                                          "custom_instructions": None}}}])]) -> dict[str, Any]:
    """Change the fields given (null clears schema or custom_instructions); answers with the settings as kept. A
    schema is a JSON Schema whose every property has a description."""
    return (await Profiles(m).update_settings(who.project_id, body)).as_json()
