"""Math from LaTeX papers as MathJax typesets it: macros (in formulas and in preambles),
\\DeclareMathOperator, \\ref/\\eqref in math, links, \\mbox, \\sideset, \\ce; their warnings,
bounds and cache keys."""

from __future__ import annotations

import html
import re
import time

import pytest

from scidraft.markup import RenderContext, jsengine, mathlinks, mathmacros, render
from scidraft.markup.mathmacros import Macros, Preamble, find_definitions

from .dom import parse


def _codes(rendered) -> set[str]:
    return {warning.code for warning in rendered.warnings}


def _messages(rendered, code: str) -> list[str]:
    return [warning.message for warning in rendered.warnings if warning.code == code]


_MATHML = re.compile(r'<span class="katex-mathml">(.*?)</span>', re.S)
_TOKEN = re.compile(r"<(mi|mo|mn|mtext|ms)\b[^>]*>([^<]*)</\1>")
_PHANTOM = re.compile(r"<mphantom>.*?</mphantom>", re.S)
# Spacing and invisible operators (function application, invisible separator): how much space
# a formula has is not its text.
_SPACING = re.compile("[\\s\u200b\u2061-\u2064]")


def glyphs(text: str) -> str:
    return _SPACING.sub("", text)


def formula_texts(markup: str) -> list[str]:
    """Each formula's MathML token text, in order (what a screen reader reads), without
    spacing: phantoms, which only reserve space, left out."""
    texts = []
    for mathml in _MATHML.findall(markup):
        mathml = _PHANTOM.sub("", mathml.split("<annotation")[0])
        texts.append(glyphs(html.unescape("".join(text for _, text in _TOKEN.findall(mathml)))))
    return texts


# --- Definitions --------------------------------------------------------------------------------


def test_a_newcommand_applies_to_the_later_formulas_of_the_note():
    """`\\newcommand` in one formula defines the macro for every formula after it, as on a
    MathJax page; the defining formula itself shows only the rest of its TeX."""
    rendered = render(
        "Let $\\newcommand{\\F}{\\mathcal{F}}$ and $x \\in \\F$.\n\nLater: $\\F_t$.\n"
    )
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html)[1:] == ["x∈F", "Ft"]


def test_a_macro_is_unknown_before_its_definition():
    """Definitions apply in document order: a formula before the definition does not see it."""
    rendered = render("First $\\G$.\n\nThen $\\newcommand{\\G}{g}\\G$.\n")
    assert len(_messages(rendered, "math-error")) == 1
    assert rendered.warnings[0].line == 1
    assert formula_texts(rendered.html) == ["g"]


def test_declare_math_operator_and_its_starred_form():
    """\\DeclareMathOperator gives an upright operator; the starred form puts its limits
    underneath in display math, as MathJax does."""
    rendered = render(
        "$\\DeclareMathOperator{\\tr}{tr}\\DeclareMathOperator*{\\argmax}{arg\\,max}$\n\n"
        "$$\\argmax_{x} \\tr(A x)$$\n"
    )
    assert _codes(rendered) == set()
    display = rendered.html.split('class="math-display"')[1]
    assert "<munder>" in display
    assert 'mathvariant="normal">tr</mi>' in display


def test_renewcommand_replaces_a_name_katex_predefines():
    """`\\renewcommand{\\R}` takes effect although KaTeX defines \\R itself."""
    rendered = render("$\\renewcommand{\\R}{\\mathcal{Q}}\\R$")
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html) == ["Q"]


@pytest.mark.parametrize("name", ["\\R", "\\frac", "\\N"])
def test_newcommand_of_an_existing_name_redefines_it_as_mathjax_does(name):
    """MathJax lets \\newcommand replace any command (KaTeX would refuse "attempting to
    redefine"): the new meaning applies, with no error."""
    rendered = render(f"$\\newcommand{{{name}}}{{W}}{name}$ and ${name}$")
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html) == ["W", "W"]


def test_renewcommand_of_a_new_name_defines_it_as_mathjax_does():
    """\\renewcommand of a name nobody defined defines it (MathJax does not object)."""
    rendered = render("$\\renewcommand{\\fresh}{f}\\fresh$")
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html) == ["f"]


