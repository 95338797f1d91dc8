//===- Target.h - What a backend plugs into the lowering --------*- C++ -*-===//
//
// The lowering driver (HostBuilder) walks the simplified graph once, in
// order, and asks the target to lower each op. A target answers with its own
// kernels (machine code generated now for the op's exact shapes, called from
// the host function through an args struct), or declines, and the op goes
// through the portable lowering (MLIR's dialects, Portable/). Everything
// around the kernels is shared: buffers and the arena, weights, the host
// function, the object, the header and the runtime API. A new backend is a
// new Target, not a new pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_TARGET_H
#define MLCC_LOWERING_COMMON_TARGET_H

#include "CpuTarget.h"
#include "OpWork.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mlcc::lowering {

/// The services of the driver that a target uses while lowering one op.
/// Values it returns belong to the host function under construction.
class OpLoweringContext {
public:
  virtual ~OpLoweringContext() = default;

  /// Builder at the op's place in the host function.
  virtual mlir::OpBuilder &builder() = 0;
  virtual mlir::Location loc() = 0;

  /// The buffer holding graph value `v`: a static memref of its shape with
  /// the storage element type; null for a `none` operand. Results' buffers
  /// are writable, operands' are read-only.
  virtual mlir::Value buffer(mlir::Value v) = 0;
  /// The i64 address of `buffer`'s first element.
  virtual mlir::Value address(mlir::Value buffer) = 0;
  /// A memref of static `type` (identity layout) over the memory at the i64
  /// `address`: how a parallelFor body, which sees buffers only as address
  /// fields, loads and stores their elements.
  virtual mlir::Value memrefAt(mlir::Value address, mlir::MemRefType type) = 0;
  /// A buffer in the arena that lives only while this op runs (for a layout
  /// change or a partial result); 64-byte aligned.
  virtual mlir::Value scratch(mlir::MemRefType type) = 0;

  /// A buffer in the arena that lives from this op to the last use of the
  /// graph value `liveAs` (a target's own copy of it, in its own layout).
  virtual mlir::Value allocate(mlir::MemRefType type, mlir::Value liveAs) = 0;
  /// A view of `type` starting `byteOffset` (a multiple of 64) bytes into
  /// `buffer` (from allocate), in the same arena slot: a part of a buffer
  /// that an op writes in place (a producer's channels of its concat's
  /// result). Null for a buffer that is not from allocate.
  virtual mlir::Value viewInside(mlir::Value buffer, int64_t byteOffset,
                                 mlir::MemRefType type) = 0;
  /// Makes `buffer` (from allocate or scratch) live at least until the
  /// last use of `liveAs` too.
  virtual void extendLifetime(mlir::Value buffer, mlir::Value liveAs) = 0;
  /// Says that this op's result `v` is kept elsewhere (in a buffer of the
  /// target's own layout) and that its buffer() is written only if some op
  /// asks for it: then `materialize(buffer)` emits the conversion there,
  /// once. Keeps a chain of target ops in their layout with no conversion
  /// between them.
  virtual void deferBuffer(mlir::Value v,
                           std::function<void(mlir::Value)> materialize) = 0;

  /// The value of `v` when a graph.constant defines it, else null. A target
  /// reads weights through this to transform them now (pack, reorder).
  virtual mlir::ElementsAttr constantValue(mlir::Value v) = 0;

  /// Adds read-only data (64-byte aligned) to the object; returns the i64
  /// address of its first byte in the host function. `hint` goes into the
  /// symbol name.
  virtual mlir::Value addData(llvm::StringRef hint,
                              std::vector<uint8_t> bytes) = 0;
  /// Adds a kernel's machine code to the object (identical code is stored
  /// once) and returns its symbol.
  virtual std::string addKernel(llvm::StringRef hint,
                                std::vector<uint8_t> code) = 0;
  /// Runs body(i, fields) for i in [0, n) on the model's thread pool
  /// (serially when it has one thread or none): the body is emitted into a
  /// function of its own that parallel_for calls with chunks of the range;
  /// `fields` (at most kMaxParallelFields i64 values: addresses, sizes) are
  /// what it sees of this function, as arguments of that function.
  virtual void parallelFor(
      int64_t n, llvm::ArrayRef<mlir::Value> fields,
      std::function<void(mlir::Value index, mlir::ValueRange fields)> body) = 0;
  /// parallelFor with the body emitted once per chunk of consecutive
  /// indices [begin, end) that a thread takes (one chunk, [0, n), on one
  /// thread): for work that carries state from one index to the next.
  virtual void
  parallelForRanges(int64_t n, llvm::ArrayRef<mlir::Value> fields,
                    std::function<void(mlir::Value begin, mlir::Value end,
                                       mlir::ValueRange fields)>
                        body) = 0;
  /// The i64 number of threads the model runs on (1 without a pool, and 1
  /// for an op too small to share: see oneThread).
  virtual mlir::Value numThreads() = 0;
  /// The op being lowered runs on the calling thread whatever the pool
  /// (TargetOptions::minParallelMicros): its lowering need not generate
  /// kernels for parts of it, and parallelFor runs inline.
  virtual bool oneThread() { return false; }
  /// The i64 length of a dim compiled as a range of lengths (`--dim
  /// seq=1..512`) in this run, at most the static extent this variant was
  /// compiled for; for the ops marked kRunTimeLengthAttr, which must not
  /// read the positions past it.
  virtual mlir::Value runTimeLength() = 0;

