"""Read a plist as launchd does: more leniently than Python's XML parser.

launchd (CoreFoundation's plist parser) loads files that expat refuses: a comment,
blank lines or a byte-order mark before `<?xml ...?>`, and DOCTYPE variants such as
an unquoted system id. Neither the declaration nor the DOCTYPE carries data, so a
file that fails is read again without them; what was repaired is said, and a file
that still fails is reported with its cause in words.
"""

from __future__ import annotations

import plistlib
import re
from typing import Any, NamedTuple

_BOM = b"\xef\xbb\xbf"
# Comments and space before the first element or declaration.
_PROLOGUE_JUNK = re.compile(rb"\A(?:\s+|<!--.*?-->)+", re.DOTALL)
# A DOCTYPE up to its closing '>' (an internal subset in [...] included).
_DOCTYPE = re.compile(rb"<!DOCTYPE\b(?:[^>\[]|\[[^\]]*\])*>", re.IGNORECASE)


class Read(NamedTuple):
    plist: Any  # None when unreadable
    repairs: tuple[str, ...]  # what was overlooked, as launchd overlooks it
    error: str  # why it is unreadable ("" when it was read)


def read_plist(data: bytes) -> Read:
    try:
        return Read(plistlib.loads(data), (), "")
    except Exception as exc:  # noqa: BLE001 - plistlib raises several kinds for bad input
        first = _cause(exc, data)
    if data.startswith(b"bplist"):
        return Read(None, (), f"a damaged binary plist ({first})")
    body, repairs = data, []
    if body.startswith(_BOM):
        body = body[len(_BOM):]
        repairs.append("a byte-order mark")
    junk = _PROLOGUE_JUNK.match(body)
    if junk and body[junk.end():].startswith(b"<?xml"):
        body = body[junk.end():]
        repairs.append("a comment before <?xml ...?>" if b"<!--" in junk.group(0)
                       else "blank space before <?xml ...?>")
    doctype = _DOCTYPE.search(body)
    if doctype and not _standard_doctype(doctype.group(0)):
        body = body[:doctype.start()] + body[doctype.end():]
        repairs.append("a DOCTYPE Python's XML parser refuses "
                       f"({doctype.group(0).decode('utf-8', 'replace')})")
    if not repairs:
        return Read(None, (), first)
    try:
        return Read(plistlib.loads(body, fmt=plistlib.FMT_XML), tuple(repairs), "")
    except Exception as exc:  # noqa: BLE001
        return Read(None, tuple(repairs), _cause(exc, body))


def _standard_doctype(text: bytes) -> bool:
    return re.fullmatch(rb'<!DOCTYPE\s+plist\s+PUBLIC\s+"[^"]*"\s+"[^"]*"\s*>', text) is not None


def _cause(exc: Exception, data: bytes) -> str:
    message = str(exc) or type(exc).__name__
    if message == "Invalid file":
        head = data.lstrip()[:40]
        if not head:
            return "the file is empty"
        if not head.startswith(b"<"):
            return "it is neither XML nor a binary plist"
        return "no <plist> element could be read from it"
    where = re.search(r"line (\d+), column (\d+)", message)
    if where:
        line = data.split(b"\n")[int(where.group(1)) - 1].decode("utf-8", "replace").strip()
        return f"{message}: {line[:80]}"
    return message
