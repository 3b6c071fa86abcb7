"""Site pages: offers (the home page), charts, offer, GPU, provider and compare pages, and our guides.

Each view parses the request, asks selectors (the offers always through the one OfferFilterSet shared with the
API and the digest) and renders; display-only work (currency conversion, capability badges, freshness) happens
here on the one page of rows being shown, after the rows are fetched, so no page runs a query per row.

The offers page works without JavaScript (a plain GET form, plain links); with htmx the same form and links swap
only the results and push the canonical URL, so the address bar always holds a shareable, back-button-safe query.
"""

from __future__ import annotations

import logging
import sys
from urllib.parse import urlencode

from django import forms
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.template.loader import TemplateDoesNotExist, render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from nodesoftware import fit as node_fit
from nodesoftware import summary as node_summary
from providers import capacity, offer_reads, pricing, selectors, versions
from providers.capabilities import CAPABILITIES, GROUPS, QUESTIONS, UNKNOWN
from providers.coverage import offers_left_out_for_unknown
from providers.filters import (
    CONTINENTS,
    OfferFilterSet,
    multi_valued_parameters,
    offer_filterset,
    repeated_parameters,
    unknown_parameters,
)
from providers.models import Capability, Provider, in_language
from providers.presentation import gpu_name, price_per_gpu
from scrapers.normalize import GLOBAL

from .availability import duration_text, share_text, stock_text
from .badges import kubernetes_answers_html, label_cells, offer_kubernetes_html
from .display import DisplayForm, display_conversions
from .filter_panel import OfferPanelFilterSet, filter_groups
from .guides import CAPABILITY_GUIDES, GUIDES, guide_template, guide_url
from .offer_rows import decorate_offers, offer_columns, offer_page, place_text, plain_columns
from .querystrings import DISPLAY_PARAMS, active_filters, canonical_query, filter_query, with_params
from .unknown_notice import unknown_notice

logger = logging.getLogger(__name__)




# What the offers and charts pages read: the shared FilterSet's parameters and the display options. Anything else is
# refused as the API refuses it (providers.filters.unknown_parameters), so a typo never reads as "no filter".
PAGE_PARAMETERS = frozenset(OfferFilterSet.base_filters) | frozenset(DISPLAY_PARAMS)


# Filters (and none of the display options) that take several values; any other parameter given twice is an error.
MULTI_VALUED = multi_valued_parameters(OfferPanelFilterSet)


def _query_errors(params: QueryDict) -> list[str]:
    """What the pages refuse with a 400 naming it, as the API does: a parameter they do not read, a single-value
    parameter given twice (never one of its values kept silently) and a page that is not a page number."""
    errors = [gettext("%(name)s: not a parameter of this page (a typo?); it was not used.") % {"name": name}
              for name in unknown_parameters(params, reads=PAGE_PARAMETERS)]
    errors += [gettext("%(name)s: given more than once; this parameter takes one value.") % {"name": name}
               for name in repeated_parameters(params, many=MULTI_VALUED)]
    number = params.get("page")
    if number is not None and offer_reads.page_number(number) is None:
        errors.append(gettext("page: %(value)s is not a page number (a whole number from 1).") % {"value": number})
    return errors


def _is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request


def offers(request: HttpRequest) -> HttpResponse:
    """The home page: the filter panel, the results, and (for htmx requests) the results alone."""
    # One read of the data version per request, as the API does: the FilterSet's slug and capability lookups, the
    # count and the snapshot's dates are kept under it until the data changes (versions.data_version_scope).
    with versions.data_version_scope():
        params = canonical_query(request.GET)
        if not _is_htmx(request) and params.urlencode() != request.GET.urlencode():
            # A plain form submission sends every empty field, an old link a renamed choice or a slug in capitals;
            # answer with the short, shareable URL.
            return HttpResponseRedirect(f"{request.path}{with_params(params)}" if params else request.path)
        return _offers_page(request, params)


def filter_groups_html(filterset) -> str:
    """The filter panel's groups of fields as HTML, in the request's language, errors worded and values as typed."""
    return render_to_string("offers/_filter_groups.html", {"groups": filter_groups(filterset.form)})


