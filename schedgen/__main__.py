from __future__ import annotations

from schedgen.cli import main

if __name__ == "__main__":
    main()
