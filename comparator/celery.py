"""The Celery application (Redis broker) and the one beat schedule. Tasks live in each app's tasks.py and are found
by autodiscovery.

Every schedule entry says in plain words when it runs and has an `expires` shorter than its period: a run that
waited in a backlog longer than that is dropped rather than piled up next to the newer one. Scrapes are fanned out
per source by providers.tasks.sources_scrape, whose `expires` argument is passed on to each source's task.
"""

import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.local")

app = Celery("comparator")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

HOUR = 3600

BEAT_SCHEDULE = {
    # Every hour, on the hour: live provider APIs (prices and availability change by the hour).
    "scrape-provider-apis": {
        "task": "providers.tasks.sources_scrape",
        "schedule": crontab(minute=0),
        "kwargs": {"kind": "api", "expires": 50 * 60},
        "options": {"expires": 10 * 60},
    },
    # Every 6 hours at a quarter past (00:15, 06:15, 12:15, 18:15 UTC): public catalogs, which their maintainers
    # regenerate a few times a day at most.
    "scrape-catalogs": {
        "task": "providers.tasks.sources_scrape",
        "schedule": crontab(minute=15, hour="*/6"),
        "kwargs": {"kind": "catalog", "expires": 5 * HOUR},
        "options": {"expires": HOUR},
    },
    # Every day at 16:30 UTC: ECB euro reference rates, published around 16:00 CET on working days.
    "refresh-exchange-rates": {
        "task": "providers.tasks.exchange_rates_refresh",
        "schedule": crontab(minute=30, hour=16),
        "options": {"expires": 12 * HOUR},
    },
    # Every day at 05:10 UTC: the open dataset's dated dump of every active offer (exports.dataset).
    "write-open-dataset": {
        "task": "exports.tasks.dataset_write",
        "schedule": crontab(minute=10, hour=5),
        "options": {"expires": 12 * HOUR},
    },
    # Every Monday at 04:00 UTC: check that every curated capability source link still answers.
    "check-source-links": {
        "task": "providers.tasks.source_links_check",
        "schedule": crontab(minute=0, hour=4, day_of_week="mon"),
        "options": {"expires": 24 * HOUR},
    },
    # Every Monday at 08:00 UTC (the same DIGEST_SEND_WEEKDAY, _HOUR, _MINUTE variables as the settings, ISO weekday,
    # 1 = Monday): the weekly digest of the 7 days before. Safe to run twice: each subscriber is claimed once a week.
    "send-weekly-digest": {
        "task": "digest.tasks.digest_send_due",
        "schedule": crontab(minute=os.environ.get("DIGEST_SEND_MINUTE", "0"),
                            hour=os.environ.get("DIGEST_SEND_HOUR", "8"),
                            day_of_week=int(os.environ.get("DIGEST_SEND_WEEKDAY", "1")) % 7),
        "options": {"expires": 12 * HOUR},
    },
}

# Every 15 minutes per source, staggered by a minute each from :05 (linode at :05, :20, :35, :50; vultr at :06, ...),
# clear of the hourly price runs at :00 that hold the same per-source lock: the availability poll of each source that
# publishes stock (scrapers.registry.AVAILABILITY_SOURCES), cheap requests only. A poll that waited 10 minutes in a
# backlog is dropped: the next one is 5 minutes away.
AVAILABILITY_SOURCES = ("linode", "vultr", "verda", "lambdalabs", "runpod", "vastai", "digitalocean")
for _offset, _slug in enumerate(AVAILABILITY_SOURCES, start=5):
    BEAT_SCHEDULE[f"poll-availability-{_slug}"] = {
        "task": "providers.tasks.availability_poll",
        "schedule": crontab(minute=",".join(str(_offset + quarter) for quarter in (0, 15, 30, 45))),
        "args": [_slug],
        "options": {"expires": 10 * 60},
    }
app.conf.beat_schedule = BEAT_SCHEDULE
