"""`jiyi serve`: the REST server, the console and MCP over HTTP, until SIGTERM or Ctrl+C."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
from typing import Any

from jiyi.cli.config import load_settings, memory_config
from jiyi.cli.keys import store_closes_servers
from jiyi.errors import ConfigError
from jiyi.settings import Settings


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    settings = load_settings(args)
    config = memory_config(settings, args, make_home=False)  # nothing is made before every check has passed
    # Without keys every route is open: /reset and DELETE /memories to anyone who can reach the address.
    may_be_open = bool(_loopback(settings.host) or settings.admin_api_key or settings.api_keys or settings.insecure)
    if not may_be_open and not store_closes_servers(args, config):
        print(f"jiyi: refusing to serve on {settings.host} with no keys: anyone who can reach it could read, change "
              "and reset every memory. Set JIYI_ADMIN_API_KEY (admin routes) and JIYI_API_KEYS, or issue keys with "
              "`jiyi keys create` (one key per user), or pass --insecure (JIYI_INSECURE=1) if the network itself is "
              "trusted.", file=sys.stderr)
        return 2
    check_address(settings.host, settings.port, args)  # before the model loads: a taken port is said at once
    config = memory_config(settings, args)  # now the data folder may be made
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if settings.workers > 1:
        # Each worker process builds its own app from the environment (the command's flags are passed on there).
        # They share nothing but the store, which is built for it: turns are claimed, locks and versions are in the
        # store, and each user's maintenance runs in one process at a time.
        for key in ("embedder", "config_file", "home"):
            if getattr(args, key, None) is not None:
                os.environ[f"JIYI_{key.upper()}"] = str(getattr(args, key))
        if args.store is not None:
            os.environ["JIYI_STORE"] = str(config["store"])
        print(f"jiyi: {settings.workers} worker processes · http://{settings.host}:{settings.port}/docs",
              file=sys.stderr)
        uvicorn.run("jiyi.cli.serve:app_from_environment", factory=True, workers=settings.workers,
                    host=settings.host, port=settings.port, log_level=settings.log_level.lower(),
                    timeout_graceful_shutdown=settings.shutdown_grace, timeout_keep_alive=KEEP_ALIVE_SECONDS)
        return 0
    app = _app(settings, config, reopen_allowed=may_be_open)
    server_config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level.lower(),
                                   timeout_graceful_shutdown=settings.shutdown_grace,
                                   timeout_keep_alive=KEEP_ALIVE_SECONDS)
    _serve_until_stopped(uvicorn.Server(server_config), settings.shutdown_grace + SHUTDOWN_MARGIN)
    return 0


def _app(settings: Settings, config: dict[str, Any], *, reopen_allowed: bool) -> Any:
    """`reopen_allowed`: the server may go back to open mode with `jiyi keys reopen` only where it could have been
    started without keys (server/auth.py)."""
    from jiyi.memory import AsyncMemory
    from jiyi.server import create_app
    from jiyi.server.limits import RequestLimits
    from jiyi.webhooks.dispatcher import WebhookOptions
    from jiyi.wiring import redact

    export_traces_if_asked()
    memory = AsyncMemory.from_config(config)
    app = create_app(memory, admin_api_key=settings.admin_api_key, user_api_keys=settings.api_keys,
                     cors_origins=settings.cors_origin_list(), maintenance_interval=settings.maintenance_interval,
                     limits=RequestLimits(**settings.request_limits()),
                     webhooks=WebhookOptions(**settings.webhook_options()), mcp_tool_names=settings.mcp_tool_names,
                     reopen_allowed=reopen_allowed)
    print(f"jiyi {redact(memory.store.url)} · embedder {memory.embedder.model_id} · pid {os.getpid()} · "
          f"http://{_url_host(settings.host)}:{settings.port}/docs", file=sys.stderr)
    return app


def export_traces_if_asked() -> None:
    """Spans go by OTLP/HTTP where OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only form) says (jiyi/tracing.py);
    without the packages for it, one line on standard error and the server runs untraced."""
    if not (os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        return
    from jiyi import __version__, tracing

    warning = tracing.start_export(__version__)
    if warning:
        print(f"jiyi: {warning}", file=sys.stderr)


def app_from_environment() -> Any:
    """The server app as the JIYI_* variables describe it: what each worker process of `jiyi serve --workers N`
    runs (uvicorn's factory). The parent process checked the settings and the store's folder."""
    one_blas_thread()
    settings = Settings(**{})
    may_be_open = bool(_loopback(settings.host) or settings.admin_api_key or settings.api_keys or settings.insecure)
    return _app(settings, settings.to_config(), reopen_allowed=may_be_open)


def check_address(host: str, port: int, args: argparse.Namespace) -> None:
    """Bind the server's address once, before anything is loaded, so that a port in use (or an address that is not
    this machine's) is said in one line with what to do, not in uvicorn's bind error after the model has loaded."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"{_named('host', args)} {host}: not an address jiyi can listen on ({exc.strerror}); give "
                          "one of this machine's, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every "
                          "interface)") from None
    for family, kind, proto, _, address in found:
        try:
            _bind_once(family, kind, proto, address)
        except OSError as exc:
            raise ConfigError(_bind_problem(exc, host, port, args)) from None


