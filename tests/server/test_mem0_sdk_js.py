"""mem0's npm client (mem0ai 3.3.1, `new MemoryClient({apiKey, host})`) against a real jiyi server, unchanged.

tests/mem0_js/drive.mjs calls every client method that jiyi serves, as alice (a user key), bob and the admin, and
prints what each returned or threw; the checks are here. The client is installed by tests/mem0_js/install.sh
(`make test` runs it); when it is missing these tests fail with what to run, they never skip."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import RunningServer

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.server import create_app
from jiyi.server.limits import RequestLimits

JS = Path(__file__).resolve().parents[1] / "mem0_js"
SDK_VERSION = "3.3.1"
ADMIN_KEY = "key-admin"
USER_KEYS = {"key-alice": "alice", "key-bob": "bob"}
RATE_PER_MINUTE = 2  # the limited server's: the client's ping and one call pass, the next is refused

RAW = ["I keep a bonsai on my desk", "I play go on Sundays"]
INFERRED = {"User lives in Hangzhou", "User drinks oolong tea every morning", "User's sister is called Lin"}
TEA, GREEN_TEA = "User drinks oolong tea every morning", "User drinks green tea every morning"


def check_installed() -> None:
    """Fail (never skip) with what to run when the client or node is missing or stale."""
    hint = "run `make mem0-js` (tests/mem0_js/install.sh; needs npm and the npm registry once)"
    if shutil.which("node") is None:
        pytest.fail(f"node is not on PATH — {hint}")
    marker = JS / "node_modules" / ".jiyi-installed"
    lock = hashlib.sha256((JS / "package-lock.json").read_bytes()).hexdigest()
    if not marker.is_file() or marker.read_text().strip() != lock:
        pytest.fail(f"mem0's npm client is not installed, or not from the current package-lock.json — {hint}")
    installed = json.loads((JS / "node_modules" / "mem0ai" / "package.json").read_text())["version"]
    if installed != SDK_VERSION:
        pytest.fail(f"tests/mem0_js/node_modules has mem0ai {installed}, not {SDK_VERSION} — {hint}")


def start_server(db: Path, **app_options: Any) -> RunningServer:
    memory = AsyncMemory(build_store(f"sqlite:///{db}"), build_embedder("hashing"))
    return RunningServer(create_app(memory, admin_api_key=ADMIN_KEY, user_api_keys=USER_KEYS,
                                    worker_poll_interval=0.05, **app_options)).__enter__()


# Module scope: one run of the script (about a second) answers every test below; the servers are RunningServer,
# what conftest's make_server starts, with this module's keys and limits.
@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    check_installed()
    root = tmp_path_factory.mktemp("mem0_js")
    server = start_server(root / "memory.db")
    limited = start_server(root / "limited.db", limits=RequestLimits(rate_per_minute=RATE_PER_MINUTE))
    try:
        run = subprocess.run(
            ["node", str(JS / "drive.mjs"), "--url", server.url, "--admin-key", ADMIN_KEY,
             "--alice-key", "key-alice", "--bob-key", "key-bob", "--limited-url", limited.url,
             "--limited-key", "key-alice"],
            capture_output=True, text=True, timeout=60, cwd=JS,
            env={**os.environ, "MEM0_TELEMETRY": "false", "MEM0_DIR": str(root / "mem0-home")})
    finally:
        server.__exit__()
        limited.__exit__()
    assert run.returncode == 0, f"drive.mjs exited {run.returncode}:\n{run.stderr[-4000:]}"
    yield json.loads(run.stdout.strip().splitlines()[-1])


def answer(driven: dict[str, Any], label: str) -> Any:
    """What the call `label` returned; fails with the SDK's error when it threw instead."""
    value = driven[label]
    assert not (isinstance(value, dict) and "error" in value and "instanceOf" in value), f"{label}: {value}"
    return value


def texts(items: list[dict[str, Any]]) -> list[str]:
    return [item["memory"] for item in items]


