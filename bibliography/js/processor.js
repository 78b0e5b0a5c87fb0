// The functions bibliography/csl.py calls in a citation context: citation-js reading BibTeX
// entries, and citeproc-js formatting them through citation-js's CSL plugin. Answers are JSON
// text: mini-racer hands objects back as handles into the context.
import {Cite, plugins, util} from "@citation-js/core";
import "@citation-js/plugin-bibtex";
import "@citation-js/plugin-csl";
import "@citation-js/plugin-ris";
import {fetchEngine} from "@citation-js/plugin-csl/lib-mjs/engines.js";

import {skipLoneCites} from "./citeproc-disambiguation.js";
import {skipNameRegister} from "./citeproc-names.js";
import {skipPlainStrings} from "./citeproc-output.js";
import {engineShortSort, shortenSortKeys} from "./citeproc-sorting.js";

export const CSL_CONFIG = plugins.config.get("@csl");

export function cslStyle(name, xml) { CSL_CONFIG.templates.add(name, xml); return true; }
export function cslLocale(name, xml) { CSL_CONFIG.locales.add(name, xml); return true; }

export function message(error) {
  return String((error && error.message) || error).split("\n")[0].slice(0, 300);
}

// BibTeX entries ({type, label, properties}) as the theme's citation-js reads them, each on
// its own so that one it cannot map costs only itself.
export function items(entries, errors) {
  const found = [];
  for (const entry of entries) {
    try {
      const mapped = plugins.input.chain([entry],
        {forceType: "@biblatex/entries+list", generateGraph: false});
      if (!mapped.length) throw new Error("citation-js read no entry");
      mapped[0].id = entry.label;
      found.push(mapped[0]);
    } catch (error) {
      errors[entry.label] = message(error);
    }
  }
  return found;
}

function bibliography(list, options, errors, pass) {
  try {
    return new Cite(list).format("bibliography", options);
  } catch (error) {
    // One item the processor refuses: format them one by one to find it.
    if (pass) pass.whole = false;
    let entries = [];
    for (const item of list) {
      try {
        entries = entries.concat(new Cite([item]).format("bibliography", options));
      } catch (inner) {
        errors[item.id] = message(inner);
      }
    }
    return entries;
  }
}

// plugin-csl keeps one citeproc-js processor per style and locale (it never drops one), and
// resets it (updateItems) for each list. hold takes a reference to it once it exists, to read
// the in-text citations off the state the list's bibliography left.
export const ENGINES = {};
export function engineKey(template, lang) {
  return template + "|" + (CSL_CONFIG.locales.has(lang) ? lang : "");  // as plugin-csl's
}
export function hold(template, lang) {
  const key = engineKey(template, lang);
  if (!ENGINES[key]) {
    // fetchEngine on an existing processor: the same object, reset to no items.
    ENGINES[key] = fetchEngine(template, CSL_CONFIG.locales.has(lang) ? lang : undefined);
  }
  const engine = ENGINES[key];
  skipNameRegister(engine);
  skipLoneCites(engine);
  shortenSortKeys(engine);
  skipPlainStrings(engine);
  return engine;
}

// The processor whose registry holds exactly `ids` (the bibliography just formatted them all),
// else null.
export function listEngine(template, lang, ids) {
  const engine = ENGINES[engineKey(template, lang)];
  if (!engine) return null;
  const held = engine.registry.getSortedIds();
  if (held.length !== ids.length) return null;
  const wanted = new Set(ids);
  for (const id of held) if (!wanted.has(id)) return null;
  return engine;
}

// Each item's in-text citation, cited once in order, from a processor whose registry holds
// exactly these items (sorted and disambiguated by updateItems): what rebuildProcessorState
// does after its own updateItems, without registering, sorting and disambiguating every item a
// second time (a third of an author–date list's time).
export function markers(engine, ids) {
  const pre = [], out = [], found = {};
  for (let i = 0; i < ids.length; i++) {
    const citation = {citationID: "scidraft-" + i, citationItems: [{id: ids[i]}],
                      properties: {noteIndex: i + 1}};
    const result = engine.processCitationCluster(citation, pre, [], 2);  // all registered
    pre.push([citation.citationID, citation.properties.noteIndex]);
    for (const [index, html] of result[1]) out[index] = html;
  }
  for (let k = 0; k < ids.length; k++) found[ids[k]] = out[k];
  return found;
}

