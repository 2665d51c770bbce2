"""Text rules shared by every layer, standard library only.

``names`` normalises entity names and derives entity and relation ids from them; ``tokens``
is the one tokenizer (word splitting, casefolding, the named stopword sets, light stemming)
that the ranking, the entity linker and the path linearisation share.
"""