def test_the_pinned_client_ran_and_reached_only_this_machine(driven: dict[str, Any]) -> None:
    assert driven["sdkVersion"] == SDK_VERSION
    assert driven["blockedRequests"] == []  # no telemetry, no api.mem0.ai


def test_ping_gives_the_client_its_organisation_and_project(driven: dict[str, Any]) -> None:
    assert answer(driven, "ping") == {"organizationId": "jiyi", "projectId": "user-alice"}


def test_add_without_inference_stores_each_message(driven: dict[str, Any]) -> None:
    results = answer(driven, "addRaw")["results"]
    assert texts(results) == RAW
    assert [item["event"] for item in results] == ["ADD", "ADD"]
    assert [item["data"] for item in results] == [{"memory": text} for text in RAW]
    assert len({item["id"] for item in results}) == 2


def test_add_with_inference_is_queued_then_polled_to_its_memories(driven: dict[str, Any]) -> None:
    [queued] = answer(driven, "addInfer")["results"]
    assert queued["status"] == "PENDING"
    event = answer(driven, "event")
    assert event["id"] == queued["eventId"]
    assert event["status"] == "SUCCEEDED"
    assert event["user_id"] == "alice"
    assert {item["memory"] for item in event["results"]} == INFERRED
    assert {item["event"] for item in event["results"]} == {"ADD"}


def test_get_all_pages_through_the_users_memories(driven: dict[str, Any]) -> None:
    first, second = answer(driven, "getAllPage1"), answer(driven, "getAllPage2")
    assert first["count"] == second["count"] == 5
    assert (len(first["results"]), len(second["results"])) == (3, 2)
    assert first["next"].endswith("/v3/memories/?page=2&page_size=3") and first["previous"] is None
    assert second["next"] is None and second["previous"].endswith("/v3/memories/?page=1&page_size=3")
    listed = first["results"] + second["results"]
    raw_ids = {item["id"] for item in answer(driven, "addRaw")["results"]}
    inferred_ids = {item["id"] for item in answer(driven, "event")["results"]}
    assert {item["id"] for item in listed} == raw_ids | inferred_ids
    assert set(texts(listed)) == set(RAW) | INFERRED
    assert {item["userId"] for item in listed} == {"alice"}


def test_search_with_the_user_inside_an_AND_filter(driven: dict[str, Any]) -> None:
    results = answer(driven, "search")["results"]
    assert results[0]["memory"] == TEA
    assert len(results) <= 3
    assert {item["userId"] for item in results} == {"alice"}
    scores = [item["score"] for item in results]
    assert scores == sorted(scores, reverse=True)


def test_get_round_trips_the_id_and_metadata(driven: dict[str, Any]) -> None:
    bonsai = answer(driven, "addRaw")["results"][0]
    got = answer(driven, "get")
    assert (got["id"], got["memory"], got["metadata"]) == (bonsai["id"], RAW[0], {"source": "drive.mjs"})


def test_update_then_history_shows_the_old_and_new_text(driven: dict[str, Any]) -> None:
    tea_id = answer(driven, "search")["results"][0]["id"]
    updated = answer(driven, "update")
    assert (updated["id"], updated["memory"], updated["text"]) == (tea_id, GREEN_TEA, GREEN_TEA)
    assert updated["metadata"] == {"changed_by": "drive.mjs"}
    history = answer(driven, "history")
    assert [(row["event"], row["oldMemory"], row["newMemory"]) for row in history] == [
        ("ADD", None, TEA), ("UPDATE", TEA, GREEN_TEA)]
    assert {row["memoryId"] for row in history} == {tea_id}
    assert {row["userId"] for row in history} == {"alice"}


def test_batch_update_changes_every_text(driven: dict[str, Any]) -> None:
    assert answer(driven, "batchUpdate") == {"message": "Successfully updated 2 memories"}
    assert answer(driven, "afterBatchUpdate") == ["I keep two bonsai trees on my desk", "I play go on Saturdays"]


