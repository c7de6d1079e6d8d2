"""The console in Debian's Chromium (Playwright), against a real server, as people use it: sign in, browse users and
a user's memories, search with explain, explain /context's stages for a pasted conversation, edit (a history row
appears), delete and restore, see why a memory is remembered, retry a failed turn; a user key that cannot open
another user's pages by their URLs; Chinese labels. Every page is saved under artifacts/console/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from jiyi.records import Scope, TurnRecord, TurnStatus
from tests.conftest import RunningServer
from tests.ui.helpers import ADMIN_KEY, ALICE_KEY, KEYS, api, login, ok, seed, shot


def _store(server: RunningServer) -> Any:
    return server.server.config.app.state.jiyi.memory.store


def _memory_id(client: Any, user_id: str, text: str) -> str:
    items = ok(client.get("/memories", params={"user_id": user_id}))["results"]
    return next(item["id"] for item in items if item["memory"] == text)


def test_an_admin_browses_searches_edits_deletes_and_restores(make_server: Callable[..., RunningServer],
                                                              contexts: Any) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        seed(admin)
        ok(admin.post("/maintain"))
        allergy = _memory_id(admin, "alice", "用户对海鲜过敏")
    _store(server).add_turn(TurnRecord(Scope("alice", "xiaolin"), [], status=TurnStatus.FAILED, attempts=6,
                                       last_error="LLMError: the LLM answered 503 six times"), [])
    page = contexts(server.url).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto("/ui/users/alice")
    expect(page).to_have_url(f"{server.url}/ui/login?next=%2Fui%2Fusers%2Falice")
    shot(page, "login")
    page.fill("#key", ADMIN_KEY)
    page.click("#login-form button[type=submit]")
    page.wait_for_url("**/ui/users/alice")

    page.goto("/ui/users")
    expect(page.locator("#users-table")).to_contain_text("alice")
    expect(page.locator("#users-table")).to_contain_text("bob")
    expect(page.locator("#signed-in-as")).to_contain_text("admin key")
    shot(page, "users")
    page.fill("#q", "ali")
    page.click("form[role=search] button")
    expect(page.locator("#users-table tbody tr")).to_have_count(1)

    page.click("#users-table a:text('alice')")
    page.wait_for_url("**/ui/users/alice")
    expect(page.locator("#agents-table")).to_contain_text("xiaolin")
    expect(page.locator("#retention-chart svg")).to_be_visible()
    expect(page.locator("#layer-chart svg")).to_be_visible()
    expect(page.locator("#passes-table")).to_be_visible()
    expect(page.locator("#turns-table tr[data-status=failed]")).to_have_count(1)
    shot(page, "user-overview")
    page.click("#turns-table button")  # retry the failed turn
    expect(page.locator("#queue .card[data-status=failed] .value")).to_have_text("0")

    page.click("nav.tabs a:text('Memories')")
    page.wait_for_url("**/ui/users/alice/memories")
    rows = page.locator("#memories-table tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() >= 4
    expect(page.locator("#memories-table")).to_contain_text("用户对海鲜过敏")
    shot(page, "memories")
    page.click("a.sort[data-sort=importance]")
    page.wait_for_url("**sort=importance**")
    # columns: memory, category, topics, layer, type, importance
    importances = [float(x) for x in page.locator("#memories-table tbody tr td:nth-child(6)").all_inner_texts()]
    assert importances == sorted(importances, reverse=True) and importances
    page.select_option("select[name=category]", "message")
    page.click("#memory-filters button[type=submit]")
    expect(page.locator("#memories-table")).to_contain_text("好的，记住了")  # the evidence messages, when asked for
    shot(page, "memories-messages")

    page.click("nav.tabs a:text('Search')")
    page.fill("#search-query", "推荐晚饭吃什么 海鲜")
    page.click("#search-form button[type=submit]")
    page.wait_for_url("**/search?**")
    expect(page.locator("#search-results tbody tr.hit").first).to_contain_text("用户对海鲜过敏")
    expect(page.locator("#search-results thead")).to_contain_text("Vector")
    expect(page.locator("#search-results thead")).to_contain_text("Keyword (BM25)")
    expect(page.locator("#search-results thead")).to_contain_text("Rules")
    expect(page.locator("#search-timings")).to_contain_text("total")
    shot(page, "search-explain")
    page.fill("#conversation", "user: 我最近睡不好\nassistant: 怎么了？\nuser: 晚饭推荐吃点什么？")
    page.click("#context-form button[type=submit]")
    expect(page.locator("#context-stages tr[data-stage=question]")).to_be_visible()
    expect(page.locator("#context-stages")).to_contain_text("Relevant long-term memory:")
    shot(page, "context-explain")
    with api(server.url) as admin:  # an inspection is not a recall
        assert ok(admin.get(f"/memories/{allergy}"))["access_count"] == 0

    page.goto(f"/ui/memories/{allergy}")
    expect(page.locator("#memory-content")).to_have_text("用户对海鲜过敏")
    expect(page.locator("#source-messages")).to_contain_text("我对海鲜过敏，别给我推荐海鲜")
    expect(page.locator("#source-messages .speaker").first).to_contain_text("User")
    expect(page.locator("#source-turns")).to_contain_text("ADD")
    expect(page.locator("#history li[data-event=ADD]")).to_have_count(1)
    shot(page, "memory-provenance")

    page.fill("#edit-text", "用户对海鲜和花生过敏")
    page.click("#edit-form button[type=submit]")
    page.wait_for_url("**done=edited")
    expect(page.locator("#memory-content")).to_have_text("用户对海鲜和花生过敏")
    update = page.locator("#history li[data-event=UPDATE]")
    expect(update).to_have_count(1)
    expect(update).to_contain_text("用户对海鲜过敏")
    expect(update).to_contain_text("用户对海鲜和花生过敏")
    shot(page, "memory-edited")

    page.fill("#delete-reason", "the user asked to forget it")
    page.click("#delete-form button[type=submit]")
    page.wait_for_url("**done=deleted")
    expect(page.locator("#deleted-note")).to_contain_text("the user asked to forget it")
    expect(page.locator("#history li[data-event=DELETE]")).to_contain_text("the user asked to forget it")
    shot(page, "memory-deleted")
    with api(server.url) as admin:
        assert admin.get(f"/memories/{allergy}").status_code == 404
    page.goto("/ui/users/alice/memories?deleted=true")
    expect(page.locator("#memories-table")).to_contain_text("用户对海鲜和花生过敏")
    shot(page, "memories-deleted")
    page.click("#memories-table a:text('用户对海鲜和花生过敏')")
    page.fill("#restore-reason", "deleted by mistake")
    page.click("#restore-form button[type=submit]")
    page.wait_for_url("**done=restored")
    expect(page.locator("#history li[data-event=RESTORE]")).to_contain_text("deleted by mistake")
    expect(page.locator("#edit-form")).to_be_visible()
    shot(page, "memory-restored")
    with api(server.url) as admin:
        assert ok(admin.get(f"/memories/{allergy}"))["memory"] == "用户对海鲜和花生过敏"

    page.goto("/ui/users/alice/memories")
    page.click("#memories-table a:text-matches('篮球')")
    page.click("#promote-form button[type=submit]")
    page.wait_for_url("**done=promoted")
    expect(page.locator("#history li[data-event=PROMOTE]")).to_have_count(1)

    page.click("#logout")
    page.wait_for_url("**/ui/login")
    assert errors == [], errors


def test_a_user_key_cannot_open_another_users_pages(make_server: Callable[..., RunningServer],
                                                    contexts: Any) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        seed(admin)
        bob_memory = _memory_id(admin, "bob", "I moved to Shanghai last spring")
        alice_memory = _memory_id(admin, "alice", "用户对海鲜过敏")
    page = contexts(server.url).new_page()
    login(page, ALICE_KEY, "/ui/users/alice")
    expect(page.locator("#signed-in-as")).to_contain_text("user alice")
    expect(page.locator("nav.main")).not_to_contain_text("Users")
    for path in ["/ui/users/bob", "/ui/users/bob/memories", "/ui/users/bob/search?q=Shanghai",
                 f"/ui/memories/{bob_memory}", "/ui/users/bob/memories?deleted=true"]:
        response = page.goto(path)
        assert response is not None and response.status == 404, path
        expect(page.locator("h1")).to_contain_text("404")
        assert "Vancouver" not in page.content()
    shot(page, "user-key-404")
    page.goto("/ui/users")
    page.wait_for_url("**/ui/users/alice")
    # A form on alice's own memory page, pointed by hand at bob's memory: refused, nothing changes.
    page.goto(f"/ui/memories/{alice_memory}")
    page.evaluate("id => document.querySelector('#delete-form').setAttribute('hx-post', `/ui/memories/${id}/delete`)",
                  bob_memory)
    page.evaluate("() => htmx.process(document.querySelector('#delete-form'))")
    page.click("#delete-form button[type=submit]")
    expect(page.locator("#flash")).to_contain_text(f"Not found: No memory {bob_memory}")
    with api(server.url) as admin:
        ok(admin.get(f"/memories/{bob_memory}"))
    shot(page, "user-key-refused")


def test_chinese_labels(make_server: Callable[..., RunningServer], contexts: Any) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        seed(admin)
        ok(admin.post("/maintain"))
        ok(admin.post("/maintain"))
        allergy = _memory_id(admin, "alice", "用户对海鲜过敏")
    page = contexts(server.url, locale="zh-CN").new_page()
    page.goto("/ui/login")
    expect(page.locator("h1")).to_have_text("登录 jiyi 记忆控制台")
    shot(page, "zh-login")
    page.fill("#key", ADMIN_KEY)
    page.click("#login-form button[type=submit]")
    page.wait_for_url("**/ui/users")  # /ui sends the admin to the list of users
    expect(page.locator("nav.main")).to_contain_text("用户")
    expect(page.locator("#users-table thead")).to_contain_text("短期记忆")
    shot(page, "zh-users")
    page.goto("/ui/users/alice")
    expect(page.locator("nav.tabs")).to_contain_text("概览")
    expect(page.locator("#retention-chart")).to_contain_text("30 天后")
    expect(page.locator("#layer-history svg")).to_be_visible()
    shot(page, "zh-user-overview")
    page.goto("/ui/users/alice/memories")
    expect(page.locator("#memories-table thead")).to_contain_text("当前保持率")
    shot(page, "zh-memories")
    page.goto("/ui/users/alice/search?q=海鲜")
    expect(page.locator("#search-results thead")).to_contain_text("关键词（BM25）")
    shot(page, "zh-search")
    page.goto(f"/ui/memories/{allergy}")
    expect(page.locator("#why h2")).to_have_text("为什么记得这件事")
    expect(page.locator("#history")).to_contain_text("新增")
    shot(page, "zh-memory")
    page.click("a[lang=en]")  # the switch: English from now on, whatever the browser says
    expect(page.locator("#why h2")).to_have_text("Why it is remembered")
    page.goto("/ui/users/alice")
    expect(page.locator("nav.tabs")).to_contain_text("Overview")


def test_screenshots_show_chinese_text(make_server: Callable[..., RunningServer], contexts: Any,
                                       tmp_path: Path) -> None:
    """The fonts are there: Chinese renders as glyphs, not boxes (the width of a CJK label is that of real glyphs)."""
    server = make_server()
    page = contexts(server.url, locale="zh-CN").new_page()
    page.goto("/ui/users")
    widths = page.evaluate("""() => {
        const measure = text => { const s = document.createElement('span'); s.textContent = text;
            document.body.appendChild(s); const w = s.getBoundingClientRect().width; s.remove(); return w; };
        return [measure('用户记忆'), measure('\\u{10FFFF}\\u{10FFFE}\\u{10FFFD}\\u{10FFFC}')];
    }""")
    assert widths[0] > 0 and widths[0] != widths[1], widths


def test_the_people_and_things_in_a_users_life(make_server: Callable[..., RunningServer], contexts: Any) -> None:
    """From a user's memories to the entity list and an entity's page: its picture, relations over time and the
    memories behind them; merge, rename, close a relation; Chinese labels; a user key kept to its own user's."""
    server = make_server(**KEYS)
    with api(server.url) as admin:
        for user, text in [("alice", "My older brother Arjun started law school in Chicago"),
                           ("alice", "我哥哥叫阿俊，在芝加哥读法学院"), ("alice", "I work at Initech"),
                           ("bob", "My cat Mochi is sick")]:
            ok(admin.post("/memories", json={"messages": [{"role": "user", "content": text}], "user_id": user,
                                             "infer": False}))
    bob_cat = next(e.id for e in _store(server).graph("bob").entities.values())
    page = contexts(server.url).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: dialog.accept())  # merge and close ask first
    login(page, ADMIN_KEY, "/ui/users")

    page.goto("/ui/users/alice/memories")
    page.click("#entities-tab")
    page.wait_for_url("**/ui/users/alice/entities")
    expect(page.locator("#entities-table tbody tr")).to_have_count(5)  # Arjun, 阿俊, Chicago, 芝加哥, Initech
    expect(page.locator("#entities-table")).to_contain_text("my older brother")
    shot(page, "entities")
    page.click("#entities-table a:text('Arjun')")
    expect(page.locator("#entity-name")).to_contain_text("Arjun")
    expect(page.locator("#entity-graph svg")).to_be_visible()
    expect(page.locator("#entity-graph svg")).to_contain_text("alice (the user)")
    behind = page.locator("#relations-table ul.behind a")
    expect(behind).to_have_text(["My older brother Arjun started law school in Chicago"])

    page.select_option("#merge-id", label="阿俊 (person)")
    page.click("#merge-form button[type=submit]")
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#entity-aliases")).to_contain_text("阿俊")
    expect(page.locator("#relations-table tbody tr[data-status=current]")).to_have_count(2)
    expect(page.locator("#entity-graph svg")).to_contain_text("芝加哥")
    shot(page, "entity")
    page.fill("#rename-name", "Arjun Mehta")
    page.click("#rename-form button[type=submit]")
    expect(page.locator("#entity-name")).to_contain_text("Arjun Mehta")
    expect(page.locator("#entity-aliases")).to_contain_text("Arjun")

    page.click("#relations-table tr:has-text('芝加哥') button.close-relation")
    expect(page.locator("#relations-table tbody tr[data-status=closed]")).to_have_count(1)
    expect(page.locator("#entity-graph line.edge.closed")).to_have_count(1)
    page.click("#entity-graph a:has-text('芝加哥')")  # a neighbour in the picture opens its page
    expect(page.locator("#entity-name")).to_contain_text("芝加哥")
    expect(page.locator("#relations-table")).to_contain_text("Arjun Mehta")

    page.click("a[lang=zh-CN]")
    expect(page.locator("#relations h2")).to_have_text("关系的变化")
    expect(page.locator("#relations-table")).to_contain_text("已结束")
    shot(page, "zh-entity")
    assert errors == [], errors

    mine = contexts(server.url).new_page()
    login(mine, ALICE_KEY, "/ui/users/alice")
    for path in ["/ui/users/bob/entities", f"/ui/users/bob/entities/{bob_cat}", f"/ui/users/alice/entities/{bob_cat}"]:
        response = mine.goto(path)
        assert response is not None and response.status == 404, path
        assert "Mochi" not in mine.content()
    mine.goto("/ui/users/alice/entities")
    expect(mine.locator("#entities-table")).to_contain_text("Arjun Mehta")
