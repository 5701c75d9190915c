from __future__ import annotations

from schedgen.quick import entry

if __name__ == "__main__":
    entry()
