//===- Stencil.cpp - AVX-512 graph.stencil kernels ------------------------===//
//
// The shape, the weights and every attribute are known when the kernel is
// generated, so each output vector of 16 columns is planned here, tap by
// tap, as in Pool.cpp. The window is always handled as a 3-D one over
// (D, H, W), the last three dims (a 2-D or 1-D window gets size-1 dims in
// front); the dims before them are batch planes, run by a loop.
//
// Rows. For output row (od, oh) each tap row (kd, kh) is resolved by the
// padding mode when it is generated: to an input row, whose address is a
// displacement from the window origin, or (zero padding) to no row at all,
// when the tap is padding_value in every lane. Rows whose taps are all
// inside the input need no remapping and so share code: they run in loops
// (over D, and over H within each D position); border rows are
// straight-line code of their own.
//
// Columns. Without a stride, a tap of an output vector whose lanes all read
// inside the row is one contiguous (for a tail: masked) load, and zero
// padding loads the lanes inside over a vector of padding_value. Otherwise
// (clamp, reflect, mirror at a border, or a stride of 2 anywhere) the
// columns the lanes read, remapped, lie within 16 * stride of each other:
// the tap loads them from the lowest (one or two vectors, never past the
// row) and permutes them into place with vpermps or vpermt2ps (the index
// vectors are in a table after the code); zero padding then puts
// padding_value in the lanes outside. Strides above 2 are not generated.
// Vectors that read inside the row for every tap run in a loop; the border
// ones are straight-line code.
//
// Reductions, tap by tap in the reference's (row-major) order, of
// v = x * weight:
// - sum: acc = fma(x, weight, acc) in f32; the reference sums in double,
//   so results differ by rounding (about K ulps of the sum of |v|).
// - min, max: vminps/vmaxps(acc, v, acc) take v only when v < acc (v >
//   acc), which is the reference's test: a NaN v is skipped, ties keep the
//   earlier tap. Rounding v to f32 is monotonic, so the result is what the
//   reference's double result rounds to.
// - argmin, argmax: the same test, but on the exact product: v is kept as
//   p = round(x * w) and e = fma(x, w, -p), so that p + e is the product
//   and (p, e) compare as it does (unless a product overflows or is
//   subnormal). The flat tap index of the winner goes out as i64.
// Weights with no effect are not skipped (0 * inf is NaN, as in the
// reference).
//
// Prologue and epilogue (sum only). square: x = x * x (rounded to f32)
// before the fma, padding values too. lrn: t = bias + s, then
// x[p] / (sqrt(t) * sqrt(sqrt(t))) for beta = 3/4 (ONNX's default; within
// about 3 ulps of t^(3/4)), x[p] / sqrt(t) for 1/2, x[p] / t for 1, x[p]
// for 0, and otherwise x[p] * exp(-beta * log(t)): log as in
// Normalization.cpp (t = 2^e m, m in [3/4, 3/2), an atanh series for
// log(m)), exp from the eltwise injector (4.5e-7 relative); the error of
// the product beta * log(t) (about |beta log t| 2^-24) adds to the
// result's relative error. t >= bias > 0 (the spec's conditions), so log
// is defined. As in x / pow(t, beta), a NaN input makes its window's
// outputs NaN, and an inf one its own (inf / inf) while its neighbours
// get 0 (x / inf). An x * x that overflows f32 (|x| > 1.8e19) makes t inf
// here where the reference's double sum does not.
//
// Register plan:
//   rdi  args           rsi  src plane      rdx  dst plane   r8  plane count
//   r9   D-loop src     r10  D-loop dst     r11  D-loop count
//   r12  H-loop src     r13  H-loop dst     r14  H-loop count
//   rax  W-loop src     rcx  W-loop dst     r15  W-loop count
//   ebx  mask bits
//   zmm0 acc (min/max: value; arg: rounded product)  zmm1 the tap x
//   zmm2 v   zmm3 arg: error of acc   zmm4 arg: error of v
//   zmm5 arg: index (i32)   zmm6 i64 conversion   zmm7 padding_value
//   zmm8-zmm29 weights   zmm30 the tap's second 16 columns (stride 2)
//   zmm31 permute indices
//   k2 lanes read  k3 store  k4, k5 arg comparisons  k6 second load
//   lrn epilogue: zmm1 x[p], zmm2-zmm6 scratch, k4 the injector's mask
//
//===----------------------------------------------------------------------===//

#include "Stencil.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>

