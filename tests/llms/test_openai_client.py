"""The OpenAI-compatible chat client against jiyi's fake OpenAI server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import logging
import subprocess
import sys
import time
import warnings
from typing import Any

import httpx
import pytest

from jiyi.errors import BackendUnavailable, ConfigError
from jiyi.llms import OPENAI_COMPATIBLE, build_llm
from jiyi.llms.base import LLMBadOutput, LLMError, LLMRateLimited, LLMTimeout, ask_json
from jiyi.llms.openai import MAX_RETRY_AFTER, OpenAICompatibleLLM
from jiyi.llms.scripted import ScriptedLLM
from jiyi.testing.fake_openai import FakeOpenAI, Reply
from tests.conftest import free_port
from tests.llms.test_jsonparse import READABLE, UNREADABLE

KEY = "sk-test-3f9a7c1e5b2d"
MESSAGES = [{"role": "system", "content": "Extract facts as JSON."}, {"role": "user", "content": "我住在杭州"}]


def make_llm(fake: FakeOpenAI, **options: Any) -> OpenAICompatibleLLM:
    options = {"api_key": KEY, "max_retries": 2, "retry_backoff": 0.01, "timeout": 5.0, **options}
    return OpenAICompatibleLLM("fake-chat", base_url=fake.base_url, **options)


def complete(llm: OpenAICompatibleLLM, **options: Any) -> str:
    async def call() -> str:
        try:
            return await llm.complete(MESSAGES, **options)
        finally:
            await llm.aclose()

    return asyncio.run(call())


def complete_json(llm: OpenAICompatibleLLM, **options: Any) -> dict[str, Any]:
    async def call() -> dict[str, Any]:
        try:
            return await ask_json(llm, MESSAGES, **options)
        finally:
            await llm.aclose()

    return asyncio.run(call())


def gaps(fake: FakeOpenAI) -> list[float]:
    times = [r.received_at for r in fake.chat_requests]
    return [b - a for a, b in itertools.pairwise(times)]


# ---- what the client sends ---------------------------------------------------------------------------------------


def test_sends_model_messages_sampling_and_the_key(fake: FakeOpenAI) -> None:
    fake.script("hello")
    assert complete(make_llm(fake, temperature=0.3, max_tokens=256)) == "hello"
    [request] = fake.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "fake-chat"
    assert request.body["messages"] == MESSAGES
    assert request.body["temperature"] == 0.3
    assert request.body["max_tokens"] == 256
    assert "response_format" not in request.body  # plain completions are not forced into JSON


def test_per_call_options_override_the_defaults(fake: FakeOpenAI) -> None:
    complete(make_llm(fake, temperature=0.3, max_tokens=256), temperature=0.0, max_tokens=32)
    body = fake.requests[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.0, 32)


def test_no_key_no_authorization_header(fake: FakeOpenAI) -> None:
    complete(make_llm(fake, api_key=None))
    assert "authorization" not in fake.requests[0].headers


def test_extra_headers_are_sent(fake: FakeOpenAI) -> None:
    complete(make_llm(fake, extra_headers={"X-Title": "jiyi"}))
    assert fake.requests[0].headers["x-title"] == "jiyi"


def test_json_mode_asks_for_a_json_object(fake: FakeOpenAI) -> None:
    fake.script('{"facts": []}')
    assert complete_json(make_llm(fake)) == {"facts": []}
    assert fake.requests[0].body["response_format"] == {"type": "json_object"}


def test_json_mode_off_in_the_constructor_never_sends_response_format(fake: FakeOpenAI) -> None:
    fake.script('{"facts": ["a"]}')
    assert complete_json(make_llm(fake, json_mode=False)) == {"facts": ["a"]}
    assert "response_format" not in fake.requests[0].body


def test_a_server_rejecting_response_format_is_retried_without_it_and_remembered(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=400, error="Unrecognized request argument supplied: response_format"),
                '{"facts": ["a"]}', '{"facts": ["b"]}')
    llm = make_llm(fake)
    assert complete_json(llm) == {"facts": ["a"]}
    assert complete_json(llm) == {"facts": ["b"]}
    sent = [r.body.get("response_format") for r in fake.requests]
    assert sent == [{"type": "json_object"}, None, None]
    assert llm.json_mode_supported is False


def test_another_400_is_not_retried(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=400, error="messages: field required"))
    with pytest.raises(LLMError, match="HTTP 400: messages: field required") as caught:
        complete_json(make_llm(fake))
    assert type(caught.value) is LLMError
    assert len(fake.requests) == 1


def test_model_id_names_model_and_endpoint(fake: FakeOpenAI) -> None:
    assert make_llm(fake).model_id == f"openai:fake-chat@{fake.base_url}"


def test_a_model_name_is_required() -> None:
    with pytest.raises(ConfigError, match="model name"):
        OpenAICompatibleLLM("", base_url="http://127.0.0.1:1/v1")


# ---- what the client reads back ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [c[1:] for c in READABLE], ids=[c[0] for c in READABLE])
def test_ask_json_reads_what_models_send(fake: FakeOpenAI, text: str, expected: dict[str, Any]) -> None:
    fake.script(text)
    assert complete_json(make_llm(fake)) == expected


@pytest.mark.parametrize("text", [c[1] for c in UNREADABLE], ids=[c[0] for c in UNREADABLE])
def test_ask_json_raises_bad_output_when_nothing_is_usable(fake: FakeOpenAI, text: str | None) -> None:
    fake.script(Reply(content=text))
    with pytest.raises(LLMBadOutput):
        complete_json(make_llm(fake))
    assert len(fake.requests) == 1  # a bad answer is not a transient failure: no retry


def test_reasoning_blocks_are_stripped_from_content(fake: FakeOpenAI) -> None:
    fake.script('<think>\n用户说住在杭州，应该提取 {"city": "杭州"}\n</think>\n\n{"facts": ["住在杭州"]}')
    assert complete(make_llm(fake)) == '{"facts": ["住在杭州"]}'


@pytest.mark.parametrize("reply", [
    Reply(content=None),  # "content": null, as refusals and tool calls send
    Reply(raw_body='{"choices": [{"index": 0, "message": {"role": "assistant"}}]}'),
    Reply(raw_body='{"choices": []}'),
    Reply(raw_body='{"object": "chat.completion"}'),
    Reply(raw_body='{"choices": [{"message": null}]}'),
    Reply(raw_body="<html><body>502 Bad Gateway</body></html>"),
    Reply(raw_body='{"choices": [{"message": {"content": "cut off'),
    Reply(raw_body=""),
], ids=["null-content", "missing-content", "no-choices", "no-choices-key", "null-message", "html", "cut-json",
        "empty-body"])
def test_an_unreadable_completion_is_bad_output(fake: FakeOpenAI, reply: Reply) -> None:
    fake.script(reply)
    with pytest.raises(LLMBadOutput):
        complete(make_llm(fake))


# ---- failures, retries and timeouts ------------------------------------------------------------------------------


def test_429_then_success_waits_for_retry_after(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=429, headers={"Retry-After": "0.3"}), '{"facts": ["a"]}')
    assert complete_json(make_llm(fake, retry_backoff=0.01)) == {"facts": ["a"]}
    assert len(fake.requests) == 2
    assert gaps(fake)[0] >= 0.28


def test_retry_after_zero_means_retry_now(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=429, headers={"Retry-After": "0"}), '{"facts": ["a"]}')
    started = time.monotonic()
    assert complete_json(make_llm(fake, retry_backoff=1.0)) == {"facts": ["a"]}
    assert time.monotonic() - started < 0.7, "Retry-After: 0 fell back to the 1 s backoff"


def test_429_forever_is_rate_limited_after_the_retries(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(status=429, error="Rate limit reached for requests")
    with pytest.raises(LLMRateLimited, match="Rate limit reached"):
        complete_json(make_llm(fake, max_retries=2))
    assert len(fake.requests) == 3


def test_a_retry_after_too_long_to_wait_fails_at_once(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(status=429, headers={"Retry-After": str(MAX_RETRY_AFTER * 6)})
    started = time.monotonic()
    with pytest.raises(LLMRateLimited):
        complete_json(make_llm(fake))
    assert len(fake.requests) == 1 and time.monotonic() - started < 2


def test_500_then_success(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=500), Reply(status=503, raw_body="upstream overloaded"), '{"facts": ["a"]}')
    assert complete_json(make_llm(fake)) == {"facts": ["a"]}
    assert len(fake.requests) == 3


def test_500_forever_is_an_llm_error_after_backing_off(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(status=502, raw_body="upstream exploded")
    with pytest.raises(LLMError, match="HTTP 502: upstream exploded") as caught:
        complete_json(make_llm(fake, max_retries=2, retry_backoff=0.1))
    assert not isinstance(caught.value, LLMRateLimited)
    assert len(fake.requests) == 3
    first, second = gaps(fake)
    assert first >= 0.09 and second >= 0.19  # exponential: 0.1 s, then 0.2 s


def test_no_retries_when_max_retries_is_zero(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(status=500)
    with pytest.raises(LLMError):
        complete_json(make_llm(fake, max_retries=0))
    assert len(fake.requests) == 1


def test_401_is_not_retried(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=401, error="Incorrect API key provided"))
    with pytest.raises(LLMError, match="HTTP 401"):
        complete_json(make_llm(fake))
    assert len(fake.requests) == 1


def test_a_slow_server_times_out_without_retrying(fake: FakeOpenAI) -> None:
    fake.script(Reply(content="{}", delay=1.5))
    started = time.monotonic()
    with pytest.raises(LLMTimeout, match=r"0\.3 s"):
        complete_json(make_llm(fake, timeout=0.3))
    assert time.monotonic() - started < 1.2
    assert len(fake.requests) == 1


def test_the_per_call_timeout_wins(fake: FakeOpenAI) -> None:
    fake.script(Reply(content="{}", delay=1.5))
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        complete(make_llm(fake, timeout=30.0), timeout=0.3)
    assert time.monotonic() - started < 1.2


def test_a_slow_answer_within_the_timeout_is_fine(fake: FakeOpenAI) -> None:
    fake.script(Reply(content='{"facts": ["slow"]}', delay=0.2))
    assert complete_json(make_llm(fake, timeout=2.0)) == {"facts": ["slow"]}


def test_connection_refused_is_an_llm_error() -> None:
    llm = OpenAICompatibleLLM("m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=KEY, max_retries=1,
                              retry_backoff=0.01)
    with pytest.raises(LLMError, match="unreachable") as caught:
        complete(llm)
    assert not isinstance(caught.value, LLMTimeout)
    assert isinstance(caught.value, BackendUnavailable)


def test_the_key_never_reaches_errors_or_logs(fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    fake.script(Reply(status=401), Reply(status=500), Reply(status=500), Reply(status=500),
                Reply(raw_body="garbage"), Reply(content="{}", delay=1.0),
                Reply(status=400, error="response_format unsupported"), "{}")
    llm = make_llm(fake, max_retries=2)
    errors: list[BaseException] = []
    for options in ({}, {}, {}, {"timeout": 0.2}):
        with pytest.raises(LLMError) as caught:
            complete(llm, **options)
        errors.append(caught.value)
    complete_json(llm)  # the response_format fallback logs
    with pytest.raises(LLMError) as caught:
        complete(OpenAICompatibleLLM("m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=KEY,
                                     max_retries=0))
    errors.append(caught.value)
    texts = [caplog.text, repr(llm)]
    for error in errors:
        texts += [str(error), repr(error), str(error.__cause__), repr(error.__cause__)]
    assert [t for t in texts if KEY in t] == []
    assert "response_format" in caplog.text  # the logs were captured, they just hold no key


def test_a_key_echoed_by_the_server_is_masked_in_the_error(fake: FakeOpenAI) -> None:
    """Some proxies quote the key they rejected; the error message is logged and shown, so it must not carry it."""
    fake.script(Reply(status=401, error=f"Incorrect API key provided: {KEY}. Find your key at ..."))
    with pytest.raises(LLMError, match="HTTP 401") as caught:
        complete(make_llm(fake))
    assert KEY not in str(caught.value)


def test_concurrent_calls_are_served_concurrently(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(content=json.dumps({"echo": body["messages"][-1]["content"]}), delay=0.3)
    llm = make_llm(fake)

    async def many() -> list[dict[str, Any]]:
        try:
            return await asyncio.gather(*(ask_json(llm, [{"role": "user", "content": str(i)}]) for i in range(8)))
        finally:
            await llm.aclose()

    started = time.monotonic()
    assert asyncio.run(many()) == [{"echo": str(i)} for i in range(8)]
    assert time.monotonic() - started < 1.5  # eight 0.3 s answers, not one after the other


def test_one_client_serves_several_event_loops_and_leaks_no_connection(fake: FakeOpenAI) -> None:
    """The sync facade and the server each run a loop of their own; one client object must serve both, and
    `aclose()` must release every connection it opened, whichever loop opened it."""
    llm = make_llm(fake)
    gc.collect()  # leftovers of earlier tests must not be blamed on this client
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for i in range(3):
            fake.script(f'{{"n": {i}}}')
            assert asyncio.run(ask_json(llm, MESSAGES)) == {"n": i}
        asyncio.run(llm.aclose())
        del llm
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []


# ---- presets -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider, default_url", [
    ("openai", "https://api.openai.com/v1"),
    ("deepseek", "https://api.deepseek.com/v1"),
    ("glm", "https://open.bigmodel.cn/api/paas/v4"),
    ("qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1"),
    ("ollama", "http://localhost:11434/v1"),
    ("vllm", "http://localhost:8000/v1"),
    ("llamacpp", "http://localhost:8080/v1"),
    ("lmstudio", "http://localhost:1234/v1"),
])
def test_presets_resolve_their_default_base_url(provider: str, default_url: str) -> None:
    llm = build_llm(f"{provider}:some-model")
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.model, llm.base_url) == ("some-model", default_url)
    assert llm.model_id == f"openai:some-model@{default_url}"


@pytest.mark.parametrize("provider", sorted(OPENAI_COMPATIBLE))
def test_a_base_url_override_wins(provider: str) -> None:
    llm = build_llm(f"{provider}:m", base_url="http://127.0.0.1:9999/v1/")
    assert isinstance(llm, OpenAICompatibleLLM) and llm.base_url == "http://127.0.0.1:9999/v1"


def test_model_names_may_contain_colons() -> None:
    llm = build_llm("ollama:qwen2.5:7b")
    assert isinstance(llm, OpenAICompatibleLLM) and llm.model == "qwen2.5:7b"


def test_mem0_style_config_with_its_base_url_key() -> None:
    llm = build_llm({"provider": "ollama", "config": {"model": "qwen3:8b", "ollama_base_url": "http://127.0.0.1:11434",
                                                      "temperature": 0.0, "max_tokens": 500}})
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.model, llm.base_url, llm.temperature, llm.max_tokens) == (
        "qwen3:8b", "http://127.0.0.1:11434/v1", 0.0, 500)  # Ollama's root URL gains /v1


def test_a_built_llm_talks_to_the_server_with_its_options(fake: FakeOpenAI) -> None:
    fake.script('{"facts": ["a"]}')
    llm = build_llm("deepseek:deepseek-chat", base_url=fake.base_url, api_key=KEY, max_tokens=99)
    assert isinstance(llm, OpenAICompatibleLLM)
    assert complete_json(llm) == {"facts": ["a"]}
    assert fake.requests[0].body["max_tokens"] == 99
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_scripted_builds_the_test_double() -> None:
    llm = build_llm("scripted", replies=['{"facts": ["a"]}'])
    assert isinstance(llm, ScriptedLLM)
    assert asyncio.run(ask_json(llm, MESSAGES)) == {"facts": ["a"]}


@pytest.mark.parametrize("spec", [None, "", "none"])
def test_no_llm(spec: str | None) -> None:
    assert build_llm(spec) is None


def test_an_unknown_provider_names_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"unknown LLM provider 'gpt5'.*deepseek"):
        build_llm("gpt5:x")


# ---- the fake server itself --------------------------------------------------------------------------------------


def test_fake_answers_in_the_openai_format(fake: FakeOpenAI) -> None:
    body = httpx.post(f"{fake.base_url}/chat/completions",
                      json={"model": "m", "messages": [{"role": "user", "content": "one two"}]}).json()
    assert body["object"] == "chat.completion" and body["model"] == "m" and body["id"].startswith("chatcmpl-")
    assert body["choices"] == [{"index": 0, "message": {"role": "assistant", "content": "{}"},
                                "finish_reason": "stop"}]
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}
    assert isinstance(body["created"], int)


def test_fake_errors_in_the_openai_format(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=429, headers={"Retry-After": "7"}))
    response = httpx.post(f"{fake.base_url}/chat/completions", json={})
    assert response.status_code == 429 and response.headers["retry-after"] == "7"
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert response.json()["error"]["code"] == 429


def test_fake_lists_one_model_and_logs_every_path(fake: FakeOpenAI) -> None:
    assert [m["id"] for m in httpx.get(f"{fake.base_url}/models").json()["data"]] == ["fake-model"]
    assert httpx.post(f"{fake.base_url}/embeddings", json={"input": "x"}).status_code == 404
    assert [(r.path, r.body) for r in fake.requests] == [("/v1/models", {}), ("/v1/embeddings", {"input": "x"})]


def test_fake_scripted_replies_come_before_the_responder(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(content=f"echo {body['n']}")
    fake.script("first", Reply(content="second"))
    answers = [httpx.post(f"{fake.base_url}/chat/completions", json={"n": i}).json()["choices"][0]["message"]["content"]
               for i in range(3)]
    assert answers == ["first", "second", "echo 2"]


def test_fake_stops_promptly_with_a_delayed_answer_in_flight() -> None:
    fake = FakeOpenAI(lambda body: Reply(delay=30)).start()
    port = fake.port
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{fake.base_url}/chat/completions", json={}, timeout=0.2)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 3
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models")


def test_fake_command_line_serves_a_fixed_slow_reply() -> None:
    port = free_port()
    command = [sys.executable, "-m", "jiyi.testing.fake_openai", "--port", str(port), "--reply", '{"facts": []}',
               "--delay", "0.2"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == f"fake OpenAI server at http://127.0.0.1:{port}/v1"
            started = time.monotonic()
            response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"messages": []}, timeout=10)
            assert time.monotonic() - started >= 0.19
            assert response.json()["choices"][0]["message"]["content"] == '{"facts": []}'
        finally:
            process.terminate()
