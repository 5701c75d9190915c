from __future__ import annotations

from schedgen.quick import main

if __name__ == "__main__":
    main()
