"""The data model of :mod:`langchain_graphrag_milvus.subgraph`: nodes, edges and their exports.

Pure data (JSON, networkx/GraphML, a self-contained HTML page), so that the subgraph
builders of :mod:`~langchain_graphrag_milvus.retrieval.explain` and the public module
:mod:`langchain_graphrag_milvus.subgraph` (which re-exports these names) share it.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Subgraph", "SubgraphNode", "SubgraphEdge", "NodeKind", "EdgeKind"]

NodeKind = Literal["query_entity", "entity", "relation", "passage"]
EdgeKind = Literal["match", "subject", "object", "expands", "supports"]
_SCALARS = (str, int, float, bool)
_NOT_XML = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _xml_safe(value: Any) -> Any:
    """A string with the characters XML 1.0 cannot hold escaped (other values as they are)."""
    return _NOT_XML.sub(_xml_escape, value) if isinstance(value, str) else value


@dataclass(frozen=True)
class SubgraphNode:
    """One node: ``id`` is unique across kinds (``"relation:<pk>"``, ``"passage:<id>"``...)."""

    id: str
    label: str
    kind: NodeKind
    hop: int | None = None
    score: float | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SubgraphEdge:
    """One directed edge between two node ids."""

    source: str
    target: str
    kind: EdgeKind
    score: float | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Subgraph:
    """Nodes and edges of (part of) the graph, with the query and settings that produced them.

    Attributes:
        nodes: The nodes (kinds: see :mod:`langchain_graphrag_milvus.subgraph`).
        edges: The edges between them.
        query: The query, or None for a view of the stored graph.
        settings: The settings used (retrieval parameters, caps).
        truncated: True when a cap left nodes out.
    """

    nodes: list[SubgraphNode]
    edges: list[SubgraphEdge]
    query: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False

    def node(self, node_id: str) -> SubgraphNode:
        """The node with this id (``KeyError`` if absent)."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict: ``query``, ``settings``, ``truncated``, ``nodes``, ``edges``."""
        return {
            "query": self.query,
            "settings": _jsonable(self.settings),
            "truncated": self.truncated,
            "nodes": [
                {
                    "id": n.id,
                    "label": n.label,
                    "kind": n.kind,
                    "hop": n.hop,
                    "score": n.score,
                    "data": _jsonable(n.data),
                }
                for n in self.nodes
            ],
            "edges": [
                {"source": e.source, "target": e.target, "kind": e.kind, "score": e.score, "data": _jsonable(e.data)}
                for e in self.edges
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Subgraph:
        """The subgraph :meth:`to_json` wrote (e.g. read back from a file).

        Raises:
            ValueError: ``data`` lacks ``nodes`` or ``edges``, or a node or edge lacks a field.
        """
        try:
            nodes = [
                SubgraphNode(
                    str(n["id"]), str(n["label"]), n["kind"], n.get("hop"), n.get("score"), dict(n.get("data") or {})
                )
                for n in data["nodes"]
            ]
            edges = [
                SubgraphEdge(str(e["source"]), str(e["target"]), e["kind"], e.get("score"), dict(e.get("data") or {}))
                for e in data["edges"]
            ]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a subgraph JSON document: {exc!r}") from exc
        return cls(nodes, edges, data.get("query"), dict(data.get("settings") or {}), bool(data.get("truncated")))

    def to_networkx(self) -> nx.DiGraph:
        """A ``networkx.DiGraph`` with ``label``/``kind``/``hop``/``score`` and the data as attributes.

        Needs ``networkx`` (``pip install "langchain-graphrag-milvus[graph]"``). Attributes
        that are None are left out; lists and dicts are stored as JSON strings, so the graph
        can be written as GraphML as is. A second edge between the same two nodes is dropped.

        Raises:
            ImportError: networkx is not installed.
        """
        try:
            import networkx as nx
        except ImportError as exc:  # pragma: no cover - the test extra installs it
            raise ImportError('to_networkx needs networkx: pip install "langchain-graphrag-milvus[graph]"') from exc
        graph = nx.DiGraph(query=self.query or "", settings=json.dumps(_jsonable(self.settings), sort_keys=True))
        for n in self.nodes:
            graph.add_node(
                n.id, **_attributes({"label": n.label, "kind": n.kind, "hop": n.hop, "score": n.score}, n.data)
            )
        for e in self.edges:
            if not graph.has_edge(e.source, e.target):
                graph.add_edge(e.source, e.target, **_attributes({"kind": e.kind, "score": e.score}, e.data))
        return graph

    def write_graphml(self, path: str | os.PathLike[str]) -> None:
        r"""Write :meth:`to_networkx` as GraphML (loads in networkx, Gephi, yEd, Cytoscape).

        The file is always well-formed XML 1.0: characters XML cannot hold (control
        characters other than tab and newline, carriage returns, lone surrogates,
        U+FFFE/U+FFFF) are written as ``\x1b`` / ``\udc80`` escapes in node ids and in
        every text attribute.
        """
        import networkx as nx

        graph = self.to_networkx()
        safe = nx.relabel_nodes(graph, {n: _xml_safe(n) for n in graph.nodes}, copy=True)
        for attrs in [safe.graph, *(d for _, d in safe.nodes(data=True)), *(d for *_, d in safe.edges(data=True))]:
            cleaned = {_xml_safe(k): _xml_safe(v) for k, v in attrs.items()}
            attrs.clear()
            attrs.update(cleaned)
        nx.write_graphml(safe, os.fspath(path))

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to a UTF-8 file."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, ensure_ascii=False, indent=1)

    def to_html(self, title: str | None = None) -> str:
        """A self-contained HTML page drawing this subgraph (inline SVG/CSS/JS, no network).

        With a query, nodes are laid out in columns: query entities, matched entities, the
        relations of each hop, the passages returned; each node shows its score. Without
        one (the stored graph), a force-directed layout. Every text goes into the page as
        escaped JSON and is drawn with ``textContent``: no stored text becomes markup.

        Args:
            title: Page title (default: the query, or "Graph").
        """
        template = resources.files("langchain_graphrag_milvus").joinpath("templates/subgraph.html").read_text("utf-8")
        page_title = title if title is not None else (self.query or "Graph")
        return template.replace("__TITLE__", html.escape(page_title)).replace("/*__DATA__*/null", _script_json(self))

    def write_html(self, path: str | os.PathLike[str], title: str | None = None) -> None:
        """Write :meth:`to_html` to a UTF-8 file."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html(title))


def _script_json(graph: Subgraph) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no HTML comment, no U+2028)."""
    text = json.dumps(graph.to_json(), ensure_ascii=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, _SCALARS):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _jsonable(value.item())
    return str(value)


def _attributes(base: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in {**{k: v for k, v in data.items() if k not in base}, **base}.items():
        value = _jsonable(value)
        if value is None:
            continue
        out[key] = value if isinstance(value, _SCALARS) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return out
