"""The real processes of the SillyTavern suite, all on 127.0.0.1: jiyi (`python -m jiyi serve`), a server that accepts
connections and never answers (a hanging jiyi), and SillyTavern 1.19.0 with the extension and the plugin installed.

SillyTavern runs from a fresh copy of the pristine install (hard links: ~0.5 s) with its own config.yaml and a
per-session data root; the extension and the plugin are symlinked in from integrations/sillytavern, as the README
tells users. The copy lives at a stable path next to the install (<install>-run0, locked while in use) so that the
webpack build of its first start (≈30 s on 2 cores) is reused: later sessions start in ≈10 s.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx

from tests.sillytavern.fake_llm import ST_MODEL

REPO = Path(__file__).resolve().parents[2]
ST_VERSION = "1.19.0"
INSTALL_HINT = "run tests/sillytavern/install.sh (Debian chromium + SillyTavern 1.19.0 from the npm registry)"
CHROMIUM = Path("/usr/bin/chromium")
SERVER_SLOTS = 3


def st_home() -> Path:
    return Path(os.environ.get("JIYI_ST_HOME") or REPO / ".cache" / f"sillytavern-{ST_VERSION}")


def check_prerequisites() -> None:
    """Fail (never skip) with what to run when something the suite needs is missing."""
    home = st_home()
    problems = []
    if not (home / ".jiyi-installed").is_file() or not (home / "server.js").is_file():
        problems.append(f"SillyTavern {ST_VERSION} is not installed at {home}")
    if not CHROMIUM.is_file():
        problems.append(f"{CHROMIUM} is missing")
    if shutil.which("node") is None:
        problems.append("node is not on PATH")
    for folder in ("extension", "plugin"):
        if not (REPO / "integrations" / "sillytavern" / folder).is_dir():
            problems.append(f"integrations/sillytavern/{folder} is missing")
    if problems:
        raise RuntimeError("; ".join(problems) + f" — {INSTALL_HINT}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_process(process: subprocess.Popen[bytes] | None, timeout: float = 10) -> None:
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)  # the process group: node may have children
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


# ---- jiyi ----------------------------------------------------------------------------------------------------------


class JiyiServer:
    """`python -m jiyi serve` with its own JIYI_HOME; stop() and start() again keep the data (same port, same home)."""

    def __init__(self, home: Path, port: int, env: dict[str, str]) -> None:
        self.home = home
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env = env
        self.log = home / "jiyi.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.started_in = 0.0

    def start(self, timeout: float = 90) -> JiyiServer:
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.env, "JIYI_HOME": str(self.home)}
        started = time.monotonic()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jiyi", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"jiyi exited with {self.process.returncode}:\n{_tail(self.log)}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"jiyi did not answer /health within {timeout} s:\n{_tail(self.log)}")
            time.sleep(0.1)
        self.started_in = time.monotonic() - started
        return self

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # ---- jiyi's REST API, as the tests read it -------------------------------------------------------------------

    def memories(self, user_id: str, agent_id: str | None = None, run_id: str | None = None, *,
                 messages: bool = False) -> list[dict[str, Any]]:
        """The memories of a scope; with `messages`, the chat messages kept as evidence too."""
        params = {"user_id": user_id, "limit": "1000"}
        if messages:
            params["include_messages"] = "true"
        if agent_id:
            params["agent_id"] = agent_id
        if run_id:
            params["run_id"] = run_id
        response = httpx.get(f"{self.url}/memories", params=params, timeout=10)
        response.raise_for_status()
        return list(response.json()["results"])

    def add(self, text: str, *, user_id: str, agent_id: str, metadata: dict[str, Any] | None = None) -> str:
        """Store one memory as it is (infer=False): a memory from an earlier conversation, without driving one."""
        response = httpx.post(f"{self.url}/memories", timeout=30, json={
            "messages": [{"role": "user", "content": text}], "user_id": user_id, "agent_id": agent_id,
            "infer": False, "metadata": metadata or {"source": "test-seed"}})
        response.raise_for_status()
        return str(response.json()["results"][0]["id"])

    def wait_for_memory(self, user_id: str, agent_id: str, contains: str, timeout: float = 20) -> dict[str, Any]:
        """Poll until a memory of (user, agent) contains `contains`; fail with what jiyi holds."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.memories(user_id, agent_id)
            for item in found:
                if contains in item["memory"]:
                    return item
            if time.monotonic() > deadline:
                raise AssertionError(f"no memory containing {contains!r} for user {user_id!r}, agent {agent_id!r} "
                                     f"within {timeout} s; jiyi holds {[m['memory'] for m in found]}")
            time.sleep(0.2)


    def wait_gone(self, user_id: str, agent_id: str, contains: str, timeout: float = 20, *,
                  messages: bool = False) -> list[str]:
        """Poll until no memory of (user, agent) contains `contains` (with `messages`, no kept message either); the
        texts held then (the caller asserts)."""
        deadline = time.monotonic() + timeout
        while True:
            texts = [m["memory"] for m in self.memories(user_id, agent_id, messages=messages)]
            if not any(contains in text for text in texts) or time.monotonic() > deadline:
                return texts
            time.sleep(0.2)


