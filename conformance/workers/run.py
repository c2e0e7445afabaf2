"""One run of a worker under test against a fresh Managed Agents simulation.

:class:`WorkerRun` sets up a self-hosted environment, an agent declaring the conformance toolset,
and scripted sessions; starts the worker (in-process coroutine on its own event loop thread, or a
command talking to a loopback HTTP server); and lets a check wait on the simulation's state and read
what the worker sent (:attr:`log`). :meth:`stop` cancels the worker and tears everything down.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from conformance.subjects.host import accepts_keyword
from conformance.subjects.launch import Confinement, launch_networked
from conformance.subjects.timing import (
    MAX_ALLOWANCE,
    Miss,
    Patience,
    harness_lag,
    record,
    thread_delay,
    tree_delay,
)
from simulator.managed_agents import ManagedAgentsSimulator, RequestRecord, Scenario, Session

from .toolset import DECLARATIONS, sdk_tools

BASE_URL = "http://simulator.test"
#: Variables a command worker must not inherit (it gets the environment key, nothing else; the
#: environment is the subjects' allow-list, which drops every credential name besides these).
SCRUBBED_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def quiet_sdk_logs() -> None:
    """The SDK logs a worker's expected trouble (tool errors, a lost lease) at WARNING+; without
    a handler of the caller's, Python would print it on stderr in the middle of the report."""
    sdk = logging.getLogger("anthropic")
    if not sdk.handlers:
        sdk.addHandler(logging.NullHandler())


