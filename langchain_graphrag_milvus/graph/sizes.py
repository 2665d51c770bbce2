"""True sizes of in-memory structures: Python objects counted one by one, arrays by their buffers (numpy only).

``nbytes`` of a :class:`~.data.GraphData` counts its arrays only; a store also keeps entity
names (a dict of strings), a name table (lists of strings), a linker (dicts, sets and arrays)
and tenant views. :class:`Sizer` walks such structures and adds up:

* every Python object once (``sys.getsizeof``: the object's header and its own storage, e.g. a
  dict's hash table or a list's pointer array), then the objects it holds — container items,
  dict keys and values, instance ``__dict__`` and ``__slots__`` values;
* a numpy array's buffer once per buffer: an array that owns its data counts ``nbytes``, a view
  counts its header and then its base; a buffer mapped from a file (``np.memmap``,
  :class:`mmap.mmap`) is counted apart as *mapped* bytes (the OS pages it in and out; it is not
  heap memory).

Objects are counted once per :class:`Sizer` (by ``id``), so a string shared by two structures
is counted for the first one that is measured: measure the structures in the order you want
to attribute shared objects. Classes, functions, modules and other code objects are not
walked (they are not data of the structure).

Example:
    >>> s = Sizer()
    >>> names = {"e1": "Leonhard Euler"}
    >>> s.size(names) > sys.getsizeof(names)
    True
    >>> s.size(names)  # already counted
    0
"""

from __future__ import annotations

import mmap
import sys
import types
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["Sizer"]

# Types whose instances are not data of a structure (code, classes, modules).
_SKIP = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
)
_ATOMS = (str, bytes, int, float, complex, bool, type(None))


class Sizer:
    """Counts the bytes of objects, each object (and array buffer) once.

    Attributes:
        mapped: Bytes of array buffers mapped from files seen so far (not in the totals).
    """

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._keep: list[Any] = []  # keeps counted objects alive so their ids are not reused
        self.mapped = 0

    def size(self, *objects: Any, stop: tuple[Any, ...] = ()) -> int:
        """Bytes of these objects and all they hold that this sizer has not counted yet.

        Args:
            objects: What to count.
            stop: Objects held by ``objects`` not to count (nor walk) in this call, e.g. a part
                measured as an item of its own; they stay uncounted.
        """
        total = 0
        stops = {id(o) for o in stop if o is not None}
        stack = list(objects)
        while stack:
            obj = stack.pop()
            if obj is None or isinstance(obj, _SKIP) or id(obj) in self._seen or id(obj) in stops:
                continue
            self._seen.add(id(obj))
            self._keep.append(obj)
            if isinstance(obj, np.ndarray):
                total += self._array(obj, stack)
                continue
            total += sys.getsizeof(obj)
            if not isinstance(obj, _ATOMS):
                stack.extend(_children(obj))
        return total

    def _array(self, arr: np.ndarray[Any, Any], stack: list[Any]) -> int:
        header = sys.getsizeof(arr) - (arr.nbytes if arr.base is None and arr.flags.owndata else 0)
        base = arr.base
        root = base
        while isinstance(root, np.ndarray):
            root = root.base
        if isinstance(root, mmap.mmap):  # a file's pages, not heap memory: counted apart, once per mapping
            if id(root) not in self._seen:
                self._seen.add(id(root))
                self._keep.append(root)
                self.mapped += len(root)
            return header
        if base is None:
            return header + int(arr.nbytes)
        stack.append(base)  # the buffer is the base's: counted once, with it
        return header


def _children(obj: Any) -> Iterator[Any]:
    """The objects ``obj`` holds: items, keys and values, attributes."""
    if isinstance(obj, dict):
        yield from obj.keys()
        yield from obj.values()
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        yield from obj
        return
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        yield attrs
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__"):
                yield getattr(obj, slot, None)
