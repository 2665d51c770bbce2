"""Fails (exit 1) when the package has an import cycle or a CLI handler string that does not resolve.

``make lint`` runs it after ``lint-imports``. Every import counts: module level, inside
``if TYPE_CHECKING:`` and inside functions (a lazy import that closes a circle is still a circle).
The static graph comes from grimp (installed with import-linter); cycles are its strongly connected
components of more than one module, or a module importing itself.

grimp does not see modules loaded by name, so this script reads every module of the package with
``ast`` and adds an edge from the module holding the name to the module it names. Recognised forms:

* ``importlib.import_module(NAME)`` / ``import_module(NAME)`` (``from importlib import
  import_module``), with an optional ``package`` argument for a relative ``NAME``;
  ``__import__(NAME)`` / ``builtins.__import__(NAME)`` (level 0; a constant ``fromlist`` adds
  ``NAME.item`` for every item that is a module of the package). ``NAME`` is a string constant, an
  f-string or ``+`` of constants and ``__name__`` / ``__package__``.
* CLI handler strings: ``<parser>.set_defaults(handler="module:function")`` (how ``cli/``
  registers its commands; ``cli.main`` imports the module and takes the attribute when the
  command runs), and any other string constant of the form ``"<package>.module:attr"``.
* A PEP 562 lazy-export table: a module-level ``_LAZY = {"Name": "submodule", ...}`` dict literal
  of string constants in a package's ``__init__.py`` (its ``__getattr__`` imports
  ``<package>.<submodule>``). (The package's own root declares its lazy exports as
  ``if TYPE_CHECKING:`` imports instead, which the static graph already holds.)
* The console scripts and entry points of ``pyproject.toml`` (``[project.scripts]``,
  ``[project.gui-scripts]``, ``[project.entry-points.*]``) that name a module of the package: each
  ``"module:function"`` must resolve like a handler string (an installed command would fail).

A module naming itself adds no edge (it is loaded by the time the name is used).
Every handler string, and every ``"<package>.module:attr"`` string, is also resolved: the module
is imported and the attribute must exist and be callable. A failure, a malformed handler, a
non-constant handler or a name in the package that is no module of it is reported with the
string, file and line. A call to ``import_module`` / ``__import__`` with any other (computed)
name hides its target, so it fails too unless a comment ``# import-check: <where>`` on its line or
the line above says where the targets are declared (handler strings, ``_LAZY``, the root's
``if TYPE_CHECKING:`` imports).
Not recognised (no import of a module the package could cycle through): resource lookups
(``importlib.resources.files``), ``importlib.util.find_spec`` and distribution metadata.

Usage: ``python scripts/check_import_cycles.py [package [pyproject.toml]]`` (default
``langchain_graphrag_milvus`` and the ``pyproject.toml`` beside ``scripts/``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import grimp

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the entry points are not read
    tomllib = None  # type: ignore[assignment]

PRAGMA = "# import-check:"
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class StringRef(NamedTuple):
    """A module named in a string: ``importer`` (in ``path`` at ``line``) loads ``target`` by name."""

    importer: str
    target: str
    path: Path
    line: int
    form: str
    text: str
    attr: str | None = None

    def where(self) -> str:
        """``path:line`` (the path relative to the working directory when it is below it)."""
        return f"{_shown(self.path)}:{self.line}"


class Scan:
    """What the ``ast`` pass found: the string references and the problems (one message each)."""

    def __init__(self) -> None:
        self.refs: list[StringRef] = []
        self.problems: list[str] = []


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


def package_files(package: str) -> dict[str, Path]:
    """Every module of ``package`` (by dotted name) and its source file."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not an importable package")
    files: dict[str, Path] = {}
    for location in spec.submodule_search_locations:
        root = Path(location)
        for path in sorted(root.rglob("*.py")):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join(parts)] = path
    return files


