"""One real world for the whole SillyTavern suite, started once: the fake LLM, jiyi (`python -m jiyi serve`, e5
embedder, the fake LLM as its extraction and rewrite model), SillyTavern 1.19.0 with jiyi's extension and plugin and
user accounts, two users (alice, bob), their characters and a group, and headless Chromium logged in as each user.
Tests are isolated by character, user and chat, not by restarting anything."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.sillytavern.browser import StUser, launch_browser
from tests.sillytavern.fake_llm import JIYI_MODEL, FakeLLM
from tests.sillytavern.services import REPO, JiyiServer, SillyTavern, check_prerequisites, free_port

ARTIFACTS = REPO / "artifacts" / "sillytavern"

# (file name, name, description, greeting) per user; the avatar file name "<file name>.png" is jiyi's agent_id.
CHARACTERS: dict[str, list[tuple[str, str, str, str]]] = {
    "alice": [
        ("xiaolin", "小林", "小林是用户的老朋友，说话温和，喜欢做饭。", "你好呀，我是小林。"),
        ("ajie", "阿杰", "阿杰是用户的室友，关心用户的作息。", "嘿，我是阿杰。"),
        ("xiaoyu", "小雨", "小雨是用户的钢琴老师。", "你好，我是小雨老师。"),
        ("xiaomei", "小美", "小美是一个活泼的女孩。", ""),
        ("latency", "阿明", "阿明是用户的同事。", ""),
        ("laowang", "老王", "老王是用户楼下小卖部的老板。", "来啦？今天要点什么？"),
        ("xiaoxue", "小雪", "小雪是用户的朋友，擅长做菜。", "你好，我是小雪，今天想吃点什么？"),
        ("xiaozhu", "小竹", "小竹是用户的邻居，开了一家宠物店。", "你好，我是小竹。"),
        ("ahua", "阿花", "阿花是用户的表妹。", "表姐好！"),
    ],
    "bob": [
        ("xiaolin", "小林", "小林是用户的邻居。", "你好，我是小林。"),
    ],
}
PERSONAS = {"alice": "Alice", "bob": "Bob"}
# alice's extension goes through the server plugin (transport "auto" finds it); bob's calls jiyi straight from the
# browser (CORS), the way it works without the plugin. The plugin writes on save for both.
TRANSPORTS = {"alice": "auto", "bob": "direct"}


@dataclass
class World:
    llm: FakeLLM
    jiyi: JiyiServer
    st: SillyTavern
    browser: Browser
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, StUser] = field(default_factory=dict)


# Package scope, not session: Playwright's sync API keeps an asyncio loop running in this thread while it lives, and
# the rest of the suite (asyncio.run in tests) must not see it.
@pytest.fixture(scope="package")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    check_prerequisites()
    timings: dict[str, float] = {}
    started = time.monotonic()
    root = tmp_path_factory.mktemp("sillytavern")
    jiyi_port, st_port = free_port(), free_port()
    with FakeLLM() as llm:
        jiyi = JiyiServer(root / "jiyi", jiyi_port, {
            "JIYI_EMBEDDER": "e5", "JIYI_LLM": f"openai:{JIYI_MODEL}", "JIYI_LLM_BASE_URL": llm.base_url,
            "JIYI_LLM_API_KEY": "test-key", "JIYI_LLM_TIMEOUT": "10", "JIYI_MAINTENANCE_INTERVAL": "0",
            "JIYI_CORS_ORIGINS": f"http://127.0.0.1:{st_port}", "JIYI_LOG_LEVEL": "INFO"})
        st = SillyTavern(root, st_port, jiyi.url)
        st.prepare()
        # jiyi loads its embedding model while SillyTavern starts.
        jiyi_error: list[BaseException] = []

        def start_jiyi() -> None:
            try:
                jiyi.start()
            except BaseException as error:
                jiyi_error.append(error)

        starter = threading.Thread(target=start_jiyi)
        starter.start()
        browser = None
        playwright = None
        try:
            st.start()
            timings.update(st.timings)
            starter.join()
            timings["jiyi_start_s"] = jiyi.started_in
            if jiyi_error:
                raise jiyi_error[0]
            with st.session() as admin:
                for handle, persona in PERSONAS.items():
                    st.create_user(admin, handle, persona)
            world_groups: dict[str, dict[str, Any]] = {}
            for handle, characters in CHARACTERS.items():
                st.configure_user(handle, persona=PERSONAS[handle], llm_url=llm.base_url,
                                  extension={"serviceUrl": jiyi.url, "enabled": True,
                                             "transport": TRANSPORTS[handle]})
                with st.session(handle) as client:
                    for file_name, name, description, greeting in characters:
                        avatar = st.create_character(client, file_name, name, description, greeting)
                        assert avatar == f"{file_name}.png", avatar
                    if handle == "alice":
                        world_groups["friends"] = st.create_group(client, "朋友们", ["xiaolin.png", "ajie.png"])
            timings["services_ready_s"] = time.monotonic() - started
            playwright, browser = launch_browser()
            world = World(llm, jiyi, st, browser, world_groups)
            for handle in PERSONAS:
                user = StUser(browser, st.url, handle)
                user.login()
                world.users[handle] = user
            for user in world.users.values():
                user.wait_ready()
            timings["world_ready_s"] = time.monotonic() - started
            print(f"\nSillyTavern world ready: {json.dumps({k: round(v, 1) for k, v in timings.items()})}")
            yield world
        finally:
            starter.join()
            if browser is not None:
                browser.close()
            if playwright is not None:
                playwright.stop()
            st.stop()
            jiyi.stop()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            for log in (st.log, jiyi.log):
                if log.exists():
                    shutil.copyfile(log, ARTIFACTS / log.name)


@pytest.fixture
def llm(world: World) -> Iterator[FakeLLM]:
    world.llm.reset_scripts()
    yield world.llm
    world.llm.reset_scripts()


@pytest.fixture
def alice(world: World) -> StUser:
    return world.users["alice"]


@pytest.fixture
def bob(world: World) -> StUser:
    return world.users["bob"]


@pytest.fixture
def jiyi(world: World) -> JiyiServer:
    return world.jiyi


def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
