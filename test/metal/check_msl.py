#!/usr/bin/env python3
"""Parses and type-checks MSL kernels with clang in C++ for OpenCL mode.

Usage: check_msl.py --clang CLANG [--jobs N] FILE_OR_DIR...

Each file is what `mlcc compile --target metal --emit device-asm` prints:
kernels, each after a "// kernel NAME" line, each its own translation unit.
Apple's compiler is not on this machine; shim/metal_stdlib maps Metal's
address spaces, vector types, attributes and functions onto clang's C++ for
OpenCL, so a kernel that is not valid C++ there, or that uses something the
shim does not declare, fails. Kernels are checked in batches, each wrapped
in a namespace of its own (SPIRV-Cross names its types _N in every unit)
and its kernel function renamed; a failing batch is checked kernel by
kernel to name the culprits.
Exits 1 when any kernel fails, 2 on bad usage or when no kernel is found.
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")
BATCH = 40


def kernels_of(path):
    """(path, name, text) for each kernel in one device-asm file."""
    out, name, lines = [], None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("// kernel "):
                if name is not None:
                    out.append((path, name, "".join(lines)))
                name, lines = line[len("// kernel "):].strip(), []
            else:
                lines.append(line)
    if name is not None:
        out.append((path, name, "".join(lines)))
    return out


def unit(kernels):
    """One translation unit holding `kernels`, each in its own namespace and
    its kernel function renamed (kernels have C linkage)."""
    parts = ["#include <metal_stdlib>\n"]
    for i, (_, name, text) in enumerate(kernels):
        body = [l for l in text.splitlines(True)
                if not l.startswith(("#include", "#pragma"))]
        parts.append("#define %s mlcc_check_%d_%s\nnamespace mlcc_check_%d {\n"
                     "%s}\n#undef %s\n" % (name, i, name, i, "".join(body),
                                            name))
    return "".join(parts)


def clang_check(clang, kernels):
    """'' when clang accepts the unit, else its diagnostics."""
    with tempfile.NamedTemporaryFile("w", suffix=".metal", delete=False) as f:
        f.write(unit(kernels))
        name = f.name
    try:
        r = subprocess.run(
            [clang, "-x", "clcpp", "-cl-std=clc++2021", "-fsyntax-only",
             "-cl-no-stdinc", "-cl-single-precision-constant",
             # Metal has no double: neither has the check.
             "-Xclang", "-cl-ext=-cl_khr_fp64,-__opencl_c_fp64",
             "-Werror=unknown-attributes", "-ferror-limit=5",
             "-I", SHIM,
             name], capture_output=True, text=True)
        return "" if r.returncode == 0 else (r.stdout + r.stderr).replace(
            name, "<kernel>")
    finally:
        os.unlink(name)


def check_batch(clang, batch):
    """[(path, name, diagnostics)] of the failing kernels of `batch`."""
    if not clang_check(clang, batch):
        return []
    failures = []
    for k in batch:
        message = clang_check(clang, [k])
        if message:
            failures.append((k[0], k[1], message))
    return failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--clang", required=True)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("paths", nargs="+")
    args = p.parse_args()
    files = []
    for path in args.paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, n) for n in os.listdir(path))
        else:
            files.append(path)
    kernels = [k for f in files for k in kernels_of(f)]
    if not kernels:
        print("check_msl: no kernels in %s" % " ".join(args.paths))
        return 2
    batches = [kernels[i:i + BATCH] for i in range(0, len(kernels), BATCH)]
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(lambda b: check_batch(args.clang, b), batches):
            failures += result
    for path, name, message in failures:
        print("FAIL %s kernel %s:\n%s" % (path, name, message))
    print("check_msl: %d of %d kernels from %d files pass clang's check" %
          (len(kernels) - len(failures), len(kernels), len(files)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