// Each item's in-text citation, all in one pass of the processor, so that it disambiguates
// them against each other ("2017a", "2017b") as a document citing each once would.
export function citations(list, template, lang) {
  const data = util.downgradeCsl ? util.downgradeCsl(list) : list;
  const engine = CSL_CONFIG.engine(data, template, lang, "html");  // plugin-csl's own engine
  const clusters = data.map((item, index) => ({
    citationID: "scidraft-" + index, citationItems: [{id: item.id}],
    properties: {noteIndex: index + 1},
  }));
  const output = engine.rebuildProcessorState(clusters, "html", []);
  const found = {};
  for (let i = 0; i < output.length; i++) found[data[i].id] = output[i][2];
  return found;
}

// {entries: [[key, html], …] in the style's order, citations: {key: in-text html},
//  errors: {key: why it could not be formatted}, items: the CSL-JSON of the entries}.
// {…, sortkeys: {key: the processor's bibliography sort keys}, ambigs: {key: the cite it
// disambiguates the item against}} when `sortkeys` asks and the list was formatted whole
// (bibliography/formatting.py puts lists formatted apart together with them).
export function format(entries, template, lang, wantCitations, sortkeys) {
  const errors = {};
  const list = items(entries, errors);
  const result = {entries: [], citations: {}, errors, items: list};
  if (!list.length) return result;
  hold(template, lang);
  const options = {format: "html", template, lang, asEntryArray: true};
  const pass = {whole: true};
  result.entries = bibliography(list, options, errors, pass);
  // The whole list in one bibliography: the processor's registry is the list's, read the
  // sort keys and citations off it. Formatted one by one (an item refused): neither is there.
  const ids = list.map((item) => item.id);
  const engine = pass.whole && (wantCitations || sortkeys)
    ? listEngine(template, lang, ids) : null;
  if (sortkeys && engine) {
    result.sortkeys = {};
    result.ambigs = {};
    for (const id of ids) {
      const registered = engine.registry.registry[id];
      result.sortkeys[id] = registered.sortkeys || [];
      result.ambigs[id] = registered.ambig || "";
    }
  }
  if (wantCitations) {
    try {
      result.citations = engine
        ? markers(engine, ids)
        : citations(list.filter((item) => !(item.id in errors)), template, lang);
    } catch (error) { /* the markers fall back to the keys */ }
  }
  return JSON.stringify(result);
}

// The order updateItems gives a whole list, from each item's sort keys: rows [[key, group,
// sortkeys]] in the list's order. It sorts by the keys, then by the place in the list (the
// `seq` rebuildlist gives before sorttokens inserts), so the order is one whatever the items
// were formatted with. With `together`, null when a group's items are not next to each other
// (subsequent-author-substitute compares an entry with the one above it).
export function order(template, lang, rows, together) {
  const engine = hold(template, lang);
  const list = rows.map((row, index) => {
    const keys = (row[2] || []).map((key) => (key === null ? undefined : key));
    return {id: row[0], group: row[1], sortkeys: keys, seq: index + 1};
  });
  if (engine.bibliography_sort.tokens.length) list.sort(engine.registry.sorter.compareKeys);
  // Short keys (citeproc-sorting.js) that tie across lists formatted apart: only whole keys
  // can order those items, and only a whole list has them.
  const short = engineShortSort(engine);
  for (let k = 1; k < list.length && short; k++) {
    const a = list[k - 1].sortkeys, b = list[k].sortkeys;
    if (list[k].group === list[k - 1].group) continue;
    const width = Math.min(a.length, b.length);
    if (width >= short.whole) continue;
    let same = true;
    for (let w = 0; w < width && same; w++) same = a[w] === b[w];
    if (same) return JSON.stringify(null);
  }
  const closed = {};
  for (let i = 1; i < list.length && together; i++) {
    if (list[i].group === list[i - 1].group) continue;
    closed[list[i - 1].group] = true;
    if (closed[list[i].group]) return JSON.stringify(null);
  }
  return JSON.stringify(list.map((item) => item.id));
}

// Builds the processor for a style and locale (parsing a large style takes a while) with an
// item of no one's, so that the first real list pays only for its own entries.
export function warm(template, lang) {
  const cite = new Cite([{id: "scidraft-warm-up", type: "book", title: "Warm-up",
    author: [{family: "Warm", given: "Up"}], issued: {"date-parts": [[2000]]}}]);
  cite.format("bibliography", {format: "html", template, lang});
  cite.format("citation", {format: "html", template, lang});
  hold(template, lang);
  return true;
}

export function ris(entries) {
  const errors = {};
  const list = items(entries, errors);
  return JSON.stringify({text: list.length ? new Cite(list).format("ris") : "", errors});
}

export function json(entries) {
  const errors = {};
  return JSON.stringify({items: items(entries, errors), errors});
}
