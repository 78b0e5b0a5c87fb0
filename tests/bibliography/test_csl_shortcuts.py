"""citeproc-js in the embedded V8 (bibliography.csl, bibliography.processor) reads the same with
the bundle's shortcuts as without them: the processor plugin-csl keeps per style and locale is
reused from list to list without one list's state reaching the next, the in-text citations read
off the list's own bibliography pass equal a pass of their own, styles that never add given
names read the same without citeproc-js's name register, cite forms of one item skip the
disambiguator, sort keys past the leading ones are rendered only where those tie, strings
without markup skip the flip-flopper, names are split and initialised once per distinct name,
strings with nothing to escape pass the HTML escape as they are, and the case-mapping and
collator shortcuts answer as V8 does."""

from __future__ import annotations

import json

import pytest
from py_mini_racer import MiniRacer

from bibliography import csl, processor
from scidraft.markup import v8pool
from tests.bibliography.citation_js import (
    COLLIDING,
    OTHERS,
    _both_ways,
    _format,
    _fresh_context,
    _objects,
    _visible,
)

# citation-js in V8 over every featured style: most tests here take 3 to 25 s.
pytestmark = pytest.mark.slow

# Lists in sequence: author–date and numbered styles, two locales, the same keys with other
# contents, and the first list again at the end.
SEQUENCE = [
    (COLLIDING, "apa", "en-US"),
    (OTHERS, "apa", "en-US"),
    (COLLIDING, "chicago-author-date", "de-DE"),
    (COLLIDING, "ieee", "en-US"),
    (OTHERS + COLLIDING.replace("{one,", "{seven,"), "apa", "en-US"),
    (COLLIDING, "vancouver", "de-DE"),
    (COLLIDING, "apa", "de-DE"),
    (COLLIDING, "apa", "en-US"),
]


def test_a_reused_processor_formats_each_list_as_a_fresh_context_does(monkeypatch):
    """One context formats the lists one after another (its processor per style and locale
    reused, reset for each list); each answer equals that of a context that formats only
    that list: numbering, order, year suffixes and given names do not leak between lists."""
    # APA's and Chicago's processors together pass the heap past which a context takes no
    # further style: here the one context must keep them all.
    monkeypatch.setattr(processor, "STYLES_HEAP_BYTES", v8pool.MEMORY_LIMIT_BYTES)
    shared = _fresh_context()
    try:
        in_sequence = [_visible(_format(shared, _objects(t), s, loc)) for t, s, loc in SEQUENCE]
    finally:
        shared.close()
    for (text, style, locale), got in zip(SEQUENCE, in_sequence, strict=True):
        alone = _fresh_context()
        try:
            assert got == _visible(_format(alone, _objects(text), style, locale)), (style, locale)
        finally:
            alone.close()
    # The disambiguation did happen (the comparison is not between two empty answers).
    assert in_sequence[0][1]["one"] != in_sequence[0][1]["two"]
    assert in_sequence[0][1]["one"] == in_sequence[-1][1]["one"]


@pytest.mark.parametrize("style", ["apa", "chicago-author-date", "harvard-cite-them-right"])
def test_in_text_citations_from_the_bibliography_pass_equal_a_pass_of_their_own(style):
    """The markers read off the processor the list's bibliography left equal those of
    rebuildProcessorState over the same items (the processor reset and filled again)."""
    context = _fresh_context()
    try:
        info = csl.style_info(style)
        answer = _format(context, _objects(COLLIDING), style, "en-US")
        ids = json.dumps([item["id"] for item in answer["items"]])
        # The markers came from the bibliography's processor (not the fallback's own pass).
        read_off = context.eval(
            f"scidraftCslListEngine({json.dumps(info.template)}, 'en-US', {ids}) !== null"
        )
        own_pass = context.eval(
            f"JSON.stringify(scidraftCslCitations({json.dumps(answer['items'])}, "
            f"{json.dumps(info.template)}, 'en-US'))"
        )
    finally:
        context.close()
    assert read_off is True
    assert answer["citations"] == json.loads(own_pass)
    assert len(set(answer["citations"].values())) == len(answer["citations"])


# Styles that never add given names to tell authors apart (numbered ones, and an author–date
# one) skip citeproc-js's name register; APA adds them and keeps it.
PLAIN_NAMES = [
    ("vancouver", True),
    ("ieee", True),
    ("nature", True),
    ("association-for-computing-machinery", True),
    ("american-physics-society", True),
    ("emerald-harvard", True),
    ("apa", False),
]


