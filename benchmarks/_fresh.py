"""Running a benchmark in an interpreter of its own when Django is already set up in this one
(a helper module: the benchmark runner skips `_` files). A benchmark that sets Django up with
its own settings cannot do so twice in one process, as under `make bench`."""

from __future__ import annotations

import subprocess
import sys


def ran_in_a_fresh_interpreter(script: str) -> bool:
    """When another benchmark started Django in this process: `script` run to its end in a new
    interpreter, and True (the caller's main() is done); else False, and nothing run."""
    from django.apps import apps

    if not apps.ready:
        return False
    subprocess.run([sys.executable, script], check=False)  # noqa: S603 - a benchmark of ours
    return True
