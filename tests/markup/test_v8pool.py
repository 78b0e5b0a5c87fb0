"""The embedded V8 (mini-racer): pooled contexts, one call each at a time, fork-safe, closed at
exit, bounded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from bibliography import jsbundle
from scidraft.markup import jsengine, v8pool
from tests.conftest import ROOT


def test_concurrent_calls_never_share_a_context():
    """Contexts serve one call at a time: two borrowers at once hold different contexts."""
    with jsengine.borrowed() as first, jsengine.borrowed() as second:
        assert first is not second


def test_threads_that_come_and_go_reuse_contexts():
    """A thread per request (the development and test servers) does not start a V8 each: a
    finished thread's context is lent to the next one."""
    jsengine.start()
    before = len(jsengine._pool.every)

    def work(index: int):
        jsengine.render_tex(f"x_{{{index}}} + {threading.get_ident()}", display=False)

    for index in range(20):
        thread = threading.Thread(target=work, args=(index,))
        thread.start()
        thread.join()
    assert len(jsengine._pool.every) == before


def test_idle_contexts_are_bounded(monkeypatch):
    """After a burst, idle contexts beyond IDLE_CONTEXTS_MAX are closed, not kept."""
    monkeypatch.setattr(v8pool, "IDLE_CONTEXTS_MAX", 2)
    jsengine._pool.close_all()
    with jsengine.borrowed(), jsengine.borrowed(), jsengine.borrowed():
        assert len(jsengine._pool.every) == 3
    assert len(jsengine._pool.idle) == 2 and len(jsengine._pool.every) == 2
    assert "katex" in jsengine.render_tex("z", display=False)


class _FakeContext:
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


def test_contexts_idle_past_idle_seconds_beyond_the_floor_are_closed(monkeypatch):
    """A burst leaves a context per borrower; once they have sat unused for IDLE_SECONDS, the
    next call closes those beyond the pool's floor, the least recently used first, and keeps
    the floor (what one request uses) however long the worker was quiet."""
    pool = v8pool.Pool(_FakeContext, floor=2)
    burst = [pool.take() for _ in range(4)]
    for context in burst:
        pool.give_back(context)
    assert pool.take() is burst[-1]  # not yet idle long enough: all four kept
    pool.give_back(burst[-1])
    assert not any(context.closed for context in burst)

    monkeypatch.setattr(v8pool, "IDLE_SECONDS", 0.0)
    taken = pool.take()
    assert taken is burst[-1]
    assert [context.closed for context in burst] == [True, True, False, False]
    assert pool.every == burst[2:] and pool.idle == [burst[2]]
    pool.give_back(taken)
    assert pool.take() is taken and pool.take() is burst[2]  # the floor stays
    assert not burst[2].closed and not burst[3].closed


