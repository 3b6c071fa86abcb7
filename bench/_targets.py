"""The one format every bench ends with: one line per target,

    target <name>: <measured> (goal <goal>) met|missed

printed on stdout whatever logging the bench itself uses, so `grep '^target '` over any bench's output lists its
verdicts. `at_least` and `at_most` decide met/missed from numbers; `line` takes a verdict worked out elsewhere."""

from __future__ import annotations

import sys


def line(name: str, measured: str, goal: str, met: bool) -> str:
    text = f"target {name}: {measured} (goal {goal}) {'met' if met else 'missed'}"
    print(text, file=sys.stdout, flush=True)
    return text


def at_least(name: str, value: float, goal: float, unit: str = "x", digits: int = 2) -> bool:
    """Met when `value` >= `goal` (ratios, throughput)."""
    line(name, f"{value:.{digits}f}{_space(unit)}", f">= {goal:g}{_space(unit)}", value >= goal)
    return value >= goal


def at_most(name: str, value: float, goal: float, unit: str = "x", digits: int = 2) -> bool:
    """Met when `value` <= `goal` (ratios of times, sizes, memory)."""
    line(name, f"{value:.{digits}f}{_space(unit)}", f"<= {goal:g}{_space(unit)}", value <= goal)
    return value <= goal


def _space(unit: str) -> str:
    return unit if unit in ("x", "%", "") else f" {unit}"


def django_with_plain_figures(logger) -> None:
    """django.setup(), then `logger` writes its figures to stdout as plain lines, whatever format the project's
    LOGGING gives other loggers (a bench's report is read by people and by `grep '^target '`)."""
    import logging

    import django

    django.setup()
    plain = logging.StreamHandler(sys.stdout)
    plain.setFormatter(logging.Formatter("%(message)s"))
    logger.handlers[:] = [plain]
    logger.propagate = False
    logger.setLevel(logging.INFO)
