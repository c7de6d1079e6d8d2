"""DaemonThreadPool: a ThreadPoolExecutor for asyncio's sake that still takes work while the interpreter exits, and
finishes the work it was given before the process ends."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import threading
import time
from concurrent.futures import CancelledError, ThreadPoolExecutor
from pathlib import Path

import pytest

from jiyi.daemon_pool import DaemonThreadPool

ROOT = Path(__file__).resolve().parents[1]


def run_script(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_an_atexit_hook_can_still_give_it_work_where_a_thread_pool_executor_refuses() -> None:
    done = run_script(
        "import atexit\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from jiyi.daemon_pool import DaemonThreadPool\n"
        "ours, theirs = DaemonThreadPool(2), ThreadPoolExecutor(2)\n"
        "def at_exit():\n"
        "    print('ours', ours.submit(sum, [1, 2]).result(), flush=True)\n"
        "    try:\n"
        "        print('theirs', theirs.submit(sum, [1, 2]).result())\n"
        "    except RuntimeError as exc:\n"
        "        print('theirs refused:', exc)\n"
        "atexit.register(at_exit)\n")
    assert done.returncode == 0, done.stderr
    # The second line is why the class exists: if a Python stops refusing, jiyi's pools could be plain ones again.
    assert done.stdout.splitlines() == ["ours 3",
                                        "theirs refused: cannot schedule new futures after interpreter shutdown"]


def test_work_given_before_exit_is_finished_before_the_process_ends(tmp_path: Path) -> None:
    marker = tmp_path / "finished"
    done = run_script(
        "import time\n"
        "from jiyi.daemon_pool import DaemonThreadPool\n"
        "pool = DaemonThreadPool(1)\n"
        f"pool.submit(lambda: (time.sleep(0.5), open({str(marker)!r}, 'w').close()))\n")
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_results_and_exceptions_come_back_on_at_most_max_workers_daemon_threads() -> None:
    pool = DaemonThreadPool(3, thread_name_prefix="jiyi-test")
    release = threading.Event()
    running: set[str] = set()

    def job(i: int) -> int:
        running.add(threading.current_thread().name)
        assert release.wait(10)
        if i == 7:
            raise ValueError("seven")
        return i * i

    futures = [pool.submit(job, i) for i in range(10)]
    time.sleep(0.2)
    release.set()
    assert [f.result(10) for f in futures if f is not futures[7]] == [i * i for i in range(10) if i != 7]
    with pytest.raises(ValueError, match="seven"):
        futures[7].result()
    assert running == {"jiyi-test_0", "jiyi-test_1", "jiyi-test_2"}
    assert all(t.daemon for t in threading.enumerate() if t.name.startswith("jiyi-test_"))
    pool.shutdown()


def test_an_idle_worker_takes_the_next_job_instead_of_a_new_thread() -> None:
    pool = DaemonThreadPool(4, thread_name_prefix="jiyi-idle")
    names = {pool.submit(lambda: threading.current_thread().name).result(10) for _ in range(20)}
    assert names == {"jiyi-idle_0"}
    pool.shutdown()


def test_shutdown_finishes_queued_work_or_cancels_it_and_takes_no_more() -> None:
    release = threading.Event()
    for cancel in (False, True):
        pool = DaemonThreadPool(1)
        running = pool.submit(release.wait, 10)
        queued = pool.submit(sum, [1, 2])
        time.sleep(0.1)
        release.set()
        pool.shutdown(wait=True, cancel_futures=cancel)
        assert running.result() is True
        if cancel:
            with pytest.raises(CancelledError):
                queued.result()
        else:
            assert queued.result() == 3
        with pytest.raises(RuntimeError, match="after shutdown"):
            pool.submit(sum, [1])
        release.clear()


def test_asyncio_takes_it_as_the_default_executor() -> None:
    loop = asyncio.new_event_loop()
    pool = DaemonThreadPool(2, thread_name_prefix="jiyi-loop")
    loop.set_default_executor(pool)
    try:
        name = loop.run_until_complete(asyncio.to_thread(lambda: threading.current_thread().name))
        assert name == "jiyi-loop_0"
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
    with pytest.raises(RuntimeError):
        pool.submit(sum, [1])


def test_a_pool_nobody_holds_any_more_stops_its_workers() -> None:
    pool = DaemonThreadPool(2, thread_name_prefix="jiyi-dropped")
    pool.submit(sum, [1]).result(10)
    workers = [t for t in threading.enumerate() if t.name.startswith("jiyi-dropped_")]
    assert workers
    del pool
    gc.collect()
    for worker in workers:
        worker.join(5)
        assert not worker.is_alive()


def test_none_of_the_base_class_state_is_set_or_shadowed() -> None:
    base = ThreadPoolExecutor(1)
    assert set(vars(DaemonThreadPool(1))) & set(vars(base)) == set()
    base.shutdown()
