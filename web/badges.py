"""Capability answers as the pages show them: translated short and long values, the symbols and tones of the
badges on offer rows, and the sentence (answer, source, verified date) behind each badge."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import urlsplit

from django.template.loader import render_to_string
from django.utils.formats import date_format
from django.utils.translation import get_language, gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from providers import selectors
from providers.capabilities import QUESTIONS, RDMA_FABRICS, UNKNOWN
from providers.models import Capability, in_language

logger = logging.getLogger(__name__)


# --- rows: prices, freshness, capability badges ----------------------------------------------------------------------

VALUE_LABELS = {
    "yes": _("yes"), "no": _("no"), "n/a": _("not applicable"), UNKNOWN: _("unknown"),
    "managed": _("managed control plane"), "byo": _("bring your own cluster"), "none": _("no Kubernetes"),
    "free": _("free"), "paid": _("paid"), "preinstalled": _("preinstalled"), "add_on": _("add-on"),
    "user_installs": _("you install it"),
}
# Short answers for capability cells in tables (the long VALUE_LABELS go into sentences and tooltips).
SHORT_VALUES = {
    "yes": _("yes"), "no": _("no"), "n/a": _("n/a"), "managed": _("managed"), "byo": _("BYO"),
    "none": _("none"), "free": _("free"), "paid": _("paid"), "preinstalled": _("preinstalled"),
    "add_on": _("add-on"), "user_installs": _("you install"),
}


def label_cells(cells) -> None:
    """Give capability cells their translated short answer (`value_text`) for the templates."""
    for cell in cells:
        if cell is not None:
            cell.value_text = SHORT_VALUES.get(cell.value, cell.value)


GLYPHS = {"yes": "✓", "managed": "✓", "free": "✓", "preinstalled": "✓", "no": "✗", "none": "✗", "n/a": "–",
          UNKNOWN: "?", "byo": "◐", "add_on": "◐", "paid": "◐", "user_installs": "◐"}
TONES = {"yes": "y", "managed": "y", "free": "y", "preinstalled": "y", "no": "n", "none": "n", "n/a": "na",
         UNKNOWN: "u", "byo": "p", "add_on": "p", "paid": "p", "user_installs": "p"}
# The capability badges on every offer row, in this order (rdma folds the four fabrics into one badge).
ROW_BADGES = (
    ("offering", pgettext_lazy("badge", "K8s")), ("mig", pgettext_lazy("badge", "MIG")),
    ("rdma", pgettext_lazy("badge", "RDMA")), ("scale_to_zero", pgettext_lazy("badge", "Scale to 0")),
    ("spot_nodes", pgettext_lazy("badge", "Spot")), ("rwx_storage", pgettext_lazy("badge", "RWX")),
)
FABRIC_SHORT = {"infiniband": "IB", "roce": "RoCE", "efa": "EFA", "gpudirect_tcpx": "TCPX"}


@dataclass
class Badge:
    text: str
    tone: str
    tip: str
    url: str = ""


def _cell_sentence(cell: BadgeCell | None, question_label) -> str:
    if cell is None or cell.value == UNKNOWN:
        return gettext("%(question)s: unknown, we found no source yet") % {"question": question_label}
    host = urlsplit(cell.source_url).hostname or cell.source_url
    answer = str(VALUE_LABELS.get(cell.value, cell.value))
    label = in_language(cell.label, cell.label_zh)
    if label:
        answer = f"{answer} ({label})"
    return gettext("%(question)s: %(answer)s. Source: %(source)s, verified %(date)s") % {
        "question": question_label, "answer": answer, "source": host,
        "date": date_format(cell.verified_on, "DATE_FORMAT") if cell.verified_on else gettext("unknown"),
    }


def capability_badge(key: str, short, cells: dict[str, Capability]) -> Badge:
    """The badge of one capability (or of the RDMA fabrics together) for one provider's cells."""
    if key != "rdma":
        cell = cells.get(key)
        value = cell.value if cell else UNKNOWN
        return Badge(f"{short}{GLYPHS.get(value, '?')}", TONES.get(value, "u"),
                     _cell_sentence(cell, QUESTIONS[key].label), cell.source_url if cell else "")
    fabric_cells = {fabric: cells.get(fabric) for fabric in RDMA_FABRICS}
    yes = [fabric for fabric, cell in fabric_cells.items() if cell and cell.value == "yes"]
    known = all(cell and cell.value != UNKNOWN for cell in fabric_cells.values())
    tip = " · ".join(_cell_sentence(cell, QUESTIONS[fabric].label) for fabric, cell in fabric_cells.items()
                     if cell and cell.value != UNKNOWN) or gettext("RDMA fabric: unknown, we found no source yet")
    if yes:
        text = "+".join(FABRIC_SHORT[fabric] for fabric in yes) + "✓"
        return Badge(text, "y", tip, fabric_cells[yes[0]].source_url)
    if known:
        return Badge(f"{short}✗", "n", tip)
    return Badge(f"{short}?", "u", tip)