def test_arguments_and_a_default_for_the_first_one():
    """`[2]` takes two arguments; `[2][d]` makes the first optional with d as its default."""
    rendered = render(
        "$\\newcommand{\\pair}[2]{(#1,#2)}\\newcommand{\\opt}[2][d]{#1+#2}"
        "\\pair{a}{b}\\ \\opt{x}\\ \\opt[y]{z}$"
    )
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html) == ["(a,b)d+xy+z"]


def test_def_and_the_brace_less_name_form():
    """`\\def\\x#1{…}` and `\\newcommand\\x{…}` (no braces around the name) are definitions too."""
    rendered = render("$\\def\\sq#1{#1^2}\\newcommand\\one{1}$ then $\\sq{\\one}$")
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html)[-1] == "12"


def test_a_definition_katex_refuses_is_reported_and_the_rest_still_typesets():
    """A definition KaTeX cannot read is named in a warning; it is left out, so the formulas
    after it do not all fail with it."""
    rendered = render("$\\def\\bad#2{x}$ and $\\newcommand{\\ok}{k}\\ok$")
    messages = _messages(rendered, "math-macro")
    assert len(messages) == 1 and "\\def\\bad" in messages[0]
    assert formula_texts(rendered.html)[-1] == "k"


def test_a_definition_is_found_with_its_span_and_canonical_form():
    """find_definitions reads each form to a \\gdef with the declared parameters."""
    tex = "a\\newcommand{\\f}[2]{#1#2}b\\DeclareMathOperator*{\\op}{op}c"
    found = find_definitions(tex)
    assert [item.tex for item in found] == [
        "\\gdef\\f#1#2{#1#2}",
        "\\gdef\\op{\\operatorname*{op}}",
    ]
    assert mathmacros.without(tex, found) == "abc"


# --- Bounds -------------------------------------------------------------------------------------


def test_a_recursive_newcommand_stops_with_a_warning_in_bounded_time():
    """`\\newcommand{\\a}{\\a\\a}` used in 200 formulas: each stops at KaTeX's maxExpand with a
    warning that names the cause, until the render's budget stops the rest (shown as source,
    with a render-limit warning); the note renders in bounded time."""
    source = "$\\newcommand{\\a}{\\a\\a}$\n\n" + "\n\n".join(f"$\\a {n}$" for n in range(200))
    start = time.process_time()
    rendered = render(source)
    assert time.process_time() - start < 5
    # render-incomplete: the render's time ran out first on a slow or loaded machine.
    assert _codes(rendered) <= {"math-error", "render-limit", "render-incomplete"}
    messages = _messages(rendered, "math-error")
    assert messages and "too many macro expansions" in messages[0] and "recursive" in messages[0]


def test_definitions_past_the_bound_are_refused_with_a_warning():
    """More distinct macros than MAX_DEFINITIONS: the ones past it are not defined, and the
    warning names the first refused one."""
    count = mathmacros.MAX_DEFINITIONS + 3
    source = "$" + "".join(f"\\newcommand{{\\m{_letters(n)}}}{{{n}}}" for n in range(count)) + "$"
    rendered = render(source)
    messages = _messages(rendered, "math-macro")
    assert len(messages) == 3, rendered.warnings[:3]
    assert f"\\m{_letters(mathmacros.MAX_DEFINITIONS)}" in messages[0]


def _letters(number: int) -> str:
    """A control word's letters for `number` (digits would end the name)."""
    return "".join("abcdefghij"[int(digit)] for digit in str(number))


def test_redefining_one_name_keeps_one_definition():
    """A name defined again replaces its entry, so a note that redefines \\x in every formula
    keeps one definition of it (and never reaches the bound)."""
    macros, warnings = Macros(), []
    for n in range(mathmacros.MAX_DEFINITIONS + 5):
        found = find_definitions(f"\\def\\x{{{n}}}\\x")
        macros = macros.plus(mathmacros.admit(macros, found, 1, warnings))
    assert warnings == []
    assert macros.definitions == (("\\x", f"\\gdef\\x{{{mathmacros.MAX_DEFINITIONS + 4}}}"),)


# --- Cache --------------------------------------------------------------------------------------


