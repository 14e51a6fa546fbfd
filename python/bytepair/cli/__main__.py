"""``python -m bytepair.cli``: the same command line as ``bytepair``."""

from . import main

raise SystemExit(main())
