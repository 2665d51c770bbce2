"""``python -m langchain_graphrag_milvus``: see :mod:`langchain_graphrag_milvus.cli`."""

from langchain_graphrag_milvus.cli import main

raise SystemExit(main())