def test_the_formula_cache_is_keyed_by_the_macros_in_force():
    """The same TeX after different definitions is a different formula: two notes defining
    \\V differently each get their own, whichever order they are rendered in."""
    first = render("$\\newcommand{\\V}{\\alpha}$ $\\V$")
    second = render("$\\newcommand{\\V}{\\beta}$ $\\V$")
    again = render("$\\newcommand{\\V}{\\alpha}$ $\\V$")
    assert formula_texts(first.html)[-1] == "α"
    assert formula_texts(second.html)[-1] == "β"
    assert again.html == first.html
    alpha = Macros((("\\V", "\\gdef\\V{\\alpha}"),))
    beta = Macros((("\\V", "\\gdef\\V{\\beta}"),))
    assert alpha.digest != beta.digest
    assert jsengine.render_tex("\\V", display=False, macros=alpha) != jsengine.render_tex(
        "\\V", display=False, macros=beta
    )


# --- Preambles ----------------------------------------------------------------------------------


def _with(*preambles: tuple[str, str]) -> RenderContext:
    return RenderContext(math_macros=tuple(Preamble(where, tex) for where, tex in preambles))


def test_site_and_note_preambles_apply_to_every_formula_the_note_after_the_site():
    """The site's preamble, then the note's (which may redefine a site macro), then the body."""
    context = _with(
        ("the site's math macros", "\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand{\\E}{E}"),
        ("the note's math macros", "\\renewcommand{\\E}{\\mathbb{E}} % expectation"),
    )
    rendered = render("$\\E[x] \\in \\R$", context)
    assert _codes(rendered) == set()
    assert 'mathvariant="double-struck">E</mi>' in rendered.html
    assert 'mathvariant="double-struck">R</mi>' in rendered.html


def test_a_preamble_line_that_is_not_a_definition_is_reported_with_its_line():
    """Text that is no definition is ignored, with a warning naming the preamble and line."""
    context = _with(("the site's math macros", "\\newcommand{\\R}{r}\nx + y\n"))
    rendered = render("$\\R$", context)
    (message,) = _messages(rendered, "math-macro")
    assert message.startswith("the site's math macros, line 2:") and "x + y" in message
    assert formula_texts(rendered.html) == ["r"]


def test_a_definition_katex_refuses_in_a_preamble_is_named_and_the_others_kept():
    """One broken definition in a preamble is reported by its line and command; the other
    definitions still apply."""
    context = _with(("the note's math macros", "\\newcommand{\\a}{a}\n\\def\\b#2{}\n"))
    rendered = render("$\\a$", context)
    (message,) = _messages(rendered, "math-macro")
    assert message.startswith("the note's math macros, line 2: \\def\\b")
    assert formula_texts(rendered.html) == ["a"]


def test_an_oversized_preamble_is_not_used():
    """A preamble over MAX_PREAMBLE_CHARS is refused whole, with a warning saying so."""
    big = "\\newcommand{\\z}{z}" + " " * mathmacros.MAX_PREAMBLE_CHARS
    rendered = render("$x$", _with(("the site's math macros", big)))
    (message,) = _messages(rendered, "math-macro")
    assert "over the limit" in message


def test_the_card_sees_the_macros_the_page_defines():
    """A preview region typesets with every definition of the note, so its macros work there
    as on the page."""
    source = (
        "$\\newcommand{\\K}{\\kappa}$\n\n{{< preview >}}\nA card with $\\K$.\n{{< /preview >}}\n"
    )
    rendered = render(source)
    assert rendered.has_preview
    assert formula_texts(rendered.card_html) == ["κ"]


# --- References in math -------------------------------------------------------------------------


def test_eqref_and_ref_in_math_link_to_the_labels_like_prose():
    """\\eqref in math shows "(N)" and \\ref "N", linked to the equation's anchor, even when
    the equation comes later; the TeX annotation keeps what the author wrote."""
    rendered = render(
        "By $\\eqref{eq:later}$ and $x = \\ref{eq:later}$:\n\n$$a = b \\label{eq:later}$$\n"
    )
    assert _codes(rendered) == set()
    doc = parse(rendered.html)
    links = doc.select(".katex-html a")
    assert [(link.attrs["href"], link.text) for link in links] == [
        ("#eq-later", "(1)"),
        ("#eq-later", "1"),
    ]
    assert formula_texts(rendered.html)[:2] == ["(1)", "x=1"]
    assert "\\eqref{eq:later}</annotation>" in rendered.html
    assert "SDREF" not in rendered.html


