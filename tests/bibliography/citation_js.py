"""What the tests of citation-js in the embedded V8 share: small BibTeX lists whose entries
collide (one author's works of one year, a family name two authors share) and other works under
the same keys, citation-js contexts made outside the pool, one list formatted in such a context
in a style and locale, and two contexts formatting the same lists with one of the bundle's
shortcuts turned on in the first and off in the second."""

from __future__ import annotations

import contextlib
import json

from py_mini_racer import MiniRacer

from bibliography import csl, jsbundle, processor
from bibliography.entries import bibtex_object, entry_data
from bibliography.parsing import parse_bibtex

# Two works by one author in one year (2017a/2017b), two authors sharing a family name
# (given-name disambiguation), a work of the same author in another year, and one by
# someone else.
COLLIDING = r"""
@article{one, author = {Smith, Jane}, title = {First}, journal = {J}, year = 2017}
@article{two, author = {Smith, Jane}, title = {Second}, journal = {J}, year = 2017}
@article{three, author = {Smith, John}, title = {Third}, journal = {J}, year = 2017}
@book{four, author = {Smith, Jane and Doe, Ann}, title = {Fourth}, publisher = {P}, year = 2018}
@inproceedings{five, author = {M{\"u}ller, J{\"u}rgen}, title = {Fifth}, booktitle = {B},
  year = 2017}
"""
# Other works under the same keys: what a previous list left must not show in the next one.
OTHERS = r"""
@article{one, author = {Brown, Alan}, title = {Other}, journal = {K}, year = 2001}
@article{two, author = {Brown, Alan}, title = {Another}, journal = {K}, year = 2001}
@book{six, author = {Garc{\'\i}a, Mar{\'\i}a}, title = {Sixth}, publisher = {Q}, year = 1999}
"""


def _objects(text: str) -> list[dict]:
    return [bibtex_object(entry_data(entry))[0] for entry in parse_bibtex(text).entries]


def _fresh_context() -> MiniRacer:
    """A citation-js context no list has used (the pool's loader, outside the pool)."""
    return jsbundle.load()


def _format(context: MiniRacer, objects: list[dict], style: str, locale: str) -> dict:
    info = csl.style_info(style)
    processor._prepare(context, info, locale)
    answer = context.call(
        "scidraftCslFormat", objects, info.template, locale, not info.numeric, timeout_sec=30
    )
    return json.loads(answer)


def _visible(answer: dict) -> tuple:
    return answer["entries"], answer["citations"], answer["errors"]


@contextlib.contextmanager
def _both_ways(flag: str, lists: list[str], style: str, locale: str, before_list=None):
    """Format `lists` one after another in two fresh contexts, the shortcut `flag` turned off
    in the second: every list reads the same both ways (entries, their order, in-text
    citations, errors) and formats cleanly. Yields (with the shortcut, without) for more
    checks; `before_list(index, context)` runs in the first before each list."""
    fast, full = _fresh_context(), _fresh_context()
    try:
        full.eval(f"{flag} = false")
        for index, text in enumerate(lists):
            if before_list is not None:
                before_list(index, fast)
            taken = _format(fast, _objects(text), style, locale)
            done = _format(full, _objects(text), style, locale)
            assert _visible(taken) == _visible(done), (flag, style, locale, index)
            assert taken["entries"] and not taken["errors"]
        yield fast, full
    finally:
        fast.close()
        full.close()
