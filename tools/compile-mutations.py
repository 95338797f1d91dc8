#!/usr/bin/python3
"""Compiles single structural mutations of ONNX models for avx512.

    tools/compile-mutations.py [--seeds onnx|mlir] [--every N] [--jobs J]
                               [--skip K] [BUILD_DIR]
                               (default onnx, 8, the cores, 0, build)

The fuzz targets stop after the simplify pipeline; a user's `mlcc compile`
goes on through the fusions, the kernels and the object writer. This runs
`mlcc compile --target avx512` on every N-th of the mutations
tools/fuzz-mutations.py makes (of the ONNX models, or of the .mlir
files), J at a time, after the first K of those (to go on with a run).
Each must end in an object or in an error: a crash (a signal), an exit
status other than 0 and 1, an exit 1 without an `mlcc: error:` line, an
"internal error", an exit 0 without the object, or a minute without an
end is a finding, kept with its output in
BUILD_DIR/fuzz/mutations/SEEDS-compile/findings/. The exit status is 1
when there was any.
"""
import concurrent.futures
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import fuzz_mlir_mutations
import fuzz_onnx_mutations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 60


SEEDS = {'onnx': fuzz_onnx_mutations.mutations, 'mlir': fuzz_mlir_mutations.mutations}


def verdict(mlcc, data, suffix):
    """None when compiling `data` ends as it should, else what went wrong
    and mlcc's output."""
    with tempfile.TemporaryDirectory() as tmp:
        model, obj = os.path.join(tmp, 'm' + suffix), os.path.join(tmp, 'm.o')
        with open(model, 'wb') as f:
            f.write(data)
        try:
            run = subprocess.run([mlcc, 'compile', model, '--target', 'avx512',
                                  '-o', obj], capture_output=True, text=True,
                                 errors='replace', timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return f'no end after {TIMEOUT} s', ''
        out = run.stdout + run.stderr
        if run.returncode < 0:
            return f'killed by signal {-run.returncode}', out
        if run.returncode not in (0, 1):
            return f'exit {run.returncode}', out
        if 'internal error' in out:
            return 'internal error', out
        if run.returncode == 1 and 'mlcc: error:' not in out:
            return 'exit 1 without an error message', out
        if run.returncode == 0 and not os.path.exists(obj):
            return 'exit 0 without the object', out
    return None


def main():
    args, options = sys.argv[1:], {'--seeds': 'onnx', '--every': '8', '--skip': '0',
                                   '--jobs': str(os.cpu_count() or 1)}
    while args[:1] and args[0] in options:
        options[args[0]], args = args[1], args[2:]
    seeds, every, jobs, skip = (options['--seeds'], int(options['--every']),
                                int(options['--jobs']), int(options['--skip']))
    if seeds not in SEEDS:
        sys.exit(f'compile-mutations: --seeds onnx or mlir, not {seeds}')
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, 'build'))
    mlcc = os.path.join(build, 'bin', 'mlcc')
    if not os.access(mlcc, os.X_OK):
        sys.exit(f'compile-mutations: no {mlcc} (tools/build.sh)')
    findings = os.path.join(build, 'fuzz', 'mutations', f'{seeds}-compile', 'findings')
    shutil.rmtree(findings, ignore_errors=True)
    os.makedirs(findings)

    picked = (d for i, d in enumerate(SEEDS[seeds]())
              if i % every == 0 and i // every >= skip)
    suffix = '.' + seeds
    total = failed = 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        # A bounded window of runs in flight, so the mutations are made as
        # they are needed.
        pending = set()
        for data in picked:
            pending.add(pool.submit(lambda d: (d, verdict(mlcc, d, suffix)), data))
            if len(pending) < 4 * jobs:
                continue
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                total += 1
                failed += keep(future.result(), findings, suffix)
            if total % 1000 < len(done):
                print(f'compile-mutations: {total} compiled, {failed} failing',
                      flush=True)
        for future in concurrent.futures.as_completed(pending):
            total += 1
            failed += keep(future.result(), findings, suffix)
    print(f'compile-mutations: {failed} failing of {total} in {findings}')
    sys.exit(1 if failed else 0)


def keep(result, findings, suffix):
    data, bad = result
    if bad is None:
        return 0
    what, out = bad
    name = os.path.join(findings, hashlib.sha1(data).hexdigest())
    with open(name + suffix, 'wb') as f:
        f.write(data)
    with open(name + '.log', 'w') as f:
        f.write(what + '\n' + out)
    print(f'compile-mutations: {name}{suffix}: {what}', flush=True)
    return 1


if __name__ == '__main__':
    main()