def test_a_reference_in_math_to_a_theorem_reads_as_in_prose():
    """\\ref to an environment's label gives its number and \\Cref its kind too, as in LaTeX
    and as in prose."""
    rendered = render(":::lemma{#lem:a}\nTrue.\n:::\n\n$\\text{by } \\ref{lem:a}$\n")
    assert '<a class="ref" href="#lem-a">1</a>' in rendered.html
    assert "Lemma 1</a>" not in rendered.html


def test_an_unresolved_reference_in_math_is_flagged():
    """A \\ref to no label shows ?? and warns on the formula's line, as in prose."""
    rendered = render("Text.\n\n$\\eqref{nowhere}$\n")
    warning = next(w for w in rendered.warnings if w.code == "ref-unresolved")
    assert warning.line == 3 and "\\eqref{nowhere}" in warning.message
    assert "??" in rendered.html


def test_a_macro_whose_body_uses_ref_links_as_the_ref_written_out_would():
    """\\ref inside a macro's body (KaTeX has no \\ref of its own) links to the label the
    macro's argument names, through a macro that uses such a macro, and from the note's
    preamble."""
    body = (
        ":::lemma{#lem:a}\nTrue.\n:::\n\n"
        "$\\newcommand{\\thm}[1]{\\text{by }\\ref{#1}}\\thm{lem:a}$ and "
        "$\\newcommand{\\see}[1]{\\text{see }\\thm{#1}}\\see{lem:a}$ and $\\cf{lem:a}$\n"
    )
    rendered = render(body, _with(("the note's math macros", "\\newcommand{\\cf}[1]{\\ref{#1}}")))
    assert _codes(rendered) == set()
    links = parse(rendered.html).select(".katex-html a")
    assert [(link.attrs["href"], link.text) for link in links] == [("#lem-a", "1")] * 3
    assert formula_texts(rendered.html) == ["by1", "seeby1", "1"]
    # The annotation holds the expansion: TeX that reads the same without the macro.
    assert "\\text{see }\\text{by }\\ref{lem:a}</annotation>" in rendered.html
    assert "SDREF" not in rendered.html


def test_a_referring_macros_arguments_defaults_and_control_words_read_as_in_tex():
    """An optional first argument takes its default or what the brackets give, an argument
    without braces is one token, and a control word in the body stays apart from the letters
    an argument brings (\\alpha then b, not \\alphab)."""
    body = (
        "$$a = b \\label{eq:x}$$\n\n$$c = d \\label{ex:x}$$\n\n"
        "$\\newcommand{\\eq}[2][eq]{\\alpha#2\\eqref{#1:#2}}\\eq{x}, \\eq[ex]{x}, \\eq x$\n"
    )
    rendered = render(body)
    assert _codes(rendered) == set()
    links = parse(rendered.html).select(".katex-html a")
    assert [(link.attrs["href"], link.text) for link in links] == [
        ("#eq-x", "(1)"),
        ("#ex-x", "(2)"),
        ("#eq-x", "(1)"),
    ]
    assert formula_texts(rendered.html)[2] == "αx(1),αx(2),αx(1)"


def test_macros_without_a_ref_are_left_to_katex():
    """Only macros that (through others) use \\ref are expanded before KaTeX; the formula is
    otherwise given to KaTeX as written."""
    macros = Macros().plus(
        [("\\R", "\\gdef\\R{\\mathbb{R}}"), ("\\thm", "\\gdef\\thm#1{\\ref{#1}}")]
    )
    assert mathlinks.expand_referring_macros("x \\in \\R", macros) == "x \\in \\R"
    assert mathlinks.expand_referring_macros("\\R\\thm{a}", macros) == "\\R\\ref{a}"
    assert mathlinks.expand_referring_macros("\\thm", macros) == "\\thm"  # no argument


def test_a_referring_macro_that_uses_itself_is_stopped_with_a_warning():
    """A macro using \\ref that expands itself forever is stopped at the bound: the formula
    shows as an error saying so, and the rest of the note renders."""
    rendered = render("$\\gdef\\loop{\\ref{a}\\loop}\\loop$ and $x^2$\n")
    (message,) = _messages(rendered, "math-error")
    assert "\\loop uses \\ref and expands too often" in message and "recursive" in message
    assert "ref-unresolved" not in _codes(rendered)
    assert formula_texts(rendered.html) == ["x2"]


