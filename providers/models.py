"""The domain: providers, their Kubernetes capabilities (each with provenance), the GPU catalog, rentable offers with
their price and availability history, the data sources and every run that fed them.

Nothing here computes or writes on its own: the writing services (runs.py, ingest.py, facts_sync.py,
availability_sync.py, kubernetes_profiles.py, ...) write, selectors.py reads.
"""

from django.db import models
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _


class ProviderKind(models.TextChoices):
    HYPERSCALER = "hyperscaler", _("Hyperscaler")
    GPU_CLOUD = "gpu_cloud", _("GPU cloud")
    MARKETPLACE = "marketplace", _("Marketplace")
    REGIONAL_CLOUD = "regional_cloud", _("Regional cloud")


class Provider(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    name_zh = models.CharField(max_length=100, blank=True)
    website = models.URLField()
    kind = models.CharField(max_length=20, choices=ProviderKind.choices)
    headquarters = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2 country code")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Confidence(models.TextChoices):
    DOCUMENTED = "documented", _("Documented by the provider")
    THIRD_PARTY = "third_party", _("Documented by a third party")
    INFERRED = "inferred", _("Inferred")


class CapabilityOrigin(models.TextChoices):
    CURATED = "curated", _("Curated by us")
    PROVIDER_API = "provider_api", _("Provider API")
    CATALOG = "catalog", _("Public catalog")
    DATASET = "dataset", _("Public dataset")


class Capability(models.Model):
    """One answered question about one provider's Kubernetes offering ("MIG supported?" -> "yes"), with its source.

    The question is `key` (see providers.capabilities.CAPABILITIES for the questions and their allowed answers);
    the machine-readable answer is `value`, so a filter asks `key="mig", value="yes"` and never parses prose.
    An unknown answer is stored as "unknown", never guessed.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="capabilities")
    key = models.CharField(max_length=32)
    value = models.CharField(max_length=32)
    label = models.CharField(max_length=200, blank=True)
    detail = models.TextField(blank=True)
    # Our Simplified Chinese rendering of `label` and `detail` (curated cells); empty for provider-API facts, whose
    # English text is then shown on Chinese pages too.
    label_zh = models.CharField(max_length=200, blank=True)
    detail_zh = models.TextField(blank=True)
    amount = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    verified_on = models.DateField(null=True, blank=True)
    confidence = models.CharField(max_length=20, choices=Confidence.choices, blank=True)
    origin = models.CharField(max_length=20, choices=CapabilityOrigin.choices, default=CapabilityOrigin.CURATED)
    fetched_at = models.DateTimeField(null=True, blank=True, help_text="When a provider API reported this value")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "key"], name="capability_unique_per_provider")]
        indexes = [models.Index(fields=["key", "value"])]

    def __str__(self) -> str:
        return f"{self.provider_id}:{self.key}={self.value}"

    @property
    def label_text(self) -> str:
        """The label in the active language (the English one where no translation is stored)."""
        return in_language(self.label, self.label_zh)

    @property
    def detail_text(self) -> str:
        """The detail in the active language (the English one where no translation is stored), as a reason: a
        curated English detail's research log ("Round 4 (2026-12-02): ...") is on the sources page, not here."""
        from .capabilities import research_split

        return in_language(research_split(self.detail)[0], self.detail_zh)


def in_language(english: str, chinese: str) -> str:
    """`chinese` when the active language is Simplified Chinese and there is one, else `english`."""
    return chinese if chinese and get_language() == "zh-hans" else english


class CapabilityChange(models.Model):
    """A recorded change of a capability's answer (curated edit or a fresher provider-API fact)."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="capability_changes")
    key = models.CharField(max_length=32)
    old_value = models.CharField(max_length=32, blank=True)
    new_value = models.CharField(max_length=32)
    old_label = models.CharField(max_length=200, blank=True)
    new_label = models.CharField(max_length=200, blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    origin = models.CharField(max_length=20, choices=CapabilityOrigin.choices)
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["-changed_at"]
        indexes = [models.Index(fields=["changed_at"])]

    def __str__(self) -> str:
        return f"{self.provider_id}:{self.key} {self.old_value or '-'} -> {self.new_value}"


class GpuVendor(models.TextChoices):
    NVIDIA = "nvidia", "NVIDIA"
    AMD = "amd", "AMD"
    INTEL = "intel", "Intel"
    OTHER = "other", _("Other")


class GpuModel(models.Model):
    """One accelerator of the curated catalog (scrapers/data/gpus.toml)."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    vendor = models.CharField(max_length=10, choices=GpuVendor.choices)
    family = models.CharField(max_length=40, db_index=True)
    architecture = models.CharField(max_length=40)
    memory_gb = models.DecimalField(max_digits=7, decimal_places=1)
    memory_type = models.CharField(max_length=20, blank=True)
    form_factor = models.CharField(max_length=20)
    mig_profiles = models.JSONField(default=list, blank=True)
    mig_source_url = models.URLField(max_length=500, blank=True)
    source_url = models.URLField(max_length=500)
    verified_on = models.DateField()

    class Meta:
        ordering = ["vendor", "family", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def supports_mig(self) -> bool:
        return bool(self.mig_profiles)

    # What the catalog writes when no vendor or provider page names the architecture (scrapers/data/README.md).
    ARCHITECTURE_NOT_STATED = "not stated"

    @property
    def architecture_shown(self) -> str:
        """The architecture in the reader's language: the catalog's "not stated" is a word to translate."""
        return _("not stated") if self.architecture == self.ARCHITECTURE_NOT_STATED else self.architecture


class SourceKind(models.TextChoices):
    API = "api", _("Provider API")
    CATALOG = "catalog", _("Public catalog")
    CURATED = "curated", _("Curated price table")


class DataSource(models.Model):
    """Where offers come from: one provider API, one public catalog file, or one curated price page."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=10, choices=SourceKind.choices)
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="sources")
    url = models.URLField(max_length=500)
    license = models.CharField(max_length=100, blank=True)
    as_of = models.DateField(null=True, blank=True, help_text="Date of the data when the source states one")
    revision = models.CharField(max_length=64, blank=True, help_text="e.g. the catalog's git commit")
    # How the prices of a source that states no date were dated by content identity (providers/pricing.py): what
    # they equal, and the original that shows it. Empty when the source states its own dates or none were matched.
    price_evidence = models.TextField(blank=True, help_text="What the undated prices were found equal to")
    price_evidence_zh = models.TextField(blank=True, help_text="The same in Chinese")
    price_evidence_url = models.URLField(max_length=500, blank=True)
    # Denormalised from ScrapeRun by runs.source_scrape so that flagging stale offers is a join, not a
    # subquery per offer (selectors.offer_list annotates `is_stale` from it).
    last_success_at = models.DateTimeField(
        null=True, blank=True, help_text="Start of the latest successful run: when its offers were last confirmed"
    )
    # The shrink guard's baseline (providers/ingest.py): the most offers one successful run of this source has
    # named since an operator last accepted a shrink, so runs that each lose a little cannot erode the set unseen.
    full_set_size = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most offers a successful run has named since a shrink was last accepted"
    )

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name

    @property
    def price_evidence_shown(self) -> str:
        """The dating evidence in the page's language (the Chinese text on Chinese pages)."""
        return in_language(self.price_evidence, self.price_evidence_zh)


class RunStatus(models.TextChoices):
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    NOT_CONFIGURED = "not_configured", _("Not configured")


class ScrapeRun(models.Model):
    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="runs")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.RUNNING)
    offline = models.BooleanField(default=False, help_text="Replayed from recorded payloads")
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    deactivated = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0, help_text="Rows refused as invalid")
    held = models.PositiveIntegerField(default=0, help_text="Rows whose price the price guard held back")
    corrected = models.PositiveIntegerField(
        default=0, help_text="Rows stored with a value corrected at ingest (the reason is in rejections)")
    unknown_gpus = models.JSONField(default=dict, blank=True, help_text="Unmapped GPU name -> row count")
    capabilities_changed = models.PositiveIntegerField(
        default=0, help_text="Capabilities whose value, label or amount the provider API changed"
    )
    capabilities_rejected = models.PositiveIntegerField(
        default=0, help_text="Capability facts refused as invalid (unknown key or value, no source URL)"
    )
    facts_stored = models.PositiveIntegerField(default=0, help_text="Kubernetes facts stored from this run")
    rejections = models.JSONField(
        default=list, blank=True, help_text="Why rows or facts were refused (the first ones, for reviewers)"
    )
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["source", "-started_at"])]

    def __str__(self) -> str:
        return f"{self.source_id} {self.started_at:%Y-%m-%d %H:%M} {self.status}"


