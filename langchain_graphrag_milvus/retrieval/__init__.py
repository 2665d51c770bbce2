"""Retrieval: from a query to ranked passages or linearised paths, written once.

``params`` holds every per-call setting and its default; the pipelines
(``graph_pipeline``, ``path_pipeline``) are generators that ask for I/O through
``effects`` and are run by a sync or an async executor; ``stages``, ``ranking`` and
``walk_ranking`` score; ``query_entities`` finds the query's entities; ``rerank`` is the LLM
reranker; ``linearize`` turns paths into text; ``explain`` builds a query's subgraph.
"""
