//===- Cpu.c - CPUID, the OS's register state, and the model check --------===//

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // syscall(), which strict C11 leaves undeclared
#endif

#include "mlcc/cpu.h"

#include "LastError.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

enum { EAX, EBX, ECX, EDX };

// Where CPUID reports each feature.
typedef struct FeatureBit {
  uint64_t feature;
  const char *name;
  uint32_t leaf, subleaf;
  int reg, bit;
} FeatureBit;

static const FeatureBit Features[] = {
    {MLCC_CPU_SSE4_2, "sse4_2", 1, 0, ECX, 20},
    {MLCC_CPU_POPCNT, "popcnt", 1, 0, ECX, 23},
    {MLCC_CPU_AVX, "avx", 1, 0, ECX, 28},
    {MLCC_CPU_AVX2, "avx2", 7, 0, EBX, 5},
    {MLCC_CPU_FMA, "fma", 1, 0, ECX, 12},
    {MLCC_CPU_BMI1, "bmi1", 7, 0, EBX, 3},
    {MLCC_CPU_BMI2, "bmi2", 7, 0, EBX, 8},
    {MLCC_CPU_F16C, "f16c", 1, 0, ECX, 29},
    {MLCC_CPU_ABM, "abm", 0x80000001u, 0, ECX, 5},
    {MLCC_CPU_MOVBE, "movbe", 1, 0, ECX, 22},
    {MLCC_CPU_AVX512F, "avx512f", 7, 0, EBX, 16},
    {MLCC_CPU_AVX512CD, "avx512cd", 7, 0, EBX, 28},
    {MLCC_CPU_AVX512BW, "avx512bw", 7, 0, EBX, 30},
    {MLCC_CPU_AVX512DQ, "avx512dq", 7, 0, EBX, 17},
    {MLCC_CPU_AVX512VL, "avx512vl", 7, 0, EBX, 31},
    {MLCC_CPU_AVX512IFMA, "avx512ifma", 7, 0, EBX, 21},
    {MLCC_CPU_AVX512VBMI, "avx512vbmi", 7, 0, ECX, 1},
    {MLCC_CPU_AVX512_VBMI2, "avx512_vbmi2", 7, 0, ECX, 6},
    {MLCC_CPU_AVX512_VNNI, "avx512_vnni", 7, 0, ECX, 11},
    {MLCC_CPU_AVX512_BITALG, "avx512_bitalg", 7, 0, ECX, 12},
    {MLCC_CPU_AVX512_VPOPCNTDQ, "avx512_vpopcntdq", 7, 0, ECX, 14},
    {MLCC_CPU_AVX512_BF16, "avx512_bf16", 7, 1, EAX, 5},
    {MLCC_CPU_AVX512_FP16, "avx512_fp16", 7, 0, EDX, 23},
    {MLCC_CPU_GFNI, "gfni", 7, 0, ECX, 8},
    {MLCC_CPU_VAES, "vaes", 7, 0, ECX, 9},
    {MLCC_CPU_VPCLMULQDQ, "vpclmulqdq", 7, 0, ECX, 10},
    {MLCC_CPU_AVX_VNNI, "avx_vnni", 7, 1, EAX, 4},
    {MLCC_CPU_AMX_TILE, "amx_tile", 7, 0, EDX, 24},
    {MLCC_CPU_AMX_INT8, "amx_int8", 7, 0, EDX, 25},
    {MLCC_CPU_AMX_BF16, "amx_bf16", 7, 0, EDX, 22},
};
enum { NumFeatures = sizeof(Features) / sizeof(Features[0]) };

// Features whose registers the OS must save: ymm (XCR0 bits 1-2), zmm and
// the mask registers (5-7), the AMX tiles (17-18).
static const uint64_t YmmFeatures =
    MLCC_CPU_AVX | MLCC_CPU_AVX2 | MLCC_CPU_FMA | MLCC_CPU_F16C |
    MLCC_CPU_AVX_VNNI | MLCC_CPU_VAES | MLCC_CPU_VPCLMULQDQ;
static const uint64_t ZmmFeatures =
    MLCC_CPU_AVX512F | MLCC_CPU_AVX512CD | MLCC_CPU_AVX512BW |
    MLCC_CPU_AVX512DQ | MLCC_CPU_AVX512VL | MLCC_CPU_AVX512IFMA |
    MLCC_CPU_AVX512VBMI | MLCC_CPU_AVX512_VBMI2 | MLCC_CPU_AVX512_VNNI |
    MLCC_CPU_AVX512_BITALG | MLCC_CPU_AVX512_VPOPCNTDQ | MLCC_CPU_AVX512_BF16 |
    MLCC_CPU_AVX512_FP16;
static const uint64_t AmxFeatures =
    MLCC_CPU_AMX_TILE | MLCC_CPU_AMX_INT8 | MLCC_CPU_AMX_BF16;

#if defined(__x86_64__)
static uint64_t readXcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

