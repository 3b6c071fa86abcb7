"""Output serializers of the REST API (providers.api): one per operation, read-only, never used to write.

Money and sizes are JSON numbers (not DRF's default strings) so that `jq 'sort_by(.price_per_gpu_hour_usd)'` and
pandas work without conversion; they are quantised to the column's places first, so no float noise is invented.
Every offer carries its provenance (the source, its revision and date, when the offer was first and last seen,
whether its source is stale) and every capability cell its source, verified date, confidence and origin; a question
without a stored answer is rendered as "unknown", never dropped.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import ISO_8601, serializers
from rest_framework.settings import api_settings

from nodesoftware import summary as node_summary

from . import capacity, pricing
from . import kubernetes as k8s
from .api_schema import sometimes_absent
from .capabilities import CAPABILITIES, UNKNOWN
from .models import Capability, DataSource, GpuModel, KubernetesFact, Offer, PriceObservation, Provider, ScrapeRun
from .selectors import is_stale, kubernetes_answers_of


class NumberDecimalField(serializers.DecimalField):
    """A Decimal column rendered as a JSON number.

    The columns hold at most 5 decimal places, which a float renders exactly as written (3.73, not 3.7300000001);
    converting directly skips DRF's re-quantising of every value, a large share of the time a page of offers takes.
    A computed value with more places than the field's (the advisor's costs) is rounded to them first, as DRF's
    string output rounds it.
    """

    def __init__(self, *args, **kwargs):
        kwargs["coerce_to_string"] = False
        super().__init__(*args, **kwargs)

    def to_representation(self, value):
        if value is None:
            return None
        if self.decimal_places is not None and value.as_tuple().exponent < -self.decimal_places:
            value = self.quantize(value)
        return float(value)


class OutputSerializer(serializers.ModelSerializer):
    """ModelSerializer whose DecimalFields render as numbers; the API never accepts input through these.

    URL columns are plain strings in the schema: an optional one (a GPU without MIG has no MIG source) is "", which
    is not a valid `format: uri`."""

    serializer_field_mapping = {**serializers.ModelSerializer.serializer_field_mapping,
                                models.DecimalField: NumberDecimalField, models.URLField: serializers.CharField}


def _absolute(request, url: str) -> str:
    return request.build_absolute_uri(url) if request is not None else url


# --- nested pieces -------------------------------------------------------------------------------------------------


class ProviderRefSerializer(OutputSerializer):
    class Meta:
        model = Provider
        fields = ["slug", "name", "name_zh", "kind"]


class GpuRefSerializer(OutputSerializer):
    class Meta:
        model = GpuModel
        fields = ["slug", "name", "vendor", "family", "memory_gb"]


class OfferSourceSerializer(OutputSerializer):
    """Where an offer's numbers come from: the source, the revision or date of its data, when it last succeeded."""

    class Meta:
        model = DataSource
        fields = ["slug", "name", "kind", "url", "license", "revision", "as_of", "last_success_at",
                  "price_evidence", "price_evidence_zh", "price_evidence_url"]


# --- offers --------------------------------------------------------------------------------------------------------


ANSWER_HELP = ("yes / no / unknown / n/a (does not apply) / not_on_this_machine (the provider offers it, not on this "
               "machine)")


class KubernetesStateSerializer(serializers.Serializer):
    answer = serializers.ChoiceField(choices=list(k8s.STATES), help_text=ANSWER_HELP)


class KubernetesAnswerSerializer(KubernetesStateSerializer):
    reason = serializers.CharField(help_text="Why, in English, naming the facts the rule used")
    reason_zh = sometimes_absent(serializers.CharField(required=False, help_text=(
        "The same reason in Simplified Chinese (the facts' own details stay as their sources state them); absent "
        "where no translation is stored")))
    sources = serializers.ListField(child=serializers.URLField(), help_text="The source URLs of those facts")
    inferred = serializers.BooleanField(help_text=(
        "True when the answer rests on an inferred cell or fact (read from what a source implies, not what it "
        "states; the pages mark it ~): check its sources before relying on it. With documented_only=true the "
        "filters count such an answer as unknown"))
    confidence = serializers.ChoiceField(choices=["documented", "third_party", "inferred", ""], help_text=(
        "How sure the answer is: as sure as the least sure cell or fact it rests on. documented (the provider's or "
        "the GPU maker's own pages), third_party (it rests on a page of someone else, such as a catalog or a "
        "tool's source code: the pages mark it ³), inferred (as `inferred`; the pages mark it ~); blank when the "
        "answer cites no source"))
    verified_on = serializers.DateField(allow_null=True, help_text=(
        "The oldest day one of its sources was checked (each cell and fact carries the day it was verified); null "
        "when none of its sources is dated, such as a GPU maker's page"))


