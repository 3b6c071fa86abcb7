"""Input and output serializers of POST /api/v1/advise/. Input: types and ranges here, rules across fields in
inputs.spec_errors (shared with the page's form). Output: the engine's Advice as JSON: money and every other
decimal a JSON number, as the rest of the API gives them; an offer's provider the same object the offers give."""

from __future__ import annotations

from decimal import Decimal

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from providers.filters import CONTINENTS, gpu_choices, gpu_family_choices
from providers.filters.fields import country_codes
from providers.serializers import GpuRefSerializer, NumberDecimalField, ProviderRefSerializer

from . import inputs, sizing
from .types import HOURS_PER_MONTH, KINDS, MUST_HAVES, SHARING_MODES, WHOLE, Note, OfferData, WorkloadSpec


class NumberInput(serializers.DecimalField):
    """A decimal given as a JSON number (the schema's type, as every number the API writes)."""

    def __init__(self, *args, **kwargs):
        kwargs["coerce_to_string"] = False
        super().__init__(*args, **kwargs)


# The JSON type each kind of field takes. DRF reads more than the schema states ("true" and 1 as a boolean, 5 as the
# text "5", "7" as an integer, "7.5" as a decimal); the advisor's input is a JSON document, so it takes the types
# its schema states, no others (schemathesis checks that a value of another type is refused).
JSON_TYPES = [
    (serializers.BooleanField, (bool,)),
    (serializers.IntegerField, (int,)),
    (serializers.DecimalField, (int, float)),
    (serializers.ChoiceField, (str,)),
    (serializers.CharField, (str,)),
]


class JsonTypedInput(serializers.Serializer):
    """Refuses a field whose JSON value is not of the type the schema gives it, with the field's own "invalid"
    message."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            errors = {}
            for name, field in self.fields.items():
                value = data.get(name)
                if value is None:
                    continue
                expected = next((types for kind, types in JSON_TYPES if isinstance(field, kind)), None)
                if expected and (not isinstance(value, expected) or (bool not in expected and isinstance(value, bool))):
                    message = field.error_messages.get("invalid") or field.error_messages["invalid_choice"]
                    errors[name] = [message.format(input=value)]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


def _money(**kwargs):
    return NumberInput(max_digits=14, decimal_places=2, min_value=Decimal(0), max_value=inputs.MAX_MONEY,
                                    required=False, allow_null=True, **kwargs)


class StrictFieldsMixin:
    """Refuses fields the serializer does not know (`replica` for `replicas` would otherwise be dropped silently and
    the advice computed for one replica), naming each with the fields it does know."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                known = ", ".join(sorted(self.fields))
                raise serializers.ValidationError(
                    {key: [_("Unknown field; the fields are: %(known)s.") % {"known": known}] for key in unknown})
        return super().to_internal_value(data)


class ModelNeedInputSerializer(StrictFieldsMixin, JsonTypedInput):
    count = serializers.IntegerField(min_value=1, max_value=inputs.MAX_MODEL_REPLICAS)
    memory_gb = NumberInput(max_digits=8, decimal_places=2, min_value=Decimal("0.01"),
                                         max_value=inputs.MAX_MEMORY_GB)


class CountryCodeField(serializers.CharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data).strip().upper()
        if len(value) != 2 or not value.isalpha():
            raise serializers.ValidationError(_("Use a two-letter ISO country code such as US or DE."))
        if value not in country_codes():
            # The same rule as the offers filter's `country` (an unassigned code such as UK or EU names no country).
            raise serializers.ValidationError(
                _("No country has the ISO code %(codes)s; use codes such as US or DE.") % {"codes": value})
        return value


