/*! SciDraft theme-init.js: design after the SciDraft Hugo theme by Mengyao Zhu (MIT).
 * Loaded blocking in <head>, before the stylesheet, so no page flashes the wrong theme.
 * Order: the reader's stored choice (localStorage "pref-theme") → the system preference, only
 * when the server default is "auto" → the server default. The result is always "light" or "dark".
 */
(function () {
  "use strict";
  var root = document.documentElement;
  var server = root.getAttribute("data-theme");
  var theme = null;

  try {
    var stored = window.localStorage.getItem("pref-theme");
    if (stored === "light" || stored === "dark") {
      theme = stored;
    }
  } catch (error) {
    /* storage blocked (privacy mode, sandboxed frame): fall through */
  }

  if (!theme && server === "auto") {
    try {
      theme = window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    } catch (error) {
      theme = "light";
    }
  }

  if (!theme) {
    theme = server === "dark" ? "dark" : "light";
  }

  root.setAttribute("data-theme", theme);
  root.classList.add("js");
})();