class KubernetesFact(models.Model):
    """A free-form Kubernetes fact a provider API states that is not one of the capability questions (supported
    Kubernetes versions, regions with managed Kubernetes), shown beside the curated capabilities.

    One row per (source, name); a later successful run of the source overwrites the value and `fetched_at`. A fact
    the API stops reporting is kept with its old `fetched_at`, so its age stays visible instead of it vanishing.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="kubernetes_facts")
    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="kubernetes_facts")
    name = models.CharField(max_length=100)
    value = models.JSONField()
    source_url = models.URLField(max_length=500, help_text="The API the fact came from")
    fetched_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["source", "name"], name="kubernetes_fact_unique_per_source")]

    def __str__(self) -> str:
        return f"{self.source_id}:{self.name}"

    @property
    def display_value(self) -> str:
        """The value as short text for pages: lists joined with commas, mappings as `key: value` pairs."""
        if isinstance(self.value, list):
            return ", ".join(str(item) for item in self.value)
        if isinstance(self.value, dict):
            return "; ".join(f"{key}: {item}" for key, item in self.value.items())
        return str(self.value)


class LinkCheck(models.Model):
    """The latest answer of one curated source URL to the weekly link check (link_check.source_links_check).

    `ok` is false for a 4xx/5xx answer, a timeout or a connection error; `failing_since` keeps the first failed check
    of the current failure streak, so a page or an admin can tell a link that just flickered from one long dead.
    """

    url = models.URLField(max_length=500, unique=True)
    ok = models.BooleanField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    checked_at = models.DateTimeField()
    failing_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["ok", "url"]

    def __str__(self) -> str:
        return f"{self.url} {'ok' if self.ok else 'broken'}"


class InstanceTypeFact(models.Model):
    """One sourced fact about one of a provider's instance types (the second layer of providers.kubernetes): can it
    be a node of the provider's managed Kubernetes, can you join it to your own cluster, its fabric between nodes
    (kind in `value`; interface count, bandwidth and, for EFA, GPUDirect RDMA beside it), its GPU-to-GPU link, its
    GPU count, share of a GPU, memory per GPU (numbers in `number`) or form factor.

    `pattern` is an exact instance type or an fnmatch pattern (`Standard_NV*as_v4`); the most specific match wins
    (providers.kubernetes.Fact.precedence). Sourced like a capability cell: value, source URL, verified date,
    confidence and origin (curated data files, a provider API's node-type list, a public catalog such as Karpenter's
    instance-type table). facts_sync.instance_facts_sync replaces one provider's facts of one origin at a time.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="instance_facts")
    pattern = models.CharField(max_length=120)
    key = models.CharField(max_length=32)
    value = models.CharField(max_length=32)
    number = models.DecimalField(max_digits=9, decimal_places=4, null=True, blank=True,
                                 help_text="GPU count, share of a GPU or memory per GPU (GB)")
    interfaces = models.PositiveSmallIntegerField(null=True, blank=True,
                                                  help_text="Fabric only: EFA interfaces or InfiniBand/RoCE NICs")
    bandwidth_gbps = models.DecimalField(max_digits=9, decimal_places=2, null=True, blank=True,
                                         help_text="Fabric only: the node's total fabric bandwidth, Gbit/s")
    gpudirect_rdma = models.BooleanField(null=True, blank=True,
                                         help_text="EFA only: AWS lists the type as supporting GPUDirect RDMA")
    detail = models.TextField(blank=True)
    detail_zh = models.TextField(blank=True, help_text="The detail in Simplified Chinese (the Chinese reasons use it)")
    source_url = models.URLField(max_length=500, blank=True)
    verified_on = models.DateField(null=True, blank=True)
    confidence = models.CharField(max_length=20, choices=Confidence.choices, blank=True)
    origin = models.CharField(max_length=20, choices=CapabilityOrigin.choices, default=CapabilityOrigin.CURATED)

    class Meta:
        ordering = ["provider", "pattern", "key"]
        constraints = [models.UniqueConstraint(fields=["provider", "pattern", "key", "origin"],
                                               name="instance_fact_unique")]

    def __str__(self) -> str:
        return f"{self.provider_id}:{self.pattern}:{self.key}={self.value}"


