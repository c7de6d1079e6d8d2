"""The examples of the README and docs/ run as written (offline), against a real server and in a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.server import create_app
from tests.conftest import RunningServer
from tests.markdown import code_block, code_blocks, page


def test_readme_gives_exactly_two_commands_for_a_fresh_machine() -> None:
    quick_start = code_blocks("README.md", "bash")[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in quick_start] == ["make serve", "make test"]
    assert "make test" in (Path(__file__).parent.parent / ".ci" / "run").read_text()


def test_python_example_runs(tmp_path: Path) -> None:
    example = code_block("README.md", "python", "from jiyi import Memory")
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=True)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("我昨晚又失眠了")  # 睡不好 finds the insomnia memory first, by meaning
    assert list(tmp_path.iterdir()) == []  # it leaves nothing behind in the folder it was run from


def test_readme_says_which_python_runs_the_example() -> None:
    readme = " ".join(page("README.md").split())
    assert "`.venv/bin/python example.py`" in readme and "source .venv/bin/activate" in readme


def test_curl_examples_run(tmp_path: Path) -> None:
    curl_block = code_block("README.md", "bash", "localhost:8888/memories")
    context_block = code_block("docs/read-path.md", "bash", "localhost:8888/context")
    # The default embedder, as `make serve` runs it.
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder())
    with RunningServer(create_app(memory)) as server:
        script = curl_block.replace("localhost:8888", f"127.0.0.1:{server.port}")
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=True)
        script = context_block.replace("localhost:8888", f"127.0.0.1:{server.port}")
        context = json.loads(subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                                            check=True).stdout)
    assert context["messages"][0]["content"] == "你是小林。\n\n" + context["memory_block"]
    assert "- 用户对海鲜过敏" in context["memory_block"].splitlines()
    assert '"event":"ADD"' in result.stdout.replace(" ", "")
    assert result.stdout.rstrip().endswith("}")
    searched = result.stdout[result.stdout.rindex('{"results"'):]
    # The extracted fact, in the user's language and about the user, comes first for 海鲜.
    assert "用户对海鲜过敏" in searched.split('"memory"')[1]
    assert "User moved to Shanghai" in result.stdout


def test_command_line_example_runs(tmp_path: Path) -> None:
    example = code_block("docs/command-line.md", "bash", ".venv/bin/jiyi add")
    venv_bin = Path(sys.executable).parent
    # The example as a new user runs it from the checkout; here the venv is the one running the tests, the data
    # directory a fresh one, and the embedder the default (as `make serve` runs it).
    script = (example.replace(".venv/bin/jiyi", str(venv_bin / "jiyi"))
              .replace("source .venv/bin/activate", f"source {venv_bin / 'activate'}"))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "JIYI_HOME": str(tmp_path / "home")}
    result = subprocess.run(["bash", "-ec", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300, check=True)
    decoder, text, outputs = json.JSONDecoder(), result.stdout.strip(), []
    while text:  # each command prints one JSON document
        document, end = decoder.raw_decode(text)
        outputs.append(document)
        text = text[end:].strip()
    added, searched = outputs[0], outputs[1]
    assert [item["memory"] for item in added["results"]] == ["用户对海鲜过敏"]
    assert searched["results"][0]["id"] == added["results"][0]["id"]
    exported = [json.loads(line) for line in (tmp_path / "alice.jsonl").read_text().splitlines()]
    assert any("海鲜" in str(row) for row in exported)


def test_telemetry_example_turns_the_mem0_sdk_telemetry_off(tmp_path: Path) -> None:
    example = code_block("docs/configuration.md", "bash", "MEM0_TELEMETRY")
    check = f"{example}\n{sys.executable} -c 'from mem0.memory import telemetry; print(telemetry.MEM0_TELEMETRY)'"
    result = subprocess.run(["bash", "-ec", check], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.stdout.strip().splitlines()[-1] == "False"


def test_mem0_sdk_example_runs(tmp_path: Path) -> None:
    example = code_block("docs/rest-and-sdks.md", "python", "MemoryClient")
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder())
    with RunningServer(create_app(memory)) as server:
        script = example.replace("localhost:8888", f"127.0.0.1:{server.port}")
        result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                                timeout=120, check=True, env={"MEM0_TELEMETRY": "false", "HOME": str(tmp_path)})
    assert result.stdout.strip() == "我下个月去成都出差"


def test_keys_example_runs(tmp_path: Path) -> None:
    example = code_block("docs/api-keys.md", "bash", "jiyi keys create")
    jiyi = str(Path(sys.executable).parent / "jiyi")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "JIYI_HOME": str(tmp_path / "home")}
    create, revoke = example.split(".venv/bin/jiyi keys revoke")
    result = subprocess.run(["bash", "-ec", create.replace(".venv/bin/jiyi", jiyi)], env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    decoder, text, outputs = json.JSONDecoder(), result.stdout.strip(), []
    while text:
        document, end = decoder.raw_decode(text)
        outputs.append(document)
        text = text[end:].strip()
    phone, helper, listed = outputs
    assert phone["key"].startswith("jiyi_") and (helper["agent_id"], helper["scope"]) == ("helper", "read")
    assert {k["id"] for k in listed} == {phone["id"], helper["id"]} and all("key" not in k for k in listed)
    revoked = subprocess.run(["bash", "-ec", (jiyi + " keys revoke" + revoke).replace("KEY_ID", phone["id"])],
                             env=env, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(revoked.stdout) == {"revoked": phone["id"]}


def test_reopen_example_returns_a_store_whose_last_key_was_revoked_to_open_mode(tmp_path: Path) -> None:
    example = code_block("docs/api-keys.md", "bash", "jiyi keys reopen")
    jiyi = str(Path(sys.executable).parent / "jiyi")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "JIYI_HOME": str(tmp_path / "home")}

    def run(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-ec", script.replace(".venv/bin/jiyi", jiyi)], env=env, capture_output=True,
                              text=True, timeout=120, check=True)

    key = json.loads(run(".venv/bin/jiyi keys create --user alice").stdout)
    revoked = run(f".venv/bin/jiyi keys revoke {key['id']}")
    assert "jiyi keys reopen" in revoked.stderr  # the revoke says the way back, as the page does
    assert json.loads(run(example).stdout) == {"reopened": True}
    store = build_store(f"sqlite:///{tmp_path / 'home' / 'memory.db'}")
    try:
        from jiyi.keys import keys_close_server
        assert not keys_close_server(store)  # servers on the store take requests without a key again
    finally:
        store.close()
