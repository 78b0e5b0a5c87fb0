"""The watch on what hostile content does in headless Chromium, for tests/browser/test_xss.py:
a loopback beacon that records every request an armed payload makes; an init script in every
frame that records calls to alert, confirm, prompt, print and the console's methods; the
dialogs, popups, page errors and beacon requests a browser context sees; and a look through
each page's DOM for what could run later, on a click, a hover or a focus (an event-handler
attribute, a script other than the site's static files or a JSON-LD block that parses, a
javascript:, vbscript: or data: URL, an iframe, object, embed or base, a meta refresh, an SVG
animation, script-capable CSS outside KaTeX's output)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:  # the browser fixture skips these tests then
    PlaywrightError = Exception


# --- The beacon -----------------------------------------------------------------------------


class Beacon:
    """A loopback HTTP server that records every request it gets: only a payload calls it."""

    def __init__(self, port: int):
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def _record(self):
                hits.append(f"{self.command} {self.path}")
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            do_GET = do_POST = do_HEAD = do_OPTIONS = _record

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{port}/beacon"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# --- The watch ------------------------------------------------------------------------------

# Runs first in every frame: records any call a payload could make to show it ran.
WATCH_SCRIPT = """
(() => {
  const report = (kind, args) => {
    try {
      window.__xssReport(kind, Array.from(args).map(String).join(" ").slice(0, 200));
    } catch (error) {}
  };
  for (const name of ["alert", "confirm", "prompt", "print"]) {
    window[name] = function () { report(name, arguments); };
  }
  for (const name of ["log", "info", "warn", "error", "debug", "trace", "dir", "table"]) {
    console[name] = function () { report("console." + name, arguments); };
  }
})();
"""

# What in the DOM could run later (on a click, a hover, a focus): see the module docstring.
INSPECT_SCRIPT = r"""
() => {
  const problems = [];
  // The scheme as the browser's own URL parser reads it (it drops tabs and line breaks).
  const scheme = (value) => {
    try { return new URL(value, document.baseURI).protocol; } catch (error) { return ""; }
  };
  const dangerous = new Set(["javascript:", "vbscript:", "data:"]);
  const squash = (value) => value.replace(/[\u0000-\u0020\u007f]+/g, "").toLowerCase();
  const urlAttributes = new Set(["href", "src", "action", "formaction", "xlink:href", "poster",
    "data", "background", "codebase", "cite", "srcset", "ping", "to", "from", "values", "by"]);
  const origin = location.origin;
  for (const el of document.querySelectorAll("*")) {
    const tag = el.localName.toLowerCase();
    const where = `<${tag}${el.id ? " id=" + el.id : ""}>`;
    if (["iframe", "frame", "frameset", "object", "embed", "applet", "base", "portal"]
        .includes(tag)) problems.push(`${where} element`);
    if (["set", "animate", "animatemotion", "animatetransform", "handler", "listener"]
        .includes(tag)) problems.push(`${where} SVG animation element`);
    if (tag === "meta" && (el.getAttribute("http-equiv") || "").toLowerCase() === "refresh")
      problems.push("meta refresh");
    if (tag === "script") {
      const src = el.getAttribute("src");
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (src) {
        const url = new URL(src, location.href);
        if (url.origin !== origin || !url.pathname.startsWith("/static/"))
          problems.push(`script src=${src}`);
      } else if (type !== "application/ld+json") {
        problems.push(`inline script: ${el.textContent.slice(0, 120)}`);
      } else {
        try { JSON.parse(el.textContent); }
        catch (error) { problems.push(`JSON-LD that does not parse: ${error}`); }
      }
    }
    if (tag === "link" && !el.closest("head")) problems.push(`${where} outside <head>`);
    for (const attribute of el.attributes) {
      const name = attribute.name.toLowerCase();
      const value = attribute.value;
      if (name.startsWith("on")) problems.push(`${where} ${name}=${value.slice(0, 80)}`);
      if (name === "srcdoc") problems.push(`${where} srcdoc`);
      if (urlAttributes.has(name) && dangerous.has(scheme(value)))
        problems.push(`${where} ${name}=${value.slice(0, 80)}`);
      if (name === "style" && !el.closest(".katex, .katex-display, .pseudo-algorithm")) {
        const css = squash(value.replace(/\/\*.*?\*\//g, "").replace(/\\/g, ""));
        if (css.includes("expression(") || css.includes("javascript:"))
          problems.push(`${where} style=${value.slice(0, 80)}`);
      }
    }
  }
  return problems;
}
"""


class Watch:
    """Everything hostile content did, or could do, in one browser context."""

    def __init__(self, context, beacon: Beacon):
        self.beacon = beacon
        self.ran: list[str] = []
        self.latent: list[str] = []
        self.pages: list = []
        self.where = ""
        context.expose_function("__xssReport", lambda kind, text: self._ran(f"{kind}({text})"))
        context.add_init_script(WATCH_SCRIPT)
        context.on("request", self._request)
        context.on("page", self._page)

    def _ran(self, what: str) -> None:
        self.ran.append(f"{self.where}: {what}")

    def _request(self, request) -> None:
        if urlsplit(request.url).path == "/beacon":
            self._ran(f"request to {request.url}")

    def _page(self, page) -> None:
        if self.pages:
            self._ran(f"a popup opened at {page.url}")
        self.pages.append(page)
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self._ran(f"page error {error}"))
        page.on("console", self._console)

    def _dialog(self, dialog) -> None:
        if dialog.type == "beforeunload":  # the editor's own guard for unsaved text
            dialog.accept()
            return
        self._ran(f"{dialog.type} dialog {dialog.message!r}")
        dialog.dismiss()

    def _console(self, message) -> None:
        # The browser's own line for a missing image (`<img src=x>`) is no script running.
        if not message.text.startswith("Failed to load resource"):
            self._ran(f"console {message.type}: {message.text[:200]}")

    def visit(self, page, path: str, *, settle_ms: int = 0) -> None:
        """Load `path` and note what in its DOM could run."""
        self.where = path
        response = page.goto(path, wait_until="load")
        assert response is not None and response.status == 200, f"{path}: {response}"
        self.inspect(page, settle_ms=settle_ms)

    def visit_document(self, page, path: str) -> None:
        """Load a feed or index as a reader's browser would: rendered as a document (where an
        XHTML <script> in an XML feed would run) unless the browser downloads it."""
        self.where = path
        response = page.request.get(path)
        assert response.status == 200, path
        assert response.headers.get("x-content-type-options") == "nosniff", path
        try:
            page.goto(path, wait_until="load")
        except PlaywrightError as error:
            assert "Download is starting" in str(error), error
            return
        self.inspect(page)

    def inspect(self, page, *, settle_ms: int = 0) -> None:
        if settle_ms:
            page.wait_for_timeout(settle_ms)
        self.latent += [f"{self.where}: {problem}" for problem in page.evaluate(INSPECT_SCRIPT)]

    def assert_inert(self, page) -> None:
        page.wait_for_timeout(500)  # late timers and image errors
        problems = {
            "scripts that ran": self.ran,
            "beacon hits": list(self.beacon.hits),
            "markup that could run": self.latent,
        }
        problems = {name: found for name, found in problems.items() if found}
        assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)[:30_000]


def _documents_and_scripts_only(route) -> None:
    # Stylesheets, fonts and images cannot run script; skipping them keeps some hundred page
    # loads fast. A payload's image still fails to load, so its onerror would still fire.
    if route.request.resource_type in {"document", "script", "xhr", "fetch"}:
        route.continue_()
    else:
        route.abort()
