"""Chinese pages are Chinese (#42's target): a crawl of every page type in Chinese, on the full bundled snapshot,
finds no run of Latin script outside what may stay Latin:

- marked in the markup: <code>, <pre>, <kbd>, <samp> (identifiers, commands), translate="no" (a provider's own
  identifier, e.g. a region), lang="en" (a source's or our data's English words, quoted as written: providers.
  presentation.as_written marks them);
- proper names, units and identifiers: the names in the data (providers, GPU models, data sources, advisor
  models), the technical terms and product names below, and anything shaped like an identifier (a URL or domain,
  a word with digits, dots, underscores or slashes, an acronym).

A run with any other Latin word is a page string left in English (a label, a help text, an option) or a Chinese
note quoting English without saying so."""

import re
from html.parser import HTMLParser

import pytest
from django.utils import translation

from tests.page_types import pages

pytestmark = pytest.mark.django_db

EXEMPT_TAGS = {"script", "style", "code", "pre", "kbd", "samp", "svg", "title", "head", "textarea"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9 .,'’()/&+:;=_×~@-]*[A-Za-z0-9)]|[A-Za-z]")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9._+/:=@-]*[A-Za-z0-9]|[A-Za-z]")
URL = re.compile(r"https?://\S+")
IDENTIFIER = re.compile(
    r"^(?:[\w.-]+\.(?:com|ai|io|dev|net|org|cloud|date|sh|co|app|xyz|tech|run)(?:/\S*)?"  # a domain
    r"|[\w.+:/-]*\d[\w.+:/-]*"  # a word with a digit: H100, p5.48xlarge, v1.35, 80GB, us-east-1
    r"|[\w-]+[._/:][\w./:-]+"  # dotted, underscored or slashed: nvidia.com/gpu, dra_support, cncf/docs
    r"|[A-Z][A-Z0-9]+[a-z]?s?"  # an acronym: GPU, EKS, RDMA, CSIs
    r"|[a-z]*[A-Z][a-z]*[A-Z]\w*|[a-z]+[A-Z]\w*"  # camel case: InfiniBand, GPUDirect, qGPU, hostNetwork, LocalQueue
    r"|[A-Za-z]"  # a letter: a variable (N) or a sort order (A to Z)
    r"|\S+@\S+"  # an email address
    r")$")
# Names of several words that are proper names as a whole (products and components).
PHRASES = ("GPU Feature Discovery", "Oracle Container Engine for Kubernetes")
# Proper names (products, projects, companies), units and the Kubernetes terms Chinese technical writing keeps in
# Latin script (Pod, Operator, token); no everyday English word, so an untranslated label ("Free tier") still fails.
# Lower-cased; a run passes when each of its words is one of these, a name from the data, or an identifier.
TERMS = frozenset("""
kubernetes nvidia amd intel gpu gpus cpu tpu tpus vcpu vcpus gb tb gib mib gbit gbps mbps tflops pflops linux ubuntu
debian docker helm terraform pulumi python go sdk cli api json yaml csv grafana prometheus kubectl doctl fluidctl
govultr civogo kosmos longhorn lustre filestore fsx ceph nfs csi ofed mofed cuda rocm gaudi trainium inferentia
neuron ascend hopper ampere ada lovelace volta turing pascal maxwell kepler blackwell vega gcn cdna rdna mellanox
connectx infiniband ethernet nvlink kueue volcano slurm jobset kuberay kubeflow karpenter autopilot opencost
kubecost skypilot dstack jupyter lora qlora adam adamw llama mistral mixtral qwen gemma vllm aws amazon azure
microsoft google cloud oracle alibaba tencent huawei ibm akamai linode hetzner ovhcloud scaleway vultr civo
digitalocean nebius lambda coreweave crusoe fluidstack hyperstack paperspace runpod vast verda voltage shadeform
jarvislabs modelplane cudo datacrunch vantage github gitlab eks aks gke oke doks lke ack tke cce iks mks vke cks
kapsule sunk soperator slinky bottlerocket sagemaker hyperpod etcd operator operators pod pods trainer plugin schema
notebook token tokens english
""".split())


class PageText(HTMLParser):
    """The text a Chinese reader sees, less the exempt elements, as (text, where) pairs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        attrs = dict(attrs)
        exempt = (tag in EXEMPT_TAGS or attrs.get("translate") == "no"
                  or (attrs.get("lang") or "").lower().startswith("en") or "hidden" in attrs)
        self.stack.append((tag, exempt))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not any(exempt for _tag, exempt in self.stack):
            self.texts.append(data)


def names_in_the_data() -> frozenset[str]:
    from advisor.sizing import MODEL_CARDS
    from providers.models import DataSource, GpuModel, Provider

    names = [*Provider.objects.values_list("name", flat=True), *GpuModel.objects.values_list("name", flat=True),
             *DataSource.objects.values_list("name", flat=True), *(card.name for card in MODEL_CARDS.values())]
    return frozenset(word.lower() for name in names for word in WORD.findall(name))


def identifier(word: str) -> bool:
    """Shaped like an identifier, whole or in each of its hyphenated parts (GPUDirect-TCPX, kube-system)."""
    return bool(IDENTIFIER.match(word)) or ("-" in word and all(IDENTIFIER.match(part) or part.islower()
                                                                 for part in word.split("-") if part))


def latin_left(html: str, allowed: frozenset[str]) -> list[str]:
    parser = PageText()
    parser.feed(html)
    left = []
    for text in parser.texts:
        for run in LATIN_RUN.findall(URL.sub(" ", text)):
            words = WORD.findall(re.sub("|".join(map(re.escape, PHRASES)), " ", run))
            if not all(word.lower() in allowed or identifier(word) for word in words):
                left.append(run)
    return left


@pytest.fixture(scope="module")
def crawl(snapshot, django_db_blocker):
    from django.urls import reverse

    from web.guides import GUIDES

    with django_db_blocker.unblock(), translation.override("zh-hans"):
        urls = pages()
        allowed = TERMS | names_in_the_data()
        # The guides are written by hand in each language: every one of them, not one for the type.
        urls.update({f"guide {slug}": reverse("guide-detail", args=[slug]) for slug in GUIDES})
    from django.test import Client

    client = Client()
    client.cookies["django_language"] = "zh-hans"
    found = {}
    for name, url in urls.items():
        response = client.get(url, follow=True)
        assert response.status_code in (200, 400, 404), (name, response.status_code)
        assert response.redirect_chain == [] or response.redirect_chain[-1][0].startswith("/zh-hans/"), name
        found[name] = latin_left(response.content.decode(), allowed)
    return found


def test_every_chinese_page_type_was_crawled(crawl):
    assert len(crawl) >= 22


def test_no_chinese_page_leaves_latin_words_outside_names_identifiers_and_marked_quotes(crawl):
    left = {name: sorted(set(runs)) for name, runs in crawl.items() if runs}
    assert left == {}


def test_the_check_catches_an_english_label_and_lets_marked_or_named_text_pass():
    allowed = TERMS | frozenset({"acme"})
    html = ('<p>筛选 <label>Show offers</label> <code>kubectl get nodes</code> <span translate="no">Quebec, CA, NA'
            '</span> <span lang="en">as the page writes it</span> Acme 的 H100 与 InfiniBand，见 docs.aws.amazon.com'
            '</p>')
    assert latin_left(html, allowed) == ["Show offers"]
    assert latin_left("<p>免费 Free tier</p>", allowed) == ["Free tier"]
