#!/usr/bin/python3
"""Runs every single-token mutation of the mlir-input fuzz seeds once.

    tools/fuzz-mutations.py [BUILD_DIR]     (default build-sanitize)

libFuzzer mutates bytes at random and may take millions of runs to turn a
test's `epsilon = 1e-12` into a negative one, or a scale into NaN; this
tries each such change to each seed (the repository's .mlir files under
test/ and samples/) deterministically: every integer replaced by 0, 1, 2,
3, -1, itself +-1 and doubled; every float by 0, -0, -1, 1e30, NaN and
infinity; every element type by the others; every static dim by `?` and
each `?` by 1; every quoted string by others the seeds use; every unary
or binary elementwise op by another of its kind. Each input that makes
the fuzz target fail (a finding, a sanitizer report) is kept in
BUILD_DIR/fuzz/mutations/findings/ and the run goes on; the exit status
is 1 when there was any. On a Zen 4 (one process) it took 10 minutes
(181,934 inputs). Fix what it finds and keep each in test/fuzz/regressions/.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_BYTES = 16000  # below the fuzz target's kMaxInputBytes

INTS = lambda v: {0, 1, 2, 3, -1, v + 1, v - 1, 2 * v} - {v}
FLOATS = ('0.0', '-0.0', '-1.0', '1.0E+30', '0x7FC00000', '0x7F800000')
TYPES = ('f32', 'f16', 'i64', 'i32', 'i1')
UNARY = ('relu', 'sigmoid', 'tanh', 'exp', 'neg', 'abs', 'sqrt', 'erf',
         'identity')
BINARY = ('add', 'sub', 'mul', 'div', 'pow', 'max', 'min')


def seeds():
    for top in ('test', 'samples'):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                if name.endswith('.mlir') and os.path.getsize(path) <= MAX_BYTES:
                    yield open(path, errors='replace').read()


def replacements(text, strings):
    """(start, end, new) for every single-token change of `text`."""
    for m in re.finditer(r'-?\d+', text):
        for w in INTS(int(m.group())):
            yield m.start(), m.end(), str(w)
    for m in re.finditer(r'-?\d+\.\d*(E[-+]?\d+)?|0x[0-9A-F]{8}', text):
        for w in FLOATS:
            yield m.start(), m.end(), w
    for m in re.finditer(r'\b(f32|f16|i64|i32|i8|i1)\b', text):
        for w in TYPES:
            yield m.start(), m.end(), w
    for m in re.finditer(r'(?<=[<x])(\d+|\?)(?=x)', text):
        yield m.start(), m.end(), '1' if m.group() == '?' else '?'
    for m in re.finditer(r'"[a-z_0-9]{1,20}"', text):
        for w in strings:
            yield m.start(), m.end(), w
    for m in re.finditer(r'graph\.([a-z_]+)', text):
        kind = m.group(1)
        for w in UNARY if kind in UNARY else BINARY if kind in BINARY else ():
            yield m.start(1), m.end(1), w


def write_mutations(folder):
    texts = list(seeds())
    found = sorted({s for t in texts for s in re.findall(r'"[a-z_0-9]{1,20}"', t)})
    strings = found[::max(1, len(found) // 12)]
    count = 0
    for text in texts:
        for start, end, new in replacements(text, strings):
            mutated = text[:start] + new + text[end:]
            if mutated == text or len(mutated) > MAX_BYTES:
                continue
            name = hashlib.sha1(mutated.encode()).hexdigest()
            with open(os.path.join(folder, name), 'w') as f:
                f.write(mutated)
            count += 1
    return len(os.listdir(folder)), count


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                            os.path.join(ROOT, 'build-sanitize'))
    target = os.path.join(build, 'bin', 'mlcc-fuzz-mlir-input')
    if not os.access(target, os.X_OK):
        sys.exit(f'fuzz-mutations: no {target} (tools/build.sh --sanitize)')
    work = os.path.join(build, 'fuzz', 'mutations')
    inputs, artifacts, findings = (os.path.join(work, d)
                                   for d in ('inputs', 'artifacts', 'findings'))
    for d in (inputs, findings):
        shutil.rmtree(d, ignore_errors=True)
    for d in (inputs, artifacts, findings):
        os.makedirs(d, exist_ok=True)
    unique, total = write_mutations(inputs)
    print(f'fuzz-mutations: {unique} distinct inputs ({total} mutations)')

    env = dict(os.environ, ASAN_OPTIONS='detect_leaks=0:allocator_may_return_null=1')
    log = os.path.join(work, 'run.log')
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
            break
        crashes = os.listdir(artifacts)
        name = crashes[0].split('-', 1)[1] if crashes else ''
        if not os.path.exists(os.path.join(inputs, name)):
            sys.exit(f'fuzz-mutations: the target failed (exit {status}) '
                     f'with no input to blame; see {log}')
        what = next((l.strip() for l in open(log, errors='replace')
                     if 'finding:' in l or 'ERROR:' in l), f'exit {status}')
        shutil.move(os.path.join(inputs, name), os.path.join(findings, name))
        print(f'fuzz-mutations: {findings}/{name}: {what}')
    kept = os.listdir(findings)
    print(f'fuzz-mutations: {len(kept)} failing inputs in {findings}')
    sys.exit(1 if kept else 0)


if __name__ == '__main__':
    main()
