"""The per-offer Kubernetes reasons in Chinese: the same rules write a Chinese sentence beside the English one
(providers.kubernetes under translated(gettext), stored as reason_zh by every ingest); Chinese pages show it, the
API gives both, English pages and the API's `reason` stay English."""

import re
from decimal import Decimal
from html import escape

import pytest
from django.utils import translation

from providers import kubernetes as k8s
from providers.models import KubernetesProfile

pytestmark = pytest.mark.django_db


def test_the_rules_write_their_reasons_in_the_translation_given():
    machine = {"instance_type": "p5.48xlarge", "gpu_count": Decimal("8"),
               "cells": {"offering": k8s.Cell("managed", "https://example.org/eks")},
               "facts": {"managed_node": k8s.Fact("p5.48xlarge", "managed_node", "yes")}, "gpu": None}
    english = k8s.derive(provider_name="Amazon Web Services", **machine)
    with translation.override("zh-hans"), k8s.translated(translation.gettext):
        chinese = k8s.derive(provider_name="亚马逊云科技", **machine)
    assert english["managed_node"].reason == "p5.48xlarge can be a node of Amazon Web Services's managed Kubernetes."
    assert chinese["managed_node"].reason == "p5.48xlarge 可以作为 亚马逊云科技 托管 Kubernetes 的节点。"
    assert chinese["managed_node"].state == english["managed_node"].state  # only the words differ
    # outside translated() the rules are English again, whatever language is active
    with translation.override("zh-hans"):
        assert k8s.derive(provider_name="AWS", **machine)["mig"].reason.startswith("The GPU of this offer")


def test_every_stored_answer_has_its_chinese_reason_and_pages_show_it(world, client, api):
    profile = KubernetesProfile.objects.get(instance_type="alpha-h100x8")
    for question in k8s.QUESTIONS:
        answer = profile.answers[question]
        assert answer["reason"] and answer["reason_zh"], question
        assert any("\u4e00" <= char <= "\u9fff" for char in answer["reason_zh"]), (question, answer["reason_zh"])
    managed = profile.answers["managed_node"]
    url = f"/offers/kubernetes/{profile.id}/"
    chinese = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    # The names and identifiers the Chinese reason keeps in Latin script are marked lang="en" in the page.
    assert escape(managed["reason_zh"]) in re.sub(r"<[^>]+>", "", chinese)
    assert '<span lang="en">alpha-h100x8</span>' in chinese
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()
    assert escape(managed["reason"]) in english and escape(managed["reason_zh"]) not in english
    listed = api.get("/api/v1/offers/?page_size=100&kubernetes_reasons=true", HTTP_ACCEPT_LANGUAGE="zh-hans")
    row = next(r for r in listed.json()["results"] if r["instance_type"] == "alpha-h100x8")
    assert row["kubernetes"]["managed_node"]["reason"] == managed["reason"]  # the API's reason stays English
    assert row["kubernetes"]["managed_node"]["reason_zh"] == managed["reason_zh"]
