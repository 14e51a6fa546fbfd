"""mkdocs hook: Sphinx roles in docstrings read as plain code.

The package's docstrings name other objects as ``:func:`train``` and the like;
the API reference renders them as code (``train``), without the role's name.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):(<code>)")


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub(r"\1", html)