def _offers_page(request: HttpRequest, params: QueryDict) -> HttpResponse:
    filterset = OfferPanelFilterSet(params, request=request)
    display = DisplayForm(params, rates=display_conversions())
    conversion, unit, period = display.conversion(), display.unit_value(), display.period_value()
    errors = _query_errors(params)
    valid = filterset.is_valid() and not errors
    page = None
    unpriced, priced_places = [], []
    notice = None
    past_the_end = False
    if valid:
        page = offer_page(filterset, offer_reads.page_number(params.get("page")) or 1)
        if page.past_the_end:  # a page that does not exist: 404, as the API answers it, with the same words
            errors.append(gettext("page: %(asked)s is past the last page (%(last)s).") % {
                "asked": params["page"], "last": page.paginator.num_pages})
            valid, page, past_the_end = False, None, True
    if valid:
        notice = unknown_notice(offers_left_out_for_unknown(filters=filterset), params, request.path)
        page.object_list = decorate_offers(page.object_list, conversion=conversion, unit=unit, period=period)
        if not page.paginator.count:
            unpriced = [in_language(p.name, p.name_zh) for p in selectors.providers_without_prices(filters=filterset)]
            priced_places = selectors.priced_places(filters=filterset)

    ordering = filterset.form.cleaned_data.get("ordering") if valid else None
    filters_only = filter_query(params)
    api_offers, chart_path = reverse("api:offer-list"), reverse("charts")
    context = {
        "filterset": filterset,
        "valid": valid,
        "form": filterset.form,
        # Called by the template only where it draws the panel: a results fragment without it never renders it.
        "filter_groups_html": lambda: filter_groups_html(filterset),
        "display": display,
        "conversion": conversion,
        "unit": unit,
        "period": period,
        "old_after_days": pricing.OLD_AFTER_DAYS,
        "page": page,
        "query_errors": errors,
        "chips": active_filters(params, filterset.form),
        "query_display": urlencode([(k, v) for k in ("currency", "unit", "period") for v in params.getlist(k)]),
        "unpriced": unpriced,
        "priced_places": priced_places,
        "notice": notice,
        "columns": offer_columns(params, unit, list(ordering or []), period=period),
        "params": params,
        "query": params.urlencode(),
        "filter_query": filters_only,
        "csv_url": f"{api_offers}?{urlencode({'format': 'csv'})}{'&' + filters_only if filters_only else ''}",
        "api_url": f"{api_offers}{'?' + filters_only if filters_only else ''}",
        "subscribe_url": f"{reverse('digest:subscribe')}{'?' + filters_only if filters_only else ''}",
        "chart_link": f"{chart_path}{'?' + filters_only if filters_only else ''}",
        "guides": GUIDES,
    }
    status = 200 if valid and display.is_valid() else 404 if past_the_end else 400
    if _is_htmx(request):
        # The form itself is re-sent out of band only when a link (sort, page) changed the query, so typing in the
        # panel never loses focus while the panel still shows the ordering a header click chose.
        context["oob_form"] = request.htmx.trigger != "filters"
        context["partial"] = True
        response = render(request, "offers/_results.html", context, status=status)
        response["HX-Push-Url"] = f"{request.path}{with_params(params)}" if params else request.path
        return response
    context["data"] = selectors.snapshot_dates()  # "bundled snapshot of <dates>" or live (issue 13)
    return render(request, "offers/index.html", context, status=status)


def _named_in_language(points: list[tuple]) -> list[tuple]:
    """Chart points with the GPU name's qualifier in the page's language, each distinct name translated once."""
    names: dict[str, str] = {}
    return [(names[gpu] if gpu in names else names.setdefault(gpu, gpu_name(gpu)), *rest) for gpu, *rest in points]


def charts(request: HttpRequest) -> HttpResponse:
    """Price per GPU-hour by GPU model across providers for the offers the same filters select."""
    from . import charts as figures

    params = canonical_query(request.GET)
    filterset = offer_filterset(params, request=request)
    display = DisplayForm(params, rates=display_conversions())
    conversion = display.conversion()
    errors = _query_errors(params)
    context = {"filterset": filterset, "display": display, "conversion": conversion, "valid": False,
               "query_errors": errors, "filter_query": filter_query(params), "query": params.urlencode()}
    if not filterset.is_valid() or errors:
        return render(request, "charts.html", context, status=400)
    points = _named_in_language(selectors.offer_price_points(offers=offer_reads.offers_filtered(filters=filterset)))
    axis = gettext("%(currency)s per GPU-hour") % {"currency": conversion.currency}
    figure = figures.price_distribution(points, conversion, title="", axis_title=axis,
                                        max_points=figures.MAX_POINTS_PER_BOX)
    context.update({
        "valid": True,
        "figure": figures.figure_json(figure),
        "spread": figures.price_spread(points, conversion),
        "point_count": len(points),
        "summarized": any(trace.type == "box" and trace.q1 is not None for trace in figure.data),
        "max_points": figures.MAX_POINTS_PER_BOX,
        "axis_title": axis,
    })
    return render(request, "charts.html", context)


