"""LlamaIndex's mem0 memory (llama-index-memory-mem0, `Mem0Memory`) on a jiyi server instead of api.mem0.ai.

Not a dependency of jiyi: run it from its own venv, against a jiyi server you started (see README.md beside it):

    python3 -m venv /tmp/integ-venv
    /tmp/integ-venv/bin/pip install mem0ai==2.2.1 llama-index-memory-mem0
    /tmp/integ-venv/bin/python bench/integrations/llamaindex_mem0.py --host http://127.0.0.1:8765 --api-key KEY

It puts a few chat messages through `Mem0Memory.put` (each becomes a mem0 `add`, which jiyi extracts in the
background), waits for those extractions, then asks `Mem0Memory.get(input=query)` for the chat history with the
memories it found, and prints what came back. Telemetry is off unless MEM0_TELEMETRY says otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "false")  # mem0 reads it once, on import

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory as ChatHistory
from llama_index.memory.mem0 import Mem0Memory
from mem0 import MemoryClient

CHAT = [
    (MessageRole.USER, "Hi! I live in Hangzhou and I drink oolong tea every morning."),
    (MessageRole.ASSISTANT, "Nice to meet you. Oolong in Hangzhou sounds lovely."),
    (MessageRole.USER, "My sister is called Lin. I am allergic to peanuts."),
]
QUERY = "What do I drink in the morning, and is there any food I must avoid?"


class EventKeepingClient(MemoryClient):
    """mem0's client, keeping the event id of each add: Mem0Memory.put drops add's answer, and the extraction it
    queued must be finished before a search can find what it extracted."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.event_ids: list[str] = []

    def add(self, messages: Any, options: Any = None, **kwargs: Any) -> dict[str, Any]:
        answer: dict[str, Any] = super().add(messages, options, **kwargs)
        self.event_ids += [item["event_id"] for item in answer.get("results", []) if item.get("event_id")]
        return answer

    def wait_for_events(self, timeout: float) -> list[dict[str, Any]]:
        """Poll GET /v1/event/{id}/ (the platform's route for queued adds) until every add is done."""
        deadline = time.monotonic() + timeout
        done = []
        for event_id in self.event_ids:
            while True:
                response = self.client.get(f"/v1/event/{event_id}/")
                response.raise_for_status()
                event = response.json()
                if event["status"] in ("SUCCEEDED", "FAILED"):
                    done.append(event)
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"event {event_id} is still {event['status']} after {timeout:g} s")
                time.sleep(0.1)
        return done


def build_memory(host: str, api_key: str, user_id: str) -> tuple[Mem0Memory, EventKeepingClient]:
    """Mem0Memory as its README builds it (from_client), and, since that fails with mem0ai 2.x (it passes org_id and
    project_id, which MemoryClient no longer takes), the same object from the constructor from_client calls."""
    context = {"user_id": user_id}
    try:
        Mem0Memory.from_client(context=context, api_key=api_key, host=host)
        print("Mem0Memory.from_client: ok")
    except TypeError as error:
        print(f"Mem0Memory.from_client: {type(error).__name__}: {error}")
    client = EventKeepingClient(api_key=api_key, host=host)
    print(f"MemoryClient(host={client.host!r}): ping ok, org_id={client.org_id!r}, project_id={client.project_id!r}")
    return Mem0Memory(primary_memory=ChatHistory.from_defaults(), context=context, client=client), client


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", required=True, help="the jiyi server, e.g. http://127.0.0.1:8765")
    parser.add_argument("--api-key", required=True, help="a jiyi key (any string on a server without keys)")
    parser.add_argument("--user-id", default="llamaindex-demo")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for jiyi's extractions")
    args = parser.parse_args()

    memory, client = build_memory(args.host, args.api_key, args.user_id)
    for role, text in CHAT:
        memory.put(ChatMessage(role=role, content=text))
        print(f"put {role.value}: {text}")

    for event in client.wait_for_events(args.timeout):
        print(f"event {event['id']}: {event['status']}")
        for item in event["results"]:
            print(f"    {item['event']:<6} {item['memory']}")

    print(f"\nMem0Memory.get(input={QUERY!r}):")
    for message in memory.get(input=QUERY):
        print(f"--- {message.role.value}\n{message.content}")

    found = memory.search(query=QUERY, filters={"user_id": args.user_id})["results"]
    print(f"\nMem0Memory.search: {len(found)} memories")
    for item in found:
        print(f"    {item['score']:.3f}  {item['memory']}")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
