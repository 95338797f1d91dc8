#!/usr/bin/python3
"""mlcc beside ONNX Runtime (CPU provider) on the same models, same threads,
same machine. A benchmark, not a test: it never fails on speed.

    /usr/bin/python3 tools/bench/bench.py --models DIR[,DIR...] --threads 1[,2] --rounds 10

Each DIR is a model folder (model.onnx + test_data_set_0/) or a folder of
them (e.g. ~/.cache/mlcc/models/<hash>/); --only picks names from those.
Needs `build/bin/mlcc` and `cd tools/bench && ONNXRUNTIME_NODE_INSTALL=skip
npm install` (onnxruntime-node, pinned in package.json).

Per model and thread count, the two contenders run interleaved round by
round (mlcc, ORT, mlcc, ORT, ...) so machine noise hits both alike:

  mlcc  one `mlcc bench MODEL --target T --data DIR --runs N --json` process
        per round: it compiles the model, links the object in-process and
        times --ort-runs runs after 1 warm-up, like ORT's session (with
        --mlcc-target ref: one `mlcc run` process timed from outside).
  ORT   one `node ort_run.js` process per round: one untimed warm-up run,
        then --ort-runs timed runs inside the session. Reported both as the
        in-session median latency (steady state, what ORT users see) and as
        the process wall time (node start-up + session creation + warm-up +
        runs), and as 'cold' = session creation + first run timed inside the
        process (node start-up excluded), the like-for-like figure against
        mlcc's whole process.

Before timing, --check (default on) runs each contender once against the
folder's output_N.pb (the torch/NumPy reference) and reports ORT's max abs
error, so we know both compute the same thing.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MLCC = os.path.join(ROOT, "build", "bin", "mlcc")
ORT_RUN = os.path.join(HERE, "ort_run.js")

# Symbolic dims mlcc must be told (ORT takes the shapes from the inputs).
# Same as test/models/CMakeLists.txt; extend with --dim NAME:DIM=VALUE.
KNOWN_DIMS = {
    "bert_base": ["batch=1"],
    "bert_base_opset13": ["batch=1"],
}
# Tolerances for the --check pass (as in test/models/CMakeLists.txt).
KNOWN_TOL = {"mlp": (1e-4, 1e-5), "cifar10_sigmoid_bn": (1e-4, 1e-5),
             "loop_solver": (1e-4, 1e-5), "if_model": (1e-5, 1e-6)}
DEFAULT_TOL = (1e-3, 1e-4)  # rtol, atol


def cpu_model():
    name, extra = platform.processor() or "unknown", []
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        for line in info.splitlines():
            key, _, val = line.partition(":")
            key, val = key.strip(), val.strip()
            if key == "model name":
                name = val
            elif key in ("cpu family", "model"):  # first processor only (break below)
                extra.append(f"{key} {val}")
            elif key == "flags":
                flags = set(val.split())
                extra.append("avx512f" if "avx512f" in flags else "no avx512f")
                break
    except OSError:
        pass
    return f"{name} [{', '.join(extra)}]" if extra else name


def find_models(dirs, only):
    models = []
    for d in dirs:
        d = os.path.abspath(os.path.expanduser(d))
        if os.path.isfile(os.path.join(d, "model.onnx")):
            cands = [d]
        else:
            cands = sorted(os.path.join(d, n) for n in os.listdir(d)
                           if os.path.isfile(os.path.join(d, n, "model.onnx")))
        for c in cands:
            name = os.path.basename(c)
            if only and name not in only:
                continue
            data = os.path.join(c, "test_data_set_0")
            if not os.path.isdir(data):
                print(f"skip {name}: no test_data_set_0", file=sys.stderr)
                continue
            models.append((name, os.path.join(c, "model.onnx"), data))
    if only:  # keep --only's order
        models.sort(key=lambda m: only.index(m[0]))
    return models


def mlcc_command(args, model, data, dims, threads, check=None):
    """The mlcc contender's command. The ref executor is single-threaded and
    takes no thread count; a compiled target will take `threads` here."""
    cmd = [args.mlcc, "run", model, "--target", args.mlcc_target, "--data", data]
    for d in dims:
        cmd += ["--dim", d]
    cmd += args.mlcc_arg
    if check:
        cmd += ["--check", "--rtol", str(check[0]), "--atol", str(check[1])]
    return cmd


def ort_command(args, model, data, threads, runs, warmup, check=None):
    cmd = [args.node, ORT_RUN, model, data, "--threads", str(threads),
           "--runs", str(runs), "--warmup", str(warmup)]
    if check:
        cmd += ["--check", "--rtol", str(check[0]), "--atol", str(check[1])]
    return cmd


def timed(cmd, timeout):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    ms = (time.perf_counter() - t0) * 1e3
    return p, ms


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def fail(what, cmd, p):
    raise RuntimeError(f"{what} failed (rc {p.returncode}): {' '.join(cmd)}\n"
                       f"{p.stdout[-2000:]}{p.stderr[-2000:]}")


def check_model(args, name, model, data, dims):
    tol = KNOWN_TOL.get(name, DEFAULT_TOL)
    res = {}
    cmd = ort_command(args, model, data, 1, 0, 0, check=tol)
    p, _ = timed(cmd, args.timeout)
    checks = [o for o in json_lines(p.stdout) if o.get("kind") == "check"]
    if p.returncode not in (0, 1) or not checks:
        fail("ORT check", cmd, p)
    res["ort_max_abs"] = max(c["max_abs_err"] if c["max_abs_err"] is not None
                             else float("inf") for c in checks)
    res["ort_ok"] = all(c["ok"] for c in checks)
    cmd = mlcc_command(args, model, data, dims, 1, check=tol)
    p, _ = timed(cmd, args.timeout)
    res["mlcc_ok"] = p.returncode == 0
    if p.returncode not in (0, 1):
        fail("mlcc check", cmd, p)
    res["tol"] = tol
    return res


def mlcc_bench_command(args, model, data, dims, threads):
    cmd = [args.mlcc, "bench", model, "--target", args.mlcc_target, "--data", data,
           "--threads", str(threads), "--runs", str(args.ort_runs), "--warmup", "1",
           "--json"]
    for d in dims:
        cmd += ["--dim", d]
    return cmd + args.mlcc_arg


def bench_model(args, name, model, data, dims, threads):
    mlcc_ms, ort_proc_ms, ort_run_ms, ort_load_ms, ort_cold_ms = [], [], [], [], []
    mlcc_run_ms = []
    for r in range(args.rounds):
        # mlcc first on even rounds, ORT first on odd ones: neither always
        # runs right after the other's cache/frequency footprint.
        order = ("mlcc", "ort") if r % 2 == 0 else ("ort", "mlcc")
        for who in order:
            if who == "mlcc" and args.mlcc_target != "ref":
                cmd = mlcc_bench_command(args, model, data, dims, threads)
                p, ms = timed(cmd, args.timeout)
                if p.returncode != 0:
                    fail("mlcc", cmd, p)
                mlcc_ms.append(ms)
                mlcc_run_ms += [o["ms"] for o in json_lines(p.stdout) if o.get("kind") == "run"]
            elif who == "mlcc":
                cmd = mlcc_command(args, model, data, dims, threads)
                p, ms = timed(cmd, args.timeout)
                if p.returncode != 0:
                    fail("mlcc", cmd, p)
                mlcc_ms.append(ms)
            else:
                cmd = ort_command(args, model, data, threads, args.ort_runs, 1)
                p, ms = timed(cmd, args.timeout)
                if p.returncode != 0:
                    fail("ORT", cmd, p)
                lines = json_lines(p.stdout)
                ort_proc_ms.append(ms)
                ort_run_ms += [o["ms"] for o in lines if o.get("kind") == "run"]
                load = [o["ms"] for o in lines if o.get("kind") == "load"]
                first = [o["ms"] for o in lines if o.get("kind") == "warmup"]
                ort_load_ms += load
                ort_cold_ms.append(load[0] + first[0])
        if args.verbose:
            print(f"  {name} t={threads} round {r}: mlcc {mlcc_ms[-1]:.1f} ms, "
                  f"ORT proc {ort_proc_ms[-1]:.1f} ms", file=sys.stderr)
    med = statistics.median
    return {
        "model": name, "threads": threads, "rounds": args.rounds,
        "mlcc_proc_ms": med(mlcc_ms), "mlcc_proc_min_ms": min(mlcc_ms),
        "mlcc_run_ms": med(mlcc_run_ms) if mlcc_run_ms else None,
        "mlcc_run_samples_ms": mlcc_run_ms,
        "ort_run_ms": med(ort_run_ms), "ort_run_min_ms": min(ort_run_ms),
        "ort_load_ms": med(ort_load_ms), "ort_cold_ms": med(ort_cold_ms),
        "ort_proc_ms": med(ort_proc_ms),
        "mlcc_samples_ms": mlcc_ms, "ort_run_samples_ms": ort_run_ms,
        "ort_proc_samples_ms": ort_proc_ms, "ort_cold_samples_ms": ort_cold_ms,
    }


def report_compiled(args, models, threads, dims, ort_version):
    """The table for a compiled target: in-session medians on both sides."""
    header = [
        f"# mlcc --target {args.mlcc_target} vs ONNX Runtime {ort_version} (CPU EP, graph opt 'all', "
        f"inter-op 1), batch 1",
        f"# {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}"
        f"  cpu: {cpu_model()} ({os.cpu_count()} logical)  {platform.system()} {platform.release()}",
        f"# {args.rounds} interleaved rounds; each round one mlcc process and one ORT process, "
        f"each timing {args.ort_runs} runs after 1 warm-up; medians over all runs",
    ]
    print("\n".join(header), flush=True)
    results = []
    for name, model, data in models:
        check = None
        if args.check:
            try:
                check = check_model(args, name, model, data, dims.get(name, []))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"# {name}: check failed: {e}", file=sys.stderr)
        for t in threads:
            try:
                res = bench_model(args, name, model, data, dims.get(name, []), t)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"# {name} t={t}: {e}", file=sys.stderr)
                continue
            res["check"] = check
            results.append(res)
    cols = ["model", "thr", "mlcc ms", "ORT ms", "mlcc/ORT", "mlcc ok", "ORT ok"]
    rows = []
    for r in results:
        c = r["check"]
        rows.append([r["model"], str(r["threads"]), f"{r['mlcc_run_ms']:.3f}",
                     f"{r['ort_run_ms']:.3f}", f"{r['mlcc_run_ms'] / r['ort_run_ms']:.2f}",
                     ("yes" if c["mlcc_ok"] else "NO") if c else "-",
                     ("yes" if c["ort_ok"] else "NO") if c else "-"])
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c)
              for i, c in enumerate(cols)]
    print(" | ".join(c.ljust(w) for c, w in zip(cols, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(v.ljust(w) if i == 0 else v.rjust(w)
                         for i, (v, w) in enumerate(zip(row, widths))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "ort_version": ort_version, "cpu": cpu_model(),
                       "mlcc_target": args.mlcc_target, "results": results}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True,
                    help="comma-separated model folders or folders of model folders")
    ap.add_argument("--only", default="", help="comma-separated model names to keep, in this order")
    ap.add_argument("--threads", default="1", help="comma-separated thread counts (ORT intra-op)")
    ap.add_argument("--rounds", type=int, default=10, help="interleaved rounds per model")
    ap.add_argument("--ort-runs", type=int, default=5,
                    help="timed ORT runs inside each ORT process (after 1 warm-up)")
    ap.add_argument("--mlcc", default=DEFAULT_MLCC, help="mlcc binary")
    ap.add_argument("--mlcc-target", default="avx512",
                    help="avx512 (mlcc bench, in-session medians) or ref (mlcc run, whole process)")
    ap.add_argument("--dim", action="append", default=[],
                    help="NAME:DIM=VALUE, a symbolic dim to fix for model NAME (mlcc --dim)")
    ap.add_argument("--mlcc-arg", action="append", default=[],
                    help="one more argument of mlcc run/bench (repeat), e.g. "
                    "--mlcc-arg=--cpu --mlcc-arg=native --mlcc-arg=--quantize "
                    "--mlcc-arg=int8 --mlcc-arg=--calibrate --mlcc-arg=DIR")
    ap.add_argument("--node", default="node")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="skip the correctness pass against output_N.pb")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per process")
    ap.add_argument("--json", help="also write all results (with samples) here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    only = [s for s in args.only.split(",") if s]
    models = find_models([d for d in args.models.split(",") if d], only)
    if not models:
        sys.exit("no models found")
    threads = [int(t) for t in args.threads.split(",") if t]
    dims = {k: list(v) for k, v in KNOWN_DIMS.items()}
    for spec in args.dim:
        name, _, d = spec.partition(":")
        dims.setdefault(name, []).append(d)
    if not os.path.isfile(os.path.join(HERE, "node_modules", "onnxruntime-node", "package.json")):
        sys.exit("onnxruntime-node missing: cd tools/bench && ONNXRUNTIME_NODE_INSTALL=skip npm install")
    with open(os.path.join(HERE, "node_modules", "onnxruntime-node", "package.json")) as f:
        ort_version = json.load(f)["version"]

    ref = args.mlcc_target == "ref"
    if not ref:
        return report_compiled(args, models, threads, dims, ort_version)
    header = [
        f"# mlcc vs ONNX Runtime {ort_version} (CPU EP, graph opt 'all', inter-op 1)",
        f"# {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}"
        f"  cpu: {cpu_model()} ({os.cpu_count()} logical)  {platform.system()} {platform.release()}",
        f"# rounds {args.rounds}, interleaved mlcc/ORT; ORT {args.ort_runs} timed runs per process after 1 warm-up",
        f"# mlcc column: `mlcc run --target {args.mlcc_target}` whole-process wall time, INCLUDING "
        f"ONNX import, simplify pipeline and weight load (no in-process timer in mlcc yet)",
    ]
    if ref:
        header.append("# NOTE: mlcc target is `ref`, the reference executor (the oracle, single-threaded, "
                      "unoptimized) standing in until --target avx512 lands; it ignores --threads")
    header.append("# ORT run = median in-session latency (steady state); ORT cold = session create + "
                  "first run, timed in-process (the closest match to mlcc's whole process; node "
                  "start-up excluded, whole-process ORT times are in --json as ort_proc_ms)")
    header.append("# mlcc/ORT cold is like for like today; mlcc/ORT run charges mlcc its load time "
                  "(pessimistic for mlcc)")
    print("\n".join(header), flush=True)

    results, checks = [], {}
    for name, model, data in models:
        if args.check:
            try:
                checks[name] = check_model(args, name, model, data, dims.get(name, []))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"# {name}: check failed: {e}", file=sys.stderr)
                checks[name] = None
        for t in threads:
            try:
                res = bench_model(args, name, model, data, dims.get(name, []), t)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"# {name} t={t}: {e}", file=sys.stderr)
                continue
            res["check"] = checks.get(name)
            results.append(res)

    cols = ["model", "thr", "mlcc proc ms", "ORT cold ms", "ORT run ms",
            "mlcc/ORT cold", "mlcc/ORT run"]
    if args.check:
        cols += ["ORT max|err|", "ORT ok", "mlcc ok"]
    rows = []
    for r in results:
        row = [r["model"], str(r["threads"]), f"{r['mlcc_proc_ms']:.1f}", f"{r['ort_cold_ms']:.1f}",
               f"{r['ort_run_ms']:.3f}", f"{r['mlcc_proc_ms'] / r['ort_cold_ms']:.2f}",
               f"{r['mlcc_proc_ms'] / r['ort_run_ms']:.1f}"]
        if args.check:
            c = r["check"]
            row += ([f"{c['ort_max_abs']:.2e}", "yes" if c["ort_ok"] else "NO",
                     "yes" if c["mlcc_ok"] else "NO"] if c else ["-", "-", "-"])
        rows.append(row)
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c)
              for i, c in enumerate(cols)]
    print(" | ".join(c.ljust(w) for c, w in zip(cols, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(v.ljust(w) if i == 0 else v.rjust(w)
                         for i, (v, w) in enumerate(zip(row, widths))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "ort_version": ort_version, "cpu": cpu_model(),
                       "mlcc_target": args.mlcc_target, "results": results}, f, indent=1)
    return 0 if len(results) == len(models) * len(threads) else 1


if __name__ == "__main__":
    sys.exit(main())
