# Medina Arena — every target sets up what it needs (virtualenv, generated code) itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.stamp-install
GEN    := server/medina/v1/.stamp-proto
TENSORS := clients/python/medina_envs/.stamp-tensors
PROTOS := $(wildcard proto/medina/v1/*.proto)

.PHONY: setup proto run ladder test lint bench dist lock release-schema clean

setup: $(STAMP) $(GEN) $(TENSORS)

# The dev environment is installed from the lock file, so a fresh machine gets exactly the
# versions CI tested, each checked against the hashes the lock records (pip's hash-checking
# mode: every line carries its hashes); `make lock` re-resolves it after a change to
# pyproject.toml. The checkout itself is installed apart (-e . has no hash), without deps.
$(STAMP): pyproject.toml requirements/dev.lock
	bash tools/ensure_cc.sh $(PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -U pip
	$(BIN)/pip install -q --disable-pip-version-check --require-hashes -r requirements/dev.lock
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The environments' compiled tensors (setup.py; optional: without a C compiler medina_envs
# uses the pure-Python equivalents), rebuilt in place when the source changes.
$(TENSORS): $(STAMP) setup.py clients/python/medina_envs/_tensors.c
	$(PY) setup.py -q build_ext --inplace
	touch $(TENSORS)

lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --no-header -q \
		--generate-hashes -o requirements/dev.lock

# The four distributions (medina-engine, -protocol, -client, -arena), wheel and sdist each.
dist: setup
	$(PY) tools/build_dists.py dist

# Freeze the current schema as the release `buf breaking` compares against (make lint).
release-schema: setup
	bash tools/buflint.sh --release

# Generated protobuf code (server/medina/v1) is never committed or edited by hand.
proto: $(STAMP)
	$(PY) tools/genproto.py
	touch $(GEN)

$(GEN): $(STAMP) $(PROTOS)
	$(PY) tools/genproto.py
	touch $(GEN)

# The demo: a server and four bot processes (two greedy, two random) over gRPC on 127.0.0.1.
run: setup
	$(PY) -m medina.cli match --ruleset medina-v2 --players 4 --seed $${SEED:-1} \
		--http $${HTTP_PORT:-0} --linger-s $${LINGER_S:-60} \
		--bot "python -m medina_client --bot greedy --name greedy-1" \
		--bot "python -m medina_client --bot random --name random-2" \
		--bot "python -m medina_client --bot greedy --name greedy-3" \
		--bot "python -m medina_client --bot random --name random-4"

# The ladder demo: a local ladder with the example bots, standings printed as they change.
ladder: setup
	$(PY) -m medina.cli ladder demo $${LADDER_DIR:+--dir $$LADDER_DIR} $${SECONDS_:+--seconds $$SECONDS_}

test: setup lint
	$(PY) -m pytest

lint: setup
	$(BIN)/ruff check server clients tests bench tools
	$(BIN)/ruff format --check server clients tests bench tools
	$(BIN)/mypy
	$(BIN)/mypy --strict tests bench
	bash tools/buflint.sh
	bash tools/jscheck.sh

bench: setup
	$(PY) -m bench

clean:
	rm -rf $(VENV) server/medina/v1 clients/python/medina_envs/_tensors.*.so $(TENSORS) .mypy_cache .ruff_cache .pytest_cache tools/.buf tools/jscheck/node_modules clients/node/node_modules \
		build dist
