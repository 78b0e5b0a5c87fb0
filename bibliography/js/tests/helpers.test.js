// The pure helpers of the citation shortcuts, in Node (run by tests/bibliography/test_jsbundle.py).
import assert from "node:assert/strict";
import {test} from "node:test";

import {particlesKey, unregisteredForm} from "../citeproc-names.js";
import {markupPattern} from "../citeproc-output.js";
import {shortSortTokens, tiedIds} from "../citeproc-sorting.js";
import {collatorOptionsKey, plainCaseLocales} from "../intl.js";

test("case maps without a locale only where the first locale's language maps alike", () => {
  assert.equal(plainCaseLocales(["en-US"]), true);
  assert.equal(plainCaseLocales(["de-DE", "tr-TR"]), true);  // V8 reads the first alone
  assert.equal(plainCaseLocales(["tr-TR"]), false);
  assert.equal(plainCaseLocales(["AZ"]), false);  // canonical: az
  assert.equal(plainCaseLocales([]), false);
  assert.equal(plainCaseLocales("en-US"), false);  // not a list: V8 answers
  assert.equal(plainCaseLocales(["en-US", 3]), false);
  assert.equal(plainCaseLocales(["not a tag!"]), false);
});

test("collator options key on the values Intl.Collator reads, and refuse anything odd", () => {
  assert.equal(collatorOptionsKey(undefined), "");
  assert.equal(collatorOptionsKey(null), null);
  assert.equal(collatorOptionsKey(Object.create({sensitivity: "base"})), null);
  assert.equal(collatorOptionsKey({sensitivity: "base", other: 1}),
               collatorOptionsKey({sensitivity: "base"}));
  assert.notEqual(collatorOptionsKey({numeric: true}), collatorOptionsKey({numeric: "true"}));
});

test("markup is any angle bracket, quotation mark, locale quote or non-ASCII bracket", () => {
  const markup = markupPattern("«»‹›");
  for (const text of ["a <i>b</i>", 'say "x"', "it's", "“x”", "«x»", "‹x›", "【x】"]) {
    assert.ok(markup.test(text), text);
  }
  for (const text of ["Plain title (2nd ed.) [x] {y}", "Müller, J.", "pp. 1–19"]) {
    assert.ok(!markup.test(text), text);
  }
  assert.ok(markupPattern("]^-\\").test("^"));  // class metacharacters taken literally
  assert.equal(markupPattern(null), null);
});

function sort(keys) {
  // A sort of keys, each `size` tokens: opening sort, [key, … size-1 tokens], closing sort.
  const tokens = [{name: "sort", tokentype: 0}];
  for (const size of keys) {
    tokens.push({name: "key", tokentype: 0});
    for (let i = 1; i < size; i++) tokens.push({name: "text", tokentype: 2});
  }
  tokens.push({name: "sort", tokentype: 1});
  return tokens;
}

test("sort tokens are cut before the first costly key after the first", () => {
  const tokens = sort([5000, 10, 2000, 3000]);
  const short = shortSortTokens(tokens);
  assert.equal(short.width, 2);
  assert.equal(short.whole, 4);
  assert.equal(short.tokens.length, 1 + 5000 + 10 + 1);
  assert.equal(short.tokens.at(-1), tokens.at(-1));  // the closing token, where key 3 began
  assert.equal(shortSortTokens(sort([5000, 10, 20])), null);  // nothing costly after the first
  assert.equal(shortSortTokens([{name: "key", tokentype: 0}]), null);
});

test("tied ids are every id whose leading keys another shares, in list order", () => {
  const keys = {a: ["x", "1", "t"], b: ["y", "1"], c: ["x", "1", "u"], d: false, e: []};
  assert.deepEqual(tiedIds(["a", "b", "c", "d", "e"], (id) => keys[id], 2), ["a", "c", "d", "e"]);
  assert.deepEqual(tiedIds(["a", "b"], (id) => keys[id], 2), []);
});

test("a name's particles key on its four fields, strings only", () => {
  assert.equal(particlesKey({family: "Berg", given: "Pieter van der"}),
               "Berg\u0000Pieter van der\u0000\u0001\u0000\u0001");
  assert.notEqual(particlesKey({family: "A", given: "B", suffix: ""}),
                  particlesKey({family: "A", given: "B"}));
  assert.equal(particlesKey({family: "A", given: "B", suffix: 3}), null);
  assert.equal(particlesKey({family: "A"}), null);
  assert.equal(particlesKey(null), null);
});

test("a name's form without the register is the one its element asks for", () => {
  assert.equal(unregisteredForm(0, "short", undefined), 0);
  assert.equal(unregisteredForm(0, "long", "."), 1);
  assert.equal(unregisteredForm(0, "long", undefined), 2);
  assert.equal(unregisteredForm(1, "long", "."), undefined);
});