class HangingServer:
    """Accepts TCP connections on a port and never answers: a jiyi that hangs."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._held: list[socket.socket] = []
        self._stopped = threading.Event()
        self.accepted = 0

    def __enter__(self) -> HangingServer:
        self._socket.bind(("127.0.0.1", self.port))
        self._socket.listen(64)
        self._socket.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True, name=f"hanging-{self.port}").start()
        return self

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._held.append(connection)  # read nothing, answer nothing
            self.accepted += 1

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        for connection in self._held:
            connection.close()
        self._socket.close()


# ---- SillyTavern ---------------------------------------------------------------------------------------------------


CONFIG_YAML = """\
# Written by tests/sillytavern; SillyTavern adds every other key from default/config.yaml at start.
listen: false
port: {port}
whitelistMode: true
whitelistDockerHosts: false
browserLaunch:
  enabled: false
enableUserAccounts: true
enableDiscreetLogin: false
enableServerPlugins: true
enableServerPluginsAutoUpdate: false
extensions:
  enabled: true
  autoUpdate: false
  models:
    autoDownload: false
"""


class SillyTavern:
    """One SillyTavern server for the session, with user accounts, the jiyi extension and the jiyi plugin."""

    def __init__(self, root: Path, port: int, jiyi_url: str) -> None:
        self.root = root
        self.server_dir = root / "st"
        self.data_root = root / "data"
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.jiyi_url = jiyi_url
        self.log = root / "sillytavern.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.timings: dict[str, float] = {}
        self._lock: IO[str] | None = None

    def _claim_server_dir(self) -> Path:
        """A server folder at a stable path next to the install, locked for this session: webpack's cache of the
        first start (≈30 s on 2 cores) stays valid only where it was built (it records absolute paths), so each slot
        keeps its dist/ across sessions. Two sessions at once get two slots; with every slot busy, a throwaway copy."""
        home = st_home()
        for slot in range(SERVER_SLOTS):
            lock = home.with_name(f"{home.name}-run{slot}.lock").open("w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.close()
                continue
            self._lock = lock
            return home.with_name(f"{home.name}-run{slot}")
        return self.root / "st"

    def prepare(self) -> None:
        started = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        self.server_dir = self._claim_server_dir()
        self.server_dir.mkdir(exist_ok=True)
        for child in self.server_dir.iterdir():  # the last session's tree, all but webpack's output and cache
            if child.name == "dist":
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)  # unlinks the symlinks inside, never follows them
            else:
                child.unlink()
        # Hard links: nothing SillyTavern writes at run time goes into existing files of its tree (checked on
        # 1.19.0: config.yaml, dist/, backups/ and the data root are new files), so the pristine install stays
        # untouched.
        linked = subprocess.run(["cp", "-al", f"{st_home()}/.", str(self.server_dir)], capture_output=True)
        if linked.returncode != 0:  # another filesystem (a tmpfs /tmp): copy all but node_modules, link that
            shutil.copytree(st_home(), self.server_dir, symlinks=True, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("node_modules"))
            (self.server_dir / "node_modules").symlink_to(st_home() / "node_modules")
        (self.server_dir / "config.yaml").write_text(CONFIG_YAML.format(port=self.port))
        source = REPO / "integrations" / "sillytavern"
        third_party = self.server_dir / "public/scripts/extensions/third-party"
        third_party.mkdir(exist_ok=True)  # not in the npm release
        (third_party / "jiyi-memory").symlink_to(source / "extension")
        (self.server_dir / "plugins/jiyi").symlink_to(source / "plugin")
        self.timings["prepare_s"] = time.monotonic() - started

    def start(self, timeout: float = 180) -> SillyTavern:
        env = {**os.environ, "JIYI_URL": self.jiyi_url, "NODE_ENV": "production"}
        env.pop("JIYI_API_KEY", None)
        started = time.monotonic()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                ["node", "server.js", "--port", str(self.port), "--listen", "false", "--browserLaunchEnabled", "false",
                 "--dataRoot", str(self.data_root)],
                cwd=self.server_dir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"SillyTavern exited with {self.process.returncode}:\n{_tail(self.log)}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/csrf-token", timeout=2).status_code == 200:
                    break
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"SillyTavern did not start within {timeout} s:\n{_tail(self.log)}")
            time.sleep(0.1)
        self.timings["start_s"] = time.monotonic() - started
        return self

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None
        if self._lock is not None:
            self._lock.close()  # frees the slot
            self._lock = None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    # ---- SillyTavern's own API, as its web page uses it ------------------------------------------------------------

    @contextlib.contextmanager
    def session(self, handle: str | None = None) -> Iterator[httpx.Client]:
        """An HTTP session logged in as `handle` (None: the single-user auto-login, before other users exist)."""
        with httpx.Client(base_url=self.url, timeout=30, follow_redirects=True) as client:
            if handle is None:
                client.get("/login").raise_for_status()
            token = client.get("/csrf-token").json()["token"]
            client.headers["x-csrf-token"] = token
            if handle is not None:
                client.post("/api/users/login", json={"handle": handle}).raise_for_status()
                # the session changed: a fresh token for it
                client.headers["x-csrf-token"] = client.get("/csrf-token").json()["token"]
            yield client

    def user_dir(self, handle: str) -> Path:
        return self.data_root / handle

    def create_user(self, admin: httpx.Client, handle: str, name: str) -> None:
        response = admin.post("/api/users/create", json={"handle": handle, "name": name})
        if response.status_code != 200 or response.json().get("handle") != handle:
            raise RuntimeError(f"could not create SillyTavern user {handle}: {response.status_code} {response.text}")

    def configure_user(self, handle: str, *, persona: str, llm_url: str, extension: dict[str, Any]) -> None:
        """The user's settings.json, as ST's first-run would leave it after pointing chat completion at the fake
        LLM: read at page load."""
        path = self.user_dir(handle) / "settings.json"
        settings = json.loads(path.read_text())
        settings["firstRun"] = False
        settings["username"] = persona
        settings["main_api"] = "openai"
        power = settings.setdefault("power_user", {})
        power["auto_connect"] = True
        power["persona_show_notifications"] = False
        oai = settings.setdefault("oai_settings", {})
        oai.update({"chat_completion_source": "custom", "custom_url": llm_url, "custom_model": ST_MODEL,
                    "stream_openai": False, "bypass_status_check": False, "openai_max_tokens": 200})
        ext = settings.setdefault("extension_settings", {})
        ext["jiyi_memory"] = extension
        path.write_text(json.dumps(settings, ensure_ascii=False, indent=4))

    def create_character(self, client: httpx.Client, file_name: str, name: str, description: str,
                         first_mes: str = "") -> str:
        response = client.post("/api/characters/create", data={
            "ch_name": name, "file_name": file_name, "description": description, "first_mes": first_mes,
            "personality": "", "scenario": "", "mes_example": "", "talkativeness": "0.5", "fav": "false",
            "tags": "", "creator_notes": "", "extensions": "{}"})
        if response.status_code != 200:
            raise RuntimeError(f"could not create character {name}: {response.status_code} {response.text}")
        return response.text.strip()  # the avatar file name, jiyi's agent_id

    def create_group(self, client: httpx.Client, name: str, members: list[str]) -> dict[str, Any]:
        response = client.post("/api/groups/create", json={"name": name, "members": members,
                                                           "activation_strategy": 1, "generation_mode": 0})
        response.raise_for_status()
        return dict(response.json())

