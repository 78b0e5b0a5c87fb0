// The note body as the editor's scripts see it. CodeMirror registers itself here
// when its bundle runs (static/vendor/editor/editor.js, loaded right after this file and
// before the other editor scripts); without it (JavaScript modules off, the bundle failed) the
// same interface drives the plain textarea, so autosave, preview, the cite picker and images
// keep working either way.
//
//   body = SciDraftBody.of(textarea)
//   body.text()                      the whole text
//   body.onChange(fn)                fn() after every change, typed or inserted
//   body.insert(text, {at, focus})   one undoable step at the cursor (or at `at`)
//   body.setText(text)               replace everything (restoring a local copy)
//   body.focus(), body.hasFocus(), body.selectLine(n), body.posAtCoords(x, y)
//   body.setProblems(list), body.setLabels(list)   (the editor's gutter and completion)
(function () {
  "use strict";

  function textareaBody(textarea) {
    return {
      kind: "textarea",
      element: textarea,
      text: function () {
        return textarea.value;
      },
      onChange: function (listener) {
        textarea.addEventListener("input", function () {
          listener();
        });
      },
      insert: function (text, options) {
        var length = textarea.value.length;
        var at = options && typeof options.at === "number" ? options.at : textarea.selectionEnd;
        at = Math.min(Math.max(0, at), length);
        if (!options || options.focus !== false) textarea.focus();
        textarea.setRangeText(text, at, at, "end");
        // The preview and autosave listen for input; a script's change fires none on its own.
        textarea.dispatchEvent(new Event("input", { bubbles: true }));
      },
      setText: function (text) {
        textarea.value = text;
        textarea.dispatchEvent(new Event("input", { bubbles: true }));
      },
      focus: function () {
        textarea.focus();
      },
      hasFocus: function () {
        return document.activeElement === textarea;
      },
      selectLine: function (number) {
        var lines = textarea.value.split("\n");
        var line = Math.min(Math.max(number, 1), lines.length);
        var start = 0;
        for (var i = 0; i < line - 1; i++) start += lines[i].length + 1;
        textarea.focus();
        textarea.setSelectionRange(start, start + lines[line - 1].length);
      },
      posAtCoords: function () {
        return null;
      },
      setProblems: function () {},
      setLabels: function () {},
    };
  }

  window.SciDraftBody = {
    register: function (textarea, body) {
      textarea.scidraftBody = body;
    },
    of: function (textarea) {
      if (!textarea.scidraftBody) textarea.scidraftBody = textareaBody(textarea);
      return textarea.scidraftBody;
    },
  };
})();
