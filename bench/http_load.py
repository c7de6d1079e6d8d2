"""Loading a mem0-compatible REST server (jiyi, or mem0's own) from outside, the same way for every server: start it
as a process and read its CPU time and memory, seed it with the same memories, drive it with closed-loop clients.

    import asyncio, sys
    from http_load import ServerProcess, free_port, run_load, seed   # bench/ on sys.path

    port = free_port()
    with ServerProcess([sys.executable, "-m", "jiyi", "serve", "--home", "/tmp/h", "--port", str(port)], port) as s:
        asyncio.run(seed(s.url, 2000))
        print(asyncio.run(run_load(s.url, clients=8, seconds=30, server=s)))

This is the driver of the first side-by-side with mem0 (its load_rest.py), moved here: `memory_text(i)` are its
seeded texts and `run_load` its closed loop (same query words, top_k 5; search_share=0.8 mixes in 20 % adds), so the
numbers of bench/mem0_side_by_side.py, bench/throughput.py and the earlier runs compare.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

WORDS = ("上海 北京 猫 狗 咖啡 茶 跑步 游泳 医生 老师 妈妈 姐姐 生日 旅行 电影 音乐 失眠 加班 考试 火锅 "
         "tea coffee hiking sister mother movie guitar").split()
TOP_K = 5
_TICK = os.sysconf("SC_CLK_TCK")
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memory_text(i: int) -> str:
    """The i-th seeded memory: the same text for every server and every run."""
    r = random.Random(i)
    return f"第{i}条：我{r.choice(WORDS)}和{r.choice(WORDS)}的事情 {i} about {r.choice(WORDS)} and {r.choice(WORDS)}"


def add_body(content: str, user_id: str) -> dict[str, Any]:
    """mem0's POST /memories body for one user message, stored as it is (no LLM)."""
    return {"messages": [{"role": "user", "content": content}], "user_id": user_id, "infer": False}


def quantile(values: Sequence[float], q: float) -> float | None:
    """The value at rank int(q * n) of the sorted values (load_rest.py's definition), rounded to 0.1."""
    if not values:
        return None
    return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 1)