def _engine_skips_register(context: MiniRacer, style: str, locale: str) -> bool:
    template = json.dumps(csl.style_info(style).template)
    key = f"scidraftCslEngineKey({template}, {json.dumps(locale)})"
    return context.eval(f"SCIDRAFT_ENGINES[{key}].registry.namereg.scidraftPlain === true")


@pytest.mark.parametrize(("style", "skipped"), PLAIN_NAMES)
def test_a_style_without_given_name_disambiguation_reads_the_same_without_the_name_register(
    style, skipped
):
    """The register of names (a sixth of a numbered list's time) is skipped only where it
    cannot change a word: lists of colliding names (the same family with other given names,
    one author's works in one year, accents) read as with citeproc-js's own register, entries,
    order and in-text citations, one list after another in the same processor."""
    lists = [(COLLIDING, "en-US"), (OTHERS, "en-US"), (COLLIDING, "de-DE")]
    skipping, keeping = _fresh_context(), _fresh_context()
    try:
        keeping.eval("SCIDRAFT_PLAIN_NAMES = false")
        for text, locale in lists:
            fast = _format(skipping, _objects(text), style, locale)
            kept = _format(keeping, _objects(text), style, locale)
            assert _visible(fast) == _visible(kept), (style, locale)
            assert fast["entries"] and not fast["errors"]
        assert _engine_skips_register(skipping, style, "en-US") is skipped
        assert _engine_skips_register(keeping, style, "en-US") is False
    finally:
        skipping.close()
        keeping.close()


# Cite forms no other item shares ("Lee, 2020"), next to forms two items share: the
# disambiguator skips the first kind only. One style of each given-name rule.
LONE = r"""
@article{lee, author = {Lee, Ann}, title = {Alone}, journal = {J}, year = 2020}
@book{kim, author = {Kim, Bo and Park, Chan and Choi, Dae}, title = {Also}, publisher = {P},
  year = 2019}
@misc{untitled, title = {No Author At All}, year = 2021}
"""
LONE_CITE_STYLES = [
    "apa",  # primary-name-with-initials
    "chicago-author-date",  # primary-name
    "harvard-cite-them-right",  # by-cite
    "fachhochschule-sudwestfalen",  # all-names
    "elsevier-harvard",
]
_COUNT_CITE_DATA = """(function () {
  var engine = SCIDRAFT_ENGINES[scidraftCslEngineKey(%s, "en-US")];
  var proto = Object.getPrototypeOf(engine.disambiguate);
  if (proto.counted) return;
  var getCiteData = proto.getCiteData;
  proto.getCiteData = function () { CITE_DATA += 1; return getCiteData.apply(this, arguments); };
  proto.counted = true;
})(); var CITE_DATA = 0;"""


@pytest.mark.parametrize("style", LONE_CITE_STYLES)
def test_cite_forms_of_one_item_skip_the_disambiguator_and_read_the_same(style):
    """The disambiguator is not run for a cite form only one item has (its cite rendered
    again for nothing: a tenth of an APA list): entries, order, in-text citations, sort keys
    and cite forms read as with it run, for lists of lone and shared forms, one list after
    another in the same processor."""
    lists = [LONE + COLLIDING, OTHERS, LONE, COLLIDING]
    skipping, running = _fresh_context(), _fresh_context()
    template = json.dumps(csl.style_info(style).template)
    try:
        running.eval("SCIDRAFT_LONE_CITES = false")
        for context in (skipping, running):
            _format(context, _objects(LONE), style, "en-US")  # the processor exists
            context.eval(_COUNT_CITE_DATA % template)
        for text in lists:
            fast = _format(skipping, _objects(text), style, "en-US")
            full = _format(running, _objects(text), style, "en-US")
            assert _visible(fast) == _visible(full), style
            assert fast["entries"] and not fast["errors"]
        rendered_again = skipping.eval("CITE_DATA"), running.eval("CITE_DATA")
        assert rendered_again[0] < rendered_again[1], rendered_again
    finally:
        skipping.close()
        running.close()


# One author's works of one year (the leading sort keys tie: the title decides), identical
# entries, and works no other shares.
TIED = r"""
@article{t1, author = {Stone, Ada}, title = {Zeta functions}, journal = {J}, year = 2015}
@article{t2, author = {Stone, Ada}, title = {Alpha particles}, journal = {J}, year = 2015}
@book{t3, author = {Stone, Ada}, title = {Middle}, publisher = {P}, year = 2015}
@misc{t4, title = {Same}, year = 2001}
@misc{t5, title = {Same}, year = 2001}
@article{t6, author = {Ray, Bo}, title = {Alone}, journal = {J}, year = 2011}
"""
# The styles whose sort keys end in costly ones (the title and source rendered again), and one
# whose keys are all cheap: its keys are whole from the start.
SHORT_SORT_STYLES = [
    ("chicago-author-date", True),
    ("apa", True),
    ("chicago-notes-bibliography", True),  # a note style: its list formatted whole
    ("modern-language-association", False),
]
_KEY_WIDTHS = """JSON.stringify((function () {
  var engine = SCIDRAFT_ENGINES[scidraftCslEngineKey(%s, "en-US")];
  var short = scidraftCslShortSortTokens(engine);
  var ids = engine.registry.getSortedIds();
  return {short: short && short.width, whole: short && short.whole,
          widths: ids.map(function (id) { return engine.registry.registry[id].sortkeys.length; })};
})())"""


