# The two commands a new user needs (README): `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# How `make run` serves: gunicorn as in production (the Dockerfile's worker class), which keeps connections alive
# between requests (runserver adds ~40 ms to each request on a reused connection). tests/providers/test_snapshot.py
# serves with these same arguments.
SERVE_ARGS := --worker-class gthread --workers 2 --threads 4 --keep-alive 5 --access-logfile -

.PHONY: run dev test test-fast test-faults lint services snapshot clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

## make run: install, migrate, load the bundled snapshot into SQLite (var/), collect the compressed, cache-busted
## static files, serve http://$(HOST):$(PORT) with gunicorn, production-shaped: DEBUG off, this install's own key in
## var/secret_key, mail to the console unless EMAIL_HOST is set, links in mail to SITE_URL (default: this address)
RUN_ENV := DJANGO_SETTINGS_MODULE=comparator.settings.local SITE_URL=$${SITE_URL:-http://$(HOST):$(PORT)} \
	DJANGO_ALLOWED_HOSTS=$${DJANGO_ALLOWED_HOSTS:-$(HOST),127.0.0.1,localhost}
run: $(VENV)/.runtime
	mkdir -p var
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput
	$(RUN_ENV) $(BIN)/python manage.py load_snapshot
	$(RUN_ENV) $(BIN)/python manage.py collectstatic --noinput -v0
	$(RUN_ENV) $(BIN)/gunicorn comparator.wsgi --bind $(HOST):$(PORT) $(SERVE_ARGS)

## make dev: the same data with DEBUG on and autoreload (Django's runserver); static files from the source folders
dev: $(VENV)/.runtime
	mkdir -p var
	$(RUN_ENV) DJANGO_DEBUG=true $(BIN)/python manage.py migrate --noinput
	$(RUN_ENV) DJANGO_DEBUG=true $(BIN)/python manage.py load_snapshot
	$(RUN_ENV) DJANGO_DEBUG=true $(BIN)/python manage.py runserver $(HOST):$(PORT)

## make test: lint, then the whole suite (PostgreSQL and Redis on this machine; REQUIRE_SERVICES=1 fails if absent)
test: $(VENV)/.dev browser
	@if [ "$(REQUIRE_SERVICES)" = "1" ] || [ "$(CI)" = "true" ]; then $(MAKE) --no-print-directory services; fi
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run --settings=comparator.settings.test
	$(BIN)/pytest $(PYTEST_ARGS)

## make test-faults: the fault suite alone (tests/faults: a scripted SMTP relay, PostgreSQL and Redis behind
## refuse/hang/restart proxies, a real gunicorn), with the services started and required
test-faults: $(VENV)/.dev services
	REQUIRE_SERVICES=1 $(BIN)/pytest tests/faults $(PYTEST_ARGS)

## make test-fast: the same without the tests marked slow (schema fuzz, browser, worker kill, make-run path)
test-fast: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/pytest -m "not slow" $(PYTEST_ARGS)

## make services: start this machine's PostgreSQL and Redis if they are not answering
services:
	@pg_isready -h 127.0.0.1 -p 5432 -q || pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start
	@redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
	@for i in $$(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && exit 0; sleep 1; done; echo "PostgreSQL or Redis did not come up" >&2; exit 1

## make browser: Debian's Chromium for the Playwright tests (tests/browser), plus CJK fonts so the Chinese pages'
## screenshots are legible. Never `playwright install`: no browser is downloaded.
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk)

lint: $(VENV)/.dev
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var
