"""Settings shared by every environment; each value that differs between machines is read from the environment.

`local` (the embedded default: SQLite, no Redis), `test` and `production` only change what must differ.
"""

import os
from decimal import Decimal
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "insecure-local-only-key-change-me")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")

INSTALLED_APPS = [
    "comparator.apps.ComparatorAdminConfig",  # django.contrib.admin with its login throttled (comparator/admin.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "corsheaders",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets for /api/docs/, served from our static files (no CDN)
    "providers",
    "web",
    "advisor",
    "digest",
    "exports",
]

MIDDLEWARE = [
    # Outermost: a HEAD answer's body is dropped after everything else wrote it (gunicorn would send it).
    "comparator.http.HeadWithoutBodyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy and Permissions-Policy (SECURITY_HEADERS below; on in production).
    "comparator.security.SecurityHeadersMiddleware",
    "corsheaders.middleware.CorsMiddleware",  # before CommonMiddleware, so its redirects carry CORS headers too
    # A declared body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 before anything reads it.
    "comparator.security.RequestBodyLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Pages, fragments and API answers compressed (the offers page: 137 KB of HTML, ~12 KB gzip). After whitenoise,
    # which answers static files itself with its precompressed copies; before everything that writes the body, so it
    # compresses what they produce. Django masks the CSRF token per response, which is what BREACH needs.
    "django.middleware.gzip.GZipMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language is in the URL for pages (/zh-hans/...); the API negotiates it (comparator.locale).
    "comparator.locale.LanguageInUrlMiddleware",
    # A parameter that is a number in fullwidth (or other non-ASCII) digits is a 400 naming it.
    "comparator.security.AsciiNumbersMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # request.htmx: the offers page answers htmx requests with the results fragment only.
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "comparator.urls"
WSGI_APPLICATION = "comparator.wsgi.application"
ASGI_APPLICATION = "comparator.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "comparator.locale.language_links",  # hreflang alternates: the page in each language
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
# Django's form renderer, with the widgets the site uses written in Python (same HTML, a fraction of the time).
FORM_RENDERER = "web.form_renderer.FormRenderer"


def timeouts(database: dict, *, statement_ms: str = "5000") -> dict:
    """Bounded waits on PostgreSQL (docs/operations.md, "Timeouts"): a connection attempt gives up after
    DATABASE_CONNECT_TIMEOUT seconds (a hung server becomes a 503, not a hung request), a statement after
    DATABASE_STATEMENT_TIMEOUT_MS (0: none; the migration Job and the worker set their own), and a persistent
    connection is checked before each request reuses it (CONN_HEALTH_CHECKS), so a database restart costs no 500."""
    if database.get("ENGINE") == "django.db.backends.postgresql":
        options = database.setdefault("OPTIONS", {})
        options["connect_timeout"] = int(os.environ.get("DATABASE_CONNECT_TIMEOUT", "3"))
        statement = int(os.environ.get("DATABASE_STATEMENT_TIMEOUT_MS", statement_ms))
        options["options"] = f"-c statement_timeout={statement}"
        database["CONN_HEALTH_CHECKS"] = True
    return database


DATABASES = {
    "default": timeouts(dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'comparator.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
    ))
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# One date format per language: English pages use comparator/formats/en (ISO 8601), Chinese Django's zh_Hans formats.
FORMAT_MODULE_PATH = ["comparator.formats"]

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # The one request body the API reads (advise) is JSON; form encodings cannot say null, so they are not offered.
    # JSON nested thousands deep is a 400, not a RecursionError (comparator.security).
    "DEFAULT_PARSER_CLASSES": ["comparator.security.DepthLimitedJSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_SCHEMA_CLASS": "providers.api_schema.ApiAutoSchema",
    # The same proxy count as comparator.security.client_ip (0: REMOTE_ADDR, never a client-sent X-Forwarded-For).
    "NUM_PROXIES": None,  # set below from NUM_PROXIES
}

# Reverse proxies in front of the app (ingress, load balancer): with n > 0, rate limits read the client address the
# outermost proxy saw from X-Forwarded-For; with 0 (the default) they read REMOTE_ADDR and ignore the header, which
# any client can write. Behind a proxy, leaving it at 0 counts the whole site as one client.
NUM_PROXIES = int(os.environ.get("DJANGO_NUM_PROXIES") or 0)
if NUM_PROXIES < 0:
    raise ValueError(f"DJANGO_NUM_PROXIES must be 0 or more, got {NUM_PROXIES}")
REST_FRAMEWORK["NUM_PROXIES"] = NUM_PROXIES

# The REST API (providers.api). Anonymous requests per client IP, counted in the default cache (CACHES below: Redis
# when CACHE_URL is set, so every worker shares one count); "off" disables.
API_ANON_RATE = os.environ.get("API_ANON_RATE", "120/minute")
# POST /api/v1/advise/ ranks every offer per request: its own, lower limit per client IP.
API_ADVISE_RATE = os.environ.get("API_ADVISE_RATE", "20/minute")
# The most one advice may take to rank the offers before it is answered 503 (page and API); 0 = no bound. The worst
# input measured on the bundled snapshot takes about 2 s on a 2-core machine (issue 39's fuzzed set).
ADVISOR_BUDGET_SECONDS = float(os.environ.get("ADVISOR_BUDGET_SECONDS", "8"))
# Advice computed at once per web process (advisor.selectors.advice_get), and how long the one request allowed to wait
# for a slot waits; any other gets a 503 with Retry-After at once, so clients asking for advice cannot take every
# thread from the other pages.
ADVISOR_CONCURRENT_PER_PROCESS = int(os.environ.get("ADVISOR_CONCURRENT_PER_PROCESS", "1"))
ADVISOR_WAIT_SECONDS = float(os.environ.get("ADVISOR_WAIT_SECONDS", "2"))
# Unpaged CSV exports stream whole tables (55 MB at 100,000 offers): at most this many at once across the site
# (counted in the cache), so they cannot hold every web thread; a slot left by a dead process frees itself after
# API_CSV_EXPORT_SECONDS. Paged CSV (page/page_size) is not bounded this way.
API_CSV_EXPORTS_MAX = int(os.environ.get("API_CSV_EXPORTS_MAX", "2"))
API_CSV_EXPORT_SECONDS = int(os.environ.get("API_CSV_EXPORT_SECONDS", "600"))
# Where the daily open-dataset dumps are written and served from (exports.dataset): a volume the worker writes and
# the web processes read.
DATASET_DIR = Path(os.environ.get("DATASET_DIR", str(BASE_DIR / "var" / "dataset")))
# /healthz (comparator.health) reports the database, broker and cache; /metrics asks for this bearer token when it
# is set, and answers only loopback clients when it is not.
HEALTH_CHECK_REDIS = env_bool("HEALTH_CHECK_REDIS", True)
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# Content-Security-Policy and Permissions-Policy on every response (comparator.security); production turns it on.
SECURITY_HEADERS = env_bool("DJANGO_SECURITY_HEADERS", False)
# Browsers on other sites may read the API (GET only); nothing else is shared cross-origin.
CORS_URLS_REGEX = r"^/api/.*$"
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_METHODS = ("GET", "HEAD", "OPTIONS")
CORS_ALLOW_CREDENTIALS = False
# What a filter left out for an unknown answer (providers.api.left_out_headers): a CSV's only place to say it.
CORS_EXPOSE_HEADERS = ("Left-Out-For-Unknown", "Left-Out-Questions")
SPECTACULAR_SETTINGS = {
    "TITLE": "GPU Kubernetes comparator API",
    "DESCRIPTION": (
        "Where to rent GPUs for Kubernetes workloads, and what you really get: offers with prices and availability, "
        "providers' sourced Kubernetes capabilities, the GPU catalog and the state of every data source. Read-only; "
        "anonymous; rate limited per IP (RateLimit and RateLimit-Policy headers, 429 with Retry-After). Every list "
        "is paginated (page, page_size) and has a CSV twin (the same path ending in .csv). Money and every decimal "
        "are JSON numbers; `provider` is always an object. An unknown, invalid or repeated single-value query "
        "parameter answers 400 naming it. Answers carry ETag and Last-Modified; send If-None-Match for a 304. "
        "Versioning: within /api/v1/ changes are additive (new operations, optional parameters, response fields, "
        "catalog values); a breaking change goes to /api/v2/, served beside v1 for at least six months."
    ),
    "VERSION": "1.1.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Required output fields, no security requirement, every status with its body and headers, catalog slugs as
    # strings (providers.api_schema).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "providers.api_schema.schema_contract"],
    "ENUM_NAME_OVERRIDES": {
        "ProviderKindEnum": "providers.models.ProviderKind",
        "SourceKindEnum": "providers.models.SourceKind",
    },
}

# Celery: Redis is the broker and result store. The embedded default (`make run`) never needs it:
# scrapes run synchronously through `manage.py scrape`.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Every task's hard time limit stays well inside the visibility timeout, so an acks_late task is never
# redelivered while it is still running (checked below). The environment may shorten them (the worker
# tests kill a worker and wait for the redelivery), never invert them.
CELERY_VISIBILITY_TIMEOUT = int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
# Redis answers within REDIS_TIMEOUT_SECONDS or counts as down (docs/operations.md, "Timeouts"): a web request that
# queues a task (the confirmation email) over a hung broker answers 503 within a few seconds instead of hanging.
# Above 1 s: the worker's BRPOP on the broker blocks for up to 1 s by design.
REDIS_TIMEOUT_SECONDS = float(os.environ.get("REDIS_TIMEOUT_SECONDS", "2"))
# max_retries/interval_*: how often a connection for publishing is tried before the error reaches the caller
# (kombu's default is to retry for ever, so a request queuing a task over a dead broker never answered).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
                                   "socket_timeout": REDIS_TIMEOUT_SECONDS,
                                   "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
                                   "max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_TIMEOUT_SECONDS
# The result backend retries a lost connection 20 times a second apart by default; once is enough for a caller.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": {"max_retries": 1, "interval_start": 0,
                                                            "interval_step": 0.5, "interval_max": 0.5}}
