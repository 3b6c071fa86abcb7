"""`manage.py send_digest [--dry-run] [--at ISO-DATETIME]`: send the digest of the week now (or the week of
`--at`) synchronously, the same service the beat task calls; with --dry-run, compute and show what each distinct
saved filter would get and send, claim and record nothing."""

from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from digest import selectors, services
from digest.weeks import digest_week


class Command(BaseCommand):
    help = "Send this week's digest to due subscribers (or show what would be sent with --dry-run)."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="Compute and report; send and record nothing.")
        parser.add_argument("--at", help="A moment in the week to send, ISO 8601 with a time zone "
                                         "(default: now).")

    def handle(self, *args, dry_run: bool, at: str | None, **options):
        moment = timezone.now()
        if at:
            try:
                moment = datetime.fromisoformat(at)
            except ValueError as exc:
                raise CommandError(f"--at: not an ISO 8601 date and time: {at!r}") from exc
            if moment.tzinfo is None:
                raise CommandError("--at needs a time zone, e.g. 2026-11-30T08:00:00+00:00")
        week = digest_week(moment)
        self.stdout.write(f"week {week.start:%Y-%m-%d %H:%M} – {week.end:%Y-%m-%d %H:%M} UTC")
        if not dry_run:
            result = services.digest_send(at=moment)
            self.stdout.write(
                f"claimed {result.claimed} over {result.filters} filters: sent {result.sent}, skipped "
                f"{result.skipped} (no change), failed {result.failed}, outcome unknown {result.unknown}, to retry "
                f"{result.transient}, held by another run {result.held_elsewhere}"
            )
            if result.problem:
                self.stderr.write(f"stopped ({result.problem.kind}): {result.problem.reply} "
                                  "(docs/operations.md, \"Mail\")")
            return
        changes = selectors.week_changes(week=week)
        for query, subscribers in selectors.subscription_filters_due():
            try:
                digest = selectors.digest_build(query=query, changes=changes)
            except ValueError as exc:
                self.stdout.write(f"{query or '(no filter)'}: {subscribers} subscriber(s), filter invalid: {exc}")
                continue
            self.stdout.write(
                f"{query or '(no filter)'}: {subscribers} subscriber(s), {digest.change_count} change(s) "
                f"[drops {digest.price_drops.total}, rises {digest.price_rises.total}, new {digest.new_offers.total}, "
                f"gone {digest.gone_offers.total}, availability {digest.availability.total}, capabilities "
                f"{digest.capabilities.total}] -> {'send' if digest.has_changes else 'send only to always-send'}"
            )
        self.stdout.write("dry run: nothing sent, claimed or recorded")
