// The editor's cite picker: search the entries of the bibliographies usable
// in this note and insert \cite{key} at the body's cursor, as one step that Ctrl+Z undoes
// (through SciDraftBody, editor-body.js); a selection is kept, the citation goes after it.
// Results are built with textContent only: titles and names come from uploaded files and are
// never parsed as HTML.
(function () {
  "use strict";
  var root = document.querySelector(".cite-picker[data-cite-url]");
  if (!root) return;
  var field = document.getElementById(root.getAttribute("data-cite-target"));
  if (!field || !window.SciDraftBody) return;
  var body = window.SciDraftBody.of(field);
  var url = root.getAttribute("data-cite-url");
  var toggle = root.querySelector(".cite-picker-toggle");
  var panel = root.querySelector(".cite-picker-panel");
  var input = root.querySelector(".cite-picker-query");
  var list = root.querySelector(".cite-picker-results");
  var status = root.querySelector(".cite-picker-status");
  var delay = 200;
  var results = [];
  var active = -1;
  var timer = null;
  var sequence = 0; // a response to an older query than the latest is dropped

  function say(text) {
    status.textContent = text;
  }

  function isOpen() {
    return !panel.hidden;
  }

  function open() {
    // The body keeps its cursor while focus is here: that is where the citation goes.
    panel.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
    input.setAttribute("aria-expanded", "true");
    input.focus();
    input.select();
    search();
  }

  function close(refocus) {
    if (timer) clearTimeout(timer);
    sequence += 1;
    panel.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    if (refocus) body.focus();
  }

  function highlight(index) {
    active = index;
    var items = list.children;
    for (var i = 0; i < items.length; i += 1) {
      var on = i === index;
      items[i].setAttribute("aria-selected", on ? "true" : "false");
      items[i].classList.toggle("is-active", on);
      if (on) {
        input.setAttribute("aria-activedescendant", items[i].id);
        if (items[i].scrollIntoView) items[i].scrollIntoView({ block: "nearest" });
      }
    }
    if (index < 0) input.removeAttribute("aria-activedescendant");
  }

  function part(className, text) {
    var span = document.createElement("span");
    span.className = className;
    span.textContent = text;
    return span;
  }

  function show(items, more, message) {
    results = items;
    list.textContent = "";
    items.forEach(function (entry, index) {
      var item = document.createElement("li");
      item.id = "cite-picker-option-" + index;
      item.setAttribute("role", "option");
      item.appendChild(part("cite-picker-key", entry.key));
      // The entry as the reference list prints it (the site's CSL style), else its title.
      if (entry.reference) item.appendChild(part("cite-picker-reference", entry.reference));
      else if (entry.title) item.appendChild(part("cite-picker-title", entry.title));
      var meta = [entry.authors, entry.year, entry.file].filter(Boolean).join(" · ");
      item.appendChild(part("cite-picker-meta", meta));
      // mousedown would move focus out of the search box before the click lands.
      item.addEventListener("mousedown", function (event) {
        event.preventDefault();
      });
      item.addEventListener("click", function () {
        insert(index);
      });
      list.appendChild(item);
    });
    highlight(items.length ? 0 : -1);
    if (!items.length) {
      // A key found only in a file this author may not use: where it is, and whom to ask.
      say(
        message ||
          (input.value.trim()
            ? "No entry matches."
            : "No entries: attach or upload a bibliography first.")
      );
    } else {
      say(more ? "Showing the first " + items.length + "; type more to narrow." : "");
    }
  }

  function search() {
    var mine = (sequence += 1);
    say("Searching…");
    fetch(url + "?q=" + encodeURIComponent(input.value.trim()), {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        if (mine === sequence) show(data.results || [], data.more, data.message || "");
      })
      .catch(function () {
        if (mine === sequence) say("Search failed; try again.");
      });
  }

  function insert(index) {
    var entry = results[index];
    if (!entry) return;
    close(false);
    body.insert("\\cite{" + entry.key + "}");
  }

  toggle.addEventListener("click", function () {
    if (isOpen()) close(true);
    else open();
  });

  input.addEventListener("input", function () {
    if (timer) clearTimeout(timer);
    timer = setTimeout(search, delay);
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!results.length) return;
      var step = event.key === "ArrowDown" ? 1 : -1;
      highlight((active + step + results.length) % results.length);
    } else if (event.key === "Enter") {
      // The picker sits inside the editor form: Enter must not submit it.
      event.preventDefault();
      if (active >= 0) insert(active);
    }
  });

  root.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && isOpen()) {
      event.preventDefault();
      close(true);
    }
  });

  document.addEventListener("click", function (event) {
    if (isOpen() && !root.contains(event.target)) close(false);
  });

  root.hidden = false;
})();