@pytest.mark.parametrize(("style", "shortened"), SHORT_SORT_STYLES)
def test_whole_sort_keys_are_rendered_only_for_items_whose_leading_keys_tie(style, shortened):
    """Sort keys past the first costly one (Chicago's title and source: a third of its list)
    are rendered only for items another item ties on the leading keys: entries, their order
    and numbers, year suffixes and in-text citations read as with whole keys for every item,
    one list after another in the same processor."""
    lists = [TIED, COLLIDING, LONE + TIED + COLLIDING, OTHERS, TIED]
    template = json.dumps(csl.style_info(style).template)
    with _both_ways("SCIDRAFT_SHORT_SORT_KEYS", lists, style, "en-US") as (short, _whole):
        widths = json.loads(short.eval(_KEY_WIDTHS % template))
    if not shortened:
        assert widths["short"] is None
        return
    # The last list (TIED): the three Stone works and the two "Same" have whole keys, Ray not.
    assert widths["short"] < widths["whole"]
    assert sorted(widths["widths"]) == [widths["short"]] + [widths["whole"]] * 5


def test_leading_sort_keys_tying_across_lists_formatted_apart_ask_for_the_whole_list():
    """Two works of one author and year formatted apart carry short keys that tie: only their
    titles could order them, so the order of the lists put together is refused (the whole
    list is formatted instead); keys that differ early are put in order."""
    info = csl.style_info("chicago-author-date")
    objects = {o["label"]: o for o in _objects(TIED)}

    def rows(*groups):
        found = []
        for index, labels in enumerate(groups):
            answer = processor.run(
                [objects[label] for label in labels],
                info,
                "en-US",
                citations=False,
                sortkeys=True,
            )
            found += [(key, index, answer["sortkeys"][key]) for key in labels]
        return found

    assert processor.order(info, "en-US", rows(["t1"], ["t2"])) is None
    assert processor.order(info, "en-US", rows(["t6"], ["t2"])) == ["t6", "t2"]
    assert processor.order(info, "en-US", rows(["t1", "t2"], ["t6"])) == ["t6", "t2", "t1"]


# Markup citeproc-js reads in strings: italics and small caps, braces kept in case, straight
# and curly quotes (nested), an apostrophe between letters, brackets beyond ASCII, and fields
# with none of it.
MARKUP = r"""
@article{m1, author = {O'Brien, Cian and D{\'\i}az, Mar{\'\i}a}, title = {The \textit{in vivo} role
  of {DNA} in ``quoted'' and "straight" words}, journal = {J}, year = 2019}
@book{m2, author = {Nu{\~n}ez, Ana}, title = {It’s the \textsc{Rad} of ‘inner “double” quotes’},
  publisher = {P}, year = 2018}
@article{m3, author = {Ito, Ken}, title = {「Brackets」 and 《titles》 and <b>tags</b>},
  journal = {K}, year = 2020, pages = {1--9}}
@article{m4, author = {Plain, Pat}, title = {Nothing special here at all}, journal = {Plain
  Journal}, year = 2001, volume = 3, pages = {10--20}}
"""


@pytest.mark.parametrize(
    ("style", "locale"),
    [
        ("apa", "en-US"),
        ("chicago-author-date", "de-DE"),  # „…“ quotes
        ("vancouver", "en-US"),
        ("modern-language-association", "fr-FR"),  # « … »
    ],
)
def test_strings_without_markup_skip_the_flip_flopper_and_read_the_same(style, locale):
    """Strings with no character any markup or quote needs are passed by the flip-flopper
    untouched (a twelfth of a list): entries and in-text citations read as with every string
    parsed, the marked-up ones (italics, kept case, quotes of the locale, apostrophes)
    included."""
    lists = [MARKUP, COLLIDING, MARKUP + OTHERS]
    template = json.dumps(csl.style_info(style).template)
    key = f"scidraftCslEngineKey({template}, {json.dumps(locale)})"
    with _both_ways("SCIDRAFT_PLAIN_STRINGS", lists, style, locale) as (plain, parsed):
        assert plain.eval(f"SCIDRAFT_ENGINES[{key}].fun.flipflopper.scidraftPlain === true")
        assert parsed.eval(f"!SCIDRAFT_ENGINES[{key}].fun.flipflopper.scidraftPlain")


