"""The syntax guide: every syntax the engine reads, each example rendered by the
engine itself. Public at /help/syntax/; the editor's help panel shows the same page.

The sections and their examples are the catalogue in editor.guide_catalogue; this module
renders them and serves the page. The examples are rendered in a guide context: the site's
environment kinds, a small example bibliography and data file of the guide's own, and one
example note for cross-references.
Renders are cached by the engine version and the examples' inputs, so an engine upgrade or a
change of the site's kinds renders the guide again; the entry indexes list the site's notes,
so they are rendered when read, as pages with an entry index are.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

from django.core.cache import cache
from django.shortcuts import render
from django.utils.safestring import mark_safe

from bibliography.formatting import ParsedBibliography
from bibliography.parsing import parse_bibtex
from notes.rendering import context_for
from scidraft.markup import ENGINE_VERSION, ReferenceTarget, RenderContext
from scidraft.markup import render as markup_render
from scidraft.markup.shortcodes import SHORTCODES
from scidraft.site.meta import PageMeta
from scidraft.site.models import EntrySet

from .guide_catalogue import GUIDE_BIB, GUIDE_IMAGE, SECTIONS

GUIDE_BIBTEX = """\
@article{okafor2021,
  author = {Okafor, Chidi and Lindqvist, Maja},
  title = {Spectral gaps of random regular graphs},
  journal = {Journal of Illustrative Mathematics},
  volume = {12},
  pages = {101--130},
  year = {2021}
}
@book{moreau2019,
  author = {Moreau, Élise},
  title = {Convex Analysis for Practitioners},
  publisher = {Example University Press},
  year = {2019}
}
@inproceedings{tanaka2023,
  author = {Tanaka, Hiro and Duarte, Inês and Novak, Petr},
  title = {Warm restarts for stochastic optimisation},
  booktitle = {Proceedings of the Example Workshop},
  year = {2023}
}
"""
GUIDE_DATA = {
    "rows": [
        {
            "num": 1,
            "label": "Example row",
            "images": [
                {"file": GUIDE_IMAGE, "caption": "First", "link": "/help/syntax/"},
                {"file": GUIDE_IMAGE, "caption": "Second", "link": "/help/syntax/"},
            ],
        }
    ]
}
# \ref{example-note:thm-main} in the guide points here (a real note's label in a real note).
GUIDE_TARGET = ReferenceTarget(
    text="Theorem 1", url="/help/syntax/#cross-references", kind="theorem", number="1"
)


def _example_bibliography(name: str):
    if name.strip().lstrip("/") == GUIDE_BIB:
        return ParsedBibliography(GUIDE_BIB, parse_bibtex(GUIDE_BIBTEX).entries)
    return None


def guide_context(base: RenderContext | None = None) -> RenderContext:
    """The site's context, with the guide's own bibliography, data file and example note."""
    base = base or context_for(None)
    return dataclasses.replace(
        base,
        resolve_bibliography=_example_bibliography,
        default_bibliographies=(),
        resolve_data=lambda name: GUIDE_DATA if name == "guide-example" else None,
        resolve_references=lambda pairs: {
            pair: GUIDE_TARGET for pair in pairs if pair == ("example-note", "thm-main")
        },
    )


def _rendered(source: str, context: RenderContext) -> dict:
    result = markup_render(source, context)
    return {
        "html": result.html,
        "warnings": [
            {"line": warning.line, "message": warning.message} for warning in result.warnings
        ],
        "flags": result.flags,
    }


def _cache_key(context: RenderContext) -> str:
    inputs = json.dumps(
        [
            [[example.source for example in section.examples] for section in SECTIONS],
            [dataclasses.astuple(kind) for kind in context.environments],
            context.citation_style,
            GUIDE_BIBTEX,
            [preamble.tex for preamble in context.math_macros],
        ],
        sort_keys=True,
    )
    return f"syntax-guide:{ENGINE_VERSION}:{hashlib.sha256(inputs.encode()).hexdigest()[:24]}"


def guide_sections() -> list[dict]:
    """Each section with its examples: source and the engine's HTML (and warnings, if any)."""
    context = guide_context()
    key = _cache_key(context)
    stored = cache.get(key)
    if stored is None:
        stored = {
            section.slug: [
                None if example.live else _rendered(example.source, context)
                for example in section.examples
            ]
            for section in SECTIONS
        }
        cache.set(key, stored, None)
    entry_set = EntrySet.objects.order_by("key").values_list("key", flat=True).first()
    sections = []
    for section in SECTIONS:
        examples = []
        for example, output in zip(section.examples, stored[section.slug], strict=True):
            source = example.source
            if example.live:
                source = source.replace("{set}", entry_set or "entry")
                output = _rendered(source, context)
            examples.append(
                {
                    "source": source,
                    # Trusted: rendered and sanitised by scidraft.markup.
                    "html": mark_safe(output["html"]),  # noqa: S308
                    "warnings": output["warnings"],
                    "mermaid": output["flags"]["has_mermaid"],
                }
            )
        sections.append(
            {
                "slug": section.slug,
                "title": section.title,
                # Trusted: the guide's own text, in this module.
                "intro": mark_safe(section.intro),  # noqa: S308
                "examples": examples,
            }
        )
    return sections


def syntax_guide(request):
    """/help/syntax/: the guide, public; the editor's help panel loads it too."""
    sections = guide_sections()
    context = guide_context()
    return render(
        request,
        "editor/syntax_guide.html",
        {
            "sections": sections,
            "kinds": context.environments,
            "shortcodes": SHORTCODES,
            "meta": PageMeta(title="Writing notes: the syntax | SciDraft"),
            "assets": {
                "math": True,
                "algorithm": True,
                "code": True,
                "mermaid": any(e["mermaid"] for s in sections for e in s["examples"]),
            },
        },
    )
