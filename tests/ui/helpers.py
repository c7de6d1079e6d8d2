"""What the console tests share: the keys of a test server, its seed data, HTTP and browser steps, screenshots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.keys import new_key
from tests.conftest import RunningServer
from tests.sillytavern.services import REPO

SHOTS = REPO / "artifacts" / "console"
ADMIN_KEY = "admin-secret-key"
ALICE_KEY = "alice-key-0123456789"
BOB_KEY = "bob-key-0123456789"
KEYS = {"admin_api_key": ADMIN_KEY, "user_api_keys": {ALICE_KEY: "alice", BOB_KEY: "bob"}}


def shot(page: Page, name: str) -> Path:
    """A full-page screenshot under artifacts/console/ (the issue asks for one of every page)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def login(page: Page, key: str, expect_path: str) -> None:
    page.goto("/ui/login")
    page.fill("#key", key)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"**{expect_path}")


def managed_server(make_server: Callable[..., RunningServer], tmp_path: Path,
                   scopes: dict[str, tuple[str, str]]) -> tuple[RunningServer, dict[str, str], dict[str, str]]:
    """A server with keys issued as `jiyi keys create` issues them (kept hashed in the store): `scopes` names each
    key (name -> (user, scope)). Returns the server, the keys by name and their ids by name."""
    store = build_store(f"sqlite:///{tmp_path / 'managed.db'}")
    keys, ids = {}, {}
    for name, (user, scope) in scopes.items():
        record, key = new_key(scope, user_id=None if scope == "admin" else user, name=name)
        store.add_api_key(record)
        keys[name], ids[name] = key, record.id
    server = make_server(AsyncMemory(store, build_embedder("hashing")))
    return server, keys, ids


def api(base_url: str, key: str | None = ADMIN_KEY) -> httpx.Client:
    return httpx.Client(base_url=base_url, headers={"X-API-Key": key} if key else {}, timeout=30)


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url}: {response.status_code} " \
                                        f"{response.text}"
    return response.json()


ALICE_TURNS = [
    [{"role": "user", "content": "我对海鲜过敏，别给我推荐海鲜"}, {"role": "assistant", "content": "好的，记住了"}],
    [{"role": "user", "content": "我住在上海，在一家游戏公司上班"}, {"role": "assistant", "content": "上海挺好的"}],
    [{"role": "user", "content": "我喜欢打篮球，每周六都去"}, {"role": "assistant", "content": "周六打球很棒"}],
    [{"role": "user", "content": "我妹妹叫小雨，她在读大学"}, {"role": "assistant", "content": "小雨读什么专业？"}],
]


def seed(client: httpx.Client) -> dict[str, list[str]]:
    """alice (Chinese, with the character xiaolin, extracted by the offline rules) and bob (English, as written)."""
    ids: dict[str, list[str]] = {"alice": [], "bob": []}
    for turn in ALICE_TURNS:
        results = ok(client.post("/memories", json={"messages": turn, "user_id": "alice", "agent_id": "xiaolin"}))
        ids["alice"] += [r["id"] for r in results["results"] if r["event"] == "ADD"]
    for text in ["I moved to Shanghai last spring", "My sister Jesica lives in Vancouver"]:
        results = ok(client.post("/memories", json={"messages": [{"role": "user", "content": text}],
                                                    "user_id": "bob", "infer": False}))
        ids["bob"] += [r["id"] for r in results["results"]]
    return ids