def offer_detail(request: HttpRequest, pk: int) -> HttpResponse:
    from . import charts as figures

    offer = get_object_or_404(selectors.offer_list(include_inactive=True), pk=pk)
    display = DisplayForm(canonical_query(request.GET), rates=display_conversions())
    conversion = display.conversion()
    offer.display_price = conversion.convert(offer.price_per_gpu_hour_usd)
    offer.display_spot = conversion.convert(offer.spot_price_per_gpu_hour_usd)
    offer.commitments = pricing.commitment_terms(offer, conversion.convert)
    offer.kubernetes_html = offer_kubernetes_html(offer, open_=True)
    offer.price_is_old = pricing.is_old(offer.price_as_of, timezone.now())
    offer.place = place_text(offer.country, offer.continent, offer.region)
    retirement = pricing.retirement_of(offer.provider.slug, offer.instance_type)
    other_sources, not_live_reason = selectors.offer_other_sources(offer=offer)
    history = list(selectors.offer_price_history(offer=offer))
    axis = gettext("%(currency)s per GPU-hour") % {"currency": conversion.currency}
    rows = [{"observed_at": obs.observed_at, "price_hour_usd": obs.price_hour_usd,
             "spot_price_hour_usd": obs.spot_price_hour_usd} for obs in history]
    # No chart of nothing: a machine listed with no price at all (CoreWeave's GB300) has history rows of "—", and
    # an offer whose stock never changed has no stock chart; neither figure is built then.
    priced = any(row["price_hour_usd"] is not None or row["spot_price_hour_usd"] is not None for row in rows)
    figure = figures.figure_json(figures.offer_history(
        rows, gpu_count=offer.gpu_count, until=offer.last_seen, conversion=conversion,
        names={"on_demand": gettext("On-demand"), "spot": gettext("Spot")}, axis_title=axis)) if priced else ""
    for obs in history:
        obs.display_price = conversion.convert(price_per_gpu(obs.price_hour_usd, offer.gpu_count))
        obs.display_spot = conversion.convert(price_per_gpu(obs.spot_price_hour_usd, offer.gpu_count))
    changes = selectors.offer_availability_changes(offer=offer)
    stock_figure = figures.figure_json(figures.offer_stock(
        changes, until=timezone.now(),
        names={"trace": gettext("Stock"), "in_stock": gettext("in stock"), "sold_out": gettext("sold out"),
               "available": gettext("available"), "limited": gettext("limited"), "unavailable": gettext("sold out")},
    )) if changes else ""
    gpu = offer.gpu
    return render(request, "offers/detail.html", {
        "node": node_summary.offer_summary(offer.provider.slug, gpu.slug if gpu else None,
                                           gpu.architecture if gpu else ""),
        "offer": offer, "history": history, "figure": figure,
        "conversion": conversion, "display": display,
        "stock": stock_text(availability=offer.availability, available_count=offer.available_count,
                            checked_at=offer.availability_checked_at, since=offer.availability_since,
                            recorded=offer.availability_recorded),
        "share_7d": share_text(offer.in_stock_share_7d), "share_30d": share_text(offer.in_stock_share_30d),
        "longest_stockout": duration_text(selectors.offer_longest_stockout(offer=offer)),
        "changes": changes[::-1][:50],
        "stock_figure": stock_figure,
        "old_after_days": pricing.OLD_AFTER_DAYS,
        "other_sources": other_sources, "not_live_reason": not_live_reason,
        "retirement": retirement, "retired": retirement is not None and retirement.retired(timezone.now().date()),
    })


