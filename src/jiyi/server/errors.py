"""One mapping from jiyi's errors to HTTP statuses. Domain code never builds an HTTP response."""

from __future__ import annotations

import logging
import math

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from jiyi.errors import (
    BackendUnavailable,
    ConfigError,
    Conflict,
    EmbeddingMismatch,
    Forbidden,
    InvalidInput,
    JiyiError,
    NotFound,
    NotOffered,
    NotSupportedYet,
    Overloaded,
    PayloadTooLarge,
    RateLimited,
    Unauthorized,
    UnsupportedMediaType,
)
from jiyi.server.validation import validation_sentence

log = logging.getLogger("jiyi.server")

STATUS = (
    (Unauthorized, 401),
    (Forbidden, 403),
    (RateLimited, 429),
    (PayloadTooLarge, 413),
    (UnsupportedMediaType, 415),
    (InvalidInput, 400),
    (NotFound, 404),
    (Conflict, 409),
    (EmbeddingMismatch, 409),
    (ConfigError, 400),
    (NotSupportedYet, 501),
    (NotOffered, 501),
    (BackendUnavailable, 503),
)


def status_for(exc: JiyiError) -> int:
    return next((status for kind, status in STATUS if isinstance(exc, kind)), 500)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(JiyiError)
    async def jiyi_error(request: Request, exc: JiyiError) -> JSONResponse:
        response = error_response(exc)
        if response.status_code >= 500 and not isinstance(exc, NotOffered):  # asked for what jiyi has not: no fault
            log.warning("%s %s -> %s: %s", request.method, request.url.path, response.status_code, exc)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_sentence(exc.errors())}, status_code=422)


def error_response(exc: JiyiError) -> JSONResponse:
    """The one shape of every error answer: {"detail": "what is wrong and how to fix it"}."""
    waits = isinstance(exc, Overloaded | RateLimited)
    headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))} if waits else None  # type: ignore[attr-defined]
    return JSONResponse({"detail": str(exc)}, status_code=status_for(exc), headers=headers)


def internal_error_response() -> JSONResponse:
    return JSONResponse({"detail": "internal error; the request id is in the X-Request-ID header"}, status_code=500)