# --- Links --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["https://example.org/a_b#c", "http://example.org", "mailto:someone@example.org"]
)
def test_href_and_url_to_safe_schemes_are_links(url):
    """\\href and \\url to http, https and mailto become links KaTeX writes."""
    rendered = render(f"$\\href{{{url}}}{{x}}$ and $\\url{{{url}}}$")
    assert _codes(rendered) == set()
    assert rendered.html.count(f'href="{html.escape(url)}"') >= 2


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "/relative", "#top"]
)
def test_links_to_other_schemes_are_plain_text_with_a_warning(url):
    """Any other address: a math-link warning naming it, the text without a link, and
    nothing of the address in an href."""
    rendered = render(f"$\\href{{{url}}}{{click}}$ $\\url{{{url}}}$")
    messages = _messages(rendered, "math-link")
    assert len(messages) == 2 and url in messages[0]
    assert "href=" not in rendered.html
    assert "click" in formula_texts(rendered.html)[0]


def test_the_trust_function_refuses_what_the_rewrite_would_miss():
    """KaTeX itself writes no link to another scheme and no other trusted command, so a link
    the rewrite missed is still not written."""
    markup = jsengine.render_tex("\\href{javascript:alert(1)}{x}", display=False)
    assert "javascript" not in markup.split('class="katex-html"')[1]
    for tex in ["\\htmlId{x}{y}", "\\htmlData{a=b}{y}", "\\includegraphics{https://x.org/a.png}"]:
        assert "<a " not in jsengine.render_tex(tex, display=False)


# --- Other constructs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        ("\\mbox{if } x>0", "ifx>0"),
        ("\\sideset{_a^b}{_c^d}\\sum", "ab∑cd"),
        ("\\ce{H2O}", "H2O"),
        ("\\ce{CO2 + C -> 2 CO}", "CO2+C→2CO"),
        ("\\ce{SO4^2-}", "SO42−"),
    ],
)
def test_mbox_sideset_and_mhchem(tex, text):
    """\\mbox, \\sideset and mhchem's \\ce (loaded beside KaTeX) typeset without error."""
    rendered = render(f"$${tex}$$")
    assert _codes(rendered) == set()
    assert formula_texts(rendered.html)[0] == text


# --- The oracle: MathJax v4, as the theme typesets ----------------------------------------------

# Each case: formulas typeset in order on one page; the last one is compared. `design` says why
# ours differs, on purpose, where it does; otherwise acceptance and text must be MathJax's.
ORACLE_CASES = [
    ("newcommand", [("\\newcommand{\\F}{\\mathcal{F}}", False), ("x \\in \\F", False)], None),
    ("newcommand-args", [("\\newcommand{\\pair}[2]{(#1,#2)}\\pair{a}{b}", False)], None),
    ("newcommand-default", [("\\newcommand{\\opt}[2][d]{#1+#2}\\opt{x}\\opt[y]{z}", False)], None),
    ("newcommand-existing", [("\\newcommand{\\frac}{W}\\frac", False)], None),
    ("newcommand-katex-name", [("\\newcommand{\\R}{W}\\R", False)], None),
    ("renewcommand-new-name", [("\\renewcommand{\\fresh}{f}\\fresh", False)], None),
    ("renewcommand-R", [("\\renewcommand{\\R}{\\mathbb{R}}", False), ("\\R^n", False)], None),
    ("def", [("\\def\\sq#1{#1^2}\\sq{y}", False)], None),
    ("operator", [("\\DeclareMathOperator{\\tr}{tr}\\tr A", False)], None),
    ("operator-star", [("\\DeclareMathOperator*{\\argmax}{argmax}\\argmax_x f", True)], None),
    ("recursive", [("\\newcommand{\\a}{\\a\\a}\\a", False)], None),
    ("undefined", [("\\nosuchmacro", False)], None),
    ("mbox", [("\\mbox{if } x > 0", False)], None),
    ("sideset", [("\\sideset{_a^b}{_c^d}\\sum", True)], "order"),
    ("ce", [("\\ce{H2O}", False)], None),
    ("ce-reaction", [("\\ce{CO2 + C -> 2 CO}", False)], None),
    ("ce-ion", [("\\ce{SO4^2-}", False)], None),
    ("href", [("\\href{https://example.org}{a+b}", False)], None),
    # MathJax makes a javascript: link; SciDraft shows the text and warns (safe schemes only).
    ("href-unsafe", [("\\href{javascript:alert(1)}{a}", False)], "warning"),
    # The theme's MathJax has no \url (it shows "\url" in red); SciDraft links safe addresses.
    ("url", [("\\url{https://example.org}", False)], "accepted"),
    # MathJax shows (???) for a label it does not know; SciDraft shows ?? and warns, as in prose.
    ("eqref-unknown", [("\\eqref{nowhere}", False)], "unresolved"),
]
# MathJax v4's own font draws mhchem's reaction arrow with a private-use glyph.
_MATHJAX_FONT = str.maketrans({"\ue429": "→"})


