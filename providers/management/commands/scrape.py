"""`manage.py scrape [source ...] [--offline]`: run sources synchronously, the same code the Celery tasks run."""

from django.core.management.base import BaseCommand, CommandError

from providers import runs
from scrapers import registry
from scrapers.base import TransientScrapeError


class Command(BaseCommand):
    help = "Scrape the named sources (all when none is named). --offline replays the recorded payloads."

    def add_arguments(self, parser):
        parser.add_argument("sources", nargs="*", help=f"source slugs; known: {', '.join(registry.SOURCES)}")
        parser.add_argument("--offline", action="store_true", help="replay recorded payloads, no network")
        parser.add_argument("--allow-shrink", action="store_true",
                            help="accept an answer that deactivates more offers than the shrink guard allows "
                                 "(after checking that the provider really stopped selling them)")

    def handle(self, *args, **options):
        unknown = [slug for slug in options["sources"] if slug not in registry.SOURCES]
        if unknown:
            raise CommandError(f"unknown source(s): {', '.join(unknown)}; known: {', '.join(registry.SOURCES)}")
        failed = 0
        for slug in options["sources"] or list(registry.SOURCES):
            try:
                run = runs.source_scrape(slug=slug, offline=options["offline"],
                                         allow_shrink=options["allow_shrink"])
            except runs.RunSkippedError as exc:
                self.stderr.write(f"skipped: {exc}")
                failed += 1
                continue
            except TransientScrapeError as exc:
                self.stderr.write(f"{slug}: failed (transient, retry later): {exc}")
                failed += 1
                continue
            self.stdout.write(
                f"{slug}: {run.status}; created {run.created}, updated {run.updated}, unchanged {run.unchanged}, "
                f"deactivated {run.deactivated}, rejected {run.skipped}, held {run.held}"
                + (f"; {run.error}" if run.error else "")
            )
            failed += run.status == "failed"
        if failed:
            raise CommandError(f"{failed} source(s) failed; stored offers were kept")
