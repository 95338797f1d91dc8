#!/usr/bin/env python3
"""Compiles one model for --target metal and checks what an Apple build gets.

Usage: check_metal_model.py --mlcc MLCC --clang CLANG --llvm-tools DIR
                            --out DIR MODEL [--dim NAME=VALUE]... [--name C]

- The object is an arm64 Mach-O object file with the model's API
  (mlcc_NAME_create, _run, _destroy, calling the runtime's
  mlcc_model_create) and a kernel header (MLCCMETL) with its MSL for each
  kernel the compiler counts;
- every kernel's MSL, as the object carries it (written to OUT/model.metal),
  passes check_msl.py (clang, C++ for OpenCL).
Exits 1 on the first check that fails, saying which.
"""

import argparse
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s\n%s" % (" ".join(cmd), p.stdout))
    return p.stdout


def kernel_sources(data):
    """(name, MSL) of each kernel header (mlcc/device.h,
    mlcc_metal_kernel_header) in the object's bytes, read as the runtime
    reads them."""
    out = []
    for m in re.finditer(b"MLCCMETL", data):
        at = m.start()
        if at % 8:
            continue
        _, version, _, src, src_bytes, lib, lib_bytes = struct.unpack_from(
            "<8sIIQQQQ", data, at)
        source = data[at + src:at + src + src_bytes]
        if version != 20300 or not source.endswith(b"\0"):
            sys.exit("FAIL: the kernel header at %d is not MSL 2.3 with a "
                     "NUL-terminated source" % at)
        text = source[:-1].decode("utf-8")
        name = re.search(r"^kernel void (\w+)\(", text, re.M)
        if not name:
            sys.exit("FAIL: the kernel at %d has no kernel function" % at)
        out.append((name.group(1), text))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--clang", required=True)
    ap.add_argument("--llvm-tools", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--name", default="net", help="the model's C name")
    ap.add_argument("model")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    obj = os.path.join(args.out, "model.o")
    msl = os.path.join(args.out, "model.metal")
    common = [args.model, "--target", "metal", "--name", args.name]
    for d in args.dim:
        common += ["--dim", d]
    stats = run([args.mlcc, "compile"] + common + ["-o", obj, "--stats"])

    headers = run([os.path.join(args.llvm_tools, "llvm-objdump"), "--macho",
                   "--private-headers", obj])
    if not re.search(r"MH_MAGIC_64\s+ARM64\s+\S+\s+\S+\s+OBJECT\s", headers):
        sys.exit("FAIL: %s is not an arm64 Mach-O object:\n%s" %
                 (obj, headers[:400]))
    symbols = run([os.path.join(args.llvm_tools, "llvm-nm"), obj]).split("\n")
    api = "_mlcc_%s_" % args.name
    for want in ["T %screate" % api, "T %srun" % api, "T %sdestroy" % api,
                 "U _mlcc_model_create"]:
        if not any(line.endswith(want) for line in symbols):
            sys.exit("FAIL: %s has no symbol '%s'" % (obj, want))
    with open(obj, "rb") as f:
        sources = kernel_sources(f.read())
    kernels = int(re.search(r"metal: (\d+) kernels", stats).group(1))
    if kernels == 0 or len(sources) != kernels:
        sys.exit("FAIL: the object carries %d Metal kernels, the compiler "
                 "says %d" % (len(sources), kernels))
    with open(msl, "w", encoding="utf-8") as f:
        for name, source in sources:
            f.write("// kernel %s\n%s" % (name, source))
    check = subprocess.run([sys.executable, os.path.join(HERE, "check_msl.py"),
                            "--clang", args.clang, msl])
    if check.returncode != 0:
        sys.exit("FAIL: the MSL of %s" % args.model)
    for line in stats.splitlines():
        if line.startswith(("model '", "device schedule")):
            print(line)
    print("PASS: arm64 Mach-O with the model API and %d MSL kernels" % kernels)


if __name__ == "__main__":
    main()
