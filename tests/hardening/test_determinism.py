"""The outputs are byte-identical across runs, hash seeds and worker counts."""

from __future__ import annotations

import os
import subprocess

from conftest import write_findings
from fixture_repo import write_config
from hardening.helpers import DSHAUDIT


def test_outputs_are_byte_identical_across_runs_hash_seeds_and_workers(workspace, facts_repo, tmp_path):
    write_config(workspace, facts_repo)
    write_findings(
        workspace,
        "`packages/core/agent/src/index.ts:1` → `nothing`\n`claim: core.context-builtin-services.count >= 1`\n"
        "`claim: session.surface-op-kinds.kinds contains append`\n",
    )
    commands = [
        ["check", "--format", "json"],
        ["check", "--format", "sarif"],
        ["check", "--format", "markdown"],
        ["report", "--format", "html"],
        ["report", "--format", "markdown"],
        ["facts", "--format", "json"],
    ]
    seen = None
    for seed, workers in (("0", "1"), ("12345", "2"), ("random", "2")):
        env = {
            **os.environ,
            "DSH_REPO": str(facts_repo.path),
            "PYTHONHASHSEED": seed,
            "DSHAUDIT_WORKERS": workers,
            "DSHAUDIT_NO_CACHE": "1",
        }
        outs = [subprocess.run([DSHAUDIT, *c], cwd=workspace, env=env, capture_output=True).stdout for c in commands]
        assert all(outs)
        if seen is None:
            seen = outs
        assert outs == seen, seed
