"""The input-path registry: marked entry functions, the registry, the hostile-input harness
and docs/security.md name the same paths, and every parser-shaped function is accounted for."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from django.conf import settings

from scidraft import bounds
from scidraft.bounds import InputPath

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["scidraft", "notes", "bibliography", "hugosite", "collaboration", "accounts",
            "images", "editor", "ops"]  # fmt: skip
HARNESS = ROOT / "tests" / "hostile"


def _modules():
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        yield package
        for info in pkgutil.walk_packages(package.__path__, f"{package_name}."):
            if ".migrations" in info.name or info.name.endswith(".wsgi"):
                continue
            yield importlib.import_module(info.name)


def _functions():
    """(dotted name, function) of every public top-level function defined in the project."""
    for module in _modules():
        for name, value in vars(module).items():
            if name.startswith("_") or not callable(value) or inspect.isclass(value):
                continue
            if getattr(value, "__module__", None) == module.__name__:
                yield f"{module.__name__}.{name}", value


def _resolve(dotted: str):
    module_name, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module_name), name)


def test_every_marked_function_is_the_entry_of_its_registered_path():
    """A function marked @input_path(name) is exactly the registry's entry for that name, and
    every registered path has its marked entry."""
    marked = {
        dotted: function.input_path
        for dotted, function in _functions()
        if getattr(function, "input_path", None)
    }
    assert marked == {path.entry: name for name, path in bounds.INPUT_PATHS.items()}


def test_every_parser_shaped_function_is_an_entry_reached_or_excused():
    """A public function named like a parser, or in a module named after reading input, is an
    entry, reached by one (InputPath.reaches) or listed in NOT_INPUT: a new parser without a
    registry entry fails here."""
    accounted = {path.entry for path in bounds.INPUT_PATHS.values()}
    accounted |= {name for path in bounds.INPUT_PATHS.values() for name in path.reaches}
    accounted |= set(bounds.NOT_INPUT)
    shaped = {dotted for dotted, _ in _functions() if _parser_shaped(dotted)}
    assert shaped - accounted == set()


def _parser_shaped(dotted: str) -> bool:
    module, name = dotted.rsplit(".", 1)
    return (
        bool(bounds.PARSER_NAME.search(name)) or module.rsplit(".", 1)[-1] in bounds.PARSER_MODULES
    )


@pytest.mark.parametrize(
    ("dotted", "shaped"),
    [
        ("notes.citing.parse_keys", True),
        ("images.exif.decode_orientation", True),
        ("editor.completion.query_read", True),
        ("ops.archive.tokenize", True),
        ("accounts.reading.anything", True),
        ("bibliography.parsing.helper", True),
        ("notes.feed.pagination_window", False),
        ("notes.rendering.spread", False),
    ],
)
def test_the_rule_names_what_a_new_parser_would_be_called(dotted, shaped):
    """The naming rule catches parsers by name or by module, and not ordinary functions."""
    assert _parser_shaped(dotted) is shaped


def test_the_known_entry_points_are_registered():
    """The project's input surfaces each have their path."""
    entries = {path.entry for path in bounds.INPUT_PATHS.values()}
    assert {
        "scidraft.markup.pipeline.render",
        "scidraft.markup.jsengine.render_tex",
        "scidraft.markup.preambles.preamble_macros",
        "scidraft.markup.shortcodes.parse",
        "bibliography.parsing.parse_bibtex",
        "bibliography.csl.style_info",
        "hugosite.reading.read_site",
        "images.services.image_check",
        "collaboration.protocol.frame_read",
        "collaboration.protocol.awareness_read",
        "collaboration.documents.update_store",
        "notes.search.search_notes",
    } <= entries


def test_reached_and_excused_names_exist():
    """The registry names only functions that exist (a rename cannot leave a stale excuse)."""
    for name in [*bounds.NOT_INPUT, *(n for p in bounds.INPUT_PATHS.values() for n in p.reaches)]:
        assert callable(_resolve(name)), name


def test_an_unknown_path_cannot_be_marked():
    """Marking a function with a name missing from the registry fails at import."""
    with pytest.raises(LookupError):
        bounds.input_path("no-such-path")


def test_every_path_has_a_harness_module_and_every_module_a_path():
    """Every registered path is held by a module of tests/hostile/ (the InputPath objects it
    holds), and every module there holds at least one (but the harness's own test)."""
    held = {}
    for path in HARNESS.glob("test_*.py"):
        if path.stem == "test_harness":
            continue
        module = importlib.import_module(f"tests.hostile.{path.stem}")
        names = {value.name for value in vars(module).values() if isinstance(value, InputPath)}
        assert names, f"{path.name} holds no input path"
        held.update(dict.fromkeys(names, path.name))
    assert set(held) == set(bounds.INPUT_PATHS)


@pytest.mark.parametrize(
    "bound",
    [bound for path in bounds.INPUT_PATHS.values() for bound in path.bounds],
    ids=lambda bound: bound.setting,
)
def test_each_bound_names_a_real_setting_with_its_default(bound):
    """A bound's setting exists (a Django setting, or a module constant) and has the default
    the registry and the docs give."""
    value = _resolve(bound.setting) if "." in bound.setting else getattr(settings, bound.setting)
    if bound.default is not None:
        assert value == bound.default


def test_the_docs_table_lists_every_path_and_setting():
    """docs/security.md's Bounds table has a row for every path, naming each of its settings."""
    text = (ROOT / "docs" / "security.md").read_text()
    table = text.split("## Bounds", 1)[1].split("\n## ", 1)[0]
    rows = [row for row in table.splitlines() if row.startswith("| `")]
    for name, path in bounds.INPUT_PATHS.items():
        mine = [row for row in rows if row.startswith(f"| `{name}`")]
        assert mine, f"no row for {name}"
        for bound in path.bounds:
            setting = bound.setting.rsplit(".", 1)[-1]
            assert any(re.search(rf"\b{re.escape(setting)}\b", row) for row in mine), (
                f"{name}: {bound.setting}"
            )
