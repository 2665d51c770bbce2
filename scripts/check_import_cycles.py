"""Fails (exit 1) when the package has an import cycle: ``make lint`` runs it after ``lint-imports``.

Every import counts: module level, inside ``if TYPE_CHECKING:`` and inside functions (a lazy import
that closes a circle is still a circle). The graph comes from grimp (installed with import-linter);
cycles are its strongly connected components of more than one module, or a module importing itself.

Usage: ``python scripts/check_import_cycles.py [package]`` (default ``langchain_graphrag_milvus``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping

import grimp


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion: the components with a cycle, each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
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
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def main(argv: list[str]) -> int:
    """Prints every cycle with the imports that form it; returns 1 if there is one."""
    package = argv[0] if argv else "langchain_graphrag_milvus"
    imports = grimp.build_graph(package, cache_dir=None)
    graph = {m: imports.find_modules_directly_imported_by(m) for m in imports.modules}
    cycles = strongly_connected(graph)
    for component in cycles:
        members = set(component)
        print(f"import cycle among {len(component)} modules:")
        for importer in component:
            for imported in sorted(graph[importer] & members):
                lines = ", ".join(
                    str(d["line_number"]) for d in imports.get_import_details(importer=importer, imported=imported)
                )
                print(f"  {importer} -> {imported} (l.{lines})")
    if cycles:
        print(f"{len(cycles)} import cycle(s) in {package}")
        return 1
    print(f"no import cycle in {package} ({len(graph)} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