def test_feedback_is_kept_for_the_memory(driven: dict[str, Any]) -> None:
    feedback = answer(driven, "feedback")
    assert feedback["memoryId"] == answer(driven, "get")["id"]
    assert (feedback["feedback"], feedback["feedbackReason"]) == ("POSITIVE", "accurate")


def entities(page: dict[str, Any]) -> dict[tuple[str, str], int]:
    assert page["count"] == len(page["results"])
    return {(item["type"], item["name"]): item["totalMemories"] for item in page["results"]}


def test_users_lists_a_user_keys_own_user_and_the_admins_everyone(driven: dict[str, Any]) -> None:
    assert entities(answer(driven, "usersAlice")) == {("user", "alice"): 5}
    assert {item["owner"] for item in answer(driven, "usersAlice")["results"]} == {"user-alice"}
    assert entities(answer(driven, "usersAdmin")) == {("user", "alice"): 5, ("user", "bob"): 1}


def test_memory_export_is_read_back_by_id_and_by_filters(driven: dict[str, Any]) -> None:
    created = answer(driven, "createMemoryExport")
    by_id, by_filters = answer(driven, "getMemoryExport"), answer(driven, "getMemoryExportByFilters")
    assert by_id == by_filters
    assert (by_id["id"], by_id["status"], by_id["count"]) == (created["id"], "COMPLETED", 5)
    assert by_id["exportInstructions"] == "one line per memory"
    assert set(texts(by_id["memories"])) == {"I keep two bonsai trees on my desk", "I play go on Saturdays",
                                              GREEN_TEA, *(INFERRED - {TEA})}


def test_project_instructions_are_updated_and_read_back(driven: dict[str, Any]) -> None:
    before, after = answer(driven, "getProjectBefore"), answer(driven, "getProjectAfter")
    assert before["id"] == after["id"] == "user-alice"
    assert before["customInstructions"] is None
    assert answer(driven, "updateProject") == {"message": "Updated custom instructions"}
    assert after["customInstructions"] == "Remember what alice drinks."


@pytest.mark.parametrize(("label", "error", "status", "says"), [
    ("getMissing", "MemoryNotFoundError", 404, "not found"),
    ("getOtherUsersMemory", "MemoryNotFoundError", 404, "not found"),  # another user's memory is not there
    ("getAllOtherUser", "AuthenticationError", 403, "its own user"),
    ("unknownKey", "AuthenticationError", 401, "unknown api key"),
    ("tooLarge", "MemoryQuotaExceededError", 413, "jiyi_max_message_chars"),
    ("getBatchDeleted", "MemoryNotFoundError", 404, "not found"),
    ("getDeleted", "MemoryNotFoundError", 404, "not found"),
])
def test_errors_are_the_sdks_classes(driven: dict[str, Any], label: str, error: str, status: int,
                                     says: str) -> None:
    thrown = driven[label]
    assert (thrown["error"], thrown["name"], thrown["errorCode"]) == (error, error, f"HTTP_{status}"), thrown
    assert thrown["instanceOf"] == [error, "MemoryError"]
    assert says in thrown["message"].lower()


def test_too_many_requests_is_a_rate_limit_error(driven: dict[str, Any]) -> None:
    limited = driven["rateLimited"]
    assert limited["answeredBefore"] == RATE_PER_MINUTE - 1  # the constructor's ping took one
    assert (limited["error"], limited["errorCode"]) == ("RateLimitError", "HTTP_429"), limited
    assert limited["instanceOf"] == ["RateLimitError", "MemoryError"]


def test_deletes_one_a_batch_a_user_an_agent(driven: dict[str, Any]) -> None:
    assert answer(driven, "batchDelete") == {"message": "Successfully deleted 1 memories"}
    assert answer(driven, "delete") == {"message": "Memory deleted successfully!"}
    assert answer(driven, "deleteAll") == {"message": "Memories deleted successfully!"}
    assert answer(driven, "getAllAfterDeleteAll")["count"] == 0
    assert entities(answer(driven, "usersAfterDeleteAll")) == {("user", "bob"): 1, ("agent", "poet"): 1}
    assert answer(driven, "deleteUser") == {"message": "Deleted agent poet: 1 memory.",
                                            "deleted": {"memories": 1, "entities": [{"type": "agent", "name": "poet"}]}}
    assert answer(driven, "deleteUsers") == {"message": "Entity deleted successfully."}
    assert entities(answer(driven, "usersAfterDeleteUsers")) == {}


