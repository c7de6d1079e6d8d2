"""The web console at /ui: users, their memories, search with explain, edits and why a memory is remembered."""

from jiyi.server.ui.routes import router

__all__ = ["router"]
