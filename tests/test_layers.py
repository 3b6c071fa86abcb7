"""The floors of the house (README "What is in the box", CONVENTIONS): scrapers <- nodesoftware <- providers <-
(web | advisor | digest | exports) <- comparator (the project's plumbing), and no floor reaches up or sideways. Read
from the source, function-level imports included, so a lazy import cannot hide a cycle."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# package -> packages it must never import
FORBIDDEN = {
    "scrapers": {"providers", "nodesoftware", "web", "advisor", "digest", "exports", "comparator"},
    "nodesoftware": {"providers", "web", "advisor", "digest", "exports", "comparator"},
    "providers": {"web", "advisor", "digest", "exports", "comparator"},
    "exports": {"web", "advisor", "digest", "comparator"},
    "advisor": {"web", "digest", "comparator"},
    "digest": {"web", "advisor", "comparator"},
    "web": {"comparator"},  # comparator/ is the plumbing above every app (settings, URL map, middleware)
}


def imports_of(path: Path, root: Path = ROOT) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                package = path.relative_to(root).with_suffix("").parts[:-node.level]
                base = ".".join(package)
                names.add(f"{base}.{node.module}" if node.module else base)
                names.update(f"{base}.{node.module + '.' if node.module else ''}{alias.name}" for alias in node.names)
            else:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules(package: str):
    return [path for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_floor_reaches_up_or_sideways(package):
    offending = []
    for path in modules(package):
        for name in imports_of(path):
            if name.split(".")[0] in FORBIDDEN[package]:
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offending, offending


def test_the_filters_never_import_the_selectors():
    """Selectors own reading: they apply a validated FilterSet; the FilterSet (the package, every part) imports no
    selector."""
    parts = sorted((ROOT / "providers" / "filters").glob("*.py"))
    assert len(parts) == 5, parts
    names = set().union(*(imports_of(path) for path in parts))
    assert not any(name == "providers.selectors" or name.startswith("providers.selectors.") for name in names)
    assert "providers.versions.remembered" in names  # its catalog reads are kept where both can reach them


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    (tmp_path / "providers").mkdir()
    probe = tmp_path / "providers" / "filters.py"
    probe.write_text("import json\n\ndef f():\n    from .selectors import remembered\n    from web import badges\n")
    names = imports_of(probe, tmp_path)
    assert {"json", "providers.selectors.remembered", "web.badges"} <= names