def test_process_exits_promptly_after_rendering_in_threads():
    """Contexts are closed at exit: a process that rendered in threads does not hang."""
    script = textwrap.dedent(
        """
        import threading
        from scidraft.markup import render
        threads = [threading.Thread(target=render, args=("$x^%d$" % i,)) for i in range(4)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print("done")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"


def test_v8_started_in_a_thread_serves_threads_started_later():
    """A worker thread may be the first to render (gunicorn's gthread workers are): contexts
    made afterwards in other threads work, also on CPUs with memory protection keys, where
    V8's default would crash the process."""
    script = textwrap.dedent(
        """
        import threading
        from scidraft.markup import jsengine
        def work(index):
            with jsengine.borrowed() as context:  # one new context per thread
                with jsengine.borrowed() as second:
                    assert second.eval("1 + %d" % index) == 1 + index
        for index in range(3):
            thread = threading.Thread(target=work, args=(index,))
            thread.start(); thread.join()
        print("done")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "done"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_makes_its_own_context():
    """After fork (as gunicorn does), the child renders with a fresh context, not the parent's."""
    script = textwrap.dedent(
        """
        import os, sys
        from scidraft.markup import jsengine
        jsengine.render_tex("a", display=False)
        pid = os.fork()
        if pid == 0:
            html = jsengine.render_tex("b^2", display=False)
            os._exit(0 if "katex" in html else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "0", result.stderr


_SPIN = (
    "function scidraftTestSpin(ms) { if (ms < 0) throw new Error('no time'); "
    "var end = Date.now() + ms; while (Date.now() < end) {} return ms; }"
)


def test_a_runaway_script_is_stopped_by_the_timeout(monkeypatch):
    """Calls into V8 have a time limit; the context is replaced afterwards."""
    monkeypatch.setattr(v8pool, "CALL_TIMEOUT_SECONDS", 0.2)
    with jsengine.borrowed() as context:
        context.eval("function spin(){ while(true){} }")
        spinning = context
    with pytest.raises(v8pool.JSError, match="longer than"):
        jsengine._call("spin")  # the most recently returned context: the one that spins
    assert spinning not in jsengine._pool.every
    assert "katex" in jsengine.render_tex("y", display=False)


# A call that waits without working, as a call does while other processes hold the cores; and
# one that works a fixed amount, however long that takes on the clock.
_WAIT = (
    "function scidraftTestWait(ms) {"
    " Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); return ms; }"
    "function scidraftTestWork(n) { var x = 0; for (var i = 0; i < n; i++) x = (x + i) % 7;"
    " return x; }"
)
_WORK = 30_000_000


def test_the_engine_budget_is_charged_the_work_done_not_the_time_waited():
    """A call that spends 0.3 s on the clock without using a core (a machine loaded by other
    processes) costs the render's engine budget next to nothing; one that works is charged
    about the CPU time its work takes."""
    import time

    from scidraft.markup import limits

    with jsengine.borrowed() as context:
        context.eval(_WAIT)
        context.call("scidraftTestWork", _WORK)  # compiled before it is measured
        started = time.process_time()
        context.call("scidraftTestWork", _WORK)
        work = time.process_time() - started
    with limits.budget(1.0, engine_seconds=10.0):
        assert jsengine._call("scidraftTestWait", 300) == 300
        waited = 10.0 - limits._local.engine_left
        jsengine._call("scidraftTestWork", _WORK)
        worked = 10.0 - limits._local.engine_left - waited
    assert waited < 0.05
    assert 0.5 * work < worked < 2 * work + 0.05, (work, worked)


def test_a_call_stopped_by_time_marks_the_render_cut_short(monkeypatch):
    """A V8 call stopped by its time limit, in the render's thread or in a slice's, makes the
    render's outcome cut short (not final); a call that fails on its input does not."""
    from scidraft.markup import limits

    monkeypatch.setattr(v8pool, "CALL_TIMEOUT_SECONDS", 0.2)
    with limits.budget(10.0, engine_seconds=10.0) as outcome, pytest.raises(v8pool.JSError):
        jsengine.render_tex("\\frac{1}{", display=False)
    assert outcome.cut_short is False
    with limits.budget(10.0, engine_seconds=10.0) as outcome:
        answers = jsbundle.call_at_once(
            "scidraftTestSpin", [(10,), (5_000,)], before=lambda context: context.eval(_SPIN)
        )
    assert answers[0] == 10 and isinstance(answers[1], v8pool.JSError)
    assert outcome.cut_short is True


def test_a_budget_with_more_time_gives_its_calls_more_time(monkeypatch):
    """A render given more time (a completion in the background) lets each V8 call run longer
    in proportion; the call that timed out before now finishes."""
    from scidraft.markup import limits

    monkeypatch.setattr(v8pool, "CALL_TIMEOUT_SECONDS", 0.2)
    monkeypatch.setattr(jsbundle, "FLOOR_SECONDS", 0.2)
    with limits.budget(10.0, engine_seconds=10.0, scale=10) as outcome:
        answer = jsbundle.call("scidraftTestSpin", 400, before=lambda context: context.eval(_SPIN))
    assert answer == 400 and outcome.cut_short is False


class _SweptContext(_FakeContext):
    def __init__(self, keep: bool = True):
        super().__init__()
        self.keep = keep
        self.reduced = 0

    def low_memory_notification(self):
        self.reduced += 1


def test_the_sweep_closes_idle_contexts_the_pool_does_not_need_and_shrinks_the_rest(monkeypatch):
    """Once idle for IDLE_SECONDS, contexts beyond the floor and those the pool would not keep
    (a citation context holding another site's style) are closed by the sweep, without any
    call; those kept are asked once per idle spell to give back their unused heap."""
    pool = v8pool.Pool(_SweptContext, floor=2, keep_idle=lambda context: context.keep)
    burst = [pool.take() for _ in range(4)]
    burst[3].keep = False  # the most recent: within the floor, but holding what is not kept
    for context in burst:
        pool.give_back(context)
    pool.sweep()
    assert not any(context.closed for context in burst)  # not idle long enough yet

    monkeypatch.setattr(v8pool, "IDLE_SECONDS", 0.0)
    pool.sweep()
    assert [context.closed for context in burst] == [True, True, False, True]
    assert pool.every == pool.idle == [burst[2]] and burst[2].reduced == 1
    pool.sweep()
    assert burst[2].reduced == 1  # once per idle spell
    pool.give_back(pool.take())
    pool.sweep()
    assert burst[2].reduced == 2 and not burst[2].closed


def test_a_context_cannot_grow_past_its_heap_limit(monkeypatch):
    """Every context's V8 heap is bounded from the moment it is made (MEMORY_LIMIT_BYTES): a
    call that would grow it further is stopped with a JSError and the context closed."""
    monkeypatch.setattr(v8pool, "MEMORY_LIMIT_BYTES", 32 * 1024 * 1024)
    pool = v8pool.Pool(lambda: v8pool.new_context())
    try:
        with pool.borrowed() as context:
            context.eval("function grow() { var a = []; while (true) a.push(new Array(1e4)); }")
            grown = context
        with pytest.raises(v8pool.JSError, match="too much memory"):
            v8pool.call("grow", pool=pool)
        assert grown not in pool.every
    finally:
        pool.close_all()


def test_a_pool_at_its_size_waits_for_a_context_then_gives_up(monkeypatch):
    """A pool with size_max never holds more contexts: a call that finds them all in use gets
    the next one given back, or, past its time limit, a JSStopped (the render is cut short,
    not final) instead of a context more."""
    from scidraft.markup import limits

    monkeypatch.setattr(v8pool, "CALL_TIMEOUT_SECONDS", 0.3)
    pool = v8pool.Pool(_FakeContext, size_max=1)
    first = pool.take()
    with limits.budget(10.0, engine_seconds=10.0) as outcome, pytest.raises(v8pool.JSStopped):
        pool.take()
    assert outcome.cut_short is True and pool.every == [first]
    timer = threading.Timer(0.1, pool.give_back, args=(first,))
    timer.start()
    assert pool.take() is first  # the waiting call got the context given back
    timer.join()
