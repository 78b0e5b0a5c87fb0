"""`manage.py render FILE.md`: HTML on stdout, warnings on stderr with the file's lines."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import ROOT


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    import sys

    saved = sys.stdout
    sys.stdout = out  # the command writes the document itself to stdout
    try:
        call_command("render", *args, stderr=err)
    finally:
        sys.stdout = saved
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_prints_html_and_skips_front_matter(tmp_path):
    """Front matter is not rendered; the body is."""
    note = tmp_path / "n.md"
    note.write_text('+++\ntitle = "T"\n+++\nHello \\(x^2\\).\n')
    out, err = run(str(note))
    assert out.startswith('<p>Hello <span class="katex">')
    assert "title" not in out and err == ""


@pytest.mark.django_db
def test_warnings_carry_the_line_in_the_file(tmp_path):
    """A warning's line counts the front matter, so editors can jump to it."""
    note = tmp_path / "n.md"
    note.write_text('+++\ntitle = "T"\n+++\nfine\n\n$$\\frac{1}{$$\n')
    _, err = run(str(note))
    assert f"{note}:6: math-error:" in err


@pytest.mark.django_db
def test_json_output_and_bibliographies_by_file_name(tmp_path):
    """--json prints the whole result; --bib resolves lists naming bib/<file name>."""
    note = tmp_path / "n.md"
    note.write_text('See \\cite{Knuth1984-tb}.\n\n{{< references bib="bib/computing.bib" >}}\n')
    bib = ROOT / "demo" / "assets" / "bib" / "computing.bib"
    out, err = run(str(note), "--json", "--bib", str(bib))
    data = json.loads(out)
    assert data["citations"][0]["keys"] == ["Knuth1984-tb"]
    assert data["flags"]["has_citations"] is True
    assert "TeX" in data["html"] and err == ""


@pytest.mark.django_db
def test_unreadable_file_is_a_clear_error(tmp_path):
    """A missing file stops the command with its name."""
    with pytest.raises(CommandError, match="cannot read"):
        run(str(tmp_path / "missing.md"))
