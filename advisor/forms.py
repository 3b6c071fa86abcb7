"""The advisor page's form: the same inputs as AdviseInputSerializer, shaped for an HTML GET form (so a result can
be bookmarked and shared). Models to pack are typed as `count x GB` pairs, e.g. `4x16, 1x40`."""

from __future__ import annotations

import re
from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _

from providers.filters import CONTINENTS, gpu_choices, gpu_family_choices
from providers.filters.fields import CountryListField
from providers.presentation import gpu_name

from . import inputs, sizing
from .types import HOURS_PER_MONTH, KINDS, MUST_HAVES, SHARING_MODES, WHOLE, WorkloadSpec

_MODEL = re.compile(r"^\s*(\d+)\s*[x×*]\s*(\d+(?:\.\d+)?)\s*(?:gb)?\s*$", re.IGNORECASE)


class ModelsField(forms.CharField):
    """`4x16, 1x40` -> [(4, Decimal("16")), (1, Decimal("40"))]."""

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return []
        parts = [part for part in re.split(r"[,;\n]+", value) if part.strip()]
        if len(parts) > inputs.MAX_MODEL_LINES:
            raise forms.ValidationError(_("At most %(max)s model lines."), params={"max": inputs.MAX_MODEL_LINES})
        models = []
        for part in parts:
            match = _MODEL.match(part)
            count, memory = (int(match[1]), Decimal(match[2])) if match else (0, Decimal(0))
            if not match or not 1 <= count <= inputs.MAX_MODEL_REPLICAS or not 0 < memory <= inputs.MAX_MEMORY_GB:
                raise forms.ValidationError(
                    _("Write each model as replicas x GB, for example 4x16; not understood: %(part)s"),
                    params={"part": part.strip()})
            models.append((count, memory))
        return models


def _money(label):
    return forms.DecimalField(label=label, required=False, min_value=0, max_value=inputs.MAX_MONEY, decimal_places=2)


class AdvisorForm(forms.Form):
    kind = forms.ChoiceField(label=_("Workload"), choices=list(KINDS.items()), widget=forms.RadioSelect)
    model = forms.ChoiceField(label=_("Model"), required=False,
                              choices=[("", "—"), *((c.slug, c.name) for c in sizing.MODEL_CARDS.values())],
                              help_text=_("Sizes from its model card: parameters, layers, attention and KV heads."))
    parameters_b = forms.DecimalField(label=_("or parameters (billions)"), required=False, min_value=Decimal("0.01"),
                                      max_value=inputs.MAX_PARAMETERS_B, decimal_places=2)
    precision = forms.ChoiceField(label=_("Precision"), choices=list(sizing.PRECISIONS.items()), required=False,
                                  initial=sizing.FP16)
    replicas = forms.IntegerField(label=_("Replicas (inference)"), required=False, initial=1, min_value=1,
                                  max_value=inputs.MAX_MODEL_REPLICAS)
    context_tokens = forms.IntegerField(label=_("Context length (tokens)"), required=False, initial=8192,
                                        min_value=1, max_value=inputs.MAX_CONTEXT_TOKENS)
    concurrency = forms.IntegerField(label=_("Concurrent sequences per replica"), required=False, initial=1,
                                     min_value=1, max_value=inputs.MAX_CONCURRENCY)
    method = forms.ChoiceField(label=_("Fine-tune method (training)"), choices=list(sizing.METHODS.items()),
                               required=False, initial=sizing.FULL)
    optimizer = forms.ChoiceField(label=_("Optimizer (training)"), choices=list(sizing.OPTIMIZERS.items()),
                                  required=False, initial=sizing.ADAM)
    adapter_percent = forms.DecimalField(label=_("Adapter parameters (percent of the model, LoRA)"), required=False,
                                         min_value=Decimal("0.01"), max_value=100, decimal_places=2,
                                         help_text=_("Leave empty for 1%."))
    multi_node = forms.BooleanField(label=_("A replica may span several nodes"), required=False)
    kueue_queue = forms.RegexField(label=_("Kueue LocalQueue (optional)"), required=False, max_length=63,
                                   regex=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
    gpu = forms.ChoiceField(label=_("GPU model"), required=False)
    gpu_family = forms.ChoiceField(label=_("or GPU family"), required=False)
    gpu_memory_min_gb = forms.DecimalField(label=_("or minimum memory per GPU (GB)"), required=False,
                                           min_value=Decimal("0.01"), max_value=inputs.MAX_MEMORY_GB, decimal_places=2)
    gpus_per_node = forms.IntegerField(label=_("GPUs per node"), initial=1, required=False, min_value=1,
                                       max_value=inputs.MAX_GPUS_PER_NODE)
    nodes = forms.IntegerField(label=_("Nodes"), initial=1, required=False, min_value=1, max_value=inputs.MAX_NODES)
    hours_per_month = forms.DecimalField(label=_("Hours per month"), required=False, min_value=Decimal("0.01"),
                                         max_value=HOURS_PER_MONTH, decimal_places=2,
                                         help_text=_("Leave empty for always on (730 hours)."))
    utilisation_percent = forms.DecimalField(label=_("or utilisation (%)"), required=False,
                                             min_value=Decimal("0.01"), max_value=100, decimal_places=2)
    models = ModelsField(label=_("or models to pack as GB (experts)"), required=False,
                         help_text=_("Replicas x GB of GPU memory each, comma-separated, e.g. 4x16, 1x40."))
    sharing = forms.ChoiceField(label=_("GPU sharing"), choices=list(SHARING_MODES.items()),
                                required=False, initial=WHOLE)
    spot_ok = forms.BooleanField(label=_("Tolerates spot interruptions"), required=False)
    countries = CountryListField(label=_("Data may live in countries (ISO codes, comma-separated)"), required=False)
    continents = forms.MultipleChoiceField(label=_("or continents"), choices=CONTINENTS, required=False,
                                           widget=forms.CheckboxSelectMultiple)
    must_haves = forms.MultipleChoiceField(label=_("Must-haves"), choices=list(MUST_HAVES.items()),
                                           required=False, widget=forms.CheckboxSelectMultiple)
    min_nodes_kept = forms.IntegerField(label=_("Nodes kept up when a pool cannot scale to zero"), required=False,
                                        initial=1, min_value=0, max_value=inputs.MAX_NODES)
    purchase_price_usd = _money(_("Price of a comparable server (USD)"))
    power_usd_month = _money(_("Its power per month (USD)"))
    operations_usd_month = _money(_("Its operations per month (USD)"))
    offer_id = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Catalog names carry our qualifiers ("(form factor not stated)"), shown in the page's language.
        self.fields["gpu"].choices = [("", "—"), *((slug, gpu_name(name)) for slug, name in gpu_choices())]
        self.fields["gpu_family"].choices = [("", "—"), *gpu_family_choices()]

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        spec = inputs.spec_from_cleaned(cleaned)
        for name, message in inputs.spec_errors(spec).items():
            self.add_error(name, message)
        if not self.errors:
            cleaned["spec"] = spec
        return cleaned

    @property
    def spec(self) -> WorkloadSpec:
        return self.cleaned_data["spec"]
