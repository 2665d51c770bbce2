"""MilvusPathRetriever on Milvus (Lite and server), sync and async: paths as pseudo-documents."""

from __future__ import annotations

EULER_DANIEL = "How is Leonhard Euler related to Daniel Bernoulli?"


# ------------------------------------------------------------------ ordering by similarity
ORDER_RECORDS = [
    {
        "passage": "Anna Berg taught at the Music School.",
        "triplets": [["Anna Berg", "taught music at", "Music School"]],
    },
    {
        "passage": "Otto Lind studied music at the Music School.",
        "triplets": [["Otto Lind", "studied music at", "Music School"]],
    },
    {"passage": "Anna Berg paid taxes at the Tax Office.", "triplets": [["Anna Berg", "paid taxes at", "Tax Office"]]},
    {
        "passage": "Otto Lind filed forms at the Tax Office.",
        "triplets": [["Otto Lind", "filed forms at", "Tax Office"]],
    },
    {"passage": "Anna Berg rode the Green Tram.", "triplets": [["Anna Berg", "rode", "Green Tram"]]},
    {"passage": "Otto Lind rode the Green Tram.", "triplets": [["Otto Lind", "rode", "Green Tram"]]},
]


def test_no_path_is_an_event_not_a_blank_document() -> None:
    from langchain_graphrag_milvus.retrieval.path_pipeline import NO_PATH_EVENT, no_path_event

    event = no_path_event("why", ["A"])
    assert event.name == NO_PATH_EVENT and event.data == {"reason": "why", "entities": ["A"], "pairs": []}
