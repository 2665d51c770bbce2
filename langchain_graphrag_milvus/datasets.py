"""The seed notebook's nano dataset: the Bernoulli family and Euler (4 passages).

Example:
    >>> records = nano_dataset()
    >>> len(records), len(records[0]["triplets"])
    (4, 6)
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

__all__ = ["nano_dataset", "write_nano_files", "NANO_QUESTION", "NANO_QUERY_ENTITIES"]

#: The seed's question; its answer needs the Euler passage and Daniel Bernoulli's.
NANO_QUESTION = "What contribution did the son of Euler's teacher make?"
#: The seed's hand-made NER result for that question.
NANO_QUERY_ENTITIES = ["Euler"]

_NANO: list[dict[str, Any]] = [
    {
        "passage": "Jakob Bernoulli (1654–1705): Jakob was one of the earliest members of the Bernoulli family to gain prominence in mathematics. He made significant contributions to calculus, particularly in the development of the theory of probability. He is known for the Bernoulli numbers and the Bernoulli theorem, a precursor to the law of large numbers. He was the older brother of Johann Bernoulli, another influential mathematician, and the two had a complex relationship that involved both collaboration and rivalry.",  # noqa: E501
        "triplets": [
            ["Jakob Bernoulli", "made significant contributions to", "calculus"],
            ["Jakob Bernoulli", "made significant contributions to", "the theory of probability"],
            ["Jakob Bernoulli", "is known for", "the Bernoulli numbers"],
            ["Jakob Bernoulli", "is known for", "the Bernoulli theorem"],
            ["The Bernoulli theorem", "is a precursor to", "the law of large numbers"],
            ["Jakob Bernoulli", "was the older brother of", "Johann Bernoulli"],
        ],
    },
    {
        "passage": "Johann Bernoulli (1667–1748): Johann, Jakob’s younger brother, was also a major figure in the development of calculus. He worked on infinitesimal calculus and was instrumental in spreading the ideas of Leibniz across Europe. Johann also contributed to the calculus of variations and was known for his work on the brachistochrone problem, which is the curve of fastest descent between two points.",  # noqa: E501
        "triplets": [
            ["Johann Bernoulli", "was a major figure of", "the development of calculus"],
            ["Johann Bernoulli", "was", "Jakob's younger brother"],
            ["Johann Bernoulli", "worked on", "infinitesimal calculus"],
            ["Johann Bernoulli", "was instrumental in spreading", "Leibniz's ideas"],
            ["Johann Bernoulli", "contributed to", "the calculus of variations"],
            ["Johann Bernoulli", "was known for", "the brachistochrone problem"],
        ],
    },
    {
        "passage": "Daniel Bernoulli (1700–1782): The son of Johann Bernoulli, Daniel made major contributions to fluid dynamics, probability, and statistics. He is most famous for Bernoulli’s principle, which describes the behavior of fluid flow and is fundamental to the understanding of aerodynamics.",  # noqa: E501
        "triplets": [
            ["Daniel Bernoulli", "was the son of", "Johann Bernoulli"],
            ["Daniel Bernoulli", "made major contributions to", "fluid dynamics"],
            ["Daniel Bernoulli", "made major contributions to", "probability"],
            ["Daniel Bernoulli", "made major contributions to", "statistics"],
            ["Daniel Bernoulli", "is most famous for", "Bernoulli’s principle"],
            ["Bernoulli’s principle", "is fundamental to", "the understanding of aerodynamics"],
        ],
    },
    {
        "passage": "Leonhard Euler (1707–1783) was one of the greatest mathematicians of all time, and his relationship with the Bernoulli family was significant. Euler was born in Basel and was a student of Johann Bernoulli, who recognized his exceptional talent and mentored him in mathematics. Johann Bernoulli’s influence on Euler was profound, and Euler later expanded upon many of the ideas and methods he learned from the Bernoullis.",  # noqa: E501
        "triplets": [
            ["Leonhard Euler", "had a significant relationship with", "the Bernoulli family"],
            ["leonhard Euler", "was born in", "Basel"],
            ["Leonhard Euler", "was a student of", "Johann Bernoulli"],
            ["Johann Bernoulli's influence", "was profound on", "Euler"],
        ],
    },
]


def nano_dataset() -> list[dict[str, Any]]:
    """A fresh copy of the seed's four passages with their triplets."""
    return copy.deepcopy(_NANO)


def write_nano_files(folder: Path) -> dict[str, Path]:
    """Write the four nano passages as four kinds of file, the demo corpus of the command line.

    Jakob's passage becomes ``jakob.txt``, Johann's ``johann.md`` (under a ``#`` heading),
    Daniel's ``people/daniel.html`` (a page with a ``<title>`` and a ``<script>``, both of which
    a loader must keep out of the text) and Euler's ``euler.pdf`` (two pages, written by hand:
    no PDF library needed). The texts are made ASCII (en dash, curly apostrophe), so the PDF's
    standard Helvetica font can show them. The tests of the file loaders and the CLI benchmark
    use this corpus.

    Args:
        folder: where to write; created (with its parents) if missing. Files of the same names
            are overwritten.

    Returns:
        The written files by kind: ``"txt"``, ``"md"``, ``"html"`` and ``"pdf"``.

    Example:
        ``write_nano_files(Path("docs"))`` then ``python -m langchain_graphrag_milvus ingest docs``.
    """
    jakob, johann, daniel, euler = (_ascii(r["passage"]) for r in _NANO)
    (folder / "people").mkdir(parents=True, exist_ok=True)
    files = {
        "txt": folder / "jakob.txt",
        "md": folder / "johann.md",
        "html": folder / "people" / "daniel.html",
        "pdf": folder / "euler.pdf",
    }
    files["txt"].write_text(jakob, encoding="utf-8")
    files["md"].write_text(f"# Johann Bernoulli\n\n{johann}\n", encoding="utf-8")
    files["html"].write_text(
        f"<html><head><title>Daniel</title><script>var x = 1;</script></head><body><p>{daniel}</p></body></html>",
        encoding="utf-8",
    )
    half = euler.index(". ", len(euler) // 2) + 1
    files["pdf"].write_bytes(_minimal_pdf([euler[:half], euler[half:].strip()]))
    return files


def _ascii(text: str) -> str:
    return text.replace("\u2013", "-").replace("\u2019", "'")


def _minimal_pdf(pages: list[str]) -> bytes:
    """A real PDF (one text line per page, Helvetica), written by hand: no PDF library needed."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>")
    font = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 10 Tf 40 720 Td ({escaped}) Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out
