"""Celery tasks of the exports: the daily open-dataset dump (the beat table in comparator/celery.py)."""

from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def dataset_write() -> dict:
    """Write today's dump (exports.dataset.dataset_write); safe to run twice (the day's files are replaced whole)."""
    from exports.dataset import dataset_write as write

    json_path, csv_path, count = write()
    logger.info("open dataset: %s offers written to %s and %s", count, json_path, csv_path)
    return {"offers": count, "json": str(json_path), "csv": str(csv_path)}
