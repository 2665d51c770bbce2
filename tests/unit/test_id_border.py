"""One border for ids: the package changes an id's form (hex id ↔ uint64 key ↔ graph row) only in ``graph/ids.py``.

:func:`id_conversions` reads a module's syntax tree and names every place that converts by hand
instead of calling the border (:mod:`langchain_graphrag_milvus.graph.ids`):

* ``int-hex``: ``int(x, 16)`` (an id parsed to its key);
* ``hex-format``: ``format(k, "016x")``, ``f"{k:016x}"``, ``"%016x" % k``, ``"{:x}".format(k)``, ``hex(k)``
  (a key written as an id);
* ``key-index``: a row of a graph id map read by hand, ``<...>.entities.keys[...]`` or
  ``<...>.relations.keys[...]`` (the border has ``ids_at`` / ``keys_at``); ``graph/`` itself, the core
  that works in rows and keys, is exempt;
* ``key-search``: ``np.searchsorted`` / ``bisect`` over an array of keys (the border has ``find_keys``
  / ``row_of_key``);
* ``id-chain``: ``<map>.find(...)`` / ``.lookup(...)`` of an id map fed with keys parsed from ids in
  place (the border has ``find_ids`` / ``lookup_ids``);
* ``per-id``: the scalar ``id_to_key`` / ``key_to_id`` called once per element in a comprehension
  (the border has the vectorised ``ids_to_keys`` / ``keys_to_ids``).

The package holds none (``test_no_id_conversion_outside_the_border``); each rule is shown to catch a
planted conversion, so the check can fail.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph import ids
from langchain_graphrag_milvus.text import names
from langchain_graphrag_milvus.text.name_map import NameMap

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "langchain_graphrag_milvus"
BORDER = "langchain_graphrag_milvus/graph/ids.py"
CORE = "langchain_graphrag_milvus/graph/"

_SCALAR = {"id_to_key", "key_to_id"}
_PARSE = {"id_to_key", "ids_to_keys"}
# a number written in hex with no width or a width of 9 or more digits (a 64-bit key; ``:02x``
# and ``:04x`` escape characters)
_HEX_SPEC = re.compile(r"^[-#0 +<>=^]*(?:[1-9]\d+|9)?[xX]$")
_PERCENT_HEX = re.compile(r"%[-#0 +]*(?:[1-9]\d+|9)?[xX]")
_BRACE_HEX = re.compile(r"\{[^{}:]*:[-#0 +<>=^]*(?:[1-9]\d+|9)?[xX]\}")


def _name(node: ast.AST) -> str | None:
    """``f`` for ``f(...)`` and ``mod.f(...)``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_id_map_keys(node: ast.AST) -> bool:
    """``<...>.entities.keys`` or ``<...>.relations.keys``."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "keys"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr in {"entities", "relations"}
    )


def _calls(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Call) and _name(n.func) in names for n in ast.walk(node))


def _const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_rule(node: ast.Call) -> str | None:
    name = _name(node.func)
    args = node.args
    if name == "int" and isinstance(node.func, ast.Name):
        base = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "base"), None)
        if isinstance(base, ast.Constant) and base.value == 16:
            return "int-hex"
    if name == "format" and isinstance(node.func, ast.Name) and len(args) > 1:
        spec = _const_str(args[1])
        if spec is not None and _HEX_SPEC.search(spec):
            return "hex-format"
    if name == "hex" and isinstance(node.func, ast.Name):
        return "hex-format"
    if name == "format" and isinstance(node.func, ast.Attribute):
        text = _const_str(node.func.value)
        if text is not None and _BRACE_HEX.search(text):
            return "hex-format"
    if name in {"searchsorted", "bisect", "bisect_left", "bisect_right"} and args:
        if isinstance(args[0], ast.Attribute) and "key" in args[0].attr.lower():
            return "key-search"
    if name in {"find", "lookup"} and isinstance(node.func, ast.Attribute) and args:
        if isinstance(node.func.value, ast.Attribute) and node.func.value.attr in {"entities", "relations"}:
            if _calls(args[0], _PARSE):
                return "id-chain"
    return None


def id_conversions(source: str, path: str = "<string>") -> list[str]:
    """``path:line rule`` for every id conversion made by hand in ``source`` (see the module docstring)."""
    if path == BORDER:
        return []
    core = path.startswith(CORE)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        rule: str | None = None
        if isinstance(node, ast.Call):
            rule = _call_rule(node)
        elif isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):  # f"{k:016x}"
            spec = "".join(_const_str(v) or "" for v in node.format_spec.values)
            rule = "hex-format" if _HEX_SPEC.search(spec) else None
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            text = _const_str(node.left)
            rule = "hex-format" if text is not None and _PERCENT_HEX.search(text) else None
        elif isinstance(node, ast.Subscript) and _is_id_map_keys(node.value) and not core:
            rule = "key-index"
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            element = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            rule = "per-id" if any(_calls(e, _SCALAR) for e in element) else None
        if rule is not None:
            found.append((getattr(node, "lineno", 0), rule))
    return [f"{path}:{line} {rule}" for line, rule in sorted(set(found))]


def package_id_conversions() -> list[str]:
    """Every hand-made id conversion in the package, as ``file:line rule``."""
    out: list[str] = []
    for file in sorted(PACKAGE.rglob("*.py")):
        rel = file.relative_to(ROOT).as_posix()
        out += id_conversions(file.read_text(encoding="utf-8"), rel)
    return out


def test_no_id_conversion_outside_the_border() -> None:
    found = package_id_conversions()
    assert found == [], f"{len(found)} id conversion(s) outside graph/ids.py:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("k = int(node_id, 16)\n", "int-hex"),
        ("k = int(node_id, base=16)\n", "int-hex"),
        ("i = format(k, '016x')\n", "hex-format"),
        ("i = f'{k:016x}'\n", "hex-format"),
        ("i = '%016x' % k\n", "hex-format"),
        ("i = '{:016x}'.format(k)\n", "hex-format"),
        ("i = hex(k)\n", "hex-format"),
        ("ks = graph.relations.keys[rows]\n", "key-index"),
        ("e = g.entities.keys[np.flatnonzero(mask)].tolist()\n", "key-index"),
        ("at = np.searchsorted(self._keys, query)\n", "key-search"),
        ("j = bisect.bisect_left(self.sorted_keys, key)\n", "key-search"),
        ("i = f'{k:x}'\n", "hex-format"),
        ("rows = graph.entities.find(ids_to_keys(ids))\n", "id-chain"),
        ("rows = graph.entities.find(np.array([id_to_key(i) for i in ids]))\n", "id-chain"),
        ("ids = [key_to_id(k) for k in keys.tolist()]\n", "per-id"),
        ("keys = np.fromiter((id_to_key(r['pk']) for r in rows), np.uint64)\n", "per-id"),
        ("d = {key_to_id(k): h for k, h in pairs}\n", "per-id"),
    ],
)
def test_the_check_finds_a_planted_conversion(source: str, rule: str) -> None:
    found = id_conversions("import numpy as np\n" + source, "langchain_graphrag_milvus/milvus/planted.py")
    assert f"langchain_graphrag_milvus/milvus/planted.py:2 {rule}" in found, found


@pytest.mark.parametrize(
    "source",
    [
        "ids = graph.entities.ids_at(rows)\n",
        "rows = graph.entities.find_ids(ids)\n",
        "keys = ids_to_keys([r['pk'] for r in rows])\n",
        "n = int(text, 10)\n",
        "h = hashlib.blake2b(b'x').hexdigest()\n",
        "s = f'{score:.3f} {count:04d}'\n",
        "pos = np.searchsorted(reached, rels)\n",
        "pos = np.searchsorted(keys, idx)\n",
        "e = f'\\\\x{code:02x}' + f'\\\\u{code:04x}' + '%02x' % b + '{:04x}'.format(c)\n",
        "rows = graph.relations.find(keys)\n",
        "text = '%d items' % n\n",
    ],
)
def test_the_check_leaves_border_calls_and_other_numbers_alone(source: str) -> None:
    assert id_conversions(source, "langchain_graphrag_milvus/milvus/fine.py") == []


def test_the_border_and_the_core_are_exempt() -> None:
    assert id_conversions("k = int(i, 16)\n", BORDER) == []
    assert id_conversions("ks = g.relations.keys[rows]\n", "langchain_graphrag_milvus/graph/update.py") == []
    assert id_conversions("k = int(i, 16)\n", "langchain_graphrag_milvus/graph/update.py") != []


# ---------------------------------------------------------------------------- the border itself

_KEYS = st.lists(st.integers(0, 2**64 - 1), max_size=300)


@given(_KEYS)
def test_vectorised_conversions_equal_the_scalar_ones(keys: list[int]) -> None:
    """Short and long lists (the array paths start at 64 ids, 128 keys) give what ``format`` / ``int(x, 16)`` give."""
    as_ids = [format(k, "016x") for k in keys]
    assert ids.keys_to_ids(keys) == as_ids == [ids.key_to_id(k) for k in keys]
    assert ids.ids_to_keys(as_ids).tolist() == keys == [ids.id_to_key(i) for i in as_ids]
    canonical = ids.canonical_keys(as_ids)
    assert canonical is not None and canonical.tolist() == keys


@given(st.lists(st.text(max_size=18), min_size=1, max_size=40))
def test_canonical_keys_take_only_the_package_spelling(texts: list[str]) -> None:
    ours = [len(t) == 16 and all(c in "0123456789abcdef" for c in t) for t in texts]
    found = ids.canonical_keys(texts)
    assert (found is not None) == all(ours)
    assert [ids.canonical_key(t) for t in texts] == [int(t, 16) if ok else None for t, ok in zip(texts, ours)]


@pytest.mark.parametrize("n", [1, 40])
def test_ids_to_keys_reads_other_spellings_like_int(n: int) -> None:
    """Other spellings than the package's (upper case, ``0x``) still parse as ``int(x, 16)`` did; garbage raises."""
    spelled = ["00000000000000FF", "0xff", " ff ", "f_f"] * n
    assert ids.ids_to_keys(spelled).tolist() == [255] * (4 * n)
    assert ids.canonical_keys(spelled) is None
    with pytest.raises(ValueError):
        ids.ids_to_keys(["00000000000000ff"] * n + ["not hex"])
    with pytest.raises(OverflowError):
        ids.ids_to_keys(["1" + "0" * 16] * n)


