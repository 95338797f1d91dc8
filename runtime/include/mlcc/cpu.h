//===- cpu.h - The x86 features a model needs and this CPU has ----*- C -*-===//
//
// `mlcc compile --cpu NAME` chooses the instructions an object may use
// (x86-64-v4 by default: AVX-512 F/CD/BW/DQ/VL, so it runs on any AVX-512
// machine). The object's descriptor records them as a mask of the bits
// below, and mlcc_model_create compares that mask with what CPUID (and the
// operating system, for the register state) says this machine has: a
// model built for a newer CPU fails with MLCC_UNSUPPORTED_CPU, naming the
// missing features, instead of dying of SIGILL in its first run.
//
// The names are those of Linux's /proc/cpuinfo flags.
//
// MLCC_CPU_DISABLE in the environment (comma-separated names, e.g.
// "amx_tile,avx512_vnni") removes features from what the check sees, to
// test how a model behaves on a smaller CPU.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_CPU_H
#define MLCC_CPU_H

#include "mlcc/api.h"
#include "mlcc/status.h"

#include <stddef.h>
#include <stdint.h>

MLCC_EXTERN_C_BEGIN

/// One bit per feature (an mlcc_model_desc's cpu_features). The values are
/// part of the model ABI: new features are only ever appended.
#define MLCC_CPU_SSE4_2 (UINT64_C(1) << 0)
#define MLCC_CPU_POPCNT (UINT64_C(1) << 1)
#define MLCC_CPU_AVX (UINT64_C(1) << 2)
#define MLCC_CPU_AVX2 (UINT64_C(1) << 3)
#define MLCC_CPU_FMA (UINT64_C(1) << 4)
#define MLCC_CPU_BMI1 (UINT64_C(1) << 5)
#define MLCC_CPU_BMI2 (UINT64_C(1) << 6)
#define MLCC_CPU_F16C (UINT64_C(1) << 7)
#define MLCC_CPU_ABM (UINT64_C(1) << 8) ///< lzcnt
#define MLCC_CPU_MOVBE (UINT64_C(1) << 9)
#define MLCC_CPU_AVX512F (UINT64_C(1) << 10)
#define MLCC_CPU_AVX512CD (UINT64_C(1) << 11)
#define MLCC_CPU_AVX512BW (UINT64_C(1) << 12)
#define MLCC_CPU_AVX512DQ (UINT64_C(1) << 13)
#define MLCC_CPU_AVX512VL (UINT64_C(1) << 14)
#define MLCC_CPU_AVX512IFMA (UINT64_C(1) << 15)
#define MLCC_CPU_AVX512VBMI (UINT64_C(1) << 16)
#define MLCC_CPU_AVX512_VBMI2 (UINT64_C(1) << 17)
#define MLCC_CPU_AVX512_VNNI (UINT64_C(1) << 18)
#define MLCC_CPU_AVX512_BITALG (UINT64_C(1) << 19)
#define MLCC_CPU_AVX512_VPOPCNTDQ (UINT64_C(1) << 20)
#define MLCC_CPU_AVX512_BF16 (UINT64_C(1) << 21)
#define MLCC_CPU_AVX512_FP16 (UINT64_C(1) << 22)
#define MLCC_CPU_GFNI (UINT64_C(1) << 23)
#define MLCC_CPU_VAES (UINT64_C(1) << 24)
#define MLCC_CPU_VPCLMULQDQ (UINT64_C(1) << 25)
#define MLCC_CPU_AVX_VNNI (UINT64_C(1) << 26)
#define MLCC_CPU_AMX_TILE (UINT64_C(1) << 27)
#define MLCC_CPU_AMX_INT8 (UINT64_C(1) << 28)
#define MLCC_CPU_AMX_BF16 (UINT64_C(1) << 29)

/// The features of this CPU that the operating system lets a process use,
/// less those named in MLCC_CPU_DISABLE. AMX counts only once Linux has
/// granted this process the tile state (mlcc_cpu_require asks for it).
/// 0 on a host that is not x86-64. Thread-safe.
MLCC_API uint64_t mlcc_cpu_features(void);

/// The /proc/cpuinfo name of one feature bit ("avx512_vnni"); NULL for a
/// value that is not exactly one known bit.
MLCC_API const char *mlcc_cpu_feature_name(uint64_t feature);

/// Writes the names of the features in `features`, space-separated, into
/// `buffer` (cut to `size`, always NUL-terminated when size > 0); returns
/// the length the whole text has.
MLCC_API size_t mlcc_cpu_features_describe(uint64_t features, char *buffer,
                                           size_t size);

/// MLCC_OK when this CPU has every feature in `required` (asking Linux for
/// the AMX tile state where AMX is required); else MLCC_UNSUPPORTED_CPU with
/// a message that starts with `who` and names the missing features (or
/// MLCC_INVALID_ARGUMENT for a name in MLCC_CPU_DISABLE that is not a
/// feature). Thread-safe.
MLCC_API mlcc_status mlcc_cpu_require(uint64_t required, const char *who);

MLCC_EXTERN_C_END

#endif // MLCC_CPU_H
