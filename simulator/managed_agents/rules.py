"""Rules the Managed Agents simulation enforces on requests, each with a stable id, a level and a
source. A violation is answered the way the API answers it and logged in
:attr:`ManagedAgentsSimulator.violations` with the rule id and the offending request.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.sources import SEED_MANAGED_AGENTS, Source, protocol, seed


@dataclass(frozen=True)
class Rule:
    id: str
    level: str
    status: int
    source: Source
    statement: str


RULES: dict[str, Rule] = {}


def _rule(id: str, level: str, status: int, source: Source, statement: str) -> Rule:
    if id in RULES:
        raise ValueError(f"rule {id!r} registered twice")
    RULES[id] = r = Rule(id, level, status, source, statement)
    return r


BETA_HEADER = _rule(
    "managed_agents.beta_header_required", "MUST", 400,
    protocol("7. Managed Agents (beta header)", "D"),
    "requests to /v1/agents, /v1/sessions and /v1/environments carry "
    "`anthropic-beta: managed-agents-2026-04-01`")
EVENT_SCHEMA = _rule(
    "managed_agents.events.schema", "MUST", 400, protocol("7. Managed Agents / Events", "S"),
    "sent events have a client event type and the fields of its params type")
RESULT_ANSWERS_PENDING = _rule(
    "managed_agents.custom_tool_result.answers_pending_use", "MUST", 400,
    seed(SEED_MANAGED_AGENTS, "Melayani alat kustom"),
    "a `user.custom_tool_result` names, in `custom_tool_use_id`, an `agent.custom_tool_use` "
    "event of the session that still waits for its result")
RESULT_ONCE = _rule(
    "managed_agents.custom_tool_result.answered_once", "MUST", 400,
    protocol("7. Managed Agents / Custom-tool flow", "S"),
    "each `agent.custom_tool_use` is answered by one `user.custom_tool_result`")
SESSION_TERMINATED = _rule(
    "managed_agents.session.accepts_events", "MUST", 400,
    protocol("7. Managed Agents / Session endpoints", "S"),
    "a terminated (or archived) session accepts no events")
SYSTEM_MESSAGE = _rule(
    "managed_agents.system_message.after_tool_result", "MUST", 400,
    protocol("7. Managed Agents / Custom-tool flow"),
    "while the session waits in requires_action, a `system.message` is accepted only after a "
    "tool-result event in the same request")
DECLARATION = _rule(
    "managed_agents.custom_tool.declaration", "MUST", 400,
    seed(SEED_MANAGED_AGENTS, "Deklarasi harus sesuai dengan Managed Agents API"),
    "custom tool declarations follow the documented rules (see `tooluse lint-tools`)")
WORK_AUTH = _rule(
    "work.auth.environment_key", "MUST", 401,
    protocol("7. Worker behaviour (auth)", "S"),
    "work API requests carry `Authorization: Bearer <environment key>` (or the item's "
    "sessions token)")
BLOCK_MS = _rule(
    "work.poll.block_ms_range", "MUST", 400, protocol("7. Self-hosted work API", "S"),
    "`block_ms` is 1-999 when given (0 is rejected; omit it for a non-blocking poll)")
ACK_STATE = _rule(
    "work.ack.polled_item", "MUST", 409, protocol("7. Self-hosted work API", "S"),
    "only a polled, queued work item is acknowledged")
