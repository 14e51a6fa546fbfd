"""The package's layers, as its imports show them (every import statement,
lazy ones inside functions too): formats never import a tokenizer class, the
product imports the reference only in the tools that show the algorithm, the
reference takes from the product only its data and the readings it shares
with it, and the tokenizers share one contract instead of each other's
private helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import bytepair

PACKAGE = Path(bytepair.__file__).resolve().parent


def _imports() -> dict[str, set[tuple[str, str]]]:
    """Module -> the (module, name) pairs it imports, relative imports resolved."""
    found: dict[str, set[tuple[str, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        module = ".".join(parts)
        pairs = found.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs.update((alias.name, "") for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = parts if is_package else parts[:-1]
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                target = node.module or ""
                if node.level:
                    target = ".".join([*base, *([target] if target else [])])
                pairs.update((target, alias.name) for alias in node.names)
    return found


IMPORTS = _imports()


def _targets(module: str) -> set[str]:
    """The modules ``module`` imports (``from a import b``: a.b when that is a module)."""
    out = set()
    for target, name in IMPORTS[module]:
        out.add(f"{target}.{name}" if f"{target}.{name}" in IMPORTS else target)
    return out


def test_formats_import_no_tokenizer_class():
    for module in IMPORTS:
        if module.startswith("bytepair.formats"):
            bad = {t for t in _targets(module) if t.startswith("bytepair.tokenizers")}
            assert not bad, f"{module} imports {bad}"


def test_only_the_tools_that_show_the_algorithm_import_the_reference():
    importers = {
        module
        for module in IMPORTS
        if not module.startswith("bytepair.reference")
        and any(t.startswith("bytepair.reference") for t in _targets(module))
    }
    assert importers <= {"bytepair.tools.trace"}, importers
    for module in importers:  # and they say so
        path = PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and "reference" in doc, module


def test_the_reference_takes_only_data_and_shared_readings_from_the_product():
    allowed = {
        "bytepair.model",  # the plain data types
        "bytepair.errors",
        "bytepair.pretokenizers",  # Pretokenizer, its names and patterns
        "bytepair.user_regex",  # fancy-regex's syntax, read in Python
        "bytepair.formats.hf_unigram",  # a tokenizer.json's pipeline, as data
        "bytepair.formats.hf_decoder",  # what its decoder steps do
    }
    for module in IMPORTS:
        if module.startswith("bytepair.reference"):
            product = {
                t
                for t in _targets(module)
                if t.startswith("bytepair") and not t.startswith("bytepair.reference")
            }
            assert product <= allowed, f"{module} imports {product - allowed}"


def test_tokenizer_classes_share_the_contract_not_each_others_helpers():
    for module in IMPORTS:
        if module.startswith("bytepair.tokenizers"):
            for target, name in IMPORTS[module]:
                if target.startswith("bytepair.tokenizers") and target != module:
                    assert not name.startswith("_"), f"{module} takes {name} from {target}"
    classes = ("bpe", "unigram", "loaded", "char_bpe")
    for name in classes:
        assert "bytepair.tokenizers._contract" in _targets(f"bytepair.tokenizers.{name}"), name


def test_load_and_train_are_the_top_floor():
    below = [m for m in IMPORTS if m not in ("bytepair", "bytepair.api", "bytepair.__main__")]
    for module in below:
        if module.startswith(("bytepair.cli", "bytepair.tools", "bytepair.corpus.dataset")):
            continue  # the command line, the tools and encode-dataset load tokenizers by name
        assert "bytepair.api" not in _targets(module), module
    assert bytepair.load.__annotations__["return"] and bytepair.train.__annotations__["return"]
