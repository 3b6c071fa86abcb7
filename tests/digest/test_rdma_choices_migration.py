"""Digest migration 0002: saved filters that used an earlier release's `rdma` choices get the closest new choice,
and what it writes is what saved_filter_parse writes for the same filter today (the canonical query)."""

from importlib import import_module

import pytest
from django.apps import apps

from digest.models import Subscription
from digest.savedfilters import saved_filter_parse
from tests.digest.conftest import subscriber

pytestmark = pytest.mark.django_db
migration = import_module("digest.migrations.0002_rdma_choices")


@pytest.mark.parametrize(("saved", "migrated"), [
    ("continent=EU&rdma=gpudirect_tcpx,gpudirect_tcpxo", "continent=EU&rdma=tcpx"),
    ("rdma=infiniband,rdma_unspecified", "rdma=any,infiniband"),
    ("rdma=efa,none,unknown", "rdma=efa,none,unknown"),
    ("continent=EU", "continent=EU"),
])
def test_old_rdma_choices_become_the_closest_new_ones(saved, migrated):
    row = subscriber("a@example.org", query=saved)
    migration.rename_rdma_choices(apps, None)
    row.refresh_from_db()
    assert row.filter_query == migrated
    assert saved_filter_parse(migrated).query == migrated  # valid today, and already canonical
    assert saved_filter_parse(saved).query == migrated  # an old link parses to the same filter
    assert Subscription.objects.count() == 1
