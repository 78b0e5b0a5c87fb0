"""A Hugo site folder: growing hostile trees are read, bad files reported as problems, within
the path's bounds."""

from __future__ import annotations

import pytest
from hypothesis import given

from hugosite.reading import read_site
from scidraft.bounds import INPUT_PATHS, MB

from .harness import HOSTILE, assert_within, cases, measure, repeated, sizes

INPUT_PATH = "hugo-tree"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 2 * MB

CASES = {
    "many notes": lambda n: {
        f"content/notes/n{i}.md": f"---\ntitle: N{i}\n---\nx\n" for i in range(n // 256)
    },
    "long yaml": lambda n: {"content/notes/a.md": "---\n" + repeated("k: v\n", n) + "---\nx\n"},
    "long toml": lambda n: {
        "content/notes/a.md": "+++\n" + "".join(f"k{i} = 1\n" for i in range(n // 8)) + "+++\nx\n"
    },
    "unclosed front matter": lambda n: {"content/notes/a.md": "---\n" + repeated("x: [\n", n)},
    "big body": lambda n: {"content/notes/a.md": "---\ntitle: A\n---\n" + "x" * n},
    "big config": lambda n: {"hugo.toml": "".join(f"k{i} = 'v'\n" for i in range(n // 12))},
    "bib files": lambda n: {
        f"assets/b{i}.bib": "@misc{k, title={x}}\n" * 64 for i in range(n // 1024)
    },
}


def _tree(root, files: dict[str, str]):
    (root / "hugo.toml").write_text("title = 'x'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST // 4, smallest=1024))
def test_growing_hostile_trees_are_read_within_the_bounds(tmp_path_factory, case, size):
    """Each shape at sizes doubling to 512 KB: read, bad files as problems, within bounds."""
    root = _tree(tmp_path_factory.mktemp("site"), CASES[case](size))
    assert_within(PATH, measure(read_site, root), f"{case} at {size:,}")


def _alias_bomb(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i + 1}: &a{i + 1} [" + ", ".join([f"*a{i}"] * 9) + "]" for i in range(levels)]
    return "---\ntitle: Bomb\n" + "\n".join(lines) + "\n---\nx\n"


@pytest.mark.slow
def test_yaml_aliases_are_bounded_after_expansion(tmp_path):
    """Nine aliases nine levels deep are 9⁷ values once copied into params (jsonable): 11 s
    of CPU and 118 MB for 400 bytes; two more levels would exhaust memory."""
    root = _tree(tmp_path, {"content/notes/a.md": _alias_bomb(6)})
    assert_within(PATH, measure(read_site, root), "a YAML alias bomb", cpu=1.0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "front_matter",
    ["---\na: " + "[" * 5000 + "\n---\n", "+++\na = " + "[" * 5000 + "]" * 5000 + "\n+++\n"],
    ids=["yaml", "toml"],
)
def test_deeply_nested_front_matter_is_a_problem_of_its_file(tmp_path, front_matter):
    """Front matter nested 5,000 deep is reported as a problem with its file, not an
    exception out of the import."""
    root = _tree(tmp_path, {"content/notes/a.md": front_matter + "x\n"})
    site = measure(read_site, root).result
    assert [problem.path for problem in site.problems] == ["content/notes/a.md"]