class KubernetesProfile(models.Model):
    """The stored Kubernetes answers shared by every offer of one (provider, instance type, GPU model, GPU count):
    what providers.kubernetes.derive says for that machine, recomputed by kubernetes_profiles.offer_kubernetes_refresh.

    One column per question holds its state, so a filter reads the matching profile ids from this small table
    and filters offers by `kubernetes_profile_id IN (...)`; `answers` holds every answer with its reason and sources
    for the API and the pages; `inferred` lists the questions whose answer rests on an inferred cell or fact (what
    `documented_only` leaves out).
    """

    key = models.CharField(max_length=250, unique=True)
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="kubernetes_profiles")
    instance_type = models.CharField(max_length=120)
    gpu = models.ForeignKey(GpuModel, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    gpu_count = models.DecimalField(max_digits=6, decimal_places=3)
    managed_node = models.CharField(max_length=20)
    byo = models.CharField(max_length=20)
    mig = models.CharField(max_length=20)
    mps = models.CharField(max_length=20)
    time_slicing = models.CharField(max_length=20)
    vendor_sharing = models.CharField(max_length=20)
    rdma = models.CharField(max_length=20)
    fabric = models.CharField(max_length=20)
    fabric_class = models.CharField(max_length=20, default="unknown",
                                    help_text="gpudirect_rdma, gpudirect_tcp, plain or unknown (providers.kubernetes)")
    efa_interfaces = models.PositiveSmallIntegerField(null=True, blank=True)
    gpu_operator = models.CharField(max_length=20)
    node_autoscaling = models.CharField(max_length=20)
    scale_to_zero = models.CharField(max_length=20)
    spot_nodes = models.CharField(max_length=20)
    rwx_storage = models.CharField(max_length=20)
    gang_scheduling = models.CharField(max_length=20)
    answers = models.JSONField(default=dict)
    inferred = models.JSONField(default=list, blank=True)
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.key


class Availability(models.TextChoices):
    AVAILABLE = "available", _("Available")
    LIMITED = "limited", _("Limited")
    UNAVAILABLE = "unavailable", _("Unavailable")
    UNKNOWN = "unknown", _("Unknown")


# Offer columns the price indexes carry (INCLUDE, PostgreSQL): what the place, region-basis and spot filters check.
FILTERED_IN_INDEX = ["continent", "country", "region_confirmed", "spot_price_hour"]
# What the indexes a page walks in its order (price per GPU-hour, instance price, memory) carry besides their key:
# every column the common filters check, so that a walk for 50 matches is index-only however far it goes
# (migration 0025).
WALKED_INDEX_INCLUDES = ["gpu", "provider", "kubernetes_profile", *FILTERED_IN_INDEX, "gpu_count", "gpu_memory_gb"]
# What the (GPU | continent, instance price) indexes carry besides their key: the walked indexes' columns but the
# place and GPU (each index adds those it lacks), and the price per GPU-hour (a ceiling on it is the commonest filter).
HOUR_INDEX_INCLUDES = ["provider", "kubernetes_profile", "country", "spot_price_hour", "gpu_count", "gpu_memory_gb",
                       "price_per_gpu_hour_usd"]


class Offer(models.Model):
    """One rentable configuration in one region, as one source reports it.

    Natural key: (source, instance_type, region). Prices are kept in the source's currency and normalised to USD
    (`*_usd`) at ingestion with a dated rate; `price_per_gpu_hour_usd` is what users compare.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="offers")
    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="offers")
    instance_type = models.CharField(max_length=120)
    region = models.CharField(max_length=120)
    country = models.CharField(max_length=2, blank=True)
    continent = models.CharField(max_length=2, blank=True,
                                 help_text="AF AN AS EU NA OC SA, or WW: the source ties the price to no region")
    # Whether the provider itself says the machine is sold in this region (its API, a regional price list, its page),
    # or only a third-party catalog copied it there (providers/data/region_basis.toml).
    # Nullable so that adding it rewrites no table (SQLite); every run writes True or False, as does the migration.
    region_confirmed = models.BooleanField(null=True, blank=True,
                                           help_text="The provider states the machine in this region")
    gpu = models.ForeignKey(GpuModel, on_delete=models.PROTECT, null=True, blank=True, related_name="offers")
    gpu_name = models.CharField(max_length=100, help_text="The GPU name as the source wrote it")
    gpu_count = models.DecimalField(max_digits=6, decimal_places=3)
    gpu_memory_gb = models.DecimalField(max_digits=8, decimal_places=1, null=True, blank=True,
                                        help_text="Per GPU (per slice for a share of one), as the GPU is sold")
    # What the source reported where it is below the memory the GPU is sold with (the driver's figure: an A10G or L4
    # is sold as 24 GB and reports 22.4); null where the two agree or the GPU is not known.
    gpu_memory_usable_gb = models.DecimalField(max_digits=8, decimal_places=1, null=True, blank=True,
                                               help_text="Usable memory per GPU as reported, where below as sold")
    vcpus = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    ram_gb = models.DecimalField(max_digits=9, decimal_places=2, null=True, blank=True)
    currency = models.CharField(max_length=3)
    price_hour = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    spot_price_hour = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    spot_price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    price_per_gpu_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    spot_price_per_gpu_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    availability = models.CharField(max_length=12, choices=Availability.choices, default=Availability.UNKNOWN)
    available_count = models.PositiveIntegerField(null=True, blank=True)
    # Written by availability_sync.availability_apply only (never by a price run's row comparison): when the state was
    # last checked, since when it has been what it is (the latest AvailabilityChange), whether that check was a replay
    # of a recording, and the share of checks in stock over the last 7 and 30 days (0..1, from AvailabilityDay, summed
    # in the database at each check). All null while nothing ever stated the offer's stock. None is indexed, so the
    # per-poll update stays a HOT update like last_seen's.
    availability_checked_at = models.DateTimeField(null=True, blank=True)
    availability_since = models.DateTimeField(null=True, blank=True)
    # Null (not False) by default: COPY writes no Django default, and SQLite adds a nullable column without a table
    # rebuild (a rebuild would recreate the PostgreSQL-only memory index of migration 0004).
    availability_recorded = models.BooleanField(null=True, blank=True)
    in_stock_share_7d = models.DecimalField(max_digits=5, decimal_places=4, null=True, blank=True)
    in_stock_share_30d = models.DecimalField(max_digits=5, decimal_places=4, null=True, blank=True)
    # The data's own date, apart from when we last read it (last_seen): the date a file states, its commit's date,
    # or the fetch time of a live run. Null when a replayed recording states none. `seen_within_hours` filters on it.
    price_as_of = models.DateTimeField(null=True, blank=True, help_text="When the source's data says the price held")
    price_source_url = models.URLField(max_length=500, blank=True,
                                       help_text="The file this row's price came from, where a source reads several")
    # How price_as_of is known (providers/pricing.py): "source" (the source states it), "inferred" (equal to a dated
    # record, the evidence on the source) or null (undated, or read live without a date of its own). Nullable so
    # SQLite adds the column without a table rebuild (see availability_recorded).
    price_dated_by = models.CharField(max_length=8, null=True, blank=True,  # noqa: DJ001
                                      help_text="source, inferred, or null when undated")
    gpu_fraction = models.DecimalField(
        max_digits=6, decimal_places=4, null=True, blank=True,
        help_text="Share of one GPU when the instance has less than one (gpu_count holds the same share)")
    form_factor = models.CharField(max_length=8, blank=True, help_text="sxm, pcie or nvl when stated")
    efa_interfaces = models.PositiveSmallIntegerField(null=True, blank=True,
                                                      help_text="AWS EFA interfaces (RDMA), when stated")
    spot_savings_pct = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="AWS Spot Advisor: savings versus on-demand, percent (not a spot price)")
    spot_interruption = models.CharField(max_length=12, blank=True,
                                         help_text="AWS Spot Advisor interruption-frequency bucket, e.g. <5%")
    spot_as_of = models.DateField(null=True, blank=True, help_text="Date of the spot savings/interruption data")
    # The price per hour under a 1- or 3-year commitment (Google's resource-based committed use discounts), in USD,
    # per instance and per GPU, with the date and file it comes from (another file than the on-demand price's). Null
    # where no source we read states one: not "no commitment". All nullable so SQLite adds them without a rebuild.
    commit_1y_price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    commit_1y_price_per_gpu_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    commit_3y_price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    commit_3y_price_per_gpu_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    commitment_as_of = models.DateField(null=True, blank=True, help_text="Date of the commitment prices' data")
    commitment_source_url = models.URLField(max_length=500, null=True, blank=True,  # noqa: DJ001
                                            help_text="The file the commitment prices come from")
    first_seen = models.DateTimeField()
    # Advanced by every successful run that lists the offer. Keep it out of indexes: the per-run update of every
    # active offer relies on being a HOT update on PostgreSQL (migration 0003).
    last_seen = models.DateTimeField()
    is_active = models.BooleanField(default=True)
    last_run = models.ForeignKey(ScrapeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                                 help_text="The run that last created, changed or reactivated it")
    # Its derived Kubernetes answers (kubernetes_profiles.offer_kubernetes_refresh). No index: filters combine it with
    # the price-ordered indexes above, and keeping it out of them keeps the per-run last_seen update a HOT update.
    kubernetes_profile = models.ForeignKey("KubernetesProfile", on_delete=models.SET_NULL, null=True, blank=True,
                                           related_name="offers", db_index=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "instance_type", "region"], name="offer_natural_key"),
        ]
        # What the OfferFilterSet reads most (migration 0004 says why): active offers in the default order (price per
        # GPU-hour, id), the same within one GPU model or provider (filters resolve slugs and capability answers to
        # ids first), per instance-hour and by memory, largest first. Partial on is_active, which every default query
        # asks; ending in id, the tiebreak of every ordering, so a page is read in index order without a sort.
        # last_seen stays out of every index (see above). The memory index exists on PostgreSQL only (SQLite cannot
        # write NULLS LAST in an index; migration 0004).
        # The price indexes carry the columns the common filters check besides their key (place, region basis,
        # spot): a range is then filtered in the index alone, where it was walked to its end on the table (at
        # 1,000,000 offers a continent filter's page took 199-386 ms that way, 15-30 ms this way; migration 0023).
        indexes = [
            models.Index(fields=["price_per_gpu_hour_usd", "id"], include=WALKED_INDEX_INCLUDES,
                         condition=models.Q(is_active=True), name="offer_active_price"),
            models.Index(fields=["gpu", "price_per_gpu_hour_usd", "id"], include=FILTERED_IN_INDEX,
                         condition=models.Q(is_active=True), name="offer_active_gpu_price"),
            models.Index(fields=["provider", "price_per_gpu_hour_usd", "id"], include=FILTERED_IN_INDEX,
                         condition=models.Q(is_active=True), name="offer_active_provider_price"),
            # Per machine profile by price: the per-offer Kubernetes filters resolve to profiles, read as one range
            # each (offer_reads.offer_page_ids); without it "managed node + MIG" walked the whole price index.
            models.Index(fields=["kubernetes_profile", "price_per_gpu_hour_usd", "id"], include=FILTERED_IN_INDEX,
                         condition=models.Q(is_active=True), name="offer_active_profile_price"),
            # Per continent and region basis by price: a continent filter (with its confirmed regions, or the
            # catalog-only ones it counts as left out) is one range of it, not a walk of the price index that skips
            # every other continent's offers (migration 0024).
            models.Index(fields=["continent", "region_confirmed", "price_per_gpu_hour_usd", "id"],
                         include=["gpu", "provider", "kubernetes_profile", "country", "spot_price_hour"],
                         condition=models.Q(is_active=True), name="offer_active_place_price"),
            models.Index(fields=["price_hour_usd", "id"], include=[*WALKED_INDEX_INCLUDES, "price_per_gpu_hour_usd"],
                         condition=models.Q(is_active=True), name="offer_active_price_hour"),
            # By instance-hour within one GPU model or one continent (migration 0027): sorted by instance price, a GPU
            # list is read as one range per GPU (offer_reads.RANGE_INDEXED) and a continent as its own range, where
            # both walked the whole instance-price index; at 1,000,000 offers `continent=NA&gpu_count_min=8&spot=true
            # &ordering=price_hour` removed 596,681 rows (84 ms) to find 50.
            models.Index(fields=["gpu", "price_hour_usd", "id"],
                         include=[*HOUR_INDEX_INCLUDES, "continent", "region_confirmed"],
                         condition=models.Q(is_active=True), name="offer_active_gpu_hour"),
            models.Index(fields=["continent", "region_confirmed", "price_hour_usd", "id"],
                         include=[*HOUR_INDEX_INCLUDES, "gpu"],
                         condition=models.Q(is_active=True), name="offer_active_place_hour"),
            # Per provider by instance-hour, with the spot price at hand: a provider list in that order is read as one
            # range per provider (offer_reads.offer_page_ids), its spot count from this index alone (migration 0009).
            models.Index(fields=["provider", "price_hour_usd", "id"], include=["spot_price_hour"],
                         condition=models.Q(is_active=True), name="offer_active_provider_hour"),
            # The offers sold as spot whose spot price is not published (AWS's: the Spot Instance Advisor states the
            # savings), by provider and price, and by price alone: what `spot=true` leaves out as unknown
            # (filters.filter_spot) is counted from one of them alone. Without them the count read every offer of the
            # providers asked for from the table (`provider=aws,cudo&spot=true&price_per_gpu_hour_max=20`: 7,112 rows,
            # 10 ms at 100,000 offers); with the first only, a price ceiling and no provider read all of it
            # (`price_per_gpu_hour_max=0.36&spot=true`: 189,100 entries, 22 ms at 1,000,000 offers).
            *(models.Index(fields=fields,
                           include=[*(column for column in WALKED_INDEX_INCLUDES if column not in fields),
                                    "price_hour_usd"],
                           condition=models.Q(is_active=True, spot_price_hour__isnull=True,
                                              spot_savings_pct__isnull=False), name=name)
              for fields, name in ((["provider", "price_per_gpu_hour_usd"], "offer_spot_unpriced_provider"),
                                   (["price_per_gpu_hour_usd"], "offer_spot_unpriced_price"))),
            # By memory, largest first, then cheapest (every ordering's tiebreak) and id (PostgreSQL only).
            models.Index(models.F("gpu_memory_gb").desc(nulls_last=True),
                         models.F("price_per_gpu_hour_usd").asc(nulls_last=True), models.F("id"),
                         include=[name for name in WALKED_INDEX_INCLUDES if name != "gpu_memory_gb"],
                         condition=models.Q(is_active=True), name="offer_active_memory_price"),
            # The same within one GPU model or one provider (PostgreSQL only, migration 0030): sorted by memory, a
            # GPU or provider list is read as one range each (offer_reads.RANGE_INDEXED), where the walk of the
            # memory index met a rare GPU's offers last (676 ms for a page of T4G offers at 1,000,000 offers).
            *(models.Index(models.F(key), models.F("gpu_memory_gb").desc(nulls_last=True),
                           models.F("price_per_gpu_hour_usd").asc(nulls_last=True), models.F("id"),
                           include=[name for name in WALKED_INDEX_INCLUDES if name not in (key, "gpu_memory_gb")],
                           condition=models.Q(is_active=True), name=f"offer_active_{key}_memory")
              for key in ("gpu", "provider")),
        ]

    def __str__(self) -> str:
        return f"{self.provider_id} {self.instance_type} {self.region}"


class PriceObservation(models.Model):
    """Price and availability of one offer from a moment on; appended only when one of them changed."""

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="history")
    observed_at = models.DateTimeField()
    price_hour = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    spot_price_hour = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    spot_price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    commit_1y_price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    commit_3y_price_hour_usd = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    currency = models.CharField(max_length=3)
    availability = models.CharField(max_length=12, choices=Availability.choices)
    available_count = models.PositiveIntegerField(null=True, blank=True)
    run = models.ForeignKey(ScrapeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["offer", "observed_at"]
        indexes = [models.Index(fields=["offer", "observed_at"]), models.Index(fields=["observed_at"])]

    def __str__(self) -> str:
        return f"offer {self.offer_id} at {self.observed_at:%Y-%m-%d %H:%M}: {self.price_hour} {self.currency}"


class HeldPrice(models.Model):
    """A price the guard held back (providers/pricing.py, "price guard"): it moved more than MAX_MOVE times against
    the stored price of the same machine, or fell below its GPU's floor. The stored offer keeps its published price
    (or, for a machine not yet stored, nothing is published); the sources page lists the hold until a later run
    states the same price again, which publishes it, or a run states another price, which ends or replaces it."""

    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="held_prices")
    instance_type = models.CharField(max_length=120)
    region = models.CharField(max_length=120)
    currency = models.CharField(max_length=3)
    price_hour = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    spot_price_hour = models.DecimalField(max_digits=12, decimal_places=5, null=True, blank=True)
    reason = models.TextField()
    first_held_at = models.DateTimeField()
    run = models.ForeignKey(ScrapeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "instance_type", "region"], name="held_price_key")]
        ordering = ["source", "instance_type", "region"]

    def __str__(self) -> str:
        return f"{self.source_id} {self.instance_type} {self.region}: held ({self.reason})"


class ExchangeRateQuerySet(models.QuerySet):
    def latest_day(self):
        """The latest ECB day we have and its rates (units per 1 EUR), in one query: (None, {}) when none is
        loaded."""
        latest = self.order_by("-date").values("date")[:1]
        rows = list(self.filter(date=models.Subquery(latest)).values_list("date", "currency", "per_eur"))
        return (rows[0][0] if rows else None), {currency: per_eur for _day, currency, per_eur in rows}


class ExchangeRate(models.Model):
    """Units of `currency` per 1 EUR on `date`, as the European Central Bank published them."""

    currency = models.CharField(max_length=3)
    date = models.DateField()
    per_eur = models.DecimalField(max_digits=14, decimal_places=6)
    source_url = models.URLField(max_length=500)

    objects = ExchangeRateQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["currency", "date"], name="rate_unique_per_day")]
        ordering = ["-date", "currency"]

    def __str__(self) -> str:
        return f"{self.date} 1 EUR = {self.per_eur} {self.currency}"


class AvailabilityChange(models.Model):
    """A change of one offer's stock state, from `changed_at` on: available, limited (with the count the source
    gave) or unavailable (sold out). Appended only when the state or the count changed, never per check, so the
    history stays a few rows per offer and month (bench/availability.py reports rows per offer-day). The first
    known state of an offer is a change too (from nothing); "unknown" is never stored: a source that says nothing
    leaves the last known state in place.
    """

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="availability_changes")
    changed_at = models.DateTimeField()
    availability = models.CharField(max_length=12, choices=Availability.choices)
    available_count = models.PositiveIntegerField(null=True, blank=True)
    # True when the check was a replay of a recorded payload (the bundled snapshot): `changed_at` is then the
    # recording's date, not a live observation.
    recorded = models.BooleanField(default=False)

    class Meta:
        ordering = ["offer", "changed_at"]
        indexes = [models.Index(fields=["offer", "changed_at"]), models.Index(fields=["changed_at"])]

    def __str__(self) -> str:
        return f"offer {self.offer_id} {self.availability} from {self.changed_at:%Y-%m-%d %H:%M}"


class AvailabilityDay(models.Model):
    """How many checks of one offer's stock there were on one UTC day, and how many found it in stock (available or
    limited). Each check adds one to `checks` with a single upsert per poll for all offers it covered, so the
    share of checks in stock over any run of days is a SUM in the database (availability_sync.availability_apply keeps
    the 7- and 30-day shares on the offer; selectors aggregate them per provider x GPU)."""

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="availability_days")
    day = models.DateField()
    checks = models.PositiveIntegerField(default=0)
    in_stock = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["offer", "day"], name="availability_day_unique")]
        indexes = [models.Index(fields=["day"])]

    def __str__(self) -> str:
        return f"offer {self.offer_id} {self.day}: {self.in_stock}/{self.checks} in stock"


class AvailabilityPoll(models.Model):
    """One availability poll of one source (its own beat entry, cheaper and more frequent than a price run).

    A failed poll is recorded here with its reason and changes nothing else: every offer keeps its last known state
    and the time it was last checked, so pages show the state with its age instead of flipping it to sold out.
    """

    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="availability_polls")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.RUNNING)
    offline = models.BooleanField(default=False)
    checked = models.PositiveIntegerField(default=0, help_text="Offers whose state the poll stated")
    changed = models.PositiveIntegerField(default=0, help_text="Offers whose state changed")
    unmatched = models.PositiveIntegerField(default=0, help_text="Stated states of offers we do not store")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["source", "-started_at"])]

    def __str__(self) -> str:
        return f"{self.source_id} availability {self.started_at:%Y-%m-%d %H:%M} {self.status}"


# Tables whose writes can change which offers a filter matches or how it is resolved (slugs, capability answers,
# the exchange rate of a fee): database triggers bump DataVersion after every statement that writes one of them
# (migration 0008), whoever writes it (a scrape run, the admin, a curated sync, raw SQL).
DATA_VERSION_TABLES = ("providers_offer", "providers_capability", "providers_provider", "providers_gpumodel",
                       "providers_exchangerate", "providers_instancetypefact", "providers_kubernetesprofile",
                       "providers_datasource")  # the sources since migration 0014


class DataVersion(models.Model):
    """One row (id 1) whose `version` the database raises after every write to DATA_VERSION_TABLES.

    What is derived from those tables and kept between requests (the slug and capability lookups of the
    OfferFilterSet, its left-out counts) is kept under the version it was read with, so it is exact until the data
    changes and never after: providers.versions.data_version. Nothing in Python writes it."""

    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"data version {self.version}"