# --- where a new user used to trip (issue 31) ----------------------------------------------------------------------


def test_the_nested_metadata_filter_selects_in_search_and_get_all(driven: dict[str, Any]) -> None:
    assert texts(answer(driven, "edgeSearchNested")["results"]) == ["I work at a bank in Lyon"]
    assert texts(answer(driven, "edgeGetAllNested")["results"]) == ["I cook on the river bank"]  # added as a string


def test_a_metadata_update_keeps_the_app_agent_and_run(driven: dict[str, Any]) -> None:
    planned_id = answer(driven, "edgeAddScoped")["results"][0]["id"]
    for label in ("edgeUpdateMetadata", "edgeGetAfterUpdate"):
        item = answer(driven, label)
        assert item["id"] == planned_id
        assert (item["userId"], item["agentId"], item["runId"], item["appId"]) == ("alice", "planner", "r1", "myapp")
        assert item["metadata"] == {"topic": "job", "app_id": "myapp"}


def test_an_image_is_kept_by_its_caption_and_refused_plainly_without(driven: dict[str, Any]) -> None:
    refused = driven["edgeImage"]
    assert (refused["error"], refused["errorCode"]) == ("ValidationError", "HTTP_400"), refused
    assert json.loads(refused["message"]) == {"detail": (
        'messages[0].content is an image (image_url) with no text: jiyi does not look at images or documents, so '
        'give what it shows as a "caption" beside image_url or as a {"type": "text"} part')}
    assert texts(answer(driven, "edgeImageCaption")["results"]) == ["my cat Mochi asleep on the sofa"]


def test_a_422_is_a_sentence_naming_the_field(driven: dict[str, Any]) -> None:
    refused = driven["edgeTopKZero"]
    assert (refused["error"], refused["errorCode"]) == ("ValidationError", "HTTP_422"), refused
    assert json.loads(refused["message"]) == {"detail": "top_k must be greater than or equal to 1"}


def test_delete_users_without_arguments_deletes_whatever_agents_and_runs_there_are(driven: dict[str, Any]) -> None:
    assert answer(driven, "edgeDeleteUsersAlice") == {"message": "All users, agents, apps and runs deleted."}
    assert entities(answer(driven, "edgeUsersAliceAfter")) == {}
    assert entities(answer(driven, "edgeUsersAdminBefore")) == {  # alice's reset left bob's planner and carol
        ("user", "bob"): 1, ("user", "carol"): 1, ("agent", "planner"): 1, ("agent", "scribe"): 1, ("run", "s1"): 1}
    assert answer(driven, "edgeDeleteUsersAdmin") == {"message": "All users, agents, apps and runs deleted."}
    assert entities(answer(driven, "edgeUsersAdminAfter")) == {}


def test_deleting_one_entity_says_what_went_and_one_a_cascade_emptied_is_no_error(driven: dict[str, Any]) -> None:
    assert answer(driven, "edgeDeleteUserDora") == {
        "message": "Deleted user dora: 1 memory; agent critic, run d1 had no other memories and went with it.",
        "deleted": {"memories": 1, "entities": [{"type": "user", "name": "dora"}, {"type": "agent", "name": "critic"},
                                                {"type": "run", "name": "d1"}]}}
    assert answer(driven, "edgeDeleteUserRunAfter") == {
        "message": "run d1 has no memories left (an earlier delete took them); nothing more to delete.",
        "deleted": {"memories": 0, "entities": []}}
    assert answer(driven, "edgeDeleteUsersAgentAfter") == {"message": "Entity deleted successfully."}
    assert entities(answer(driven, "edgeUsersAfterDora")) == {}
