// Locale-aware string operations as ECMA-402 defines them, answered from what V8 already
// resolved: citeproc-js calls them with the style's locales on every word and every sort-key
// comparison, and V8 resolves the locale list (and builds an ICU collator) on every call.
// These replace built-ins of the context (never citeproc-js's code), each behind its flag.

// V8 maps case by the first locale alone, and only these languages map differently from the
// locale-free mapping.
const SPECIAL_CASE_LANGUAGES = new Set(["az", "el", "lt", "tr"]);

// Whether toLocale{Lower,Upper}Case(locales) equals the locale-free mapping: a non-empty list
// of strings whose first canonical locale is not one of the special languages. Anything else
// (none, a string, an invalid tag) is false: V8 answers those itself.
export function plainCaseLocales(locales, canonical = Intl.getCanonicalLocales) {
  if (!Array.isArray(locales) || !locales.length) return false;
  for (const locale of locales) if (typeof locale !== "string") return false;
  let first;
  try {
    first = canonical(locales)[0];
  } catch {
    return false;
  }
  return typeof first === "string" && !SPECIAL_CASE_LANGUAGES.has(first.split("-")[0]);
}

const COLLATOR_OPTIONS = [
  "localeMatcher", "usage", "collation", "numeric", "caseFirst", "sensitivity",
  "ignorePunctuation",
];

// A key for the collator options Intl.Collator reads, or null for anything but a plain object
// (a getter or a prototype could answer differently each time: V8 decides those).
export function collatorOptionsKey(options) {
  if (options === undefined) return "";
  if (options === null || typeof options !== "object"
      || Object.getPrototypeOf(options) !== Object.prototype) return null;
  let key = "";
  for (const name of COLLATOR_OPTIONS) {
    const value = options[name];
    key += "\u0000" + typeof value + ":" + String(value);
  }
  return key;
}

// Case mapping with a locale list (5 µs a call, 3-5% of a list's time): each distinct list is
// resolved once, and a plain one maps as toLowerCase/toUpperCase, which is V8's own answer.
export function installCaseMapping(global = globalThis) {
  const proto = global.String.prototype;
  const lower = proto.toLocaleLowerCase, upper = proto.toLocaleUpperCase;
  const plainLower = proto.toLowerCase, plainUpper = proto.toUpperCase;
  const plain = new Map();
  function plainCase(locales) {
    if (!Array.isArray(locales) || !locales.length) return false;
    for (let i = 0; i < locales.length; i++) if (typeof locales[i] !== "string") return false;
    const key = locales.join("\u0000");
    let answer = plain.get(key);
    if (answer === undefined) {
      answer = plainCaseLocales(locales);
      if (plain.size >= 256) plain.clear();
      plain.set(key, answer);
    }
    return answer;
  }
  proto.toLocaleLowerCase = function toLocaleLowerCase(locales) {
    return plainCase(locales) ? plainLower.call(this) : lower.apply(this, arguments);
  };
  proto.toLocaleUpperCase = function toLocaleUpperCase(locales) {
    return plainCase(locales) ? plainUpper.call(this) : upper.apply(this, arguments);
  };
}

// localeCompare(other, locale, options) is new Intl.Collator(locale, options).compare by
// ECMA-402; V8 builds the collator on every call (6 µs, a hundred per list, two hundred to put
// lists formatted apart in order). The collator is kept per locale and option values, for
// string operands and plain options. SCIDRAFT_CACHED_COLLATORS = false compares with V8's own
// (test_lists_sorted_with_kept_collators_read_the_same); worth 4% of a Chicago author–date
// list's CPU time (benchmarks/citation_shortcuts.py; docs/benchmarks.md, "Citation shortcuts").
export function installCollators(global = globalThis) {
  global.SCIDRAFT_CACHED_COLLATORS = true;
  const nativeLocaleCompare = global.String.prototype.localeCompare;
  const collators = new Map();
  global.String.prototype.localeCompare = function localeCompare(that, locales, options) {
    if (global.SCIDRAFT_CACHED_COLLATORS && typeof this === "string" && typeof that === "string"
        && typeof locales === "string") {
      let key = collatorOptionsKey(options);
      if (key !== null) {
        key = locales + key;
        let collator = collators.get(key);
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
}
