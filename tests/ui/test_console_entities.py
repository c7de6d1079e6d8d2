"""The console's entity pages over HTTP against a real server on each store: a user's list of entities, an entity's
page (aliases, relations over time with the memories behind each, a picture of its neighbours, its history) in both
languages, the corrections (rename, merge, close a relation), and who may see and change what — a user key never
reaches another user's entities, a key held to one agent none, a read key changes nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.keys import new_key
from jiyi.stores.base import MemoryStore
from jiyi.stores.entities import EntityStore
from tests.conftest import RunningServer
from tests.ui.helpers import ADMIN_KEY, ALICE_KEY, KEYS, api, ok
from tests.ui.test_console_access import Browser

SAID = {"alice": ["My older brother Arjun started law school in Chicago", "我哥哥叫阿俊，在芝加哥读法学院",
                  "I live in Denver", "I moved to Seattle", "我有个妹妹，叫小雨"],
        "bob": ["My cat Mochi is sick", "My sister Jesica lives in Vancouver"]}
ROW = re.compile(r'<tr data-id="([0-9a-f-]{36})" data-kind="(\w+)">\s*<td><a href="[^"]+">([^<]+)</a>')


def tell(client: httpx.Client) -> dict[str, list[str]]:
    """What alice and bob said, kept as said (infer=False: the rules build the graph from each message)."""
    ids: dict[str, list[str]] = {}
    for user, texts in SAID.items():
        ids[user] = [ok(client.post("/memories", json={"messages": [{"role": "user", "content": text}],
                                                       "user_id": user, "infer": False}))["results"][0]["id"]
                     for text in texts]
    return ids


def listed(page: httpx.Response) -> dict[str, tuple[str, str]]:
    """The list page's entities: name -> (id, kind)."""
    return {name: (entity_id, kind) for entity_id, kind, name in ROW.findall(page.text)}


def graph_of(server: RunningServer) -> EntityStore:
    store = server.server.config.app.state.jiyi.memory.store
    assert isinstance(store, EntityStore)
    return store


def test_a_users_entities_and_an_entity_page_in_both_languages(
        make_server: Callable[..., RunningServer], store: MemoryStore) -> None:
    server = make_server(AsyncMemory(store, build_embedder("hashing")))
    with api(server.url, None) as client:
        said = tell(client)
    browser = Browser(server.url)

    memories = browser.page("/ui/users/alice/memories")
    assert 'href="/ui/users/alice/entities"' in memories.text  # the tab beside the user's memories
    page = browser.page("/ui/users/alice/entities")
    assert page.status_code == 200 and "People &amp; things" in page.text
    entities = listed(page)
    assert set(entities) == {"Arjun", "阿俊", "Chicago", "芝加哥", "Denver", "Seattle", "小雨"}
    assert entities["Arjun"][1] == "person" and entities["Denver"][1] == "place"
    assert "my older brother" in page.text and "我哥哥" in page.text and "Mochi" not in page.text
    assert "7 entities" in page.text
    places = listed(browser.page("/ui/users/alice/entities?kind=place"))
    assert set(places) == {"Chicago", "芝加哥", "Denver", "Seattle"}
    assert browser.page("/ui/users/alice/entities?kind=robot").status_code == 400

    denver = browser.page(f"/ui/users/alice/entities/{entities['Denver'][0]}")
    assert denver.status_code == 200
    [closed] = re.findall(r'<tr data-id="[^"]+" data-status="(\w+)">', denver.text)
    assert closed == "closed" and denver.text.count("/relations/") == 0  # an ended relation cannot be closed again
    for memory_id in said["alice"][2:4]:  # "I live in Denver" said it; "I moved to Seattle" ended it
        assert f'href="/ui/memories/{memory_id}"' in denver.text
        assert browser.page(f"/ui/memories/{memory_id}").status_code == 200
    assert '<svg class="chart graph"' in denver.text and "lives_in (ended)" in denver.text
    assert 'class="edge closed"' in denver.text

    arjun = browser.page(f"/ui/users/alice/entities/{entities['Arjun'][0]}")
    assert 'data-status="current"' in arjun.text and "alice (the user)" in arjun.text
    assert "brother_of" in arjun.text and "Relations over time" in arjun.text
    zh = browser.http.get(f"/ui/users/alice/entities/{entities['Arjun'][0]}", headers={"Accept-Language": "zh-CN"})
    assert zh.status_code == 200 and "关系的变化" in zh.text and "alice（用户本人）" in zh.text and "人物" in zh.text
    assert "人物与事物" in browser.http.get("/ui/users/alice/entities", headers={"Accept-Language": "zh"}).text