class WorkerRun:
    def __init__(self, *, scenarios: Sequence[Scenario], workdir: Path, tool_timeout: float,
                 lease_ttl_seconds: int = 90, confinement: Confinement) -> None:
        self.sim = ManagedAgentsSimulator()
        self.env = self.sim.create_environment("conformance", lease_ttl_seconds=lease_ttl_seconds)
        self.agent = self.sim.create_agent(DECLARATIONS, name="conformance-agent")
        self.sessions: list[Session] = [
            self.sim.create_session(sc, agent=self.agent, environment_id=self.env.id, start=True)
            for sc in scenarios]
        self.workdir = workdir
        self.tool_timeout = tool_timeout
        #: The run's sandbox mode and limits, for a worker command.
        self.confinement = confinement
        #: What went wrong with the worker itself (raised, exited), for the report.
        self.faults: list[str] = []
        self._stop_worker: Callable[[], None] | None = None
        self._stop_server: Callable[[], None] | None = None
        self._lag_at_start = harness_lag()

    # -- starting a worker -------------------------------------------------------------------

    def start_coroutine(self, fn: Callable[..., Any]) -> None:
        """Run ``fn(client, environment_id, environment_key, [tools=], [timeout=], [workdir=])``
        on an event loop in a thread of its own."""
        import httpx2
        from anthropic import AsyncAnthropic

        from simulator.managed_agents.transport import ThreadedAsyncTransport

        quiet_sdk_logs()
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        holder: dict[str, Any] = {}

        async def main() -> None:
            client = AsyncAnthropic(
                auth_token=self.env.key, base_url=BASE_URL, max_retries=1,
                http_client=httpx2.AsyncClient(transport=ThreadedAsyncTransport(self.sim),
                                               base_url=BASE_URL))
            kwargs: dict[str, Any] = {}
            if accepts_keyword(fn, "tools"):
                kwargs["tools"] = sdk_tools(self.tool_timeout)
            if accepts_keyword(fn, "timeout"):
                kwargs["timeout"] = self.tool_timeout
            if accepts_keyword(fn, "workdir"):
                kwargs["workdir"] = self.workdir
            holder["task"] = asyncio.current_task()
            ready.set()
            try:
                result = fn(client, self.env.id, self.env.key, **kwargs)
                if inspect.isawaitable(result):
                    await result
            except asyncio.CancelledError:
                pass
            except Exception as e:  # the subject's fault, reported by the check
                self.faults.append(f"the worker raised {type(e).__name__}: {e}")
            finally:
                await client.close()

        def thread_main() -> None:
            self._worker_thread = threading.get_native_id()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(main())
                # Teardown: whatever the worker left running is cancelled quietly (a cancelled
                # worker's half-read streams are not the subject's fault).
                loop.set_exception_handler(lambda _loop, _context: None)
                leftovers = asyncio.all_tasks(loop)
                for task in leftovers:
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                ready.set()
                asyncio.set_event_loop(None)
                loop.close()

        thread = threading.Thread(target=thread_main, name="tooluse-worker", daemon=True)
        thread.start()
        ready.wait(10)

        def stop() -> None:
            task = holder.get("task")
            if task is not None and not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(task.cancel)
                except RuntimeError:
                    pass
            self.sim.close_streams()
            thread.join(10)
            if thread.is_alive():
                self.faults.append("the worker did not stop within 10s of being cancelled")

        self._stop_worker = stop

    def start_command(self, command: str) -> None:
        """Run ``command`` (``/bin/sh -c``) with the base URL, environment id and key in its
        environment, against the simulation served on loopback."""
        from simulator.server import start_server

        base, self._stop_server = start_server(self.sim, threaded=True)
        proc, home = self._start(command, {
            "ANTHROPIC_BASE_URL": base, "TOOLUSE_ENVIRONMENT_ID": self.env.id,
            "TOOLUSE_ENVIRONMENT_KEY": self.env.key, "ANTHROPIC_ENVIRONMENT_ID": self.env.id,
            "ANTHROPIC_ENVIRONMENT_KEY": self.env.key})
        self._worker_pid = proc.pid

        def stop() -> None:
            if proc.poll() is not None:
                err = (proc.stderr.read() if proc.stderr else b"").decode("utf-8", "replace")
                self.faults.append(f"the worker command exited with status {proc.returncode}"
                                   + (f": {err.strip()[-500:]}" if err.strip() else ""))
            else:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(proc.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        proc.wait(3)
                        break
                    except subprocess.TimeoutExpired:
                        continue
            if proc.stderr:
                proc.stderr.close()
            if home is not None:
                shutil.rmtree(home, ignore_errors=True)

        self._stop_worker = stop

    def _start(self, command: str, extra: dict[str, str]) -> tuple[Any, Path]:
        """Start ``command`` under ``/bin/sh -c``, in the sandbox when it is on: the subjects'
        environment (no credential of the user's) with ``extra``, a private HOME and TMPDIR, the
        tool timeout and the working directory. The worker shares the network namespace (it
        reaches the simulation on loopback); everything else is as for tool subjects: read-only
        root, only its working directory and private HOME writable, own PID namespace, no
        capabilities, gone with the run. Returns the process and the HOME to remove."""
        started, home = launch_networked(
            command, Path(self.workdir), {"TOOLUSE_TOOL_TIMEOUT": f"{self.tool_timeout:g}"},
            granted=extra, prefix="tooluse-worker-home-", confinement=self.confinement,
            label="the worker command", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        return started.proc, home

    # -- observing ---------------------------------------------------------------------------

    @property
    def log(self) -> list[RequestRecord]:
        return self.sim.log

    def _starved(self) -> float:
        pid = getattr(self, "_worker_pid", None)
        if pid is not None:
            return harness_lag() + tree_delay(pid)
        # An in-process worker: the CPU its event loop's thread waited for.
        return harness_lag() + thread_delay(getattr(self, "_worker_thread", None))

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` holds, at most ``timeout`` s plus the allowance for
        measured load; a deadline that passes is recorded for re-judging (subjects/timing.py)."""
        return Patience(timeout, "worker", self._starved).wait(
            lambda t: True if self.sim.wait_for(predicate, t) else None) is True

    def pause(self, seconds: float) -> None:
        """Let the worker act for ``seconds`` of its own time: the window (for answers that
        should not come) grows by the load measured meanwhile, as a deadline does
        (subjects/timing.py), so that a busy machine does not close it before a broken worker
        had the CPU to act. Nothing is awaited: no deadline, no miss."""
        Patience(seconds, "worker", self._starved).wait(
            lambda t: None if not self.sim.wait_for(lambda: False, t) else True,
            record_miss=False)

    def wait_progress(self, predicate: Callable[[], bool], *, idle: float = 5.0,
                      total: float = 30.0) -> bool:
        """Wait until ``predicate()`` holds; give up after ``total`` seconds, or once the worker
        has started (sent a request) and then nothing changed for ``idle`` seconds (both plus
        the allowance for measured load; a give-up is recorded for re-judging)."""
        store = self.sim.store
        start, base = time.monotonic(), self._starved()
        with store.cond:
            version, changed_at = store.version, time.monotonic()
            while not predicate():
                now = time.monotonic()
                allowance = min(max(0.0, self._starved() - base), MAX_ALLOWANCE * total)
                if now >= start + total + allowance or (
                        store.version == version and store.log
                        and now - changed_at >= idle + allowance):
                    record(Miss("worker", total, now - start, allowance))
                    return False
                if store.version != version:
                    version, changed_at = store.version, now
                store.cond.wait(0.1)
            return True

    def expire_leases(self) -> None:
        """Apply lease expiry now (the simulation otherwise applies it on the next request)."""
        from simulator.managed_agents import work as W

        with self.sim.store.lock:
            W.expire_leases(self.sim.store)

    def session(self, i: int = 0) -> Session:
        return self.sim.session(self.sessions[i].id)

    def tool_uses(self, i: int = 0) -> list[dict[str, Any]]:
        return [e for e in self.session(i).events if e["type"] == "agent.custom_tool_use"]

    def archive_finished(self) -> bool:
        """Archive every session whose script ended (as a client app would); True when every
        work item is stopped. Use as a :meth:`wait` predicate."""
        from simulator.managed_agents import sessions as S

        for s in self.sessions:
            live = self.sim.session(s.id)
            if live.finished and live.status != "terminated":
                S.terminate(self.sim.store, live, archived=True)
        items = self.sim.work_items()
        return bool(items) and all(w.state == "stopped" for w in items)

    def requests_summary(self, limit: int = 40) -> list[dict[str, Any]]:
        """The worker's requests, in order (the failure's reproducer)."""
        out = []
        for r in self.log[-limit:]:
            entry: dict[str, Any] = {"method": r.method, "path": r.path, "status": r.status}
            if r.query:
                entry["query"] = r.query
            if r.body is not None:
                entry["body"] = r.body
            out.append(entry)
        return out

    def record_lapsed_leases(self) -> None:
        """A lease that ran out while the worker was heartbeating its item (a heartbeat came
        later than the TTL: a deadline in the simulation, as a busy machine can make any worker
        miss) is recorded like any deadline that passed, so that a failure of the check is
        re-judged alone (subjects/timing.py). A lease that ran out on an item the worker never
        heartbeat is not a matter of time."""
        for item in self.sim.work_items():
            if not item.leases_expired:
                continue
            times = sorted(r.at for r in self.log
                           if r.path.endswith((f"/{item.id}/ack", f"/{item.id}/heartbeat")))
            if not any(r.path.endswith(f"/{item.id}/heartbeat") for r in self.log):
                continue
            gap = max(((b - a).total_seconds() for a, b in pairwise(times)),
                      default=float(item.ttl_seconds))
            record(Miss("lease", float(item.ttl_seconds), gap,
                        max(0.0, self._starved() - self._lag_at_start)))

    def stop(self) -> None:
        self.record_lapsed_leases()
        try:
            if self._stop_worker is not None:
                self._stop_worker()
                self._stop_worker = None
        finally:
            self.sim.close_streams()
            if self._stop_server is not None:
                self._stop_server()
                self._stop_server = None