def _bind_once(family: int, kind: int, proto: int, address: Any) -> None:
    with socket.socket(family, kind, proto) as probe:
        # As asyncio's server does: the TIME_WAIT of a server just stopped does not count as taken.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        probe.bind(address)


def _bind_problem(exc: OSError, host: str, port: int, args: argparse.Namespace) -> str:
    where = f"{_url_host(host)}:{port}"
    if exc.errno == errno.EADDRINUSE:
        # The operating system's words first: they are what people (and scripts) look for.
        taken = f"address already in use: port {port} on {host} ({_occupant(host, port)})"
        free = _free_port_after(host, port)
        other = (f"choose another port: jiyi serve --port {free} (free now), or JIYI_PORT={free}" if free
                 else "choose another port with --port or JIYI_PORT")
        return f"{taken}; stop it, or {other}"
    if exc.errno == errno.EACCES:
        return (f"{_named('port', args)} {port}: only root may listen on a port below 1024; choose 1024 or above "
                "(8888 is the default) and put a reverse proxy in front for 80 or 443")
    if exc.errno == errno.EADDRNOTAVAIL:
        return (f"{_named('host', args)} {host}: not an address of this machine; use 127.0.0.1 (this machine only), "
                "0.0.0.0 (every interface) or one of its own addresses")
    return f"cannot listen on {where}: {exc.strerror or exc}"


def _occupant(host: str, port: int) -> str:
    """Who holds the port: a jiyi server says so on /health (and where its data is); anything else is named by
    the operating system's tools."""
    import httpx

    target = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    url = f"http://{_url_host(target)}:{port}"
    try:
        health = httpx.get(f"{url}/health", timeout=1.0).json()
    except (httpx.HTTPError, ValueError):
        health = None
    if isinstance(health, dict) and health.get("status") == "ok" and "embedder" in health:
        return f"a jiyi server answers there: {url}/docs, store {health.get('store')}"
    return f"held by another program: `lsof -i :{port}` shows which"


def _free_port_after(host: str, port: int) -> int | None:
    for candidate in range(port + 1, min(port + 20, 65535) + 1):
        try:
            for family, kind, proto, _, address in socket.getaddrinfo(host, candidate, type=socket.SOCK_STREAM,
                                                                      flags=socket.AI_PASSIVE):
                _bind_once(family, kind, proto, address)
        except OSError:
            continue
        return candidate
    return None


def _named(setting: str, args: argparse.Namespace) -> str:
    if getattr(args, setting, None) is not None:
        return f"--{setting}"
    variable = f"JIYI_{setting.upper()}"
    return variable if any(name.upper() == variable for name in os.environ) else f"the default {setting}"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


# After the grace, the lifespan shutdown (worker, scheduler, store; bounded in server/app.py) gets this long before
# the process exits anyway.
SHUTDOWN_MARGIN = 2.0
# An idle keep-alive connection is closed by the client first: uvicorn's default (5 s) equals httpx's own expiry (the
# mem0 SDKs, most Python clients), and a request sent on a connection the server closed at that very moment failed
# with ReadError (seen once under 64 clients in tests/reliability/test_concurrency.py). Longer than the usual load
# balancer idle timeout (60 s) for the same reason: the proxy in front should be the one to close.
KEEP_ALIVE_SECONDS = 75


def _loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def _serve_until_stopped(server: Any, deadline: float) -> None:
    """Run a uvicorn server until SIGTERM or Ctrl+C, and be gone within `deadline` seconds of the signal.

    Requests and extractions may be stuck in a worker thread (an embedding, a store call): Python cannot interrupt
    them, and the interpreter joins such threads on exit. Nothing is lost by not waiting: a turn is stored before it
    is processed, and one left unfinished is processed again after the next start."""
    armed = threading.Event()

    def exit_after(seconds: float) -> None:
        if not armed.is_set():
            armed.set()
            timer = threading.Timer(seconds, _exit_now, args=(seconds,))
            timer.daemon = True
            timer.start()

    exit_on_signal = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        exit_on_signal(sig, frame)
        exit_after(deadline)

    server.handle_exit = handle_exit
    # uvicorn raises the signal it caught again once it is done; the default SIGTERM action would end the process
    # with status 143 before the event loop closes. How to exit is decided here instead.
    previous = signal.signal(signal.SIGTERM, lambda sig, frame: None)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    exit_after(SHUTDOWN_MARGIN)  # idle pool threads are joined at once on exit; a busy one is not waited for


def _exit_now(after: float) -> None:
    logging.getLogger("jiyi.server").warning("shutdown still waiting for worker threads after %g s; exiting without "
                                             "them (unfinished turns stay queued for the next start)", after)
    logging.shutdown()  # flushes every handler
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def one_blas_thread() -> None:
    # A scope's matrix-vector product gains nothing from a second BLAS thread, and idle BLAS threads spin on the cores
    # the embedder needs (bench/scale.py measured e5 search 27 → 40 ms p50 beside another process's searches).
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
