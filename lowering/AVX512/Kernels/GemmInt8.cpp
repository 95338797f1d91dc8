//===- GemmInt8.cpp - AVX-512 VNNI int8 (and BF16) GEMM kernels -----------===//
//
// The f32 GEMM's register blocking (Gemm.cpp) with vpdpbusd (or vdpbf16ps)
// for the FMA: an R x V block of int32 (f32) accumulators, each k group (4
// u8 or 2 bf16) loads V vectors of packed B and broadcasts 4 bytes of A per
// row. A K tail reads its last 1-3 bytes of each row through a GPR, never
// past the row. A blocked A (NCHW16c, aBlockStride) runs K in blocks of 16
// with a jump between them; a blocked C (cBlockStride) puts each 16-column
// block a plane apart.
//
// Register plan (rbx, r12-r15 are saved):
//   rdi  args         r8  B column block   r9  C column block
//   r10  column data  rsi A row block      rdx C row block
//   rax  A at k       r11 B at k           rcx k group counter
//   rbx  row counter  r12 column counter   r13, r14 tail bytes of A
//   r15  residual - C, in bytes (with a residual)
//   k1   mask of the last N vector
//   zmm  accumulators from 0, then V B vectors, two A broadcasts and, with
//        row sums, one row-sum accumulator per row.
//
//===----------------------------------------------------------------------===//

#include "GemmInt8Kernel.h"

#include "KernelABI.h"
#include "mlcc/int8_pack.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace mlcc::avx512 {

namespace int8gemm {

static_assert(kInt8Panel == MLCC_INT8_PANEL &&
                  kPanelGroupBytes == MLCC_INT8_PANEL_GROUP_BYTES &&
                  kInt8ColumnDataBytes == MLCC_INT8_COLUMN_DATA_BYTES,
              "the layout of mlcc/int8_pack.h");

namespace {

Status validate(const Int8GemmSpec &spec, int64_t lda, int64_t ldc) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.m >= 0 && spec.n >= 0 && spec.k >= 0, name,
             ": int8 gemm sizes M=", spec.m, " N=", spec.n, " K=", spec.k,
             " must not be negative");
  const int64_t rowK = spec.aBlockStride ? kBlockK : spec.k;
  const int64_t rowN = spec.cBlockStride ? kInt8Panel : spec.n;
  MLCC_CHECK(lda >= rowK, name, ": lda ", lda, " is smaller than ", rowK);
  MLCC_CHECK(ldc >= rowN, name, ": ldc ", ldc, " is smaller than ", rowN);
  MLCC_CHECK(!spec.aBlockStride ||
                 (spec.k % kBlockK == 0 &&
                  spec.aBlockStride >= kBlockK * aElementBytes(spec.bf16) &&
                  spec.aBlockStride <= kMaxBytes / spec.k),
             name, ": blocked A needs K (", spec.k,
             ") a multiple of 16 and a block stride of a block (16 "
             "elements) to 2 GiB / K bytes");
  MLCC_CHECK(spec.cBlockStride >= 0 &&
                 spec.cBlockStride <= kMaxBytes / 4 / kNumZmm,
             name, ": C block stride ", spec.cBlockStride, " is too large");
  MLCC_CHECK(spec.m == 0 ||
                 lda * aElementBytes(spec.bf16) <= kMaxBytes / spec.m,
             name, ": A of ", spec.m, " rows of ", lda,
             " bytes is too large (2 GiB at most)");
  MLCC_CHECK(spec.m == 0 || ldc <= kMaxBytes / 4 / spec.m, name, ": C of ",
             spec.m, " rows of ", ldc, " elements is too large");
  int64_t panels = (spec.n + kInt8Panel - 1) / kInt8Panel;
  MLCC_CHECK(panels == 0 || groupsOf(spec.k, spec.bf16) <=
                                kMaxBytes / (panels * kPanelGroupBytes),
             name, ": packed B of ", spec.k, " x ", spec.n,
             " is too large (2 GiB at most)");
  MLCC_CHECK(!spec.runTimeM || !spec.amx, name,
             ": the AMX kernel takes no run-time M");
  MLCC_CHECK(!spec.outputZeroArgument || outputBytes(spec.output) == 1, name,
             ": an output zero point is for a u8 or s8 output");
  MLCC_CHECK((spec.epilogue.empty() && !spec.residual) ||
                 spec.output == Int8GemmOutput::Float,
             name, ": a residual and epilogue ops need a float output");
  MLCC_CHECK(!spec.bf16 || (spec.output == Int8GemmOutput::Float &&
                            !spec.signedA && !spec.rowSums),
             name,
             ": a bf16 gemm has a float output, no sign flip and no "
             "row sums");
  for (size_t i = 0; i < spec.epilogue.size(); ++i) {
    const EltwiseOp &op = spec.epilogue[i];
    MLCC_CHECK(!isBinary(op.kind) ||
                   op.rhs.kind == EltwiseOperand::Kind::Constant,
               name, ": epilogue op ", i, " (", eltwiseKindName(op.kind),
               ") has a run-time operand; the epilogue takes constants only");
  }
  return Status::success();
}

} // namespace

