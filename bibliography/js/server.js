// The server's citation bundle (scripts/build-citations.mjs): citation-js's core with its
// BibTeX, CSL and RIS plugins, citeproc-js (`CSL`), and the functions bibliography/csl.py calls,
// on the global object of a mini-racer context.
import CSL from "citeproc";
import {Cite, plugins, util} from "@citation-js/core";

import {installNameParts} from "./citeproc-names.js";
import {installPlainEscape} from "./citeproc-output.js";
import {installCaseMapping, installCollators} from "./intl.js";
import {engineShortSort} from "./citeproc-sorting.js";
import * as processor from "./processor.js";

installCaseMapping();
installCollators();
// Processors take these functions when they are built: replaced before any is.
installNameParts(CSL);
installPlainEscape(CSL);

Object.assign(globalThis, {
  CSL,
  Cite,
  citationJs: {Cite, plugins, util},
  SCIDRAFT_ENGINES: processor.ENGINES,
  scidraftCslEngineKey: processor.engineKey,
  scidraftCslStyle: processor.cslStyle,
  scidraftCslLocale: processor.cslLocale,
  scidraftCslWarm: processor.warm,
  scidraftCslFormat: processor.format,
  scidraftCslOrder: processor.order,
  scidraftCslRis: processor.ris,
  scidraftCslJson: processor.json,
  // The steps inside, for the tests that compare them and the benchmark that times them.
  SCIDRAFT_CSL: processor.CSL_CONFIG,
  scidraftCslItems: processor.items,
  scidraftCslHold: processor.hold,
  scidraftCslListEngine: processor.listEngine,
  scidraftCslMarkers: processor.markers,
  scidraftCslCitations: processor.citations,
  scidraftCslShortSortTokens: engineShortSort,
});