// What CPUID and XCR0 report, before MLCC_CPU_DISABLE.
static uint64_t queryHardware(void) {
  uint32_t maxLeaf = __get_cpuid_max(0, NULL);
  uint32_t maxExtended = __get_cpuid_max(0x80000000u, NULL);
  uint32_t maxSubleaf7 = 0;
  if (maxLeaf >= 7) {
    uint32_t r[4];
    __cpuid_count(7, 0, r[EAX], r[EBX], r[ECX], r[EDX]);
    maxSubleaf7 = r[EAX];
  }
  uint64_t found = 0;
  for (int i = 0; i < NumFeatures; ++i) {
    const FeatureBit *f = &Features[i];
    bool present =
        f->leaf >= 0x80000000u ? f->leaf <= maxExtended : f->leaf <= maxLeaf;
    if (!present || (f->leaf == 7 && f->subleaf > maxSubleaf7))
      continue;
    uint32_t r[4];
    __cpuid_count(f->leaf, f->subleaf, r[EAX], r[EBX], r[ECX], r[EDX]);
    if (r[f->reg] >> f->bit & 1)
      found |= f->feature;
  }
  // XGETBV exists only where the OS enabled XSAVE (leaf 1, ECX bit 27).
  uint32_t r[4];
  __cpuid(1, r[EAX], r[EBX], r[ECX], r[EDX]);
  uint64_t xcr0 = (r[ECX] >> 27 & 1) ? readXcr0() : 0;
  if ((xcr0 & 0x6) != 0x6)
    found &= ~(YmmFeatures | ZmmFeatures | AmxFeatures);
  if ((xcr0 & 0xe0) != 0xe0)
    found &= ~ZmmFeatures;
  if ((xcr0 & 0x60000) != 0x60000)
    found &= ~AmxFeatures;
  return found;
}
#else
static uint64_t queryHardware(void) { return 0; }
#endif

// Asked once: under a hypervisor every CPUID is a trap, and
// run_with_arena checks on every call.
static uint64_t HardwareFeatures;
static pthread_once_t HardwareOnce = PTHREAD_ONCE_INIT;
static void initHardwareFeatures(void) { HardwareFeatures = queryHardware(); }

static uint64_t hardwareFeatures(void) {
  pthread_once(&HardwareOnce, initHardwareFeatures);
  return HardwareFeatures;
}

static const FeatureBit *featureNamed(const char *name, size_t length) {
  for (int i = 0; i < NumFeatures; ++i)
    if (strlen(Features[i].name) == length &&
        strncmp(Features[i].name, name, length) == 0)
      return &Features[i];
  return NULL;
}

// The features MLCC_CPU_DISABLE names; false (with *unknown at the bad name)
// when it names something else.
static bool disabledFeatures(uint64_t *disabled, const char **unknown,
                             size_t *unknownLength) {
  *disabled = 0;
  const char *s = getenv("MLCC_CPU_DISABLE");
  if (!s)
    return true;
  while (*s) {
    size_t length = strcspn(s, ", ");
    if (length > 0) {
      const FeatureBit *f = featureNamed(s, length);
      if (!f) {
        *unknown = s;
        *unknownLength = length;
        return false;
      }
      *disabled |= f->feature;
    }
    s += length;
    if (*s)
      ++s;
  }
  return true;
}

// Linux hands out the AMX tile data state (XFEATURE_XTILEDATA) per process,
// on request; without it the first tile instruction faults.
static bool requestAmxState(void) {
#if defined(__linux__) && defined(__x86_64__)
  const long archReqXcompPerm = 0x1023, xfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, archReqXcompPerm, xfeatureXtiledata) == 0;
#else
  return true;
#endif
}

uint64_t mlcc_cpu_features(void) {
  uint64_t disabled = 0;
  const char *unknown;
  size_t unknownLength;
  disabledFeatures(&disabled, &unknown, &unknownLength);
  return hardwareFeatures() & ~disabled;
}

const char *mlcc_cpu_feature_name(uint64_t feature) {
  for (int i = 0; i < NumFeatures; ++i)
    if (Features[i].feature == feature)
      return Features[i].name;
  return NULL;
}

size_t mlcc_cpu_features_describe(uint64_t features, char *buffer,
                                  size_t size) {
  size_t length = 0;
  for (int i = 0; i < NumFeatures; ++i) {
    if (!(features & Features[i].feature))
      continue;
    const char *name = Features[i].name;
    size_t n = strlen(name) + (length > 0);
    if (buffer && length + n < size) {
      if (length > 0)
        buffer[length] = ' ';
      memcpy(buffer + length + (length > 0), name, strlen(name));
    }
    length += n;
  }
  if (buffer && size > 0)
    buffer[length < size ? length : size - 1] = '\0';
  return length;
}

mlcc_status mlcc_cpu_require(uint64_t required, const char *who) {
  if (!who)
    who = "mlcc_cpu_require";
  uint64_t disabled;
  const char *unknown;
  size_t unknownLength;
  if (!disabledFeatures(&disabled, &unknown, &unknownLength))
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: MLCC_CPU_DISABLE names '%.*s', which is not a CPU feature (the "
        "names are /proc/cpuinfo's, e.g. avx512_vnni, amx_tile)",
        who, (int)unknownLength, unknown);
  uint64_t missing = required & ~(hardwareFeatures() & ~disabled);
  if (!missing && (required & AmxFeatures) && !requestAmxState())
    return mlcc_last_error_set(
        MLCC_UNSUPPORTED_CPU,
        "%s: the model uses AMX, and Linux refused this process the AMX "
        "tile state (arch_prctl ARCH_REQ_XCOMP_PERM)",
        who);
  if (!missing)
    return MLCC_OK;
  char names[256];
  mlcc_cpu_features_describe(missing, names, sizeof(names));
  return mlcc_last_error_set(
      MLCC_UNSUPPORTED_CPU,
      "%s: this CPU lacks %s, which the code was compiled to use", who, names);
}
