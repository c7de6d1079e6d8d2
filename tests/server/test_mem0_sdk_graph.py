"""mem0's Python SDK with enable_graph=True against jiyi's server: `relations` come back beside `results`."""

from __future__ import annotations

import os

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported: the SDK must not call PostHog from tests

from mem0 import MemoryClient
from tests.conftest import RunningServer


def test_the_sdk_gets_relations_it_can_read(server: RunningServer) -> None:
    # async_mode=False: the SDK queues adds by default, and the graph is written with the turn
    client = MemoryClient(api_key="any key: this server has none", host=server.url)
    client.add([{"role": "user", "content": "my cousin Sneha is getting married in December"}], user_id="priya",
               async_mode=False)
    client.add([{"role": "user", "content": "我家柯基豆豆今天把我新买的拖鞋啃了"}], user_id="priya", async_mode=False)
    found = client.search("how is my cousin doing?", filters={"user_id": "priya"}, enable_graph=True)
    assert found["relations"] == [{"source": "Sneha", "relationship": "cousin_of", "destination": "priya"}]
    assert "results" in found
    plain = client.search("how is my cousin doing?", filters={"user_id": "priya"})
    assert "relations" not in plain
