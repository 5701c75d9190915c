"""Block-style YAML for manifests: mappings, lists, strings, integers and booleans.

schedgen writes its own rather than use PyYAML: the output must not change when a
dependency is upgraded (a changed line width or quoting rule would show as drift in
every `diff`), and the shapes written are few and fixed. A string is written plain
only when both YAML 1.1 (kubectl's parser) and YAML 1.2 read it back as that string;
anything else is double-quoted with JSON's escapes, which YAML reads the same, plus
the characters YAML treats as line breaks or forbids in a stream.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Starts with a letter, holds no indicator or space: no number, date or null can look so.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
# Words YAML 1.1 reads as booleans or null (any case kubectl's parser knows).
_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null"}
# YAML breaks lines at NEL, LS, PS and forbids C1 controls, surrogates, BOM, FFFE/FFFF.
_UNSAFE = re.compile("[\u007f-\u009f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} as YAML")
    if _PLAIN.fullmatch(value) and value.lower() not in _WORDS:
        return value
    return quote(value)


def quote(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dump(data: dict[str, Any]) -> str:
    """A mapping as a YAML document (no leading ---), ending in a newline."""
    return "".join(_lines(data, 0))


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            key = scalar(str(k))
            if _nested(v):
                out.append(f"{pad}{key}:\n")
                out += _lines(v, indent + 2)
            else:
                out.append(f"{pad}{key}: {_inline(v)}\n")
        return out
    for item in value:
        if _nested(item) and isinstance(item, dict):
            # "- " then the item's first key on the same line, the rest aligned under it
            inner = _lines(item, indent + 2)
            out.append(f"{pad}- {inner[0][indent + 2:]}")
            out += inner[1:]
        elif _nested(item):
            out.append(f"{pad}-\n")
            out += _lines(item, indent + 2)
        else:
            out.append(f"{pad}- {_inline(item)}\n")
    return out


def _nested(value: Any) -> bool:
    return isinstance(value, dict | list) and bool(value)


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return scalar(value)