def _mathjax_answer(name: str) -> dict:
    """MathJax's answer for the last formula of case `name`. Node runs once for all cases, as
    one page in the listed order: each case defines what it uses before using it, so what an
    earlier case defined changes nothing."""
    from .oracle import mathjax

    flat, last = [], {}
    for case, formulas, _ in ORACLE_CASES:
        flat.extend(formulas)
        last[case] = len(flat) - 1
    return mathjax(tuple(flat))[last[name]]


def _render_case(formulas: list[tuple[str, bool]]):
    body = "\n\n".join(f"$${tex}$$" if display else f"${tex}$" for tex, display in formulas)
    return render(body + "\n")


@pytest.mark.parametrize(
    ("name", "formulas", "design"), ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES]
)
def test_each_construct_as_mathjax_typesets_it(name, formulas, design):
    """The last formula of each case is accepted or refused as MathJax accepts or refuses it,
    and shows the same glyphs; the differences by design are the listed ones."""
    theirs = _mathjax_answer(name)
    rendered = _render_case(formulas)
    line = 1 + 2 * (len(formulas) - 1)
    problems = {"math-error", "math-macro", "math-link", "ref-unresolved"}
    flagged = [w for w in rendered.warnings if w.line == line and w.code in problems]
    ours = formula_texts(rendered.html)
    theirs_text = glyphs(theirs["text"]).translate(_MATHJAX_FONT)
    if design == "unresolved":  # question marks both, and a warning where MathJax has none
        assert theirs["ok"] and flagged
        assert set(ours[-1]) == {"?"} and "?" in theirs_text
        return
    if design == "warning":  # same text, and a warning where MathJax has none
        assert theirs["ok"] and flagged
        assert ours[-1] == theirs_text
        return
    if design == "accepted":  # MathJax refuses it, SciDraft typesets it
        assert not theirs["ok"] and not flagged
        return
    assert (not flagged) == theirs["ok"], (theirs, rendered.warnings)
    if not theirs["ok"]:
        return
    if design == "order":  # MathJax's mmultiscripts and KaTeX's scripts list them in another order
        assert sorted(ours[-1]) == sorted(theirs_text)
    else:
        assert ours[-1] == theirs_text


def test_scripts_after_sideset_are_limits_in_display_only():
    """`\\sideset{}{'}\\sum_{n}` keeps the sum an operator, as MathJax does: in display the
    subscript goes underneath, inline beside it."""
    display = render("$$\\sideset{}{'}\\sum_{n \\lt N} a_n$$").html
    inline = render("$\\sideset{}{'}\\sum_{n \\lt N} a_n$").html
    assert "op-limits" in display.split("katex-html")[1]
    assert "op-limits" not in inline.split("katex-html")[1]


def test_a_link_in_a_macro_follows_the_same_rule():
    """A macro whose body links to another scheme is defined with the text only, and warned
    about where it is defined; a safe link in a macro stays a link."""
    rendered = render(
        "$\\newcommand{\\bad}{\\href{javascript:alert(1)}{no}}"
        "\\newcommand{\\good}{\\href{https://example.org}{yes}}$ $\\bad \\good$"
    )
    assert len(_messages(rendered, "math-link")) == 1
    assert "javascript" not in rendered.html
    assert 'href="https://example.org"' in rendered.html
