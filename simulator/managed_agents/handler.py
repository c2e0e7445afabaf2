"""The Managed Agents simulation as a :data:`simulator.http.Handler` for ``/v1/sessions...``,
``/v1/agents...`` and ``/v1/environments...``.

    sim = ManagedAgentsSimulator()
    env = sim.create_environment("ci")                 # self-hosted; env.key is its key
    agent = sim.create_agent([{"type": "custom", "name": "get_order_status", ...}])
    session = sim.create_session(Scenario.of("s", [("get_order_status", {"order_id": "1"})]),
                                 agent=agent, environment_id=env.id, start=True)
    # now any client (the SDK's EnvironmentWorker, a worker in any language) talks to `sim`
    # through a transport or `tooluse serve`; `sim.log` and `sim.violations` say what it did.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from simulator.errors import api_error
from simulator.http import SimRequest, SimResponse

from . import sessions as S
from . import work as W
from .base import _Refusal
from .endpoints import SessionEndpoints
from .scenario import Scenario
from .state import Agent, Session, WorkItem
from .work_endpoints import WorkEndpoints

PATH_PREFIXES = ("/v1/sessions", "/v1/agents", "/v1/environments")

_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(p + r"/?$"), name) for m, p, name in [
        ("GET", r"/v1/environments/(?P<env>[^/]+)/work/poll", "work_poll"),
        ("GET", r"/v1/environments/(?P<env>[^/]+)/work/stats", "work_stats"),
        ("GET", r"/v1/environments/(?P<env>[^/]+)/work", "work_list"),
        ("GET", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)", "work_get"),
        ("POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)", "work_update"),
        ("POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)/ack", "work_ack"),
        ("POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)/heartbeat", "work_heartbeat"),
        ("POST", r"/v1/environments/(?P<env>[^/]+)/work/(?P<work>[^/]+)/stop", "work_stop"),
        ("GET", r"/v1/environments", "env_list"),
        ("POST", r"/v1/environments", "env_create"),
        ("GET", r"/v1/environments/(?P<env>[^/]+)", "env_get"),
        ("GET", r"/v1/agents", "agent_list"),
        ("POST", r"/v1/agents", "agent_create"),
        ("GET", r"/v1/agents/(?P<agent>[^/]+)", "agent_get"),
        ("GET", r"/v1/sessions", "session_list"),
        ("POST", r"/v1/sessions", "session_create"),
        ("GET", r"/v1/sessions/(?P<session>[^/]+)", "session_get"),
        ("POST", r"/v1/sessions/(?P<session>[^/]+)", "session_update"),
        ("DELETE", r"/v1/sessions/(?P<session>[^/]+)", "session_delete"),
        ("POST", r"/v1/sessions/(?P<session>[^/]+)/archive", "session_archive"),
        ("GET", r"/v1/sessions/(?P<session>[^/]+)/events", "events_list"),
        ("POST", r"/v1/sessions/(?P<session>[^/]+)/events", "events_send"),
        ("GET", r"/v1/sessions/(?P<session>[^/]+)/events/stream", "events_stream"),
    ]
]



class ManagedAgentsSimulator(SessionEndpoints, WorkEndpoints):
    """Sessions, events and the self-hosted work API, answering like the API (a ``Handler``).

    The handler blocks by design (long polls, event streams): serve it from threads, as
    ``tooluse serve`` and :class:`.transport.ThreadedAsyncTransport` do. ``long_poll=False`` answers
    an empty ``work/poll`` at once with ``delay = block_ms`` so the transport waits instead.
    ``max_tools``: the agent ``tools`` limit (256 per seed 004; PROTOCOL.md "Known discrepancies").
    """

    path_prefixes = PATH_PREFIXES

    # -- the Python surface (what harnesses call directly) ---------------------------------

    def create_session(self, scenario: Scenario | None, *, agent: Agent, environment_id: str,
                       start: bool = False, text: str = "Go.") -> Session:
        with self.store.lock:
            session = S.create_session(self.store, agent, environment_id,
                                       scenario or self.default_scenario)
            if start:
                self.send_user_message(session.id, text)
            return session

    def send_user_message(self, session_id: str, text: str) -> None:
        with self.store.lock:
            S.receive(self.store, self.store.sessions[session_id],
                      {"type": "user.message", "content": [{"type": "text", "text": text}]})

    def archive(self, session_id: str) -> None:
        with self.store.lock:
            S.terminate(self.store, self.store.sessions[session_id], archived=True)

    def take_lease(self, work_id: str) -> None:
        """Simulate another worker heartbeating the item: the holder's next heartbeat gets 412."""
        with self.store.lock:
            W.take_lease(self.store, self.store.work[work_id])

    def close_streams(self) -> None:
        self.store.close_streams()

    def session(self, session_id: str) -> Session:
        return self.store.sessions[session_id]

    def work_items(self, session_id: str | None = None) -> list[WorkItem]:
        with self.store.lock:
            return [w for w in self.store.work.values()
                    if session_id is None or w.session_id == session_id]

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait (real time, at most ``timeout`` s) until ``predicate()`` holds under the lock."""
        with self.store.cond:
            return self.store.cond.wait_for(predicate, timeout)

    # -- the Handler ------------------------------------------------------------------------

    def __call__(self, request: SimRequest) -> SimResponse:
        route = self._route(request)
        try:
            if route is None:
                resp = api_error(404, "not_found_error",
                                 f"{request.method} {request.path} is not a Managed Agents endpoint")
            else:
                name, params = route
                self._check_beta(request)
                resp = getattr(self, "_" + name)(request, **params)
        except _Refusal as r:
            resp = r.response
        self._record(request, resp)
        return resp

    def _route(self, request: SimRequest) -> tuple[str, dict[str, str]] | None:
        for method, pattern, name in _ROUTES:
            m = pattern.match(request.path)
            if m and method == request.method:
                return name, m.groupdict()
        return None

