"""The build as pyproject.toml declares it. With ``FIELDGRAPH_MYPYC=1`` in the environment, the modules listed under
``[tool.fieldgraph] mypyc`` there (the normalizers' type model, fields, paths, walk, Avro parser and Protobuf
converter) are also compiled to C extensions by mypyc, as black and mypy ship theirs: the same source and output,
about twice the fields/s (``benchmarks/normalize.py --mypyc``). The published wheels are built that way (``make
dist``, ``[tool.cibuildwheel]``). That needs a C compiler, Python's headers and mypy (which brings mypyc) where the
build runs::

    pip install setuptools mypy && FIELDGRAPH_MYPYC=1 pip install --no-build-isolation .
"""

import os
import tomllib

from setuptools import setup

ext_modules = []
if os.environ.get("FIELDGRAPH_MYPYC") == "1":
    try:
        from mypyc.build import mypycify
    except ImportError:
        raise SystemExit("FIELDGRAPH_MYPYC=1 compiles with mypyc, which comes with mypy: pip install mypy, then "
                         "build without isolation (pip install --no-build-isolation .)") from None

    with open("pyproject.toml", "rb") as f:
        compiled = tomllib.load(f)["tool"]["fieldgraph"]["mypyc"]
    ext_modules = mypycify([f"fieldgraph/{module}" for module in compiled], opt_level="3")

setup(ext_modules=ext_modules)
