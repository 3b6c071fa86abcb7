"""`manage.py poll_availability [source ...] [--offline]`: poll sources' stock synchronously, the same code the
Celery task runs (providers.runs.availability_poll)."""

from django.core.management.base import BaseCommand, CommandError

from providers import runs
from scrapers import registry
from scrapers.base import TransientScrapeError


class Command(BaseCommand):
    help = ("Poll the named sources' stock (every polled source when none is named). --offline replays the dated "
            "stock recordings (scrapers.registry.SNAPSHOT_AVAILABILITY).")

    def add_arguments(self, parser):
        parser.add_argument("sources", nargs="*",
                            help=f"source slugs; polled: {', '.join(registry.AVAILABILITY_SOURCES)}")
        parser.add_argument("--offline", action="store_true", help="replay recorded stock answers, no network")

    def handle(self, *args, **options):
        unknown = [slug for slug in options["sources"] if slug not in registry.AVAILABILITY_SOURCES]
        if unknown:
            raise CommandError(f"not polled: {', '.join(unknown)}; polled: {', '.join(registry.AVAILABILITY_SOURCES)}")
        default = list(registry.SNAPSHOT_AVAILABILITY) if options["offline"] else list(registry.AVAILABILITY_SOURCES)
        failed = 0
        for slug in options["sources"] or default:
            try:
                poll = runs.availability_poll(slug=slug, offline=options["offline"])
            except TransientScrapeError as exc:
                self.stderr.write(f"{slug}: failed (transient, retry later): {exc}; last known states kept")
                failed += 1
                continue
            self.stdout.write(f"{slug}: {poll.status}; {poll.checked} checked, {poll.changed} changed, "
                              f"{poll.unmatched} unmatched" + (f"; {poll.error}" if poll.error else ""))
            failed += poll.status == "failed"
        if failed:
            raise CommandError(f"{failed} poll(s) failed; the last known states were kept")