class KubernetesRdmaStateSerializer(KubernetesStateSerializer):
    fabric = serializers.ChoiceField(choices=list(k8s.FABRIC_VALUES), help_text="The fabric between nodes")
    efa_interfaces = serializers.IntegerField(allow_null=True, help_text="EFA interfaces (EFA only)")
    fabric_class = serializers.ChoiceField(choices=list(k8s.FABRIC_CLASSES), help_text=(
        "gpudirect_rdma: GPUDirect RDMA between nodes (InfiniBand, RoCE, RDMA of an unstated protocol, InfiniBand or "
        "RoCE depending on the cluster, EFA on types AWS lists for GPUDirect RDMA); gpudirect_tcp: GPU-direct over "
        "TCP (GPUDirect-TCPX/TCPXO, multi-node capable, not RDMA); plain: any other network; unknown"))
    interfaces = serializers.IntegerField(allow_null=True, help_text="The fabric's interfaces (EFA) or NICs, "
                                                                      "where a source states them")
    bandwidth_gbps = serializers.FloatField(allow_null=True, help_text="The node's total fabric bandwidth in "
                                                                        "Gbit/s, where a source states it")


class KubernetesRdmaAnswerSerializer(KubernetesAnswerSerializer, KubernetesRdmaStateSerializer):
    pass


class OfferKubernetesSerializer(serializers.Serializer):
    """Every Kubernetes answer about THIS offer's machine, derived from the provider's cells, the instance type's
    facts and the GPU model (providers.kubernetes), each with its reason and sources."""


for _question in k8s.QUESTIONS:
    OfferKubernetesSerializer._declared_fields[_question] = (
        KubernetesRdmaAnswerSerializer if _question == "rdma" else KubernetesAnswerSerializer
    )(help_text=k8s.QUESTION_LABELS[_question])


class OfferKubernetesStatesSerializer(serializers.Serializer):
    """The list's `kubernetes` object: every answer about this offer's machine without its reason and sources, which
    the offer's own `url` gives (or the list with kubernetes_reasons=true)."""


for _question in k8s.QUESTIONS:
    OfferKubernetesStatesSerializer._declared_fields[_question] = (
        KubernetesRdmaStateSerializer if _question == "rdma" else KubernetesStateSerializer
    )(help_text=k8s.QUESTION_LABELS[_question])


def kubernetes_states(data: dict) -> dict:
    """kubernetes_data's object without the reasons and sources: what the offers list gives by default."""
    return {question: ({"answer": answer["answer"], "fabric": answer["fabric"],
                        "efa_interfaces": answer["efa_interfaces"], **rdma_shape(answer)} if question == "rdma" else
                       {"answer": answer["answer"]})
            for question, answer in data.items()}


def rdma_shape(answer: dict) -> dict:
    """The rdma answer's fabric class, interface count and bandwidth (stored answers older than them lack them)."""
    return {"fabric_class": answer.get("fabric_class", k8s.UNKNOWN), "interfaces": answer.get("interfaces"),
            "bandwidth_gbps": answer.get("bandwidth_gbps")}


# Stored answers (the objects selectors keep per profile and computed_at, by identity; each kept alive here so its id
# cannot be reused) -> their `kubernetes` objects: the states only, and with the reasons, shared by every offer of the
# profile and never changed in place. Cleared when full: it only saves work.
_SHARED: dict[int, tuple[dict, dict, dict]] = {}
MAX_SHARED_ANSWERS = 20_000


def _kubernetes_shared(answers: dict | None, *, reasons: bool) -> dict:
    if answers is None:
        data = kubernetes_data(None)
        return data if reasons else kubernetes_states(data)
    entry = _SHARED.get(id(answers))
    if entry is None or entry[0] is not answers:
        if len(_SHARED) >= MAX_SHARED_ANSWERS:
            _SHARED.clear()
        data = kubernetes_data(answers)
        entry = _SHARED[id(answers)] = (answers, kubernetes_states(data), data)
    return entry[2] if reasons else entry[1]


