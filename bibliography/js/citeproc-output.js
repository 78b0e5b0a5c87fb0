// Shortcuts on citeproc-js's output of strings. Each is a function of its arguments that
// returns what citeproc-js's own would for the strings it skips, behind a flag the tests turn
// off to compare whole lists both ways (tests/bibliography/test_csl_shortcuts.py names the test
// beside each); the benchmark figures are docs/benchmarks.md's.

// Characters that can start markup the flip-flopper parses: "<", quotes (straight, the
// locale's quote terms, any Unicode initial/final quotation mark) and brackets beyond ASCII's.
// `quotes` is the locale's quote terms joined; null when a term is not a plain string.
export function markupPattern(quotes) {
  if (quotes === null) return null;
  const escaped = quotes.replace(/\s/g, "").replace(/[\\\]^-]/g, "\\$&");
  return new RegExp("[<\"'\\p{Pi}\\p{Pf}" + escaped + "]|(?![()\\[\\]{}])[\\p{Ps}\\p{Pe}]", "u");
}

// The locale's quote terms joined, or null when one is not a plain string.
export function quoteTerms(engine) {
  let quotes = "";
  for (const name of ["open-quote", "close-quote", "open-inner-quote", "close-inner-quote"]) {
    const term = engine.getTerm(name);
    if (term && typeof term !== "string") return null;
    quotes += term || "";
  }
  return quotes;
}

// citeproc-js looks for markup in every string it outputs (<i>, <span class="nocase">, quotes
// to flip-flop: the flip-flopper's processTags), building a regular expression and splitting
// the string each time, and leaves a string that has none untouched. A string with none of
// markupPattern's characters is passed by as processTags would leave it.
// No output changes: test_strings_without_markup_skip_the_flip_flopper_and_read_the_same.
// Worth 8% of an APA list's CPU time, 6% of a Vancouver one
// (benchmarks/citation_shortcuts.py; docs/benchmarks.md, "Citation shortcuts").
globalThis.SCIDRAFT_PLAIN_STRINGS = true;
export function skipPlainStrings(engine) {
  const flipflopper = engine.fun && engine.fun.flipflopper;
  if (!globalThis.SCIDRAFT_PLAIN_STRINGS || !flipflopper || flipflopper.scidraftPlain) return;
  const markup = markupPattern(quoteTerms(engine));
  if (markup === null) return;  // not plain terms: keep parsing everything
  const processTags = flipflopper.processTags;
  flipflopper.processTags = function (blob) {
    if (typeof blob.blobs === "string" && !markup.test(blob.blobs)) return;
    return processTags.apply(this, arguments);
  };
  flipflopper.scidraftPlain = true;
}

// Every string of HTML output goes through text_escape's five replacements, each a no-op for a
// string with no &, <, >, double space or superscript letter: such a string is given back as it
// is. Processors take the function when they are built, so it is replaced before any.
// No output changes: test_strings_with_nothing_to_escape_are_given_back_and_read_the_same.
// Worth 3-4% of an APA list's CPU time alone (benchmarks/citation_shortcuts.py); without it
// and the lone-cite shortcut an APA list took 18% more CPU, a Chicago author–date one
// 14% (benchmarks/bibliography.py; docs/benchmarks.md, "Citation shortcuts").
globalThis.SCIDRAFT_PLAIN_ESCAPE = true;
export function installPlainEscape(CSL) {
  const html = CSL.Output.Formats.html, escape = html.text_escape;
  const special = new RegExp("[&<>]|\\s\\s|" + CSL.SUPERSCRIPTS_REGEXP.source);
  html.text_escape = function text_escape(text) {
    if (globalThis.SCIDRAFT_PLAIN_ESCAPE && typeof text === "string" && !special.test(text)) {
      return text;
    }
    return escape.apply(this, arguments);
  };
}
