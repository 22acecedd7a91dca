"""The project's import graph: no import circles, and services share code only through libs/common.

Read from the source with `ast` (nothing is imported), so every import counts: at module level, inside
functions (lazy imports) and under TYPE_CHECKING alike; a circle that only type checkers see is
still two modules that cannot be read, changed or moved apart.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = [
    *sorted(ROOT.glob("services/*/src")),
    ROOT / "libs/common/src",
    ROOT / "cli/src",
    ROOT / "evaluation/src",
]
SERVICES = {path.parent.name for path in ROOT.glob("services/*/src")}

# Service -> other service imports still allowed; none: services share code through libs/common only.
EXPECTED_CROSS_SERVICE: set[tuple[str, str]] = set()


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for root in SOURCE_ROOTS:
        for path in root.rglob("*.py"):
            modules[module_name(root, path)] = path
    return modules


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Every module name `module` imports, absolute; `from a import b` yields a.b and a."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (the deepest one each import statement names)."""
    modules = project_modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {name for name in imported_names(module, path) if name in modules}
        # `from pkg import mod` names pkg and pkg.mod: the edge goes to the module, not its package.
        graph[module] = {t for t in targets if not any(o.startswith(f"{t}.") for o in targets)} - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_graph_is_read_from_every_source_root() -> None:
    graph = import_graph()
    # A wrong root or a parse that finds no imports would make the checks below pass vacuously.
    assert {"weaverbird_common.docs.loaders", "weaverbird_retriever.stores.base", "weaverbird_cli"} <= set(graph)
    assert "weaverbird_common.docs.workers" in graph["weaverbird_common.docs.loaders"]
    assert "weaverbird_retriever.stores.search_options" in graph["weaverbird_retriever.stores.figures"]


def test_cycle_finder_reports_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    found = cycles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_services_import_no_other_service() -> None:
    graph = import_graph()
    crossings = {
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if module.split(".")[0] in {f"weaverbird_{s}" for s in SERVICES}
        and target.split(".")[0] in {f"weaverbird_{s}" for s in SERVICES}
        and target.split(".")[0] != module.split(".")[0]
    }
    unexpected = crossings - EXPECTED_CROSS_SERVICE
    assert not unexpected, f"services import each other's packages (share through libs/common): {sorted(unexpected)}"


def test_the_cli_reaches_the_evaluation_package_only_through_its_plugin_entry_point() -> None:
    graph = import_graph()
    assert any(t.startswith("weaverbird_eval") for t in graph["weaverbird_eval.cli"])  # the graph sees eval
    below = {
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if not module.startswith("weaverbird_eval") and target.startswith("weaverbird_eval")
    }
    assert not below, f"imports of the evaluation package (a plugin; nothing below imports it): {sorted(below)}"
