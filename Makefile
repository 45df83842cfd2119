# tkbench: every target installs what is missing first (a .venv with the package and its dev extras).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2
CONFIG ?= configs/smoke.yaml
# results go to results/<config file name>, whatever the config's `name:` says
NAME    = $(basename $(notdir $(CONFIG)))

.PHONY: install run test bench lint smoke-check peers-check report reproduce-report clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/tkbench compile
	@touch $(STAMP)

install: $(STAMP)

## run a real config (default: the smoke config on real UCI data) and render its report
run: install
	$(BIN)/tkbench run $(CONFIG) -j $(JOBS) --out results/$(NAME)
	$(BIN)/tkbench report results/$(NAME)

## the test suite (what CI runs); benchmarks are excluded. TEST_WORKERS pytest-xdist processes (CI's two cores)
TEST_WORKERS ?= 2
test: install
	$(BIN)/python -m pytest -m "not benchmark" -p no:cacheprovider -n $(TEST_WORKERS) --durations=15

## the smoke run gated against its committed baseline (CI runs this after the tests)
smoke-check: install
	$(BIN)/tkbench run configs/smoke.yaml -j $(JOBS) --no-progress
	$(BIN)/tkbench check results/smoke --baseline results/baselines/smoke.json
	$(BIN)/tkbench run configs/smoke_tk.yaml -j $(JOBS) --no-progress
	$(BIN)/tkbench check results/smoke_tk --baseline results/baselines/smoke_tk.json
	$(BIN)/tkbench run configs/smoke_nkrr.yaml -j $(JOBS) --no-progress
	$(BIN)/tkbench check results/smoke_nkrr --baseline results/baselines/smoke_nkrr.json
	$(BIN)/tkbench run configs/smoke_sikl.yaml -j $(JOBS) --no-progress
	$(BIN)/tkbench check results/smoke_sikl --baseline results/baselines/smoke_sikl.json
	$(BIN)/tkbench run configs/smoke_hgk.yaml -j $(JOBS) --no-progress
	$(BIN)/tkbench check results/smoke_hgk --baseline results/baselines/smoke_hgk.json

## the peers' adapters (issue 51; the optional extra, never required by the rest): install '.[peers]' (torch's CPU
## wheel, TORCH, unless a torch is already there), run their tests, which fail here instead of skipping, and the
## peers' smoke run against its baseline. CI runs this after smoke-check.
TORCH ?= 2.13.0
PEERS_STAMP := $(VENV)/.peers-installed
$(PEERS_STAMP): $(STAMP)
	@if $(BIN)/python -c "import torch" 2>/dev/null; then pin=; else pin='torch==$(TORCH)'; fi; \
	  echo "installing the peers extra $$pin"; $(BIN)/python -m pip install --quiet -e '.[dev,peers]' $$pin
	@touch $(PEERS_STAMP)

peers-check: $(PEERS_STAMP)
	TKBENCH_REQUIRE_PEERS=1 $(BIN)/python -m pytest tests/methods/peers -p no:cacheprovider -q
	$(BIN)/tkbench run configs/smoke_peers.yaml -j $(JOBS) --no-progress
	$(BIN)/tkbench check results/smoke_peers --baseline results/baselines/smoke_peers.json

## benchmarks: configs/bench_*.yaml (speed and memory studies, not tests)
bench: install
	@set -e; for c in configs/bench_*.yaml; do \
	  [ -e "$$c" ] || { echo "no configs/bench_*.yaml yet"; break; }; \
	  n=$$(basename $$c .yaml); $(BIN)/tkbench run $$c -j 1 && $(BIN)/tkbench report results/$$n; done
	$(BIN)/python -m pytest -m benchmark -p no:cacheprovider || test $$? -eq 5

lint: install
	$(BIN)/ruff check tkbench tests

report: install
	$(BIN)/tkbench report results/$(NAME)

## docs/REPRODUCTION.md and .html from the committed rows of every paper reproduction (no re-running)
reproduce-report: install
	$(BIN)/tkbench report --all

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
