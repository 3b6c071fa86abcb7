"""Training and batch stacks per provider (nodesoftware/data/stacks.toml): Slurm on Kubernetes (SUNK, Soperator,
Slinky, or a provider's own), Kueue (and its topology-aware scheduling), Volcano, JobSet, Kubeflow Trainer, KubeRay,
Run:ai, each with a status and the page that says so.

Statuses (docs/node-software.md): provider-managed (offered as a product feature), provider-documented (the
provider's own docs show how to run it), community (a third-party guide), unknown (no row). `stack=slurm` in the
filters asks for the family: any Slurm-on-Kubernetes stack that is provider-managed or provider-documented.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

from django.utils.translation import gettext, gettext_noop

from . import read_toml

STACKS_PATH = Path(__file__).resolve().parent / "data" / "stacks.toml"

# stack -> the family a filter asks for
STACKS = {
    "sunk": "slurm", "soperator": "slurm", "slinky": "slurm", "slurm": "slurm",
    "kueue": "kueue", "kueue-tas": "kueue", "volcano": "volcano", "jobset": "jobset",
    "kubeflow-trainer": "kubeflow", "kuberay": "kuberay", "runai": "runai",
}
# Names as people write them, put into the page's language where they carry words (StackAnswer.name).
STACK_NAMES = {
    "sunk": gettext_noop("SUNK (Slurm on Kubernetes)"), "soperator": gettext_noop("Soperator (Slurm)"),
    "slinky": gettext_noop("Slinky (Slurm operator)"), "slurm": gettext_noop("Slurm on Kubernetes"), "kueue": "Kueue",
    "kueue-tas": gettext_noop("Kueue with topology-aware scheduling"), "volcano": "Volcano", "jobset": "JobSet",
    "kubeflow-trainer": "Kubeflow Trainer", "kuberay": "KubeRay", "runai": "Run:ai",
}
FAMILIES = sorted(set(STACKS.values()))
# What the `stack` filter's choices read: the family's product names, never its slug ("kuberay").
FAMILY_NAMES = {"slurm": "Slurm (SUNK, Soperator, Slinky)", "kueue": "Kueue", "volcano": "Volcano",
                "jobset": "JobSet", "kubeflow": "Kubeflow Trainer", "kuberay": "KubeRay", "runai": "Run:ai"}
STATUSES = ("provider-managed", "provider-documented", "community", "unknown")
COUNTED = frozenset({"provider-managed", "provider-documented"})


class StackDataError(ValueError):
    """stacks.toml breaks the rules; the message names the row and the problem."""


@dataclass(frozen=True)
class StackAnswer:
    provider: str
    stack: str
    status: str
    detail: str
    source_url: str
    verified_on: date
    detail_zh: str = ""  # `detail` in Simplified Chinese, for the Chinese pages

    @property
    def family(self) -> str:
        return STACKS[self.stack]

    @property
    def name(self) -> str:
        return gettext(STACK_NAMES[self.stack])


def parse_stacks(data: dict, origin: str = "stacks.toml", *, providers: set[str] | None = None) -> list[StackAnswer]:
    if not isinstance(data.get("verified_on"), date):
        raise StackDataError(f"{origin}: verified_on (the day the rows were read at their sources) must be a date")
    answers, seen = [], set()
    for entry in data.get("provider") or []:
        slug = entry.get("slug", "")
        if providers is not None and slug not in providers:
            raise StackDataError(f"{origin}: provider {slug!r} is not a curated provider")
        for row in entry.get("stack") or []:
            where = f"{origin}: provider {slug!r} stack {row.get('stack')!r}"
            extra = set(row) - {"stack", "status", "detail", "detail_zh", "source_url"}
            if extra:
                raise StackDataError(f"{where}: unknown fields {sorted(extra)}")
            if row.get("stack") not in STACKS:
                raise StackDataError(f"{where}: stack must be one of {sorted(STACKS)}")
            if row.get("status") not in STATUSES or row["status"] == "unknown":
                raise StackDataError(f"{where}: status must be one of {list(STATUSES[:3])} (leave unknown out)")
            if not str(row.get("source_url", "")).startswith("https://") or not row.get("detail"):
                raise StackDataError(f"{where}: needs a detail and an https source_url")
            if (slug, row["stack"]) in seen:
                raise StackDataError(f"{where}: listed twice")
            seen.add((slug, row["stack"]))
            answers.append(StackAnswer(slug, row["stack"], row["status"], row["detail"], row["source_url"],
                                       data["verified_on"], row.get("detail_zh", "")))
    return answers


@cache
def stack_answers() -> tuple[StackAnswer, ...]:
    return tuple(parse_stacks(read_toml(STACKS_PATH)))


def stacks_of(provider_slug: str) -> list[StackAnswer]:
    return [answer for answer in stack_answers() if answer.provider == provider_slug]


def providers_with(family: str) -> set[str]:
    """Slugs of the providers with a provider-managed or provider-documented stack of that family."""
    return {answer.provider for answer in stack_answers() if answer.family == family and answer.status in COUNTED}


def providers_answering(family: str) -> set[str]:
    """Slugs of the providers with a known answer for that family (any status but unknown): the rest are unknown."""
    return {answer.provider for answer in stack_answers() if answer.family == family and answer.status != "unknown"}