namespace mlcc::avx512 {

namespace {

/// Generated code reaches the input with 32-bit displacements.
constexpr int64_t kMaxBytes = int64_t(1) << 30;
constexpr int64_t kMaxWindowDim = 1024, kMaxTaps = 4096,
                  kMaxStep = int64_t(1) << 20;

/// Maps coordinate `i` into [0, n) as the reference does; -1 for zero
/// padding outside.
int64_t resolve(int64_t i, int64_t n, StencilPadding pad) {
  if (i >= 0 && i < n)
    return i;
  switch (pad) {
  case StencilPadding::Zero:
    return -1;
  case StencilPadding::Clamp:
    return i < 0 ? 0 : n - 1;
  case StencilPadding::Reflect: {
    if (n == 1)
      return 0;
    int64_t period = 2 * (n - 1);
    int64_t m = ((i % period) + period) % period;
    return m < n ? m : period - m;
  }
  case StencilPadding::Mirror: {
    int64_t period = 2 * n;
    int64_t m = ((i % period) + period) % period;
    return m < n ? m : period - 1 - m;
  }
  }
  return -1;
}

/// One window dim: input size, output size, window size, stride,
/// dilation, offset of the window origin.
struct Dim {
  int64_t in = 1, out = 1, k = 1, s = 1, d = 1, off = 0;

