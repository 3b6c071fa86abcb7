"""`manage.py load_snapshot`: the bundled real data (GPU catalog, curated providers, recorded catalog payloads),
loaded through the same services a live scrape uses. Safe to run again, and on every start of a live site: it changes
nothing the second time, and never replays a source that has stored a live answer."""

from django.core.management.base import BaseCommand

from nodesoftware.summary import data_check
from providers.models import GpuModel, Provider
from providers.snapshot import snapshot_load


class Command(BaseCommand):
    help = "Load the bundled snapshot: GPU catalog, curated Kubernetes capabilities and recorded catalog offers."

    def handle(self, *args, **options):
        runs, skipped = snapshot_load()
        for reason in skipped:
            self.stdout.write(f"skipped {reason}")
        for run in runs:
            self.stdout.write(
                f"{run.source.slug:24} {run.status:10} created {run.created:5} updated {run.updated:5} "
                f"unchanged {run.unchanged:5} rejected {run.skipped:3} held {run.held:3} corrected {run.corrected:3} "
                f"unknown GPUs {sum(run.unknown_gpus.values())}"
                + (f"  {run.error}" if run.error else "")
            )
        counts = data_check(providers=set(Provider.objects.values_list("slug", flat=True)),
                            gpus=set(GpuModel.objects.values_list("slug", flat=True)))
        self.stdout.write("node software: " + ", ".join(f"{count} {what}" for what, count in counts.items()))
        failed = [run for run in runs if run.status != "succeeded"]
        if failed:
            self.stderr.write(f"{len(failed)} source(s) failed; their earlier offers are kept.")
