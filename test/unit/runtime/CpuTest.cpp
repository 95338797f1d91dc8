//===- CpuTest.cpp - CPUID detection and the model's CPU check ------------===//
//
// Detection is compared with Linux's own reading of CPUID (/proc/cpuinfo's
// flags); the check is driven through MLCC_CPU_DISABLE, which masks what
// detection found, so a missing feature is tested on any machine.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

std::set<std::string> procCpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0)
      continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;)
      flags.insert(w);
    return flags;
  }
  return {};
}

/// Sets MLCC_CPU_DISABLE for one test and clears it after.
struct DisabledFeatures {
  explicit DisabledFeatures(const char *names) {
    setenv("MLCC_CPU_DISABLE", names, 1);
  }
  ~DisabledFeatures() { unsetenv("MLCC_CPU_DISABLE"); }
};

int32_t neverRun(void *, const void *, const void *const *, void *const *,
                 mlcc_threadpool *) {
  FAIL("the entry of a model this CPU cannot run was called");
  return MLCC_INTERNAL;
}

} // namespace

TEST_CASE("detected features are /proc/cpuinfo's flags", "[runtime][cpu]") {
  std::set<std::string> flags = procCpuinfoFlags();
  if (flags.empty()) {
    WARN("no /proc/cpuinfo flags on this host: detection not compared");
    return;
  }
  uint64_t detected = mlcc_cpu_features();
  for (int bit = 0; bit < 64; ++bit) {
    const char *name = mlcc_cpu_feature_name(uint64_t(1) << bit);
    if (!name)
      continue;
    INFO(name);
    bool found = detected & (uint64_t(1) << bit);
    // Some kernels leave "abm" out of the flags under a hypervisor whose
    // CPUID reports LZCNT (seen on a Zen 5 VM, where lzcnt does execute).
    if (std::string(name) == "abm" && found)
      continue;
    CHECK(found == (flags.count(name) > 0));
  }
  // The whole test suite runs AVX-512 code: this machine has it.
  CHECK((detected & MLCC_CPU_AVX512F) != 0);
}

TEST_CASE("feature names and their description", "[runtime][cpu]") {
  CHECK(std::string(mlcc_cpu_feature_name(MLCC_CPU_AVX512_VNNI)) ==
        "avx512_vnni");
  CHECK(mlcc_cpu_feature_name(MLCC_CPU_AVX512F | MLCC_CPU_AVX2) == nullptr);
  CHECK(mlcc_cpu_feature_name(uint64_t(1) << 63) == nullptr);
  char buf[64];
  uint64_t amx = MLCC_CPU_AMX_TILE | MLCC_CPU_AMX_INT8;
  CHECK(mlcc_cpu_features_describe(amx, buf, sizeof(buf)) == 17);
  CHECK(std::string(buf) == "amx_tile amx_int8");
  // Cut to the buffer, still terminated; the length is the whole text's.
  CHECK(mlcc_cpu_features_describe(amx, buf, 5) == 17);
  CHECK(std::string(buf) == "amx_");
  CHECK(mlcc_cpu_features_describe(0, buf, sizeof(buf)) == 0);
  CHECK(std::string(buf).empty());
}

TEST_CASE("MLCC_CPU_DISABLE masks detected features", "[runtime][cpu]") {
  REQUIRE(mlcc_cpu_require(MLCC_CPU_AVX512F, "t") == MLCC_OK);
  {
    DisabledFeatures off("avx512f, amx_tile");
    CHECK((mlcc_cpu_features() & MLCC_CPU_AVX512F) == 0);
    CHECK(mlcc_cpu_require(MLCC_CPU_AVX512F | MLCC_CPU_AVX512BW, "who") ==
          MLCC_UNSUPPORTED_CPU);
    CHECK(std::string(mlcc_last_error_message()) ==
          "who: this CPU lacks avx512f, which the code was compiled to use");
  }
  {
    DisabledFeatures off("avx512f,avx512-vnni");
    CHECK(mlcc_cpu_require(MLCC_CPU_AVX512F, "who") == MLCC_INVALID_ARGUMENT);
    CHECK(std::string(mlcc_last_error_message()).find("'avx512-vnni'") !=
          std::string::npos);
  }
  CHECK(mlcc_cpu_require(MLCC_CPU_AVX512F, "t") == MLCC_OK);
}

TEST_CASE("create refuses a model for features this CPU lacks",
          "[runtime][cpu]") {
  static const int64_t dims[] = {2};
  static const mlcc_model_tensor_desc x[] = {{"x", dims, 1, MLCC_DTYPE_F32}};
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = d.num_outputs = 1;
  d.name = "amx";
  d.inputs = d.outputs = x;
  d.entry = neverRun;
  d.cpu_features = MLCC_CPU_AVX512F | MLCC_CPU_AMX_TILE | MLCC_CPU_AMX_INT8;
  d.cpu_name = "sapphirerapids";
  // Masked, so that a machine with AMX refuses it too.
  DisabledFeatures off("amx_tile,amx_int8,amx_bf16");
  mlcc_model_context *ctx = nullptr;
  CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_UNSUPPORTED_CPU);
  CHECK(ctx == nullptr);
  std::string message = mlcc_last_error_message();
  CHECK(message.rfind("mlcc_amx_create: this CPU lacks amx_tile amx_int8, "
                      "which the code was compiled to use (mlcc compile "
                      "--cpu sapphirerapids)",
                      0) == 0);
  float in[2] = {1, 2}, out[2];
  int64_t tdims[] = {2};
  mlcc_tensor ti{in, tdims, 1, MLCC_DTYPE_F32};
  mlcc_tensor to{out, tdims, 1, MLCC_DTYPE_F32};
  alignas(64) static char arena[64];
  CHECK(mlcc_model_run_with_arena(&d, arena, sizeof(arena), &ti, &to) ==
        MLCC_UNSUPPORTED_CPU);
  CHECK(std::string(mlcc_last_error_message())
            .rfind("mlcc_amx_run_with_arena: this CPU lacks amx_tile", 0) == 0);
  CHECK(std::string(mlcc_status_string(MLCC_UNSUPPORTED_CPU)) ==
        "unsupported cpu");
}
