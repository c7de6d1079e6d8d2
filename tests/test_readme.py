"""The README's examples run as written (offline), against a real server and in a fresh process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.server import create_app
from tests.conftest import RunningServer

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_readme_gives_exactly_two_commands_for_a_fresh_machine() -> None:
    quick_start = blocks("bash")[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in quick_start] == ["make serve", "make test"]
    assert "make test" in (Path(__file__).parent.parent / ".ci" / "run").read_text()


def test_python_example_runs(tmp_path: Path) -> None:
    [example] = [block for block in blocks("python") if "from jiyi import Memory" in block]
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=True)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("我昨晚又失眠了")  # 睡不好 finds the insomnia memory first, by meaning


def test_curl_examples_run(tmp_path: Path) -> None:
    curl_block, context_block = blocks("bash")[1:3]
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
    [example] = [block for block in blocks("bash") if ".venv/bin/jiyi add" in block]
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
    [example] = [block for block in blocks("bash") if "MEM0_TELEMETRY" in block]
    check = f"{example}\n{sys.executable} -c 'from mem0.memory import telemetry; print(telemetry.MEM0_TELEMETRY)'"
    result = subprocess.run(["bash", "-ec", check], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.stdout.strip().splitlines()[-1] == "False"


def test_mem0_sdk_example_runs(tmp_path: Path) -> None:
    [example] = [block for block in blocks("python") if "MemoryClient" in block]
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder())
    with RunningServer(create_app(memory)) as server:
        script = example.replace("localhost:8888", f"127.0.0.1:{server.port}")
        result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                                timeout=120, check=True, env={"MEM0_TELEMETRY": "false", "HOME": str(tmp_path)})
    assert result.stdout.strip() == "我下个月去成都出差"


def test_keys_example_runs(tmp_path: Path) -> None:
    [example] = [block for block in blocks("bash") if "jiyi keys create" in block]
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
