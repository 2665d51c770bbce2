"""Loaded by Python children of a unit test (via PYTHONPATH): installs the no-Milvus guard there too."""

import os

if os.environ.get("UNIT_NO_MILVUS_LOG"):
    import no_milvus_guard

    no_milvus_guard.install_in_child(os.environ["UNIT_NO_MILVUS_LOG"])
