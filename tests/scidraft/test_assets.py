"""Served assets come from this site: nothing a page loads points at a CDN."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

STATIC = ROOT / "static"
_EXTERNAL = re.compile(r"""(?:@import\s+(?:url\()?|url\()\s*['"]?\s*(?:https?:)?//""", re.I)


def stylesheets():
    return sorted(STATIC.rglob("*.css"))


def test_vendor_assets_are_built():
    """`make vendor` has copied KaTeX, pseudocode.js and Mermaid from node_modules."""
    for name in (
        "katex/katex.min.css",
        "pseudocode/pseudocode.min.css",
        "mermaid/mermaid.min.js",
        "pygments.css",
    ):
        assert (STATIC / "vendor" / name).is_file(), f"static/vendor/{name} is missing"


@pytest.mark.parametrize("path", stylesheets(), ids=lambda path: str(path.relative_to(STATIC)))
def test_no_stylesheet_loads_anything_from_another_host(path):
    """No @import or url() in a served stylesheet names another host (pseudocode.js's own CSS
    @imports KaTeX from a CDN; the vendoring step removes it)."""
    assert not _EXTERNAL.search(path.read_text(encoding="utf-8", errors="replace"))