  /// Emits `symbol(&args)`, where args is an array of 8-byte fields holding
  /// `fields` (i64 values: addresses or integers), the layout of every args
  /// struct in KernelABI.h.
  virtual void callKernel(llvm::StringRef symbol,
                          llvm::ArrayRef<mlir::Value> fields) = 0;
  /// callKernel for a runtime function of that convention (`void
  /// fn(const args *)`, e.g. mlcc_int8_pack_b), which the object imports.
  virtual void callRuntime(llvm::StringRef symbol,
                           llvm::ArrayRef<mlir::Value> fields) = 0;
  /// Says that this op's product runs in `precision` (int8 or bf16 kernels),
  /// which `mlcc bench --per-op` measures it against; f32 unless said.
  virtual void noteProductPrecision(WorkPrecision precision) {}
  /// Says that this op's kernels also compute `later`, an op after it whose
  /// own lowering then emits nothing: `mlcc bench --per-op` counts its work
  /// here (chainedOpWork) and none there.
  virtual void noteWorkDoneFor(mlir::Operation *later) {}
};

/// The most i64 fields a parallelFor body can take.
constexpr int64_t kMaxParallelFields = 16;

/// One compiled device kernel: its code for the target's API (SPIR-V words
/// for Vulkan, a bundle of PTX and cubins for CUDA, of MSL and a metallib
/// for Metal) and what a launch needs
/// to know about it.
struct DeviceKernelCode {
  std::string name;
  std::vector<uint8_t> code;
  /// The code as text where the API has a text form (PTX, MSL), for
  /// `mlcc compile --emit device-asm`.
  std::string assembly;
  /// The assembler's report of the kernel's resources (registers, spills),
  /// one line per architecture; whether it spilt registers anywhere.
  std::string report;
  bool spills = false;
  /// It computes in f32 what it would in f64 (DemoteFloat64.h).
  bool demotedFloat64 = false;
  uint32_t numBuffers = 0;
  uint32_t workgroupSize[3] = {1, 1, 1};
};

/// What a GPU target adds to the host schedule: the host builder gives every
/// op the portable lowering (or the target's own kernels), DeviceSchedule
/// turns the loops into kernels in MLIR's gpu dialect and the host function
/// into launches, and the backend compiles each kernel for its API.
class DeviceBackend {
public:
  virtual ~DeviceBackend() = default;
  /// runtime/include/mlcc/device.h's mlcc_device_api.
  virtual uint32_t api() const = 0;
  /// Buffers a kernel binds start at multiples of this (the largest
  /// minimum offset alignment of the API's devices).
  virtual uint64_t bufferAlignment() const = 0;
  /// Compiles `kernel`, a module holding one gpu.module with one gpu.func
  /// kernel (bare static memrefs, no host ops), for the API. Errors are
  /// emitted as diagnostics on the kernel.
  virtual mlir::LogicalResult compileKernel(mlir::ModuleOp kernel,
                                            DeviceKernelCode &out) = 0;
};

/// A fault the tests put into every kernel, to prove that the oracle (the
/// conformance runner, the model checks) notices one.
enum class DeviceFault {
  None,
  /// Every buffer's element offset one too many (a wrong tile offset).
  ElementOffset,
  /// No gpu.barrier in any kernel (workgroup memory read before written).
  NoBarriers,
};

/// TargetOptions::minParallelMicros by default: below a few microseconds a
/// dispatch to the pool and the data its tensors move between the cores cost
/// more than a second thread saves. ShuffleNetV2 x0.5 (~150 ops of 2 to
/// 20 us) took 1.26 ms on 2 threads and 0.85 ms on 1 with every op split,
/// 0.80 ms on 2 with 20 us (Zen 5). On a Zen 4 VM (2026-12-07, 2 threads,
/// medians of 6 processes) 5 us against 20: ShuffleNetV2 0.80 / 0.88 ms,
/// MnasNet 0.5 1.30 / 1.67, MobileNetV2 3.43 / 3.52, EfficientNet-B0
/// 3.05 / 3.15, ConvNeXt-tiny 11.9 / 12.4; 0 us again the slowest.
constexpr double kDefaultMinParallelMicros = 5;