def kubernetes_data(answers: dict | None) -> dict:
    """The `kubernetes` object of an offer from its stored answers (KubernetesProfile.answers), in question order;
    every question unknown when none are stored."""
    if answers and all(question in answers for question in k8s.QUESTIONS) and "verified_on" in answers["mig"]:
        # Stored in the API's shape by kubernetes_profiles.offer_kubernetes_refresh: passed through in question order.
        return {question: answers[question] for question in k8s.QUESTIONS}
    data = {}
    for question, answer in kubernetes_answers_of(answers).items():
        if question == "fabric":
            continue
        entry = {"answer": answer.state, "reason": answer.reason, "sources": answer.sources}
        if question == "rdma":
            entry["fabric"] = answer.fabric or k8s.UNKNOWN
            entry["efa_interfaces"] = answer.efa_interfaces
            entry.update(fabric_class=answer.fabric_class or k8s.UNKNOWN, interfaces=answer.interfaces,
                         bandwidth_gbps=answer.bandwidth_gbps)
        entry["inferred"] = answer.inferred
        entry["confidence"] = answer.confidence
        entry["verified_on"] = answer.verified_on
        data[question] = entry
    return data


class OfferSerializer(OutputSerializer):
    """One offer with its provider, GPU model and provenance, from selectors.offer_list (source joined, `is_stale`
    annotated), so nothing costs a query per row."""

    provider = ProviderRefSerializer()
    gpu = GpuRefSerializer(allow_null=True, help_text="The catalog GPU model; null when the source's GPU name is "
                                                      "not in our catalog (see gpu_name)")
    source = OfferSourceSerializer()
    is_stale = serializers.SerializerMethodField(
        help_text="True when the offer's source has not succeeded within STALE_AFTER_HOURS: its price may be old")
    url = serializers.SerializerMethodField()
    retires_on = serializers.SerializerMethodField(
        help_text="The day its provider retires (or retired) this machine type, from a sourced list; null when none "
                  "is known. A retired type is not in the live list")
    price_is_old = serializers.SerializerMethodField(
        help_text="True when price_as_of is more than pricing.OLD_AFTER_DAYS (180) days old; false when undated")
    availability_recorded = serializers.SerializerMethodField(
        help_text="True when the last stock check was a replay of a recorded answer (the bundled snapshot): "
                  "availability_checked_at is then the recording's date")
    kubernetes = serializers.SerializerMethodField()

    class Meta:
        model = Offer
        fields = [
            "id", "url", "provider", "instance_type", "region", "country", "continent", "region_confirmed", "gpu",
            "gpu_name",
            "gpu_count", "gpu_memory_gb", "gpu_memory_usable_gb", "vcpus", "ram_gb", "currency", "price_hour",
            "spot_price_hour",
            "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd", "spot_price_per_gpu_hour_usd",
            "availability", "available_count", "availability_checked_at", "availability_since",
            "availability_recorded", "in_stock_share_7d", "in_stock_share_30d",
            "first_seen", "last_seen", "is_active", "is_stale", "price_as_of", "price_dated_by", "price_is_old",
            "retires_on",
            "price_source_url", "gpu_fraction", "form_factor", "efa_interfaces", "spot_savings_pct",
            "spot_interruption", "spot_as_of", "commit_1y_price_hour_usd", "commit_1y_price_per_gpu_hour_usd",
            "commit_3y_price_hour_usd", "commit_3y_price_per_gpu_hour_usd", "commitment_as_of",
            "commitment_source_url", "source", "kubernetes",
        ]
        extra_kwargs = {
            "price_as_of": {"help_text": "When the source's data says the row's prices held: the on-demand and the "
                                         "spot price come from the same row and share it (commitment prices have "
                                         "commitment_as_of); null when undated (price_dated_by)"},
            "spot_as_of": {"help_text": "The date of AWS's Spot Instance Advisor data behind spot_savings_pct and "
                                        "spot_interruption, not of a spot price (price_as_of dates that); null when "
                                        "there is none"},
            "availability_checked_at": {"help_text": "When the stock was last checked (null: never stated); a failed "
                                                     "check leaves the state and this time as they were"},
            "availability_since": {"help_text": "Since when the offer has been in this state (its latest change)"},
            "in_stock_share_7d": {"help_text": "Share (0..1) of stock checks in the last 7 days that found it in "
                                               "stock (available or limited); null when never checked"},
            "in_stock_share_30d": {"help_text": "The same over the last 30 days"},
            "commit_1y_price_hour_usd": {"help_text": "USD per instance-hour under a 1-year commitment (Google's "
                                                      "resource-based committed use discount); null: no source we "
                                                      "read states one"},
            "commit_3y_price_hour_usd": {"help_text": "The same under a 3-year commitment"},
            "commitment_as_of": {"help_text": "The date of the commitment prices' data"},
            "commitment_source_url": {"help_text": "The file the commitment prices come from"},
        }

    @extend_schema_field(serializers.DateField(allow_null=True))
    def get_retires_on(self, offer: Offer) -> str | None:
        return pricing.retires_on(offer.provider.slug, offer.instance_type)

    def get_price_is_old(self, offer: Offer) -> bool:
        return pricing.is_old(offer.price_as_of, timezone.now())

    def get_availability_recorded(self, offer: Offer) -> bool:
        return bool(offer.availability_recorded)

    @extend_schema_field(OfferKubernetesSerializer)
    def get_kubernetes(self, offer: Offer) -> dict:
        profile = offer.kubernetes_profile
        return kubernetes_data(profile.answers if profile is not None else None)

    def get_is_stale(self, offer: Offer) -> bool:
        annotated = getattr(offer, "is_stale", None)
        if annotated is not None:
            return annotated
        # An offer loaded without offer_list's annotation (compare's cheapest offers): same rule, source is joined.
        return is_stale(offer.source.last_success_at)

    def get_url(self, offer: Offer) -> str:
        return _absolute(self.context.get("request"), reverse("api:offer-detail", args=[offer.id]))


