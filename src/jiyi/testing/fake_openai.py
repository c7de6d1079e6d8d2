"""A fake OpenAI-compatible chat server that really listens on 127.0.0.1, so clients are tested over real HTTP.

    with FakeOpenAI() as llm:
        llm.script('{"facts": ["likes tea"]}', Reply(status=429, headers={"Retry-After": "0"}))
        client = OpenAICompatibleLLM("any-model", base_url=llm.base_url)
        ...
        assert llm.requests[0].body["messages"][0]["role"] == "system"

Scripted replies are consumed in order; once they run out, `responder(body)` answers (by default with "{}").

`POST /v1/rerank` (and `/rerank`) answers in the Cohere/Jina shape, or TEI's bare list when the request sends TEI's
"texts". Scores come from `script_rerank(...)` first, then `rerank_responder(body)`, by default the share of the
query's words (CJK: character bigrams) each document contains, so relevance ordering is real:

    llm.script_rerank([0.1, 0.9], Reply(status=503), Reply(raw_body='[{"index": 0, "score": 0.5}]'))

A request with `"stream": true` (as SillyTavern sends by default) gets the answer as server-sent events:
`data: {chat.completion.chunk}` lines, then `data: [DONE]`.

From the command line it serves one fixed reply, e.g. an LLM that takes two seconds for benchmarks, or a chat model
for trying SillyTavern that prints every request it gets (one JSON line each; `--log-requests FILE` appends to FILE):

    python -m jiyi.testing.fake_openai --port 8000 --reply '{"facts": []}' --delay 2
    python -m jiyi.testing.fake_openai --port 5001 --reply "Hello from the fake model." --log-requests
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from jiyi.rerankers.overlap import overlap_score


@dataclass(frozen=True)
class Reply:
    """One answer of the fake server. `content=None` with status 200 sends `"content": null`."""

    content: str | None = None
    status: int = 200
    delay: float = 0.0  # seconds, slept without blocking other requests
    headers: dict[str, str] | None = None
    error: str | None = None  # the error message of a non-200 answer
    raw_body: str | None = None  # sent verbatim instead of a well-formed answer


@dataclass(frozen=True)
class LoggedRequest:
    path: str
    headers: dict[str, str]  # lower-case names, as HTTP/1.1 servers see them
    body: dict[str, Any]
    received_at: float  # time.monotonic(), to measure the gaps between retries


Responder = Callable[[dict[str, Any]], Reply | str]
# The scores of a rerank answer, one per document, or a Reply (an error, a raw body; a plain 200 Reply adds its delay
# and headers to the default overlap scores).
RerankResponder = Callable[[dict[str, Any]], Sequence[float] | Reply]
RERANK_PATHS = ("/v1/rerank", "/rerank")
STREAM_PIECE_CHARS = 8  # a streamed answer comes in pieces of this many characters

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error"}


def _default_responder(body: dict[str, Any]) -> Reply | str:
    return "{}"


def _rerank_documents(body: dict[str, Any]) -> list[str] | None:
    """The documents of a Cohere/Jina request ("documents": strings or {"text": ...}) or a TEI one ("texts")."""
    documents = body.get("documents", body.get("texts"))
    if not isinstance(documents, list):
        return None
    texts = [d.get("text") if isinstance(d, dict) else d for d in documents]
    return [t for t in texts if isinstance(t, str)] if all(isinstance(t, str) for t in texts) else None


def default_rerank_responder(body: dict[str, Any]) -> list[float]:
    """The share of the query's terms in each document (jiyi.rerankers.overlap): deterministic, really ordered."""
    query, documents = body.get("query"), _rerank_documents(body) or []
    return [overlap_score(query, d) for d in documents] if isinstance(query, str) else [0.0] * len(documents)


def _count_tokens(text: str | None) -> int:
    return len(text.split()) if text else 0


def _prompt_tokens(messages: Any) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(_count_tokens(m.get("content")) for m in messages
               if isinstance(m, dict) and isinstance(m.get("content"), str))


