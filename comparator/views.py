"""Site pages. Each view parses the request, asks one selector and renders; no business logic here."""

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from providers import selectors
from providers.capabilities import CAPABILITIES, GROUPS


def home(request):
    offers = selectors.offer_list()
    page = Paginator(offers, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "home.html",
        {
            "page": page,
            "offer_count": page.paginator.count,
            "providers": selectors.provider_list(),
            "sources": selectors.source_status_list(),
        },
    )


def provider_index(request):
    providers = list(selectors.provider_list())
    rows = []
    for provider in providers:
        cells = {cap.key: cap for cap in provider.capabilities.all()}
        rows.append((provider, [cells.get(question.key) for question in CAPABILITIES]))
    return render(request, "providers/index.html", {"rows": rows, "questions": CAPABILITIES})


def provider_detail(request, slug):
    provider = get_object_or_404(selectors.provider_list(), slug=slug)
    cells = {cap.key: cap for cap in provider.capabilities.all()}
    groups = []
    for group_key, group_label in GROUPS.items():
        questions = [q for q in CAPABILITIES if q.group == group_key]
        groups.append((group_label, [(q, cells.get(q.key)) for q in questions]))
    offers = selectors.offer_list().filter(provider=provider)[:200]
    return render(request, "providers/detail.html", {"provider": provider, "groups": groups, "offers": offers})


def source_status(request):
    return render(request, "sources.html", {"sources": selectors.source_status_list()})


