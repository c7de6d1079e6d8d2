"""Headless Debian Chromium driven by Playwright (Python; the PyPI wheel carries its own driver, no browser download),
and what a test does in SillyTavern's web page, the way a user does it: log in, pick a character, start a chat, type
and send, swipe, open the extensions panel, flip the rewrite switch."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.sillytavern.services import CHROMIUM

# Every message of SillyTavern's current chat is printed on the page.
_CHAT_PRINTED = "document.querySelectorAll('#chat .mes').length === SillyTavern.getContext().chat.length"

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
READY_TIMEOUT_MS = 60_000
REPLY_TIMEOUT_MS = 20_000


def launch_browser() -> tuple[Playwright, Browser]:
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    except Exception:
        playwright.stop()
        raise
    return playwright, browser


@dataclass
class Turn:
    """One message sent and the reply it got."""

    reply: str
    elapsed_s: float  # from the click on send to the reply shown in the chat


class StUser:
    """One SillyTavern user in a browser context of its own (its own cookies: its own session)."""

    def __init__(self, browser: Browser, base_url: str, handle: str) -> None:
        self.base_url = base_url
        self.handle = handle
        self.context: BrowserContext = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900},
                                                           locale="zh-CN")
        self.page: Page = self.context.new_page()
        self.console: list[str] = []
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))

    def close(self) -> None:
        self.context.close()

    # ---- session ------------------------------------------------------------------------------------------------

    def login(self) -> None:
        """SillyTavern's login form posts {handle} to /api/users/login with the CSRF token; the same, then the app
        starts loading (call wait_ready(): several users' pages can load at once)."""
        token = self.context.request.get("/csrf-token").json()["token"]
        response = self.context.request.post("/api/users/login", data={"handle": self.handle},
                                             headers={"x-csrf-token": token})
        assert response.ok, f"login of {self.handle} failed: {response.status} {response.text()}"
        self.page.goto("/", wait_until="commit")

    def reload(self) -> None:
        self.page.reload(wait_until="commit")
        self.wait_ready()

    def wait_ready(self) -> None:
        """The app is up: characters loaded, the chat-completion connection made, and jiyi's extension loaded."""
        try:
            self.page.wait_for_function(
                """() => {
                    let st;
                    try { st = globalThis.SillyTavern?.getContext?.(); } catch { return false; }  // still loading
                    return st && st.characters.length > 0 && st.onlineStatus && st.onlineStatus !== 'no_connection'
                        && globalThis.jiyiMemory && document.querySelector('#send_textarea')
                        && !document.querySelector('#preloader');
                }""", timeout=READY_TIMEOUT_MS)
        except Exception as error:
            raise AssertionError(f"SillyTavern did not get ready for {self.handle}: {self.state()}\n"
                                 + "\n".join(self.console[-30:])) from error
        # With no character open, SillyTavern prints its welcome page after the app is up. A character selected
        # meanwhile got the welcome messages appended to its own chat (seen once in a full run: the chat shown with the
        # welcome twice). Let the printing finish first; a page that prints nothing goes on after the wait.
        with contextlib.suppress(Exception):  # best effort: a race avoided, nothing checked
            self.page.wait_for_function(f"() => SillyTavern.getContext().chat.length > 0 && ({_CHAT_PRINTED})",
                                        timeout=5_000)

    def state(self) -> dict[str, Any]:
        return dict(self.page.evaluate("""() => {
            const st = globalThis.SillyTavern?.getContext?.();
            return {onlineStatus: st?.onlineStatus, characters: st?.characters?.length, chatId: st?.chatId,
                    jiyi: Boolean(globalThis.jiyiMemory), url: location.href};
        }"""))

    # ---- characters and chats -----------------------------------------------------------------------------------

    def select_character(self, avatar: str) -> None:
        index = self.page.evaluate("a => SillyTavern.getContext().characters.findIndex(c => c.avatar === a)", avatar)
        assert index >= 0, f"{self.handle} has no character {avatar}"
        current = self.page.evaluate("() => [String(SillyTavern.getContext().characterId), "
                                     "Boolean(SillyTavern.getContext().groupId)]")
        if current == [str(index), False]:
            return
        self._arm("CHAT_LOADED")
        self.page.evaluate("i => SillyTavern.getContext().selectCharacterById(i)", index)
        self._wait_armed()
        self.wait_chat_rendered()

    def open_group(self, group_id: str) -> None:
        self._arm("CHAT_CHANGED")
        # A click on the group in the character list (the list may be scrolled or collapsed: click it by script).
        clicked = self.page.evaluate("id => $(`#rm_print_characters_block .group_select[data-grid='${id}']`)"
                                     ".first().trigger('click').length", group_id)
        assert clicked == 1, f"group {group_id} is not in {self.handle}'s character list"
        self._wait_armed()
        assert self.page.evaluate("() => SillyTavern.getContext().groupId") == group_id
        self.wait_chat_rendered()

    def _arm(self, *events: str) -> None:
        """Start listening for SillyTavern events; _wait_armed() returns once each has fired. ST goes on working
        after the visible change (a new chat id comes before its messages are printed), and a message sent during
        that work is shown twice."""
        self.page.evaluate("""events => {
            const st = SillyTavern.getContext();
            globalThis.__e2eFired = Object.fromEntries(events.map(e => [e, false]));
            for (const e of events) st.eventSource.once(st.eventTypes[e], () => { globalThis.__e2eFired[e] = true; });
        }""", list(events))

    def _wait_armed(self, timeout_ms: int = 15_000) -> None:
        try:
            self.page.wait_for_function("() => Object.values(globalThis.__e2eFired).every(Boolean)",
                                        timeout=timeout_ms)
        except Exception as error:
            fired = self.page.evaluate("() => globalThis.__e2eFired")
            raise AssertionError(f"SillyTavern did not finish: events {fired}") from error

    def wait_chat_rendered(self) -> None:
        try:
            self.page.wait_for_function(f"() => {_CHAT_PRINTED}", timeout=10_000)
        except Exception as error:
            shown = self.page.evaluate("() => [...document.querySelectorAll('#chat .mes')].map(e => "
                                       "e.getAttribute('mesid') + ':' + e.querySelector('.mes_text')?.textContent)")
            raise AssertionError(f"the chat is not rendered: shown {shown}, chat {self.chat()}") from error

    def new_chat(self) -> str:
        """Options menu → "Start new chat" → confirm, as a user does; the new chat's id."""
        before = self.chat_id()
        self._arm("CHAT_LOADED", "CHARACTER_EDITED")  # the new chat printed, then the character saved with it
        self.page.click("#options_button")
        self.page.click("#option_start_new_chat")
        self.page.click(".popup .popup-button-ok")
        self._wait_armed()
        assert self.chat_id() != before
        self.wait_chat_rendered()
        return self.chat_id()

    def chat_id(self) -> str:
        return str(self.page.evaluate("() => SillyTavern.getContext().getCurrentChatId()"))

    def chat(self) -> list[dict[str, Any]]:
        return list(self.page.evaluate(
            "() => SillyTavern.getContext().chat.map(m => ({is_user: m.is_user, name: m.name, mes: m.mes, "
            "swipes: m.swipes?.length ?? 0, original_avatar: m.original_avatar}))"))

    # ---- talking ------------------------------------------------------------------------------------------------

    def send(self, text: str, expect_reply: str | None = None, replies: int = 1,
             timeout_ms: int = REPLY_TIMEOUT_MS) -> Turn:
        """Type and send `text`; wait until `replies` new replies are shown (the last one `expect_reply` if given)
        and generation has ended."""
        count = len(self.chat())
        self.page.fill("#send_textarea", text)
        started = time.monotonic()
        self.page.click("#send_but")
        self._wait_reply(count + 1 + replies, expect_reply, timeout_ms)
        elapsed = time.monotonic() - started
        self.wait_idle()
        self.wait_chat_rendered()
        return Turn(reply=self.chat()[-1]["mes"], elapsed_s=elapsed)

    def _wait_reply(self, length: int, expect: str | None, timeout_ms: int) -> None:
        try:
            self.page.wait_for_function(
                """([length, expect]) => {
                    const chat = SillyTavern.getContext().chat;
                    const last = chat[chat.length - 1];
                    if (chat.length < length || !last || last.is_user) return false;
                    const shown = document.querySelector('#chat .last_mes .mes_text')?.textContent ?? '';
                    return expect === null ? shown.trim().length > 0 && shown.trim() !== '...'
                                           : shown.includes(expect);
                }""", arg=[length, expect], timeout=timeout_ms, polling=20)
        except Exception as error:
            raise AssertionError(f"no reply shown within {timeout_ms} ms; chat: {self.chat()[-3:]}\n"
                                 + "\n".join(self.console[-20:])) from error

    def wait_idle(self, timeout_ms: int = REPLY_TIMEOUT_MS) -> None:
        """Generation over and the chat saved (the plugin writes on save)."""
        self.page.wait_for_function(
            "() => document.querySelector('#mes_stop')?.offsetParent === null"
            " && document.querySelector('#send_but')?.offsetParent !== null",
            timeout=timeout_ms)

    def swipe_right(self, expect_reply: str) -> Turn:
        """Click the swipe-right arrow of the last reply: a new reply is generated in place of the shown one."""
        started = time.monotonic()
        self.page.click("#chat .last_mes .swipe_right")
        try:
            self.page.wait_for_function(
                "expect => (document.querySelector('#chat .last_mes .mes_text')?.textContent ?? '').includes(expect)",
                arg=expect_reply, timeout=REPLY_TIMEOUT_MS, polling=20)
        except Exception as error:
            raise AssertionError(f"the swiped reply {expect_reply!r} was not shown; "
                                 f"chat: {self.chat()[-2:]}") from error
        elapsed = time.monotonic() - started
        self.wait_idle()
        return Turn(reply=self.chat()[-1]["mes"], elapsed_s=elapsed)

    # ---- jiyi's extension ---------------------------------------------------------------------------------------

    def jiyi_last(self) -> dict[str, Any]:
        return dict(self.page.evaluate("() => globalThis.jiyiMemory.last") or {})

    def jiyi_history(self) -> list[dict[str, Any]]:
        return list(self.page.evaluate("() => globalThis.jiyiMemory.history"))

    def jiyi_settings(self) -> dict[str, Any]:
        return dict(self.page.evaluate("() => SillyTavern.getContext().extensionSettings.jiyi_memory"))

    def set_jiyi_settings(self, **values: Any) -> None:
        """Change settings without the panel (the panel itself is exercised by open_settings / set_rewrite)."""
        self.page.evaluate("""values => {
            const st = SillyTavern.getContext();
            Object.assign(st.extensionSettings.jiyi_memory, values);
            st.saveSettingsDebounced();
        }""", values)

    def open_settings(self) -> None:
        """Extensions panel (the top bar's cubes icon), then the "jiyi Memory" drawer."""
        if not self.page.is_visible("#jiyi_memory_settings"):
            self.page.click("#extensions-settings-button .drawer-toggle")
            self.page.wait_for_selector("#jiyi_memory_settings", state="visible", timeout=10_000)
        # The drawer remembers whether it was open; its content slides, so wait for the end of the animation.
        self.page.wait_for_timeout(400)
        if not self.page.is_visible("#jiyi_memory_settings .inline-drawer-content"):
            self.page.click("#jiyi_memory_settings .inline-drawer-toggle")
        self.page.wait_for_selector("#jiyi_memory_rewrite", state="visible", timeout=10_000)
        self.page.wait_for_timeout(400)

    def close_settings(self) -> None:
        if self.page.is_visible("#jiyi_memory_settings"):
            self.page.click("#extensions-settings-button .drawer-toggle")
            self.page.wait_for_selector("#jiyi_memory_settings", state="hidden", timeout=10_000)

    def set_rewrite(self, on: bool, source: str | None = None) -> None:
        """Flip the rewrite switch (and pick its model) in the settings panel, as a user does."""
        self.open_settings()
        if self.page.is_checked("#jiyi_memory_rewrite") != on:
            self.page.click("#jiyi_memory_rewrite")
        if source is not None:
            self.page.select_option("#jiyi_memory_rewrite_source", source)
        assert self.jiyi_settings()["rewrite"] is on
        if source is not None:
            assert self.jiyi_settings()["rewriteSource"] == source
        self.close_settings()

    def note(self, message_index: int = -1) -> dict[str, Any] | None:
        """The jiyi note shown under a message (the last by default), as the user sees it; None when there is none."""
        return self.page.evaluate("""index => {
            const messages = [...document.querySelectorAll('#chat .mes')];
            const element = messages.at(index);
            const note = element?.querySelector('.jiyi-memory-note');
            if (!note) return null;
            return {
                kind: note.dataset.jiyiNote, problem: note.dataset.kind ?? null, open: note.open,
                // A reply that got no memory has a one-line note with no summary to open (kind "none").
                summary: (note.querySelector('summary') ?? note).textContent.trim(),
                body: note.querySelector('.jiyi-memory-note-body')?.textContent.trim() ?? '',
                items: [...note.querySelectorAll('li .jiyi-memory-note-text')].map(e => e.textContent),
                ids: [...note.querySelectorAll('li')].map(e => e.dataset.memoryId),
                links: [...note.querySelectorAll('li a')].map(e => e.href),
            };
        }""", message_index)

    def set_language(self, locale: str | None) -> None:
        """SillyTavern's UI language, as its User Settings → UI Language select stores it (None: the browser's), and
        the page reloaded as SillyTavern itself does on a change."""
        self.page.evaluate("l => l === null ? localStorage.removeItem('language')"
                           " : localStorage.setItem('language', l)", locale)
        self.reload()

    def set_streaming(self, on: bool) -> None:
        """The "Streaming" switch of the chat-completion settings (#stream_toggle), as a click on it changes it."""
        self.page.evaluate("on => $('#stream_toggle').prop('checked', on).trigger('change')", on)
        assert self.page.evaluate("() => SillyTavern.getContext().chatCompletionSettings.stream_openai") is on

    def screenshot(self, path: Path, selector: str | None = None) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if selector:
            self.page.locator(selector).screenshot(path=str(path))
        else:
            self.page.screenshot(path=str(path))
        return path
