/*! SciDraft scidraft.js: design after the SciDraft Hugo theme by Mengyao Zhu and
 * hugo-PaperMod by Aditya Telange (both MIT). One deferred file, no dependencies, no inline
 * handlers (the site's Content-Security-Policy forbids inline scripts).
 *
 *   1. theme toggle          5. top link
 *   2. menu toggle           6. smooth scrolling for #anchor links
 *   3. header reflow         7. copy buttons on code blocks (body[data-copy-code])
 *   4. menu scroll memory    8. glossary panel
 *   9. wide formulas and tables take keyboard focus while they scroll
 */
(function () {
  "use strict";

  var root = document.documentElement;
  var doc = document;

  function storageGet(key) {
    try {
      return window.localStorage.getItem(key);
    } catch (error) {
      return null;
    }
  }

  function storageSet(key, value) {
    try {
      window.localStorage.setItem(key, value);
    } catch (error) {
      /* storage blocked: the choice lasts for this page only */
    }
  }

  function each(list, callback) {
    Array.prototype.forEach.call(list, callback);
  }

  function reducedMotion() {
    return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  /* 1. Theme toggle: flip light/dark, remember the choice, no reload. ------------------- */
  function setupThemeToggle() {
    var button = doc.getElementById("theme-toggle");
    if (!button) {
      return;
    }
    button.addEventListener("click", function () {
      var current = root.getAttribute("data-theme");
      if (current !== "light" && current !== "dark") {
        current =
          window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches
            ? "dark"
            : "light";
      }
      var next = current === "dark" ? "light" : "dark";
      root.setAttribute("data-theme", next);
      storageSet("pref-theme", next);
      var event;
      try {
        event = new CustomEvent("scidraft:themechange", { detail: { theme: next } });
      } catch (error) {
        event = null;
      }
      if (event) {
        doc.dispatchEvent(event);
      }
    });
  }

  /* 2. Menu toggle: tap/click, Enter, Space and Escape open and close dropdowns. -------- */
  function setupMenuToggle() {
    var parents = doc.querySelectorAll("#menu li.has-submenu");
    if (!parents.length) {
      return;
    }

    function triggerOf(item) {
      for (var i = 0; i < item.children.length; i++) {
        var child = item.children[i];
        if (child.matches("a, .menu-label")) {
          return child;
        }
      }
      return null;
    }

    function setOpen(item, open) {
      item.classList.toggle("open", open);
      var trigger = triggerOf(item);
      if (trigger) {
        trigger.setAttribute("aria-expanded", open ? "true" : "false");
      }
    }

    function closeAll(except) {
      each(parents, function (item) {
        if (item !== except && item.classList.contains("open")) {
          setOpen(item, false);
        }
      });
    }

    var lastPointer = "mouse";
    doc.addEventListener(
      "pointerdown",
      function (event) {
        lastPointer = event.pointerType || "mouse";
      },
      true
    );

    each(parents, function (item) {
      var trigger = triggerOf(item);
      if (!trigger) {
        return;
      }
      var isLabel = !trigger.matches("a");

      trigger.addEventListener("click", function (event) {
        var open = item.classList.contains("open");
        if (isLabel) {
          event.preventDefault();
          closeAll(item);
          setOpen(item, !open);
          return;
        }
        // A parent with its own page: on touch the first tap opens the dropdown, the second
        // follows the link. With a mouse, hover already shows it, so the link works at once.
        if (lastPointer !== "mouse" && !open) {
          event.preventDefault();
          closeAll(item);
          setOpen(item, true);
        }
      });

      trigger.addEventListener("keydown", function (event) {
        var key = event.key;
        if (key === "Escape" || key === "Esc") {
          if (item.classList.contains("open")) {
            event.preventDefault();
            setOpen(item, false);
          }
          return;
        }
        if (key === " " || key === "Spacebar" || (key === "Enter" && isLabel)) {
          event.preventDefault();
          var open = item.classList.contains("open");
          closeAll(item);
          setOpen(item, !open);
        }
      });

      // Escape inside the dropdown closes it and returns focus to the parent.
      var submenu = item.querySelector(".submenu");
      if (submenu) {
        submenu.addEventListener("keydown", function (event) {
          if (event.key === "Escape" || event.key === "Esc") {
            event.preventDefault();
            setOpen(item, false);
            trigger.focus();
          }
        });
      }

      item.addEventListener("mouseenter", function () {
        trigger.setAttribute("aria-expanded", "true");
      });
      item.addEventListener("mouseleave", function () {
        if (!item.classList.contains("open")) {
          trigger.setAttribute("aria-expanded", "false");
        }
      });
      item.addEventListener("focusout", function (event) {
        if (!item.contains(event.relatedTarget) && item.classList.contains("open")) {
          setOpen(item, false);
        }
      });
    });

    // A tap or click anywhere else closes an open dropdown; so does Escape.
    doc.addEventListener("click", function (event) {
      var inside = event.target.closest && event.target.closest("#menu li.has-submenu");
      closeAll(inside || null);
    });
    doc.addEventListener("keydown", function (event) {
      if (event.key === "Escape" || event.key === "Esc") {
        closeAll(null);
      }
    });
  }

  /* 3. Header reflow: stack the header whenever the menu wraps below the logo row. ------ */
  function setupHeaderReflow() {
    var nav = doc.querySelector(".header-nav");
    var menu = doc.getElementById("menu");
    var logo = nav && nav.querySelector(".logo");
    if (!nav || !menu || !logo) {
      return;
    }
    var pending = false;

    function measure() {
      pending = false;
      // Measure the one-row layout; both class changes happen before any paint.
      nav.classList.remove("nav-stacked");
      var logoBox = logo.getBoundingClientRect();
      var menuBox = menu.getBoundingClientRect();
      var wrapped =
        menuBox.top >= logoBox.bottom - 1 || menu.scrollWidth > menu.clientWidth + 1;
      nav.classList.toggle("nav-stacked", wrapped);
    }

    function schedule() {
      if (!pending) {
        pending = true;
        window.requestAnimationFrame(measure);
      }
    }

    measure();
    if (window.ResizeObserver) {
      var lastWidth = -1;
      new ResizeObserver(function (entries) {
        var width = entries[0].contentRect.width;
        if (width !== lastWidth) {
          lastWidth = width;
          schedule();
        }
      }).observe(nav);
    } else {
      window.addEventListener("resize", schedule);
    }
    if (doc.fonts && doc.fonts.ready) {
      doc.fonts.ready.then(schedule);
    }
  }

  /* 4. Remember the menu's horizontal scroll position across pages. --------------------- */
  function setupMenuScroll() {
    var menu = doc.getElementById("menu");
    if (!menu) {
      return;
    }
    var saved = parseInt(storageGet("menu-scroll-position") || "", 10);
    if (saved > 0) {
      menu.scrollLeft = saved;
    }
    function save() {
      storageSet("menu-scroll-position", String(Math.round(menu.scrollLeft)));
    }
    each(menu.querySelectorAll("a"), function (link) {
      link.addEventListener("click", save);
    });
    menu.addEventListener("scroll", save, { passive: true });
  }

  /* 5. Top link: visible after one viewport of scrolling. --------------------------------- */
  function setupTopLink() {
    var link = doc.getElementById("top-link");
    if (!link) {
      return;
    }
    var ticking = false;
    function update() {
      ticking = false;
      var scrolled = window.pageYOffset || doc.documentElement.scrollTop || 0;
      link.classList.toggle("visible", scrolled > window.innerHeight);
    }
    window.addEventListener(
      "scroll",
      function () {
        if (!ticking) {
          ticking = true;
          window.requestAnimationFrame(update);
        }
      },
      { passive: true }
    );
    update();
  }

  /* 6. Smooth scrolling for same-page #anchor links, with a history entry. --------------- */
  function setupSmoothScroll() {
    doc.addEventListener("click", function (event) {
      if (
        event.defaultPrevented ||
        event.button !== 0 ||
        event.metaKey ||
        event.ctrlKey ||
        event.shiftKey ||
        event.altKey
      ) {
        return;
      }
      var link = event.target.closest && event.target.closest('a[href^="#"]');
      if (!link) {
        return;
      }
      var raw = link.getAttribute("href").slice(1);
      if (!raw) {
        return;
      }
      var id;
      try {
        id = decodeURIComponent(raw);
      } catch (error) {
        id = raw;
      }
      var target = doc.getElementById(id) || doc.getElementsByName(id)[0];
      if (!target) {
        return;
      }
      event.preventDefault();
      var behavior = reducedMotion() ? "auto" : "smooth";
      if (id === "top") {
        window.scrollTo({ top: 0, behavior: behavior });
        if (window.history && history.replaceState) {
          history.replaceState(null, "", location.pathname + location.search);
        }
      } else {
        target.scrollIntoView({ behavior: behavior, block: "start" });
        if (window.history && history.pushState) {
          history.pushState(null, "", "#" + raw);
        }
      }
    });
  }

  /* 7. Copy buttons on code blocks: note pages and standalone pages, never feed cards. --- */
  function copyText(text) {
    function fallback() {
      return new Promise(function (resolve, reject) {
        var area = doc.createElement("textarea");
        area.value = text;
        area.setAttribute("readonly", "");
        area.style.position = "fixed";
        area.style.top = "0";
        area.style.left = "0";
        area.style.opacity = "0";
        doc.body.appendChild(area);
        area.select();
        var ok = false;
        try {
          ok = doc.execCommand("copy");
        } catch (error) {
          ok = false;
        }
        doc.body.removeChild(area);
        if (ok) {
          resolve();
        } else {
          reject(new Error("copy failed"));
        }
      });
    }
    if (navigator.clipboard && navigator.clipboard.writeText && window.isSecureContext !== false) {
      return navigator.clipboard.writeText(text).catch(fallback);
    }
    return fallback();
  }

  function setupCopyButtons() {
    if (!doc.body || !doc.body.hasAttribute("data-copy-code")) {
      return;
    }
    var blocks = doc.querySelectorAll(".note-single .md-content pre > code, .post-content pre > code");
    each(blocks, function (code) {
      var pre = code.parentNode;
      // Feed cards never get buttons, even if a card sits inside a page.
      var card = pre.closest(".note-card");
      if (card && !card.classList.contains("note-single")) {
        return;
      }
      // Line numbers in a table (linenos=true): the numbers' column gets no button, the
      // code's column puts its button on the whole block.
      var cell = pre.closest("td.lntd");
      if (cell && !cell.previousElementSibling) {
        return;
      }
      var container = cell
        ? pre.closest(".highlight")
        : pre.parentNode && pre.parentNode.classList && pre.parentNode.classList.contains("highlight")
          ? pre.parentNode
          : pre;
      if (container.querySelector(":scope > .copy-code")) {
        return;
      }
      var button = doc.createElement("button");
      button.type = "button";
      button.className = "copy-code";
      button.textContent = "copy";
      button.setAttribute("aria-label", "Copy code to clipboard");
      var timer = null;
      button.addEventListener("click", function () {
        copyText(code.textContent).then(
          function () {
            button.textContent = "copied!";
            window.clearTimeout(timer);
            timer = window.setTimeout(function () {
              button.textContent = "copy";
            }, 2000);
          },
          function () {
            button.textContent = "copy";
          }
        );
      });
      container.appendChild(button);
    });
  }

  /* 8. Glossary panel: one entry per unique term, following the reader's position. ------ */
  function setupGlossary() {
    var panel = doc.querySelector("aside.glossary-panel");
    if (!panel) {
      return;
    }
    var terms = Array.prototype.slice.call(doc.querySelectorAll("span.glossary-term[data-gid]"));
    if (!terms.length) {
      return;
    }
    var entries = {};
    var order = [];
    terms.forEach(function (term) {
      var gid = term.getAttribute("data-gid");
      if (!gid || entries[gid]) {
        return;
      }
      var entry = doc.createElement("div");
      entry.className = "glossary-entry";
      entry.setAttribute("data-gid", gid);
      var name = doc.createElement("strong");
      name.textContent = (term.textContent || gid).trim();
      var definition = doc.createElement("div");
      definition.textContent = term.getAttribute("data-def") || "";
      entry.appendChild(name);
      entry.appendChild(definition);
      entries[gid] = entry;
      order.push(entry);
    });
    while (panel.firstChild) {
      panel.removeChild(panel.firstChild);
    }
    order.forEach(function (entry) {
      panel.appendChild(entry);
    });

    var activeTerm = null;

    function activate(term) {
      if (term === activeTerm) {
        return;
      }
      if (activeTerm) {
        activeTerm.classList.remove("glossary-at");
      }
      each(panel.querySelectorAll(".glossary-entry.glossary-at"), function (entry) {
        entry.classList.remove("glossary-at");
      });
      activeTerm = term;
      if (!term) {
        return;
      }
      term.classList.add("glossary-at");
      var entry = entries[term.getAttribute("data-gid")];
      if (!entry) {
        return;
      }
      entry.classList.add("glossary-at");
      // A scrolling (fixed) panel lines its entry up with the term on the page.
      if (panel.scrollHeight > panel.clientHeight + 1) {
        var offset = term.getBoundingClientRect().top - panel.getBoundingClientRect().top;
        var top = entry.offsetTop - Math.max(0, offset);
        panel.scrollTo({ top: Math.max(0, top), behavior: reducedMotion() ? "auto" : "smooth" });
      }
    }

    var ticking = false;
    function update() {
      ticking = false;
      var line = window.innerHeight * 0.55;
      var best = null;
      var bestDistance = Infinity;
      terms.forEach(function (term) {
        var box = term.getBoundingClientRect();
        if (!box.height && !box.width) {
          return;
        }
        var distance = Math.abs(box.top + box.height / 2 - line);
        if (distance < bestDistance) {
          bestDistance = distance;
          best = term;
        }
      });
      activate(best);
      var last = terms[terms.length - 1].getBoundingClientRect();
      panel.classList.toggle("glossary-done", last.bottom < 0);
    }

    function schedule() {
      if (!ticking) {
        ticking = true;
        window.requestAnimationFrame(update);
      }
    }

    terms.forEach(function (term) {
      if (!term.hasAttribute("tabindex")) {
        term.tabIndex = 0;
      }
      term.addEventListener("click", function () {
        activate(term);
      });
      term.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          activate(term);
        }
      });
    });
    order.forEach(function (entry) {
      entry.addEventListener("click", function () {
        var gid = entry.getAttribute("data-gid");
        for (var i = 0; i < terms.length; i++) {
          if (terms[i].getAttribute("data-gid") === gid) {
            terms[i].scrollIntoView({
              behavior: reducedMotion() ? "auto" : "smooth",
              block: "center"
            });
            activate(terms[i]);
            break;
          }
        }
      });
    });
    window.addEventListener("scroll", schedule, { passive: true });
    window.addEventListener("resize", schedule);
    update();
  }

  /* 9. Wide formulas and tables. ------------------------------------------------------------
   * One wider than the column scrolls sideways inside its box; while it does, the box is in
   * the tab order, so that a keyboard can scroll it (WCAG 2.1.1). Only then: a note has many
   * formulas, and one that fits would be a tab stop with nothing to do. Code blocks, diagrams
   * and algorithms come from the server focusable (scidraft/markup/code.py). */
  function setupScrollingBoxes() {
    var boxes = doc.querySelectorAll(
      ".katex-display, .math-error-display, .md-content table:not(.highlighttable)"
    );
    if (!boxes.length) {
      return;
    }
    function update() {
      each(boxes, function (box) {
        var scrolls = box.scrollWidth > box.clientWidth;
        if (scrolls && !box.hasAttribute("tabindex")) {
          box.setAttribute("tabindex", "0");
          box.setAttribute("data-scrolls", "");
        } else if (!scrolls && box.hasAttribute("data-scrolls")) {
          box.removeAttribute("tabindex");
          box.removeAttribute("data-scrolls");
        }
      });
    }
    var pending = false;
    function schedule() {
      if (!pending) {
        pending = true;
        window.requestAnimationFrame(function () {
          pending = false;
          update();
        });
      }
    }
    update();
    if (window.ResizeObserver) {
      var observer = new ResizeObserver(schedule);
      each(boxes, function (box) {
        observer.observe(box);
      });
    } else {
      window.addEventListener("resize", schedule);
    }
    // KaTeX's fonts change a formula's width once they load.
    if (doc.fonts && doc.fonts.ready) {
      doc.fonts.ready.then(schedule);
    }
  }

  function start() {
    var steps = [
      setupThemeToggle,
      setupMenuToggle,
      setupHeaderReflow,
      setupMenuScroll,
      setupTopLink,
      setupSmoothScroll,
      setupCopyButtons,
      setupGlossary,
      setupScrollingBoxes
    ];
    steps.forEach(function (step) {
      try {
        step();
      } catch (error) {
        if (window.console) {
          window.console.error("scidraft.js:", error);
        }
      }
    });
  }

  if (doc.readyState === "loading") {
    doc.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