# Names whose parts citeproc-js splits or initialises: particles before the family name
# ("van der", "de la", "d'", lower-case "von" in the given name), suffixes (", Jr.", ", III"),
# hyphenated and dotted given names, lower-case and single-letter given names, a name not in
# Latin script, "Lord" (never initialised), and one name twice with its particle written
# apart and inside: the answers remembered must be the ones each name would get.
NAMES = r"""
@article{n1, author = {van der Berg, Pieter and de la Cruz, Mar{\'\i}a and d'Alembert, Jean},
  title = {Particles}, journal = {J}, year = 2010}
@article{n2, author = {Berg, Pieter van der and King, Jr., Martin Luther and Gates, III, Bill},
  title = {Given particles and suffixes}, journal = {J}, year = 2010}
@book{n3, author = {Sartre, Jean-Paul and Tolkien, J.R.R. and Cummings, e. e. and Ng, A},
  title = {Hyphens and initials}, publisher = {P}, year = 2011}
@book{n4, author = {{毛泽东} and Byron, Lord and Humboldt, Alexander von},
  title = {Scripts and lords}, publisher = {P}, year = 2012}
@incollection{n5, author = {Berg, Pieter van der}, editor = {van der Berg, P. and Ng, A},
  title = {Editors too}, booktitle = {B}, publisher = {P}, year = 2010}
"""
NAME_PARTS_STYLES = [
    ("apa", "en-US"),  # initials with periods, given names added to tell names apart
    ("chicago-author-date", "de-DE"),  # full given names, particles sorted and demoted
    ("vancouver", "en-US"),  # initials without periods or spaces
    ("ieee", "en-US"),  # initials before the family name
    ("modern-language-association", "fr-FR"),
    ("american-physics-society", "tr-TR"),  # a locale whose lower case is its own
]


@pytest.mark.parametrize(("style", "locale"), NAME_PARTS_STYLES)
def test_names_split_and_initialised_once_read_as_when_done_every_time(style, locale):
    """Particles split and given names initialised are remembered by their arguments (a tenth
    of an author–date list): entries, order and in-text citations read as with every name
    done again, for particles, suffixes, hyphens, initials, other scripts and a locale with
    its own lower case, one list after another in the same processor, and after the memory
    was full and forgot."""
    lists = [NAMES, COLLIDING, NAMES + OTHERS, LONE + NAMES]

    def forget_often(index: int, context: MiniRacer) -> None:
        if index == 3:
            context.eval("SCIDRAFT_NAME_PARTS_MAX = 3")  # forgets again and again

    with _both_ways("SCIDRAFT_NAME_PARTS", lists, style, locale, forget_often) as (fast, _full):
        assert fast.eval('CSL.parseParticles.toString().includes("SCIDRAFT_NAME_PARTS")')


# Characters the HTML escape replaces: ampersands, angle brackets, double spaces and
# superscript letters (ª ² ʰ), beside strings with none.
ESCAPED = r"""
@article{e1, author = {Smith, Jane}, title = {Salts \& acids: Ca² and  Mg in <b>tags</b>},
  journal = {Physics {\&} Chemistry}, year = 2019, note = {1ª edición, ʰ}}
@book{e2, author = {Plain, Pat}, title = {Nothing special}, publisher = {A \& B}, year = 2001}
@article{e3, author = {Ion, Cal}, title = {Ca² ions in the ʰ form}, journal = {J}, year = 2020}
"""


@pytest.mark.parametrize("style", ["apa", "vancouver", "chicago-author-date"])
def test_strings_with_nothing_to_escape_are_given_back_and_read_the_same(style):
    """HTML escaping gives a string with no &, <, >, double space or superscript letter back
    as it is: entries and in-text citations read as with every string escaped, those with
    such characters (escaped, or superscripted) included."""
    lists = [ESCAPED, MARKUP, ESCAPED + COLLIDING]
    with _both_ways("SCIDRAFT_PLAIN_ESCAPE", lists, style, "en-US") as (plain, _escaping):
        answer = _format(plain, _objects(ESCAPED), style, "en-US")
    entries = " ".join(html for _key, html in answer["entries"])
    assert "&#38;" in entries
    assert "ca<sup>2</sup> ions in the <sup>h</sup> form" in entries.lower()  # title case