class FakeOpenAI:
    """`POST /v1/chat/completions`, `POST /v1/rerank` and `GET /v1/models`, on a uvicorn server of its own
    thread."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "fake-model",
        rerank_responder: RerankResponder | None = None,
        on_request: Callable[[LoggedRequest], None] | None = None,
    ) -> None:
        self.responder = self._initial_responder = responder or _default_responder
        self.on_request = on_request  # called with each request as it arrives (the command line's --log-requests)
        self.rerank_responder = self._initial_rerank_responder = rerank_responder or default_rerank_responder
        self._rerank_queue: deque[Reply | list[float]] = deque()
        self.host = host
        self.model = model
        self._requested_port = port
        self._lock = threading.Lock()
        self._requests: list[LoggedRequest] = []
        self._queue: deque[Reply] = deque()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self.port = port

    # ---- scripting and inspection -------------------------------------------------------------------------------

    def script(self, *replies: Reply | str) -> FakeOpenAI:
        """Queue replies for the next requests, in order; a string is the content of a 200 answer."""
        with self._lock:
            self._queue.extend(Reply(content=r) if isinstance(r, str) else r for r in replies)
        return self

    def script_rerank(self, *replies: Reply | Sequence[float]) -> FakeOpenAI:
        """Queue answers for the next rerank requests, in order: the scores, one per document, or a Reply."""
        with self._lock:
            self._rerank_queue.extend(r if isinstance(r, Reply) else [float(s) for s in r] for r in replies)
        return self

    @property
    def requests(self) -> list[LoggedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[LoggedRequest]:
        """The logged `POST /v1/chat/completions` requests only."""
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    @property
    def rerank_requests(self) -> list[LoggedRequest]:
        """The logged `POST /v1/rerank` and `POST /rerank` requests only."""
        return [r for r in self.requests if r.path in RERANK_PATHS]

    def reset(self) -> None:
        """Forget logged requests and unconsumed scripted replies, and restore the responder given at construction;
        lets one server, started once per test module, serve each test from a clean state."""
        with self._lock:
            self._requests.clear()
            self._queue.clear()
            self.responder = self._initial_responder
            self._rerank_queue.clear()
            self.rerank_responder = self._initial_rerank_responder

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # ---- lifecycle ----------------------------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        if self._thread is not None:
            raise RuntimeError("FakeOpenAI is already running")
        server, sock = self._build_server()
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"fake-openai-{self.port}")
        self._thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        # Wake delayed answers first: uvicorn waits for in-flight requests before it exits.
        if self._loop is not None and self._closing is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._closing.set)
        server.should_exit = True
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None
        self._loop = self._closing = None

    def serve_forever(self, on_ready: Callable[[str], None] | None = None) -> None:
        """Serve in the calling thread until interrupted (Ctrl+C); `on_ready(base_url)` once the port accepts."""
        server, sock = self._build_server()
        if on_ready is not None:
            on_ready(self.base_url)
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()
            self._server = self._socket = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"FakeOpenAI(base_url={self.base_url!r}, requests={len(self.requests)})"

    def _build_server(self) -> tuple[uvicorn.Server, socket.socket]:
        # Binding here, not in uvicorn, makes port=0 race-free and tells us the port before the thread starts.
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._requested_port))
        sock.listen(128)  # connections queue from here on, even before uvicorn's loop runs
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(self._build_app(), log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=2)
        self._server, self._socket = uvicorn.Server(config), sock
        return self._server, sock

    # ---- the HTTP side ------------------------------------------------------------------------------------------

    def _build_app(self) -> FastAPI:
        @contextlib.asynccontextmanager
        async def lifespan(app: FastAPI) -> AsyncIterator[None]:
            self._loop, self._closing = asyncio.get_running_loop(), asyncio.Event()
            yield

        app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)

        @app.post("/v1/chat/completions")
        async def chat_completions(request: Request) -> Response:
            body = await self._log(request)
            if body is None:
                return _error_response(400, "the request body is not a JSON object")
            reply = self._next_reply(body)
            if reply.delay > 0:
                await self._sleep(reply.delay)
            return self._render(reply, body)

        async def rerank(request: Request) -> Response:
            body = await self._log(request)
            if body is None:
                return _error_response(400, "the request body is not a JSON object")
            reply, scores = self._next_rerank_answer(body)
            if reply.delay > 0:
                await self._sleep(reply.delay)
            if scores is None:
                return self._render(reply, body)
            return self._render_rerank(scores, body, reply.headers)

        for path in RERANK_PATHS:
            app.post(path)(rerank)

        @app.get("/v1/models")
        async def models(request: Request) -> Response:
            await self._log(request)
            return JSONResponse({"object": "list", "data": [
                {"id": self.model, "object": "model", "created": 0, "owned_by": "jiyi-testing"}]})

        @app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
        async def anything_else(request: Request, path: str) -> Response:
            await self._log(request)
            return _error_response(404, f"no route {request.method} /{path} on the fake OpenAI server")

        return app

    async def _log(self, request: Request) -> dict[str, Any] | None:
        """Record the request; returns its JSON body, {} when empty, None when it is not a JSON object."""
        raw = await request.body()
        body: dict[str, Any] | None = {}
        if raw:
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
            body = parsed if isinstance(parsed, dict) else None
        entry = LoggedRequest(request.url.path, dict(request.headers), body if body is not None else {},
                              time.monotonic())
        with self._lock:
            self._requests.append(entry)
        if self.on_request is not None:
            self.on_request(entry)
        return body

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        answer = self.responder(body)
        return Reply(content=answer) if isinstance(answer, str) else answer

    def _next_rerank_answer(self, body: dict[str, Any]) -> tuple[Reply, list[float] | None]:
        """The reply whose delay, headers, status or raw body apply, and the scores when it answers with scores."""
        with self._lock:
            queued = self._rerank_queue.popleft() if self._rerank_queue else None
        answer = self.rerank_responder(body) if queued is None else queued
        if not isinstance(answer, Reply):
            return Reply(), [float(s) for s in answer]
        if answer.raw_body is not None or answer.status != 200:
            return answer, None
        # A plain 200 Reply: the usual scores, with its delay and headers.
        usual = self.rerank_responder(body) if queued is not None else answer
        return answer, [float(s) for s in (default_rerank_responder(body) if isinstance(usual, Reply) else usual)]

    def _render_rerank(self, scores: list[float], body: dict[str, Any], headers: dict[str, str] | None) -> Response:
        documents = _rerank_documents(body)
        if not isinstance(body.get("query"), str) or documents is None:
            field = "texts" if "texts" in body else "documents"
            return _error_response(422, f"query (a string) and {field} (a list of strings) are required")
        ranked = sorted(enumerate(scores), key=lambda item: (-item[1], item[0]))
        top_n = body.get("top_n")
        if isinstance(top_n, int) and not isinstance(top_n, bool) and top_n >= 0:
            ranked = ranked[:top_n]
        tei = "documents" not in body  # TEI answers a bare list with "score", and the text only when asked
        results: list[dict[str, Any]] = []
        for i, score in ranked:
            item: dict[str, Any] = {"index": i, "score" if tei else "relevance_score": score}
            if i < len(documents) and body.get("return_text" if tei else "return_documents"):
                item["text" if tei else "document"] = documents[i] if tei else {"text": documents[i]}
            results.append(item)
        if tei:
            return JSONResponse(results, headers=headers)
        model = body.get("model")
        tokens = _count_tokens(body.get("query")) + sum(_count_tokens(d) for d in documents)
        return JSONResponse({"id": f"rerank-{uuid.uuid4().hex[:24]}", "model": model if isinstance(model, str)
                             else self.model, "results": results, "usage": {"total_tokens": tokens}},
                            headers=headers)

    async def _sleep(self, seconds: float) -> None:
        if self._closing is None:
            await asyncio.sleep(seconds)
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)

    def _render(self, reply: Reply, body: dict[str, Any]) -> Response:
        headers = dict(reply.headers or {})
        if reply.raw_body is not None:
            media_type = None if any(k.lower() == "content-type" for k in headers) else "application/json"
            return Response(reply.raw_body, status_code=reply.status, headers=headers, media_type=media_type)
        if reply.status != 200:
            return _error_response(reply.status, reply.error, headers)
        model = body.get("model")
        prompt_tokens = _prompt_tokens(body.get("messages"))
        completion_tokens = _count_tokens(reply.content)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        if body.get("stream") is True:
            return StreamingResponse(_sse_chunks(reply.content, model if isinstance(model, str) else self.model,
                                                 usage if _wants_usage(body) else None),
                                     media_type="text/event-stream", headers={"Cache-Control": "no-cache", **headers})
        return JSONResponse({
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model if isinstance(model, str) else self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }, headers=headers)


def _wants_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _sse_chunks(content: str | None, model: str, usage: dict[str, int] | None) -> Iterator[str]:
    """OpenAI's streaming shape: the role, the content in pieces, the finish reason, the usage when asked, [DONE]."""
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model}

    def event(choices: list[dict[str, Any]], **extra: Any) -> str:
        return f"data: {json.dumps({**base, 'choices': choices, **extra}, ensure_ascii=False)}\n\n"

    yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    text = content or ""
    for start in range(0, len(text), STREAM_PIECE_CHARS):
        yield event([{"index": 0, "delta": {"content": text[start:start + STREAM_PIECE_CHARS]},
                      "finish_reason": None}])
    yield event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
    if usage is not None:
        yield event([], usage=usage)
    yield "data: [DONE]\n\n"


