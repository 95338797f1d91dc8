#!/usr/bin/python3
"""Runs every single mutation of a fuzz target's seeds through it once.

    tools/fuzz-mutations.py [--target mlir-input|onnx-import] [BUILD_DIR]
                                     (default mlir-input, build-sanitize)

libFuzzer mutates bytes at random and may take millions of runs to turn a
test's `epsilon = 1e-12` into a negative one, a scale into NaN, or an
If's condition into a float; this tries each such change to each seed
deterministically: for mlir-input, every single-token change of the
repository's .mlir files (tools/fuzz_mlir_mutations.py); for onnx-import,
every single structural change of the node tests' and the project's
small models (attributes, inputs, outputs, op types, element types,
shapes, initializers, opsets: tools/fuzz_onnx_mutations.py). Each input
that makes the fuzz target fail (a finding, a sanitizer report) is kept in
BUILD_DIR/fuzz/mutations/TARGET/findings/ and the run goes on; the exit
status is 1 when there was any. On a Zen 4, one process: mlir-input
181,934 inputs in 10 minutes, onnx-import 218,807 in 15 (222,334 since
graph inputs and outputs are removed too). Fix what it finds and keep
each in test/fuzz/regressions/TARGET/.
"""
import hashlib
import os
import shutil
import subprocess
import sys

import fuzz_mlir_mutations
import fuzz_onnx_mutations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {'mlir-input': fuzz_mlir_mutations.mutations,
           'onnx-import': fuzz_onnx_mutations.mutations}
BATCH = 5000  # inputs on disk at a time: the ONNX ones take up to 256 KiB


def batches(mutations):
    """Lists of distinct inputs, BATCH at a time."""
    seen, batch = set(), []
    for data in mutations:
        name = hashlib.sha1(data).hexdigest()
        if name not in seen:
            seen.add(name)
            batch.append((name, data))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def run_batch(target, batch, work):
    """Runs the inputs of `batch` through `target` once each, moving each
    that fails into work/findings; returns how many did."""
    inputs, artifacts, findings = (os.path.join(work, d)
                                   for d in ('inputs', 'artifacts', 'findings'))
    shutil.rmtree(inputs, ignore_errors=True)
    os.makedirs(inputs)
    for name, data in batch:
        with open(os.path.join(inputs, name), 'wb') as f:
            f.write(data)
    env = dict(os.environ, ASAN_OPTIONS='detect_leaks=0:allocator_may_return_null=1')
    log = os.path.join(work, 'run.log')
    failed = 0
    # libFuzzer stops at the first failing input: move it out, run again.
    while True:
        for f in os.listdir(artifacts):
            os.remove(os.path.join(artifacts, f))
        with open(log, 'w') as out:
            status = subprocess.call(
                [target, '-runs=0', '-timeout=20', '-rss_limit_mb=4096',
                 f'-artifact_prefix={artifacts}/', inputs],
                stdout=out, stderr=subprocess.STDOUT, env=env)
        if status == 0:
            return failed
        crashes = os.listdir(artifacts)
        name = crashes[0].split('-', 1)[1] if crashes else ''
        if not os.path.exists(os.path.join(inputs, name)):
            sys.exit(f'fuzz-mutations: the target failed (exit {status}) '
                     f'with no input to blame; see {log}')
        what = next((l.strip() for l in open(log, errors='replace')
                     if 'finding:' in l or 'ERROR:' in l), f'exit {status}')
        shutil.move(os.path.join(inputs, name), os.path.join(findings, name))
        print(f'fuzz-mutations: {findings}/{name}: {what}', flush=True)
        failed += 1


def main():
    args = sys.argv[1:]
    name = 'mlir-input'
    if args[:1] == ['--target']:
        name, args = args[1], args[2:]
    if name not in TARGETS:
        sys.exit(f'fuzz-mutations: no target {name} (one of {", ".join(TARGETS)})')
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, 'build-sanitize'))
    target = os.path.join(build, 'bin', f'mlcc-fuzz-{name}')
    if not os.access(target, os.X_OK):
        sys.exit(f'fuzz-mutations: no {target} (tools/build.sh --sanitize)')
    work = os.path.join(build, 'fuzz', 'mutations', name)
    findings = os.path.join(work, 'findings')
    shutil.rmtree(findings, ignore_errors=True)
    for d in ('artifacts', 'findings'):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    total = failed = 0
    for batch in batches(TARGETS[name]()):
        failed += run_batch(target, batch, work)
        total += len(batch)
        print(f'fuzz-mutations: {total} inputs, {failed} failing', flush=True)
    shutil.rmtree(os.path.join(work, 'inputs'), ignore_errors=True)
    print(f'fuzz-mutations: {failed} failing inputs of {total} in {findings}')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