def test_corrections_from_the_entity_page(make_server: Callable[..., RunningServer], store: MemoryStore) -> None:
    server = make_server(AsyncMemory(store, build_embedder("hashing")))
    with api(server.url, None) as client:
        tell(client)
    browser = Browser(server.url)
    entities = listed(browser.page("/ui/users/alice/entities"))
    arjun, ajun = entities["Arjun"][0], entities["阿俊"][0]
    page = f"/ui/users/alice/entities/{arjun}"
    browser.page(page)

    merged = browser.post(f"{page}/merge", {"merge_id": ajun})
    assert merged.headers["hx-redirect"] == f"{page}?done=merged"
    after = browser.page(f"{page}?done=merged")
    assert 'id="done"' in after.text and "阿俊" in after.text and "我哥哥" in after.text
    assert "芝加哥" in after.text and after.text.count('data-status="current"') == 2  # brother_of (joined), lives_in
    assert set(listed(browser.page("/ui/users/alice/entities"))) == {"Arjun", "Chicago", "芝加哥", "Denver", "Seattle",
                                                                     "小雨"}
    assert browser.page(f"/ui/users/alice/entities/{ajun}").status_code == 404
    assert "MERGE" in after.text

    assert browser.post(f"{page}/rename", {"name": "Arjun Mehta"}).headers["hx-redirect"] == f"{page}?done=renamed"
    renamed = browser.page(page)
    assert '<h1 id="entity-name">Arjun Mehta' in renamed.text and '<span class="chip">Arjun</span>' in renamed.text
    assert "already has an entity named Seattle" in browser.post(f"{page}/rename", {"name": "Seattle"}).text

    lives = next(r for r in graph_of(server).graph("alice").relations if r.relation == "lives_in" and r.is_current
                 and r.source == arjun)
    closing = browser.post(f"{page}/relations/{lives.id}/close")
    assert closing.headers["hx-redirect"] == f"{page}?done=closed"
    assert browser.page(page).text.count('data-status="closed"') == 1
    assert not next(r for r in graph_of(server).graph("alice").relations if r.id == lives.id).is_current
    assert "already closed" in browser.post(f"{page}/relations/{lives.id}/close").text
    assert browser.post(f"{page}/rename", {"name": "x"}, token="forged").status_code == 403


def test_a_user_key_never_reaches_another_users_entities(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        tell(admin)
    graph = graph_of(server)
    bobs = {e.name: e.id for e in graph.graph("bob").entities.values()}
    before = graph.graph("bob")
    alice = Browser(server.url)
    alice.login(ALICE_KEY)
    assert alice.page("/ui/users/alice/entities").status_code == 200
    for path in ["/ui/users/bob/entities", f"/ui/users/bob/entities/{bobs['Mochi']}",
                 f"/ui/users/alice/entities/{bobs['Mochi']}", "/ui/users/bob/entities?kind=pet"]:
        page = alice.page(path)
        assert page.status_code == 404, (path, page.status_code)
        assert "Mochi" not in page.text and "Vancouver" not in page.text
    mine = next(e.id for e in graph.graph("alice").entities.values() if e.name == "Arjun")
    for path, form in [(f"/ui/users/bob/entities/{bobs['Mochi']}/rename", {"name": "Stolen"}),
                       (f"/ui/users/alice/entities/{bobs['Mochi']}/rename", {"name": "Stolen"}),
                       (f"/ui/users/alice/entities/{mine}/merge", {"merge_id": bobs["Mochi"]}),
                       (f"/ui/users/bob/entities/{bobs['Mochi']}/merge", {"merge_id": bobs["Jesica"]}),
                       (f"/ui/users/alice/entities/{mine}/relations/{before.relations[0].id}/close", {})]:
        assert alice.post(path, form).status_code == 404, path
    assert graph.graph("bob") == before
    admin = Browser(server.url)
    admin.login(ADMIN_KEY)
    assert "Mochi" in admin.page(f"/ui/users/bob/entities/{bobs['Mochi']}").text


def test_an_agent_key_and_a_read_key(make_server: Callable[..., RunningServer], tmp_path: Path) -> None:
    store = build_store(f"sqlite:///{tmp_path / 'keys.db'}")
    keys = {}
    for name, scope, agent in (("admin", "admin", None), ("coach", "write", "coach"), ("reader", "read", None)):
        record, keys[name] = new_key(scope, None if scope == "admin" else "alice", agent, name=name)
        store.add_api_key(record)
    server = make_server(AsyncMemory(store, build_embedder("hashing")))
    with api(server.url, keys["admin"]) as admin:
        tell(admin)
    arjun = next(e.id for e in graph_of(server).graph("alice").entities.values() if e.name == "Arjun")

    coach = Browser(server.url)
    coach.login(keys["coach"])
    assert 'id="entities-tab"' not in coach.page("/ui/users/alice").text
    for path in ["/ui/users/alice/entities", f"/ui/users/alice/entities/{arjun}"]:
        page = coach.page(path)
        assert page.status_code == 403 and "agent coach" in page.text and "Arjun" not in page.text.replace(
            arjun, ""), path
    assert coach.post(f"/ui/users/alice/entities/{arjun}/rename", {"name": "x"}).status_code == 403

    reader = Browser(server.url)
    reader.login(keys["reader"])
    page = reader.page(f"/ui/users/alice/entities/{arjun}")
    assert page.status_code == 200 and 'id="rename-form"' not in page.text and "close-relation" not in page.text
    assert reader.post(f"/ui/users/alice/entities/{arjun}/rename", {"name": "x"}).status_code == 403
    assert graph_of(server).graph("alice").entities[arjun].name == "Arjun"
