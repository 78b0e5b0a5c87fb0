"""The citation contexts of a worker (bibliography.jsbundle's pool of V8 contexts, run by
bibliography.processor): the made-up lists a context practises on as a worker starts format
cleanly in every featured style, the pool lends contexts to several threads at once, a context
past its styles' heap or its number of styles hands the next style to a fresh context and is
closed, building a style is charged to the render's budget, a note naming thirty styles builds
three besides the site's, and an idle context is kept only while it holds the site's style
alone."""

from __future__ import annotations

import json
import threading

import pytest

from bibliography import csl, jsbundle, processor
from bibliography.formatting import format_cache_clear
from bibliography.parsing import parse_bibtex
from tests.bibliography.citation_js import COLLIDING, OTHERS, _fresh_context, _objects, _visible

# citation-js in V8 over every featured style: most tests here take 3 to 25 s.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("style", [name for name, _label in csl.FEATURED_STYLES])
def test_the_made_up_lists_a_worker_practises_on_format_cleanly_in_every_featured_style(style):
    """The warm-up's lists (processor.exercise_entries) are entries every featured style formats
    without a refusal: practice that failed would leave V8 cold and say nothing."""
    context = _fresh_context()
    try:
        info = csl.style_info(style)
        processor._prepare(context, info, "en-US")
        for round_ in (0, processor.EXERCISE_LISTS - 1):
            objects = processor.exercise_entries(round_)
            answer = json.loads(
                context.call(
                    "scidraftCslFormat",
                    objects,
                    info.template,
                    "en-US",
                    not info.numeric,
                    not info.numeric,
                    timeout_sec=30,
                )
            )
            assert not answer["errors"]
            assert len(answer["entries"]) == processor.EXERCISE_ENTRIES
            assert len(answer["citations"]) == (0 if info.numeric else processor.EXERCISE_ENTRIES)
        processor._exercise(context, info, "en-US")
        assert ("exercised", info.template, "en-US") in context.scidraft_loaded
    finally:
        context.close()


def test_the_pool_formats_lists_from_several_threads_at_once():
    """Threads formatting lists at the same time, each through a context the pool lends to it
    alone, get what formatting the lists one by one gives."""
    jobs = [(COLLIDING, "apa"), (OTHERS, "apa"), (COLLIDING, "ieee"), (OTHERS, "vancouver")] * 2
    info = {style: csl.style_info(style) for _, style in jobs}

    def one(text, style):
        return _visible(processor.run(_objects(text), info[style], "en-US", citations=True))

    alone = [one(text, style) for text, style in jobs]
    format_cache_clear()
    results: dict[int, tuple] = {}
    errors: list[BaseException] = []

    def worker(index, text, style):
        try:
            results[index] = one(text, style)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i, *job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [results[i] for i in range(len(jobs))] == alone


def test_a_context_past_its_styles_heap_hands_a_new_style_to_a_fresh_one(monkeypatch):
    """Processors are never dropped (APA's holds about 50 MB): a context whose heap is past
    STYLES_HEAP_BYTES is closed instead of building another style, and a fresh context
    formats the list, so no context is pushed towards the memory limit by style after style."""
    from bibliography.entries import EntryData
    from bibliography.formatting import format_references

    entries = [
        EntryData("k1", "book", {"title": "Stochastic Processes", "year": "1953",
                                 "publisher": "Wiley"}, {"author": ["Doob, Joseph L."]}),
    ]  # fmt: skip
    pool = jsbundle.pool
    pool.close_all()
    format_cache_clear()
    assert format_references(entries, "vancouver").problems == {}
    (first,) = pool.every
    assert first.heap_stats()["used_heap_size"] < processor.STYLES_HEAP_BYTES  # takes more styles

    monkeypatch.setattr(processor, "STYLES_HEAP_BYTES", 1)  # every context is past it
    formatted = format_references(entries, "apa")
    assert formatted.problems == {}
    assert "Doob, J. L. (1953)" in formatted.entries["k1"]
    (second,) = pool.every
    assert second is not first  # closed, not kept
    assert ("csl-apa", "en-US") in second.scidraft_loaded
    assert ("vancouver", "en-US") not in second.scidraft_loaded

    assert format_references(entries, "apa").problems == {}  # already built: kept
    assert pool.every == [second]
    monkeypatch.undo()
    pool.close_all()


