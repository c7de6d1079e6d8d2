"""One mapping from jiyi's errors to HTTP statuses. Domain code never builds an HTTP response."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from jiyi.errors import (
    BackendUnavailable,
    ConfigError,
    EmbeddingMismatch,
    InvalidInput,
    JiyiError,
    NotFound,
    NotSupportedYet,
    Unauthorized,
)

log = logging.getLogger("jiyi.server")

STATUS = (
    (Unauthorized, 401),
    (InvalidInput, 400),
    (NotFound, 404),
    (EmbeddingMismatch, 409),
    (ConfigError, 400),
    (NotSupportedYet, 501),
    (BackendUnavailable, 503),
)


def status_for(exc: JiyiError) -> int:
    return next((status for kind, status in STATUS if isinstance(exc, kind)), 500)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(JiyiError)
    async def jiyi_error(request: Request, exc: JiyiError) -> JSONResponse:
        status = status_for(exc)
        if status >= 500:
            log.warning("%s %s -> %s: %s", request.method, request.url.path, status, exc)
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Log the type and place, not the request body: it may hold a user's private messages.
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": "internal error; the request id is in the X-Request-ID header"},
                            status_code=500)
