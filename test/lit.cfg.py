# -*- Python -*- lit configuration for mlcc.
import os

import lit.formats

config.name = "mlcc"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mlcc_binary_dir, "test")
config.excludes = ["CMakeLists.txt", "unit", "conformance", "models", "Inputs", "metal",
                   "fuzz"]

# Tools first: ours, then LLVM's FileCheck / not / count.
config.environment["PATH"] = os.pathsep.join(
    [config.mlcc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%onnx_node_tests", "/usr/share/libonnx-testdata/data/node"))
# What an application compiles and links a model with.
config.substitutions.append(
    ("%mlcc_runtime_include", os.path.join(config.mlcc_source_dir, "runtime", "include")))
config.substitutions.append(
    ("%mlcc_runtime_lib", os.path.join(config.mlcc_binary_dir, "runtime", "libmlcc_runtime.a")))
# The same runtime built with -fsanitize=address or =thread (runtime/CMakeLists.txt),
# by the build's C compiler: a program linking one is built by it too (%cc),
# since gcc's and clang's sanitizer runtimes differ.
config.substitutions.append(("%cc", config.mlcc_cc))
for sanitizer in ("address", "thread"):
    config.substitutions.append(
        ("%%mlcc_runtime_%s_lib" % sanitizer,
         os.path.join(config.mlcc_binary_dir, "runtime", "libmlcc_runtime_%s.a" % sanitizer)))

# The CUDA toolkit's ptxas: the cuda target's tests that assemble kernels
# need it (UNSUPPORTED without).
if config.mlcc_ptxas and os.path.exists(config.mlcc_ptxas):
    config.available_features.add("ptxas")

# clang++ checks the metal target's MSL (test/metal/check_msl.py).
if config.mlcc_clangxx and os.path.exists(config.mlcc_clangxx):
    config.available_features.add("msl-check")
    config.substitutions.append(
        ("%check_msl", "%s %s --clang %s" % (
            config.python_executable,
            os.path.join(config.mlcc_source_dir, "test", "metal", "check_msl.py"),
            config.mlcc_clangxx)))

# Tests of kernels for instruction sets this CPU may lack (REQUIRES:
# avx512vnni) are UNSUPPORTED here, never passed without running.
def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()

_flags = cpu_flags()
for flag, feature in [("avx512_vnni", "avx512vnni"), ("avx512_bf16", "avx512bf16"),
                      ("amx_tile", "amx")]:
    if flag in _flags:
        config.available_features.add(feature)
