"""Text rules shared by every layer: names and ids of entities and relations (``names``)."""