class OfferDetailSerializer(OfferSerializer):
    """One offer as its own URL gives it: OfferSerializer plus `node_software` (not in the list, whose rows are
    built by offer_data)."""

    node_software = serializers.SerializerMethodField(
        help_text="The GPU's compute capability and dtypes (or runtime and target for non-NVIDIA accelerators), and "
                  "the default node image and NVIDIA driver branch this GPU gets on the provider's managed "
                  "Kubernetes (nodesoftware/); null node when nothing is recorded for the provider")

    class Meta(OfferSerializer.Meta):
        fields = [*OfferSerializer.Meta.fields, "node_software"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_node_software(self, offer: Offer) -> dict:
        gpu = offer.gpu
        return node_summary.offer_summary(offer.provider.slug, gpu.slug if gpu else None,
                                          gpu.architecture if gpu else "")


class OfferListSerializer(OfferSerializer):
    """An offer as the offers list gives it: `kubernetes` holds each answer's state (and the fabric), not its reason
    and sources, which the offer's `url` gives; with the context's `kubernetes_reasons`, all of it, as
    OfferSerializer. The reasons are three quarters of a page's JSON (255 KB for 50 offers, 94 KB without)."""

    @extend_schema_field(PolymorphicProxySerializer(
        component_name="OfferListKubernetes", resource_type_field_name=None,
        serializers=[OfferKubernetesSerializer, OfferKubernetesStatesSerializer],
        help_text="With kubernetes_reasons=true, every answer with its reasons and sources (OfferKubernetes, as "
                  "an offer's own URL gives it); otherwise the answers alone (OfferKubernetesStates)"))
    def get_kubernetes(self, offer: Offer) -> dict:
        data = super().get_kubernetes(offer)
        return data if self.context.get("kubernetes_reasons") else kubernetes_states(data)

    # The list's CSV columns: the states (with kubernetes_reasons the API writes OfferSerializer's columns instead).
    get_kubernetes.csv_columns_from = OfferKubernetesStatesSerializer


class OfferListCsvSerializer(OfferListSerializer):
    """The list's CSV columns: `kubernetes` is the answers alone (one column per answer, `kubernetes.mig.answer`);
    the JSON schema's either-or object cannot name columns."""

    @extend_schema_field(OfferKubernetesStatesSerializer)
    def get_kubernetes(self, offer: Offer) -> dict:
        return super().get_kubernetes(offer)


_DATETIME = serializers.DateTimeField()
_DATE = serializers.DateField()
_URL_ID = "offer-id"  # stands for the id in the detail URL reversed once per page


def _number(value):
    return None if value is None else float(value)


def _datetime_renderer():
    """DRF's DateTimeField output (ISO 8601 in the current time zone, "Z" for UTC), with the time zone looked up once
    per page instead of once per value; DRF itself whenever the settings ask for another format."""
    if not settings.USE_TZ or api_settings.DATETIME_FORMAT is None or api_settings.DATETIME_FORMAT.lower() != ISO_8601:
        return lambda value: None if value is None else _DATETIME.to_representation(value)
    zone = timezone.get_current_timezone()

    def render(value):
        if value is None:
            return None
        text = value.astimezone(zone).isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    return render


def offer_data(rows: list[dict], *, request=None, reasons: bool = False) -> list[dict]:
    """OfferListSerializer's output for rows of offer_reads.offer_rows, built as plain dicts (with `reasons`, each
    Kubernetes answer's reason and sources too, as OfferSerializer gives them).

    The API's list pages use this: DRF's per-field machinery cost as much as the rest of the request for 50 offers.
    The same keys in the same order and the same values (tests/api/test_offer_data.py compares it with the
    serializers on every kind of offer), so the JSON and CSV do not change; the serializers stay the definition
    (the schema, details, compare and the streamed CSV use it). Text columns are used as they come: the database
    gives str or None, which is what DRF's CharField makes of them."""
    url_head, url_tail = _absolute(request, reverse("api:offer-detail", args=[_URL_ID])).rsplit(_URL_ID, 1)
    moment = _datetime_renderer()
    data = []
    for row in rows:
        gpu = None if row["gpu_id"] is None else {
            "slug": row["gpu__slug"], "name": row["gpu__name"], "vendor": row["gpu__vendor"],
            "family": row["gpu__family"], "memory_gb": _number(row["gpu__memory_gb"]),
        }
        as_of = row["source__as_of"]
        data.append({
            "id": row["id"],
            "url": f"{url_head}{row['id']}{url_tail}",
            "provider": {"slug": row["provider__slug"], "name": row["provider__name"],
                         "name_zh": row["provider__name_zh"], "kind": row["provider__kind"]},
            "instance_type": row["instance_type"],
            "region": row["region"],
            "country": row["country"],
            "continent": row["continent"],
            "region_confirmed": row["region_confirmed"],
            "gpu": gpu,
            "gpu_name": row["gpu_name"],
            "gpu_count": _number(row["gpu_count"]),
            "gpu_memory_gb": _number(row["gpu_memory_gb"]),
            "gpu_memory_usable_gb": _number(row["gpu_memory_usable_gb"]),
            "vcpus": _number(row["vcpus"]),
            "ram_gb": _number(row["ram_gb"]),
            "currency": row["currency"],
            "price_hour": _number(row["price_hour"]),
            "spot_price_hour": _number(row["spot_price_hour"]),
            "price_hour_usd": _number(row["price_hour_usd"]),
            "spot_price_hour_usd": _number(row["spot_price_hour_usd"]),
            "price_per_gpu_hour_usd": _number(row["price_per_gpu_hour_usd"]),
            "spot_price_per_gpu_hour_usd": _number(row["spot_price_per_gpu_hour_usd"]),
            "availability": row["availability"],
            "available_count": None if row["available_count"] is None else int(row["available_count"]),
            "availability_checked_at": moment(row["availability_checked_at"]),
            "availability_since": moment(row["availability_since"]),
            "availability_recorded": bool(row["availability_recorded"]),
            "in_stock_share_7d": _number(row["in_stock_share_7d"]),
            "in_stock_share_30d": _number(row["in_stock_share_30d"]),
            "first_seen": moment(row["first_seen"]),
            "last_seen": moment(row["last_seen"]),
            "is_active": row["is_active"],
            "is_stale": row["is_stale"],
            "price_as_of": moment(row["price_as_of"]),
            "price_dated_by": row["price_dated_by"],
            "price_is_old": row["price_is_old"],
            "retires_on": pricing.retires_on(row["provider__slug"], row["instance_type"]),
            "price_source_url": row["price_source_url"],
            "gpu_fraction": _number(row["gpu_fraction"]),
            "form_factor": row["form_factor"],
            "efa_interfaces": row["efa_interfaces"],
            "spot_savings_pct": row["spot_savings_pct"],
            "spot_interruption": row["spot_interruption"],
            "spot_as_of": None if row["spot_as_of"] is None else _DATE.to_representation(row["spot_as_of"]),
            "commit_1y_price_hour_usd": _number(row["commit_1y_price_hour_usd"]),
            "commit_1y_price_per_gpu_hour_usd": _number(row["commit_1y_price_per_gpu_hour_usd"]),
            "commit_3y_price_hour_usd": _number(row["commit_3y_price_hour_usd"]),
            "commit_3y_price_per_gpu_hour_usd": _number(row["commit_3y_price_per_gpu_hour_usd"]),
            "commitment_as_of": (None if row["commitment_as_of"] is None
                                 else _DATE.to_representation(row["commitment_as_of"])),
            "commitment_source_url": row["commitment_source_url"],
            "source": {
                "slug": row["source__slug"], "name": row["source__name"],
                "kind": row["source__kind"], "url": row["source__url"],
                "license": row["source__license"], "revision": row["source__revision"],
                "as_of": None if as_of is None else _DATE.to_representation(as_of),
                "last_success_at": moment(row["source__last_success_at"]),
                "price_evidence": row["source__price_evidence"],
                "price_evidence_zh": row["source__price_evidence_zh"],
                "price_evidence_url": row["source__price_evidence_url"],
            },
            "kubernetes": _kubernetes_shared(row["kubernetes_profile__answers"], reasons=reasons),
        })
    return data


class PriceObservationSerializer(OutputSerializer):
    class Meta:
        model = PriceObservation
        fields = ["observed_at", "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd",
                  "availability", "available_count", "run"]
        extra_kwargs = {"run": {"help_text": "The scrape run that observed this change (null if it was deleted)"}}


# --- capabilities --------------------------------------------------------------------------------------------------


class CapabilityCellSerializer(serializers.Serializer):
    """One Kubernetes question answered for one provider, with where the answer comes from."""

    key = serializers.CharField()
    question = serializers.CharField(help_text="The question, in the request's language")
    group = serializers.CharField()
    value = serializers.CharField(help_text='The machine-readable answer; "unknown" when nobody has a sourced answer')
    label = serializers.CharField(allow_blank=True)
    detail = serializers.CharField(allow_blank=True)
    label_zh = serializers.CharField(allow_blank=True, help_text="Our Simplified Chinese rendering of `label`; blank "
                                                                 "when there is none (provider-API facts)")
    detail_zh = serializers.CharField(allow_blank=True, help_text="Our Simplified Chinese rendering of `detail`")
    amount = NumberDecimalField(max_digits=10, decimal_places=4, allow_null=True,
                                help_text="control_plane_fee=paid: the fee per cluster-hour, in `currency`")
    currency = serializers.CharField(allow_blank=True)
    source_url = serializers.CharField(allow_blank=True)
    verified_on = serializers.DateField(allow_null=True)
    confidence = serializers.CharField(allow_blank=True, help_text="documented | third_party | inferred; blank when "
                                                                   "unknown")
    origin = serializers.CharField(allow_blank=True, help_text="curated | provider_api; blank when unknown")
    fetched_at = serializers.DateTimeField(allow_null=True, help_text="When a provider API reported this value")


def capability_cells(cells: dict[str, Capability]) -> list[dict]:
    """Every question of providers.capabilities.CAPABILITIES in its order, answered from `cells` or "unknown"."""
    rows = []
    for question in CAPABILITIES:
        cell = cells.get(question.key)
        rows.append({
            "key": question.key,
            "question": str(question.label),
            "group": question.group,
            "value": cell.value if cell else UNKNOWN,
            "label": cell.label if cell else "",
            "detail": cell.detail if cell else "",
            "label_zh": cell.label_zh if cell else "",
            "detail_zh": cell.detail_zh if cell else "",
            "amount": cell.amount if cell else None,
            "currency": cell.currency if cell else "",
            "source_url": cell.source_url if cell else "",
            "verified_on": cell.verified_on if cell else None,
            "confidence": cell.confidence if cell else "",
            "origin": cell.origin if cell else "",
            "fetched_at": cell.fetched_at if cell else None,
        })
    return rows


# One field per question, so the CSV of the provider list has a column per capability.
CapabilityValuesSerializer = type(
    "CapabilityValuesSerializer",
    (serializers.Serializer,),
    {question.key: serializers.CharField(help_text=str(question.label)) for question in CAPABILITIES},
)


# --- providers -----------------------------------------------------------------------------------------------------


class ProviderListSerializer(OutputSerializer):
    active_offers = serializers.IntegerField()
    capabilities = serializers.SerializerMethodField(help_text='Each question\'s answer ("unknown" when none); '
                                                               "the provider's detail has sources and dates")
    url = serializers.SerializerMethodField()

    class Meta:
        model = Provider
        fields = ["slug", "url", "name", "name_zh", "website", "kind", "headquarters", "active_offers",
                  "capabilities"]

    @extend_schema_field(CapabilityValuesSerializer)
    def get_capabilities(self, provider: Provider) -> dict:
        values = {cell.key: cell.value for cell in provider.capabilities.all()}
        return {question.key: values.get(question.key, UNKNOWN) for question in CAPABILITIES}

    def get_url(self, provider: Provider) -> str:
        return _absolute(self.context.get("request"), reverse("api:provider-detail", args=[provider.slug]))


class KubernetesFactSerializer(OutputSerializer):
    source = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    value = serializers.JSONField(help_text="As the provider API states it: text, number, list or mapping")

    class Meta:
        model = KubernetesFact
        fields = ["name", "value", "source", "source_url", "fetched_at"]


class SourceRefSerializer(OutputSerializer):
    class Meta:
        model = DataSource
        fields = ["slug", "name", "kind", "url", "license", "revision", "as_of"]


class CapacityWaySerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(capacity.KINDS), help_text="reservation, capacity_block or queued")
    kind_label = serializers.CharField()
    name = serializers.CharField()
    name_zh = serializers.CharField()
    detail = serializers.CharField()
    detail_zh = serializers.CharField()
    source_url = serializers.URLField()
    verified_on = serializers.DateField()


