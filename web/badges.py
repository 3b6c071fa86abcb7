"""Capability answers as the pages show them: translated short and long values of provider cells, and each offer's
Kubernetes cell (its own derived answers, providers.kubernetes) with the reasons and sources behind its symbols."""

from __future__ import annotations

import logging
from functools import lru_cache
from html import escape
from urllib.parse import urlsplit

from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, pgettext_lazy

from providers.capabilities import (
    OFFER_SUMMARY_QUESTIONS,
    SHORT_VALUES,
    UNKNOWN,
    offer_question_label,
    offer_state_text,
)
from providers.kubernetes import FABRIC_LABELS, INFERRED, RDMA_CLASS, TCP_CLASS, THIRD_PARTY
from providers.presentation import as_written, day_html
from providers.selectors import kubernetes_answers_of

logger = logging.getLogger(__name__)


# --- provider cells -------------------------------------------------------------------------------------------------

def label_cells(cells) -> None:
    """Give capability cells their translated short answer (`value_text`) for the templates."""
    for cell in cells:
        if cell is not None:
            cell.value_text = SHORT_VALUES.get(cell.value, cell.value)


FABRIC_SHORT = {"infiniband": "IB", "roce": "RoCE", "efa": "EFA", "gpudirect_tcpx": "TCPX"}


# --- the offers table's Kubernetes cell: the offer's own answers (providers.kubernetes) ----------------------------

STATE_GLYPHS = {"yes": "✓", "no": "✗", "unknown": "?", "n/a": "–", "not_on_this_machine": "⊘"}
STATE_TONES = {"yes": "y", "no": "n", "unknown": "u", "n/a": "na", "not_on_this_machine": "p"}
FABRIC_SHORT_ROW = {**FABRIC_SHORT, "gpudirect_tcpxo": "TCPXO", "rdma_unspecified": "RDMA",
                    "infiniband_or_roce": "IB/RoCE"}
# The few symbols a row shows (providers.capabilities.OFFER_SUMMARY_QUESTIONS); every answer is in the disclosure
# below them.
CELL_SYMBOLS = {"managed_node": pgettext_lazy("badge", "K8s"), "mig": pgettext_lazy("badge", "MIG"),
                "rdma": pgettext_lazy("badge", "RDMA")}


@lru_cache(maxsize=64)
def _short(language: str, question: str) -> str:
    return str(CELL_SYMBOLS[question])


def _summary_html(parts: dict, language: str) -> str:
    """The cell's <summary>: the few symbols, and all of them in words for screen readers."""
    symbols, spoken = [], []
    for question in OFFER_SUMMARY_QUESTIONS:
        answer = parts[question]
        text = f"{_short(language, question)}{STATE_GLYPHS.get(answer.state, '?')}"
        if question == "rdma" and answer.fabric_class in (RDMA_CLASS, TCP_CLASS) and answer.fabric in FABRIC_SHORT_ROW:
            text = FABRIC_SHORT_ROW[answer.fabric] + (f"×{answer.interfaces}" if answer.interfaces else "")
        symbols.append(f'<span class="b {STATE_TONES.get(answer.state, "u")}">{escape(text)}</span>')
        spoken.append(f"{offer_question_label(question)}: {offer_state_text(answer.state)}")
    return f'<summary aria-label="{escape("; ".join(spoken))}">{"".join(symbols)}</summary>'


def fabric_summary(answer) -> str:
    """The rdma answer's fabric in one line: class, kind, interfaces, bandwidth ("unknown" where no source says)."""
    unknown = gettext("unknown")
    kind = gettext(FABRIC_LABELS[answer.fabric]) if answer.fabric in FABRIC_LABELS else (
        gettext("none") if answer.fabric == "none" else unknown)
    interfaces = str(answer.interfaces) if answer.interfaces else unknown
    bandwidth = f"{answer.bandwidth_gbps:g} Gbit/s" if answer.bandwidth_gbps else unknown
    return gettext("Fabric class: %(cls)s · kind: %(kind)s · interfaces: %(interfaces)s · bandwidth: %(bandwidth)s") % {
        "cls": answer.fabric_class_label or unknown, "kind": kind, "interfaces": interfaces, "bandwidth": bandwidth}


