"""Every page type of the site, on the bundled snapshot's own rows: one list for the checks that must see them all
(axe's WCAG rules in tests/browser/test_accessibility.py, the Chinese-completeness crawl in
tests/ui/test_chinese_crawl.py)."""

from django.db.models import Count


def pages() -> dict[str, str]:
    """Every page type, on the snapshot's own rows: the cheapest offer, the provider and GPU with the most offers,
    a provider without offers, the three providers with the most offers compared, an advisor answer with its
    manifest, a digest subscriber's manage page."""
    from django.utils import timezone

    from digest.models import Subscription
    from digest.tokens import manage_token_make
    from providers.models import GpuModel, Offer, Provider

    providers = Provider.objects.annotate(n=Count("offers")).order_by("-n", "slug")
    busiest = [provider.slug for provider in providers[:3]]
    idle = providers.filter(n=0).order_by("slug").first()
    gpu = GpuModel.objects.annotate(n=Count("offers")).order_by("-n", "slug").first()
    cheapest = Offer.objects.filter(price_per_gpu_hour_usd__isnull=False).order_by("price_per_gpu_hour_usd", "pk")[0]
    subscriber = Subscription.objects.create(email="reader@example.org", filter_query="gpu_family=H100",
                                             confirmed_at=timezone.now())
    found = {
        "offers": "/", "offers-filtered": "/?gpu_family=H100&offering=managed&mig=yes",
        "offers-error": "/?gpu_modle=h100", "offer": f"/offers/{cheapest.pk}/",
        "providers": "/providers/", "provider": f"/providers/{busiest[0]}/",
        "gpus": "/gpus/", "gpu": f"/gpus/{gpu.slug}/",
        "compare-pick": "/compare/", "compare-one": f"/compare/?provider={busiest[0]}",
        "compare": "/compare/?" + "&".join(f"provider={slug}" for slug in busiest),
        "charts": "/charts/", "sources": "/sources/", "guides": "/guides/", "guide": "/guides/gpu-sharing/",
        "advisor": "/advisor/", "advisor-answer": "/advisor/?kind=inference&model=llama-3.1-8b",
        "digest": "/digest/", "digest-subscribe": "/digest/subscribe/?gpu_family=H100",
        "digest-manage": f"/digest/manage/{manage_token_make(subscriber.key)}/", "not-found": "/no-such-page/",
    }
    if idle is not None:
        found["provider-no-offers"] = f"/providers/{idle.slug}/"
        found["offers-empty"] = f"/?provider={idle.slug}"
    return found
