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

import json
import re
import time
from collections.abc import Callable
from typing import Any

from simulator.clock import Clock
from simulator.errors import api_error, new_request_id
from simulator.http import SimRequest, SimResponse, json_headers

from . import sessions as S
from . import work as W
from .rules import (
    ACK_STATE,
    BETA_HEADER,
    BLOCK_MS,
    DECLARATION,
    EVENT_SCHEMA,
    RESULT_ANSWERS_PENDING,
    RESULT_ONCE,
    SESSION_TERMINATED,
    WORK_AUTH,
    Rule,
)
from .scenario import EMPTY, Scenario
from .state import Agent, Environment, Session, WorkItem
from .store import RequestRecord, Store, Violation
from .stream import LiveEvents

PATH_PREFIXES = ("/v1/sessions", "/v1/agents", "/v1/environments")
BETA = "managed-agents-2026-04-01"
DEFAULT_MODEL = "claude-opus-5"

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


class _Refusal(Exception):
    def __init__(self, response: SimResponse) -> None:
        self.response = response


class ManagedAgentsSimulator:
    """Sessions, events and the self-hosted work API, answering like the API (a ``Handler``).

    The handler blocks by design (long polls, event streams): serve it from threads, as
    ``tooluse serve`` and :class:`.transport.ThreadedAsyncTransport` do. ``long_poll=False`` answers
    an empty ``work/poll`` at once with ``delay = block_ms`` so the transport waits instead.
    ``max_tools``: the agent ``tools`` limit (256 per seed 004; PROTOCOL.md "Known discrepancies").
    """

    path_prefixes = PATH_PREFIXES

    def __init__(self, *, clock: Clock | None = None, long_poll: bool = True,
                 scenarios: dict[str, Scenario] | None = None, default_scenario: Scenario = EMPTY,
                 require_beta_header: bool = True, max_tools: int = 256) -> None:
        self.store = Store(clock)
        self.long_poll = long_poll
        self.scenarios = dict(scenarios or {})
        self.default_scenario = default_scenario
        self.require_beta_header = require_beta_header
        self.max_tools = max_tools
        #: Called after every answered request (tests and checks hook in here).
        self.on_request: Callable[[RequestRecord], None] | None = None

    # -- the Python surface (what harnesses call directly) ---------------------------------

    @property
    def log(self) -> list[RequestRecord]:
        return self.store.log

    @property
    def violations(self) -> list[Violation]:
        return self.store.violations

    def create_environment(self, name: str = "self-hosted", *, lease_ttl_seconds: int = 90,
                           config: dict[str, Any] | None = None) -> Environment:
        with self.store.lock:
            st = self.store
            env = Environment(st.ids.new("env"), name, "envkey_" + new_request_id()[8:],
                              st.now(), dict(config or {"type": "self_hosted"}),
                              lease_ttl_seconds=lease_ttl_seconds)
            st.environments[env.id] = env
            st.changed()
            return env

    def create_agent(self, tools: list[dict[str, Any]], *, name: str = "agent",
                     model: str = DEFAULT_MODEL, system: str | None = None) -> Agent:
        with self.store.lock:
            agent = Agent(self.store.ids.new("agent"), name, model, list(tools), self.store.now(),
                          system)
            self.store.agents[agent.id] = agent
            return agent

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

    def handles(self, path: str) -> bool:
        return path.startswith(PATH_PREFIXES)

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

    # -- plumbing -----------------------------------------------------------------------------

    def _route(self, request: SimRequest) -> tuple[str, dict[str, str]] | None:
        for method, pattern, name in _ROUTES:
            m = pattern.match(request.path)
            if m and method == request.method:
                return name, m.groupdict()
        return None

    def _record(self, request: SimRequest, resp: SimResponse) -> None:
        try:
            body = request.json() if request.body else None
        except (ValueError, RecursionError):
            body = request.body.decode("utf-8", "replace")
        auth = request.headers.get("authorization", "")
        cred = auth[7:] if auth.lower().startswith("bearer ") else request.headers.get("x-api-key")
        with self.store.lock:
            rec = RequestRecord(self.store.now(), request.method, request.path,
                                dict(request.query), body, resp.status,
                                None if resp.is_stream else resp.body,
                                request.headers.get("anthropic-worker-id"), cred,
                                len(self.store.log))
            self.store.log.append(rec)
            self.store.changed()
        if self.on_request is not None:
            self.on_request(rec)

    def _refuse(self, rule: Rule, message: str, request: SimRequest,
                details: dict[str, Any] | None = None) -> _Refusal:
        try:
            body = request.json() if request.body else None
        except (ValueError, RecursionError):
            body = None
        with self.store.lock:
            self.store.violations.append(Violation(
                rule.id, message, {"method": request.method, "path": request.path,
                                   "query": dict(request.query), "body": body}, rule.status))
        resp = api_error(rule.status, None, message)
        if details is not None:
            resp.body["error"]["details"] = details
        return _Refusal(resp)

    def _check_beta(self, request: SimRequest) -> None:
        if not self.require_beta_header:
            return
        betas = [b.strip() for b in request.headers.get("anthropic-beta", "").split(",")]
        if BETA not in betas:
            raise self._refuse(BETA_HEADER, f"{request.path} requires the `anthropic-beta: {BETA}` "
                               "header (Managed Agents is in beta); add it to the request", request)

    @staticmethod
    def _ok(body: Any, status: int = 200) -> SimResponse:
        return SimResponse(status, json_headers({"request-id": new_request_id()}), body)

    def _json(self, request: SimRequest) -> dict[str, Any]:
        try:
            body = request.json() if request.body else {}
        except (ValueError, RecursionError) as e:
            raise _Refusal(api_error(400, None, f"request body is not valid JSON: {e}")) from None
        if not isinstance(body, dict):
            raise _Refusal(api_error(400, None, "request body must be a JSON object"))
        return body

    def _env(self, env_id: str) -> Environment:
        env = self.store.environments.get(env_id)
        if env is None:
            raise _Refusal(api_error(404, None, f"environment {env_id} not found"))
        return env

    def _session_of(self, session_id: str) -> Session:
        s = self.store.sessions.get(session_id)
        if s is None:
            raise _Refusal(api_error(404, None, f"session {session_id} not found"))
        return s

    def _work_of(self, env: Environment, work_id: str) -> WorkItem:
        item = self.store.work.get(work_id)
        if item is None or item.environment_id != env.id:
            raise _Refusal(api_error(404, None, f"work item {work_id} not found in {env.id}"))
        return item

    def _auth_work(self, request: SimRequest, env: Environment) -> None:
        auth = request.headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        if token is None or (env.key and token != env.key):
            raise self._refuse(WORK_AUTH, "the work API needs `Authorization: Bearer "
                               "<environment key>` for this environment", request)

    # -- environments and agents --------------------------------------------------------------

    def _env_create(self, request: SimRequest) -> SimResponse:
        body = self._json(request)
        env = self.create_environment(str(body.get("name") or "self-hosted"),
                                      config=body.get("config") or {"type": "self_hosted"})
        metadata = body.get("metadata") or {}
        with self.store.lock:
            env.metadata = {str(k): str(v) for k, v in metadata.items()
                            if k != "tooluse_environment_key"}
            # Over HTTP the client cannot learn a generated key: it names one in metadata, or
            # the environment accepts any bearer token.
            env.key = str(metadata.get("tooluse_environment_key") or "")
        return self._ok(env.to_json())

    def _env_list(self, request: SimRequest) -> SimResponse:
        with self.store.lock:
            return self._ok({"data": [e.to_json() for e in self.store.environments.values()],
                             "next_page": None})

    def _env_get(self, request: SimRequest, env: str) -> SimResponse:
        with self.store.lock:
            return self._ok(self._env(env).to_json())

    def _agent_create(self, request: SimRequest) -> SimResponse:
        from simulator.declarations import check_agent_tools

        body = self._json(request)
        tools = body.get("tools") or []
        if not isinstance(tools, list):
            raise _Refusal(api_error(400, None, "`tools` must be a list"))
        findings = check_agent_tools(tools, max_tools=self.max_tools)
        if findings:
            raise self._refuse(DECLARATION, findings[0].message, request)
        model = body.get("model") or DEFAULT_MODEL
        model_id = model.get("id") if isinstance(model, dict) else model
        agent = self.create_agent(tools, name=str(body.get("name") or "agent"),
                                  model=str(model_id), system=body.get("system"))
        return self._ok(agent.to_json())

    def _agent_list(self, request: SimRequest) -> SimResponse:
        with self.store.lock:
            return self._ok({"data": [a.to_json() for a in self.store.agents.values()],
                             "next_page": None})

    def _agent_get(self, request: SimRequest, agent: str) -> SimResponse:
        with self.store.lock:
            a = self.store.agents.get(agent)
            if a is None:
                raise _Refusal(api_error(404, None, f"agent {agent} not found"))
            return self._ok(a.to_json())

    # -- sessions -------------------------------------------------------------------------------

    def _session_create(self, request: SimRequest) -> SimResponse:
        body = self._json(request)
        ref = body.get("agent")
        agent_id = ref.get("id") if isinstance(ref, dict) else ref
        env_id = body.get("environment_id")
        if not isinstance(agent_id, str) or not isinstance(env_id, str):
            raise _Refusal(api_error(400, None, "a session needs `agent` (an agent id) and "
                                     "`environment_id`"))
        with self.store.lock:
            agent = self.store.agents.get(agent_id)
            if agent is None:
                raise _Refusal(api_error(404, None, f"agent {agent_id} not found"))
            self._env(env_id)
            metadata = {str(k): str(v) for k, v in (body.get("metadata") or {}).items()}
            scenario = self._scenario_named(metadata.get("tooluse_scenario"))
            session = S.create_session(self.store, agent, env_id, scenario, metadata=metadata,
                                       title=body.get("title"))
            return self._ok(session.to_json())

    def _scenario_named(self, value: str | None) -> Scenario:
        """``metadata.tooluse_scenario``: a registered scenario's name, a Managed Agents cassette id
        of the corpus (``managed_agents/custom/one_tool_use``), or a JSON script
        ``[[["tool", {input}], ...], ...]`` (one list of tool uses per turn)."""
        if not value:
            return self.default_scenario
        if value in self.scenarios:
            return self.scenarios[value]
        if value.startswith("managed_agents/"):
            from .scenario import corpus_scenarios

            self.scenarios.update(corpus_scenarios())
            if value in self.scenarios:
                return self.scenarios[value]
        try:
            turns = json.loads(value)
            return Scenario.of("metadata", *[[(str(n), dict(i)) for n, i in t] for t in turns])
        except (ValueError, TypeError, AttributeError):
            raise _Refusal(api_error(400, None, f"metadata.tooluse_scenario {value!r} is neither a "
                                     "known scenario nor a JSON list of turns "
                                     '[[["tool", {"input": 1}]]]')) from None

    def _session_list(self, request: SimRequest) -> SimResponse:
        with self.store.lock:
            return self._ok({"data": [s.to_json() for s in self.store.sessions.values()],
                             "next_page": None})

    def _session_get(self, request: SimRequest, session: str) -> SimResponse:
        with self.store.lock:
            return self._ok(self._session_of(session).to_json())

    def _session_update(self, request: SimRequest, session: str) -> SimResponse:
        body = self._json(request)
        with self.store.lock:
            s = self._session_of(session)
            for k, v in (body.get("metadata") or {}).items():
                if v is None:
                    s.metadata.pop(str(k), None)
                else:
                    s.metadata[str(k)] = str(v)
            if "title" in body:
                s.title = body["title"]
            return self._ok(s.to_json())

    def _session_delete(self, request: SimRequest, session: str) -> SimResponse:
        with self.store.lock:
            s = self._session_of(session)
            S.terminate(self.store, s)
            S.append(self.store, s, {"type": "session.deleted"})
            del self.store.sessions[session]
            return self._ok({"id": session, "type": "session_deleted"})

    def _session_archive(self, request: SimRequest, session: str) -> SimResponse:
        with self.store.lock:
            s = self._session_of(session)
            S.terminate(self.store, s, archived=True)
            return self._ok(s.to_json())

    def _events_list(self, request: SimRequest, session: str) -> SimResponse:
        q = request.query
        try:
            limit = int(q.get("limit", "20"))
            start = int(q.get("page") or 0)
        except ValueError:
            raise _Refusal(api_error(400, None, "`limit` and `page` must be integers")) from None
        with self.store.lock:
            events = list(self._session_of(session).events)
        types = {t for k, v in q.items() if k.startswith("types") for t in v.split(",") if t}
        if types:
            events = [e for e in events if e["type"] in types]
        if q.get("order") == "desc":
            events.reverse()
        page = events[start:start + max(1, limit)]
        more = start + len(page) < len(events)
        return self._ok({"data": page, "next_page": str(start + len(page)) if more else None})

    def _events_send(self, request: SimRequest, session: str) -> SimResponse:
        body = self._json(request)
        events = body.get("events")
        if not isinstance(events, list) or not events:
            raise self._refuse(EVENT_SCHEMA, "the body needs `events`, a non-empty list", request)
        with self.store.lock:
            s = self._session_of(session)
            if s.status == "terminated":
                raise self._refuse(SESSION_TERMINATED, f"session {session} is terminated and "
                                   "accepts no events", request)
            batch: set[str] = set()
            for ev in events:
                why = S.check_event(ev)
                if why:
                    raise self._refuse(EVENT_SCHEMA, why, request)
                if ev["type"] == "user.custom_tool_result":
                    use_id = ev["custom_tool_use_id"]
                    self._check_result(request, s, use_id, batch)
                    batch.add(use_id)
            echoes = [S.receive(self.store, s, dict(ev), settle_now=False) for ev in events]
            S.settle(self.store, s)
            return self._ok({"data": echoes})

    def _check_result(self, request: SimRequest, s: Session, use_id: str,
                      batch: set[str]) -> None:
        use = s.event(use_id)
        if use_id in s.results or use_id in batch:
            raise self._refuse(RESULT_ONCE, f"agent.custom_tool_use {use_id} was already "
                               "answered; send one user.custom_tool_result per tool use", request)
        if use is None or use["type"] != "agent.custom_tool_use" or use_id not in s.pending:
            raise self._refuse(RESULT_ANSWERS_PENDING, f"custom_tool_use_id {use_id!r} does not "
                               f"name a pending agent.custom_tool_use event of session {s.id}; "
                               "use the `id` of the agent.custom_tool_use event", request)

    def _events_stream(self, request: SimRequest, session: str) -> SimResponse:
        with self.store.lock:
            self._session_of(session)
        return SimResponse(200, {"content-type": "text/event-stream; charset=utf-8",
                                 "request-id": new_request_id()},
                           events=LiveEvents(self.store, session))

    # -- work -------------------------------------------------------------------------------------

    def _work_poll(self, request: SimRequest, env: str) -> SimResponse:
        q = request.query
        block_ms: int | None = None
        if q.get("block_ms") not in (None, ""):
            try:
                block_ms = int(q["block_ms"])
            except ValueError:
                block_ms = -1
            if not 1 <= block_ms <= 999:
                raise self._refuse(BLOCK_MS, f"block_ms must be between 1 and 999, got "
                                   f"{q['block_ms']!r}; omit it for a non-blocking poll", request)
        reclaim = int(q.get("reclaim_older_than_ms") or W.DEFAULT_RECLAIM_MS)
        worker_id = request.headers.get("anthropic-worker-id")
        with self.store.cond:
            e = self._env(env)
            self._auth_work(request, e)
            item = W.claim(self.store, e.id, worker_id, reclaim)
            if item is None and block_ms and self.long_poll:
                deadline = time.monotonic() + block_ms / 1000
                while item is None and (left := deadline - time.monotonic()) > 0:
                    self.store.cond.wait(left)
                    item = W.claim(self.store, e.id, worker_id, reclaim)
            if item is None:
                resp = self._ok(b"null")
                if block_ms and not self.long_poll:
                    resp.delay = block_ms / 1000
                return resp
            return self._ok(item.to_json())

    def _work_stats(self, request: SimRequest, env: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            return self._ok(W.stats(self.store, e.id))

    def _work_list(self, request: SimRequest, env: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            W.expire_leases(self.store)
            items = [w.to_json() for w in self.store.work.values() if w.environment_id == e.id]
            return self._ok({"data": items, "next_page": None})

    def _work_get(self, request: SimRequest, env: str, work: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            W.expire_leases(self.store)
            return self._ok(self._work_of(e, work).to_json())

    def _work_update(self, request: SimRequest, env: str, work: str) -> SimResponse:
        body = self._json(request)
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            for k, v in (body.get("metadata") or {}).items():
                if v is None:
                    item.metadata.pop(str(k), None)
                else:
                    item.metadata[str(k)] = str(v)
            self.store.changed()
            return self._ok(item.to_json())

    def _work_ack(self, request: SimRequest, env: str, work: str) -> SimResponse:
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            why = W.ack(item, self.store)
            if why:
                raise self._refuse(ACK_STATE, why, request)
            return self._ok(item.to_json())

    def _work_heartbeat(self, request: SimRequest, env: str, work: str) -> SimResponse:
        q = request.query
        try:
            ttl = int(q["desired_ttl_seconds"]) if q.get("desired_ttl_seconds") else None
        except ValueError:
            raise _Refusal(api_error(400, None, "desired_ttl_seconds must be an integer")) from None
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            status, body = W.heartbeat(item, self.store, q.get("expected_last_heartbeat"), ttl)
            if status == 412:
                resp = api_error(412, "precondition_failed_error",
                                 "expected_last_heartbeat does not match the stored heartbeat; "
                                 "another worker may hold the lease")
                resp.body["error"]["details"] = {"error_code": "heartbeat_precondition_failed",
                                                 "current_state": body}
                return resp
            return self._ok(body)

    def _work_stop(self, request: SimRequest, env: str, work: str) -> SimResponse:
        body = self._json(request)
        with self.store.lock:
            e = self._env(env)
            self._auth_work(request, e)
            item = self._work_of(e, work)
            why = W.stop(item, self.store, bool(body.get("force")))
            if why:
                return api_error(409, "conflict_error", why)
            return self._ok(item.to_json())


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))
