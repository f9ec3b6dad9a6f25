"""``replaykit mcp --http``: streamable HTTP on 127.0.0.1 behind a bearer token. The SDK's client with
the token runs tools (a bad run id is a tool error and the server keeps serving); without the token, or
with a wrong one, every request gets 401; another Host is refused."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio
import pytest

from tests.mcp.support import (
    FAILING_RUN,
    ROOT,
    SECRET,
    check_schema,
    failing_store,
    server_args,
    server_env,
    wire_text,
)

pytest.importorskip("mcp")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = tmp_path_factory.mktemp("mcp-http") / "store"
    failing_store(store)
    env = {**server_env(), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, *server_args(store, "--http")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        header = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        assert header.startswith("Authorization: Bearer "), header
        yield url, header.removeprefix("Authorization: Bearer ")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_with_the_token_tools_run(http_server: tuple[str, str]) -> None:
    url, token = http_server

    async def session() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            listed = await client.call_tool("list_runs", {})
            check_schema(tools["list_runs"], listed)
            assert listed.structured_content["runs"][0]["run_id"] == FAILING_RUN  # type: ignore[index]
            failing = await client.call_tool("failing_step", {"run_id": FAILING_RUN})
            check_schema(tools["failing_step"], failing)
            bad = await client.call_tool("get_step", {"run_id": "no-such-run", "step": 0})
            assert bad.is_error and "no run" in wire_text(bad)
            step = await client.call_tool("get_step", {"run_id": FAILING_RUN, "step": 2})
            assert not step.is_error and SECRET not in wire_text(step)
            refused = await client.call_tool("play_run", {"run_id": FAILING_RUN, "live": True})
            assert refused.is_error and "--allow-live" in wire_text(refused)

    anyio.run(session)


def test_without_the_token_401(http_server: tuple[str, str]) -> None:
    url, token = http_server
    port = url.split(":")[2].split("/")[0]
    with httpx2.Client(timeout=30) as http:
        assert http.post(url, json=INIT, headers=ACCEPT).status_code == 401
        assert http.get(url, headers=ACCEPT).status_code == 401
        wrong = http.post(url, json=INIT, headers={**ACCEPT, "authorization": f"Bearer {token[:-1]}x"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
        assert http.post(url, json=INIT, headers={**ACCEPT, "authorization": token}).status_code == 401
        good = http.post(url, json=INIT, headers={**ACCEPT, "authorization": f"Bearer {token}"})
        assert good.status_code == 200, good.text
        rebound = http.post(url, json=INIT, headers={**ACCEPT, "authorization": f"Bearer {token}",
                                                      "host": f"attacker.example:{port}"})
        assert rebound.status_code >= 400

    async def no_token() -> None:
        async with Client(url) as client:
            await client.list_tools()

    with pytest.raises(BaseException):
        anyio.run(no_token)
