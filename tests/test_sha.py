"""schedgen.sha: Python's own SHA-256, and hashlib's on a Python built without it."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from schedgen.sha import sha256


def test_the_digest_is_hashlibs() -> None:
    data = b"schedgen \xff\x00" * 1000
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_python_without_the_builtin_module_falls_back_to_hashlib() -> None:
    code = (
        "import importlib\n"
        "real = importlib.import_module\n"
        "def fake(name, *a, **k):\n"
        "    if name in ('_sha2', '_sha256'):\n"
        "        raise ImportError(name)\n"
        "    return real(name, *a, **k)\n"
        "importlib.import_module = fake\n"
        "from schedgen.sha import sha256\n"
        "print(sha256.__module__, sha256(b'x').hexdigest())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["_hashlib", hashlib.sha256(b"x").hexdigest()]
