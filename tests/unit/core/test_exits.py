"""How a command ends when Ctrl-C lands in a finalizer (cli/exits.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# A command whose objects raise from their finalizers, in this process and in one it forks, as
# Ctrl-C does when it lands while GitPython closes a config reader; then the command stops.
_COMMAND = textwrap.dedent(
    """
    import os, sys
    from dshaudit.cli.exits import handle_errors

    class Closing:
        def __del__(self):
            raise {raised}

    @handle_errors
    def command():
        pid = os.fork()
        if pid == 0:
            Closing()
            os._exit(0)
        os.waitpid(pid, 0)
        Closing()
        raise KeyboardInterrupt

    command()
    """
)


def _run(raised: str, tmp_path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSHAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-c", _COMMAND.format(raised=raised)], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a process")
def test_ctrl_c_in_a_finalizer_is_said_as_the_interrupt_alone_in_every_process(tmp_path):
    done = _run("KeyboardInterrupt", tmp_path)
    assert (done.returncode, done.stderr) == (130, "dshaudit: interrupted\n")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a process")
def test_any_other_error_in_a_finalizer_is_still_reported(tmp_path):
    done = _run("ValueError('a bug')", tmp_path)
    assert done.returncode == 130
    assert done.stderr.count("ValueError: a bug") == 2 and done.stderr.endswith("dshaudit: interrupted\n")
