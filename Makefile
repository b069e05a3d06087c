# Two commands do everything on a fresh machine (Python 3.11+):
#   make demo   install, migrate, seed demo data, serve http://127.0.0.1:8000 with background jobs
#   make test   install what the tests need and run the whole suite
# DEBUG is off unless the environment says otherwise (config/settings.py); the commands here (the demo,
# migrations, messages, the worker, the tests) run in development mode unless DJANGO_DEBUG is set.
export DJANGO_DEBUG ?= true

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
HOST ?= 127.0.0.1
PORT ?= 8000
# Test processes (pytest-xdist): one per core by default; TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= auto

.PHONY: install install-test demo test lint messages migrate worker bench-claims bench-frames bench-eval bench-export bench-diffusion bench-openai clean

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e .
	touch $@

install: $(VENV)/.installed

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) install --quiet -e '.[test]'
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
		echo "chromium is not installed: browser tests will be skipped (install Debian's chromium)"
	touch $@

install-test: $(VENV)/.installed-test

migrate: install
	$(PY) manage.py migrate --no-input

demo: migrate
	$(PY) manage.py seed_demo
	$(PY) manage.py rundemo --addr $(HOST) --port $(PORT)

test: install-test
	HF_HUB_OFFLINE=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The translation catalogue (locale/it/LC_MESSAGES/django.po): new marked strings come in empty,
# existing translations are kept, strings no longer marked are dropped; then the .mo is compiled.
messages: install
	$(PY) manage.py makemessages -l it --add-location file --no-obsolete
	$(PY) manage.py compilemessages -l it --ignore '.*' --ignore 'var'

lint: install-test
	$(VENV)/bin/ruff check .

worker: install
	$(VENV)/bin/celery -A config worker -Q default,generation -l info

bench-claims: install-test
	$(PY) bench/claims.py

bench-frames: install
	$(PY) bench/frames.py

bench-eval: install
	$(PY) bench/eval_throughput.py

bench-export: install
	$(PY) bench/export.py

bench-diffusion: install
	$(PY) bench/diffusion.py $(BENCH_ARGS)

bench-openai: install
	$(PY) bench/openai_throughput.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var db.sqlite3 db.sqlite3-wal db.sqlite3-shm
