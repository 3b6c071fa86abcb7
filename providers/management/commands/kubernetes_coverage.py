"""`manage.py kubernetes_coverage`: issue #36's measurements on the loaded data (the bundled snapshot after
`load_snapshot`): per provider, counted per (provider, machine type) and per offer, how often `managed_node` is
known, the fabric class is known for types with 4+ GPUs and the form factor is known for A100/H100/H200/B200/GB200
types; the unknown share of all per-offer Kubernetes answers; and the fact files' types that no offer has (or the
reverse). Reads only (providers.coverage)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from providers.coverage import TARGET_PROVIDERS, Share, kubernetes_coverage, overall_unknown_answers


def _cell(share: Share) -> str:
    return f"{share.known}/{share.total} ({share.percent_known}%)" if share.total else "-"


class Command(BaseCommand):
    help = "Issue #36's Kubernetes coverage targets per provider, per machine type and per offer."

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="every provider, not only issue #36's seven")

    def handle(self, *args, **options):
        coverages = kubernetes_coverage(provider_slugs=None if options["all"] else TARGET_PROVIDERS)
        write = self.stdout.write
        write("provider | managed_node known: types / offers | fabric class known (4+ GPUs): types / offers | "
              "form factor known (A100..GB200): types / offers | answers unknown (offers)")
        for c in coverages:
            write(f"{c.slug} | {_cell(c.managed_node_types)} / {_cell(c.managed_node_offers)} | "
                  f"{_cell(c.fabric_class_types)} / {_cell(c.fabric_class_offers)} | "
                  f"{_cell(c.form_factor_types)} / {_cell(c.form_factor_offers)} | "
                  f"{c.answers_offers.unknown}/{c.answers_offers.total} ({c.answers_offers.percent_unknown}%)")
        total = overall_unknown_answers(coverages)
        write(f"per-offer answers unknown, these providers: {total.unknown}/{total.total} ({total.percent_unknown}%)")
        everything = overall_unknown_answers(kubernetes_coverage())
        write(f"per-offer answers unknown, all providers: {everything.unknown}/{everything.total} "
              f"({everything.percent_unknown}%)")
        for c in coverages:
            if c.facts_without_offers or c.offers_without_facts:
                write(f"{c.slug}: {len(c.facts_without_offers)} fact types no offer has "
                      f"{c.facts_without_offers[:5]}; {len(c.offers_without_facts)} offered types no fact names "
                      f"{c.offers_without_facts[:5]}")