void Int8GemmKernel::broadcastA(const Xbyak::Zmm &a, int row, int64_t g,
                                int tailBytes) {
  int offset = static_cast<int>(row * lda_ * aBytes_ + g * kGroupBytes);
  if (!tailBytes) {
    vpbroadcastd(a, ptr[regAK_ + offset]);
    if (spec_.signedA)
      vpxord(a, a, cstBits(kSignBits));
    return;
  }
  // The row's last bytes, zero above: the padding must add nothing to the
  // row sum either.
  if (tailBytes == 1) {
    movzx(regTail_.cvt32(), byte[regAK_ + offset]);
  } else {
    movzx(regTail_.cvt32(), word[regAK_ + offset]);
    if (tailBytes == 3) {
      movzx(regTailByte_.cvt32(), byte[regAK_ + offset + 2]);
      shl(regTailByte_.cvt32(), 16);
      or_(regTail_.cvt32(), regTailByte_.cvt32());
    }
  }
  if (spec_.signedA)
    xor_(regTail_.cvt32(), kSignBits & ((1u << (8 * tailBytes)) - 1));
  vpbroadcastd(a, regTail_.cvt32());
}

void Int8GemmKernel::groupStep(int rows, int vectors, int64_t g,
                               int tailBytes) {
  const int free = rows * vectors;
  for (int j = 0; j < vectors; ++j)
    vmovdqu8(Xbyak::Zmm(free + j),
             ptr[regBK_ + static_cast<int>((j * groups_ + g) * kZmmBytes)]);
  for (int i = 0; i < rows; ++i) {
    Xbyak::Zmm a(free + vectors + i % 2);
    broadcastA(a, i, g, tailBytes);
    for (int j = 0; j < vectors; ++j)
      if (spec_.bf16)
        vdpbf16ps(acc(i, j, vectors), a, Xbyak::Zmm(free + j));
      else
        vpdpbusd(acc(i, j, vectors), a, Xbyak::Zmm(free + j),
                 Xbyak::EvexEncoding);
    if (spec_.rowSums)
      vpdpbusd(rowSum(rows, vectors, i), a, cstBits(kOnes),
               Xbyak::EvexEncoding);
  }
}

void Int8GemmKernel::epilogue(int rows, int vectors, bool masked) {
  // Fields of the column data: 0 comp, 1 scale, 2 bias, 3 zb'.
  Xbyak::Zmm tmp(rows * vectors);
  for (int i = 0; i < rows && !spec_.bf16; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Zmm z = acc(i, j, vectors);
      if (spec_.rowSums) {
        vpmulld(tmp, rowSum(rows, vectors, i), columnData(j, 3));
        vpsubd(z, z, tmp);
      }
      vpaddd(z, z, columnData(j, 0));
    }
  if (spec_.output == Int8GemmOutput::Int32)
    return;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Zmm z = acc(i, j, vectors);
      if (!spec_.bf16)
        vcvtdq2ps(z, z);
      vmulps(z, z, columnData(j, 1));
      vaddps(z, z, columnData(j, 2));
      if (spec_.residual) {
        // The masked lanes of the N tail are not read (faults suppressed).
        Xbyak::Address r =
            ptr[regCRow_ + regResidualDelta_ +
                static_cast<int>(i * ldc_ * 4 + j * columnBlockBytes(4))];
        if (masked && j == vectors - 1)
          vaddps(z | kTail_, z, r);
        else
          vaddps(z, z, r);
      }
    }
  if (spec_.output == Int8GemmOutput::Float) {
    injector_.blockEpilogue(spec_.epilogue, rows, vectors, nullptr, masked,
                            kTail_);
    return;
  }
  // Round to nearest even (MXCSR's default) and saturate as the store
  // narrows: vpmovusdb saturates unsigned, so negatives are clamped first.
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Zmm z = acc(i, j, vectors);
      vcvtps2dq(z, z);
      if (spec_.outputZeroArgument)
        vpaddd(z, z,
               ptr_b[regArgs_ + static_cast<int>(offsetof(mlcc_int8_gemm_args,
                                                          output_zero))]);
      else if (spec_.outputZero != 0)
        vpaddd(z, z, cstBits(static_cast<uint32_t>(spec_.outputZero)));
      if (spec_.output == Int8GemmOutput::U8) {
        vpxord(tmp, tmp, tmp);
        vpmaxsd(z, z, tmp);
      }
    }
}

