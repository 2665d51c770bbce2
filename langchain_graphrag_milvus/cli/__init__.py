"""The command line (``langchain-graphrag-milvus``) and the evaluation it runs.

Nothing in the package imports this folder; ``main`` parses arguments and imports the
command it runs on first use, so ``--help`` stays fast.
"""
