#!/usr/bin/env python3
"""Compiles one model for --target metal and checks what an Apple build gets.

Usage: check_metal_model.py --mlcc MLCC --clang CLANG --llvm-tools DIR
                            --out DIR MODEL [--dim NAME=VALUE]... [--name C]

- The object is an arm64 Mach-O object file with the model's API
  (mlcc_NAME_create, _run, _destroy, calling the runtime's
  mlcc_model_create) and a kernel
  header (MLCCMETL) for each kernel --emit device-asm prints;
- every kernel's MSL passes check_msl.py (clang, C++ for OpenCL).
Exits 1 on the first check that fails, saying which.
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s\n%s" % (" ".join(cmd), p.stdout))
    return p.stdout


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
    run([args.mlcc, "compile"] + common + ["--emit", "device-asm", "-o", msl])

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
        headers_in_object = f.read().count(b"MLCCMETL")
    with open(msl, encoding="utf-8") as f:
        kernels = sum(1 for line in f if line.startswith("// kernel "))
    if kernels == 0 or headers_in_object != kernels:
        sys.exit("FAIL: the object carries %d Metal kernels, --emit device-asm "
                 "prints %d" % (headers_in_object, kernels))
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