void Int8GemmKernel::store(int rows, int vectors, bool masked) {
  const int elementBytes = outputBytes(spec_.output);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Zmm z = acc(i, j, vectors);
      Xbyak::Address c =
          ptr[regCRow_ + static_cast<int>(i * ldc_ * elementBytes +
                                          j * columnBlockBytes(elementBytes))];
      bool tail = masked && j == vectors - 1;
      if (tail && spec_.cBlockStride) {
        // A blocked C's padding lanes are stored too, as 0.
        vmovdqa32(z | kTail_ | T_z, z);
        tail = false;
      }
      switch (spec_.output) {
      case Int8GemmOutput::U8:
        tail ? vpmovusdb(c | kTail_, z) : vpmovusdb(c, z);
        break;
      case Int8GemmOutput::S8:
        tail ? vpmovsdb(c | kTail_, z) : vpmovsdb(c, z);
        break;
      default:
        tail ? vmovdqu32(c | kTail_, z) : vmovdqu32(c, z);
      }
    }
}

void Int8GemmKernel::microkernel(int rows, int vectors, bool masked) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Zmm z = acc(i, j, vectors);
      vpxord(z, z, z);
    }
    if (spec_.rowSums) {
      Xbyak::Zmm s = rowSum(rows, vectors, i);
      vpxord(s, s, s);
    }
  }
  const int tailBytes = static_cast<int>(spec_.k % perGroup_) * aBytes_;
  const int64_t wholeGroups = spec_.k / perGroup_;
  if (groups_ > 0) {
    mov(regAK_, regARow_);
    mov(regBK_, regBCol_);
  }
  if (spec_.aBlockStride) {
    blockedK(rows, vectors);
    epilogue(rows, vectors, masked);
    store(rows, vectors, masked);
    return;
  }
  // Two groups per iteration: amortises the pointer updates and the branch.
  constexpr int64_t kUnroll = 2;
  const int64_t iters = wholeGroups / kUnroll;
  const int64_t rest = wholeGroups % kUnroll;
  if (iters > 0) {
    Xbyak::Label loop;
    if (iters > 1) {
      mov(regKIter_, iters);
      alignCode(32, /*withNops=*/true);
      L(loop);
    }
    for (int64_t u = 0; u < kUnroll; ++u)
      groupStep(rows, vectors, u, 0);
    if (iters > 1 || rest || tailBytes) {
      add(regAK_, static_cast<int>(kUnroll * kGroupBytes));
      add(regBK_, static_cast<int>(kUnroll * kZmmBytes));
    }
    if (iters > 1) {
      dec(regKIter_);
      jnz(loop, T_NEAR);
    }
  }
  for (int64_t u = 0; u < rest; ++u)
    groupStep(rows, vectors, u, 0);
  if (tailBytes)
    groupStep(rows, vectors, rest, tailBytes);
  epilogue(rows, vectors, masked);
  store(rows, vectors, masked);
}

void Int8GemmKernel::blockedK(int rows, int vectors) {
  const int64_t blocks = spec_.k / kBlockK;
  if (blocks == 0)
    return;
  Xbyak::Label loop;
  if (blocks > 1) {
    mov(regKIter_, blocks);
    alignCode(32, /*withNops=*/true);
    L(loop);
  }
  for (int64_t g = 0; g < kBlockK / perGroup_; ++g)
    groupStep(rows, vectors, g, 0);
  if (blocks > 1) {
    add(regAK_, static_cast<int>(spec_.aBlockStride));
    add(regBK_, static_cast<int>(kBlockK / perGroup_ * kZmmBytes));
    dec(regKIter_);
    jnz(loop, T_NEAR);
  }
}

