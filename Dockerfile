# One image for web, worker and beat (docker-compose.yml picks the command).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=comparator.settings.production
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends gettext && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# Static files and translations are built into the image with the base settings: the build needs a secret key but
# not a real one, and the production settings (rightly) refuse a placeholder.
RUN DJANGO_SETTINGS_MODULE=comparator.settings.base DJANGO_SECRET_KEY=build-only-not-a-secret \
    python manage.py collectstatic --noinput \
    && (DJANGO_SETTINGS_MODULE=comparator.settings.base DJANGO_SECRET_KEY=build-only-not-a-secret \
        python manage.py compilemessages || true)
# UID 1000: deploy/kubernetes runs the pods as this user (runAsNonRoot).
RUN useradd --create-home --uid 1000 app && chown -R app /app
USER app
EXPOSE 8000
# Threaded workers keep HTTP connections alive between requests (API clients reuse them); see bench/api.py.
CMD ["gunicorn", "comparator.wsgi", "--bind", "0.0.0.0:8000", "--worker-class", "gthread", "--workers", "2", \
     "--threads", "4", "--access-logfile", "-"]
