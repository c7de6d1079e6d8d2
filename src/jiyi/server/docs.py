"""The interactive API docs at /docs, with Swagger UI's files served by jiyi itself.

FastAPI's own /docs loads Swagger UI from cdn.jsdelivr.net: on a machine without internet (or behind a firewall that
blocks the CDN) the page stays blank. The files here are swagger-ui-dist 5.35.0 from npm, unmodified
(static/swagger-ui/, with its LICENSE and NOTICE). The page and its files hold no data, so they need no API key.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from jiyi.errors import NotFound

SWAGGER_UI = Path(__file__).parent / "static" / "swagger-ui"
ASSETS = "/docs/assets"
# The only files served: a fixed list, so a path can never name anything else on disk.
MEDIA_TYPES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}

router = APIRouter(include_in_schema=False)


@router.api_route("/docs", methods=["GET", "HEAD"])
async def swagger_ui(request: Request) -> HTMLResponse:
    app = request.app
    return get_swagger_ui_html(
        openapi_url=app.openapi_url,
        title=f"{app.title} - Swagger UI",
        swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        # Swagger UI would otherwise send the OpenAPI document's address to validator.swagger.io for a badge.
        swagger_ui_parameters={"validatorUrl": None},
    )


@router.api_route(ASSETS + "/{name}", methods=["GET", "HEAD"])
async def swagger_ui_asset(name: str) -> FileResponse:
    if name not in MEDIA_TYPES:
        raise NotFound(f"no docs asset {name!r}")
    return FileResponse(SWAGGER_UI / name, media_type=MEDIA_TYPES[name])


__all__ = ["router"]
