"""The Markdown stage's faster rules live on its own parser: markdown-it's modules stay the
library's own, as a fresh interpreter that never imports scidraft has them."""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import pkgutil
import subprocess
import sys
import textwrap

import markdown_it

import scidraft.markup  # noqa: F401 - what is checked is what importing it does
from scidraft.markup import convert, table_rule
from scidraft.markup.stash import Stash


def describe_markdown_it() -> dict:
    """Every module-level name of every markdown_it module, described by what it is and where
    it was defined: a replaced function, logger or class shows as another module's or type."""
    import importlib
    import inspect
    import logging
    import pkgutil

    import markdown_it

    def describe(value) -> list:
        if isinstance(value, logging.Logger):
            return ["Logger", value.name]
        if inspect.ismodule(value):
            return ["module", value.__name__]
        if callable(value):
            module = inspect.getmodule(value)
            where = module.__name__ if module else None
            return [type(value).__name__, where, getattr(value, "__qualname__", "")]
        return [type(value).__name__]

    return {
        info.name: {
            name: describe(value)
            for name, value in sorted(vars(importlib.import_module(info.name)).items())
            if not name.startswith("__")
        }
        for info in pkgutil.walk_packages(markdown_it.__path__, "markdown_it.")
    }


def _in_a_fresh_interpreter() -> dict:
    """describe_markdown_it() in a Python that never imports scidraft."""
    script = (
        "import json\n"
        + textwrap.dedent(inspect.getsource(describe_markdown_it))
        + "print(json.dumps(describe_markdown_it()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def test_importing_and_rendering_leaves_markdown_its_modules_as_the_library_has_them():
    """After scidraft.markup is imported and a parser with the fast rules has rendered a table
    and paragraphs, every name in every markdown_it module is what it is in an interpreter
    that never imported scidraft (no logger, split function or rule replaced)."""
    md = convert.new_parser()
    env = {"stash": Stash(), "headings": []}
    md.render("a\nb\n\n| a | b |\n|---|---|\n| 1 | 2 \\| 3 |\n\nc\n---\n", env)
    assert json.loads(json.dumps(describe_markdown_it())) == _in_a_fresh_interpreter()


def test_the_librarys_loggers_and_table_split_are_its_own_objects():
    """Each rules_block module's LOGGER is the logging module's logger of that name, and the
    table module's escapedSplit is defined in it."""
    convert.new_parser()
    for info in pkgutil.iter_modules(markdown_it.rules_block.__path__, "markdown_it.rules_block."):
        module = importlib.import_module(info.name)
        if hasattr(module, "LOGGER"):
            assert module.LOGGER is logging.getLogger(info.name)
    table_module = importlib.import_module("markdown_it.rules_block.table")
    assert inspect.getmodule(table_module.escapedSplit).__name__ == "markdown_it.rules_block.table"


def test_the_stage_uses_its_own_table_rule_and_the_plain_parser_the_librarys():
    """The fast parser's table rule is the stage's copy; the plain parser's is markdown-it's."""
    for md, expected in (
        (convert.new_parser(), table_rule.table),
        (convert.new_parser(fast_paths=False), markdown_it.rules_block.table),
    ):
        ruler = md.block.ruler
        rules = dict(zip(ruler.get_active_rules(), ruler.getRules(""), strict=True))
        assert rules["table"] is expected