class UnpricedSerializer(serializers.Serializer):
    reason = serializers.CharField()
    price_page = serializers.URLField()
    checked_on = serializers.DateField()


class ProviderDetailSerializer(OutputSerializer):
    active_offers = serializers.IntegerField()
    capabilities = serializers.SerializerMethodField()
    kubernetes_facts = KubernetesFactSerializer(many=True)
    sources = SourceRefSerializer(many=True)
    node_software = serializers.SerializerMethodField(
        help_text="GPU node images of the provider's managed Kubernetes services with the driver each installs "
                  "today and its dated history, Kubernetes versions with support end dates, DRA readiness, and "
                  "training stacks with their status and source (docs/node-software.md)")

    capacity = serializers.SerializerMethodField(
        help_text="Ways to get GPU capacity beyond on-demand rental (kind: quota, reservation, capacity_block, "
                  "queued), each "
                  "with its source and date; [] when not researched yet, which is not 'none' (docs/pricing.md)")

    why_unpriced = serializers.SerializerMethodField(
        help_text="When the provider has no active offer: why no source we read prices it, the provider's own price "
                  "page and the day we looked; null when it has offers or we have no stated reason")

    class Meta:
        model = Provider
        fields = ["slug", "name", "name_zh", "website", "kind", "headquarters", "active_offers", "capabilities",
                  "kubernetes_facts", "sources", "node_software", "capacity", "why_unpriced"]

    @extend_schema_field(UnpricedSerializer(allow_null=True))
    def get_why_unpriced(self, provider: Provider) -> dict | None:
        unpriced = pricing.UNPRICED.get(provider.slug)
        if unpriced is None or provider.active_offers:
            return None
        return {"reason": str(unpriced.reason), "price_page": unpriced.price_page, "checked_on": unpriced.checked_on}

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_node_software(self, provider: Provider) -> dict:
        return node_summary.provider_summary(provider.slug)

    @extend_schema_field(CapacityWaySerializer(many=True))
    def get_capacity(self, provider: Provider) -> list[dict]:
        return [way.as_dict() for way in capacity.provider_ways(provider.slug)]

    @extend_schema_field(CapabilityCellSerializer(many=True))
    def get_capabilities(self, provider: Provider) -> list[dict]:
        cells = capability_cells({cell.key: cell for cell in provider.capabilities.all()})
        return CapabilityCellSerializer(cells, many=True).data


