// Cite forms only one item has skip the disambiguator, behind a flag the tests turn off to
// compare whole lists both ways; the benchmark figure is docs/benchmarks.md's.
//
// After inserting a list's items, updateItems runs the disambiguator over every cite form the
// insertion touched. For a form only one item has, it renders that item's cite once more
// (initVars' getCiteData) and then finds nothing to tell apart: the same cite doinserts just
// rendered, and no change to any output (a sweep of 13 author–date styles over 936 lists, the
// theme's .bib files and lists of colliding names, found none). Forms two items share run as
// before.
// No output changes: test_cite_forms_of_one_item_skip_the_disambiguator_and_read_the_same.
// Worth 3-4% of an APA list's CPU time alone (benchmarks/citation_shortcuts.py); without it
// and the HTML-escape shortcut an APA list took 18% more CPU, a Chicago author–date one
// 14% (benchmarks/bibliography.py; docs/benchmarks.md, "Citation shortcuts").
globalThis.SCIDRAFT_LONE_CITES = true;

export function skipLoneCites(engine) {
  const disambiguator = Object.getPrototypeOf(engine.disambiguate);
  if (disambiguator.scidraftLone) return;
  const run = disambiguator.run;
  disambiguator.run = function (akey) {
    const ids = this.ambigcites[akey];  // what run itself reads (initVars)
    if (globalThis.SCIDRAFT_LONE_CITES && ids && ids.length === 1) return;
    return run.apply(this, arguments);
  };
  disambiguator.scidraftLone = true;
}