class _Visitor(ast.NodeVisitor):
    """Collects the string references of one module."""

    def __init__(self, module: str, path: Path, package: str, tree: ast.Module, scan: Scan) -> None:
        self.module, self.path, self.package, self.scan = module, path, package, scan
        self.own_package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.lines = path.read_text(encoding="utf-8").splitlines()
        self.top = {id(statement) for statement in tree.body}
        self.handled: set[int] = set()  # ids of string constants already read as handler strings

    def name_of(self, node: ast.expr | None) -> str | None:
        """The value of a constant module name (constants, f-strings, ``+``, ``__name__``, ``__package__``)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in ("__name__", "__package__"):
            return self.module if node.id == "__name__" else self.own_package
        if isinstance(node, ast.FormattedValue) and node.conversion == -1 and node.format_spec is None:
            return self.name_of(node.value)
        if isinstance(node, ast.JoinedStr):
            parts = [self.name_of(value) for value in node.values]
            return None if None in parts else "".join(p for p in parts if p is not None)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.name_of(node.left), self.name_of(node.right)
            return None if left is None or right is None else left + right
        return None

    def add(self, node: ast.AST, target: str, form: str, text: str, attr: str | None = None) -> None:
        line = getattr(node, "lineno", 0)
        self.scan.refs.append(StringRef(self.module, target, self.path, line, form, text, attr))

    def problem(self, node: ast.AST, message: str) -> None:
        self.scan.problems.append(f"{_shown(self.path)}:{getattr(node, 'lineno', 0)}: {message}")

    def has_pragma(self, node: ast.AST) -> bool:
        first = getattr(node, "lineno", 1)
        last = getattr(node, "end_lineno", first) or first
        return any(PRAGMA in line for line in self.lines[max(first - 2, 0) : last])

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called == "import_module" and (isinstance(func, ast.Name) or _is_name(func, "importlib")):
            self.import_module(node)
        elif called == "__import__" and (isinstance(func, ast.Name) or _is_name(func, "builtins", "importlib")):
            self.dunder_import(node)
        elif called == "set_defaults" and isinstance(func, ast.Attribute):
            for keyword in node.keywords:
                if keyword.arg == "handler":
                    self.handler(keyword.value, "handler")
        self.generic_visit(node)

    def import_module(self, node: ast.Call) -> None:
        name = self.name_of(node.args[0]) if node.args else None
        package_node = node.args[1] if len(node.args) > 1 else _keyword(node, "package")
        package = self.name_of(package_node) if package_node is not None else None
        if name is not None and name.startswith("."):
            name = importlib.util.resolve_name(name, package) if package else None
        if name is None:
            self.computed(node, "importlib.import_module")
        else:
            self.add(node, name, "import_module", name)

    def dunder_import(self, node: ast.Call) -> None:
        name = self.name_of(node.args[0]) if node.args else None
        level = node.args[4] if len(node.args) > 4 else _keyword(node, "level")
        if level is not None and not (isinstance(level, ast.Constant) and level.value == 0):
            name = None
        if name is None:
            self.computed(node, "__import__")
            return
        self.add(node, name, "__import__", name)
        fromlist = node.args[3] if len(node.args) > 3 else _keyword(node, "fromlist")
        if isinstance(fromlist, ast.List | ast.Tuple):
            for item in fromlist.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    self.add(node, f"{name}.{item.value}", "__import__ fromlist", name)

    def computed(self, node: ast.Call, what: str) -> None:
        if not self.has_pragma(node):
            self.problem(
                node,
                f"{what}() with a computed name: the cycle check cannot see its target; use a constant, "
                f"or declare the targets in a form it reads and say where with '{PRAGMA} <where>'",
            )

    def handler(self, value: ast.expr, form: str) -> None:
        text = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
        if text is None:
            self.problem(value, "a handler that is not a string constant: the check cannot resolve it")
            return
        self.handled.add(id(value))
        if not _SPEC.match(text):
            self.problem(value, f"handler string {text!r} is not 'module:function'")
            return
        module, _, attr = text.partition(":")
        self.add(value, module, form, text, attr)

    def visit_Constant(self, node: ast.Constant) -> None:
        text = node.value
        if id(node) in self.handled or not isinstance(text, str) or not _SPEC.match(text):
            return
        if text == self.package or text.startswith(self.package + "."):
            self.handler(node, "module:attr string")

    def visit_Assign(self, node: ast.Assign) -> None:
        self.lazy_table(node.targets, node.value, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.lazy_table([node.target], node.value, node)
        self.generic_visit(node)

    def lazy_table(self, targets: list[ast.expr], value: ast.expr | None, node: ast.stmt) -> None:
        if self.path.name != "__init__.py" or id(node) not in self.top:
            return
        if not any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets) or not isinstance(value, ast.Dict):
            return
        for item in value.values:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                self.add(item, f"{self.module}.{item.value}", "_LAZY table", item.value)
            else:
                self.problem(item, "a _LAZY value that is not a string constant")


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _is_name(func: ast.expr, *modules: str) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def string_refs(package: str, files: Mapping[str, Path] | None = None) -> Scan:
    """Every module named in a string in ``package`` (see the module docs for the forms read)."""
    scan = Scan()
    for module, path in sorted((files or package_files(package)).items()):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        _Visitor(module, path, package, tree, scan).visit(tree)
    return scan


def resolve(ref: StringRef) -> str | None:
    """Why a ``module:attr`` string does not name a callable (None: it does)."""
    try:
        module = importlib.import_module(ref.target)
    except Exception as exc:  # noqa: BLE001 - any failure to import is the finding
        return f"module {ref.target!r} does not import ({type(exc).__name__}: {exc})"
    if not hasattr(module, str(ref.attr)):
        return f"module {ref.target!r} has no attribute {ref.attr!r}"
    if not callable(getattr(module, str(ref.attr))):
        return f"{ref.target}.{ref.attr} is not callable"
    return None


def check_strings(package: str, scan: Scan, modules: set[str]) -> list[str]:
    """The scan's problems, the handler strings that do not resolve, and names of no module in the package."""
    problems = list(scan.problems)
    for ref in scan.refs:
        if ref.attr is not None:
            why = resolve(ref)
            if why is not None:
                problems.append(f"{ref.where()}: {ref.form} {ref.text!r} does not resolve: {why}")
        elif ref.target.startswith(package + ".") and ref.target not in modules and ref.form != "__import__ fromlist":
            problems.append(f"{ref.where()}: {ref.form} {ref.text!r} names no module of {package}")
    return problems


PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def entry_point_refs(package: str, pyproject: Path, scan: Scan) -> None:
    """Adds the ``module:function`` entry points of ``pyproject`` that name ``package`` to ``scan``."""
    if tomllib is None or not pyproject.is_file():
        return
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    groups = {"project.scripts": project.get("scripts", {}), "project.gui-scripts": project.get("gui-scripts", {})}
    groups |= {f"project.entry-points.{g}": table for g, table in project.get("entry-points", {}).items()}
    lines = pyproject.read_text(encoding="utf-8").splitlines()
    for group, table in groups.items():
        for name, value in table.items():
            text = str(value).split("[")[0].strip()  # "module:attr [extra]"
            if not (text == package or text.startswith((package + ".", package + ":"))):
                continue
            line = next((i for i, raw in enumerate(lines, 1) if raw.strip().startswith(f"{name} =")), 0)
            if not _SPEC.match(text):
                where = f"{_shown(pyproject)}:{line}"
                scan.problems.append(f"{where}: {group} {name!r} = {text!r} is not 'module:function'")
                continue
            module, _, attr = text.partition(":")
            scan.refs.append(StringRef(package, module, pyproject, line, f"{group} {name!r}", text, attr))


def main(argv: list[str]) -> int:
    """Prints every cycle with the imports that form it, and every bad string; returns 1 if there is one."""
    package = argv[0] if argv else "langchain_graphrag_milvus"
    imports = grimp.build_graph(package, cache_dir=None)
    graph = {m: set(imports.find_modules_directly_imported_by(m)) for m in imports.modules}
    scan = string_refs(package)
    entry_point_refs(package, Path(argv[1]) if len(argv) > 1 else PYPROJECT, scan)
    by_name: dict[tuple[str, str], list[StringRef]] = {}
    for ref in scan.refs:
        if ref.target in graph and ref.target != ref.importer and ref.path.suffix == ".py":
            graph[ref.importer].add(ref.target)
            by_name.setdefault((ref.importer, ref.target), []).append(ref)
    cycles = strongly_connected(graph)
    for component in cycles:
        members = set(component)
        print(f"import cycle among {len(component)} modules:")
        for importer in component:
            for imported in sorted(graph[importer] & members):
                details = imports.get_import_details(importer=importer, imported=imported)
                lines = [str(d["line_number"]) for d in details]
                lines += [f"{r.line} by name: {r.form} {r.text!r}" for r in by_name.get((importer, imported), [])]
                print(f"  {importer} -> {imported} (l.{', '.join(lines)})")
    problems = check_strings(package, scan, set(graph))
    for problem in problems:
        print(problem)
    if cycles:
        print(f"{len(cycles)} import cycle(s) in {package}")
    if problems:
        print(f"{len(problems)} unresolved name(s) in {package}")
    if cycles or problems:
        return 1
    print(f"no import cycle in {package} ({len(graph)} modules); {len(by_name)} edge(s) by name, all resolved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
