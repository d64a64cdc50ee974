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
_SETTING = re.compile(
    r"(?P<head>(?P<q>[\"']?)[\w.-]*(?:password|passwd|secret|token|user\.info|api[_.-]?key)[\w.-]*(?P=q)\s*[:=]\s*"
    r"(?P<open>[\"']?))(?P<value>[^\"'\s,}\]]+)", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with every credential it holds masked."""
    if "://" in text:
        text = _USERINFO.sub(rf"\g<head>:{MASK}@", text)
    return _SETTING.sub(rf"\g<head>{MASK}", text)