# Numbered styles that build quickly (none of APA's or Chicago's 50–75 MB).
_LIGHT_STYLES = [
    "ieee",
    "nature",
    "american-physics-society",
    "association-for-computing-machinery",
    "american-medical-association",
    "american-chemical-society",
]


def _built(context) -> set[str]:
    return {done[0] for done in context.scidraft_loaded if isinstance(done, tuple)}


def test_a_context_builds_at_most_styles_per_context_and_a_fresh_one_the_next():
    """Style after style in one context: once it has built STYLES_PER_CONTEXT styles, the
    next one goes to a fresh context and the full one is closed, so a process holds a
    bounded number of styles whatever notes ask for."""
    from bibliography.entries import EntryData
    from bibliography.formatting import format_references

    entries = [EntryData("k1", "book", {"title": "Markov Chains", "year": "1960"}, {})]
    pool = jsbundle.pool
    pool.close_all()
    format_cache_clear()
    for style in _LIGHT_STYLES:
        assert format_references(entries, style).problems == {}, style
        if style == _LIGHT_STYLES[0]:
            (first,) = pool.every
    (last,) = pool.every
    assert last is not first  # the first filled up and was closed
    assert _built(last) == {csl.style_info(style).template for style in _LIGHT_STYLES[4:]}
    pool.close_all()


def test_building_a_style_is_charged_to_the_render_budget():
    """The seconds V8 spends building a style a list asks for count against the render's
    engine budget, as the list's own formatting does."""
    from bibliography.entries import EntryData
    from bibliography.formatting import format_references
    from scidraft.markup import limits

    entries = [EntryData("k1", "book", {"title": "Markov Chains", "year": "1960"}, {})]
    pool = jsbundle.pool
    format_cache_clear()
    format_references(entries, "vancouver")  # a context with citation-js loaded
    charged = {}
    for attempt in ("cold", "built"):
        format_cache_clear()
        with limits.budget(100.0, engine_seconds=100.0):
            format_references(entries, "chicago-author-date")
            charged[attempt] = 100.0 - limits._local.engine_left
    assert charged["cold"] > charged["built"] + 0.1, charged
    pool.close_all()


def test_thirty_styles_in_one_preview_build_three_with_a_warning_for_each_list_past_them():
    """A note naming 30 styles builds the site's and the first CITATION_STYLES_PER_NOTE others;
    each later list is formatted in the site's style, with a warning on its own line."""
    from bibliography.formatting import ParsedBibliography
    from scidraft.markup import RenderContext, render

    styles = [path.stem for path in sorted(csl.STYLE_DIR.glob("*.csl"))][:30]
    bib = ParsedBibliography(
        "bib/refs.bib",
        parse_bibtex("@book{k1, title={Markov Chains}, author={Doob, J}, year=1953}").entries,
    )
    source = "".join(
        f'\\cite{{k1}}\n\n{{{{< references bib="bib/refs.bib" style="{style}" >}}}}\n\n'
        for style in styles
    )
    pool = jsbundle.pool
    pool.close_all()
    format_cache_clear()
    rendered = render(
        source,
        RenderContext(resolve_bibliography=lambda name: bib, citation_style="vancouver"),
    )
    limited = [w for w in rendered.warnings if w.code == "citation-style-limit"]
    assert [w.line for w in limited] == [4 * index + 3 for index in range(3, 30)]
    assert "at most 3 citation styles" in limited[0].message
    built = set().union(*(_built(context) for context in pool.every))
    assert built <= {"vancouver", *(csl.style_info(style).template for style in styles[:3])}
    pool.close_all()


def test_an_idle_citation_context_is_kept_only_while_it_holds_the_site_s_style_alone(monkeypatch):
    """The citation pool keeps ready the contexts that built the site's style and nothing
    else; one that built another style (APA's processor, for a note that named it) is closed
    once idle (v8pool.Pool.sweep)."""

    class Built:
        def __init__(self, *loaded):
            self.scidraft_loaded = set(loaded)

    monkeypatch.setattr(processor, "_site", ("vancouver", "en-US"))
    assert jsbundle.pool.keep_idle is processor._worth_keeping
    assert processor._worth_keeping(Built(("vancouver", "en-US"), ("exercised", "vancouver", "x")))
    assert processor._worth_keeping(Built())
    assert not processor._worth_keeping(Built(("vancouver", "en-US"), ("csl-apa", "en-US")))
    assert not processor._worth_keeping(Built(("vancouver", "de-DE")))
