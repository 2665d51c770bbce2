"""Ingestion: records in, rows and graph changes out.

``records`` and ``identity`` validate what comes in; ``triplets`` (LLM) and ``offline``
(spaCy) extract triplets; ``load`` feeds chunks of records to ``chunk`` (plan what to
write, then write it); ``updates`` replaces and deletes by source; ``merge`` and
``existing_index`` rewrite entities and relations of a store that already exists.
"""
