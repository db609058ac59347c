#!/usr/bin/env python3
"""Checks tern-bench's --json output: every workload and metric present, well-formed, finite.

usage: python3 scripts/check_bench_output.py results.jsonl
(tern-bench itself exits non-zero when any response failed verification.)
"""
import json
import math
import shutil
import sys

expected = {
    ("seq", "req_per_s"), ("seq", "p50_us"), ("seq", "p99_us"), ("seq", "cpu_us_per_req"),
    ("64", "req_per_s"), ("64", "cpu_us_per_req"), ("download-10mb", "mb_per_s"),
    ("seq-closure", "req_per_s"), ("64-closure", "req_per_s"), ("seq-defaults", "req_per_s"),
    ("json-decodable", "req_per_s"), ("json-decodable", "cpu_us_per_req"),
    ("64-rss", "peak_rss_mb"), ("inflight-1000", "kb_per_request"),
}
if sys.platform.startswith("linux"):
    # Tern on its libcurl transport (Linux): the same workloads.
    expected |= {("seq-curl", "req_per_s"), ("64-curl", "req_per_s"), ("download-10mb-curl", "mb_per_s"),
                 ("json-decodable-curl", "req_per_s"), ("rss-curl", "peak_rss_mb"),
                 ("seq-chained-curl", "req_per_s"), ("seq-chained-curl", "cpu_us_per_req"),
                 ("seq-curl-executor", "req_per_s"), ("seq-curl-executor", "cpu_us_per_req")}
    if shutil.which("curl"):
        expected |= {("seq-curl-cli", "us_per_req"), ("seq-curl-cli", "cpu_us_per_req"),
                     ("64-curl-cli", "req_per_s"), ("64-curl-cli", "cpu_us_per_req"), ("download-10mb-curl-cli", "mb_per_s")}
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
seen = set()
for row in rows:
    for field in ("workload", "metric", "tern", "baseline", "ratio", "rounds", "better"):
        assert field in row, f"missing {field} in {row}"
    assert row["better"] in ("higher", "lower"), row
    for field in ("tern", "baseline", "ratio"):
        assert row[field] is not None and math.isfinite(row[field]) and row[field] > 0, f"bad {field} in {row}"
    assert abs(row["ratio"] - row["tern"] / row["baseline"]) < 1e-3 * row["ratio"], row
    assert row["better"] == ("higher" if row["metric"] in ("req_per_s", "mb_per_s") else "lower"), row
    seen.add((row["workload"], row["metric"]))
missing = expected - seen
assert not missing, f"missing workloads/metrics: {sorted(missing)}"
print(f"tern-bench output OK: {len(rows)} rows")
