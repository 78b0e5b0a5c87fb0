"""The embedded V8 (mini-racer): one context per thread, fork-safe, closed at exit, bounded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from scidraft.markup import jsengine
from tests.conftest import ROOT


def test_each_thread_gets_its_own_context():
    """Two threads never share a V8 context (contexts are not thread-safe)."""
    seen = []

    def work():
        jsengine.render_tex(f"x_{threading.get_ident()}", display=False)
        seen.append(id(jsengine._context()))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 3


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


def test_bad_tex_raises_with_katexs_one_line_message():
    """KaTeX's reason reaches the author without the library's source attached."""
    with pytest.raises(jsengine.JSError) as caught:
        jsengine.render_tex("\\frac{1}{", display=False)
    assert caught.value.message.startswith("KaTeX parse error")
    assert "\n" not in caught.value.message and len(caught.value.message) < 300


def test_macro_bombs_are_stopped():
    """A \\def expansion bomb ends in an error, not a hung thread."""
    bomb = "\\def\\a{\\b\\b}\\def\\b{\\c\\c}\\def\\c{\\d\\d}\\def\\d{xx}" + "\\a" * 400
    with pytest.raises(jsengine.JSError, match="expansions"):
        jsengine.render_tex(bomb, display=False)


def test_formulas_are_cached_by_tex_display_and_version():
    """The same formula twice costs one KaTeX call; display mode is part of the key."""
    jsengine.tex_cache_clear()
    jsengine.render_tex("e^{i\\pi}+1=0", display=False)
    jsengine.render_tex("e^{i\\pi}+1=0", display=False)
    jsengine.render_tex("e^{i\\pi}+1=0", display=True)
    info = jsengine.tex_cache_info()
    assert (info.hits, info.misses) == (1, 2)


def test_a_runaway_script_is_stopped_by_the_timeout(monkeypatch):
    """Calls into V8 have a time limit; the context is replaced afterwards."""
    monkeypatch.setattr(jsengine, "CALL_TIMEOUT_SECONDS", 0.2)
    jsengine._context().eval("function spin(){ while(true){} }")
    with pytest.raises(jsengine.JSError, match="longer than"):
        jsengine._call("spin")
    assert "katex" in jsengine.render_tex("y", display=False)