class AdviseInputSerializer(StrictFieldsMixin, JsonTypedInput):
    kind = serializers.ChoiceField(choices=list(KINDS.items()))
    gpu = serializers.ChoiceField(choices=[], required=False, allow_null=True, allow_blank=True)
    gpu_family = serializers.ChoiceField(choices=[], required=False, allow_null=True, allow_blank=True)
    gpu_memory_min_gb = NumberInput(max_digits=8, decimal_places=2, min_value=Decimal("0.01"),
                                                 max_value=inputs.MAX_MEMORY_GB, required=False, allow_null=True)
    gpus_per_node = serializers.IntegerField(min_value=1, max_value=inputs.MAX_GPUS_PER_NODE, default=1)
    nodes = serializers.IntegerField(min_value=1, max_value=inputs.MAX_NODES, default=1)
    hours_per_month = NumberInput(max_digits=6, decimal_places=2, min_value=Decimal("0.01"),
                                               max_value=HOURS_PER_MONTH, required=False, allow_null=True)
    utilisation_percent = NumberInput(max_digits=5, decimal_places=2, min_value=Decimal("0.01"),
                                                   max_value=Decimal(100), required=False, allow_null=True)
    models = ModelNeedInputSerializer(many=True, required=False, max_length=inputs.MAX_MODEL_LINES)
    sharing = serializers.ChoiceField(choices=list(SHARING_MODES.items()), default=WHOLE)
    spot_ok = serializers.BooleanField(default=False)
    countries = serializers.ListField(child=CountryCodeField(), required=False, max_length=250)
    continents = serializers.ListField(child=serializers.ChoiceField(choices=CONTINENTS), required=False)
    must_haves = serializers.ListField(child=serializers.ChoiceField(choices=list(MUST_HAVES.items())),
                                       required=False)
    min_nodes_kept = serializers.IntegerField(min_value=0, max_value=inputs.MAX_NODES, default=1)
    purchase_price_usd = _money()
    power_usd_month = _money()
    operations_usd_month = _money()
    offer_id = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    model = serializers.ChoiceField(choices=[(c.slug, c.name) for c in sizing.MODEL_CARDS.values()], required=False,
                                    allow_null=True, allow_blank=True)
    parameters_b = NumberInput(max_digits=8, decimal_places=2, min_value=Decimal("0.01"),
                                            max_value=inputs.MAX_PARAMETERS_B, required=False, allow_null=True)
    precision = serializers.ChoiceField(choices=list(sizing.PRECISIONS.items()), default=sizing.FP16)
    context_tokens = serializers.IntegerField(min_value=1, max_value=inputs.MAX_CONTEXT_TOKENS, default=8192)
    concurrency = serializers.IntegerField(min_value=1, max_value=inputs.MAX_CONCURRENCY, default=1)
    replicas = serializers.IntegerField(min_value=1, max_value=inputs.MAX_MODEL_REPLICAS, default=1)
    optimizer = serializers.ChoiceField(choices=list(sizing.OPTIMIZERS.items()), default=sizing.ADAM)
    method = serializers.ChoiceField(choices=list(sizing.METHODS.items()), default=sizing.FULL)
    adapter_percent = NumberInput(max_digits=5, decimal_places=2, min_value=Decimal("0.01"),
                                               max_value=Decimal(100), required=False, allow_null=True)
    multi_node = serializers.BooleanField(default=False)
    # Blank (no queue) written into the pattern too, so the schema's pattern admits what the field accepts.
    kueue_queue = serializers.RegexField(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$", required=False,
                                         allow_blank=True, max_length=63)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The catalog lives in the database, so its choices are read per request, not at import.
        self.fields["gpu"].choices = gpu_choices()
        self.fields["gpu_family"].choices = gpu_family_choices()

    def validate(self, attrs):
        data = dict(attrs)
        data["models"] = [(m["count"], m["memory_gb"]) for m in attrs.get("models") or ()]
        spec = inputs.spec_from_cleaned(data)
        errors = inputs.spec_errors(spec)
        if errors:
            raise serializers.ValidationError({name: [message] for name, message in errors.items()})
        attrs["spec"] = spec
        return attrs

    @property
    def spec(self) -> WorkloadSpec:
        return self.validated_data["spec"]


# --- output ------------------------------------------------------------------------------------------------------


class NoteSchemaSerializer(serializers.Serializer):
    """Documents NoteField's shape in the OpenAPI schema."""

    code = serializers.CharField()
    text = serializers.CharField()
    source_url = serializers.CharField(allow_null=True)


