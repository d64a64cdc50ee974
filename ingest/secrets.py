"""Credentials never reach a log line or an error message: :func:`redact` masks them in any text.

Masked: the password of a URI's userinfo (``bolt://neo4j:***@host``, ``http://user:***@registry``) and the
value of any setting whose name says it is secret (``sasl.password``, ``basic.auth.user.info``, ``...token``,
``...secret``, ``api_key``), written ``name=value``, ``name: value`` or as a quoted JSON or Python key.
The CLI's log handler and its error line apply it, so every command and the worker are covered.
"""

from __future__ import annotations

import re

MASK = "***"

_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:@/\s'\"]*):[^@/\s'\"]*@")
#: a setting whose name ends in a secret word, then ``=`` or ``:`` (followed by a space or a quote, so that
#: ``secret:topic`` or ``tokens.jsonl:12`` are left alone), then its value: quoted (masked to the closing quote)
#: or a bare word
_SETTING = re.compile(
    r"(?P<head>(?P<q>[\"']?)\b[\w.-]*(?:password|passwd|secret|token|user\.info|api[_.-]?key)(?P=q)"
    r"\s*(?:=|:(?=[\s\"']))\s*)(?:(?P<open>[\"'])(?P<quoted>.*?)(?P=open)|(?P<bare>[^\"'\s,}\]]+))",
    re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with every credential it holds masked."""
    if "://" in text:
        text = _USERINFO.sub(rf"\g<head>:{MASK}@", text)
    return _SETTING.sub(_mask, text)


def _mask(m: re.Match[str]) -> str:
    quote = m.group("open") or ""
    return f"{m.group('head')}{quote}{MASK}{quote}"
