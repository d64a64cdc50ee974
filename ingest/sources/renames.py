"""Renames stated by hand: ``fieldgraph rename`` and ``POST /api/v1/renames`` (a SQL statement's are :mod:`.sql`'s).

A field rename names two field URNs of one dataset (their paths v2, v1 dotted or RFC slash paths, resolved by the
graph against the dataset's schema: a name no schema lists becomes a placeholder); a dataset rename names two
dataset URNs, and every field of the old dataset is renamed to the field of the same path in the new one. Both
become a :class:`~fieldgraph.changes.RenameChange` at ``ts``, with ``source`` (``cli``, ``api``), ``by`` (who) and
``note`` (why). What cannot be a rename is a :class:`~fieldgraph.errors.RenameError` naming the input.

The HTTP body::

    {"old": "urn:li:datasetField:(...,amount)", "new": "urn:li:datasetField:(...,amount_usd)",
     "at": "2026-11-27T10:00:00Z", "note": "in dollars now"}
    {"oldDataset": "urn:li:dataset:(...)", "newDataset": "urn:li:dataset:(...)"}

``at`` (milliseconds or ISO 8601; default: now) and ``note`` are optional.
"""

from __future__ import annotations

from typing import Any

from fieldgraph.changes import RenameChange
from fieldgraph.errors import EventError, RenameError, UrnError
from fieldgraph.graph.plan import simple_ref
from fieldgraph.ingest.times import epoch_ms
from fieldgraph.normalizers import FieldUrn
from fieldgraph.normalizers.urns import DatasetUrn

FIELD_KEYS = ("old", "new")
DATASET_KEYS = ("oldDataset", "newDataset")
_KEYS = frozenset({*FIELD_KEYS, *DATASET_KEYS, "at", "note"})


def field_rename(old: str, new: str, *, ts: int, source: str, by: str | None = None, note: str | None = None,
                 origin: str = "", names: tuple[str, str] = FIELD_KEYS, hint: str = "") -> RenameChange:
    """The rename of field ``old`` to field ``new`` of the same dataset; ``names`` name the two inputs in errors,
    ``hint`` says how to rename a dataset instead (the CLI's option, the HTTP body's keys)."""
    o, n = (_field(ref, name, hint) for ref, name in zip((old, new), names, strict=True))
    if str(o.dataset) != str(n.dataset):
        raise RenameError(f"{names[0]} {old!r} and {names[1]} {new!r} are fields of two datasets ({o.dataset} and "
                          f"{n.dataset}): a field is renamed within its dataset{hint}")
    if simple_ref(o.field_path) == simple_ref(n.field_path):
        raise RenameError(f"{names[1]} {new!r} is the field {names[0]} names: a rename needs a new name")
    return RenameChange(str(n.dataset), ((str(o), str(n)),), ts=ts, source=source, by=by, note=note, origin=origin)


def dataset_rename(old: str, new: str, *, ts: int, source: str, by: str | None = None, note: str | None = None,
                   origin: str = "", names: tuple[str, str] = DATASET_KEYS) -> RenameChange:
    """The rename of dataset ``old`` to ``new``: each field of ``old`` becomes the field of the same path in
    ``new``."""
    o, n = (_dataset(ref, name) for ref, name in zip((old, new), names, strict=True))
    if str(o) == str(n):
        raise RenameError(f"{names[1]} {new!r} is the dataset {names[0]} names: a rename needs a new name")
    return RenameChange(str(n), from_dataset=str(o), ts=ts, source=source, by=by, note=note, origin=origin)


def decode_rename_request(obj: Any, *, now: int, source: str = "api", by: str | None = None, origin: str = ""
                          ) -> RenameChange:
    """The rename an HTTP body states (see the module): a field's (``old``, ``new``) or a dataset's (``oldDataset``,
    ``newDataset``), at ``at`` (default ``now``)."""
    if not isinstance(obj, dict):
        raise RenameError(f"a rename is a JSON object with old and new (or oldDataset and newDataset), got "
                          f"{type(obj).__name__}")
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise RenameError(f"unknown keys {unknown} in a rename (expected {sorted(_KEYS)})")
    for key in _KEYS - {"at"}:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise RenameError(f"{key} must be a string, got {type(obj[key]).__name__}")
    fields, datasets = (any(obj.get(k) is not None for k in keys) for keys in (FIELD_KEYS, DATASET_KEYS))
    if fields == datasets:
        raise RenameError("a rename names either old and new (two fields) or oldDataset and newDataset (two datasets)"
                          if fields else "a rename needs old and new (field URNs), or oldDataset and newDataset")
    keys = FIELD_KEYS if fields else DATASET_KEYS
    missing = [k for k in keys if not obj.get(k)]
    if missing:
        raise RenameError(f"a rename needs {' and '.join(keys)}: {', '.join(missing)} missing")
    try:
        ts = now if obj.get("at") is None else epoch_ms(obj["at"], "at")
    except EventError as exc:
        raise RenameError(str(exc)) from exc
    note = obj.get("note") or None
    if fields:
        return field_rename(obj["old"], obj["new"], ts=ts, source=source, by=by, note=note, origin=origin,
                            hint="; rename a dataset with oldDataset and newDataset")
    return dataset_rename(obj["oldDataset"], obj["newDataset"], ts=ts, source=source, by=by, note=note,
                          origin=origin)


def rename_json(c: RenameChange) -> dict[str, Any]:
    """A rename's JSON form (``fieldgraph rename --json``, ``fieldgraph sql --json``, ``POST /api/v1/renames``)."""
    return {"dataset": c.dataset, "fromDataset": c.from_dataset,
            "renames": [{"old": old, "new": new} for old, new in c.renames],
            "time": c.ts, "source": c.source, "by": c.by, "note": c.note}


def _field(ref: str, name: str, hint: str) -> FieldUrn:
    try:
        return FieldUrn.parse(ref)
    except UrnError as exc:
        raise RenameError(f"{name} {ref!r} is not a field URN ({exc.reason}); expected "
                          f"urn:li:datasetField:(<datasetUrn>,<fieldPath>) or urn:li:schemaField:(...){hint}"
                          ) from exc


def _dataset(ref: str, name: str) -> DatasetUrn:
    try:
        return DatasetUrn.parse(ref)
    except UrnError as exc:
        raise RenameError(f"{name} {ref!r} is not a dataset URN ({exc.reason}); expected "
                          "urn:li:dataset:(urn:li:dataPlatform:<platform>,<name>,<env>)") from exc


__all__ = ["DATASET_KEYS", "FIELD_KEYS", "dataset_rename", "decode_rename_request", "field_rename", "rename_json"]
