"""docker-compose.yml cannot be run here (no Docker engine), so read it: the services the README promises, one
image for the app processes, and settings that point at the compose services."""

from pathlib import Path

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
    env_files = COMPOSE["services"]["web"]["env_file"]
    for env_file in env_files:
        assert (ROOT / env_file).is_file()
