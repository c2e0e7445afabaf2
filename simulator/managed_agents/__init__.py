"""Managed Agents simulation: sessions and their events, and the self-hosted environment work
API, accurate enough that the ``anthropic`` SDK's ``EnvironmentWorker`` runs against it unmodified.
See ``docs/managed-agents.md``.
"""

from .handler import PATH_PREFIXES, ManagedAgentsSimulator
from .rules import RULES, Rule
from .scenario import CustomToolUse, Scenario, Turn, scenario_from_cassette, scenario_from_events
from .state import Agent, Environment, Session, WorkItem
from .store import RequestRecord, Violation

__all__ = [
    "PATH_PREFIXES",
    "RULES",
    "Agent",
    "CustomToolUse",
    "Environment",
    "ManagedAgentsSimulator",
    "RequestRecord",
    "Rule",
    "Scenario",
    "Session",
    "Turn",
    "Violation",
    "WorkItem",
    "scenario_from_cassette",
    "scenario_from_events",
]
