"""The bash restart step (seed 003 "Parameters": ``restart: true`` is confirmed, and the restarted
session starts clean: working directory, environment variables and running processes gone)."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.properties.bash_background import job_pids, still_running
from conformance.properties.bash_model import VARIABLES
from conformance.properties.bash_step import Ctx, Disagreement, Op


@dataclass
class Restart(Op):
    """``restart: true``: confirmed; directory, environment and the jobs of the shell gone."""

    kind = "restart"

    def run(self, ctx: Ctx) -> None:
        pids = job_pids(ctx.s, [j.heartbeat for j in ctx.m.jobs if j.heartbeat])
        r = ctx.send({"restart": True}, self.kind)
        ctx.disturbed(self.kind)
        if r.is_error:
            raise Disagreement("restart:error", "restart was answered with an error",
                               r.to_json(), {"is_error": False})
        jobs = list(ctx.m.jobs)
        for name in VARIABLES:
            if any(e for _, e in ctx.m.variables[name]):
                ctx.cleared.add(name)
        if ctx.m.known_cwd() is not None:
            ctx.cleared.add("cwd")
        ctx.m.restart()
        beating = still_running(pids)
        if beating:
            job = next(j for j in jobs if j.heartbeat == beating[0])
            raise Disagreement(
                "restart:process", f"a background job started with `{job.form}` is still "
                "running after restart", {"restart": r.to_json(), "job": job.form},
                "running processes are gone after a restart")
