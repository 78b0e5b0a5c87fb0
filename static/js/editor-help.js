// The syntax guide inside the editor. "Syntax guide" opens a panel holding
// /help/syntax/ (loaded once, on first opening; without JavaScript the link opens the page);
// each example gets an "Insert" button that puts its source at the cursor, one undoable step.
(function () {
  "use strict";
  var toggle = document.querySelector(".editor-help-toggle");
  var panel = document.getElementById("editor-help-panel");
  var field = document.querySelector("form.editor-form textarea[name=body]");
  if (!toggle || !panel || !field || !window.SciDraftBody) return;
  var body = window.SciDraftBody.of(field);
  var content = panel.querySelector(".editor-help-content");
  var status = panel.querySelector(".editor-help-status");
  var closeButton = panel.querySelector(".editor-help-close");
  var loaded = null;

  toggle.setAttribute("role", "button");
  toggle.setAttribute("aria-expanded", "false");

  function load() {
    if (loaded) return loaded;
    status.textContent = "Loading the guide…";
    loaded = fetch(toggle.getAttribute("href"), { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        // Parsed as an inert document: nothing in it runs; the guide is the engine's output.
        var page = new DOMParser().parseFromString(html, "text/html");
        var guide = page.getElementById("syntax-guide");
        if (!guide) throw new Error("no guide in the page");
        guide.removeAttribute("id");
        content.appendChild(document.importNode(guide, true));
        addInsertButtons();
        status.textContent = "";
        if (window.SciDraftDiagrams) window.SciDraftDiagrams.draw(Array.prototype.slice.call(content.querySelectorAll("pre.mermaid")));
      })
      .catch(function () {
        loaded = null;
        status.textContent = "The guide could not be loaded; the link above opens it as a page.";
      });
    return loaded;
  }

  function addInsertButtons() {
    Array.prototype.forEach.call(content.querySelectorAll(".syntax-example"), function (example, index) {
      var source = example.querySelector(".syntax-source");
      if (!source) return;
      var heading = example.closest("section") && example.closest("section").querySelector("h2");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "editor-button syntax-insert";
      button.textContent = "Insert";
      button.setAttribute("aria-label", "Insert the example" + (heading ? " of " + heading.textContent : "") + " at the cursor");
      button.addEventListener("click", function () {
        body.insert(source.textContent + "\n");
      });
      source.parentNode.insertBefore(button, source.nextSibling);
    });
  }

  function open() {
    panel.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
    load().then(function () {
      var heading = panel.querySelector("h2");
      if (heading) {
        heading.tabIndex = -1;
        heading.focus();
      }
    });
  }

  function close() {
    panel.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    toggle.focus();
  }

  toggle.addEventListener("click", function (event) {
    event.preventDefault();
    if (panel.hidden) open();
    else close();
  });
  toggle.addEventListener("keydown", function (event) {
    if (event.key === " ") {
      event.preventDefault();
      toggle.click();
    }
  });
  closeButton.addEventListener("click", close);
  panel.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });
})();
