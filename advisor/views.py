"""The advisor page: parses the GET form, asks the one selector, renders. Bad input re-renders the form with the
problems named at their fields and status 400. The page is throttled like POST /api/v1/advise/, in the same count
per client (each advice ranks every offer, whichever door it comes in by), and bounded by the same time budget."""

from django.shortcuts import render
from django.utils.translation import gettext as _

from providers.api import AdviseRateThrottle
from providers.filters import unknown_parameters

from .engine import AdviceRefused
from .forms import AdvisorForm
from .selectors import advice_get


def advisor_page(request):
    form = AdvisorForm(request.GET or None)
    advice = None
    status = 200
    refusal = ""
    retry_after = None
    if form.is_bound:
        unknown = unknown_parameters(request.GET, reads=form.fields)
        if not form.is_valid() or unknown:
            for name in unknown:  # a typo is named, never read as "not given"
                form.add_error(None, _("%(name)s: not a parameter of this page (a typo?); it was not used.") % {
                    "name": name})
            status = 400
        else:
            throttle = AdviseRateThrottle()
            if not throttle.allow_request(request, None):
                status, retry_after = 429, int(throttle.wait() or 60)
                refusal = _("Too many advice requests from your address; try again in %(seconds)s seconds.") % {
                    "seconds": retry_after}
            else:
                try:
                    advice = advice_get(spec=form.spec)
                except AdviceRefused as refused:  # over its time budget, or every advice slot busy
                    status, retry_after, refusal = 503, refused.retry_after, str(refused.message)
    response = render(request, "advisor/advisor.html", {"form": form, "advice": advice, "refusal": refusal},
                      status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response
