"""Inputs used by both halves of a split test file (``tests/unit`` and ``tests/integration``)."""

from __future__ import annotations

import json

#: Ids that would break a Milvus expression built by string pasting, and the longest valid id.
HOSTILE_IDS = [
    "x'] or pk != '' or pk in ['z",
    'x"] or pk != "" or pk in ["z',
    "O'Brien report",
    "back\\slash\\",
    '\\"',
    "new\nline\r\ttab",
    "é日本🎉 [brackets] (parens) and or not",
    "e" * 512,
]

# Answers of a triplet-extraction model: clean JSON, JSON in a chatty fenced reply, JSON cut off
# mid-way, and triples of which only the first is well formed.
GOOD = json.dumps(
    {"named_entities": ["Ada Lovelace", "London"], "triples": [["Ada Lovelace", "was born in", "London"]]}
)
FENCED = (
    'Here you go!\n```json\n{"named_entities": ["Babbage"], '
    '"triples": [["Babbage", "designed", "the Analytical Engine"]]}\n```\nAnything else?'
)
TRUNCATED = '{"named_entities": ["Byron"], "triples": [["Byron", "was the father of", "Ada Lovelace"], ["Byron", "wro'
MIXED = json.dumps({"triples": [["Mary", "taught", "Ada"], ["only two", "parts"], ["", "empty", "x"], ["a", 1, "b"]]})
