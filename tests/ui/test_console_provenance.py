"""The console's "why it is remembered", over plain HTTP against a real server: a memory shows the message it was
extracted from, not another one said in the same add (the README's first example)."""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.conftest import RunningServer
from tests.ui.helpers import ADMIN_KEY, KEYS, api, ok
from tests.ui.test_console_access import Browser

README_ADD = [{"role": "user", "content": "我对海鲜过敏，别给我推荐海鲜"},
              {"role": "assistant", "content": "好的，记住了"},
              {"role": "user", "content": "I moved to Shanghai last spring"}]
SOURCES = re.compile(r'<ol class="messages" id="source-messages">(.*?)</ol>', re.DOTALL)


def test_why_remembered_shows_the_message_each_fact_came_from(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        added = ok(admin.post("/memories", json={"messages": README_ADD, "user_id": "alice"}))["results"]
    made = {item["memory"]: item["id"] for item in added}
    assert set(made) == {"用户对海鲜过敏", "User moved to Shanghai"}
    browser = Browser(server.url)
    browser.login(ADMIN_KEY)
    for memory, said, not_said in (("用户对海鲜过敏", "我对海鲜过敏", "Shanghai"),
                                   ("User moved to Shanghai", "I moved to Shanghai", "海鲜")):
        page = browser.page(f"/ui/memories/{made[memory]}")
        assert page.status_code == 200
        found = SOURCES.search(page.text)
        assert found is not None, page.text
        assert said in found.group(1) and not_said not in found.group(1), found.group(1)
