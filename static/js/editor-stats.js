// The body's word count and reading time, beside the autosave status, following every change
// (typed, inserted, or merged from co-authors). Words are counted as the server counts the
// rendered text (\w[\w'’-]* in scidraft/markup/pipeline.py), from the source with what readers
// never see as words taken out first (link targets, HTML tags, shortcode delimiters), so the
// figure is close, not exact. Reading time is Hugo's: WORDS_PER_MINUTE, rounded up
// (notes/presentation.py reading_minutes).
(function () {
  "use strict";
  var WORDS_PER_MINUTE = 213;
  var WORD = /[\p{L}\p{N}_][\p{L}\p{N}_'’-]*/gu;
  var HIDDEN = [
    /<!--[\s\S]*?-->/g, // comments
    /\]\([^)\s]*(?:\s+"[^"]*")?\)/g, // link and image targets: "](url "title")"
    /<\/?[A-Za-z][^>]*>/g, // HTML tags
    /\{\{[<%]|[>%]\}\}/g, // shortcode delimiters (their names and parameters stay)
  ];
  // Counted at most every DELAY ms while the text changes; a long body less often, so that
  // counting takes at most a tenth of the time (a 2 MB body takes tens of milliseconds).
  var DELAY = 300;
  var delay = DELAY;

  var shown = document.querySelector(".editor-word-count");
  var field = document.querySelector("form.editor-form textarea[name=body]");
  if (!shown || !field || !window.SciDraftBody) return;
  var body = window.SciDraftBody.of(field);
  var timer = null;

  function countWords(text) {
    HIDDEN.forEach(function (pattern) {
      text = text.replace(pattern, " ");
    });
    var count = 0;
    WORD.lastIndex = 0;
    while (WORD.exec(text) !== null) count += 1;
    return count;
  }

  function update() {
    timer = null;
    var started = Date.now();
    var words = countWords(body.text());
    delay = Math.max(DELAY, 10 * (Date.now() - started));
    var minutes = Math.ceil(words / WORDS_PER_MINUTE);
    shown.textContent = words.toLocaleString("en") + (words === 1 ? " word" : " words") + " · " + minutes + " min read";
    shown.setAttribute("data-words", String(words));
    shown.setAttribute("data-minutes", String(minutes));
  }

  body.onChange(function () {
    if (timer === null) timer = setTimeout(update, delay);
  });
  update();
})();
