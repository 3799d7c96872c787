# mindport: `make demo` migrates the bundled example, `make test` runs the suite.
# Both create .venv on first use and reuse it afterwards (re-installed when pyproject.toml changes).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.mindport-installed
JOBS   ?= auto
EXAMPLE := examples/cifar_resnet

.PHONY: setup demo test bench docs clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# torch first and pinned: it takes the CPU build; a looser spec would pull GBs of CUDA wheels.
	$(PY) -m pip install --quiet torch==2.13.0
	# everything: the light core (convert, lint) plus the full extra (torch, MindSpore, ...) and the test tools
	$(PY) -m pip install --quiet -e '.[full,dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	rm -rf build/demo build/demo-torch
	$(PY) $(EXAMPLE)/train.py --steps 20 --save build/demo-torch/model.pt
	# exit 1 = "partial": the last line says what is left and why (still a demo that ran); anything else fails
	$(VENV)/bin/mindport migrate $(EXAMPLE) -o build/demo --weights build/demo-torch/model.pt; \
	  status=$$?; if [ $$status -eq 1 ]; then echo "demo: the migration is partial, see the last line above"; \
	  elif [ $$status -ne 0 ]; then exit $$status; fi

test: setup
	$(PY) -m pytest -n $(JOBS) -q

bench: setup
	for b in benchmarks/*_bench.py; do $(PY) $$b || exit 1; done

docs: setup
	$(PY) -m mindport.docs_gen

clean:
	rm -rf build .pytest_cache