  int64_t origin(int64_t o) const { return o * s + off; }
  int64_t coord(int64_t o, int64_t t) const { return origin(o) + t * d; }
  /// Whether every tap of output `o` is inside the input.
  bool interior(int64_t o) const {
    return coord(o, 0) >= 0 && coord(o, k - 1) < in;
  }
  /// [first, last) of the interior outputs, when they are consecutive
  /// (they are: the taps move monotonically with o).
  std::pair<int64_t, int64_t> interiorRange() const {
    int64_t a = 0;
    while (a < out && !interior(a))
      ++a;
    int64_t b = a;
    while (b < out && interior(b))
      ++b;
    return {a, b};
  }
};

/// The spec's window as batch planes times (D, H, W); fails for what the
/// generator does not take.
struct Plan {
  int64_t batch = 1;
  Dim dims[3]; // D, H, W
  std::vector<int64_t> outShape;
};

Status planOf(const StencilSpec &spec, Plan &plan) {
  const std::string &name = spec.name;
  const size_t rank = spec.shape.size();
  MLCC_CHECK(rank >= 1, name, ": stencil needs an input of rank >= 1");
  MLCC_CHECK(spec.kernel.size() == rank, name, ": weights have rank ",
             spec.kernel.size(), ", expected the input's rank ", rank);
  int64_t taps = 1, elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    MLCC_CHECK(spec.shape[d] >= 0 && spec.shape[d] <= kMaxBytes, name,
               ": input dim ", d, " is ", spec.shape[d]);
    MLCC_CHECK(spec.kernel[d] >= 1 && spec.kernel[d] <= kMaxWindowDim, name,
               ": weights dim ", d, " is ", spec.kernel[d],
               ", expected in [1, ", kMaxWindowDim, "]");
    taps *= spec.kernel[d];
    MLCC_CHECK(taps <= kMaxTaps, name, ": more than ", kMaxTaps, " weights");
    elements *= spec.shape[d];
    MLCC_CHECK(elements <= kMaxBytes / 8, name, ": input too big");
  }
  MLCC_CHECK(static_cast<int64_t>(spec.weights.size()) == taps, name, ": ",
             spec.weights.size(), " weights for a window of ", taps);
  auto perDim = [&](const std::vector<int64_t> &v, const char *what) {
    return v.empty() || v.size() == rank
               ? Status::success()
               : Status::error(name, ": ", what, " need ", rank, " entries");
  };
  MLCC_RETURN_IF_ERROR(perDim(spec.offsets, "offsets"));
  MLCC_RETURN_IF_ERROR(perDim(spec.strides, "strides"));
  MLCC_RETURN_IF_ERROR(perDim(spec.dilations, "dilations"));
  plan.outShape.clear();
  plan.batch = 1;
  const size_t first = rank > 3 ? rank - 3 : 0;
  for (size_t d = 0; d < rank; ++d) {
    int64_t s = spec.strides.empty() ? 1 : spec.strides[d];
    int64_t dil = spec.dilations.empty() ? 1 : spec.dilations[d];
    int64_t k = spec.kernel[d];
    MLCC_CHECK(s >= 1 && s <= kMaxStep && dil >= 1 && dil <= kMaxStep, name,
               ": strides and dilations must be in [1, 2^20]");
    int64_t off = spec.offsets.empty() ? -((k - 1) * dil) / 2 : spec.offsets[d];
    MLCC_CHECK(off >= -kMaxStep && off <= kMaxStep, name, ": offset ", off,
               " out of [-2^20, 2^20]");
    int64_t n = spec.shape[d];
    plan.outShape.push_back((n + s - 1) / s);
    if (d < first) {
      // Batch: the window must not move along it.
      MLCC_CHECK(k == 1 && off == 0 && s == 1, name,
                 ": windows over more than the last three dims are not "
                 "generated");
      plan.batch *= n;
      continue;
    }
    Dim &dim = plan.dims[3 - (rank - d)];
    dim.in = n;
    dim.out = plan.outShape.back();
    dim.k = k;
    dim.s = s;
    dim.d = dil;
    dim.off = off;
  }
  MLCC_CHECK(plan.dims[2].s <= 2, name,
             ": a stride above 2 along the innermost dim is not generated");
  if (spec.prologue == StencilPrologue::None &&
      spec.epilogue == StencilEpilogue::None)
    return Status::success();
  MLCC_CHECK(spec.reduction == StencilReduction::Sum, name,
             ": a prologue or epilogue needs the sum reduction");
  if (spec.epilogue == StencilEpilogue::Lrn) {
    MLCC_CHECK(spec.prologue == StencilPrologue::Square, name,
               ": the lrn epilogue needs the square prologue");
    MLCC_CHECK(spec.lrnBias > 0.0f && std::isfinite(spec.lrnBias) &&
                   std::isfinite(spec.lrnBeta),
               name, ": lrn needs a finite bias > 0 and a finite beta");
    for (float w : spec.weights)
      MLCC_CHECK(w >= 0.0f && std::isfinite(w), name,
                 ": lrn needs finite weights >= 0");
    for (size_t d = 0; d < rank; ++d)
      MLCC_CHECK(spec.strides.empty() || spec.strides[d] == 1, name,
                 ": lrn needs strides of 1");
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

using IndexVector = std::array<int32_t, kF32Lanes>;

class StencilKernel : public JitGenerator {
public:
  StencilKernel(std::vector<uint8_t> &buffer, const StencilSpec &spec,
                const Plan &plan)
      : JitGenerator(buffer), spec_(spec), plan_(plan), dd_(plan.dims[0]),
        dh_(plan.dims[1]), dw_(plan.dims[2]), red_(spec.reduction),
        pad_(spec.padding), arg_(red_ == StencilReduction::ArgMin ||
                                 red_ == StencilReduction::ArgMax),
        outBytes_(arg_ ? 8 : 4) {}

  Status generate();

private:
  const StencilSpec &spec_;
  const Plan &plan_;
  const Dim &dd_, &dh_, &dw_;
  const StencilReduction red_;
  const StencilPadding pad_;
  const bool arg_;
  const int64_t outBytes_;
  bool dispOverflow_ = false;
  bool unplanned_ = false; // a vector reads more than two can hold
  Xbyak::Label indexTable_;
  std::vector<IndexVector> indexVectors_;
  std::map<IndexVector, size_t> indexSlots_;

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx,
                     regPlanes_ = r8, regDSrc_ = r9, regDDst_ = r10,
                     regDCount_ = r11, regHSrc_ = r12, regHDst_ = r13,
                     regHCount_ = r14, regVSrc_ = rax, regVDst_ = rcx,
                     regVCount_ = r15;
  const Xbyak::Zmm acc_ = zmm0, tap_ = zmm1, v_ = zmm2, accErr_ = zmm3,
                   err_ = zmm4, index_ = zmm5, wide_ = zmm6, padVec_ = zmm7,
                   high_ = zmm30, permuteIndex_ = zmm31;
  const Xbyak::Opmask kLanes_ = k2, kStore_ = k3, kLess_ = k4, kTie_ = k5,
                      kHigh_ = k6;

  int32_t d32(int64_t v) {
    if (v < INT32_MIN || v > INT32_MAX) {
      dispOverflow_ = true;
      return 0;
    }
    return static_cast<int32_t>(v);
  }
  void setMask(const Xbyak::Opmask &k, uint32_t bits) {
    mov(ebx, bits);
    kmovw(k, ebx);
  }
  void addImm(const Xbyak::Reg64 &r, int64_t v) {
    JitGenerator::addImm(r, v, rbx);
  }
  size_t indexSlot(const IndexVector &v) {
    auto [it, inserted] = indexSlots_.try_emplace(v, indexVectors_.size());
    if (inserted)
      indexVectors_.push_back(v);
    return it->second;
  }
  /// permuteIndex_ = `v`, from the table after the code.
  void loadIndices(const IndexVector &v) {
    size_t slot = indexSlot(v);
    vmovdqu32(permuteIndex_,
              ptr[rip + indexTable_ + static_cast<int>(slot * kZmmBytes)]);
  }
  static int64_t minColumn(const IndexVector &v, uint32_t active) {
    int64_t m = INT64_MAX;
    for (int j = 0; j < kF32Lanes; ++j)
      if (active >> j & 1)
        m = std::min<int64_t>(m, v[j]);
    return m;
  }
  static int64_t maxColumn(const IndexVector &v, uint32_t active) {
    int64_t m = INT64_MIN;
    for (int j = 0; j < kF32Lanes; ++j)
      if (active >> j & 1)
        m = std::max<int64_t>(m, v[j]);
    return m;
  }
  float weight(int64_t t) const { return spec_.weights[t]; }

  void initAcc();
  void combine(const Xbyak::Zmm &x, int64_t t);
  void log(const Xbyak::Zmm &x);
  void lrnEpilogue(int lanes, const Xbyak::Address &center);
  void store(int lanes, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void outputVector(int64_t od, int64_t oh, int64_t ow0, int lanes,
                    const Xbyak::Reg64 &src, int64_t srcDisp,
                    const Xbyak::Reg64 &dst, int64_t dstDisp);
  bool fullVector(int64_t v) const;
  void row(int64_t od, int64_t oh, const Xbyak::Reg64 &src, int64_t srcDisp,
           const Xbyak::Reg64 &dst, int64_t dstDisp);
  void rows(int64_t od, const Xbyak::Reg64 &src, int64_t srcDisp,
            const Xbyak::Reg64 &dst, int64_t dstDisp);
  void planes();
};

void StencilKernel::initAcc() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (red_) {
  case StencilReduction::Sum:
    vxorps(acc_, acc_, acc_);
    return;
  case StencilReduction::Min:
  case StencilReduction::ArgMin:
    loadCst(acc_, kInf);
    break;
  case StencilReduction::Max:
  case StencilReduction::ArgMax:
    loadCst(acc_, -kInf);
    break;
  }
  if (arg_) {
    vxorps(accErr_, accErr_, accErr_);
    vpxord(index_, index_, index_);
  }
}

/// Folds tap `t`, whose input values are in `x`, into the accumulator.
void StencilKernel::combine(const Xbyak::Zmm &x, int64_t t) {
  const Xbyak::Operand &w = cst(weight(t));
  switch (red_) {
  case StencilReduction::Sum:
    if (spec_.prologue == StencilPrologue::Square) {
      vmulps(v_, x, x);
      vfmadd231ps(acc_, v_, w);
      return;
    }
    vfmadd231ps(acc_, x, w);
    return;
  case StencilReduction::Min:
    vmulps(v_, x, w);
    vminps(acc_, v_, acc_); // v < acc ? v : acc
    return;
  case StencilReduction::Max:
    vmulps(v_, x, w);
    vmaxps(acc_, v_, acc_); // v > acc ? v : acc
    return;
  case StencilReduction::ArgMin:
  case StencilReduction::ArgMax: {
    vmulps(v_, x, w);
    vmovaps(err_, v_);
    vfmsub231ps(err_, x, cst(weight(t))); // x * w - p, exactly
    bool min = red_ == StencilReduction::ArgMin;
    // better = v beats acc, or ties it and its error does.
    if (min) {
      vcmpltps(kLess_, v_, acc_);
      vcmpeqps(kTie_, v_, acc_);
      vcmpltps(kTie_ | kTie_, err_, accErr_);
    } else {
      vcmpgtps(kLess_, v_, acc_);
      vcmpeqps(kTie_, v_, acc_);
      vcmpgtps(kTie_ | kTie_, err_, accErr_);
    }
    korw(kLess_, kLess_, kTie_);
    vmovaps(acc_ | kLess_, v_);
    vmovaps(accErr_ | kLess_, err_);
    vpblendmd(index_ | kLess_, index_, cstBits(static_cast<uint32_t>(t)));
    return;
  }
  }
}

/// x = log(x) for x > 0 (inf included), in every lane; clobbers zmm2-zmm5
/// and k4.
void StencilKernel::log(const Xbyak::Zmm &x) {
  // The series makes inf - inf of log(inf): those lanes get inf.
  vcmpeqps(kLess_, x, cst(std::numeric_limits<float>::infinity()));
  logPositive(x, zmm2, zmm3, zmm4, zmm5);
  vblendmps(x | kLess_, x, cst(std::numeric_limits<float>::infinity()));
}

/// acc = x[p] * (bias + acc)^-beta, x[p] (the input at the outputs'
/// positions) loaded from `center`, `lanes` of them.
void StencilKernel::lrnEpilogue(int lanes, const Xbyak::Address &center) {
  const float beta = spec_.lrnBeta;
  vaddps(acc_, acc_, cst(spec_.lrnBias));
  if (lanes == kF32Lanes) {
    vmovups(tap_, center);
  } else {
    setMask(kLanes_, (1u << lanes) - 1);
    vmovups(tap_ | kLanes_ | T_z, center);
  }
  if (beta == 0.0f) {
    vmovaps(acc_, tap_); // t^0 = 1, as pow has it even for NaN
    return;
  }
  if (beta == 0.75f || beta == 0.5f || beta == 1.0f) {
    if (beta == 0.75f) {
      vsqrtps(v_, acc_);
      vsqrtps(err_, v_);
      vmulps(acc_, v_, err_);
    } else if (beta == 0.5f) {
      vsqrtps(acc_, acc_);
    }
    vdivps(acc_, tap_, acc_);
    return;
  }
  log(acc_);
  vmulps(acc_, acc_, cst(-beta));
  EltwiseInjector(*this).unary(EltwiseOp::unary(EltwiseKind::Exp),
                               {acc_, {v_, accErr_, err_, wide_}, kLess_});
  vmulps(acc_, acc_, tap_);
}

void StencilKernel::store(int lanes, const Xbyak::Reg64 &dst, int64_t dstDisp) {
  int32_t disp = d32(dstDisp);
  if (!arg_) {
    if (lanes == kF32Lanes) {
      vmovups(ptr[dst + disp], acc_);
    } else {
      setMask(kStore_, (1u << lanes) - 1);
      vmovups(ptr[dst + disp] | kStore_, acc_);
    }
    return;
  }
  // 16 i32 indices -> two vectors of 8 i64.
  for (int half = 0; half < 2 && half * 8 < lanes; ++half) {
    if (half == 0) {
      vpmovsxdq(wide_, Xbyak::Ymm(index_.getIdx()));
    } else {
      vextracti64x4(Xbyak::Ymm(wide_.getIdx()), index_, 1);
      vpmovsxdq(wide_, Xbyak::Ymm(wide_.getIdx()));
    }
    int n = std::min(8, lanes - half * 8);
    Xbyak::Address a = ptr[dst + d32(dstDisp + 64 * half)];
    if (n == 8) {
      vmovdqu64(a, wide_);
    } else {
      setMask(kStore_, (1u << n) - 1);
      vmovdqu64(a | kStore_, wide_);
    }
  }
}

/// One vector of `lanes` outputs (od, oh, ow0 + j). src + srcDisp is the
/// address of the window origin's row, column 0 (the origin may lie
/// outside the input); dst + dstDisp that of output (od, oh, ow0).
void StencilKernel::outputVector(int64_t od, int64_t oh, int64_t ow0, int lanes,
                                 const Xbyak::Reg64 &src, int64_t srcDisp,
                                 const Xbyak::Reg64 &dst, int64_t dstDisp) {
  const int64_t rowBytes = 4 * dw_.in, planeBytes = rowBytes * dh_.in;
  const int64_t zd = dd_.origin(od), zh = dh_.origin(oh);
  const uint32_t active = lanes == kF32Lanes ? 0xFFFFu : (1u << lanes) - 1;
  initAcc();
  int64_t t = 0;
  for (int64_t kd = 0; kd < dd_.k; ++kd) {
    int64_t rd = resolve(dd_.coord(od, kd), dd_.in, pad_);
    for (int64_t kh = 0; kh < dh_.k; ++kh) {
      int64_t rh = resolve(dh_.coord(oh, kh), dh_.in, pad_);
      // The tap row's column 0, from src.
      int64_t rowDisp = srcDisp + (rd - zd) * planeBytes + (rh - zh) * rowBytes;
      for (int64_t kw = 0; kw < dw_.k; ++kw, ++t) {
        if (rd < 0 || rh < 0) {
          combine(padVec_, t); // zero padding: a whole row outside
          continue;
        }
        const int64_t sw = dw_.s;
        const int64_t c0 = dw_.coord(ow0, kw); // lane 0's column
        uint32_t inside = 0; // lanes that read their own column
        IndexVector columns{};
        for (int j = 0; j < lanes; ++j) {
          int64_t c = c0 + j * sw, r = resolve(c, dw_.in, pad_);
          columns[j] = static_cast<int32_t>(r < 0 ? 0 : r);
          if (r >= 0 && r == c)
            inside |= 1u << j;
        }
        Xbyak::Address contiguous = ptr[src + d32(rowDisp + 4 * c0)];
        if (sw == 1 && inside == active) {
          if (lanes == kF32Lanes && red_ == StencilReduction::Sum &&
              spec_.prologue == StencilPrologue::None &&
              cst(weight(t)).isZMM()) {
            vfmadd231ps(acc_, Xbyak::Zmm(cst(weight(t)).getIdx()), contiguous);
            continue;
          }
          if (lanes == kF32Lanes) {
            vmovups(tap_, contiguous);
          } else {
            setMask(kLanes_, active);
            vmovups(tap_ | kLanes_ | T_z, contiguous);
          }
          combine(tap_, t);
          continue;
        }
        // The lanes that read the row; zero padding gives the others
        // padding_value.
        uint32_t read = pad_ == StencilPadding::Zero ? inside & active : active;
        if (read == 0) {
          combine(padVec_, t);
          continue;
        }
        if (sw == 1 && pad_ == StencilPadding::Zero) {
          vmovaps(tap_, padVec_);
          setMask(kLanes_, read);
          vmovups(tap_ | kLanes_, contiguous);
          combine(tap_, t);
          continue;
        }
        // Remapped columns of neighbouring lanes are at most the stride
        // apart, so the columns read lie in [lo, lo + 16 * stride): load
        // those (no further than the row goes) and permute them into
        // place, from one vector (vpermps) or two (vpermt2ps).
        int64_t lo = minColumn(columns, read), hi = maxColumn(columns, read);
        if (hi - lo >= 2 * kF32Lanes) {
          unplanned_ = true;
          continue;
        }
        IndexVector lanesFrom{};
        for (int j = 0; j < lanes; ++j)
          lanesFrom[j] =
              static_cast<int32_t>(read >> j & 1 ? columns[j] - lo : 0);
        loadIndices(lanesFrom);
        uint64_t span = (uint64_t(1) << (hi - lo + 1)) - 1;
        int64_t from = rowDisp + 4 * lo;
        if (span >> 16 == 0) {
          setMask(kLanes_, static_cast<uint32_t>(span));
          vmovups(tap_ | kLanes_ | T_z, ptr[src + d32(from)]);
          vpermps(tap_, permuteIndex_, tap_);
        } else {
          vmovups(tap_, ptr[src + d32(from)]);
          setMask(kHigh_, static_cast<uint32_t>(span >> 16));
          vmovups(high_ | kHigh_ | T_z, ptr[src + d32(from + kZmmBytes)]);
          vpermt2ps(tap_, permuteIndex_, high_);
        }
        if (read != active) {
          setMask(kLanes_, active & ~read);
          vmovaps(tap_ | kLanes_, padVec_);
        }
        combine(tap_, t);
      }
    }
  }
  if (spec_.epilogue == StencilEpilogue::Lrn) {
    // Strides are 1: output (od, oh, ow0) reads input (od, oh, ow0).
    int64_t center =
        srcDisp + (od - zd) * planeBytes + (oh - zh) * rowBytes + 4 * ow0;
    lrnEpilogue(lanes, ptr[src + d32(center)]);
  }
  store(lanes, dst, dstDisp);
}

/// Whether output vector v has all its columns inside the row for every
/// tap, and so code that only differs from its neighbours' in addresses.
bool StencilKernel::fullVector(int64_t v) const {
  if ((v + 1) * kF32Lanes > dw_.out)
    return false;
  return dw_.interior(v * kF32Lanes) &&
         dw_.interior(v * kF32Lanes + kF32Lanes - 1);
}

/// Output row (od, oh): src + srcDisp addresses the window origin's row
/// (column 0), dst + dstDisp the output row.
void StencilKernel::row(int64_t od, int64_t oh, const Xbyak::Reg64 &src,
                        int64_t srcDisp, const Xbyak::Reg64 &dst,
                        int64_t dstDisp) {
  const int64_t vectors = (dw_.out + kF32Lanes - 1) / kF32Lanes;
  int64_t v0 = 0;
  while (v0 < vectors && !fullVector(v0))
    ++v0;
  int64_t v1 = v0;
  while (v1 < vectors && fullVector(v1))
    ++v1;
  if (v1 - v0 < 2)
    v0 = v1 = vectors; // not worth a loop: all straight-line
  auto lanesOf = [&](int64_t v) {
    return static_cast<int>(
        std::min<int64_t>(kF32Lanes, dw_.out - v * kF32Lanes));
  };
  auto straight = [&](int64_t v) {
    int64_t ow0 = v * kF32Lanes;
    outputVector(od, oh, ow0, lanesOf(v), src, srcDisp, dst,
                 dstDisp + outBytes_ * ow0);
  };
  for (int64_t v = 0; v < v0; ++v)
    straight(v);
  if (v1 > v0) {
    int64_t ow0 = v0 * kF32Lanes;
    lea(regVSrc_, ptr[src + d32(srcDisp + 4 * ow0 * dw_.s)]);
    lea(regVDst_, ptr[dst + d32(dstDisp + outBytes_ * ow0)]);
    mov(regVCount_, v1 - v0);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    // Any full vector stands for all; the displacement cancels the column
    // offset outputVector() adds.
    outputVector(od, oh, ow0, kF32Lanes, regVSrc_, -4 * ow0 * dw_.s, regVDst_,
                 0);
    add(regVSrc_, static_cast<uint32_t>(4 * kF32Lanes * dw_.s));
    add(regVDst_, static_cast<uint32_t>(outBytes_ * kF32Lanes));
    dec(regVCount_);
    jnz(loop, T_NEAR);
  }
  for (int64_t v = v1; v < vectors; ++v)
    straight(v);
}

/// The output rows of depth od: src + srcDisp addresses the window
/// origin's plane (row 0, column 0), dst + dstDisp the output plane.
void StencilKernel::rows(int64_t od, const Xbyak::Reg64 &src, int64_t srcDisp,
                         const Xbyak::Reg64 &dst, int64_t dstDisp) {
  const int64_t rowBytes = 4 * dw_.in, outRowBytes = outBytes_ * dw_.out;
  auto [h0, h1] = dh_.interiorRange();
  if (h1 - h0 < 2)
    h0 = h1 = dh_.out;
  auto straight = [&](int64_t oh) {
    row(od, oh, src, srcDisp + dh_.origin(oh) * rowBytes, dst,
        dstDisp + oh * outRowBytes);
  };
  for (int64_t oh = 0; oh < h0; ++oh)
    straight(oh);
  if (h1 > h0) {
    lea(regHSrc_, ptr[src + d32(srcDisp + dh_.origin(h0) * rowBytes)]);
    lea(regHDst_, ptr[dst + d32(dstDisp + h0 * outRowBytes)]);
    mov(regHCount_, h1 - h0);
    Xbyak::Label loop;
    L(loop);
    row(od, h0, regHSrc_, 0, regHDst_, 0);
    addImm(regHSrc_, dh_.s * rowBytes);
    addImm(regHDst_, outRowBytes);
    dec(regHCount_);
    jnz(loop, T_NEAR);
  }
  for (int64_t oh = h1; oh < dh_.out; ++oh)
    straight(oh);
}

/// One batch plane: regSrc_ addresses the input's, regDst_ the output's.
void StencilKernel::planes() {
  const int64_t planeBytes = 4 * dw_.in * dh_.in,
                outPlaneBytes = outBytes_ * dw_.out * dh_.out;
  auto [d0, d1] = dd_.interiorRange();
  if (d1 - d0 < 2)
    d0 = d1 = dd_.out;
  auto straight = [&](int64_t od) {
    rows(od, regSrc_, dd_.origin(od) * planeBytes, regDst_, od * outPlaneBytes);
  };
  for (int64_t od = 0; od < d0; ++od)
    straight(od);
  if (d1 > d0) {
    lea(regDSrc_, ptr[regSrc_ + d32(dd_.origin(d0) * planeBytes)]);
    lea(regDDst_, ptr[regDst_ + d32(d0 * outPlaneBytes)]);
    mov(regDCount_, d1 - d0);
    Xbyak::Label loop;
    L(loop);
    rows(d0, regDSrc_, 0, regDDst_, 0);
    addImm(regDSrc_, dd_.s * planeBytes);
    addImm(regDDst_, outPlaneBytes);
    dec(regDCount_);
    jnz(loop, T_NEAR);
  }
  for (int64_t od = d1; od < dd_.out; ++od)
    straight(od);
}

Status StencilKernel::generate() {
  preamble({rbx, r12, r13, r14, r15});
  const int64_t outElements = plan_.batch * dd_.out * dh_.out * dw_.out;
  if (outElements > 0) {
    // Weights in registers, in order of first use; the rest (and the tap
    // indices of the arg modes) come from the constant pool.
    std::vector<uint32_t> distinct;
    for (float w : spec_.weights)
      if (std::find(distinct.begin(), distinct.end(), floatBits(w)) ==
          distinct.end())
        distinct.push_back(floatBits(w));
    std::vector<Xbyak::Zmm> regs;
    for (int i = 8; i <= 29; ++i)
      regs.push_back(Xbyak::Zmm(i));
    preloadConstants(distinct, regs);
    loadCst(padVec_, spec_.paddingValue);
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_stencil_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_stencil_args, dst))]);
    mov(regPlanes_, plan_.batch);
    Xbyak::Label loop;
    L(loop);
    planes();
    addImm(regSrc_, 4 * dd_.in * dh_.in * dw_.in);
    addImm(regDst_, outBytes_ * dd_.out * dh_.out * dw_.out);
    dec(regPlanes_);
    jnz(loop, T_NEAR);
  }
  postamble();
  if (!indexVectors_.empty()) {
    alignCode(kZmmBytes, /*withNops=*/false);
    L(indexTable_);
    for (const IndexVector &v : indexVectors_)
      for (int32_t i : v)
        dd(static_cast<uint32_t>(i));
  }
  MLCC_CHECK(!unplanned_, spec_.name,
             ": internal error: a vector's columns span more than 32");
  MLCC_CHECK(!dispOverflow_, spec_.name,
             ": an address does not fit a 32-bit displacement");
  return Status::success();
}

} // namespace

