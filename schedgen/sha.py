"""SHA-256 from Python's own module, not hashlib's: hashlib loads OpenSSL's libcrypto,
4 to 20 ms of every command's start, more than hashing every file of a 2,000-job apply
with Python's slower SHA-256 takes. The digests are the same (it is the same function)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__all__ = ["sha256"]

if TYPE_CHECKING:
    from hashlib import sha256 as sha256
else:
    for _name in ("_sha2", "_sha256"):  # Python 3.12 and later; 3.11
        try:
            sha256 = import_module(_name).sha256
            break
        except (ImportError, AttributeError):
            continue
    else:  # a Python built without them: hashlib's, whatever it loads
        from hashlib import sha256
