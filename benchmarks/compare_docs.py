"""Whether two ``scale_worker.py query --dump-docs`` dumps hold the same Documents, question by question.

``python benchmarks/compare_docs.py A.json B.json``: for each graph query (in order), the same ids in the
same order, the same text, the same metadata keys and non-float values; the largest difference of a float
value (a score scored in the client against Milvus' own). Exit status 1 if any question differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def compare(a: list[Any], b: list[Any]) -> dict[str, Any]:
    """Counts of questions with other ids or order, other text or metadata, and the largest float difference."""
    out: dict[str, Any] = {"questions": len(a), "other_ids": 0, "other_fields": 0, "max_float_diff": 0.0}
    if len(a) != len(b) or any(qa != qb for (qa, _), (qb, _) in zip(a, b)):
        raise ValueError("the dumps hold other questions")
    for (_, da), (_, db) in zip(a, b):
        if [d[0] for d in da] != [d[0] for d in db]:
            out["other_ids"] += 1
            continue
        other = False
        for (_, ta, ma), (_, tb, mb) in zip(da, db):
            other |= ta != tb or ma.keys() != mb.keys()
            for key, value in ma.items():
                if isinstance(value, float) and isinstance(mb.get(key), float):
                    out["max_float_diff"] = max(out["max_float_diff"], abs(value - mb[key]))
                elif value != mb.get(key):
                    other = True
        out["other_fields"] += other
    return out


def main(argv: list[str] | None = None) -> int:
    first, second = (json.loads(Path(p).read_text()) for p in (argv or sys.argv[1:])[:2])
    result = compare(first["docs"], second["docs"])
    print(json.dumps(result))
    return 1 if result["other_ids"] or result["other_fields"] else 0


if __name__ == "__main__":
    sys.exit(main())
