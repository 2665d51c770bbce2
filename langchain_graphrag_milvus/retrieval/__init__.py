"""Retrieval: from a query to ranked passages or linearised paths, written once.

``params`` holds every per-call setting with its default, description and validation rule
(the retrievers' fields derive from it; ``settings`` declares them, ``rankings`` holds the
ranking values that own their settings, ``walk_params`` the walk's constants, ``defaults`` the
``k`` defaults); the pipelines (``graph_pipeline``,
``path_pipeline``) are generators that ask for I/O through the typed requests of
``effects`` and are run by the sync or async executor of ``executors`` against any store
with the reads of ``store_api.RetrievalStore``; ``stages`` and ``walk_ranking`` score
(``ranking``: helpers they share); ``query_entities`` finds the query's entities; ``rerank`` is
the LLM reranker; ``linearize`` turns paths into text; ``explain`` builds a query's subgraph
(data model: ``subgraph_model``).
"""