void Int8GemmKernel::rowBlocks(int vectors, bool masked) {
  mov(regARow_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_int8_gemm_args, a))]);
  mov(regCRow_, regCCol_);
  if (spec_.runTimeM) {
    runTimeRowBlocks(vectors, masked);
    return;
  }
  const int64_t full = spec_.m / rows_;
  const int tail = static_cast<int>(spec_.m % rows_);
  const int cBytes = outputBytes(spec_.output);
  if (full > 0) {
    Xbyak::Label loop;
    if (full > 1) {
      mov(regRowIter_, full);
      L(loop);
    }
    microkernel(rows_, vectors, masked);
    if (full > 1 || tail) {
      add(regARow_, static_cast<int>(rows_ * lda_ * aBytes_));
      add(regCRow_, static_cast<int>(rows_ * ldc_ * cBytes));
    }
    if (full > 1) {
      dec(regRowIter_);
      jnz(loop, T_NEAR);
    }
  }
  if (tail)
    microkernel(tail, vectors, masked);
}

// rbx counts the rows left.
void Int8GemmKernel::runTimeRowBlocks(int vectors, bool masked) {
  loadAtMost(regRowIter_,
             ptr[regArgs_ + static_cast<int>(offsetof(mlcc_int8_gemm_args, m))],
             spec_.m, regAK_);
  const int cBytes = outputBytes(spec_.output);
  runTimeRowLoop(
      regRowIter_, rows_, [&](int n) { microkernel(n, vectors, masked); },
      [&] {
        add(regARow_, static_cast<int>(rows_ * lda_ * aBytes_));
        add(regCRow_, static_cast<int>(rows_ * ldc_ * cBytes));
      });
}

void Int8GemmKernel::columnBlocks(int64_t count, int vectors, bool masked) {
  if (count == 0)
    return;
  const int cBytes = outputBytes(spec_.output);
  Xbyak::Label loop;
  if (count > 1) {
    mov(regColIter_, count);
    L(loop);
  }
  rowBlocks(vectors, masked);
  add(regBCol_, static_cast<int>(vectors * groups_ * kZmmBytes));
  add(regCCol_, static_cast<int>(vectors * columnBlockBytes(cBytes)));
  add(regColData_, static_cast<int>(vectors * kInt8ColumnDataBytes));
  if (count > 1) {
    dec(regColIter_);
    jnz(loop, T_NEAR);
  }
}

void Int8GemmKernel::generate() {
  preamble({rbx, r12, r13, r14, r15});
  if (spec_.m == 0 || spec_.n == 0) {
    postamble();
    return;
  }
  mov(regBCol_, ptr[regArgs_ +
                    static_cast<int>(offsetof(mlcc_int8_gemm_args, packed_b))]);
  mov(regCCol_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_int8_gemm_args, c))]);
  mov(regColData_, ptr[regArgs_ + static_cast<int>(offsetof(mlcc_int8_gemm_args,
                                                            column_data))]);
  if (spec_.residual) {
    mov(regResidualDelta_, ptr[regArgs_ + static_cast<int>(offsetof(
                                              mlcc_int8_gemm_args, residual))]);
    sub(regResidualDelta_, regCCol_);
  }
  const int64_t nVectors = (spec_.n + kF32Lanes - 1) / kF32Lanes;
  const int rem = static_cast<int>(spec_.n % kF32Lanes);
  if (rem) {
    mov(eax, (1u << rem) - 1);
    kmovw(kTail_, eax);
  }
  int64_t fullBlocks = nVectors / vectors_;
  int tailVectors = static_cast<int>(nVectors % vectors_);
  if (rem && tailVectors == 0) {
    --fullBlocks;
    tailVectors = vectors_;
  }
  columnBlocks(fullBlocks, vectors_, /*masked=*/false);
  if (tailVectors)
    columnBlocks(1, tailVectors, /*masked=*/rem != 0);
  postamble();
}

} // namespace int8gemm

using namespace int8gemm;

