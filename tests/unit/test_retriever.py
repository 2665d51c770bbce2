"""MilvusGraphRetriever on Milvus Lite with fake models: the seed example, fallbacks, k, traces."""

from __future__ import annotations

from langchain_graphrag_milvus import MilvusGraphRetriever, NaivePassageRetriever
from langchain_graphrag_milvus.datasets import nano_dataset

# the seed LLM's reasoning: Euler's teacher was Johann Bernoulli, his son is Daniel, who
# made contributions to fluid dynamics: relations about Euler and Johann, then Daniel's
SEED_CHOICE = [
    r"Euler.*Johann|Johann.*Euler",
    r"Daniel Bernoulli was the son of",
    r"Daniel Bernoulli made major contributions",
]
EULER = nano_dataset()[3]["passage"]
DANIEL = nano_dataset()[2]["passage"]


def test_public_api_docstrings_show_usage() -> None:
    from langchain_graphrag_milvus import MilvusPathRetriever

    for obj in (MilvusGraphRetriever, NaivePassageRetriever, MilvusPathRetriever):
        assert "invoke(" in (obj.__doc__ or "")
