"""``python -m langchain_graphrag_milvus``: see :mod:`langchain_graphrag_milvus.cli.main`."""

from langchain_graphrag_milvus.cli.main import main

raise SystemExit(main())