CELERY_REDIS_SOCKET_TIMEOUT = REDIS_TIMEOUT_SECONDS
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_TIMEOUT_SECONDS
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5,
                                    "interval_max": 0.5}
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "1800"))
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", str(CELERY_TASK_TIME_LIMIT * 5 // 6)))
if not CELERY_TASK_SOFT_TIME_LIMIT < CELERY_TASK_TIME_LIMIT < CELERY_VISIBILITY_TIMEOUT:
    raise ValueError(
        "Celery limits must satisfy soft time limit < hard time limit < broker visibility timeout, got "
        f"{CELERY_TASK_SOFT_TIME_LIMIT} / {CELERY_TASK_TIME_LIMIT} / {CELERY_VISIBILITY_TIMEOUT}"
    )
CELERY_TASK_TRACK_STARTED = True
CELERY_RESULT_EXPIRES = 7 * 24 * 3600
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"

# Offers whose source has not succeeded for this long are flagged stale to users.
STALE_AFTER_HOURS = int(os.environ.get("STALE_AFTER_HOURS", "24"))

# Cache: Redis when CACHE_URL is set (production, docker-compose), else this process's memory (the embedded default).
# The digest's subscribe rate limits live here, so several web processes need the shared Redis cache. Optional at
# run time: a refused or hung Redis makes pages slower, never a 500 (comparator/cache.py).
CACHES = {
    "default": {"BACKEND": "comparator.cache.OptionalRedisCache", "LOCATION": os.environ["CACHE_URL"],
                "OPTIONS": {"socket_timeout": REDIS_TIMEOUT_SECONDS, "socket_connect_timeout": REDIS_TIMEOUT_SECONDS}}
    if os.environ.get("CACHE_URL")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# Outgoing mail (the weekly digest and its confirmation emails). docker-compose points these at its mail catcher.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "1025"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "20"))  # seconds for each SMTP reply (worker only)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "GPU digest <digest@localhost>")
# Absolute links in emails (confirm, manage, unsubscribe, offers with the filter applied): the site's public address.
# Unset, an email sent while answering a request (the confirmation) links to the address that request was served on,
# and the weekly digest, sent outside any request, to LOCAL_SITE_URL (where `make run` serves) with a warning.
SITE_URL = os.environ.get("SITE_URL", "")
LOCAL_SITE_URL = "http://127.0.0.1:8000"

# The weekly digest (digest). The send boundary is in UTC, ISO weekday (1 = Monday): the beat entry
# fires then and each digest covers the 7 days before it.
DIGEST_SEND_WEEKDAY = int(os.environ.get("DIGEST_SEND_WEEKDAY", "1"))
DIGEST_SEND_HOUR = int(os.environ.get("DIGEST_SEND_HOUR", "8"))
DIGEST_SEND_MINUTE = int(os.environ.get("DIGEST_SEND_MINUTE", "0"))
DIGEST_PRICE_CHANGE_THRESHOLD = Decimal(os.environ.get("DIGEST_PRICE_CHANGE_THRESHOLD", "0.05"))
DIGEST_CHEAPEST_COUNT = int(os.environ.get("DIGEST_CHEAPEST_COUNT", "5"))
DIGEST_MAX_ROWS_PER_SECTION = int(os.environ.get("DIGEST_MAX_ROWS_PER_SECTION", "20"))
DIGEST_CONFIRM_MAX_AGE = int(os.environ.get("DIGEST_CONFIRM_MAX_AGE", str(3 * 24 * 3600)))
# Request bodies: the largest the site accepts (the advice API's JSON, forms). Bytes.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", str(1024 * 1024)))
# Admin login attempts per client address and per username in a window of seconds (comparator/admin.py).
ADMIN_LOGIN_ATTEMPTS = int(os.environ.get("ADMIN_LOGIN_ATTEMPTS", "10"))
ADMIN_LOGIN_WINDOW = 900
DIGEST_SUBSCRIBE_RATE_PER_IP = int(os.environ.get("DIGEST_SUBSCRIBE_RATE_PER_IP", "10"))
DIGEST_SUBSCRIBE_RATE_PER_ADDRESS = int(os.environ.get("DIGEST_SUBSCRIBE_RATE_PER_ADDRESS", "3"))
DIGEST_SUBSCRIBE_RATE_WINDOW = 3600
# A sending run's claim on a subscriber expires after this long: longer than a task's hard time limit (so a live
# run is never overtaken), shorter than the broker's visibility timeout (so the redelivered task of a dead worker
# can take its subscribers over).
DIGEST_CLAIM_LEASE_SECONDS = 2700

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