# --- the server process --------------------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        # The command name in parentheses may hold spaces: the fields that follow are counted from the last ")".
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _descendants(pid: int) -> list[int]:
    """pid and every live process below it (from the parent pids in /proc/*/stat)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, stack = [], [pid]
    while stack:
        tree.append(current := stack.pop())
        stack.extend(children.get(current, ()))
    return tree


def _tree_cpu_s(pid: int) -> float | None:
    total, found = 0.0, False
    for member in _descendants(pid):
        fields = _stat_fields(member)
        if fields is not None:
            found = True
            # utime, stime, and cutime, cstime: children that ended and were waited for count with their parent.
            total += sum(int(v) for v in fields[11:15]) / _TICK
    return total if found else None


def _tree_rss_mb(pid: int) -> float:
    total = 0.0
    for member in _descendants(pid):
        with contextlib.suppress(OSError, IndexError):  # it ended meanwhile
            total += int(Path(f"/proc/{member}/statm").read_text().split()[1]) * _PAGE_MB
    return total


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes that listen on TCP `port` (IPv4 or IPv6), from /proc/net."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                    inodes.add(fields[9])
    return inodes


def _tree_listens(pid: int, port: int) -> bool:
    """Whether pid or a descendant holds a socket listening on `port`: the server answering is ours."""
    wanted = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    for member in _descendants(pid):
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{member}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in wanted:
                        return True
    return False


class ServerProcess:
    """A server started as `command`, ready once `GET /health` answers 200; stopped on leaving the `with` block.

    `port` is the one the command makes it listen on (see free_port); the server that answers there must be this
    process or one of its descendants. Its output goes to `log_path`, in a temp dir
    that is removed on a clean exit and kept (and named in the error) when starting or the block failed.
    CPU time and RSS count the process and all its live descendants (uvicorn's worker processes, say).
    """

    def __init__(self, command: Sequence[str | Path], port: int, *, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None, name: str = "server", startup_timeout: float = 180.0,
                 stop_timeout: float = 5.0) -> None:
        self.command = [str(part) for part in command]
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.name = name
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.log_dir = Path(tempfile.mkdtemp(prefix=f"{name}-log-"))
        self.log_path = self.log_dir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._last_cpu = 0.0

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.name} is not started")
        return self.process.pid

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
        if exc_type is None:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            # A session of its own: Ctrl+C in the terminal reaches the benchmark, which stops the server itself.
            self.process = subprocess.Popen(self.command, env=self.env, cwd=self.cwd, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode} before answering "
                                   f"{self.url}/health\n{self.log_tail()}")
            try:
                healthy = httpx.get(f"{self.url}/health", timeout=5, trust_env=False).status_code == 200
            except httpx.HTTPError:
                healthy = False
            # free_port() races with every process on the machine that picks a port: the answer must be ours.
            if healthy and _tree_listens(self.pid, self.port):
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not answer {self.url}/health within {self.startup_timeout:g} s"
                                   f"\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL to the whole session after `stop_timeout` seconds."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(self.stop_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: only what this command started
            self.process.wait()

    def log_tail(self, lines: int = 30) -> str:
        try:
            tail = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            tail = []
        return f"--- last {len(tail)} lines of {self.log_path} ---\n" + "\n".join(tail)

    def cpu_seconds(self) -> float:
        """User + system CPU time so far of the process and its descendants (the last reading once it has ended)."""
        cpu = _tree_cpu_s(self.pid)
        if cpu is not None:
            self._last_cpu = cpu
        return self._last_cpu

    def rss_mb(self) -> float:
        """Resident memory now of the process and its descendants, in MB (shared pages count in each)."""
        return round(_tree_rss_mb(self.pid), 1)


# --- seeding and the closed loop -----------------------------------------------------------------------------------


def _client(url: str, connections: int) -> httpx.AsyncClient:
    # trust_env=False: a proxy set in the environment must not stand between the driver and a local server.
    return httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=max(connections, 1)),
                             trust_env=False)


async def seed(url: str, n: int, *, user_id: str = "load", concurrency: int = 4) -> dict[str, Any]:
    """Add memory_text(0..n-1) for `user_id` (infer=false), `concurrency` requests at a time; fails on any error."""
    started = time.perf_counter()
    async with _client(url, concurrency) as http:
        gate = asyncio.Semaphore(concurrency)

        async def add(i: int) -> None:
            async with gate:
                (await http.post("/memories", json=add_body(memory_text(i), user_id))).raise_for_status()

        await asyncio.gather(*(add(i) for i in range(n)))
    seconds = time.perf_counter() - started
    return {"seeded": n, "seconds": round(seconds, 1), "adds_per_s": round(n / seconds, 1) if seconds else None}


async def run_load(url: str, *, clients: int, seconds: float, search_share: float = 1.0, user_id: str = "load",
                   server: ServerProcess | None = None) -> dict[str, Any]:
    """`clients` closed-loop clients for `seconds`: each sends its next request as soon as the last one answered.

    Each request is a search (POST /search, two random words, top_k 5) with probability `search_share`, else an add
    (a fresh text, infer=false). Latency (ms) is wall time in the client, of answers below 400 only; req_per_s counts
    those answers over the round's wall time. With `server`, also its CPU seconds in the round and per request.
    """
    latency: dict[str, list[float]] = {"search": [], "add": []}
    errors = {"search": 0, "add": 0}
    error_examples: list[str] = []
    timeouts = 0

    def failed(op: str, what: str) -> None:
        errors[op] += 1
        if len(error_examples) < 3:
            error_examples.append(f"{op}: {what}")

    async with _client(url, clients) as http:
        deadline = time.monotonic() + seconds

        async def client(k: int) -> None:
            nonlocal timeouts
            r = random.Random(k)
            while time.monotonic() < deadline:
                op = "search" if r.random() < search_share else "add"
                started = time.perf_counter()
                try:
                    if op == "search":
                        response = await http.post("/search", json={
                            "query": f"{r.choice(WORDS)} {r.choice(WORDS)}", "user_id": user_id, "top_k": TOP_K})
                    else:
                        response = await http.post("/memories", json=add_body(
                            f"我今天{r.choice(WORDS)}了 {k} {time.time()}", user_id))
                except httpx.TimeoutException:
                    timeouts += 1
                    continue
                except httpx.HTTPError as exc:
                    failed(op, f"{type(exc).__name__}: {exc}")
                    continue
                if response.status_code >= 400:
                    failed(op, f"{response.status_code} {response.text[:200]}")
                else:
                    latency[op].append((time.perf_counter() - started) * 1000)

        load_before = os.getloadavg()
        cpu_before = server.cpu_seconds() if server is not None else 0.0
        started = time.perf_counter()
        await asyncio.gather(*(client(k) for k in range(clients)))
        elapsed = time.perf_counter() - started
        cpu = server.cpu_seconds() - cpu_before if server is not None else None
    answered = sum(len(v) for v in latency.values())
    result: dict[str, Any] = {"clients": clients, "seconds": round(elapsed, 1),
                              "req_per_s": round(answered / elapsed, 1)}
    for op, values in latency.items():
        result.update({f"{op}_n": len(values), f"{op}_p50": quantile(values, 0.5), f"{op}_p99": quantile(values, 0.99)})
    result.update(errors=errors, timeouts=timeouts, load=[round(load_before[0], 2), round(os.getloadavg()[0], 2)])
    if error_examples:
        result["error_examples"] = error_examples
    if cpu is not None:
        result.update(server_cpu_s=round(cpu, 2), server_cores=round(cpu / elapsed, 2),
                      cpu_ms_per_request=round(cpu * 1000 / answered, 2) if answered else None)
    return result


def machine() -> dict[str, Any]:
    """What a report needs to say about the machine: cores, CPU model, load averages now."""
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    except OSError:
        cpu = ""
    return {"nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(), "cpu_model": cpu,
            "loadavg": [round(v, 2) for v in os.getloadavg()]}