Status stencilOutputShape(const StencilSpec &spec, std::vector<int64_t> &out) {
  Plan plan;
  MLCC_RETURN_IF_ERROR(planOf(spec, plan));
  out = plan.outShape;
  return Status::success();
}

Status lrnStencilSpec(const std::string &name,
                      const std::vector<int64_t> &shape, int64_t size,
                      float alpha, float beta, float bias, StencilSpec &spec) {
  MLCC_CHECK(shape.size() >= 2, name, ": lrn needs an input of rank >= 2");
  int64_t n = shape[0], c = shape[1], s = 1;
  for (size_t d = 2; d < shape.size(); ++d)
    s *= shape[d];
  MLCC_CHECK(n > 0 && c > 0 && s > 0, name, ": empty lrn input");
  MLCC_CHECK(size >= 1 && size <= kMaxWindowDim, name, ": lrn size ", size,
             " out of [1, ", kMaxWindowDim, "]");
  MLCC_CHECK(bias > 0.0f && alpha >= 0.0f && std::isfinite(bias) &&
                 std::isfinite(alpha) && std::isfinite(beta),
             name, ": lrn needs finite attributes, bias > 0 and alpha >= 0");
  spec = StencilSpec();
  spec.name = name;
  spec.reduction = StencilReduction::Sum;
  spec.padding = StencilPadding::Zero;
  spec.prologue = StencilPrologue::Square;
  spec.epilogue = StencilEpilogue::Lrn;
  spec.lrnBias = bias;
  spec.lrnBeta = beta;
  // The reference computes alpha / size in double.
  spec.weights.assign(static_cast<size_t>(size),
                      static_cast<float>(static_cast<double>(alpha) / size));
  const int64_t before = (size - 1) / 2;
  if (s == 1) {
    spec.shape = {n, c};
    spec.kernel = {1, size};
    spec.offsets = {0, -before};
  } else {
    spec.shape = {n, c, s};
    spec.kernel = {1, size, 1};
    spec.offsets = {0, -before, 0};
  }
  std::vector<int64_t> out;
  return stencilOutputShape(spec, out);
}

Status generateStencil(const StencilSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  Plan plan;
  MLCC_RETURN_IF_ERROR(planOf(spec, plan));
  MLCC_CHECK(spec.reduction <= StencilReduction::ArgMax &&
                 spec.padding <= StencilPadding::Mirror &&
                 spec.prologue <= StencilPrologue::Square &&
                 spec.epilogue <= StencilEpilogue::Lrn,
             spec.name, ": unknown reduction or padding");
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        StencilKernel kernel(buffer, spec, plan);
        MLCC_RETURN_IF_ERROR(kernel.generate());
        return kernel.finish(spec.name, code);
      });
}

} // namespace mlcc::avx512