@extend_schema_field(NoteSchemaSerializer)
class NoteField(serializers.Field):
    def to_representation(self, note: Note):
        return {"code": note.code, "text": str(note), "source_url": note.source_url or None}


class CellSerializer(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.CharField()
    label = serializers.CharField()
    detail = serializers.CharField()
    source_url = serializers.CharField()
    verified_on = serializers.DateField(allow_null=True)
    confidence = serializers.CharField()


class RequirementSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    importance = serializers.CharField()
    reason = NoteField()


class JudgementSerializer(serializers.Serializer):
    key = serializers.CharField(source="requirement.key")
    label = serializers.CharField(source="requirement.label")
    importance = serializers.CharField(source="requirement.importance")
    status = serializers.CharField()
    evidence = CellSerializer(many=True)
    note = NoteField(allow_null=True)


class OfferOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    provider = serializers.SerializerMethodField()
    instance_type = serializers.CharField()
    region = serializers.CharField()
    country = serializers.CharField()
    continent = serializers.CharField()
    gpu = serializers.SerializerMethodField(help_text="The catalog GPU model, as the offers give it; null when the "
                                                      "source's GPU name is not in the catalog (see gpu_name)")
    gpu_name = serializers.CharField()
    gpu_count = NumberDecimalField(max_digits=6, decimal_places=3)
    gpu_memory_gb = NumberDecimalField(max_digits=8, decimal_places=1, source="memory_per_gpu_gb",
                                             allow_null=True)
    price_hour_usd = NumberDecimalField(max_digits=12, decimal_places=5)
    spot_price_hour_usd = NumberDecimalField(max_digits=12, decimal_places=5, allow_null=True)
    availability = serializers.CharField()
    source_name = serializers.CharField()
    source_url = serializers.CharField()
    last_seen = serializers.DateTimeField(allow_null=True)
    form_factor = serializers.CharField(help_text="sxm, pcie or nvl where the machine's sources state it, else empty")
    vcpus = NumberDecimalField(max_digits=7, decimal_places=2, allow_null=True,
                               help_text="The machine's vCPUs, where its source states them (the host checks and "
                                         "the manifest's CPU requests use them)")
    ram_gb = NumberDecimalField(max_digits=9, decimal_places=2, allow_null=True,
                                help_text="The machine's RAM in GB, where its source states it")


    @extend_schema_field(GpuRefSerializer(allow_null=True))
    def get_gpu(self, offer: OfferData) -> dict | None:
        gpu = offer.gpu
        return None if gpu is None else {"slug": gpu.slug, "name": gpu.name, "vendor": gpu.vendor,
                                         "family": gpu.family, "memory_gb": float(gpu.memory_gb)}

    @extend_schema_field(ProviderRefSerializer)
    def get_provider(self, offer: OfferData) -> dict:
        return {"slug": offer.provider_slug, "name": offer.provider_name, "name_zh": offer.provider_name_zh,
                "kind": offer.provider_kind}


class CostSerializer(serializers.Serializer):
    hours = NumberDecimalField(max_digits=8, decimal_places=2)
    instances = serializers.IntegerField()
    price_kind = serializers.CharField()
    price_hour_usd = NumberDecimalField(max_digits=12, decimal_places=5)
    gpu_nodes_usd = NumberDecimalField(max_digits=16, decimal_places=2)
    control_plane_usd = NumberDecimalField(max_digits=16, decimal_places=2, allow_null=True)
    idle_nodes = serializers.IntegerField()
    idle_hours = NumberDecimalField(max_digits=8, decimal_places=2)
    idle_usd = NumberDecimalField(max_digits=16, decimal_places=2)
    total_usd = NumberDecimalField(max_digits=16, decimal_places=2)
    complete = serializers.BooleanField()
    flags = serializers.ListField(child=NoteField())


class ReplicaLayoutSerializer(serializers.Serializer):
    name = serializers.CharField()
    replicas = serializers.IntegerField()
    gpus_per_pod = serializers.IntegerField()
    pods_per_replica = serializers.IntegerField()
    resource = serializers.CharField()
    shared = serializers.CharField()
    hf_id = serializers.CharField()


class OptionSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    tier = serializers.IntegerField()
    verified = serializers.BooleanField()
    unverified = serializers.ListField(child=serializers.CharField(), help_text="Required items left unknown, and "
                                       "control_plane_fee when the fee is not known.")
    also_in = serializers.ListField(child=serializers.CharField(), help_text="Other regions of the same SKU.")
    gpus_needed = serializers.IntegerField()
    layouts = ReplicaLayoutSerializer(many=True)
    offer = OfferOutputSerializer()
    cost = CostSerializer()
    requirements = JudgementSerializer(many=True, source="judgements")


class LineSerializer(serializers.Serializer):
    text = serializers.SerializerMethodField()
    source_url = serializers.CharField()

    def get_text(self, line) -> str:
        return str(line)


class EstimateSerializer(serializers.Serializer):
    memory_gb = NumberDecimalField(max_digits=12, decimal_places=1)
    lower_bound = serializers.BooleanField()
    tp_degrees = serializers.ListField(child=serializers.IntegerField())
    lines = LineSerializer(many=True)


class MigUseSerializer(serializers.Serializer):
    profile = serializers.CharField()
    resource_name = serializers.CharField()
    replicas = serializers.IntegerField()
    per_gpu = serializers.IntegerField()
    gpus = serializers.IntegerField()


class PackingSerializer(serializers.Serializer):
    gpu_memory_gb = NumberDecimalField(max_digits=8, decimal_places=1)
    replicas = serializers.IntegerField()
    oversized = serializers.IntegerField()
    oversized_gpus = serializers.IntegerField()
    whole_gpus = serializers.IntegerField()
    mig_gpus = serializers.IntegerField(allow_null=True)
    mig_uses = MigUseSerializer(many=True)
    time_slicing_gpus = serializers.IntegerField()
    time_slicing_replicas = serializers.IntegerField()
    mps_gpus = serializers.IntegerField()
    mps_replicas = serializers.IntegerField()


class SlicePriceSerializer(serializers.Serializer):
    profile = serializers.CharField()
    per_gpu = serializers.IntegerField()
    usd_per_slice_hour = NumberDecimalField(max_digits=12, decimal_places=4)


class BreakEvenSerializer(serializers.Serializer):
    purchase_usd = NumberDecimalField(max_digits=16, decimal_places=2)
    own_monthly_usd = NumberDecimalField(max_digits=16, decimal_places=2)
    rent_monthly_usd = NumberDecimalField(max_digits=16, decimal_places=2, allow_null=True)
    months = NumberDecimalField(max_digits=10, decimal_places=1, allow_null=True)
    note = NoteField()


class ManifestSerializer(serializers.Serializer):
    yaml = serializers.CharField()
    notes = serializers.ListField(child=serializers.CharField())
    objects = serializers.ListField(child=serializers.DictField(child=serializers.JSONField()))


class AdviceOutputSerializer(serializers.Serializer):
    kind = serializers.CharField(source="spec.kind")
    hours_per_month = NumberDecimalField(max_digits=8, decimal_places=2, source="hours")
    kubernetes_needed = serializers.BooleanField()
    kind_note = NoteField()
    requirements = RequirementSerializer(many=True)
    estimate = EstimateSerializer(allow_null=True)
    options = OptionSerializer(many=True)
    unverified = OptionSerializer(many=True)
    candidates = serializers.IntegerField()
    ranked = serializers.IntegerField()
    excluded_missing = serializers.DictField(child=serializers.IntegerField())
    excluded_unpriced = serializers.IntegerField()
    excluded_too_small = serializers.IntegerField()
    excluded_memory_unknown = serializers.IntegerField()
    chosen_offer_id = serializers.IntegerField(source="chosen.offer.id", allow_null=True, default=None)
    packing = PackingSerializer(allow_null=True)
    mig_slice_prices = SlicePriceSerializer(many=True, source="slice_prices")
    break_even = BreakEvenSerializer(allow_null=True)
    manifest = ManifestSerializer(allow_null=True)
    assumptions = serializers.ListField(child=NoteField())
