"""mem0's categories in the console, over plain HTTP against a real server: each memory's topics on the memories page
and the memory's own page, in the visitor's language, and the memories of one topic on asking."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx

from tests.conftest import RunningServer
from tests.ui.helpers import api, ok


def topics_of_rows(page: str) -> dict[str, list[str]]:
    """Each row's memory text -> the topics shown beside it."""
    rows = re.findall(r'<tr data-id="[^"]+">(.*?)</tr>', page, re.S)
    out = {}
    for row in rows:
        text = re.search(r'<td class="content"><a [^>]*>(.*?)</a>', row, re.S)
        assert text is not None
        out[text.group(1)] = re.findall(r'data-topic="([^"]+)"', row)
    return out


def test_the_console_shows_and_filters_each_memorys_topics(make_server: Callable[..., RunningServer]) -> None:
    server = make_server()
    with api(server.url, None) as client:
        for text in ("User loves spicy Sichuan food", "用户春节要去三亚度假", "User has asthma and takes an inhaler"):
            ok(client.post("/memories", json={"messages": [{"role": "user", "content": text}], "user_id": "alice",
                                              "infer": False}))
        ok(client.post("/memories", json={"messages": [{"role": "user", "content": "User has a dog named Pepper"}],
                                          "user_id": "alice", "infer": False,
                                          "custom_categories": [{"pets": "the user's pets"}]}))
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        page = browser.get("/ui/users/alice/memories", headers={"Accept-Language": "en"})
        assert page.status_code == 200
        shown = topics_of_rows(page.text)
        assert shown["User loves spicy Sichuan food"] == ["food", "user_preferences"]
        assert shown["用户春节要去三亚度假"] == ["travel"]
        assert shown["User has asthma and takes an inhaler"] == ["health"]
        assert shown["User has a dog named Pepper"] == ["pets"]  # a project's own category, as it is named
        assert ">Food</a>" in page.text and ">Preferences</a>" in page.text and 'href="/ui/users/alice/memories?' \
            in page.text

        travel = browser.get("/ui/users/alice/memories", params={"topic": "travel"})
        assert list(topics_of_rows(travel.text)) == ["用户春节要去三亚度假"]
        pets = browser.get("/ui/users/alice/memories", params={"topic": "pets"})
        assert list(topics_of_rows(pets.text)) == ["User has a dog named Pepper"]
        bad = browser.get("/ui/users/alice/memories", params={"topic": "<script>"})
        assert bad.status_code == 400 and "topic must be a category" in bad.text

        in_chinese = browser.get("/ui/users/alice/memories", headers={"Accept-Language": "zh-CN"})
        assert ">饮食</a>" in in_chinese.text and ">话题</th>" in in_chinese.text
        row_id = re.search(r'<tr data-id="([^"]+)">\s*<td class="content"><a [^>]*>User has asthma and', page.text)
        assert row_id is not None
        detail = browser.get(f"/ui/memories/{row_id.group(1)}", headers={"Accept-Language": "en"})
        assert re.search(r'<dd id="memory-topics"><span class="chip topic">Health</span>', detail.text)
