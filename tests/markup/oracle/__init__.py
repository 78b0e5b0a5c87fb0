"""The MathJax oracle: what the theme's MathJax v4 accepts and shows, run in Node (mathjax.js)."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PACKAGE = ROOT / "node_modules" / "mathjax" / "node-main.cjs"


def require_node() -> None:
    if shutil.which("node") is None or not PACKAGE.is_file():
        pytest.skip("the oracle needs node and node_modules/mathjax (npm ci)")


@functools.cache
def mathjax(formulas: tuple[tuple[str, bool], ...]) -> list[dict]:
    """MathJax's answer for each (TeX, display) formula, typeset in order on one page:
    {"ok": no merror and no undefined command, "error": why not, "text": token text}."""
    require_node()
    payload = json.dumps([{"tex": tex, "display": display} for tex, display in formulas])
    done = subprocess.run(
        ["node", str(HERE / "mathjax.js")],
        input=payload,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)
