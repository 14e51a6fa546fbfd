"""``python -m bytepair``: the same command line as ``bytepair``."""

from .cli import main

raise SystemExit(main())
