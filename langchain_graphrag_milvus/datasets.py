"""The seed notebook's nano dataset: the Bernoulli family and Euler (4 passages).

Example:
    >>> records = nano_dataset()
    >>> len(records), len(records[0]["triplets"])
    (4, 6)
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["nano_dataset", "NANO_QUESTION", "NANO_QUERY_ENTITIES"]

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
