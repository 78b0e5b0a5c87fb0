# SciDraft: every target installs what it needs, so each works on a fresh clone.
#   make run    set up everything and serve the demo site on SQLite at http://127.0.0.1:8000
#   make test   set up everything and run the whole test suite (SQLite unless DATABASE_URL is
#               set); CI runs this one (.ci/run)
#   make test-fast  the same without the tests marked slow (over a few seconds each: citation-js
#               over every style, the fuzzers, the largest hostile inputs, whole-site imports)
#               or browser (headless Chromium), for the edit-and-run loop
#   Both pass PYTEST_ARGS on to pytest, e.g. make test-fast PYTEST_ARGS="tests/notes -x", and
#   spread the tests over the machine's cores (pytest-xdist, at most 4 workers, a test file's
#   tests in one worker); PYTEST_WORKERS=0 runs them in one process. A worker that dies (the
#   OOM killer) ends the run with its test failed rather than leave the others waiting on it.
#   make bench  set up everything and run the benchmarks in benchmarks/ (they report, never fail)
#   make reliability  Redis and PostgreSQL outages, a load test against gunicorn, and co-authors
#                     typing together on two daphne servers (reliability/)

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
HOST   ?= 127.0.0.1
PORT   ?= 8000
PYTEST_WORKERS ?= auto
XDIST  := $(if $(filter 0,$(PYTEST_WORKERS)),-p no:xdist,-n $(PYTEST_WORKERS) --maxprocesses=4 --dist loadfile --max-worker-restart=0)

VENDOR := static/vendor

.PHONY: run test test-fast bench reliability setup venv node vendor migrate demo lint clean superuser

# runserver is daphne's (pages and the live WebSockets); --nostatic leaves static files to
# whitenoise, as in production (daphne's command shadows whitenoise's runserver_nostatic).
run: setup migrate demo
	DEBUG=$${DEBUG:-1} $(PY) manage.py runserver --nostatic $(HOST):$(PORT)

test: setup
	DEBUG=$${DEBUG:-1} $(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

test-fast: setup
	DEBUG=$${DEBUG:-1} $(PY) -m pytest $(XDIST) -m "not slow and not browser" $(PYTEST_ARGS)

bench: setup
	DEBUG=$${DEBUG:-1} $(PY) benchmarks/run.py

# Starts its own redis-server, PostgreSQL cluster, gunicorn and daphne on loopback;
# RELIABILITY_SECONDS shortens the load and writing-together scenarios (60 s).
reliability: setup
	$(PY) reliability/run.py

setup: venv vendor

# The venv is rebuilt when pyproject.toml or the lock changes.
venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c requirements.lock -e '.[dev]'
	touch $@

node: node_modules/.package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

# Files the site serves and the server-side renderer loads, copied from the locked npm
# packages: nothing is fetched from a CDN at run time.
vendor: $(VENDOR)/.copied
# The editor's and the citations' bundles are rebuilt when their sources change
# (editor/codemirror/, bibliography/js/).
$(VENDOR)/.copied: node_modules/.package-lock.json scripts/vendor-assets.sh scripts/build-editor.mjs \
		scripts/build-citations.mjs scripts/licences.mjs $(wildcard editor/codemirror/*.js) \
		$(wildcard bibliography/js/*.js) $(VENV)/.installed
	sh scripts/vendor-assets.sh
	$(PY) -c "from scidraft.markup.code import highlight_css; print(highlight_css())" > $(VENDOR)/pygments.css

migrate: venv
	DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput

# Safe on every start (make run): the demo loads into an empty site, and later runs write only
# rows the demo wrote and nobody changed since (hugosite/seeding.py). Never add --force here.
demo: venv
	DEBUG=$${DEBUG:-1} $(PY) manage.py seed_demo

superuser: venv
	DEBUG=$${DEBUG:-1} $(PY) manage.py createsuperuser

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) node_modules $(VENDOR) staticfiles .pytest_cache
