#!/usr/bin/python3
"""The side-by-side benchmark as a report: a Markdown table and a bar chart.

    /usr/bin/python3 tools/bench/report.py --models ~/.cache/mlcc/models/<hash> \\
        [--only mlp,resnet50,...] [--threads 1,2] [--rounds 5] [--out build/bench]
    /usr/bin/python3 tools/bench/report.py --from build/bench/results.json

The first form runs tools/bench/bench.py (mlcc and ONNX Runtime interleaved,
one process per side and round, medians of the in-session runs) at each
thread count and keeps its JSON as OUT/results.json; --from renders a JSON
written before. Either way it writes into OUT (default build/bench/):

  report.md   per model and thread count: mlcc and ORT medians, mlcc/ORT,
              the issue's goal for that ratio and whether it is met; per
              model the speed-up of the highest thread count over 1 thread
              on each side; the date, the CPU and ORT's version
  report.png  mlcc/ORT per model, one bar per thread count, the goals as
              marks and 1.0 (as fast as ORT) as a line

Goals (issue 17): every model <= 1.0; ResNet-50 <= 0.85, BERT-base <= 0.8,
MobileNetV2 <= 0.7, CIFAR-10 <= 0.5, MLP <= 0.3.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

GOALS = {"resnet50": 0.85, "bert_base": 0.8, "mobilenetv2": 0.7,
         "cifar10_sigmoid_bn": 0.5, "mlp": 0.3}
DEFAULT_GOAL = 1.0


def goal_of(model):
    return GOALS.get(model, DEFAULT_GOAL)


def run_bench(args, json_path):
    cmd = [sys.executable, os.path.join(HERE, "bench.py"), "--models", args.models,
           "--threads", args.threads, "--rounds", str(args.rounds), "--json", json_path]
    if args.only:
        cmd += ["--only", args.only]
    for extra in args.bench_arg:
        cmd.append(extra)
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    if subprocess.run(cmd).returncode != 0:
        print("report: bench.py reported a failure; the report has what it measured",
              file=sys.stderr)


def rows_by_model(results):
    """{model: {threads: result}} in the order the models were run."""
    table = {}
    for r in results:
        if r.get("mlcc_run_ms") is None or not r.get("ort_run_ms"):
            continue
        table.setdefault(r["model"], {})[r["threads"]] = r
    return table


def markdown(data):
    table = rows_by_model(data["results"])
    threads = sorted({t for per in table.values() for t in per})
    lines = [f"mlcc `--target {data.get('mlcc_target', 'avx512')}` beside ONNX Runtime "
             f"{data['ort_version']} (CPU EP), batch 1, medians of in-session runs.",
             "",
             f"CPU: {data['cpu']}.", ""]
    lines += ["- " + line.lstrip("# ") for line in data.get("header", [])[1:]]
    lines.append("")
    head = ["model"]
    for t in threads:
        head += [f"mlcc ms ({t}t)", f"ORT ms ({t}t)", f"mlcc/ORT ({t}t)"]
    head += ["goal", "met"]
    if len(threads) > 1:
        head += [f"mlcc {threads[-1]}t/1t", f"ORT {threads[-1]}t/1t"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" for _ in head) + "|")
    met_all = True
    for model, per in table.items():
        row = [model]
        met = True
        for t in threads:
            r = per.get(t)
            if r is None:
                row += ["-", "-", "-"]
                met = False
                continue
            ratio = r["mlcc_run_ms"] / r["ort_run_ms"]
            met = met and ratio <= goal_of(model)
            row += [f"{r['mlcc_run_ms']:.3f}", f"{r['ort_run_ms']:.3f}", f"{ratio:.2f}"]
        met_all = met_all and met
        row += [f"<= {goal_of(model):.2f}", "yes" if met else "**no**"]
        if len(threads) > 1:
            one, most = per.get(threads[0]), per.get(threads[-1])
            if one and most:
                row += [f"{one['mlcc_run_ms'] / most['mlcc_run_ms']:.2f}x",
                        f"{one['ort_run_ms'] / most['ort_run_ms']:.2f}x"]
            else:
                row += ["-", "-"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Every goal met." if met_all else
                 "Goals not met are marked **no** (a goal holds at every thread count).")
    ratios = [per[t]["mlcc_run_ms"] / per[t]["ort_run_ms"]
              for per in table.values() for t in per]
    if ratios:
        lines.append(f"Geometric mean of mlcc/ORT over the {len(ratios)} rows: "
                     f"{statistics.geometric_mean(ratios):.2f}.")
    return "\n".join(lines) + "\n"


def chart(data, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("report: matplotlib missing (Debian: apt install python3-matplotlib)")
    table = rows_by_model(data["results"])
    models = list(table)
    threads = sorted({t for per in table.values() for t in per})
    width = 0.8 / max(len(threads), 1)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(models) + 2), 4.5))
    for i, t in enumerate(threads):
        xs, ys = [], []
        for m, model in enumerate(models):
            r = table[model].get(t)
            if r:
                xs.append(m + (i - (len(threads) - 1) / 2) * width)
                ys.append(r["mlcc_run_ms"] / r["ort_run_ms"])
        bars = ax.bar(xs, ys, width, label=f"{t} thread{'s' if t > 1 else ''}")
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    ax.scatter(range(len(models)), [goal_of(m) for m in models], marker="_", s=400,
               color="black", zorder=3, label="goal")
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=30, ha="right")
    ax.set_ylabel("mlcc / ONNX Runtime latency (lower is better)")
    ax.set_title(f"mlcc vs ORT {data['ort_version']}: {data['cpu'].split(' [')[0]}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", help="as bench.py --models")
    ap.add_argument("--only", default="", help="as bench.py --only")
    ap.add_argument("--threads", default="1,2", help="as bench.py --threads")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds (processes per side) per model and thread count")
    ap.add_argument("--bench-arg", action="append", default=[],
                    help="one more bench.py argument (repeat), e.g. --bench-arg=--dim "
                    "--bench-arg=unet:batch=2")
    ap.add_argument("--from", dest="source", help="render this bench.py --json file instead")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    args = ap.parse_args()
    if not args.source and not args.models:
        ap.error("give --models (to run the benchmark) or --from (to render one)")
    os.makedirs(args.out, exist_ok=True)
    source = args.source
    if not source:
        source = os.path.join(args.out, "results.json")
        run_bench(args, source)
    with open(source) as f:
        data = json.load(f)
    if not rows_by_model(data.get("results", [])):
        sys.exit(f"report: no results in {source}")
    md = markdown(data)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(md)
    chart(data, os.path.join(args.out, "report.png"))
    print(md)
    print(f"report: wrote {args.out}/report.md and {args.out}/report.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
