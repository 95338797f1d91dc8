#!/usr/bin/python3
"""Runs spirv-val on every kernel of a vulkan model object: the data
symbols mlcc_<name>_<kernel>_code (lowering/Common/CompileModel.cpp), cut
out of .rodata with llvm-nm and llvm-objcopy.

    validate_spirv.py MODEL.o

Prints "N kernels, all valid SPIR-V" (exit 0) or each failure (exit 1).
"""
import os
import subprocess
import sys
import tempfile


def main():
    obj = sys.argv[1]
    nm = subprocess.run(["llvm-nm", "-S", "--defined-only", obj], check=True,
                        capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        rodata = os.path.join(tmp, "rodata.bin")
        subprocess.run(["llvm-objcopy", "-O", "binary", "--only-section=.rodata",
                        obj, rodata], check=True)
        data = open(rodata, "rb").read()
        kernels = bad = 0
        for line in nm.splitlines():
            parts = line.split()
            if len(parts) != 4 or not parts[3].endswith("_code"):
                continue
            offset, size = int(parts[0], 16), int(parts[1], 16)
            path = os.path.join(tmp, parts[3] + ".spv")
            open(path, "wb").write(data[offset:offset + size])
            r = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", path],
                               capture_output=True, text=True)
            kernels += 1
            if r.returncode != 0:
                bad += 1
                print(f"{parts[3]}: {r.stdout}{r.stderr}")
        if bad:
            print(f"{bad} of {kernels} kernels are not valid SPIR-V")
            return 1
        print(f"{kernels} kernels, all valid SPIR-V")
        return 0 if kernels else 1


if __name__ == "__main__":
    sys.exit(main())
