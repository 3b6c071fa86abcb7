"""`manage.py dataset_write [--dir DIR]`: write today's open-dataset dump now (what the daily beat task does)."""

from pathlib import Path

from django.core.management.base import BaseCommand

from exports.dataset import dataset_write


class Command(BaseCommand):
    help = "Write today's open dataset (offers-<date>.json and .csv) to settings.DATASET_DIR or --dir."

    def add_arguments(self, parser):
        parser.add_argument("--dir", type=Path, help="Directory to write to (default: settings.DATASET_DIR).")

    def handle(self, *args, dir=None, **kwargs):
        json_path, csv_path, count = dataset_write(directory=dir)
        self.stdout.write(f"{count} offers: {json_path} {csv_path}")
