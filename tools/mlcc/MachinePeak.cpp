//===- MachinePeak.cpp - What this CPU can do at best ---------------------===//

#include "MachinePeak.h"

#include "ExecutableCode.h"
#include "Peak.h"

#include "mlcc/cpu.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

namespace mlcc::cli {

using avx512::ExecutableBuffer;
using avx512::mlcc_peak_args;
using avx512::mlcc_peak_kernel_fn;
using avx512::PeakKernel;

namespace {

/// Working sets of the bandwidth table, all threads together: from L1 to
/// well past any L3.
constexpr int64_t kWorkingSets[] = {int64_t(32) << 10, int64_t(256) << 10,
                                    int64_t(2) << 20, int64_t(16) << 20,
                                    int64_t(256) << 20};
/// Bytes moved per bandwidth measurement (passes over the working set).
constexpr double kStreamBytes = double(1 << 30);
/// Seconds one arithmetic measurement aims at.
constexpr double kArithmeticSeconds = 0.02;
constexpr int kRepeats = 3;

struct ThreadRuns {
  mlcc_peak_kernel_fn fn;
  std::vector<mlcc_peak_args> args; // one per thread
};

void runChunk(void *ctx, int64_t begin, int64_t end) {
  auto *runs = static_cast<ThreadRuns *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    runs->fn(&runs->args[i]);
}

/// The best wall time of kRepeats runs of every thread's call at once.
double bestSeconds(mlcc_threadpool *pool, ThreadRuns &runs) {
  double best = 1e30;
  for (int r = 0; r < kRepeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    mlcc_threadpool_parallel_for(pool, static_cast<int64_t>(runs.args.size()),
                                 &runChunk, &runs);
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}

/// GOP/s of an arithmetic kernel on every thread.
double arithmeticPeak(mlcc_threadpool *pool, PeakKernel kind, int threads) {
  std::vector<uint8_t> code;
  if (generatePeakKernel(kind, code).failed())
    return 0;
  ExecutableBuffer exec(code);
  if (!exec.ok())
    return 0;
  ThreadRuns runs{exec.function<mlcc_peak_kernel_fn>(),
                  std::vector<mlcc_peak_args>(threads)};
  auto timeFor = [&](int64_t iterations) {
    for (mlcc_peak_args &a : runs.args)
      a.iterations = iterations;
    return bestSeconds(pool, runs);
  };
  // A short run to size the measured one.
  const int64_t probe = 10000;
  double seconds = timeFor(probe);
  int64_t iterations =
      std::max<int64_t>(probe, static_cast<int64_t>(probe * kArithmeticSeconds /
                                                    std::max(seconds, 1e-6)));
  seconds = timeFor(iterations);
  return peakOpsPerIteration(kind) * iterations * threads / seconds * 1e-9;
}

} // namespace

double MachinePeak::opsPeak(lowering::WorkPrecision precision) const {
  switch (precision) {
  case lowering::WorkPrecision::Int8:
    return int8;
  case lowering::WorkPrecision::Bf16:
    return bf16;
  default:
    return f32;
  }
}

double MachinePeak::bandwidthFor(double bytes) const {
  for (const Bandwidth &b : bandwidth)
    if (bytes <= b.workingSet)
      return b.gbPerSecond;
  return bandwidth.empty() ? 0 : bandwidth.back().gbPerSecond;
}

double MachinePeak::boundSeconds(const lowering::OpWork &work) const {
  double bound = 0;
  double gbs = bandwidthFor(work.bytes);
  if (gbs > 0)
    bound = work.bytes / (gbs * 1e9);
  double peak = work.product ? opsPeak(work.precision) : 0;
  if (peak > 0)
    bound = std::max(bound, work.ops / (peak * 1e9));
  return bound;
}

bool measureMachinePeak(mlcc_threadpool *pool, MachinePeak &out,
                        std::string &error) {
  const uint64_t features = mlcc_cpu_features();
  if (!(features & MLCC_CPU_AVX512F)) {
    error = "the peak kernels need AVX-512F, which this CPU lacks";
    return false;
  }
  out.cpuName = cpuModelName();
  out.threads = mlcc_threadpool_num_threads(pool);
  const int threads = out.threads;
  out.f32 = arithmeticPeak(pool, PeakKernel::FmaF32, threads);
  if (features & MLCC_CPU_AVX512_VNNI)
    out.int8 = arithmeticPeak(pool, PeakKernel::DotInt8, threads);
  if (features & MLCC_CPU_AVX512_BF16)
    out.bf16 = arithmeticPeak(pool, PeakKernel::DotBf16, threads);

  std::vector<uint8_t> code;
  if (generatePeakKernel(PeakKernel::Copy, code).failed()) {
    error = "could not generate the copy kernel";
    return false;
  }
  ExecutableBuffer exec(code);
  const int64_t most =
      *std::max_element(std::begin(kWorkingSets), std::end(kWorkingSets));
  std::unique_ptr<uint8_t, decltype(&std::free)> buffer(
      static_cast<uint8_t *>(std::aligned_alloc(4096, most)), &std::free);
  if (!exec.ok() || !buffer) {
    error = "out of memory for the bandwidth buffer";
    return false;
  }
  std::memset(buffer.get(), 1, most); // every page mapped before timing
  ThreadRuns runs{exec.function<mlcc_peak_kernel_fn>(),
                  std::vector<mlcc_peak_args>(threads)};
  for (int64_t set : kWorkingSets) {
    // Each thread copies the first half of its slice onto the second.
    const int64_t slice = set / threads / (2 * avx512::kPeakStreamBytes) *
                          (2 * avx512::kPeakStreamBytes);
    if (slice == 0)
      continue;
    const int64_t passes =
        std::max<int64_t>(1, static_cast<int64_t>(kStreamBytes / set));
    for (int t = 0; t < threads; ++t) {
      uint8_t *base = buffer.get() + t * slice;
      runs.args[t] = {base, base + slice / 2, slice / 2, passes};
    }
    double seconds = bestSeconds(pool, runs);
    out.bandwidth.push_back(
        {slice * threads, double(slice) * threads * passes / seconds * 1e-9});
  }
  return true;
}

void printMachinePeak(const MachinePeak &peak) {
  std::printf("machine: %s, %d thread(s)\n", peak.cpuName.c_str(),
              peak.threads);
  auto arithmetic = [](const char *what, double gops, const char *missing) {
    if (gops > 0)
      std::printf("  %-28s %9.1f GOP/s\n", what, gops);
    else
      std::printf("  %-28s %9s (this CPU lacks %s)\n", what, "-", missing);
  };
  arithmetic("f32 FMA (vfmadd231ps)", peak.f32, "AVX-512F");
  arithmetic("int8 dot (vpdpbusd)", peak.int8, "AVX512-VNNI");
  arithmetic("bf16 dot (vdpbf16ps)", peak.bf16, "AVX512-BF16");
  std::printf("  copy bandwidth (bytes read + written) by working set:\n");
  for (const MachinePeak::Bandwidth &b : peak.bandwidth)
    std::printf("  %10lld KiB %9.1f GB/s\n",
                static_cast<long long>(b.workingSet >> 10), b.gbPerSecond);
}

} // namespace mlcc::cli
