"""fieldgraph as ``FIELDGRAPH_MYPYC=1`` builds it: setup.py compiles the modules pyproject.toml lists under
``[tool.fieldgraph] mypyc`` with mypyc. Built as a wheel from this checkout (no build isolation: the test
extra has setuptools and mypy) and installed into a folder, to put first on ``PYTHONPATH`` in a subprocess
(``tests/test_mypyc.py``, ``benchmarks/normalize.py --mypyc``)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the modules the compiled build compiles (paths under fieldgraph/)
COMPILED: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["fieldgraph"]["mypyc"]


def build_compiled(into: Path) -> Path:
    """Build and install the compiled package under ``into``; the folder to put on ``PYTHONPATH``."""
    wheels, site = into / "wheel", into / "site"
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(wheels), str(ROOT)],
         env={**os.environ, "FIELDGRAPH_MYPYC": "1"})
    (wheel,) = wheels.glob("*.whl")
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)])
    return site


def _run(argv: list[str], env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv[1:4])} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
