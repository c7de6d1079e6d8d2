"""The deployment files (Dockerfile, docker-compose.yml, deploy/): their structure, that no secret is written into
them, promtool's checks and unit tests of the alert rules, and that every metric the rules use is one a real jiyi
server exports. Docker itself is not needed: the image and the stack are not built or started here."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import RunningServer

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
JIYI_SERVICES = ("jiyi-1", "jiyi-2")
SECRET_NAME = re.compile(r"KEY|PASSWORD|SECRET|TOKEN", re.I)


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(ROOT / "docker-compose.yml")
    return data


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    logical, current = [], ""
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1].strip()) for text in logical]


# --- docker-compose.yml ------------------------------------------------------------------------------------------


def test_compose_runs_two_jiyi_workers_on_postgres_with_pgvector(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {*JIYI_SERVICES, "postgres", "prometheus"}
    assert services["postgres"]["image"].startswith("pgvector/pgvector:") and "pg17" in services["postgres"]["image"]
    for name in JIYI_SERVICES:
        jiyi = services[name]
        assert jiyi["build"] == "." and jiyi["image"] == "jiyi:local"
        assert urlsplit(jiyi["environment"]["JIYI_STORE"]).scheme == "postgresql"
        assert urlsplit(jiyi["environment"]["JIYI_STORE"]).hostname == "postgres"
        assert [port.rsplit(":", 1)[1] for port in jiyi["ports"]] == ["8888"]  # the image's JIYI_PORT
    published = [port.rsplit(":", 1)[0] for name in JIYI_SERVICES for port in services[name]["ports"]]
    assert len(set(published)) == len(published), "the two workers need host ports of their own"


def test_compose_starts_jiyi_only_once_postgres_is_healthy(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in JIYI_SERVICES:
        assert services[name]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    # Prometheus waits for nothing to be healthy: it has to run while a worker is down, to show it.
    assert all(dependency["condition"] == "service_started"
               for dependency in services["prometheus"]["depends_on"].values())


def test_every_service_has_a_health_check(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in JIYI_SERVICES:
        check = services[name]["healthcheck"]
        assert check["test"][0] == "CMD" and "http://127.0.0.1:8888/health" in " ".join(check["test"])
        assert "start_period" in check  # the first start loads the embedding model
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]
    # Over TCP, so the image's socket-only server during initialization does not count as healthy.
    assert "--host=127.0.0.1" in services["postgres"]["healthcheck"]["test"]
    assert "/-/ready" in " ".join(services["prometheus"]["healthcheck"]["test"])


def test_data_lives_in_named_volumes(compose: dict[str, Any]) -> None:
    assert "pgdata" in compose["volumes"]
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]
    mounted = [volume.split(":")[0] for volume in compose["services"]["postgres"]["volumes"]]
    assert all(source in compose["volumes"] or (ROOT / source).is_file() for source in mounted)


def test_no_secret_is_written_into_the_compose_file(compose: dict[str, Any]) -> None:
    declared = compose["secrets"]
    for name, service in compose["services"].items():
        environment = service.get("environment", {})
        assert isinstance(environment, dict), f"{name}: environment as a mapping, so it can be checked"
        mounted = set(service.get("secrets", []))
        for variable, value in environment.items():
            if variable.endswith("_FILE"):
                assert value.startswith("/run/secrets/"), (name, variable)
                assert value.removeprefix("/run/secrets/") in mounted, (name, variable)
            else:
                assert not SECRET_NAME.search(variable), f"{name}: {variable} must come from a secret file"
            if variable == "JIYI_STORE":
                assert urlsplit(value).password is None, "the store URL must not carry the database password"
    for name, secret in declared.items():
        source = Path(secret["file"])
        assert source.parent == Path("deploy/secrets"), name
    gitignore = (DEPLOY / "secrets" / ".gitignore").read_text().split()
    assert "*" in gitignore and "!.gitignore" in gitignore  # the generated secrets never reach git


def test_prometheus_is_optional_and_scrapes_both_workers(compose: dict[str, Any]) -> None:
    prometheus = compose["services"]["prometheus"]
    assert prometheus["profiles"] == ["monitoring"]
    mounts = dict(volume.split(":")[:2] for volume in prometheus["volumes"])
    assert mounts["./deploy/prometheus.yml"] == "/etc/prometheus/prometheus.yml"
    assert mounts["./deploy/alerts.yml"] == "/etc/prometheus/alerts.yml"
    config = load_yaml(DEPLOY / "prometheus.yml")
    assert config["rule_files"] == ["alerts.yml"]  # beside prometheus.yml in the container, as in deploy/
    [job] = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    [targets] = job["static_configs"]
    assert sorted(targets["targets"]) == [f"{name}:8888" for name in JIYI_SERVICES]


# --- the image -----------------------------------------------------------------------------------------------------


def test_dockerfile_builds_a_non_root_image_with_a_health_check() -> None:
    instructions = dockerfile_instructions()
    assert all(args.split()[0].startswith("python:3.11-slim") for op, args in instructions if op == "FROM")
    final_stage = instructions[max(i for i, (op, _) in enumerate(instructions) if op == "FROM"):]
    users = [args for op, args in final_stage if op == "USER"]
    assert users and users[-1] not in ("root", "0") and not users[-1].startswith(("root:", "0:"))
    assert any(op == "RUN" and "useradd --uid 10001" in args and args.endswith(f" {users[-1]}")
               for op, args in final_stage)
    [healthcheck] = [args for op, args in instructions if op == "HEALTHCHECK"]
    assert "/health" in healthcheck and "JIYI_PORT" in healthcheck
    [cmd] = [json.loads(args) for op, args in instructions if op == "CMD"]
    assert cmd == ["jiyi", "serve", "--host", "0.0.0.0"]
    [entrypoint] = [json.loads(args) for op, args in instructions if op == "ENTRYPOINT"]
    assert entrypoint == ["jiyi-entrypoint"]
    # COPY keeps the file's mode: the entrypoint runs only if git kept its executable bit.
    assert ("COPY", "deploy/docker-entrypoint.sh /usr/local/bin/jiyi-entrypoint") in final_stage
    assert (DEPLOY / "docker-entrypoint.sh").stat().st_mode & stat.S_IXOTH


def test_the_image_installs_the_postgres_and_otel_extras_and_checks_the_exporter() -> None:
    instructions = dockerfile_instructions()
    [install] = [args for op, args in instructions if op == "RUN" and "pip install" in args]
    match = re.search(r"pip install '\.\[([a-z,]+)\]'", install)
    assert match, install
    extras = set(match.group(1).split(","))
    assert extras == {"postgres", "otel"}
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras <= set(declared)
    # What tracing.start_export imports to send spans by OTLP/HTTP is in the extra the image installs ...
    assert {"opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"} <= {
        re.split(r"[<>=\[ ;]", requirement)[0] for requirement in declared["otel"]}
    # ... and the build fails if it cannot be imported in the final image (start_export says so instead of None).
    final_stage = instructions[max(i for i, (op, _) in enumerate(instructions) if op == "FROM"):]
    check = "python -c \"from jiyi import tracing; assert tracing.start_export('build') is None\""
    assert ("RUN", check) in final_stage


def test_no_secret_is_baked_into_the_image() -> None:
    for op, args in dockerfile_instructions():
        if op in ("ENV", "ARG"):
            names = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=", args) or [args.split()[0]]
            assert not any(SECRET_NAME.search(name) for name in names), f"{op} {args}"
    # The build context is an allowlist: deploy/secrets/ (and .git, .venv) never reach the builder.
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    assert not any(path.startswith("deploy/secrets") or path in ("deploy", ".") for path in allowed)
    copied = [source for op, args in dockerfile_instructions() if op == "COPY" and "--from=" not in args
              for source in shlex.split(args)[:-1]]
    for source in copied:
        assert source.rstrip("/") in allowed, f"COPY {source}: not in the build context (.dockerignore)"


def entrypoint(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(DEPLOY / "docker-entrypoint.sh"), *command], env={"PATH": "/usr/bin:/bin", **env},
                          capture_output=True, text=True, timeout=30)


def test_the_entrypoint_turns_secret_files_into_settings(tmp_path: Path) -> None:
    (tmp_path / "admin").write_text("admin-secret\n")
    keys = '{"k 1": "alice", "k\'2": "bob"}'
    (tmp_path / "keys").write_text(keys)
    (tmp_path / "pg").write_text("pa$$ word\n")
    run = entrypoint({"JIYI_ADMIN_API_KEY_FILE": str(tmp_path / "admin"), "JIYI_API_KEYS_FILE": str(tmp_path / "keys"),
                      "PGPASSWORD_FILE": str(tmp_path / "pg"), "JIYI_CONFIG_FILE": "/etc/jiyi.toml"},
                     "python3", "-c", "import json, os; print(json.dumps(dict(os.environ)))")
    assert run.returncode == 0, run.stderr
    env = json.loads(run.stdout)
    assert env["JIYI_ADMIN_API_KEY"] == "admin-secret"  # without the file's newline
    assert env["JIYI_API_KEYS"] == keys and env["PGPASSWORD"] == "pa$$ word"
    assert env["JIYI_CONFIG_FILE"] == "/etc/jiyi.toml" and "JIYI_CONFIG" not in env  # a setting, not a secret file
    assert "JIYI_STORE" not in env


def test_the_entrypoint_refuses_two_sources_or_an_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "admin").write_text("from-file")
    both = entrypoint({"JIYI_ADMIN_API_KEY": "from-env", "JIYI_ADMIN_API_KEY_FILE": str(tmp_path / "admin")}, "true")
    assert both.returncode == 2 and "both JIYI_ADMIN_API_KEY and JIYI_ADMIN_API_KEY_FILE" in both.stderr
    missing = entrypoint({"JIYI_API_KEYS_FILE": str(tmp_path / "nowhere")}, "true")
    assert missing.returncode == 2 and "JIYI_API_KEYS_FILE" in missing.stderr and "not readable" in missing.stderr


def test_init_secrets_writes_each_secret_once(tmp_path: Path) -> None:
    script = tmp_path / "deploy" / "init-secrets.sh"
    script.parent.mkdir()
    shutil.copy(DEPLOY / "init-secrets.sh", script)
    subprocess.run(["sh", str(script), "alice"], check=True, capture_output=True, timeout=30)
    secrets = tmp_path / "deploy" / "secrets"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o700
    written = {path.name: path.read_text() for path in secrets.iterdir()}
    assert set(written) == {"postgres_password", "jiyi_admin_api_key", "jiyi_api_keys"}
    for path in secrets.iterdir():  # readable by the containers' user, which is not the host's
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    [(key, user)] = json.loads(written["jiyi_api_keys"]).items()
    assert user == "alice" and len(key) == 48
    assert len(written["postgres_password"].strip()) == 48
    assert written["postgres_password"] != written["jiyi_admin_api_key"]
    subprocess.run(["sh", str(script), "bob"], check=True, capture_output=True, timeout=30)
    assert {path.name: path.read_text() for path in secrets.iterdir()} == written


# --- Prometheus: promtool and the metrics jiyi really exports -----------------------------------------------------


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.fail("promtool is not on PATH: it comes with Debian's prometheus package. Install it with "
                    "`apt-get install prometheus` (`make promtool` does, and `make test` runs that)")
    return subprocess.run([binary, *args], cwd=DEPLOY, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [("check", "config", "prometheus.yml"), ("check", "rules", "alerts.yml"),
                                  ("test", "rules", "alerts_test.yml")], ids=" ".join)
def test_promtool(args: tuple[str, ...]) -> None:
    result = promtool(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
                "offset"}
PROMETHEUS_TARGET_LABELS = {"job", "instance"}  # added by Prometheus at scrape time, not in /metrics


def metrics_used(expr: str) -> tuple[dict[str, dict[str, str]], set[str]]:
    """The metric names an expression selects, with their label matchers, and the label names it groups by."""
    grouping: set[str] = set()
    for match in re.finditer(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", expr):
        grouping |= {label.strip() for label in match.group(1).split(",") if label.strip()}
    expr = re.sub(r"\b(?:by|without|on|ignoring)\s*\([^)]*\)", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    selected: dict[str, dict[str, str]] = {}
    for match in re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*(\()?", expr):
        name, matchers, call = match.groups()
        if call or name in PROMQL_WORDS:
            continue
        selected[name] = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', matchers or ""))
    return selected, grouping


def test_metrics_used_reads_names_matchers_and_grouping() -> None:
    selected, grouping = metrics_used('max by (job) (deriv(a_b{layer="x"}[1h])) > 1 and on (job, instance) c > 0')
    assert selected == {"a_b": {"layer": "x"}, "c": {}} and grouping == {"job", "instance"}


def test_every_metric_in_the_alert_rules_is_exported_by_a_real_server(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        # Some series appear only once something happened: a memory stored, a search, a maintenance pass.
        added = client.post("/memories", json={"messages": [{"role": "user", "content": "I like rain"}],
                                               "user_id": "alice", "infer": False})
        assert added.status_code == 200, added.text
        assert client.post("/search", json={"query": "rain", "user_id": "alice"}).status_code == 200
        assert client.post("/maintain").status_code == 200
        exported = client.get("/metrics").text
    samples = [sample for family in text_string_to_metric_families(exported) for sample in family.samples]
    rules = [rule for group in load_yaml(DEPLOY / "alerts.yml")["groups"] for rule in group["rules"]]
    assert {rule["alert"] for rule in rules} == {"HighMemorySearchLatency", "MemoryStoreGrowthTooFast",
                                                 "LowRetentionRate"}
    for rule in rules:
        selected, grouping = metrics_used(rule["expr"])
        assert selected, rule["alert"]
        for name, matchers in selected.items():
            found = [sample for sample in samples if sample.name == name]
            assert found, f"{rule['alert']}: jiyi exports no {name}"
            assert any(all(sample.labels.get(k) == v for k, v in matchers.items()) for sample in found), (
                f"{rule['alert']}: no {name} sample with {matchers}")
        labels = {label for name in selected for sample in samples if sample.name == name for label in sample.labels}
        assert grouping - PROMETHEUS_TARGET_LABELS <= labels, f"{rule['alert']}: groups by labels jiyi lacks"


def test_the_docs_say_how_to_deploy() -> None:
    assert "(docs/deployment.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    section = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8").split("\n## Deployment\n", 1)[1]
    for mention in ("deploy/init-secrets.sh", "docker compose", "deploy/alerts.yml", "promtool"):
        assert mention in section, mention
