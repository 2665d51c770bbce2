"""Everything that speaks to Milvus: schema, the one escaping path, reads, writes.

``schema`` declares the collections; ``expr`` is the only way text becomes a Milvus
expression (``filters`` reports bad user filters); ``reads`` searches and fetches;
``writes`` inserts, upserts and deletes; ``graph_cache`` keeps the in-memory graph in step
with the collections; ``vectors`` checks embeddings before they are written or searched.
"""
