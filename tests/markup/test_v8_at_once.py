"""Calls made at once by one caller, each in a context of its own (scidraft.markup.v8_at_once),
through the citation pool."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from bibliography import jsbundle
from scidraft.markup import v8pool
from tests.conftest import ROOT

_SPIN = (
    "function scidraftTestSpin(ms) { if (ms < 0) throw new Error('no time'); "
    "var end = Date.now() + ms; while (Date.now() < end) {} return ms; }"
)


def test_calls_at_once_run_in_contexts_of_their_own_and_fail_alone():
    """Slices of a list run at once, each in a citation context of its own; the one that
    fails is answered with its JSError in its place, the others with their results."""
    used = []

    def before(context):
        used.append(context)
        context.eval(_SPIN)

    outcomes = jsbundle.call_at_once("scidraftTestSpin", [(50,), (-1,), (50,)], before=before)
    assert outcomes[0] == outcomes[2] == 50
    assert isinstance(outcomes[1], v8pool.JSError) and "no time" in outcomes[1].message
    assert len({id(context) for context in used}) == 3


def test_calls_at_once_are_charged_to_the_render_as_the_slowest_one():
    """The render's engine budget pays for the slowest slice, not for the sum of them (the
    work done, at most the time waited: a busy machine gives each spinning slice less)."""
    from scidraft.markup import limits

    with limits.budget(1.0, engine_seconds=10.0):
        jsbundle.call_at_once(
            "scidraftTestSpin", [(200,), (200,)], before=lambda context: context.eval(_SPIN)
        )
        left = limits._local.engine_left
    assert 9.75 < left < 10.0  # at most 0.2 s charged once, not 0.4 s


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_runs_calls_at_once():
    """The slices' threads of the parent are not the child's: after fork it starts its own."""
    script = textwrap.dedent(
        f"""
        import os
        from bibliography import jsbundle
        spin = {_SPIN!r}
        def run():
            return jsbundle.call_at_once(
                "scidraftTestSpin", [(1,), (2,)], before=lambda context: context.eval(spin))
        run()
        pid = os.fork()
        if pid == 0:
            os._exit(0 if run() == [1, 2] else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "0", result.stderr