def request_logger(target: str) -> Callable[[LoggedRequest], None]:
    """Each request as one JSON line ({at, path, body}) on stdout ("-") or appended to the file `target`."""
    lock = threading.Lock()

    def write(entry: LoggedRequest) -> None:
        line = json.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "path": entry.path, "body": entry.body},
                          ensure_ascii=False)
        with lock:
            if target == "-":
                print(line, flush=True)
            else:
                with Path(target).open("a", encoding="utf-8") as log:
                    log.write(line + "\n")

    return write


def _error_response(status: int, message: str | None, headers: dict[str, str] | None = None) -> JSONResponse:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    text = message or f"fake OpenAI server answered HTTP {status}"
    return JSONResponse({"error": {"message": text, "type": kind, "code": status}}, status_code=status,
                        headers=headers)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jiyi.testing.fake_openai",
                                     description="Serve a fixed chat-completions reply, like a slow or broken LLM.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port (printed on start)")
    parser.add_argument("--reply", default="{}", help="the assistant message content of every answer")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--status", type=int, default=200, help="answer this HTTP status instead (e.g. 429, 500)")
    parser.add_argument("--model", default="fake-model", help="the model GET /v1/models lists")
    parser.add_argument("--log-requests", nargs="?", const="-", default=None, metavar="FILE",
                        help="print each request as a JSON line (path, body), or append it to FILE")
    args = parser.parse_args(argv)
    reply = Reply(content=args.reply, status=args.status, delay=args.delay)
    on_request = request_logger(args.log_requests) if args.log_requests is not None else None
    fake = FakeOpenAI(lambda body: reply, host=args.host, port=args.port, model=args.model, on_request=on_request)
    fake.serve_forever(on_ready=lambda url: print(f"fake OpenAI server at {url}", flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
