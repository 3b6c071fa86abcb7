"""The one CUDA compatibility table (nodesoftware/data/cuda.toml) and the question it answers:
can a container built for CUDA X run on this driver branch and this GPU?

The answer needs both: NVIDIA's driver rules (a driver runs the CUDA releases up to its own natively and the rest of
their major version through minor-version compatibility) and the GPU's architecture (CUDA 13 no longer builds for
compute capability below 7.5; the R580 driver branch is the last for those GPUs). Every answer is yes, no or unknown
with the reason in words, and unknown is kept for what the facts do not settle (no driver known, a GPU NVIDIA does not
list, an image older than the GPU that may or may not carry PTX).

The file is read strictly: a missing source, an unparseable version or an unknown field stops the load with the key
that is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path

from . import read_toml

CUDA_PATH = Path(__file__).resolve().parent / "data" / "cuda.toml"

YES, NO, UNKNOWN = "yes", "no", "unknown"
VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")
DRIVER_RE = re.compile(r"^(\d{3})(?:\.\d+){0,2}$")


class CompatDataError(ValueError):
    """cuda.toml breaks the rules; the message names the key and the problem."""


def parse_cuda_version(text: str) -> tuple[int, int]:
    """'12.8' -> (12, 8). Raises ValueError naming the text for anything else ('12', '12.x', 'latest')."""
    match = VERSION_RE.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a CUDA version such as 12.8")
    return int(match.group(1)), int(match.group(2))


def parse_driver_branch(text: str | int) -> int:
    """'580.95.05', '580' or 580 -> 580 (the branch is the first number). Raises ValueError otherwise."""
    match = DRIVER_RE.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not an NVIDIA driver version such as 580 or 580.95.05")
    return int(match.group(1))


def capability(text: str) -> tuple[int, int]:
    return parse_cuda_version(text)  # a compute capability has the same major.minor shape


def shown(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class Source:
    url: str
    title: str
    verified_on: date


@dataclass(frozen=True)
class Verdict:
    """One answer: yes / no / unknown, the reason in a sentence, and the URLs of the facts it rests on."""

    answer: str
    reason: str
    sources: tuple[str, ...] = ()

    def __bool__(self) -> bool:  # only a yes is a yes
        return self.answer == YES


@dataclass(frozen=True)
class Accelerator:
    """What the table knows of one catalog GPU: a compute capability (NVIDIA) or a runtime and target (others)."""

    slug: str
    compute_capability: tuple[int, int] | None = None
    capability_from_architecture: str = ""  # set when NVIDIA lists no row for the product, only its architecture
    runtime: str = ""
    target: str = ""
    source: str = ""

    @property
    def is_cuda(self) -> bool:
        return self.compute_capability is not None


@dataclass(frozen=True)
class Table:
    sources: dict[str, Source]
    toolkit_drivers: dict[tuple[int, int], str]  # CUDA release -> its toolkit driver (native)
    major_min_branch: dict[int, int]
    major_min_capability: dict[int, tuple[int, int]]
    major_source: dict[int, str]
    driver_limits: list[tuple[tuple[int, int], int, str]]  # (below capability, last branch, source)
    first_native: dict[tuple[int, int], tuple[tuple[int, int], str]]
    architectures: dict[str, list[tuple[int, int]]]
    nvidia: dict[str, tuple[int, int]]
    dtypes: dict[str, tuple[int, int]]
    fp4_partial: frozenset[tuple[int, int]]
    other: dict[str, Accelerator] = field(default_factory=dict)


def _sources(entries: dict, fail) -> dict[str, Source]:
    sources = {}
    for key, entry in entries.items():
        if not str(entry.get("url", "")).startswith("https://") or not entry.get("title"):
            raise fail(f"source '{key}' needs an https url and a title")
        if not isinstance(entry.get("verified_on"), date):
            raise fail(f"source '{key}' needs verified_on as a date")
        sources[key] = Source(entry["url"], entry["title"], entry["verified_on"])
    return sources


def _toolkit_drivers(rows: list, fail, version) -> dict[tuple[int, int], str]:
    """CUDA toolkit version -> the minimum driver NVIDIA names for it."""
    drivers = {}
    for row in rows:
        where = f"toolkit {row.get('cuda')!r}"
        try:
            parse_driver_branch(row.get("min_driver", ""))
        except ValueError as exc:
            raise fail(f"{where}: {exc}") from exc
        drivers[version(row.get("cuda"), where)] = row["min_driver"]
    return drivers


def parse_table(data: dict, origin: str = "cuda.toml") -> Table:
    def fail(message: str) -> CompatDataError:
        return CompatDataError(f"{origin}: {message}")

    def version(text, where: str) -> tuple[int, int]:
        try:
            return parse_cuda_version(text)
        except ValueError as exc:
            raise fail(f"{where}: {exc}") from exc

    known = {"source", "toolkit", "major", "driver_limit", "first_native", "architecture", "nvidia", "dtypes", "other"}
    if set(data) - known:
        raise fail(f"unknown sections {sorted(set(data) - known)}")
    sources = _sources(data.get("source") or {}, fail)
    for needed in ("toolkit_drivers", "minor_version", "cuda_gpus", "dtypes"):
        if needed not in sources:
            raise fail(f"source '{needed}' is required")

    def source(name: str, where: str) -> str:
        if name not in sources:
            raise fail(f"{where}: source {name!r} is not declared under [source]")
        return name

    toolkit_drivers = _toolkit_drivers(data.get("toolkit") or [], fail, version)
    majors_branch, majors_capability, majors_source = {}, {}, {}
    for row in data.get("major") or []:
        where = f"major {row.get('cuda_major')!r}"
        if not isinstance(row.get("cuda_major"), int) or not isinstance(row.get("min_driver_branch"), int):
            raise fail(f"{where}: cuda_major and min_driver_branch must be integers")
        majors_branch[row["cuda_major"]] = row["min_driver_branch"]
        majors_capability[row["cuda_major"]] = version(row.get("min_compute_capability"), where)
        majors_source[row["cuda_major"]] = source(row.get("architecture_source", ""), where)
    for cuda_version in toolkit_drivers:
        if cuda_version[0] not in majors_branch:
            raise fail(f"toolkit {shown(cuda_version)}: its major version has no [[major]] row")
    limits = [(version(row.get("below_compute_capability"), "driver_limit"), int(row["last_driver_branch"]),
               source(row.get("source", ""), "driver_limit")) for row in data.get("driver_limit") or []]
    first_native = {version(row.get("compute_capability"), "first_native"):
                    (version(row.get("cuda"), "first_native"), source(row.get("source", ""), "first_native"))
                    for row in data.get("first_native") or []}
    architectures = {row["name"]: [version(cc, f"architecture {row['name']}") for cc in row["compute_capabilities"]]
                     for row in data.get("architecture") or []}
    nvidia = {slug: version(cc, f"nvidia {slug}") for slug, cc in (data.get("nvidia") or {}).items()}
    dtype_rows = dict(data.get("dtypes") or {})
    fp4_partial = frozenset(version(cc, "dtypes fp4_partial") for cc in dtype_rows.pop("fp4_partial", []))
    dtypes = {name: version(cc, f"dtypes {name}") for name, cc in dtype_rows.items()}
    other = {}
    for slug, row in (data.get("other") or {}).items():
        if not row.get("runtime") or not row.get("target"):
            raise fail(f"other '{slug}' needs runtime and target")
        if slug in nvidia:
            raise fail(f"'{slug}' is both an NVIDIA GPU and another accelerator")
        other[slug] = Accelerator(slug, runtime=row["runtime"], target=row["target"],
                                  source=source(row.get("source", ""), f"other {slug}"))
    return Table(sources, toolkit_drivers, majors_branch, majors_capability, majors_source, limits, first_native,
                 architectures, nvidia, dtypes, fp4_partial, other)


@cache
def table() -> Table:
    return parse_table(read_toml(CUDA_PATH))


def accelerator(gpu_slug: str, architecture: str = "", *, data: Table | None = None) -> Accelerator | None:
    """What the table knows of a catalog GPU. An NVIDIA product without its own row in NVIDIA's list falls back to
    the lowest compute capability of its architecture (the catalog's architecture field), and says so."""
    data = data or table()
    if gpu_slug in data.nvidia:
        return Accelerator(gpu_slug, compute_capability=data.nvidia[gpu_slug], source="cuda_gpus")
    if gpu_slug in data.other:
        return data.other[gpu_slug]
    if architecture in data.architectures:
        lowest = min(data.architectures[architecture])
        return Accelerator(gpu_slug, compute_capability=lowest, capability_from_architecture=architecture,
                           source="cuda_gpus")
    return None


def native_release(branch: int, *, data: Table | None = None) -> tuple[int, int] | None:
    """The newest CUDA release whose toolkit driver this branch meets (what it runs with every feature)."""
    data = data or table()
    met = [release for release, driver in data.toolkit_drivers.items() if parse_driver_branch(driver) <= branch]
    return max(met) if met else None


def driver_runs(cuda_version: str, driver_branch: int | str | None, *, data: Table | None = None) -> Verdict:
    """Does this driver branch run images of this CUDA version, whatever the GPU?"""
    data = data or table()
    wanted = parse_cuda_version(cuda_version)
    major = wanted[0]
    if driver_branch in (None, ""):
        return Verdict(UNKNOWN, "the node's driver version is not known")
    branch = parse_driver_branch(driver_branch)
    docs = (data.sources["toolkit_drivers"].url, data.sources["minor_version"].url)
    if major not in data.major_min_branch:
        return Verdict(UNKNOWN, f"NVIDIA's table has no rule for CUDA {major}.x", docs)
    floor = data.major_min_branch[major]
    if branch < floor:
        return Verdict(NO, f"CUDA {major}.x needs driver {floor} or newer; this node has {branch}", docs)
    native = native_release(branch, data=data)
    if native and native >= wanted:
        return Verdict(YES, f"driver {branch} runs CUDA {shown(wanted)} natively (it meets CUDA {shown(native)}'s "
                            "toolkit driver)", docs)
    return Verdict(YES, f"driver {branch} runs CUDA {shown(wanted)} through minor-version compatibility (CUDA "
                        f"{major}.x runs on {floor}+; features that need a newer driver, such as PTX built by a newer "
                        "toolkit, do not)", docs)


def gpu_runs(cuda_version: str, gpu: Accelerator | None, *, data: Table | None = None) -> Verdict:
    """Does a CUDA version still support this GPU (architecture only, no driver)?"""
    data = data or table()
    wanted = parse_cuda_version(cuda_version)
    if gpu is None:
        return Verdict(UNKNOWN, "the GPU is not in the compatibility table")
    if not gpu.is_cuda:
        return Verdict(NO, f"{gpu.target} runs {gpu.runtime}, not CUDA", (data.sources[gpu.source].url,))
    cc = gpu.compute_capability
    assert cc is not None
    floor = data.major_min_capability.get(wanted[0])
    if floor is None:
        return Verdict(UNKNOWN, f"NVIDIA's table has no rule for CUDA {wanted[0]}.x")
    if cc < floor:
        source = data.sources[data.major_source[wanted[0]]].url
        return Verdict(NO, f"CUDA {wanted[0]} no longer supports compute capability {shown(cc)} (it needs "
                           f"{shown(floor)} or newer)", (source,))
    if cc in data.first_native and wanted < data.first_native[cc][0]:
        first, source = data.first_native[cc]
        return Verdict(UNKNOWN, f"compute capability {shown(cc)} needs CUDA {shown(first)} for native code; an older "
                                "image runs only if it carries PTX", (data.sources[source].url,))
    note = f" (from its architecture, {gpu.capability_from_architecture})" if gpu.capability_from_architecture else ""
    return Verdict(YES, f"CUDA {shown(wanted)} supports compute capability {shown(cc)}{note}",
                   (data.sources["cuda_gpus"].url,))


def can_run(cuda_version: str, driver_branch: int | str | None, gpu: Accelerator | None, *,
            data: Table | None = None) -> Verdict:
    """Can an image built for `cuda_version` run on a node with this driver branch and this GPU?

    no wins over unknown wins over yes: a node is excluded as soon as one fact rules it out, and only called fit when
    the driver and the GPU both are. Raises ValueError for a version that does not parse (callers turn it into a 400).
    """
    data = data or table()
    parse_cuda_version(cuda_version)
    checks = [gpu_runs(cuda_version, gpu, data=data)]
    if gpu is None or gpu.is_cuda:
        checks.append(driver_runs(cuda_version, driver_branch, data=data))
        if gpu is not None and gpu.compute_capability and driver_branch not in (None, ""):
            branch = parse_driver_branch(driver_branch)
            for below, last, source in data.driver_limits:
                if gpu.compute_capability < below and branch > last:
                    checks.append(Verdict(NO, f"driver {branch} no longer supports compute capability "
                                              f"{shown(gpu.compute_capability)}: {last} is its last branch",
                                          (data.sources[source].url,)))
    for answer in (NO, UNKNOWN):
        failing = [check for check in checks if check.answer == answer]
        if failing:
            return Verdict(answer, "; ".join(check.reason for check in failing),
                           tuple(url for check in failing for url in check.sources))
    return Verdict(YES, "; ".join(check.reason for check in checks),
                   tuple(dict.fromkeys(url for check in checks for url in check.sources)))


def dtypes(gpu: Accelerator | None, *, data: Table | None = None) -> dict[str, str]:
    """bf16 / fp8 / fp4 -> yes, partial, no or unknown for a GPU, by compute capability (Transformer Engine's
    support matrix). A capability taken from the architecture answers only where the whole architecture agrees."""
    data = data or table()
    if gpu is None or not gpu.is_cuda:
        return {name: UNKNOWN for name in data.dtypes}
    capabilities = (data.architectures[gpu.capability_from_architecture] if gpu.capability_from_architecture
                    else [gpu.compute_capability])
    answers = {}
    for name, floor in data.dtypes.items():
        each = {YES if cc >= floor else NO for cc in capabilities if cc is not None}
        answer = each.pop() if len(each) == 1 else UNKNOWN
        if name == "fp4" and answer == YES and any(cc in data.fp4_partial for cc in capabilities):
            answer = "partial"
        answers[name] = answer
    return answers
