"""Environments, agents, sessions and session events (PROTOCOL.md §7)."""

from __future__ import annotations

import json

from simulator.errors import api_error, new_request_id
from simulator.http import SimRequest, SimResponse

from . import sessions as S
from .base import DEFAULT_MODEL, Base, _Refusal
from .rules import (
    DECLARATION,
    EVENT_SCHEMA,
    RESULT_ANSWERS_PENDING,
    RESULT_ONCE,
    SESSION_TERMINATED,
    SYSTEM_MESSAGE,
)
from .scenario import Scenario
from .state import Session
from .stream import LiveEvents


class SessionEndpoints(Base):
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
        # `types[]=a&types[]=b` as the SDK sends a list (its session runner filters its history
        # so), or one comma-separated `types`
        types = {t for k in q if k.startswith("types") for v in request.query_values(k)
                 for t in v.split(",") if t}
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
                use_id = S.result_use_id(ev)
                if use_id is not None:
                    self._check_result(request, s, ev["type"], use_id, batch)
                    batch.add(use_id)
                elif ev["type"] == "system.message" and s.pending and not batch:
                    raise self._refuse(SYSTEM_MESSAGE, "the session is waiting for tool results "
                                       "(requires_action): send the `system.message` after a "
                                       "tool-result event in the same request", request)
            echoes = [S.receive(self.store, s, dict(ev), settle_now=False) for ev in events]
            S.settle(self.store, s)
            return self._ok({"data": echoes})

    def _check_result(self, request: SimRequest, s: Session, kind: str, use_id: str,
                      batch: set[str]) -> None:
        id_field, use_type = S.RESULTS[kind]
        use = s.event(use_id)
        if use_id in s.results or use_id in batch:
            raise self._refuse(RESULT_ONCE, f"{use_type} {use_id} was already answered; send one "
                               f"{kind} per tool use", request)
        if use is None or use["type"] != use_type or use_id not in s.pending:
            raise self._refuse(RESULT_ANSWERS_PENDING, f"{id_field} {use_id!r} does not name a "
                               f"pending {use_type} event of session {s.id}; use the `id` of the "
                               f"{use_type} event", request)

    def _events_stream(self, request: SimRequest, session: str) -> SimResponse:
        with self.store.lock:
            self._session_of(session)
        return SimResponse(200, {"content-type": "text/event-stream; charset=utf-8",
                                 "request-id": new_request_id()},
                           events=LiveEvents(self.store, session))