def kubernetes_answers(request: HttpRequest, profile_id: int) -> HttpResponse:
    """The list of one Kubernetes profile's answers with their reasons and sources, in the page's language: what an
    offers-table row's disclosure fetches when it is first opened (web.badges.kubernetes_row_cell_html). A fragment;
    kept per (language, profile, computed_at) like the rows' cells."""
    from .offer_rows import ANSWER_LISTS, remember_in

    found = offer_reads.kubernetes_profile_answers(profile_id=profile_id)
    if found is None:
        raise Http404("no such Kubernetes profile")
    computed_at, answers = found
    key = (get_language(), profile_id, computed_at)
    html = ANSWER_LISTS.get(key)
    if html is None:
        html = remember_in(ANSWER_LISTS, key, kubernetes_answers_html(answers))
    return HttpResponse(html)


def gpu_index(request: HttpRequest) -> HttpResponse:
    display = DisplayForm(canonical_query(request.GET), rates=display_conversions())
    conversion = display.conversion()
    gpus = list(selectors.gpu_model_list())
    for gpu in gpus:
        gpu.display_cheapest = conversion.convert(gpu.cheapest_usd)
    return render(request, "gpus/index.html", {"gpus": gpus, "conversion": conversion, "display": display})


def gpu_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Every offer of one accelerator (through the shared FilterSet), its price spread, memory and MIG profiles."""
    from . import charts as figures

    gpu = get_object_or_404(selectors.gpu_model_list(), slug=slug)
    params = canonical_query(request.GET)
    display = DisplayForm(params, rates=display_conversions())
    conversion = display.conversion()
    query = params.copy()
    query.setlist("gpu", [gpu.slug])
    filterset = offer_filterset(query, request=request)
    if not filterset.is_valid():
        raise Http404("invalid parameters")  # only `ordering`/`page` come from the user here
    page = offer_page(filterset, offer_reads.page_number(params.get("page")) or 1)
    page.object_list = decorate_offers(page.object_list, conversion=conversion, unit="gpu")
    points = selectors.offer_price_points(offers=offer_reads.offers_filtered(filters=filterset))
    axis = gettext("%(currency)s per GPU-hour") % {"currency": conversion.currency}
    spread_figure = figures.price_distribution(points, conversion, by="provider", axis_title=axis)
    daily = figures.daily_series(selectors.gpu_price_history(gpu=gpu), today=timezone.now(), conversion=conversion)
    history_figure = figures.gpu_history(
        daily, conversion=conversion, axis_title=axis,
        names={"min": gettext("Cheapest on-demand"), "median": gettext("Median on-demand"),
               "spot": gettext("Cheapest spot")})
    return render(request, "gpus/detail.html", {
        "gpu": gpu, "page": page, "conversion": conversion, "display": display,
        "spread": figures.price_spread(points, conversion, by="provider"),
        "spread_figure": figures.figure_json(spread_figure) if points else "",
        "history_figure": figures.figure_json(history_figure) if not daily.empty else "",
        "params": params, "offers_url": f"{reverse('home')}?{urlencode({'gpu': gpu.slug})}", "columns": plain_columns(),
        "stock_rows": _stock_rows(selectors.availability_summary(gpu=gpu)),
    })


# The matrix's query tool: the FilterSet's provider questions a user can ask of the matrix, and the answers' order
# when a column sorts it (the most useful answer first, unknown last).
MATRIX_FILTERS = ("offering", "gpu_operator", "rdma", "mig", "mps", "time_slicing", "vendor_sharing",
                  "node_autoscaling", "scale_to_zero", "spot_nodes", "rwx_storage", "gang_scheduling", "provider_kind")
ANSWER_RANK = {"yes": 0, "managed": 0, "free": 0, "preinstalled": 0, "add_on": 1, "byo": 1, "paid": 1,
               "user_installs": 2, "no": 3, "none": 3, "n/a": 4}
MATRIX_PRESETS = (
    (_("MIG and scale to zero"), "mig=yes&scale_to_zero=yes"),
    (_("Managed Kubernetes with InfiniBand"), "offering=managed&rdma=infiniband"),
    (_("Spot GPU nodes and shared (RWX) storage"), "spot_nodes=yes&rwx_storage=yes"),
    (_("GPU Operator preinstalled"), "gpu_operator=preinstalled"),
)


def provider_index(request: HttpRequest) -> HttpResponse:
    """The capability matrix as a query tool: keep the providers whose answers meet the chosen questions (the shared
    FilterSet's provider filters, e.g. `?mig=yes&scale_to_zero=yes`), sort by a question's answer (`?sort=mig`)."""
    params = canonical_query(request.GET)
    sort = params.get("sort", "")
    filters = params.copy()
    filters.pop("sort", None)
    filterset = offer_filterset(filters, request=request)
    errors = [gettext("%(name)s: not a question the matrix filters by (a typo?); it was not used.") % {"name": name}
              for name in unknown_parameters(params, reads=set(MATRIX_FILTERS) | {"sort"})]
    if sort and sort not in QUESTIONS:
        errors.append(gettext("sort: no such question: %(value)s") % {"value": sort})
    valid = filterset.is_valid() and not errors
    every = list(selectors.provider_list())
    providers = every
    if valid and any(name in filters for name in MATRIX_FILTERS):
        matching = set(selectors.providers_matching(filters=filterset).values_list("id", flat=True))
        providers = [provider for provider in providers if provider.id in matching]
    rows = []
    for provider in providers:
        cells = {cap.key: cap for cap in provider.capabilities.all()}
        name = provider.name_zh if get_language() == "zh-hans" and provider.name_zh else provider.name
        rows.append((provider, name, [(question, cells.get(question.key)) for question in CAPABILITIES]))
        label_cells(cells.values())
    if valid and sort:
        column = [q.key for q in CAPABILITIES].index(sort)
        rows.sort(key=lambda row: ANSWER_RANK.get(row[2][column][1].value if row[2][column][1] else UNKNOWN, 5))
    questions = [(q, guide_url(*CAPABILITY_GUIDES[q.key]) if q.key in CAPABILITY_GUIDES else "",
                  with_params(params, sort=None if sort == q.key else q.key)) for q in CAPABILITIES]
    form = filterset.form
    selects = []
    for name in MATRIX_FILTERS:
        field = form.fields[name]
        selects.append({"name": name, "label": field.label, "current": filters.get(name, ""),
                        "choices": [(str(value), label) for value, label in field.choices]})
    return render(request, "providers/index.html", {
        "rows": rows, "questions": questions, "selects": selects, "sort": sort, "errors": errors,
        "form": form if not form.is_valid() else None, "chips": active_filters(filters, form) if valid else [],
        "presets": MATRIX_PRESETS, "total": len(every),
    }, status=200 if valid else 400)


def _capability_groups(cells: dict[str, Capability]):
    groups = []
    for group_key, group_label in GROUPS.items():
        items = [(q, cells.get(q.key), guide_url(*CAPABILITY_GUIDES[q.key]) if q.key in CAPABILITY_GUIDES else "")
                 for q in CAPABILITIES if q.group == group_key]
        groups.append((group_label, items))
    return groups


def _places(provider: Provider) -> dict:
    """Where our sources list the provider's offers (continent, regions) and the continents where they list none:
    said on its page, so that a filter by continent that finds none of its machines is not read as "it sells none
    there" (Azure's bundled catalog covers US regions only)."""
    names = dict(CONTINENTS)
    places = selectors.offer_places(provider=provider)
    found = {code for code, _regions in places}
    missing = [str(name) for code, name in CONTINENTS if code not in found and code != GLOBAL] if places else []
    separator = "、" if (get_language() or "").startswith("zh") else ", "
    return {"places": [(names.get(code, code), regions) for code, regions in places],
            "places_missing": separator.join(missing)}


def provider_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Capability matrix with sources, managed versus bring-your-own for this provider, facts from its API, its
    offers (through the shared FilterSet) and the health of its data sources and of our source links."""
    provider = get_object_or_404(selectors.provider_list(), slug=slug)
    cells = {cap.key: cap for cap in provider.capabilities.all()}
    label_cells(cells.values())
    display = DisplayForm(canonical_query(request.GET), rates=display_conversions())
    conversion = display.conversion()
    filterset = offer_filterset(QueryDict(urlencode({"provider": provider.slug})), request=request)
    filterset.is_valid()
    page = offer_page(filterset, offer_reads.page_number(request.GET.get("page")) or 1)
    page.object_list = decorate_offers(page.object_list, conversion=conversion, unit="gpu")
    sources = [(source, run) for source, run in selectors.source_status_list() if source.provider_id == provider.id]
    links = selectors.link_check_map(urls=[cap.source_url for cap in cells.values() if cap.source_url])
    offering = cells.get("offering")
    return render(request, "providers/detail.html", {
        "provider": provider, "provider_name": in_language(provider.name, provider.name_zh),
        "groups": _capability_groups(cells), "page": page, "conversion": conversion,
        "display": display, "offering": offering.value if offering else UNKNOWN, "offering_cell": offering,
        "facts": list(selectors.kubernetes_fact_list(provider=provider)), "sources": sources,
        "broken_links": [check for check in links.values() if not check.ok],
        "checked_links": len(links),
        "guide_managed": guide_url("kubernetes-support", "managed-vs-byo"),
        "columns": plain_columns(), "params": canonical_query(request.GET),
        "stock_rows": _stock_rows(selectors.availability_summary(provider=provider)),
        "node_software": node_summary.provider_summary(provider.slug),
        "capacity_ways": [way.as_dict() for way in capacity.provider_ways(provider.slug)],
        "unpriced": pricing.UNPRICED.get(provider.slug),
        **_places(provider),
    })


def _node_row(slug: str) -> dict:
    """One provider's node-software column on the compare page: the default general GPU image of its first
    managed service (with today's driver), its best DRA answer, and its stacks."""
    summary = node_summary.provider_summary(slug)
    image = next((image for service in summary["services"] for image in service["images"]
                  if image["default"] and not image["gpus"]), None)
    return {"slug": slug, "image": image, "dra": node_fit.provider_dra(slug), "stacks": summary["stacks"]}


def _stock_rows(rows: list[dict]) -> list[dict]:
    """selectors.availability_summary's rows with their shares and longest stock-out as page text."""
    for row in rows:
        row["share_7d_text"], row["share_30d_text"] = share_text(row["share_7d"]), share_text(row["share_30d"])
        row["longest_text"] = duration_text(row["longest_stockout"])
    return rows


class CompareForm(forms.Form):
    provider = forms.MultipleChoiceField(label=_("Providers to compare (two to four)"),
                                         widget=forms.CheckboxSelectMultiple)

    def __init__(self, data, *, providers: list[Provider], initial=None):
        super().__init__(data, initial=initial)
        # Names in the page's language, as the chosen ones are shown above the form.
        self.fields["provider"].choices = [(p.slug, in_language(p.name, p.name_zh)) for p in providers]

    def clean_provider(self):
        chosen = self.cleaned_data["provider"]
        if not 2 <= len(chosen) <= 4:
            raise forms.ValidationError(_("Choose between two and four providers."))
        return chosen


def compare(request: HttpRequest) -> HttpResponse:
    """Two to four providers side by side: every capability (rows that differ highlighted) and the cheapest offer
    of each GPU model per provider (the cheapest of a row highlighted)."""
    providers = list(selectors.provider_list())
    params = canonical_query(request.GET)
    # Accept `provider=a,b` as the FilterSet does, so a link from the offers page's query works here too.
    data = QueryDict(mutable=True)
    data.setlist("provider", [s for v in params.getlist("provider") for s in v.split(",") if s])
    by_slug = {p.slug: p for p in providers}
    asked = list(dict.fromkeys(data.getlist("provider")))
    display = DisplayForm(params, rates=display_conversions())
    conversion = display.conversion()
    if len(asked) == 1 and asked[0] in by_slug:
        # "Compare with other providers" on a provider page: that provider chosen, ask for one more (not an error).
        form = CompareForm(None, providers=providers, initial={"provider": asked})
        first = by_slug[asked[0]]
        return render(request, "compare.html", {
            "form": form, "display": display, "conversion": conversion,
            "chosen_names": [in_language(first.name, first.name_zh)], "one_more": True})
    form = CompareForm(data if "provider" in params else None, providers=providers)
    context = {"form": form, "display": display, "conversion": conversion}
    if not form.is_bound or not form.is_valid():
        return render(request, "compare.html", context, status=400 if form.is_bound else 200)
    chosen = [by_slug[slug] for slug in dict.fromkeys(form.cleaned_data["provider"])]
    cells = {p.id: {cap.key: cap for cap in p.capabilities.all()} for p in chosen}
    for provider_cells in cells.values():
        label_cells(provider_cells.values())
    rows = []
    for group_key, group_label in GROUPS.items():
        for q in (q for q in CAPABILITIES if q.group == group_key):
            row_cells = [cells[p.id].get(q.key) for p in chosen]
            values = {cell.value if cell else UNKNOWN for cell in row_cells}
            named = [(in_language(p.name, p.name_zh), cell) for p, cell in zip(chosen, row_cells, strict=True)]
            rows.append({"group": group_label, "question": q, "cells": named, "differs": len(values) > 1,
                         "guide": guide_url(*CAPABILITY_GUIDES[q.key]) if q.key in CAPABILITY_GUIDES else ""})
    cheapest = selectors.cheapest_offers_by_gpu(provider_ids=[p.id for p in chosen])
    gpus = sorted({offer.gpu for offer in cheapest.values()}, key=lambda g: (g.vendor, g.family, g.name))
    price_rows = []
    for gpu in gpus:
        offers_row = [cheapest.get((p.id, gpu.id)) for p in chosen]
        for offer in offers_row:
            if offer is not None:
                offer.display_price = conversion.convert(offer.price_per_gpu_hour_usd)
                offer.kubernetes_html = offer_kubernetes_html(offer)
        prices = [o.price_per_gpu_hour_usd for o in offers_row if o is not None]
        price_rows.append({"gpu": gpu, "offers": offers_row, "best": min(prices) if len(prices) > 1 else None})
    context.update({"providers": chosen, "rows": rows, "price_rows": price_rows,
                    "node_rows": [_node_row(p.slug) for p in chosen],
                    "chosen_names": [in_language(p.name, p.name_zh) for p in chosen]})
    return render(request, "compare.html", context)




def source_status(request: HttpRequest) -> HttpResponse:
    sources = selectors.source_status_list()
    polls = selectors.availability_polls_latest()
    for source, _run in sources:
        source.latest_poll = polls.get(source.id)
    from providers.capabilities import offer_question_label
    from providers.coverage import kubernetes_coverage
    from providers.kubernetes import QUESTIONS as OFFER_QUESTIONS

    return render(request, "sources.html", {
        "sources": sources, "coverage": kubernetes_coverage(), "held": selectors.prices_held(),
        "research": selectors.research_logs(), "commitments": selectors.commitment_coverage(),
        "max_move": pricing.MAX_MOVE,
        "coverage_questions": [(question, offer_question_label(question)) for question in OFFER_QUESTIONS]})


def guide_index(request: HttpRequest) -> HttpResponse:
    return render(request, "guides/index.html", {"guides": GUIDES})


def guide_detail(request: HttpRequest, slug: str) -> HttpResponse:
    if slug not in GUIDES:
        raise Http404("no such guide")
    try:
        template = guide_template(slug, get_language())
    except TemplateDoesNotExist as error:
        logger.error("guide %s has no template: %s", slug, error)
        raise Http404("no such guide") from error
    return render(request, template, {"guides": GUIDES, "slug": slug, "title": GUIDES[slug]})


def not_found(request: HttpRequest, exception) -> HttpResponse:
    """A path that names nothing: under /api/ the JSON error every API answer uses (docs/api.md: `{"detail": ...}`),
    elsewhere the 404 page with the navigation."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": gettext("No API endpoint at %(path)s; the endpoints are listed at "
                                               "/api/docs/.") % {"path": request.path}}, status=404)
    return render(request, "404.html", {"request_path": request.path}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 page with the site's navigation in the visitor's language; Django's own handler renders it without the
    request (no language switcher, no current page). Should that fail too, a plain text answer.

    A database that is down or did not answer in time (comparator.settings.base.timeouts) is not a bug of the page:
    that answer is a 503 with Retry-After, JSON under /api/ (docs/operations.md, "Timeouts")."""
    error = sys.exc_info()[1]
    if isinstance(error, (OperationalError, InterfaceError)):
        logger.warning("database unavailable for %s: %s", request.path, error)
        message = gettext("The database is not answering just now. Please try again in a minute.")
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": message}, status=503)
        else:
            response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "30"
        return response
    try:
        return render(request, "500.html", status=500)
    except Exception:  # noqa: BLE001 - the error page must never raise in turn
        logger.exception("the 500 page itself failed")
        return HttpResponse("Server error", status=500, content_type="text/plain; charset=utf-8")
