"""Where the server listens, said plainly: a port in use is one line saying who holds it and which port is free,
before anything is made or loaded."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from tests.cli.process import jiyi, serving
from tests.conftest import free_port


def test_a_port_held_by_a_jiyi_server_is_said_in_one_line(tmp_path: Path) -> None:
    with serving(tmp_path / "first") as server:
        result = jiyi(tmp_path / "second", "serve", "--port", str(server.port), timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"jiyi: address already in use: port {server.port} on 127.0.0.1 (a jiyi server answers "
                           f"there: {server.url}/docs, store sqlite:///{tmp_path / 'first' / 'memory.db'})")
    suggested = re.search(r"jiyi serve --port (\d+) \(free now\), or JIYI_PORT=(\d+)$", line)
    assert suggested is not None and suggested[1] == suggested[2], line
    with socket.socket() as probe:  # the port it suggests was free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", int(suggested[1])))


def test_a_port_held_by_another_program_is_said_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        result = jiyi(tmp_path / "home", "serve", "--port", str(port), timeout=60)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"jiyi: address already in use: port {port} on 127.0.0.1 (held by another program: "
                           f"`lsof -i :{port}` shows which); stop it, or choose another port: jiyi serve --port ")
    assert not (tmp_path / "home").exists()  # said before anything was made, the store or the model opened


def test_an_address_of_another_machine_is_said_in_one_line(tmp_path: Path) -> None:
    result = jiyi(tmp_path, "serve", "--host", "192.0.2.10", "--port", str(free_port()), "--insecure")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["jiyi: --host 192.0.2.10: not an address of this machine; use 127.0.0.1 "
                                          "(this machine only), 0.0.0.0 (every interface) or one of its own "
                                          "addresses"]
