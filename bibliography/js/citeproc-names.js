// Shortcuts on citeproc-js's handling of personal names, each behind a flag the tests turn
// off to compare whole lists both ways (the test is named beside each); the benchmark figures
// are docs/benchmarks.md's.

// citeproc-js registers every name it renders (namereg.addname) and asks the register which
// form of the given name each takes (namereg.evalname), for given-name disambiguation. Under a
// style without disambiguate-add-givenname the register never changes an answer: evalname with
// no form requested (0, the only request such a style makes) returns the form the name element
// asks for, registered or not: 0 for a short form, 1 with initialize-with, else 2. The register
// is replaced when the processor rebuilds its state, so this is checked at every list; styles
// that do add given names (APA, Chicago) keep citeproc's own functions.
// No output changes:
// test_a_style_without_given_name_disambiguation_reads_the_same_without_the_name_register.
// Worth 8% of an IEEE list's CPU time, 4% of a Vancouver one
// (benchmarks/citation_shortcuts.py; docs/benchmarks.md, "Citation shortcuts").
globalThis.SCIDRAFT_PLAIN_NAMES = true;

export function unregisteredForm(requested, form, initials) {
  if (requested) return undefined;  // citeproc-js's own answer
  if (form === "short") return 0;
  return typeof initials === "string" ? 1 : 2;
}

export function skipNameRegister(engine) {
  const register = engine.registry.namereg;
  if (!globalThis.SCIDRAFT_PLAIN_NAMES || register.scidraftPlain) return;
  if (engine.opt["disambiguate-add-givenname"]) return;
  const evalname = register.evalname;
  register.addname = function () {};
  register.evalname = function (id, name, position, requested, form, initials) {
    if (requested) return evalname.apply(this, arguments);
    return unregisteredForm(requested, form, initials);
  };
  register.scidraftPlain = true;
}

// The key of a name's particles: null when a field is not a string (citeproc-js parses those
// itself every time).
export function particlesKey(name) {
  if (!name || typeof name.family !== "string" || typeof name.given !== "string") return null;
  const suffix = name.suffix, dropping = name["dropping-particle"];
  if ((suffix !== undefined && typeof suffix !== "string")
      || (dropping !== undefined && typeof dropping !== "string")) return null;
  return name.family + "\u0000" + name.given + "\u0000"
    + (suffix === undefined ? "\u0001" : suffix) + "\u0000"
    + (dropping === undefined ? "\u0001" : dropping);
}

// A Map that forgets everything at once past SCIDRAFT_NAME_PARTS_MAX answers.
function remember(map, key, value) {
  if (map.size >= globalThis.SCIDRAFT_NAME_PARTS_MAX) map.clear();
  map.set(key, value);
}

// A list renders each name again and again (sort keys, cite forms, the entry, the in-text
// citation): 25 APA entries parse particles 2,100 times ("van der" in "Berg, Pieter van der")
// and initialise given names 1,800 times, for about 120 distinct names. Both are functions of
// their arguments alone: parseParticles of the name's family, given, suffix and dropping
// particle (it only writes fields), initializeWith of the name, the terminator, the style's
// initialize-with-hyphen and the languages its lower-casing uses. Each answer is remembered.
// No output changes: test_names_split_and_initialised_once_read_as_when_done_every_time.
// Worth 9% of an APA list's CPU time
// (benchmarks/citation_shortcuts.py; docs/benchmarks.md, "Citation shortcuts").
globalThis.SCIDRAFT_NAME_PARTS = true;
globalThis.SCIDRAFT_NAME_PARTS_MAX = 20000;  // answers kept of each kind, then forgotten at once

export function installNameParts(CSL) {
  const parseParticles = CSL.parseParticles, particles = new Map();
  CSL.parseParticles = function (name) {
    const key = globalThis.SCIDRAFT_NAME_PARTS ? particlesKey(name) : null;
    if (key === null) return parseParticles.apply(this, arguments);
    let written = particles.get(key);
    if (!written) {
      const copy = {family: name.family, given: name.given};
      if (name.suffix !== undefined) copy.suffix = name.suffix;
      if (name["dropping-particle"] !== undefined) {
        copy["dropping-particle"] = name["dropping-particle"];
      }
      parseParticles.call(this, copy);
      written = [];
      for (const field in copy) written.push(field, copy[field]);  // in the order it wrote them
      remember(particles, key, written);
    }
    for (let i = 0; i < written.length; i += 2) name[written[i]] = written[i + 1];
  };
  const Names = CSL.Util.Names, initializeWith = Names.initializeWith, initials = new Map();
  Names.initializeWith = function (state, name, terminator, normalizeOnly) {
    const langs = state && state.tmp && state.tmp.lang_array;
    if (!globalThis.SCIDRAFT_NAME_PARTS || typeof name !== "string" || !state || !state.opt
        || (terminator !== undefined && typeof terminator !== "string")) {
      return initializeWith.apply(this, arguments);
    }
    const key = name + "\u0000" + terminator + "\u0000" + (normalizeOnly ? 1 : 0) + "\u0000"
      + state.opt["initialize-with-hyphen"] + "\u0000"
      + (Array.isArray(langs) ? langs.join("\u0001") : String(langs));
    let found = initials.get(key);
    if (found === undefined) {
      found = initializeWith.apply(this, arguments);
      remember(initials, key, found);
    }
    return found;
  };
}
