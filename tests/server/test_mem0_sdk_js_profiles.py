"""mem0's npm client (mem0ai 3.3.1, unchanged) against a real jiyi server: mem0's categories (assigned, filtered, a
custom list on an add) and user profiles (getProfile, generateProfile, getProfileJob, sampleProfiles, profile
settings), the project's own categories and a memory_categorize webhook made with createWebhook.
tests/mem0_js/drive_profiles.mjs makes the calls; the checks are here. Installed by
tests/mem0_js/install.sh; missing, these tests fail with what to run, they never skip."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from tests.server.test_mem0_sdk_js import JS, USER_KEYS, check_installed, start_server
from tests.server.test_webhooks import FAST, Receiver

SCHEMA_KEYS = {"favourite_foods", "home_city"}


@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    check_installed()
    root = tmp_path_factory.mktemp("mem0_js_profiles")
    receiver = Receiver().start()
    # private_urls: alice's key may register a webhook on 127.0.0.1 (JIYI_WEBHOOK_ALLOW_PRIVATE_URLS)
    server = start_server(root / "memory.db", webhooks=replace(FAST, private_urls=True))
    try:
        run = subprocess.run(
            ["node", str(JS / "drive_profiles.mjs"), "--url", server.url, "--alice-key", "key-alice",
             "--bob-key", "key-bob", "--hook-url", receiver.url],
            capture_output=True, text=True, timeout=120, cwd=JS,
            env={**os.environ, "MEM0_TELEMETRY": "false", "MEM0_DIR": str(root / "mem0-home")})
        assert run.returncode == 0, f"drive_profiles.mjs exited {run.returncode}:\n{run.stderr[-4000:]}"
        driven = json.loads(run.stdout.strip().splitlines()[-1])
        if not isinstance(driven.get("webhook"), dict) or "error" not in driven["webhook"]:
            receiver.wait_for(1)
            time.sleep(0.3)  # a second, unexpected delivery would arrive now
        driven["webhookBodies"] = receiver.bodies()
    finally:
        server.__exit__()
        receiver.stop()
    yield driven


def answer(driven: dict[str, Any], label: str) -> Any:
    value = driven[label]
    assert not (isinstance(value, dict) and "error" in value and "instanceOf" in value), f"{label}: {value}"
    return value


def test_only_this_machine_was_reached(driven: dict[str, Any]) -> None:
    assert set(USER_KEYS) == {"key-alice", "key-bob"}
    assert driven["blockedRequests"] == []


def test_every_memory_carries_mem0s_categories_and_filters_find_them(driven: dict[str, Any]) -> None:
    listed = {item["memory"]: item["categories"] for item in answer(driven, "getAll")["results"]}
    assert listed["User loves spicy Sichuan food"] == ["food", "user_preferences"]
    assert listed["用户春节要去三亚度假"] == ["travel"]
    assert listed["用户有哮喘，一直在吃药"][0] == "health"
    assert listed["User has a golden retriever named Max"] == ["pets"]  # the add's own list
    assert [item["memory"] for item in answer(driven, "getAllFood")["results"]] == ["User loves spicy Sichuan food"]
    assert [hit["memory"] for hit in answer(driven, "searchHealth")["results"]] == ["用户有哮喘，一直在吃药"]


def test_a_profile_is_read_generated_as_a_job_and_read_back(driven: dict[str, Any]) -> None:
    profile = answer(driven, "profile")
    assert (profile["status"], profile["entityType"], profile["entityId"]) == ("succeeded", "user", "alice")
    assert profile["generationCount"] == 1 and profile["updatedAt"]
    assert profile["profile"]["food"] == ["User loves spicy Sichuan food"]  # category names kept as they are
    assert profile["profile"]["travel"] == ["用户春节要去三亚度假"]
    assert profile["profile"]["personal_details"] == ["User's name is Alice"]
    generated, again = answer(driven, "generate"), answer(driven, "generateAgain")
    assert (generated["status"], generated["operation"], generated["replayed"]) == ("succeeded", "trigger", False)
    assert again["jobId"] == generated["jobId"] and again["replayed"] is True
    job = answer(driven, "job")["job"]
    assert (job["id"], job["status"], job["total"], job["completed"], job["succeeded"]) == (
        generated["jobId"], "succeeded", 1, 1, 1)
    assert job["enumerationComplete"] is True
    sample = answer(driven, "sample")
    assert sample["entityIds"] == ["alice"] and sample["sampled"] == 1  # a user key's project: its own user


def test_profile_settings_keep_the_schema_as_written_and_shape_the_profile(driven: dict[str, Any]) -> None:
    before = answer(driven, "settingsBefore")
    assert before["enabled"] is True and before["entities"]["user"]["schema"] is None
    after = answer(driven, "settingsAfter")
    assert answer(driven, "updateSettings") == after
    assert set(after["entities"]["user"]["schema"]["properties"]) == SCHEMA_KEYS  # not camel-cased
    assert after["entities"]["user"]["customInstructions"] == "Short answers."
    shaped = answer(driven, "profileWithSchema")["profile"]
    assert set(shaped) == SCHEMA_KEYS
    assert "User loves spicy Sichuan food" in shaped["favourite_foods"]


def test_another_users_profile_and_disabled_profiles_are_the_sdks_errors(driven: dict[str, Any]) -> None:
    other = driven["otherUsersProfile"]
    assert (other["error"], other["errorCode"]) == ("MemoryNotFoundError", "HTTP_404"), other
    unknown = driven["unknownUser"]
    assert unknown["error"] == "MemoryNotFoundError" and "user bob not found" in unknown["message"]
    assert answer(driven, "disable")["enabled"] is False
    disabled = answer(driven, "profileDisabled")
    assert (disabled["status"], disabled["profile"]) == ("not_enabled", {})
    refused = driven["generateDisabled"]
    assert (refused["error"], refused["errorCode"]) == ("ValidationError", "HTTP_400"), refused
    assert "not enabled" in refused["message"]


def test_the_projects_own_categories_and_a_memory_categorize_webhook(driven: dict[str, Any]) -> None:
    hook = answer(driven, "webhook")
    assert (hook["eventTypes"], hook["project"]) == (["memory_categorize"], "user-alice")
    assert answer(driven, "updateProjectCategories") == {"message": "Project updated"}
    assert answer(driven, "projectCategories")["customCategories"] == [
        {"pets": "the user's pets"}, {"work": "job, employer and colleagues"}]
    cat = answer(driven, "getInProjectCategories")
    assert (cat["memory"], cat["categories"]) == ("User has a cat named Mochi", ["pets"])
    [told] = driven["webhookBodies"]  # the webhook came after every other add: it hears this one only
    assert (told["event_type"], told["project_id"]) == ("memory_categorize", "user-alice")
    assert told["event_details"]["id"] == cat["id"]
    assert told["event_details"]["data"] == {"memory": "User has a cat named Mochi", "categories": ["pets"]}