def _confidence_mark(confidence: str) -> str:
    """The matrix's marks (templates/_capability.html): "~" inferred, "³" a third party's page; none when documented."""
    if confidence == INFERRED:
        return f'<abbr title="{escape(gettext("inferred"))}">~</abbr>'
    if confidence == THIRD_PARTY:
        return f'<abbr title="{escape(gettext("third-party source"))}">³</abbr>'
    return ""


def kubernetes_answers_html(answers: dict | None) -> SafeString:
    """Every answer of one offer's machine with its reason and source links, as a list (inside the cell's
    disclosure); an answer that rests on an inferred fact carries the matrix's "~" mark, one that rests on a third
    party's page its "³" (the stored `confidence`).
    Every text from the data is escaped."""
    items, unsourced = [], []
    for question, answer in kubernetes_answers_of(answers).items():
        if question == "fabric":
            continue
        if answer.state == UNKNOWN and not answer.sources:
            unsourced.append(offer_question_label(question))  # "we do not know" without a lead: one line for all
            continue
        links = " ".join(f'<a href="{escape(url)}" rel="noopener">{escape(urlsplit(url).hostname or url)}</a>'
                         for url in answer.sources)
        heading = f"{offer_question_label(question)}: {offer_state_text(answer.state)}"
        links = f" {links}" if links else ""
        if links and answer.verified_on:
            links += f' <small>{escape(gettext("verified"))} {day_html(answer.verified_on)}</small>'
        mark = _confidence_mark(answer.confidence)
        fabric = f"<br><small>{escape(fabric_summary(answer))}</small>" if question == "rdma" else ""
        reason = as_written(answer.reason_shown)  # names kept in Latin script marked English on Chinese pages
        items.append(f"<li><strong>{escape(heading)}</strong>{mark} {reason}{links}{fabric}</li>")
    if unsourced:
        items.append(f"<li><strong>{escape(', '.join(unsourced))}: {escape(offer_state_text(UNKNOWN))}</strong></li>")
    return SafeString(f'<ul>{"".join(items)}</ul>')


def kubernetes_cell_html(answers: dict | None, *, open_: bool = False) -> SafeString:
    """One offer's Kubernetes cell: a few symbols (managed node, MIG, RDMA fabric) in a <details> summary that a
    keyboard and a screen reader reach, and every answer with its reason and source links inside. Every text from
    the data is escaped."""
    summary = _summary_html(kubernetes_answers_of(answers), get_language())
    return SafeString(f'<details class="k8s{" full" if open_ else ""}"{" open" if open_ else ""}>{summary}'
                      f"{kubernetes_answers_html(answers)}</details>")


def kubernetes_row_cell_html(answers: dict | None, *, profile_id: int | None) -> tuple[str, str]:
    """The offers table's Kubernetes cell, as the (head, tail) around the offer's page URL: the same summary as
    kubernetes_cell_html, but the list of answers is fetched when the disclosure is first opened (htmx, from
    web.views.kubernetes_answers: one small response per profile), so a page of 50 rows does not carry 50 lists
    (2.9 KB each, 146 KB of a 224 KB page). Without JavaScript, or until the list arrives, the disclosure holds a
    link to the offer's page, which lists every answer with its reason and sources. An offer never derived has
    only unknown answers without sources: its one-line list is written in place."""
    summary = _summary_html(kubernetes_answers_of(answers), get_language())
    if profile_id is None:
        return f'<details class="k8s">{summary}{kubernetes_answers_html(answers)}</details>', ""
    url = reverse("kubernetes-answers", args=[profile_id])
    more = escape(gettext("Every answer with its reason and sources"))
    return (f'<details class="k8s" hx-get="{url}" hx-trigger="toggle once" hx-target="find .more" '
            f'hx-swap="outerHTML">{summary}<p class="more"><a href="', f'#kubernetes">{more}</a></p></details>')


def offer_kubernetes_html(offer, *, open_: bool = False) -> SafeString:
    """The Kubernetes cell of an Offer instance loaded with its profile (selectors.offer_list,
    cheapest_offers_by_gpu)."""
    profile = offer.kubernetes_profile
    return kubernetes_cell_html(profile.answers if profile is not None else None, open_=open_)
