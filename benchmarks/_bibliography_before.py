"""What the bibliography benchmark compares today's formatting with, read from git: the
citation functions before the server bundle (BEFORE_COMMIT's, after citation-js's browser bundle)
and the pybtex styles before CSL (PYBTEX_COMMIT), for benchmarks/bibliography.py."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The formatting before the server bundle: that commit's citation functions (the JavaScript
# prelude of its bibliography/csl.py) after citation-js's own browser bundle, in a context pool
# of their own beside today's, on the same Python (lists sliced and grouped as today).
BEFORE_COMMIT = "08500e6"
BROWSER_BUNDLE = ROOT / "node_modules" / "citation-js" / "build" / "citation.js"
# The last commit with the pybtex styles (the one before 23793ee replaced them with CSL): main
# no longer has them, so "before" is read from there.
PYBTEX_COMMIT = "23793ee^"


def before_pool():
    """A citation context pool whose contexts load citation-js's browser bundle with
    BEFORE_COMMIT's globals and functions (the prelude of its bibliography/csl.py, read from
    git; a faked browser so that the bundle's core-js keeps V8's fast paths; citeproc-js's
    module number for the prelude's shortcuts), or None when git cannot give them."""
    import subprocess

    from py_mini_racer import MiniRacer, init_mini_racer

    from bibliography import jsbundle
    from scidraft.markup import v8pool

    try:
        source = subprocess.run(  # noqa: S603 - git on this repository, fixed arguments
            ["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:bibliography/csl.py"],  # noqa: S607
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    if not BROWSER_BUNDLE.is_file():
        return None
    prelude = re.search(r'_PRELUDE = r"""(.*?)"""', source, re.DOTALL).group(1)
    bundle = BROWSER_BUNDLE.read_text(encoding="utf-8")
    number = re.search(r'"citeproc":(\d+)[,}]', bundle)
    modules = {"citeproc": int(number.group(1))} if number else {}

    def load():
        init_mini_racer(flags=v8pool.V8_FLAGS, ignore_duplicate_init=True)
        context = MiniRacer()
        major, minor = context.v8_version.split(".")[:2]
        context.eval(
            "var window = this, self = this;"
            f' var navigator = {{userAgent: "Chrome/{int(major)}{int(minor)}"}};'
        )
        context.eval(bundle)
        context.eval(f"var SCIDRAFT_BUNDLE_MODULES = {json.dumps(modules)};")
        context.eval(prelude)
        return context

    return v8pool.Pool(load, floor=jsbundle.CALLS_AT_ONCE)


def legacy_formatter(directory: str):
    """main's pybtex styles (the formatting before CSL), loaded from git as a package of their
    own, with main's formatting step: key → HTML, cached by content as main cached it."""
    import functools
    import subprocess
    import tarfile

    package = Path(directory) / "legacy_bibliography"
    archive = subprocess.run(  # noqa: S603 - git on this repository, fixed arguments
        [  # noqa: S607 - git from PATH, as make and CI use it
            "git",
            "-C",
            str(ROOT),
            "archive",
            PYBTEX_COMMIT,
            "bibliography/styles",
            "bibliography/display.py",
        ],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(directory, filter="data")
    (Path(directory) / "bibliography").rename(package)
    (package / "__init__.py").write_text("")
    sys.path.insert(0, directory)
    from legacy_bibliography.styles import HtmlBackend, get_style, make_entry, style_name
    from legacy_bibliography.styles.memo import memo_clear

    @functools.lru_cache(maxsize=20_000)
    def one(key, entry_type, fields, persons, style):
        entry = make_entry(key, entry_type, dict(fields), {r: list(n) for r, n in persons})
        try:
            return get_style(style).format_entry("", entry).text.render(HtmlBackend())
        except Exception as error:  # noqa: BLE001 - main showed the key and why
            return f"{key}. (incomplete entry: {error})"

    class Legacy:
        def __init__(self, name, entries):
            self.url = f"/{name}"
            self.entries = {entry.key: entry for entry in entries}

        def format(self, keys, style, locale=None):
            name = style_name(style)
            found = {}
            for key in keys:
                entry = self.entries.get(key)
                if entry is not None:
                    persons = tuple(sorted((r, tuple(n)) for r, n in entry.persons.items()))
                    fields = tuple(sorted(entry.fields.items()))
                    found[key] = one(key, entry.entry_type, fields, persons, name)
            return found

    def clear():
        one.cache_clear()
        memo_clear()

    return Legacy, clear