# --- GPU catalog ---------------------------------------------------------------------------------------------------


class GpuSerializer(OutputSerializer):
    active_offers = serializers.IntegerField()
    provider_count = serializers.IntegerField(help_text="Providers with at least one active offer of this GPU")
    cheapest_price_per_gpu_hour_usd = NumberDecimalField(source="cheapest_usd", max_digits=12, decimal_places=5,
                                                         allow_null=True)
    mig_profiles = serializers.ListField(child=serializers.CharField(), help_text="[] when the GPU has no MIG")

    class Meta:
        model = GpuModel
        fields = ["slug", "name", "vendor", "family", "architecture", "memory_gb", "memory_type", "form_factor",
                  "mig_profiles", "mig_source_url", "source_url", "verified_on", "active_offers", "provider_count",
                  "cheapest_price_per_gpu_hour_usd"]


# --- data sources --------------------------------------------------------------------------------------------------


class ScrapeRunSerializer(OutputSerializer):
    unknown_gpus = serializers.DictField(child=serializers.IntegerField(),
                                         help_text="GPU names the catalog did not know -> rows")

    class Meta:
        model = ScrapeRun
        fields = ["id", "started_at", "finished_at", "status", "offline", "created", "updated", "unchanged",
                  "deactivated", "skipped", "unknown_gpus", "error"]


