"""Single-token mutations of graph-dialect text, for tools/fuzz-mutations.py
and tools/compile-mutations.py.

The seeds are the repository's .mlir files under test/ and samples/ (up to
16,000 bytes); every integer is replaced by 0, 1, 2, 3, -1, itself +-1 and
doubled; every float by 0, -0, -1, 1e30, NaN and infinity; every element
type by the others; every static dim by `?` and each `?` by 1; every
quoted string by others the seeds use; every unary or binary elementwise
op by another of its kind.
"""
import os
import re

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


def mutations():
    """Every mutation of every seed, as bytes."""
    texts = list(seeds())
    found = sorted({s for t in texts for s in re.findall(r'"[a-z_0-9]{1,20}"', t)})
    strings = found[::max(1, len(found) // 12)]
    for text in texts:
        for start, end, new in replacements(text, strings):
            mutated = text[:start] + new + text[end:]
            if mutated != text and len(mutated) <= MAX_BYTES:
                yield mutated.encode()
