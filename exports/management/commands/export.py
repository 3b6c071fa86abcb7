"""`manage.py export <opencost|kueue|skypilot> [--filter "gpu=h100&provider=aws"] [--option gpu_quota=16] [-o FILE]`:
the same export as /api/v1/exports/<tool>/, with the same filter and option rules (a bad one stops with its name)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError
from django.http import QueryDict
from rest_framework.exceptions import ValidationError

from exports.api import TOOL_PARAMETERS, render, tool_options
from exports.machines import selection
from providers.filters import OfferFilterSet, offer_filterset, unknown_parameters


class Command(BaseCommand):
    help = "Write the filtered offers as OpenCost CSV pricing, Kueue objects or SkyPilot's kubernetes.pricing."

    def add_arguments(self, parser):
        parser.add_argument("tool", choices=sorted(TOOL_PARAMETERS))
        parser.add_argument("--filter", default="", help="Offer filters as a query string, as the API reads them.")
        parser.add_argument("--option", action="append", default=[], help="A tool option, name=value (repeatable).")
        parser.add_argument("-o", "--output", help="File to write (default: standard output).")

    def handle(self, *args, tool, filter, option, output, **kwargs):
        params = QueryDict(filter)
        options = QueryDict("&".join(option))
        unknown = unknown_parameters(params, reads=OfferFilterSet.base_filters)
        unknown += unknown_parameters(options, reads=TOOL_PARAMETERS[tool])
        if unknown:
            raise CommandError(f"Unknown parameter(s): {', '.join(unknown)}")
        try:
            checked = tool_options(tool, options)
        except ValidationError as error:
            raise CommandError(str(error.detail)) from error
        filters = offer_filterset(params)
        if not filters.is_valid():
            raise CommandError("; ".join(f"{name}: {' '.join(errors)}" for name, errors in filters.errors.items()))
        chunks = render(tool, selection(filters=filters, params=params), checked)
        stream = open(output, "w", encoding="utf-8") if output else sys.stdout
        try:
            for chunk in chunks:
                stream.write(chunk)
        finally:
            if output:
                stream.close()