CASES = ["I", "İSTANBUL", "ΆΣΟΣ", "Straße", "ǅ", "TITLE Words", ""]
LOCALE_LISTS = [["en-US", "en"], ["tr-TR", "en"], ["az"], ["lt"], ["el-GR"], ["EN-us"], ["de"]]


def _thrown(context: MiniRacer, expression: str) -> str:
    """The name of the error `expression` throws in `context`, or "no error"."""
    return context.eval(
        f"(function () {{ try {{ {expression}; return 'no error'; }}"
        " catch (error) { return error.name; } })()"
    )


def test_case_mapping_with_locales_answers_as_v8_does():
    """String case mapping with a list of locales (as citeproc-js calls it) gives in the
    citation context what V8 itself gives in a bare context, the special locales included;
    an invalid tag still throws."""
    probe = (
        "JSON.stringify("
        + json.dumps(CASES)
        + ".map(function (s) { return "
        + json.dumps(LOCALE_LISTS)
        + ".map(function (l) {"
        " return [s.toLocaleLowerCase(l), s.toLocaleUpperCase(l)]; }); }))"
    )
    # A bare context made as the app makes one: the first context of a process starts V8,
    # and one made directly would start it without the app's flags for the whole process.
    bare = v8pool.new_context()
    context = _fresh_context()
    try:
        assert context.eval(probe) == bare.eval(probe)
        invalid = "'A'.toLocaleLowerCase(['en_US!'])"
        assert _thrown(context, invalid) == _thrown(bare, invalid) == "RangeError"
    finally:
        context.close()
        bare.close()


COMPARED = [
    "",
    "a",
    "A",
    "á",
    "b",
    "Smith, Jane",
    "smith, jane",
    "Smith, John",
    "Müller",
    "Mueller",
    "file10",
    "file9",
    "straße",
    "strasse",
    "ål",
    "zebra",
    "ılık",
    "Ilık",
    "[x",
    "x",
    "O'Neil",
    "ONeil",
    "van der Berg",
    "Berg",
]
COLLATION_LOCALES = ["en-US", "de-DE", "sv-SE", "tr-TR", "fr-FR"]
COLLATION_OPTIONS = [
    {"sensitivity": "base", "ignorePunctuation": True, "numeric": True},  # citeproc-js's
    {},
    {"sensitivity": "accent"},
    {"numeric": "false"},  # a string: true once read as a boolean
    {"numeric": False},
    {"caseFirst": "upper", "sensitivity": "case"},
    None,  # no options at all
]


def test_comparisons_with_a_locale_and_options_answer_as_v8_does():
    """localeCompare with a locale and options (as citeproc-js sorts) answers from a kept
    collator exactly as V8 answers building one for the call, for accents, case, punctuation,
    numbers, the sharp s, Swedish and Turkish letters; an invalid locale still throws."""
    probe = (
        "JSON.stringify((function () { var out = [], words = "
        + json.dumps(COMPARED)
        + ", locales = "
        + json.dumps(COLLATION_LOCALES)
        + ", options = "
        + json.dumps(COLLATION_OPTIONS)
        + ";"
        " for (var l = 0; l < locales.length; l++) for (var o = 0; o < options.length; o++)"
        " for (var i = 0; i < words.length; i++) for (var j = 0; j < words.length; j++)"
        " out.push(options[o] === null ? words[i].localeCompare(words[j], locales[l])"
        " : words[i].localeCompare(words[j], locales[l], options[o]));"
        " return out; })())"
    )
    kept, built = _fresh_context(), _fresh_context()
    try:
        built.eval("SCIDRAFT_CACHED_COLLATORS = false")
        answers = kept.eval(probe)
        assert answers == built.eval(probe)
        assert len(set(json.loads(answers))) == 3  # before, equal and after all occur
        invalid = "'a'.localeCompare('b', 'en_US!', {})"
        assert _thrown(kept, invalid) == _thrown(built, invalid) == "RangeError"
    finally:
        kept.close()
        built.close()


@pytest.mark.parametrize(("style", "locale"), [("apa", "en-US"), ("chicago-author-date", "de-DE")])
def test_lists_sorted_with_kept_collators_read_the_same(style, locale):
    """Sorted lists (ties on the leading keys, particles, accents) come out in the same order
    with the same suffixes and citations whether citeproc-js's comparisons build a collator
    each or use a kept one."""
    lists = [TIED + COLLIDING, NAMES + OTHERS, LONE + NAMES + TIED]
    with _both_ways("SCIDRAFT_CACHED_COLLATORS", lists, style, locale):
        pass  # _both_ways compares each list both ways