class SourceStatusSerializer(serializers.Serializer):
    """A data source, its latest run (whatever the outcome) and the age of its latest good data, rendered from the
    {source, last_run} rows the API view builds from selectors.source_status_list (which annotates the source)."""

    slug = serializers.CharField(source="source.slug")
    name = serializers.CharField(source="source.name")
    kind = serializers.CharField(source="source.kind")
    provider = ProviderRefSerializer(source="source.provider")
    url = serializers.CharField(source="source.url")
    license = serializers.CharField(source="source.license", allow_blank=True)
    revision = serializers.CharField(source="source.revision", allow_blank=True)
    as_of = serializers.DateField(source="source.as_of", allow_null=True)
    last_success_at = serializers.DateTimeField(source="source.last_success_at", allow_null=True)
    age_hours = serializers.SerializerMethodField(help_text="Hours since the last successful run; null if none")
    is_stale = serializers.BooleanField(source="source.is_stale", help_text="No successful run within "
                                                                            "STALE_AFTER_HOURS, or never")
    last_run = ScrapeRunSerializer(allow_null=True)

    def get_age_hours(self, row) -> float | None:
        age = row["source"].age
        return None if age is None else round(age.total_seconds() / 3600, 2)


# --- compare -------------------------------------------------------------------------------------------------------


