"""SchemaFieldPath v2: parse, format, and derive the v1 (simple) path.

A v2 path is ``[version=2.0]``, optionally ``[key=True]``, then tokens joined by ``.``:
``[type=X]`` type tokens and field names, e.g. ``[version=2.0].[type=R].[type=string].a``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import FieldPathError

VERSION_TOKEN = "[version=2.0]"
KEY_TOKEN = "[key=True]"


@dataclass(frozen=True, slots=True)
class PathToken:
    """One step of a v2 path: a ``[type=X]`` token (``is_type``) or a field name."""

    value: str
    is_type: bool = False

    def __str__(self) -> str:
        return f"[type={self.value}]" if self.is_type else self.value


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A parsed v2 field path."""

    tokens: tuple[PathToken, ...]
    key: bool = False
    version: str = "2.0"

    @classmethod
    def parse(cls, text: str) -> FieldPath:
        if not isinstance(text, str) or not text:
            raise FieldPathError(str(text), "empty path")
        raw = _split(text)
        if not raw or raw[0] != VERSION_TOKEN:
            if raw and raw[0].startswith("[version="):
                raise FieldPathError(text, f"unsupported version token {raw[0]}; expected {VERSION_TOKEN}")
            raise FieldPathError(text, f"a v2 path starts with {VERSION_TOKEN}")
        rest = raw[1:]
        key = False
        if rest and rest[0].startswith("[key="):
            if rest[0] != KEY_TOKEN:
                raise FieldPathError(text, f"bad key token {rest[0]}; expected {KEY_TOKEN}")
            key, rest = True, rest[1:]
        tokens = []
        for i, tok in enumerate(rest, start=1):
            if tok.startswith("["):
                if not tok.startswith("[type=") or len(tok) <= len("[type=]"):
                    raise FieldPathError(text, f"token {i} {tok!r} is not a [type=X] token")
                tokens.append(PathToken(tok[len("[type="):-1], is_type=True))
            elif "[" in tok or "]" in tok:
                raise FieldPathError(text, f"token {i} {tok!r} mixes a name and brackets")
            else:
                tokens.append(PathToken(tok))
        return cls(tuple(tokens), key=key)

    def __str__(self) -> str:
        head = [VERSION_TOKEN] + ([KEY_TOKEN] if self.key else [])
        return ".".join(head + [str(t) for t in self.tokens])

    @property
    def names(self) -> tuple[str, ...]:
        """The field names along the path, outermost first."""
        return tuple(t.value for t in self.tokens if not t.is_type)

    @property
    def v1(self) -> str:
        return ".".join(self.names)


def _split(text: str) -> list[str]:
    """Split on dots that are outside brackets; reject empty tokens and unbalanced brackets."""
    out: list[str] = []
    start = 0
    depth = 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth:
                raise FieldPathError(text, f"nested '[' at offset {i}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise FieldPathError(text, f"unmatched ']' at offset {i}")
            depth = 0
        elif ch == "." and not depth:
            out.append(text[start:i])
            start = i + 1
    if depth:
        raise FieldPathError(text, "unclosed '['")
    out.append(text[start:])
    for n, tok in enumerate(out, start=1):
        if not tok:
            raise FieldPathError(text, f"empty token at position {n}")
        if tok.startswith("[") and not tok.endswith("]"):
            raise FieldPathError(text, f"token {tok!r} has text after its closing ']'")
    return out


def is_v2(path: str) -> bool:
    return path.startswith(VERSION_TOKEN)


def v1_path(path: str) -> str:
    """The simple path DataHub derives from a v2 path (identity for a path that is not v2).

    Same rule as DataHub's ``get_simple_field_path_from_v2_field_path``: drop every
    dot-separated token that starts with ``[`` or ends with ``]``.
    """
    if not path.startswith(VERSION_TOKEN):
        return path
    return ".".join(t for t in path.split(".") if not (t.startswith("[") or t.endswith("]")))
