"""Shared plumbing of the Managed Agents handler: state, the Python surface to create objects,
request logging, API-shaped refusals, and lookups that answer 404."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simulator.clock import Clock
from simulator.errors import api_error, new_request_id
from simulator.http import SimRequest, SimResponse, json_headers

from .rules import (
    BETA_HEADER,
    WORK_AUTH,
    Rule,
)
from .scenario import EMPTY, Scenario
from .state import Agent, Environment, Session, WorkItem
from .store import RequestRecord, Store, Violation, trim

BETA = "managed-agents-2026-04-01"
DEFAULT_MODEL = "claude-opus-5"


class _Refusal(Exception):
    def __init__(self, response: SimResponse) -> None:
        self.response = response


class Base:
    """State, options and plumbing shared by the endpoint groups (see :class:`.ManagedAgentsSimulator`)."""

    def __init__(self, *, clock: Clock | None = None, long_poll: bool = True,
                 scenarios: dict[str, Scenario] | None = None, default_scenario: Scenario = EMPTY,
                 require_beta_header: bool = True, max_tools: int = 256,
                 log_limit: int | None = None) -> None:
        self.store = Store(clock, log_limit=log_limit)
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

    # -- plumbing ---------------------------------------------------------------------------

    def _record(self, request: SimRequest, resp: SimResponse) -> None:
        try:
            body = request.json() if request.body else None
        except (ValueError, RecursionError):
            body = request.body.decode("utf-8", "replace")
        auth = request.headers.get("authorization", "")
        cred = auth[7:] if auth.lower().startswith("bearer ") else request.headers.get("x-api-key")
        with self.store.lock:
            rec = RequestRecord(self.store.now(), request.method, request.path,
                                request.query_record(), body, resp.status,
                                None if resp.is_stream else resp.body,
                                request.headers.get("anthropic-worker-id"), cred,
                                self.store.next_seq)
            self.store.next_seq += 1
            self.store.log.append(rec)
            trim(self.store.log, self.store.log_limit)
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
                                   "query": request.query_record(), "body": body}, rule.status))
            trim(self.store.violations, self.store.log_limit)
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

