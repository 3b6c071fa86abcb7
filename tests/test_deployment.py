"""docker-compose.yml cannot be run here (no Docker engine), so read it: the services the README promises, one
image for the app processes, and settings that point at the compose services. The production settings are started in
a subprocess with the documented environment: weak or public secret keys refused, `check --deploy` clean but for the
operator's HSTS preload decision, and the security headers on the pages."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_every_service_of_a_production_like_stack():
    assert {"web", "worker", "beat", "db", "redis", "mail"} <= set(COMPOSE["services"])


def test_app_processes_share_one_image_and_wait_for_their_services():
    app = [COMPOSE["services"][name] for name in ("web", "worker", "beat")]
    assert len({service["image"] for service in app}) == 1
    for service in app:
        assert service["build"] == "."
        assert set(service["depends_on"]) == {"db", "redis"}
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@db:" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:")
        assert env["DJANGO_SETTINGS_MODULE"] == "comparator.settings.production"
    assert "celery -A comparator worker" in COMPOSE["services"]["worker"]["command"]
    assert "celery -A comparator beat" in COMPOSE["services"]["beat"]["command"]


def test_dockerfile_installs_the_pinned_requirements_and_serves_with_gunicorn():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "python:3.11" in dockerfile and "requirements.txt" in dockerfile and "gunicorn" in dockerfile



def test_compose_never_reads_the_public_example_environment():
    for name in ("web", "worker", "beat"):
        env_files = COMPOSE["services"][name]["env_file"]
        paths = [entry["path"] if isinstance(entry, dict) else entry for entry in env_files]
        assert paths == [".env"], paths
        assert ".env.example" not in str(COMPOSE["services"][name])
    example = dict(line.split("=", 1) for line in (ROOT / ".env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert example["DJANGO_SECRET_KEY"] == ""
    assert ".env" in (ROOT / ".gitignore").read_text().split()


def production(*command, **environ):
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")}
    env.update({"DJANGO_SETTINGS_MODULE": "comparator.settings.production", "DJANGO_ALLOWED_HOSTS": "gpus.example.org",
                "DATABASE_URL": "sqlite:///:memory:", "CACHE_URL": "redis://127.0.0.1:6379/15", **environ})
    return subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("key", [
    "", "change-me-to-a-long-random-string", "insecure-local-only-key-change-me", "short-but-random-Zq8!",
    "django-insecure-" + "k3j4h5g6f7d8s9a0" * 4, "ab" * 40,
], ids=["unset", "the-env-example-value", "the-development-default", "too-short", "django-insecure", "two-chars"])
def test_production_refuses_weak_or_public_secret_keys(key):
    completed = production("check", DJANGO_SECRET_KEY=key)
    assert completed.returncode != 0 and "DJANGO_SECRET_KEY" in completed.stderr, completed.stderr[-500:]


def test_check_deploy_with_the_documented_production_environment_leaves_only_the_hsts_preload_decision():
    completed = production("check", "--deploy", "--tag", "security", "--fail-level", "ERROR",
                           DJANGO_SECRET_KEY=secrets.token_urlsafe(64))
    assert completed.returncode == 0, completed.stderr[-2000:]
    found = set(re.findall(r"security\.W\d+", completed.stdout + completed.stderr))
    assert found == {"security.W021"}, completed.stdout + completed.stderr


def test_production_pages_carry_csp_hsts_and_permissions_policy():
    script = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "r = Client().get('/api/docs/?script=', secure=True, HTTP_HOST='gpus.example.org')\n"
        "print(r.status_code); [print(k + ': ' + v) for k, v in r.headers.items()]\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")}
    env.update({"DJANGO_SETTINGS_MODULE": "comparator.settings.production", "DJANGO_ALLOWED_HOSTS": "gpus.example.org",
                "DATABASE_URL": "sqlite:///:memory:", "DJANGO_SECRET_KEY": secrets.token_urlsafe(64)})
    completed = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    headers = completed.stdout
    assert headers.startswith("200")
    assert "Strict-Transport-Security: max-age=31536000; includeSubDomains" in headers
    csp = re.search(r"Content-Security-Policy: (.*)", headers).group(1)
    assert "script-src 'self';" in csp and "style-src 'self';" in csp and "unsafe" not in csp
    assert "Permissions-Policy: " in headers and "camera=()" in headers


# Pages the site serves (not emails, which need inline styles): no inline script or style, so the strict policy holds.
PAGE_TEMPLATES = [path for path in (ROOT / "templates").rglob("*.html") if "email" not in path.parts]


@pytest.mark.parametrize("template", PAGE_TEMPLATES, ids=lambda path: str(path.relative_to(ROOT / "templates")))
def test_page_templates_have_no_inline_script_or_style(template):
    text = template.read_text()
    scripts = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", text)
    assert not scripts, scripts
    assert not re.search(r"<style\b|\sstyle=\"|\son[a-z]+=\"", text)
