/*! SciDraft mermaid-init.js: design after the SciDraft Hugo theme by Mengyao Zhu (MIT).
 * Loaded deferred, after vendor/mermaid/mermaid.min.js. Draws every pre.mermaid in the
 * "neutral" theme (the SciDraft look) or "dark" in dark mode, and redraws from the saved
 * source whenever the reader toggles the theme.
 */
(function () {
  "use strict";
  var mermaid = window.mermaid;
  var root = document.documentElement;
  var nodes = Array.prototype.slice.call(document.querySelectorAll("pre.mermaid"));
  if (!mermaid || !nodes.length) {
    return;
  }

  // Keep the original text before Mermaid replaces it with an SVG.
  nodes.forEach(function (node) {
    if (!node.hasAttribute("data-mermaid-src")) {
      node.setAttribute("data-mermaid-src", node.textContent);
    }
  });

  function themeName() {
    return root.getAttribute("data-theme") === "dark" ? "dark" : "neutral";
  }

  var drawn = null;
  var queue = Promise.resolve();

  function draw() {
    var theme = themeName();
    if (theme === drawn) {
      return Promise.resolve();
    }
    if (drawn !== null) {
      nodes.forEach(function (node) {
        node.removeAttribute("data-processed");
        node.textContent = node.getAttribute("data-mermaid-src") || "";
      });
    }
    drawn = theme;
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: theme,
      flowchart: { useMaxWidth: false },
      sequence: { useMaxWidth: false },
      class: { useMaxWidth: false },
      er: { useMaxWidth: false },
      gantt: { useMaxWidth: false }
    });
    return Promise.resolve(
      mermaid.run({ querySelector: "pre.mermaid", suppressErrors: true })
    ).catch(function (error) {
      if (window.console) {
        window.console.warn("mermaid:", error);
      }
    });
  }

  function schedule() {
    queue = queue.then(draw, draw);
  }

  schedule();

  if (window.MutationObserver) {
    new MutationObserver(schedule).observe(root, {
      attributes: true,
      attributeFilter: ["data-theme"]
    });
  }
})();