/// What `mlcc compile` says about the target beyond its name.
struct TargetOptions {
  /// GPU architectures a CUDA model is compiled for ("sm_80,sm_90"); empty
  /// for the target's default.
  std::string gpuArchs;
  /// The CUDA toolkit (libdevice, ptxas); empty to search for one.
  std::string cudaPath;
  /// Vulkan: the subgroup size the device is known to have (0: unknown),
  /// so that row reductions end in subgroup shuffles as on CUDA. For the
  /// tests of those on lavapipe (8); nothing checks it at run time.
  unsigned vulkanSubgroupSize = 0;
  /// Vulkan: the device has no 64-bit floats (shaderFloat64), so kernels
  /// compute in f32 where they would in f64, as metal's do; lavapipe runs
  /// metal's SPIR-V this way.
  bool vulkanNoFloat64 = false;
  /// Metal: the Apple host the object is for (arm64-apple-macos by
  /// default, x86_64-apple-macos for Intel Macs, arm64-apple-ios).
  std::string triple;
  /// avx512: the CPU the object is for (CpuTarget.h); empty for
  /// kDefaultCpu.
  std::string cpu;
  /// avx512: "fp32" (or empty) or "bf16": layers with constant weights
  /// compute in bf16 with f32 accumulation (needs a --cpu with
  /// AVX512_BF16).
  std::string precision;
  /// avx512: "auto" (or empty): 3x3 stride-1 convs run as Winograd F(4x4,
  /// 3x3) where they have enough tiles, else F(2x2, 3x3), 5x5 ones as F(2x2,
  /// 5x5); "f2": F(2x2, 3x3) and F(2x2, 5x5) only (about half of F(4x4)'s
  /// rounding error); "off": direct convs.
  std::string winograd;
  /// avx512: "auto" (or empty): f32 GEMMs with constant B of at least
  /// 64 x 512 x 512 run as one level of Strassen (7/8 of the
  /// multiply-adds, a little more rounding); "off": direct GEMMs.
  std::string strassen;
  /// CPU targets: an op whose estimated time on one core is under this
  /// (microseconds) runs on the calling thread, not split over the pool.
  double minParallelMicros = kDefaultMinParallelMicros;
};

/// The host triple of every target but metal.
constexpr const char *kLinuxHostTriple = "x86_64-pc-linux-gnu";

/// How errors name an op: "node 'conv1' (graph.conv)" when the importer
/// kept the node's name, else "(graph.conv)".
inline std::string describeOp(mlir::Operation *op) {
  std::string s;
  if (auto loc = mlir::dyn_cast<mlir::NameLoc>(op->getLoc()))
    s = "node '" + loc.getName().str() + "' ";
  return s + "(" + op->getName().getStringRef().str() + ")";
}

/// The outcome of Target::lowerOp.
enum class TargetLowering { Lowered, Declined, Failed };

class Target {
public:
  virtual ~Target() = default;
  /// The --target name ("avx512").
  virtual llvm::StringRef name() const = 0;
  /// CPU and features the host code (including the portable lowerings) is
  /// compiled for.
  virtual llvm::StringRef hostCpu() const = 0;
  /// LLVM features on top of hostCpu's ("+avx512vnni,..."); may be empty.
  virtual llvm::StringRef hostFeatures() const { return ""; }
  /// The x86 CPU a CPU target's object is for, which the descriptor records
  /// for the runtime's check; null when the object needs nothing beyond
  /// hostCpu's baseline.
  virtual const CpuTarget *cpuTarget() const { return nullptr; }
  /// The host the object is for: its format (ELF, Mach-O) and calling
  /// convention. Objects for another host compile but cannot run here.
  virtual llvm::StringRef hostTriple() const { return kLinuxHostTriple; }
  /// Lowers `op` with the target's own kernels, or declines it (then the
  /// portable lowering takes it). Failed means an error was emitted on op.
  virtual TargetLowering lowerOp(mlir::Operation *op,
                                 OpLoweringContext &ctx) = 0;
  /// Around the lowering of a region's ops (an if branch, a loop body):
  /// what the target remembers about values (their buffers in its own
  /// layouts) from inside the region must be forgotten after it, where
  /// nothing made inside dominates.
  virtual void enterRegion() {}
  virtual void exitRegion() {}
  /// A GPU target's device half; null for a CPU target.
  virtual DeviceBackend *device() { return nullptr; }
};

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_TARGET_H
