"""Where the data goes, said plainly: a SQLite path whose folder does not exist stops the command with the absolute
path it resolved to, and creates nothing; jiyi's own data folder is made, with a line saying so."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.cli.process import jiyi, serving


@pytest.mark.parametrize("command", [["add", "-u", "alice", "I keep bees"], ["list", "-u", "alice"], ["serve"],
                                     ["keys", "create", "--user", "alice"]])
def test_a_relative_store_in_a_missing_folder_is_refused_and_nothing_is_made(tmp_path: Path,
                                                                             command: list[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = jiyi(tmp_path / "home", *command, "--store", "sqlite:///data/memory.db", cwd=work)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("jiyi: --store sqlite:///data/memory.db: ")
    assert f"the folder {work / 'data'} does not exist" in line  # the absolute path it resolved to
    assert f"a relative path, taken from the working directory {work}" in line and "nothing was created" in line
    assert f"mkdir -p {work / 'data'}" in line and "sqlite:////data/memory.db (four slashes)" in line
    assert list(work.iterdir()) == [] and not (tmp_path / "home").exists()


def test_an_absolute_store_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "srv" / "jiyi"
    result = jiyi(tmp_path / "home", "list", "-u", "alice", env={"JIYI_STORE": f"sqlite:///{missing}/memory.db"})
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"jiyi: JIYI_STORE sqlite:///{missing}/memory.db: the folder {missing} does not exist")
    assert f"mkdir -p {missing}" in line and not (tmp_path / "srv").exists()


def test_a_store_from_a_mem0_config_file_is_checked_too(tmp_path: Path) -> None:
    config = tmp_path / "mem0.json"
    config.write_text(json.dumps({"history_db_path": str(tmp_path / "nowhere" / "history.db")}), encoding="utf-8")
    result = jiyi(tmp_path / "home", "list", "-u", "alice", "--config", str(config))
    assert result.returncode == 2
    assert f"the store of {config}" in result.stderr and f"the folder {tmp_path / 'nowhere'} does not exist" in \
        result.stderr
    assert not (tmp_path / "nowhere").exists()


def test_the_data_folder_is_made_and_said(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / ".jiyi"
    result = jiyi(home, "add", "-u", "alice", "I keep bees")
    assert result.returncode == 0, result.stderr
    assert f"jiyi: made the data folder {home}" in result.stderr.splitlines()
    assert (home / "memory.db").is_file()
    again = jiyi(home, "list", "-u", "alice")
    assert again.returncode == 0 and "made the data folder" not in again.stderr


def test_a_relative_store_is_served_as_the_file_it_is(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with serving(tmp_path / "home", "--store", "sqlite:///data/memory.db", cwd=tmp_path) as server:
        health = httpx.get(f"{server.url}/health", timeout=10).json()
    assert health["store"] == f"sqlite:///{tmp_path / 'data' / 'memory.db'}"
    assert f"jiyi sqlite:///{tmp_path / 'data' / 'memory.db'} · " in server.output()  # the banner
    assert (tmp_path / "data" / "memory.db").is_file()
