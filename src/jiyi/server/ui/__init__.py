"""The web console at /ui: users, their memories, search with explain, edits and why a memory is remembered, and
each user's entity graph (entity_routes.py)."""

from fastapi import APIRouter

from jiyi.server.ui import entity_routes, routes

router = APIRouter()
router.include_router(routes.router)
router.include_router(entity_routes.router)

__all__ = ["router"]
