"""Ingestion: records in, rows and graph changes out.

``records`` and ``identity`` validate what comes in; ``triplets`` (LLM) and ``offline``
(spaCy) extract triplets; ``context`` is what a write is given (the store's parts and
settings, never the store); ``store_writes`` is the store's write side; ``load`` feeds
chunks of records to ``chunk`` (the I/O), which asks ``plan`` (pure: what to write, given
the stored rows) and reports in ``report``; ``updates`` replaces and deletes by source
(validated first by ``upsert_plan``); ``merge`` and ``existing_index`` rewrite entities and
relations of a store that already exists.
"""