Status generateInt8Gemm(const Int8GemmSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  const int64_t lda = spec.lda ? spec.lda : spec.k;
  const int64_t ldc = spec.ldc ? spec.ldc : spec.n;
  MLCC_RETURN_IF_ERROR(validate(spec, lda, ldc));
  if (spec.amx)
    return generateAmxGemm(spec, lda, ldc, code);
  // As the f32 kernel: 6 x 4 accumulators, 2 x 8 for M <= 2. Row sums take
  // a register per row: 4 x 4 then.
  int maxRows = spec.rowSums ? 4 : 6;
  int rows = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(spec.m <= 2 ? 2 : maxRows, spec.m)));
  int vectors = rows <= 2 ? 8 : 4;
  int temps = 1;
  for (const EltwiseOp &op : spec.epilogue)
    temps = std::max(temps, EltwiseInjector::tempsNeeded(op));
  int loopRegs = rows * vectors + vectors + 2 + (spec.rowSums ? rows : 0);
  MLCC_CHECK(loopRegs <= kNumZmm && rows * vectors + temps <= kNumZmm,
             spec.name, ": a block of ", rows, " rows x ", vectors,
             " vectors needs more than ", kNumZmm, " zmm registers");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    Int8GemmKernel kernel(buffer, spec, lda, ldc, rows, vectors);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

PackedInt8B packInt8B(const int32_t *b, int64_t k, int64_t n, bool bUnsigned,
                      const std::vector<int32_t> &zb, int32_t za, bool signedA,
                      const std::vector<float> &scale,
                      const std::vector<float> &bias,
                      const std::vector<int32_t> &intBias) {
  // The run-time packer's bytes (mlcc/int8_pack.h), from the values as
  // bytes of their own type.
  std::vector<int8_t> bytes(static_cast<size_t>(k * n));
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<int8_t>(b[i]);
  std::vector<int8_t> zbBytes(zb.begin(), zb.end());
  const int8_t zaByte = static_cast<int8_t>(za);
  PackedInt8B out;
  const int64_t panels = (n + kInt8Panel - 1) / kInt8Panel;
  out.panels.resize(
      static_cast<size_t>(panels * groupsOf(k, false) * kPanelGroupBytes));
  out.columnData.resize(static_cast<size_t>(panels * kInt8ColumnDataBytes));
  mlcc_int8_pack_args args = {};
  args.b = bytes.data();
  args.k = k;
  args.n = n;
  args.stride_k = n;
  args.stride_n = 1;
  args.flags = (bUnsigned ? MLCC_INT8_PACK_B_UNSIGNED : 0) |
               (signedA ? MLCC_INT8_PACK_A_SIGNED : 0);
  args.a_zero = &zaByte;
  args.b_zero = zbBytes.data();
  args.b_zero_count = static_cast<int64_t>(zbBytes.size());
  args.b_scale = scale.empty() ? nullptr : scale.data();
  args.b_scale_count = static_cast<int64_t>(scale.size());
  args.bias = bias.empty() ? nullptr : bias.data();
  args.int_bias = intBias.empty() ? nullptr : intBias.data();
  args.packed = out.panels.data();
  args.column_data = out.columnData.data();
  mlcc_int8_pack_b(&args);
  const int32_t shiftB = bUnsigned ? 128 : 0;
  for (int32_t z : zb)
    out.rowSums |= z - shiftB != 0;
  return out;
}

uint16_t toBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: stays a (quiet) NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest even on the 16 bits dropped.
  bits += 0x7fffu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

PackedInt8B packBf16B(const float *b, int64_t k, int64_t n,
                      const std::vector<float> &scale,
                      const std::vector<float> &bias) {
  PackedInt8B out;
  const int64_t panels = (n + kInt8Panel - 1) / kInt8Panel;
  const int64_t groups = groupsOf(k, /*bf16=*/true);
  std::vector<uint16_t> packed(static_cast<size_t>(panels * groups * 32), 0);
  out.columnData.assign(static_cast<size_t>(panels * kInt8ColumnDataBytes), 0);
  for (int64_t col = 0; col < n; ++col) {
    int64_t p = col / kInt8Panel, j = col % kInt8Panel;
    for (int64_t kk = 0; kk < k; ++kk)
      packed[static_cast<size_t>(((p * groups + kk / 2) * kInt8Panel + j) * 2 +
                                 kk % 2)] = toBf16(b[kk * n + col]);
    float s = scale.empty() ? 1.0f : scale[col];
    float c = bias.empty() ? 0.0f : bias[col];
    uint8_t *data = out.columnData.data() + p * kInt8ColumnDataBytes;
    std::memcpy(data + 1 * kZmmBytes + j * 4, &s, 4);
    std::memcpy(data + 2 * kZmmBytes + j * 4, &c, 4);
  }
  out.panels.resize(packed.size() * 2);
  std::memcpy(out.panels.data(), packed.data(), out.panels.size());
  return out;
}

} // namespace mlcc::avx512
