"""The SDK's own ``EnvironmentWorker``, unmodified, against the simulation in-process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
from anthropic import AsyncAnthropic, beta_async_tool
from anthropic.lib.environments import EnvironmentWorker

from simulator.managed_agents import ManagedAgentsSimulator, Scenario
from simulator.managed_agents.transport import ThreadedAsyncTransport

BASE = "http://sim.test"


@beta_async_tool
async def get_order_status(order_id: str) -> str:
    """Look up an order in the internal fulfillment system by order ID."""
    if order_id == "missing":
        raise ValueError(f"no order {order_id}")
    return f"Order {order_id}: shipped"


def declaration(name: str) -> dict[str, object]:
    return {"type": "custom", "name": name, "description": f"{name} tool",
            "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


async def serve_until(sim: ManagedAgentsSimulator, env_key: str, env_id: str, workdir: Path,
                      done, timeout: float = 20.0) -> bool:
    client = AsyncAnthropic(auth_token=env_key, base_url=BASE, max_retries=0,
                            http_client=httpx2.AsyncClient(transport=ThreadedAsyncTransport(sim),
                                                           base_url=BASE))
    worker = EnvironmentWorker(client, environment_id=env_id, environment_key=env_key,
                               workdir=workdir, tools=lambda env: [get_order_status],
                               memory_sync_interval=None)
    task = asyncio.create_task(worker.run())
    try:
        return await asyncio.to_thread(sim.wait_for, done, timeout)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()


def test_environment_worker_serves_custom_tools(tmp_path: Path) -> None:
    sim = ManagedAgentsSimulator(long_poll=True)
    env = sim.create_environment()
    agent = sim.create_agent([declaration("get_order_status"), declaration("approve_refund")])
    scenario = Scenario.of("orders", [("get_order_status", {"order_id": "1"}),
                                      ("get_order_status", {"order_id": "missing"})],
                           [("approve_refund", {"order_id": "1"})])
    session = sim.create_session(scenario, agent=agent, environment_id=env.id, start=True)
    s = sim.session(session.id)

    def waiting_on_refund() -> bool:
        return s.turn == 2 and len(s.results) == 2

    assert asyncio.run(serve_until(sim, env.key, env.id, tmp_path, waiting_on_refund))
    uses = [e for e in s.events if e["type"] == "agent.custom_tool_use"]
    first, failed, refund = uses
    ok = s.results[first["id"]]
    assert len(ok) == 1 and ok[0]["is_error"] is False
    assert ok[0]["content"] == [{"type": "text", "text": "Order 1: shipped"}]
    bad = s.results[failed["id"]]
    assert len(bad) == 1 and bad[0]["is_error"] is True and "no order missing" in str(bad[0])
    # approve_refund is declared but not served: left pending, the session waits for it
    assert refund["id"] not in s.results
    assert s.stop_reason == {"type": "requires_action", "event_ids": [refund["id"]]}
    assert sim.violations == []
    (item,) = sim.work_items(session.id)
    assert item.acknowledged_at is not None and item.latest_heartbeat_at is not None


def test_environment_worker_serves_sessions_in_turn(tmp_path: Path) -> None:
    sim = ManagedAgentsSimulator(long_poll=True)
    env = sim.create_environment()
    agent = sim.create_agent([declaration("get_order_status")])
    sessions = [sim.create_session(Scenario.of(f"s{i}", [("get_order_status", {"order_id": str(i)})]),
                                   agent=agent, environment_id=env.id, start=True)
                for i in range(3)]

    def archive_finished() -> bool:
        for s in sessions:
            live = sim.session(s.id)
            if live.finished and live.status != "terminated":
                from simulator.managed_agents import sessions as S
                S.terminate(sim.store, live, archived=True)
        return all(w.state == "stopped" for w in sim.work_items())

    assert asyncio.run(serve_until(sim, env.key, env.id, tmp_path, archive_finished))
    for s in sessions:
        live = sim.session(s.id)
        assert live.finished and len(live.results) == 1
    assert sim.violations == []


def test_environment_worker_through_the_http_server(tmp_path: Path) -> None:
    """The same worker over a real socket (``tooluse serve``'s server), session made over HTTP."""
    import json

    import anthropic
    import pytest

    server = pytest.importorskip("simulator.server")
    sim = ManagedAgentsSimulator()
    base, stop = server.start_server(sim, threaded=True)
    try:
        admin = anthropic.Anthropic(api_key="sk-test", base_url=base, max_retries=0)
        env = admin.beta.environments.create(
            name="ci", config={"type": "self_hosted"},
            metadata={"tooluse_environment_key": "envkey-test"})
        agent = admin.beta.agents.create(name="a", model="claude-opus-5",
                                         tools=[declaration("get_order_status")])
        session = admin.beta.sessions.create(
            agent=agent.id, environment_id=env.id,
            metadata={"tooluse_scenario": json.dumps([[["get_order_status", {"order_id": "7"}]]])})
        admin.beta.sessions.events.send(session.id, events=[
            {"type": "user.message", "content": [{"type": "text", "text": "Where is order 7?"}]}])

        async def main() -> bool:
            client = AsyncAnthropic(auth_token="envkey-test", base_url=base, max_retries=0)
            worker = EnvironmentWorker(client, environment_id=env.id,
                                       environment_key="envkey-test", workdir=tmp_path,
                                       tools=[get_order_status], memory_sync_interval=None)
            task = asyncio.create_task(worker.run())
            try:
                return await asyncio.to_thread(sim.wait_for,
                                               lambda: sim.session(session.id).finished, 20)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                await client.close()

        assert asyncio.run(main())
        events = list(admin.beta.sessions.events.list(session.id, limit=100))
        result = next(e for e in events if e.type == "user.custom_tool_result")
        assert result.content[0].text == "Order 7: shipped"  # type: ignore[union-attr,index]
        assert events[-1].type == "session.status_idle"
        assert sim.violations == []
    finally:
        sim.close_streams()
        stop()


def test_environment_worker_against_tooluse_serve(tmp_path: Path) -> None:
    """End to end: ``tooluse serve`` in its own process, a session scripted from a corpus cassette
    chosen over HTTP, the SDK's EnvironmentWorker serving it."""
    import os
    import subprocess
    import sys

    import anthropic

    from simulator.cassette import default_fixtures_root

    cassette = default_fixtures_root() / "managed_agents" / "custom" / "one_tool_use.json"
    if not cassette.exists():
        import pytest

        pytest.skip("the Managed Agents cassettes are not in the corpus")
    serve = "import sys; from conformance.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", serve, "serve", str(cassette), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        assert base.startswith("http://"), base
        admin = anthropic.Anthropic(api_key="sk-test", base_url=base, max_retries=0)
        env = admin.beta.environments.create(name="ci", config={"type": "self_hosted"},
                                             metadata={"tooluse_environment_key": "envkey-e2e"})
        agent = admin.beta.agents.create(name="a", model="claude-opus-5",
                                         tools=[declaration("get_order_status")])
        session = admin.beta.sessions.create(
            agent=agent.id, environment_id=env.id,
            metadata={"tooluse_scenario": "managed_agents/custom/one_tool_use"})
        admin.beta.sessions.events.send(session.id, events=[
            {"type": "user.message", "content": [{"type": "text", "text": "Where is it?"}]}])

        def ended() -> bool:
            events = list(admin.beta.sessions.events.list(session.id, limit=100))
            return events[-1].type == "session.status_idle" and \
                events[-1].stop_reason.type == "end_turn"  # type: ignore[union-attr]

        async def main() -> bool:
            client = AsyncAnthropic(auth_token="envkey-e2e", base_url=base, max_retries=0)
            worker = EnvironmentWorker(client, environment_id=env.id, environment_key="envkey-e2e",
                                       workdir=tmp_path, tools=[get_order_status],
                                       memory_sync_interval=None)
            task = asyncio.create_task(worker.run())
            try:
                for _ in range(200):
                    if await asyncio.to_thread(ended):
                        return True
                    await asyncio.sleep(0.05)
                return False
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                await client.close()

        assert asyncio.run(main())
        results = [e for e in admin.beta.sessions.events.list(session.id, limit=100)
                   if e.type == "user.custom_tool_result"]
        assert len(results) == 1 and results[0].is_error is False  # type: ignore[union-attr]
        admin.beta.sessions.archive(session.id)
    finally:
        proc.terminate()
        proc.wait(10)


def test_environment_worker_under_simulator_mock(tmp_path: Path) -> None:
    """An unmodified ``AsyncAnthropic()`` (no transport given) under ``simulator.mock``."""
    import pytest

    simulator = pytest.importorskip("simulator")
    from simulator.cassette import default_fixtures_root
    from simulator.managed_agents import PATH_PREFIXES

    cassette = default_fixtures_root() / "managed_agents" / "custom" / "one_tool_use.json"
    if not cassette.exists() or not hasattr(simulator, "mock"):
        pytest.skip("simulator.mock or the Managed Agents cassettes are absent")
    sim = ManagedAgentsSimulator()
    env = sim.create_environment()
    agent = sim.create_agent([declaration("get_order_status")])
    session = sim.create_session(Scenario.of("one", [("get_order_status", {"order_id": "5"})]),
                                 agent=agent, environment_id=env.id, start=True)

    async def main() -> bool:
        client = AsyncAnthropic(auth_token=env.key)
        worker = EnvironmentWorker(client, environment_id=env.id, environment_key=env.key,
                                   workdir=tmp_path, tools=[get_order_status],
                                   memory_sync_interval=None)
        task = asyncio.create_task(worker.run())
        try:
            for _ in range(300):
                if sim.session(session.id).finished:
                    return True
                await asyncio.sleep(0.05)
            return False
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    with simulator.mock(str(cassette), mounts=[(p, sim) for p in PATH_PREFIXES]):
        assert asyncio.run(main())
    (result,) = [r for rs in sim.session(session.id).results.values() for r in rs]
    assert result["content"] == [{"type": "text", "text": "Order 5: shipped"}]
    sim.close_streams()


def test_the_seed_worker_serves_built_in_and_custom_tools(tmp_path: Path) -> None:
    """Seed 004's worker, as written: the built-in toolset plus a custom tool. The agent's bash
    call (``agent.tool_use``) runs in the worker's workdir and comes back as ``user.tool_result``."""
    from anthropic.lib.tools.agent_toolset import beta_agent_toolset_20260401

    sim = ManagedAgentsSimulator()
    env = sim.create_environment()
    agent = sim.create_agent([{"type": "agent_toolset_20260401"}, declaration("get_order_status")])
    scenario = Scenario.of("seed", [
        ("bash", {"command": "echo hello > greeting.txt && cat greeting.txt"}),
        ("get_order_status", {"order_id": "7"})])
    session = sim.create_session(scenario, agent=agent, environment_id=env.id, start=True)

    async def main() -> bool:
        client = AsyncAnthropic(auth_token=env.key, base_url=BASE, max_retries=0,
                                http_client=httpx2.AsyncClient(
                                    transport=ThreadedAsyncTransport(sim), base_url=BASE))
        worker = EnvironmentWorker(client, environment_id=env.id, environment_key=env.key,
                                   workdir=tmp_path, memory_sync_interval=None,
                                   tools=lambda env: [*beta_agent_toolset_20260401(env),
                                                      get_order_status])
        task = asyncio.create_task(worker.run())
        try:
            return await asyncio.to_thread(sim.wait_for,
                                           lambda: sim.session(session.id).finished, 30)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await client.close()

    assert asyncio.run(main())
    s = sim.session(session.id)
    bash_use = next(e for e in s.events if e["type"] == "agent.tool_use")
    (bash_result,) = s.results[bash_use["id"]]
    assert bash_result["type"] == "user.tool_result" and not bash_result.get("is_error")
    assert "hello" in str(bash_result["content"])
    assert [p.read_text().strip() for p in tmp_path.rglob("greeting.txt")] == ["hello"]
    custom = next(e for e in s.events if e["type"] == "agent.custom_tool_use")
    assert s.results[custom["id"]][0]["type"] == "user.custom_tool_result"
    assert sim.violations == []