def test_find_keys_and_row_of_key_agree() -> None:
    keys = np.array([30, 10, 20], np.uint64)
    order = np.argsort(keys)
    assert ids.find_keys(keys, [20, 5, 30, 10], order).tolist() == [2, -1, 0, 1]
    assert [ids.row_of_key(keys, k, order) for k in (20, 5)] == [2, None]
    ordered = np.sort(keys)
    view = ordered.data
    assert [ids.row_of_key(ordered, k, None, view) for k in (10, 20, 30, 31)] == [0, 1, 2, None]
    assert ids.find_keys(np.empty(0, np.uint64), [1]).tolist() == [-1]


def test_key_map_keys_at_takes_lists_masks_and_nothing() -> None:
    m = ids.KeyMap.from_keys([7, 8, 9])
    assert m.keys_at([2, 0]).tolist() == [9, 7] and m.keys_at([]).size == 0
    assert m.ids_at([]) == [] and m.keys_at(np.array([True, False, True])).tolist() == [7, 9]


def test_name_map_converts_through_the_border() -> None:
    many = {format(k, "016x"): f"e{k}" for k in range(100, 0, -1)}
    nm = NameMap.from_mapping(many)
    assert nm.compact and list(nm) == list(many) and nm["0000000000000005"] == "e5"
    assert nm.row("000000000000000A") is None and "0x5" not in nm
    assert nm.rows_of_keys([5, 1000]).tolist() == [95, -1]
    plain = NameMap.from_mapping({"x": "X", "0000000000000005": "five"})
    assert not plain.compact and plain.rows_of_keys([5, 6]).tolist() == [1, -1]


def test_the_codec_left_text_names_with_a_deprecation() -> None:
    with pytest.warns(DeprecationWarning, match="graph.ids.key_to_id"):
        moved = names.key_to_id
    assert moved is ids.key_to_id
    with pytest.warns(DeprecationWarning, match="graph.ids.id_to_key"):
        assert names.id_to_key("00000000000000ff") == 255
    with pytest.raises(AttributeError):
        names.no_such_name  # noqa: B018
