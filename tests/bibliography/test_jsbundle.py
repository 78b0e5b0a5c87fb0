"""The server's citation bundle: built from the pinned packages for V8, our JavaScript checked
and unit-tested in Node, citeproc-js reached by import."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from bibliography import csl, jsbundle, processor
from tests.conftest import ROOT


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return node


def _package(name: str) -> dict:
    return json.loads((ROOT / "node_modules" / name / "package.json").read_text())


def test_our_javascript_parses():
    """Every file of bibliography/js passes `node --check`."""
    files = sorted(jsbundle.SOURCES.rglob("*.js"))
    assert len(files) >= 7
    for path in files:
        result = subprocess.run(
            [_node(), "--check", str(path)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, (path, result.stderr)


def test_the_shortcuts_pure_helpers_pass_their_node_tests():
    """bibliography/js/tests under Node's test runner: every test passes."""
    result = subprocess.run(
        [_node(), "--test", str(jsbundle.SOURCES / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", result.stdout, re.MULTILINE), result.stdout[-500:]
    assert re.search(r"^# fail 0$", result.stdout, re.MULTILINE)


def test_the_bundle_holds_citation_js_s_own_packages_at_its_versions():
    """package.json pins @citation-js/* and citeproc at the versions citation-js 0.6.9 resolves
    (the theme's formatter, the oracle), and the bundle is built from exactly those."""
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]
    wanted = _package("citation-js")["dependencies"]
    licences = (jsbundle.BUNDLE.parent / "LICENSES.txt").read_text()
    for name in (
        "@citation-js/core",
        "@citation-js/plugin-bibtex",
        "@citation-js/plugin-csl",
        "@citation-js/plugin-ris",
    ):
        assert pinned[name] == wanted[name] == _package(name)["version"]
        assert f"{name}@{wanted[name]}\n" in licences
    assert pinned["citeproc"] == _package("citeproc")["version"]
    assert f"citeproc@{pinned['citeproc']}\n" in licences
    assert "core-js@" not in licences  # built for V8: nothing polyfilled


def test_citeproc_is_imported_and_formats_what_citation_js_hands_it():
    """The bundle's `CSL` is the citeproc-js that citation-js's CSL plugin builds processors
    from (the shortcuts patch that one), and the context pretends to be no browser."""
    context = jsbundle.load()
    try:
        processor._prepare(context, csl.style_info("apa"), "en-US")
        key = json.dumps(csl.style_info("apa").template + "|en-US")
        assert context.eval(f"SCIDRAFT_ENGINES[{key}] instanceof CSL.Engine")
        assert context.eval(f"SCIDRAFT_ENGINES[{key}].registry.namereg !== undefined")
        assert context.eval("typeof navigator + typeof window + typeof require") == (
            "undefined" * 3
        )
        source = (ROOT / "node_modules" / "citeproc" / "citeproc_commonjs.js").read_text()
        version = re.search(r'PROCESSOR_VERSION: "([^"]+)"', source).group(1)
        assert context.eval("CSL.PROCESSOR_VERSION") == version
    finally:
        context.close()


def test_the_bundle_leaves_v8s_fast_array_paths_on():
    """A core-js that feature-tests Array methods turns V8's array-species protector off for
    the whole isolate (citation-js's browser bundle does so unless told a browser's version);
    our bundle polyfills nothing and leaves it on. V8's own report, in a process of its own
    (natives syntax is a process flag)."""
    script = textwrap.dedent(
        """
        from py_mini_racer import MiniRacer
        from scidraft.markup import v8pool
        v8pool.V8_FLAGS = (*v8pool.V8_FLAGS, "--allow-natives-syntax")
        from bibliography import jsbundle
        ours = jsbundle.load()
        ours.call("scidraftCslWarm", "vancouver", "en-US")
        answer = ours.eval("%ArraySpeciesProtector()")
        ours.close()  # a context left open at exit would keep the process waiting on V8
        print(answer, flush=True)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.split() == ["True"], result.stderr[-2000:]
