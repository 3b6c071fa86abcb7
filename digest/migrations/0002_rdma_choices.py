"""Saved digest filters that used the `rdma` choices of earlier releases get the closest choice of today's
(providers.filters.fabric.RDMA_RENAMED, then in providers.filters; frozen here): gpudirect_tcpx and gpudirect_tcpxo
become `tcpx` (GPU-direct over TCP), rdma_unspecified becomes `any` (GPUDirect RDMA between nodes). `any`, `infiniband`, `roce`, `efa`, `none` and
`unknown` keep their names, now with the fabric-class meanings of issue #36."""

from urllib.parse import parse_qsl, urlencode

from django.db import migrations

RENAMED = {"gpudirect_tcpx": "tcpx", "gpudirect_tcpxo": "tcpx", "rdma_unspecified": "any"}


def renamed_query(query: str) -> str:
    pairs = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name == "rdma":
            value = ",".join(sorted({RENAMED.get(item, item) for item in value.split(",") if item}))
        pairs.append((name, value))
    return urlencode(pairs, safe=",")


def rename_rdma_choices(apps, schema_editor):
    subscription = apps.get_model("digest", "Subscription")
    for row in subscription.objects.filter(filter_query__contains="rdma="):
        query = renamed_query(row.filter_query)
        if query != row.filter_query:
            row.filter_query = query
            row.save(update_fields=["filter_query"])


class Migration(migrations.Migration):

    dependencies = [
        ("digest", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(rename_rdma_choices, migrations.RunPython.noop),
    ]
