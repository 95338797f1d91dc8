//===- Gather.cpp - AVX-512 row gather kernels ----------------------------===//
//
// One loop over the outer blocks, one over the index tuples, and per tuple
// a straight-line computation of the row's byte offset: each component is
// loaded (sign-extended from int32), made non-negative by adding its dim
// when negative, clamped into [0, dim) with cmov (no branch an index can
// steer) and multiplied by its stride in bytes. The row is then copied with
// zmm loads and stores: rows of up to kUnrolled vectors straight through,
// longer ones in a loop over groups of kGroup vectors, then the rest. The
// tail under 64 bytes is one dword-masked move (masked lanes are neither
// read nor written, by EVEX fault suppression) and at most a word and a
// byte moved as scalars, so only AVX-512F is needed for any element size.
//
// Register plan:
//   rdi  args, then scratch        rsi  data of the outer block
//   rdx  indices                   r8   dst row (advances row by row)
//   r9   outer counter             r10  index tuple pointer
//   r11  tuple counter             rax  row source (offset, then address)
//   rcx  index component           zmm0-zmm7 copies   k1 dword tail mask
//
//===----------------------------------------------------------------------===//

#include "Gather.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>

namespace mlcc::avx512 {

namespace {

/// Rows of up to this many full vectors are copied without a loop.
constexpr int64_t kUnrolled = 16;
/// Vectors per iteration of the copy loop of longer rows.
constexpr int kGroup = 8;

bool fitsInt32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

Status validate(const GatherSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.indexBytes == 4 || spec.indexBytes == 8, name,
             ": indices of ", spec.indexBytes, " bytes, expected 4 or 8");
  MLCC_CHECK(!spec.dims.empty() && spec.dims.size() == spec.strides.size(),
             name, ": ", spec.dims.size(), " dims and ", spec.strides.size(),
             " strides for the index tuples");
  MLCC_CHECK(spec.dims.size() <= 64, name, ": index tuples of ",
             spec.dims.size(), " components");
  MLCC_CHECK(spec.outer >= 0 && spec.outerBytes >= 0 && spec.tuples >= 0 &&
                 spec.rowBytes >= 0,
             name, ": negative count");
  MLCC_CHECK(spec.rowBytes <= kMaxGatherDataBytes &&
                 spec.outerBytes <= kMaxGatherDataBytes,
             name, ": rows or blocks too big");
  // The last row any tuple can reach must end inside its block.
  int64_t lastRow = 0;
  for (size_t j = 0; j < spec.dims.size(); ++j) {
    MLCC_CHECK(spec.dims[j] >= 1 && spec.dims[j] <= kMaxGatherDataBytes &&
                   spec.strides[j] >= 0 &&
                   spec.strides[j] <= kMaxGatherDataBytes,
               name, ": index component ", j, " has dim ", spec.dims[j],
               " and stride ", spec.strides[j]);
    MLCC_CHECK(spec.strides[j] == 0 ||
                   spec.dims[j] - 1 <= kMaxGatherDataBytes / spec.strides[j],
               name, ": index component ", j, " reaches too far");
    lastRow += (spec.dims[j] - 1) * spec.strides[j];
    MLCC_CHECK(lastRow <= kMaxGatherDataBytes, name, ": rows reach too far");
  }
  MLCC_CHECK(spec.rowBytes == 0 ||
                 lastRow + 1 <= spec.outerBytes / spec.rowBytes,
             name, ": row ", lastRow, " of ", spec.rowBytes,
             " bytes is outside a block of ", spec.outerBytes, " bytes");
  MLCC_CHECK(spec.outerBytes == 0 ||
                 spec.outer <= kMaxGatherDataBytes / spec.outerBytes,
             name, ": data too big");
  MLCC_CHECK(
      spec.rowBytes == 0 || spec.tuples == 0 ||
          (spec.tuples <= kMaxGatherDataBytes / spec.rowBytes &&
           spec.outer <= kMaxGatherDataBytes / (spec.tuples * spec.rowBytes)),
      name, ": output too big");
  return Status::success();
}

class GatherKernel : public JitGenerator {
public:
  GatherKernel(std::vector<uint8_t> &buffer, const GatherSpec &spec)
      : JitGenerator(buffer), spec_(spec) {}

  void generate();

private:
  const GatherSpec &spec_;

  const Xbyak::Reg64 regArgs_ = rdi, regScratch_ = rdi, regData_ = rsi,
                     regIndices_ = rdx, regDst_ = r8, regOuter_ = r9,
                     regTuple_ = r10, regTuples_ = r11, regSrc_ = rax,
                     regIdx_ = rcx;
  const Xbyak::Opmask kTail_ = k1;

  /// r += v (v may need 64 bits).
  void addImm(const Xbyak::Reg64 &r, int64_t v) {
    JitGenerator::addImm(r, v, regScratch_);
  }

