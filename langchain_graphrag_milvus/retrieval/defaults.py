"""The ``k`` defaults every caller shares, in a module that imports nothing.

:mod:`.params` declares the retrievers' ``k`` with these, and the command line reads them for
its ``-k`` help without importing the retrieval stack (``--help`` stays light). The command
line and the server pass ``k`` only when it is given, so each retriever applies its own default.
"""

__all__ = ["PASSAGES_K", "PATHS_K", "K_BY_MODE", "TOOL_MAX_K"]

#: Passages the graph and the naive retriever return (their ``k``).
PASSAGES_K = 4
#: Paths the path retriever returns (its ``k``).
PATHS_K = 10
#: The ``k`` of each command-line ``--mode``.
K_BY_MODE = {"graph": PASSAGES_K, "naive": PASSAGES_K, "paths": PATHS_K}
#: The largest ``k`` an agent tool accepts (``create_graph_retriever_tool``, ``as_tool``).
TOOL_MAX_K = 20
