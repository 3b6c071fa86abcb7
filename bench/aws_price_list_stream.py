"""How much memory and time the streamed EC2 price-list parse costs, against reading the whole body first.

The real file is several GB, so `scrapers.aws` reads it line by line. This script serves a synthetic file built from
the recorded 91-column header (rows of made-up values: it measures parsing, it publishes nothing) through
httpx.MockTransport in 64 KiB chunks, and prints, for the streamed parse and for a baseline that loads the whole body
and then runs csv.DictReader over it, the wall time and the peak traced memory, plus the ratios, in the same run.

    .venv/bin/python bench/aws_price_list_stream.py [rows]
"""

from __future__ import annotations

import csv
import io
import sys
import time
import tracemalloc
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _targets  # noqa: E402
from scrapers import aws  # noqa: E402
from scrapers.base import ScrapeResult  # noqa: E402
from scrapers.http import build_client  # noqa: E402

CHUNK = 64 * 1024


def synthetic_body(rows: int) -> bytes:
    lines = (aws.RECORDED / "ec2_index_head.csv").read_text().splitlines(keepends=True)
    columns = next(csv.reader([lines[5]]))
    out = io.StringIO()
    out.write("".join(lines[:6]))
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for index in range(rows):
        values = dict.fromkeys(columns, "x")
        gpu = index % 10 == 0  # one row in ten is a GPU on-demand Linux row, the rest are dropped by the filter
        values.update({"TermType": "OnDemand" if gpu else "Reserved", "Instance Type": f"g5.{index}xlarge",
                       "Region Code": "us-east-1", "PricePerUnit": "1.006", "Currency": "USD", "Unit": "Hrs",
                       "Tenancy": "Shared", "Operating System": "Linux", "CapacityStatus": "Used",
                       "Pre Installed S/W": "NA", "GPU": "1", "vCPU": "4", "Memory": "16 GiB",
                       "Product Family": "Compute Instance", "MarketOption": "OnDemand"})
        writer.writerow([values[name] for name in columns])
    return out.getvalue().encode()


def client(body: bytes) -> httpx.Client:
    class Chunked(httpx.SyncByteStream):
        def __iter__(self):
            for start in range(0, len(body), CHUNK):
                yield body[start:start + CHUNK]

    return build_client(transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=Chunked())))


def streamed(body: bytes) -> int:
    return len(aws.AwsEc2PriceListClient(client(body)).fetch().offers)


def whole_body(body: bytes) -> int:
    text = client(body).get(aws.EC2_CSV_URL).text
    lines = iter(text.splitlines())
    return len(aws.parse_ec2_csv(lines, ScrapeResult(offers=[])))


def measure(function, body: bytes) -> tuple[float, float, int]:
    tracemalloc.start()
    started = time.perf_counter()
    count = function(body)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak / 2**20, count


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    body = synthetic_body(rows)
    print(f"synthetic EC2 price list: {rows} rows, {len(body) / 2**20:.1f} MiB")
    base_time, base_peak, base_count = measure(whole_body, body)
    time_s, peak, count = measure(streamed, body)
    assert count == base_count, (count, base_count)
    print(f"baseline (whole body, then csv): {base_time:.2f} s, peak {base_peak:.1f} MiB, {base_count} offers")
    print(f"streamed (scrapers.aws):         {time_s:.2f} s, peak {peak:.1f} MiB, {count} offers")
    print(f"ratios streamed/baseline: time {time_s / base_time:.2f}x, peak memory {peak / base_peak:.3f}x\n")
    # The goal is the parse's reason to exist (scrapers.aws reads the multi-GB file line by line): less memory than
    # reading the whole body first; no issue sets a number.
    _targets.at_most(f"streamed / whole-body peak traced memory, {rows:,} rows", peak / base_peak, 1.0, digits=3)


if __name__ == "__main__":
    main()
