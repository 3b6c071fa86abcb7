"""The advisor page: parses the GET form, asks the one selector, renders. Bad input re-renders the form with the
problems named at their fields and status 400."""

from django.shortcuts import render

from .forms import AdvisorForm
from .selectors import advice_get


def advisor_page(request):
    form = AdvisorForm(request.GET or None)
    advice = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            advice = advice_get(spec=form.spec)
        else:
            status = 400
    return render(request, "advisor/advisor.html", {"form": form, "advice": advice}, status=status)
