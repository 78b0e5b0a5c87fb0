"""BibTeX's plain, unsrt and alpha, as pybtex implements them, with three adjustments.

Titles keep protected braces and math through BibTeX's sentence case (`{BERT}`, `$O(n^2)$`);
`\\url{…}` in `howpublished` and the `url`/`doi` fields become links (pybtex already links the
last two; here they are also cleaned of `\\url{}`, TeX escapes and `https://doi.org/` prefixes);
an incomplete or unknown entry falls back to the misc layout instead of raising.
"""

from __future__ import annotations

from pybtex.style.formatting import toplevel
from pybtex.style.formatting.alpha import Style as PybtexAlpha
from pybtex.style.formatting.plain import Style as PybtexPlain
from pybtex.style.formatting.unsrt import Style as PybtexUnsrt
from pybtex.style.formatting.unsrt import date
from pybtex.style.template import optional, sentence, tag, words

from .base import LenientMixin, doi_link, rich_field, url_link


class BibtexAdjustments(LenientMixin):
    def format_title(self, e, which_field, as_sentence=True):
        title = rich_field(which_field, apply_func=lambda text: text.capitalize())
        return sentence[title] if as_sentence else title

    def format_btitle(self, e, which_field, as_sentence=True):
        title = tag("em")[rich_field(which_field)]
        return sentence[title] if as_sentence else title

    def format_url(self, e):
        return words["URL:", url_link(dedupe=False)]

    def format_doi(self, e):
        return doi_link()

    def get_misc_template(self, e):
        return toplevel[
            optional[sentence[self.format_names("author")]],
            optional[self.format_title(e, "title")],
            sentence[optional[rich_field("howpublished")], optional[date]],
            sentence[optional[rich_field("note")]],
            self.format_web_refs(e),
        ]


class UnsrtStyle(BibtexAdjustments, PybtexUnsrt):
    """BibTeX unsrt: numbered, in citation order."""


class PlainStyle(BibtexAdjustments, PybtexPlain):
    """BibTeX plain: numbered, sorted by author, year and title."""


class AlphaStyle(BibtexAdjustments, PybtexAlpha):
    """BibTeX alpha: labels such as Knu84, sorted by author, year and title."""
