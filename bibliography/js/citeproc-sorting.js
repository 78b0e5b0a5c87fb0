// Bibliography sort keys rendered only as far as they decide the order, behind a flag the
// tests turn off to compare whole lists both ways; the benchmark figure is docs/benchmarks.md's.
//
// A bibliography's sort keys are rendered whole for every item, yet the keys after the first
// few decide an order only between items the first ones tie. Chicago's last keys render the
// title and the source again. So updateItems renders the keys up to the first costly one after
// the author (shortSortTokens), then every item whose leading keys equal another's gets its
// whole keys, as before: the processor orders, suffixes ("2017a") and numbers exactly as with
// whole keys everywhere, because two items are compared on whole keys whenever the leading ones
// tie. An item's keys are short or whole by their length; processor.js's scidraftCslOrder,
// which compares keys of lists formatted apart, asks for the whole list when leading keys tie
// across them.
// No output changes: test_whole_sort_keys_are_rendered_only_for_items_whose_leading_keys_tie
// and test_leading_sort_keys_tying_across_lists_formatted_apart_ask_for_the_whole_list.
// Worth 37% of a Chicago author–date list's CPU time
// (benchmarks/citation_shortcuts.py; docs/benchmarks.md, "Citation shortcuts").
globalThis.SCIDRAFT_SHORT_SORT_KEYS = true;
// Tokens past which a key is costly (Chicago's title and source keys: 22,000 and 86,000).
export const COSTLY_KEY_TOKENS = 1000;

// The sort tokens cut after the last cheap key: {tokens, width: keys kept, whole: keys in
// all}, or null when no key after the first is costly (or the tokens are not one sort).
export function shortSortTokens(tokens, costly = COSTLY_KEY_TOKENS) {
  if (tokens.length < 2 || tokens[0].name !== "sort" || tokens[tokens.length - 1].name !== "sort") {
    return null;
  }
  const start = tokens[0].tokentype, starts = [];
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i].name === "key" && tokens[i].tokentype === start) starts.push(i);
  }
  for (let k = 1; k < starts.length; k++) {
    const end = k + 1 < starts.length ? starts[k + 1] : tokens.length - 1;
    if (end - starts[k] > costly) {
      // Jumps inside a key stay inside it; the last kept key goes on to the closing sort token,
      // which now sits where the next key began (it restores what the opening one set).
      const short = tokens.slice(0, starts[k]);
      short.push(tokens[tokens.length - 1]);
      return {tokens: short, width: k, whole: starts.length};
    }
  }
  return null;
}

// The ids, in list order, whose first `width` keys equal another id's.
export function tiedIds(ids, keysOf, width) {
  const seen = new Map(), tied = [];
  for (const id of ids) {
    const lead = JSON.stringify((keysOf(id) || []).slice(0, width));
    if (!seen.has(lead)) { seen.set(lead, id); continue; }
    if (seen.get(lead) !== null) { tied.push(seen.get(lead)); seen.set(lead, null); }
    tied.push(id);
  }
  return tied;
}

// The engine's short sort tokens (kept on its bibliography_sort), or null.
export function engineShortSort(engine) {
  const sort = engine.bibliography_sort;
  if (sort.scidraftShort === undefined) sort.scidraftShort = shortSortTokens(sort.tokens);
  return sort.scidraftShort;
}

export function shortenSortKeys(engine) {
  const registry = engine.registry;
  if (!globalThis.SCIDRAFT_SHORT_SORT_KEYS || registry.scidraftShort) return;
  const short = engineShortSort(engine);
  if (!short) return;
  const setsortkeys = registry.setsortkeys;
  registry.setsortkeys = function () {
    const sort = this.state.bibliography_sort, whole = sort.tokens;
    sort.tokens = short.tokens;
    try { setsortkeys.call(this); } finally { sort.tokens = whole; }
    const keysOf = (id) => this.registry[id].sortkeys;
    const again = tiedIds(this.mylist, keysOf, short.width)
      .filter((id) => (keysOf(id) || []).length < short.whole);
    if (!again.length) return;
    // The whole keys of these items only: setsortkeys renders keys for touched, tainted and
    // keyless items, so for this pass only the tied ones are keyless and nothing is touched.
    const touched = this.touched, tainted = this.state.tmp.taintedItemIDs;
    this.touched = {};
    this.state.tmp.taintedItemIDs = {};
    for (const id of again) this.registry[id].sortkeys = false;
    try { setsortkeys.call(this); } finally {
      this.touched = touched;
      this.state.tmp.taintedItemIDs = tainted;
    }
  };
  registry.scidraftShort = true;
}
