#!/usr/bin/env python3
"""Draws tern-bench's JSON lines as a chart of Tern / URLSession ratios, and prints them as the
Markdown table the README shows.

usage: python3 scripts/bench_chart.py bench/results.jsonl docs/bench.png
Installs matplotlib with pip if it is missing.
"""
import json
import subprocess
import sys

try:
    import matplotlib
except ImportError:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"])
    import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

source, target = sys.argv[1], sys.argv[2]
rows = [json.loads(line) for line in open(source) if line.strip().startswith("{")]
# Show each row as "how much better Tern is": ratio for higher-is-better, 1/ratio for lower-is-better.
labels, values, colours = [], [], []
for row in rows:
    ratio = row["ratio"]
    advantage = ratio if row["better"] == "higher" else 1 / ratio
    labels.append(f'{row["workload"]}\n{row["metric"]}')
    values.append(advantage)
    colours.append("#2e7d32" if advantage >= 0.95 else "#c62828")

fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 4.5))
bars = ax.bar(range(len(rows)), values, color=colours)
ax.axhline(1.0, color="black", linewidth=0.8)
ax.axhline(0.95, color="grey", linewidth=0.8, linestyle="--")
ax.set_xticks(range(len(rows)))
ax.set_xticklabels(labels, fontsize=7)
ax.set_ylabel("Tern advantage (>1: Tern better)")
ax.set_title("tern-bench: Tern vs raw URLSession, medians of interleaved rounds (Linux, 2 cores, nginx)")
for bar, value in zip(bars, values):
    ax.text(bar.get_x() + bar.get_width() / 2, value + 0.01, f"{value:.2f}", ha="center", fontsize=7)
ax.set_ylim(0, max(values) * 1.15)
fig.tight_layout()
fig.savefig(target, dpi=120)
print(f"wrote {target}")

def short(value):
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"

print("| workload | metric | better | Tern median (min–max) | URLSession median (min–max) | ratio | paired ratio |")
print("|---|---|---|---|---|---|---|")
for row in rows:
    print(f'| {row["workload"]} | {row["metric"]} | {row["better"]} '
          f'| {short(row["tern"])} ({short(row["tern_min"])}–{short(row["tern_max"])}) '
          f'| {short(row["baseline"])} ({short(row["baseline_min"])}–{short(row["baseline_max"])}) '
          f'| {row["ratio"]:.3f} | {row["paired_ratio"]:.3f} |')
