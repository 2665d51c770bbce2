"""Everything that speaks to Milvus: schema, the one escaping path, connection, reads, writes, graph cache.

``schema`` declares the collections; ``expr`` is the only way text becomes a Milvus
expression (``filters`` reports bad user filters); ``connection`` holds the clients and
opens or creates the collections (``existing``: passages in a user's collection); ``reads``
searches and fetches through a row layout; ``writes`` inserts, upserts and deletes
(``StoreParts``: what a writer is given); ``graph_cache`` keeps the in-memory graph in step
with the collections (typed ``GraphDelta``); ``vectors`` checks embeddings before they are
written or searched; ``lite`` handles Milvus Lite paths and its embedded server.
"""
