"""How the console answers: pages from the templates, where a form sends the browser next, and errors as pages (or,
to htmx, as a line of text it shows)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from jiyi import __version__
from jiyi.core.messages import check_text
from jiyi.errors import InvalidInput
from jiyi.server.ui.access import Visitor, language
from jiyi.server.ui.i18n import LANGUAGES, Translator
from jiyi.server.ui.session import COOKIE_PATH, VISITOR_COOKIE

TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                        autoescape=select_autoescape(["html"]), undefined=StrictUndefined, trim_blocks=True,
                        lstrip_blocks=True)


def cookie(response: Response, request: Request, name: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(name, value, max_age=max_age, path=COOKIE_PATH, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")


def finish(response: Response, request: Request, who: Visitor) -> Response:
    if who.new_visitor:
        cookie(response, request, VISITOR_COOKIE, who.new_visitor)
    return response


def render(request: Request, who: Visitor, template: str, status: int = 200, **context: Any) -> Response:
    page = TEMPLATES.get_template(template).render(t=who.t, lang=who.lang, who=who, csrf=who.csrf,
                                                   path=request.url.path, query=request.url.query, **context)
    return finish(HTMLResponse(page, status_code=status), request, who)


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def go(request: Request, who: Visitor, target: str) -> Response:
    """Where a form sends the browser next: htmx follows HX-Redirect, a plain request a 303."""
    if is_htmx(request):
        return finish(Response(status_code=200, headers={"HX-Redirect": target}), request, who)
    return finish(RedirectResponse(target, status_code=303), request, who)


def to_login(request: Request, target: str) -> Response:
    login = url("/ui/login", next=target)
    if is_htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": login})
    return RedirectResponse(login, status_code=303)


def error(request: Request, status: int, detail: str) -> Response:
    t = Translator(language(request))
    headline = t(f"status.{status}") if t.has(f"status.{status}") else t("status.other")
    if is_htmx(request):
        return PlainTextResponse(f"{headline}: {detail}", status_code=status)
    page = TEMPLATES.get_template("error.html").render(t=t, lang=t.lang, who=None, csrf="", path=request.url.path,
                                                       query="", status=status, headline=headline, detail=detail)
    return HTMLResponse(page, status_code=status)


def url(path: str, **params: Any) -> str:
    """A console address with its query (empty values left out); path parts are quoted by the caller (see seg)."""
    kept = {k: "true" if v is True else v for k, v in params.items() if v is not None and v != "" and v is not False}
    return f"{path}?{urlencode(kept)}" if kept else path


def seg(value: str) -> str:
    return quote(value, safe="")


def when(value: datetime | str | None) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


async def json_form(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise InvalidInput("the form must arrive as a JSON object (the console's pages send it so)")
    return body


def text_field(form: dict[str, Any], name: str, *, required: bool = True, limit: int = 65_536) -> str | None:
    value = form.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidInput(f"{name} is empty")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    check_text(value, name)
    return value.strip()


MEMORY_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def link_ids(text: str | None) -> Markup:
    """Text with the memory ids in it as links ("merged into 3f2c…" opens the memory it was merged into)."""
    escaped = str(escape(text or ""))
    return Markup(MEMORY_ID.sub(lambda m: f'<a href="/ui/memories/{m.group(0)}">{m.group(0)[:8]}…</a>', escaped))


TEMPLATES.filters["link_ids"] = link_ids
TEMPLATES.globals.update(url=url, seg=seg, when=when, percent=percent, version=__version__, languages=LANGUAGES)
