"""Golden-file helpers: ``<case>.<ext>`` inputs beside ``<case>.json`` expected fields.

Set FIELDGRAPH_REGEN_GOLDEN=1 to rewrite the expected files from the current output
(then review the diff before committing it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("FIELDGRAPH_REGEN_GOLDEN") == "1"


def cases(folder: str, pattern: str) -> list[Path]:
    return sorted((GOLDEN / folder).glob(pattern))


def check(source: Path, fields: list, suffix: str = ".json") -> None:
    """Compare the fields' DataHub JSON with the golden file beside ``source``."""
    expected_path = source.with_suffix(suffix)
    actual = json.dumps([f.to_datahub() for f in fields], indent=2) + "\n"
    if REGEN or not expected_path.exists():
        expected_path.write_text(actual)
    assert actual == expected_path.read_text(), f"{source.name}: output differs from {expected_path.name}"
