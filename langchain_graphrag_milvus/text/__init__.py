"""Text rules shared by every layer (standard library, and numpy for the name index).

``names`` normalises entity names and derives entity and relation ids from them; ``tokens``
is the one tokenizer (word splitting, casefolding, the named stopword sets, light stemming)
that the ranking, the entity linker and the path linearisation share. ``name_table`` keeps
entity names with the linker's keys (saved with a graph index); ``name_index`` is the
q-gram index that finds the linker's fuzzy candidates without scanning every name.
"""
