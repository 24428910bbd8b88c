"""The store's modules: one concept each, no import cycles, one facade."""

from __future__ import annotations

import ast
from pathlib import Path

import oloproof.store
from oloproof.store import ResultsStore

PACKAGE = Path(oloproof.store.__file__).parent


def _store_imports(path: Path) -> set[str]:
    """Every ``oloproof.store._x`` module a file imports, wherever the import is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("oloproof.store._"):
                found.add(node.module.split(".")[2])
            elif node.module == "oloproof.store":
                found.update(alias.name for alias in node.names if alias.name.startswith("_"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("oloproof.store._"):
                    found.add(alias.name.split(".")[2])
    return found


def test_the_store_modules_import_each_other_without_cycles():
    graph = {path.stem: _store_imports(path) for path in PACKAGE.glob("_*.py")}
    done: set[str] = set()

    def visit(module: str, stack: tuple[str, ...]) -> None:
        assert module not in stack, " -> ".join((*stack, module))
        if module in done:
            return
        for imported in graph.get(module, ()):
            visit(imported, (*stack, module))
        done.add(module)

    for module in graph:
        visit(module, ())
    assert "_store" not in graph["_views"] and "_store" not in graph["_queries"]


def test_the_package_exports_a_sorted_all():
    assert oloproof.store.__all__ == sorted(oloproof.store.__all__)
    assert all(hasattr(oloproof.store, name) for name in oloproof.store.__all__)


def test_the_facade_is_made_of_the_parts(tmp_path):
    store = ResultsStore(str(tmp_path))
    assert store.objects.location is store.location
    assert store.records.objects is store.objects
    assert store.tables.objects is store.objects
    assert store.queries.objects is store.objects
    assert (store.url, store.fs, store.root, store.is_local) == (
        store.location.url, store.location.fs, store.location.root, True
    )
    assert repr(store) == f"ResultsStore({str(tmp_path)!r})"


def test_no_method_shadows_a_builtin():
    import builtins

    public = {name for name in vars(ResultsStore) if not name.startswith("_")}
    shadowed = {name for name in public if hasattr(builtins, name)}
    assert shadowed == set()
    assert ResultsStore.list_paths
