"""The graph of imports between a package's modules, and the cycles in it.

Read with `ast`, never by importing, so a cycle is found even where it would only fail at run time.

What counts as an edge:

- every `import` and `from ... import` anywhere in a module: at module level, inside functions and
  classes, and under `if TYPE_CHECKING:`. An import inside a function only moves the cycle to the
  first call, and a type-checking import is still a dependency of the module's meaning (mypy follows
  it), so neither is a way out of a cycle;
- `import a.b.c` is an edge to `a.b.c`; `from a.b import c` is an edge to `a.b` (a package means its
  `__init__`) and, where `a.b.c` is a module, to `a.b.c` as well;
- importing `a.b.c` also initialises the packages `a` and `a.b` first, so those are edges too, except
  the packages the importing module lies in itself (already initialising when it runs; counting them
  would make every package loop through its own `__init__`).

Besides the modules' graph there is the packages' graph: each module counts as its first-level package
(`oloproof.store._runs` as `oloproof.store`; a top-level module as itself), so two packages whose
modules import each other's form a cycle, even where no module-level loop closes.

Usage: `python scripts/import_graph.py [SRC_DIR] [PACKAGE]` prints each cycle, exit 1 if there is any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Import:
    """One import of a package module by another.

    Attributes:
        target: The module imported.
        line: The line of the import statement in the importing module.
        via: The module the import statement is in, where the importer is a whole package.
    """

    target: str
    line: int
    via: str = ""


@dataclass
class ImportGraph:
    """The modules of one package and the imports between them.

    Attributes:
        files: Each module's source file, by dotted name.
        edges: Each module's imports of other modules of the package, by dotted name.
    """

    files: dict[str, Path] = field(default_factory=dict)
    edges: dict[str, list[Import]] = field(default_factory=dict)

    def first_import(self, source: str, target: str) -> Import:
        """The first import of `target` by `source`."""
        return min((edge for edge in self.edges[source] if edge.target == target), key=lambda e: (e.via, e.line))


def package_of(module: str, root: str) -> str:
    """The first-level package of `root` that `module` lies in, or `module` itself if it has none."""
    parts = module.split(".")
    return ".".join(parts[: len(root.split(".")) + 1])


def package_graph(graph: ImportGraph, root: str) -> ImportGraph:
    """The graph between the first-level packages of `root`: an edge wherever one of their modules imports."""
    packages = ImportGraph()
    for name in graph.files:
        packages.files.setdefault(package_of(name, root), graph.files[name])
        packages.edges.setdefault(package_of(name, root), [])
    for name, edges in graph.edges.items():
        source = package_of(name, root)
        for edge in edges:
            target = package_of(edge.target, root)
            if target != source:
                packages.edges[source].append(Import(target, edge.line, via=name if name != source else ""))
    return packages


def module_name(path: Path, src: Path) -> str:
    """The dotted name of the module in `path`, a file under the source root `src`."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` statement names."""
    if node.level == 0:
        return node.module or ""
    # A relative import counts from the module's package: the module itself if it is a package.
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _ancestors(name: str) -> list[str]:
    """The packages above a dotted module name, outermost first."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def _imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> Iterator[Import]:
    """Every import of a module in `modules` made anywhere in `tree`, with the packages it initialises."""
    own = {*_ancestors(module), module} if is_package else set(_ancestors(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, is_package, node)
            named = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in named:
            if target not in modules:
                continue
            yield Import(target, node.lineno)
            for package in _ancestors(target):
                if package in modules and package not in own:
                    yield Import(package, node.lineno)


def build_graph(src: Path, package: str) -> ImportGraph:
    """The import graph of `package`, whose source lies under `src` (e.g. `src` and `oloproof`)."""
    graph = ImportGraph()
    for path in sorted((src / package).rglob("*.py")):
        graph.files[module_name(path, src)] = path
    modules = set(graph.files)
    for name, path in graph.files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found = _imports(tree, name, path.name == "__init__.py", modules)
        graph.edges[name] = sorted({edge for edge in found if edge.target != name}, key=lambda e: (e.line, e.target))
    return graph


def _strongly_connected(edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (the graph may be deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def _shortest_loop(start: str, members: set[str], edges: dict[str, list[str]]) -> list[str]:
    """The shortest path from `start` back to itself within one strongly connected component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in edges[node]:
                if child not in members or child in previous:
                    continue
                previous[child] = node
                if child == start:
                    path = [start]
                    while path[-1] != start or len(path) == 1:
                        path.append(previous[path[-1]])
                    return list(reversed(path))
                following.append(child)
        frontier = following
    return [start]


@dataclass(frozen=True)
class Cycle:
    """A group of modules that import each other, and one loop through them.

    Attributes:
        loop: A closed path of imports, first module repeated at the end.
        group: Every module of the group (a strongly connected component), sorted.
    """

    loop: list[str]
    group: list[str]


def find_cycles(graph: ImportGraph) -> list[Cycle]:
    """Each group of modules that import each other, with its shortest loop through its first member.

    A group can hold more loops than the one shown; fixing it and running again shows what is left.
    """
    targets = {name: sorted({edge.target for edge in edges}) for name, edges in graph.edges.items()}
    return [Cycle(_shortest_loop(group[0], set(group), targets), group) for group in _strongly_connected(targets)]


def describe_cycle(graph: ImportGraph, cycle: Cycle) -> str:
    """One line naming each module of a cycle's loop with the line of its import, then the whole group."""
    steps = []
    for source, target in zip(cycle.loop, cycle.loop[1:], strict=False):
        edge = graph.first_import(source, target)
        steps.append(f"{source} ({edge.via} line {edge.line})" if edge.via else f"{source} (line {edge.line})")
    described = " -> ".join([*steps, cycle.loop[-1]])
    if len(cycle.group) > len(cycle.loop) - 1:
        described += f" [group of {len(cycle.group)}: {', '.join(cycle.group)}]"
    return described


def all_cycles(src: Path, package: str) -> list[str]:
    """Each cycle of `package`'s modules, then each cycle of its first-level packages, one line each."""
    graph = build_graph(src, package)
    packages = package_graph(graph, package)
    # A loop of top-level modules alone is the same loop in both graphs: it is reported once, as modules'.
    subpackages = {package_of(name, package) for name in graph.files if package_of(name, package) != name}
    return [
        *(f"modules: {describe_cycle(graph, cycle)}" for cycle in find_cycles(graph)),
        *(f"packages: {describe_cycle(packages, cycle)}" for cycle in find_cycles(packages)
          if subpackages.intersection(cycle.group)),
    ]


def main(argv: list[str]) -> int:
    """Print each import cycle; exit 1 if there is any."""
    src = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "src"
    package = argv[1] if len(argv) > 1 else "oloproof"
    cycles = all_cycles(src, package)
    for cycle in cycles:
        print(cycle)
    print(f"{len(cycles)} import cycle(s) in {src / package}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