class CompareAnswerSerializer(serializers.Serializer):
    """One provider's answer to one question (the fields of a capability cell)."""

    provider = ProviderRefSerializer()
    value = serializers.CharField()
    label = serializers.CharField(allow_blank=True)
    detail = serializers.CharField(allow_blank=True)
    label_zh = serializers.CharField(allow_blank=True)
    detail_zh = serializers.CharField(allow_blank=True)
    amount = NumberDecimalField(max_digits=10, decimal_places=4, allow_null=True)
    currency = serializers.CharField(allow_blank=True)
    source_url = serializers.CharField(allow_blank=True)
    verified_on = serializers.DateField(allow_null=True)
    confidence = serializers.CharField(allow_blank=True)
    origin = serializers.CharField(allow_blank=True)
    fetched_at = serializers.DateTimeField(allow_null=True)


class CompareQuestionSerializer(serializers.Serializer):
    key = serializers.CharField()
    question = serializers.CharField()
    group = serializers.CharField()
    answers = CompareAnswerSerializer(many=True, help_text="One answer per provider, in the order asked")


class CompareCheapestSerializer(serializers.Serializer):
    provider = ProviderRefSerializer()
    offer = OfferSerializer(allow_null=True, help_text="The provider's cheapest active offer per GPU-hour of this "
                                                       "GPU; null when it has none")


class CompareGpuSerializer(serializers.Serializer):
    gpu = GpuRefSerializer()
    cheapest = CompareCheapestSerializer(many=True)


class CompareSerializer(serializers.Serializer):
    """Capabilities side by side and, per GPU model any of them offers, each provider's cheapest offer."""

    providers = ProviderRefSerializer(many=True)
    capabilities = CompareQuestionSerializer(many=True)
    gpus = CompareGpuSerializer(many=True)