class BadgeCell(NamedTuple):
    """What a badge shows of a capability cell: its value, label, source and verified date."""

    key: str
    value: str
    label: str
    label_zh: str
    source_url: str
    verified_on: date | None


BADGE_KEYS = frozenset(key for key, _short in ROW_BADGES if key != "rdma") | set(RDMA_FABRICS)


def badge_answers(*, provider_ids) -> dict[int, tuple[BadgeCell, ...]]:
    """What the badges of these providers show, per provider (providers without any answer are absent)."""
    answers = selectors.capability_answers(provider_ids=provider_ids, keys=sorted(BADGE_KEYS))
    return {provider_id: tuple(BadgeCell(*answer) for answer in rows) for provider_id, rows in answers.items()}


@lru_cache(maxsize=2048)
def row_badges_html(language: str, cells: tuple[BadgeCell, ...]) -> str:
    """A provider's capability badges as HTML, in the active language. Kept per language and per content of the
    cells (not per provider), so an edited cell is a new entry, never a stale one."""
    by_key = {cell.key: cell for cell in cells}
    badges = [capability_badge(key, short, by_key) for key, short in ROW_BADGES]
    return render_to_string("offers/_badges.html", {"badges": badges})



def provider_badges_html(provider_id: int) -> str:
    """One provider's row badges (the offer page shows them beside its facts)."""
    return row_badges_html(get_language(), badge_answers(provider_ids=[provider_id]).get(provider_id, ()))



# --- the offers table's Kubernetes cell: the offer's own answers (providers.kubernetes) ----------------------------

STATE_GLYPHS = {"yes": "✓", "no": "✗", "unknown": "?", "n/a": "–", "not_on_this_machine": "⊘"}
STATE_TONES = {"yes": "y", "no": "n", "unknown": "u", "n/a": "na", "not_on_this_machine": "p"}
FABRIC_SHORT_ROW = {**FABRIC_SHORT, "gpudirect_tcpxo": "TCPXO", "rdma_unspecified": "RDMA"}
# The few symbols a row shows; every answer is in the disclosure below them.
CELL_SYMBOLS = (("managed_node", pgettext_lazy("badge", "K8s")), ("mig", pgettext_lazy("badge", "MIG")),
                ("rdma", pgettext_lazy("badge", "RDMA")))


def _question_label(question: str) -> str:
    if question == "managed_node":
        return str(VALUE_LABELS["managed"])
    if question == "byo":
        return str(VALUE_LABELS["byo"])
    if question == "rdma":
        return str(_("RDMA fabric"))
    return str(QUESTIONS[question].label)


def _state_text(state: str) -> str:
    if state == "not_on_this_machine":
        return gettext("offered, but not on this machine")
    return str(VALUE_LABELS.get(state, state))


def kubernetes_cell_html(answers: dict | None) -> str:
    """One offer's Kubernetes cell: a few symbols (managed node, MIG, RDMA fabric) in a <details> summary that a
    keyboard and a screen reader reach, and every answer with its reason and source links inside. Every text from
    the data is escaped."""
    from html import escape

    from providers.selectors import kubernetes_answers_of

    parts = kubernetes_answers_of(answers)
    symbols, spoken = [], []
    for question, short in CELL_SYMBOLS:
        answer = parts[question]
        text = f"{short}{STATE_GLYPHS.get(answer.state, '?')}"
        if question == "rdma" and answer.state == "yes" and answer.fabric in FABRIC_SHORT_ROW:
            text = FABRIC_SHORT_ROW[answer.fabric] + (f"×{answer.efa_interfaces}" if answer.efa_interfaces else "")
        symbols.append(f'<span class="b {STATE_TONES.get(answer.state, "u")}">{escape(text)}</span>')
        spoken.append(f"{_question_label(question)}: {_state_text(answer.state)}")
    items = []
    for question, answer in parts.items():
        if question == "fabric":
            continue
        links = " ".join(f'<a href="{escape(url)}" rel="noopener">{escape(urlsplit(url).hostname or url)}</a>'
                         for url in answer.sources)
        items.append(f"<li><strong>{escape(_question_label(question))}: {escape(_state_text(answer.state))}</strong>"
                     f" {escape(answer.reason)}{' ' + links if links else ''}</li>")
    return (f'<details class="k8s"><summary aria-label="{escape("; ".join(spoken))}">{"".join(symbols)}</summary>'
            f'<ul>{"".join(items)}</ul></details>')
