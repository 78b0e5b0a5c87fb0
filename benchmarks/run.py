"""Run every benchmark module in this folder, in name order: `make bench`.

A module is any benchmarks/*.py other than this runner, __init__.py and the _*.py helpers,
and must define main(). Benchmarks report rather than gate, so a missed target never changes
the exit code; only a benchmark that crashes does, after the others have still run.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def modules() -> list[Path]:
    # _*.py are shared helpers (the table printer), not benchmarks.
    return sorted(
        path
        for path in HERE.glob("*.py")
        if path.name not in {"run.py", "__init__.py"} and not path.name.startswith("_")
    )


def main() -> int:
    crashed = []
    for number, path in enumerate(modules()):
        if number:
            print()
        print(f"##### benchmarks/{path.name}")
        # Loaded by path under a private name, so a module called e.g. `render` cannot shadow
        # or be shadowed by a package module of the same name.
        spec = importlib.util.spec_from_file_location(f"_benchmark_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            module.main()
        except Exception:  # noqa: BLE001 - report it and go on to the next benchmark
            traceback.print_exc()
            crashed.append(path.name)
        sys.stdout.flush()
    if crashed:
        print(f"\nbenchmarks that crashed: {', '.join(crashed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