  /// regSrc_ = byte offset of the row the tuple at regTuple_ selects.
  void rowOffset();
  /// Copies one row from regSrc_ to regDst_ and advances regDst_ past it.
  void copyRow();
  /// Copies `bytes` (< 64) from [regSrc_ + off] to [regDst_ + off].
  void copyTail(int64_t off, int64_t bytes);
};

void GatherKernel::rowOffset() {
  for (size_t j = 0; j < spec_.dims.size(); ++j) {
    const int64_t dim = spec_.dims[j];
    const int disp = static_cast<int>(j) * spec_.indexBytes;
    if (spec_.indexBytes == 4)
      movsxd(regIdx_, dword[regTuple_ + disp]);
    else
      mov(regIdx_, qword[regTuple_ + disp]);
    // Negative: count from the end.
    if (fitsInt32(dim)) {
      lea(regScratch_, ptr[regIdx_ + static_cast<int>(dim)]);
    } else {
      mov(regScratch_, dim);
      add(regScratch_, regIdx_);
    }
    test(regIdx_, regIdx_);
    cmovs(regIdx_, regScratch_);
    // Clamp into [0, dim): still negative -> 0, dim or more -> dim - 1.
    xor_(regScratch_.cvt32(), regScratch_.cvt32());
    test(regIdx_, regIdx_);
    cmovs(regIdx_, regScratch_);
    mov(regScratch_, dim - 1);
    cmp(regIdx_, regScratch_);
    cmovg(regIdx_, regScratch_);
    // Scale by the component's stride in bytes.
    const int64_t strideBytes = spec_.strides[j] * spec_.rowBytes;
    const Xbyak::Reg64 &term = j == 0 ? regSrc_ : regIdx_;
    if (fitsInt32(strideBytes)) {
      imul(term, regIdx_, static_cast<int>(strideBytes));
    } else {
      mov(regScratch_, strideBytes);
      imul(regIdx_, regScratch_);
      if (j == 0)
        mov(regSrc_, regIdx_);
    }
    if (j > 0)
      add(regSrc_, regIdx_);
  }
}

void GatherKernel::copyTail(int64_t off, int64_t bytes) {
  int64_t dwords = bytes / 4;
  int o = static_cast<int>(off);
  if (dwords > 2) {
    vmovdqu32(zmm0 | kTail_ | T_z, ptr[regSrc_ + o]);
    vmovdqu32(ptr[regDst_ + o] | kTail_, zmm0);
  } else if (dwords == 2) {
    mov(regIdx_, qword[regSrc_ + o]);
    mov(qword[regDst_ + o], regIdx_);
  } else if (dwords == 1) {
    mov(regIdx_.cvt32(), dword[regSrc_ + o]);
    mov(dword[regDst_ + o], regIdx_.cvt32());
  }
  o += static_cast<int>(dwords * 4);
  if (bytes & 2) {
    movzx(regIdx_.cvt32(), word[regSrc_ + o]);
    mov(word[regDst_ + o], regIdx_.cvt16());
    o += 2;
  }
  if (bytes & 1) {
    movzx(regIdx_.cvt32(), byte[regSrc_ + o]);
    mov(byte[regDst_ + o], regIdx_.cvt8());
  }
}

void GatherKernel::copyRow() {
  const int64_t vectors = spec_.rowBytes / kZmmBytes;
  const int64_t tail = spec_.rowBytes % kZmmBytes;
  // Copies vectors [first, last) at displacements from the pointers.
  auto straight = [&](int64_t first, int64_t last, int64_t base) {
    for (int64_t v0 = first; v0 < last; v0 += kGroup) {
      int64_t n = std::min<int64_t>(kGroup, last - v0);
      for (int64_t v = 0; v < n; ++v)
        vmovups(Xbyak::Zmm(static_cast<int>(v)),
                ptr[regSrc_ + static_cast<int>((v0 + v) * kZmmBytes - base)]);
      for (int64_t v = 0; v < n; ++v)
        vmovups(ptr[regDst_ + static_cast<int>((v0 + v) * kZmmBytes - base)],
                Xbyak::Zmm(static_cast<int>(v)));
    }
  };
  int64_t advanced = 0; // bytes regDst_ (and regSrc_) moved so far
  if (vectors <= kUnrolled) {
    straight(0, vectors, 0);
  } else {
    const int64_t groups = vectors / kGroup;
    mov(regScratch_, groups);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    straight(0, kGroup, 0);
    add(regSrc_, kGroup * kZmmBytes);
    add(regDst_, kGroup * kZmmBytes);
    dec(regScratch_);
    jnz(loop, T_NEAR);
    advanced = groups * kGroup * kZmmBytes;
    straight(groups * kGroup, vectors, advanced);
  }
  if (tail)
    copyTail(vectors * kZmmBytes - advanced, tail);
  addImm(regDst_, spec_.rowBytes - advanced);
}

void GatherKernel::generate() {
  preamble();
  if (spec_.outer > 0 && spec_.tuples > 0 && spec_.rowBytes > 0) {
    const int64_t tailDwords = spec_.rowBytes % kZmmBytes / 4;
    if (tailDwords > 2) {
      mov(eax, (1u << tailDwords) - 1);
      kmovw(kTail_, eax);
    }
    mov(regData_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gather_args, data))]);
    mov(regIndices_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gather_args, indices))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gather_args, dst))]);
    const int64_t tupleBytes =
        static_cast<int64_t>(spec_.dims.size()) * spec_.indexBytes;
    Xbyak::Label outerLoop, tupleLoop;
    if (spec_.tuplesPerOuter)
      mov(regTuple_, regIndices_);
    if (spec_.outer > 1) {
      mov(regOuter_, spec_.outer);
      L(outerLoop);
    }
    if (!spec_.tuplesPerOuter)
      mov(regTuple_, regIndices_);
    mov(regTuples_, spec_.tuples);
    alignCode(16, /*withNops=*/true);
    L(tupleLoop);
    rowOffset();
    add(regSrc_, regData_);
    copyRow();
    add(regTuple_, static_cast<uint32_t>(tupleBytes));
    dec(regTuples_);
    jnz(tupleLoop, T_NEAR);
    if (spec_.outer > 1) {
      addImm(regData_, spec_.outerBytes);
      dec(regOuter_);
      jnz(outerLoop, T_NEAR);
    }
  }
  postamble();
}

} // namespace

Status generateGather(const GatherSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validate(spec));
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        GatherKernel kernel(buffer, spec);
        kernel.generate();
        return kernel.finish(spec.name, code);
      });
}

} // namespace mlcc::avx512
