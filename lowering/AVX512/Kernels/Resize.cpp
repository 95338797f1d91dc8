//===- Resize.cpp - AVX-512 nearest, bilinear and bicubic resizes ---------===//
//
// The reference resizes H, then W, each output index reading one (nearest),
// two (linear) or four (cubic) input indices with weights that depend on
// that index only. Here those taps are computed when the kernel is
// generated, and:
//
// - each output row reads one input row (nearest, or a row of weight 1)
//   or the sum of up to four weighted ones, w0 * row[y0] + w1 * row[y1]
//   + ...;
// - a "column pass", straight-line code shared by every row (one per kind
//   of row: copy, or the sum of 1 to 4 weighted rows), makes each
//   16-column output vector: it loads the window of (combined) source
//   columns its lanes read, one to three vectors, and picks them with
//   vpermps (a window of up to 16), vpermt2ps (32) and a masked vpermps
//   (48), or gathers them, once per column tap, then multiplies by the
//   column weights (linear, cubic: a FMA per further tap) and stores. A 2x
//   nearest upsample is one vpermps with a memory operand and one store
//   per output vector; the index vectors, the same for most vectors, stay
//   in registers. The source row is never stored: a window made of two
//   rows is recomputed for each vector that reads it, cheaper than a
//   scratch row read back (through store forwarding) at other offsets.
// - an exact 2x linear upsample along W (the taps of output columns 2i
//   and 2i + 1 are those of input columns i - 1, i, i + 1, clamped, with
//   weights that repeat with period 2: half_pixel, asymmetric, ...) has a
//   column pass of its own: each 16 columns of the source row are made
//   once, their neighbours to the left and right come from the adjacent
//   vectors with valignd (or, at the row's ends, a vpermps that clamps),
//   FMAs (or adds) make the 16 even and the 16 odd outputs and two
//   vpermi2ps interleave them into 32. (Loading the neighbours instead,
//   unaligned, is slower: every such load splits a cache line.)
//
// NCHW16c input (a conv's output): an input row of 16 channels is
// transposed 16 x 16 into 16 plain rows, once, into one of the slots on
// the stack that hold the last two (cubic: four) input rows used; each channel's output
// row then goes through the column pass from the slots.
//
// Arithmetic: f32, in the reference's order (row taps, then column taps,
// first tap first; a zero weight is no tap). The reference sums in double
// and rounds once, so results agree within a few ulp of sum |w * x|.
//
// Register plan:
//   rsi  src (plane or channel block)   rdx  dst (plane or block's planes)
//   r8   unit counter   rbx  image counter (NCHW16c)   rdi channel counter
//   r11, rax, r13, r14  the input rows (NCHW16c: their channel's rows in
//   the slots)
//   r10  the output row   rcx  mask bits   r9  the slot a transpose fills
//   r12  stack scratch (NCHW16c; 64-byte aligned, rbp keeps rsp)
//   zmm0, zmm3, zmm7 the window  zmm1, zmm2 taps  zmm4 result
//   zmm5, zmm6 index vectors loaded per use  zmm8 a further row gathered
//   zmm18, zmm19 (cubic: and zmm28, zmm29) row weights
//   zmm0-zmm16 the 16 x 16 transpose
//   the most used index vectors: zmm9-zmm17, zmm20-zmm31 (NCHW16c:
//   zmm20-zmm31; cubic: less zmm28, zmm29)
//   2x pass: zmm1, zmm2 the neighbours  zmm4 the shared product
//   zmm5, zmm6 even and odd outputs  zmm4, zmm8 interleaved
//   zmm13-zmm15 the source vectors times the neighbours' weight
//   its four index vectors cached as the others
//   k1 output tail  k2 lanes with a further tap  k3 window tail (2x pass:
//   set once)
//   k4 third window vector's lanes  k5 gathers
//
//===----------------------------------------------------------------------===//

#include "Resize.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>

namespace mlcc::avx512 {

//===----------------------------------------------------------------------===//
// Taps, as compiler/Reference/Kernels/Resize.cpp computes them
//===----------------------------------------------------------------------===//

namespace {

/// The reference's sourceCoord: the input coordinate of output index x.
double sourceCoord(const ResizeCoords &c, double x, double scale, int64_t inLen,
                   int64_t outLen) {
  double resized = c.fromSizes ? static_cast<double>(outLen) : scale * inLen;
  switch (c.coord) {
  case ResizeCoord::HalfPixel:
    return (x + 0.5) / scale - 0.5;
  case ResizeCoord::PytorchHalfPixel:
    return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  case ResizeCoord::AlignCorners:
    return resized == 1 ? 0.0 : x * (inLen - 1) / (resized - 1);
  case ResizeCoord::Asymmetric:
    return x / scale;
  case ResizeCoord::TfHalfPixelForNN:
    return (x + 0.5) / scale;
  }
  return x;
}

/// The linear or cubic taps (unclamped) of a source coordinate whose floor
/// is b and fraction r, as the reference's computeTaps.
void linearOrCubicTaps(const ResizeCoords &c, int64_t b, double r,
                       int64_t inLen, ResizeTap &t) {
  int n = 2;
  if (c.mode == ResizeMode::Linear) {
    t.index[0] = b;
    t.index[1] = b + 1;
    t.weight[0] = 1 - r;
    t.weight[1] = r;
  } else {
    // Keys' cubic convolution kernel, in the reference's form.
    const double a = c.cubicA;
    auto far = [a](double d) { // 1 < d < 2
      return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    };
    auto near = [a](double d) { // d <= 1
      return ((a + 2) * d - (a + 3)) * d * d + 1;
    };
    n = 4;
    for (int k = 0; k < n; ++k)
      t.index[k] = b - 1 + k;
    t.weight[0] = far(r + 1);
    t.weight[1] = near(r);
    t.weight[2] = near(1 - r);
    t.weight[3] = far(2 - r);
  }
  if (c.excludeOutside) {
    double sum = 0;
    for (int k = 0; k < n; ++k) {
      if (t.index[k] < 0 || t.index[k] >= inLen)
        t.weight[k] = 0;
      sum += t.weight[k];
    }
    if (sum != 0)
      for (double &w : t.weight)
        w /= sum;
  }
}

} // namespace

std::vector<ResizeTap> resizeAxisTaps(const ResizeCoords &c, double scale,
                                      int64_t inLen, int64_t outLen) {
  std::vector<ResizeTap> taps(std::max<int64_t>(outLen, 0));
  for (int64_t o = 0; o < outLen; ++o) {
    ResizeTap &t = taps[o];
    double x = sourceCoord(c, static_cast<double>(o), scale, inLen, outLen);
    double base = std::floor(x), r = x - base;
    int64_t b = static_cast<int64_t>(base);
    if (c.mode == ResizeMode::Nearest) {
      bool up = false;
      if (r != 0)
        up = c.rounding == ResizeRounding::Ceil ||
             (c.rounding == ResizeRounding::PreferFloor && r > 0.5) ||
             (c.rounding == ResizeRounding::PreferCeil && r >= 0.5);
      t.index[0] = b + (up ? 1 : 0);
    } else {
      linearOrCubicTaps(c, b, r, inLen, t);
    }
    for (int64_t &i : t.index)
      i = std::min(std::max<int64_t>(i, 0), inLen - 1);
  }
  return taps;
}

bool isIdentityAxis(const std::vector<ResizeTap> &taps, int64_t inLen,
                    int64_t outLen) {
  if (inLen != outLen)
    return false;
  for (int64_t o = 0; o < outLen; ++o)
    for (int k = 0; k < kMaxResizeTaps; ++k)
      if (taps[o].weight[k] != 0 &&
          (taps[o].index[k] != o || taps[o].weight[k] != 1.0))
        return false;
  return true;
}

namespace {

/// Generated code addresses within a plane (or a block of 16 planes) with
/// 32-bit displacements.
constexpr int64_t kMaxDisp = (int64_t(1) << 31) - 1;
/// The stack scratch of the slots of 16 transposed rows (NCHW16c).
constexpr int64_t kMaxScratchBytes = int64_t(64) << 10;
/// Straight-line column passes stay a reasonable size.
constexpr int64_t kMaxOutWidth = int64_t(1) << 16;
constexpr int kBlock = 16; // channels per NCHW16c block

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// The NCHW16c slots: the input rows an output row reads, the two of
/// linear (nearest's one and the next), cubic's four.
int rowSlots(const ResizeSpec &s) {
  return s.coords.mode == ResizeMode::Cubic ? 4 : 2;
}

} // namespace

Status validateResize(const ResizeSpec &s) {
  const std::string &name = s.name;
  MLCC_CHECK(s.n >= 0 && s.c >= 0 && s.h >= 0 && s.w >= 0 && s.oh >= 0 &&
                 s.ow >= 0,
             name, ": a dim is negative");
  MLCC_CHECK((s.h > 0 || s.oh == 0) && (s.w > 0 || s.ow == 0), name,
             ": cannot resize an axis of length 0 to ", s.h ? s.ow : s.oh);
  MLCC_CHECK(s.scales[0] > 0 && s.scales[1] > 0, name,
             ": scales must be positive");
  MLCC_CHECK(s.ow <= kMaxOutWidth, name, ": output width ", s.ow,
             " is too big");
  const int64_t elem = s.blockedInput ? 4 * kBlock : 4;
  MLCC_CHECK(s.h <= kMaxDisp && s.w <= kMaxDisp / elem &&
                 s.h * s.w <= kMaxDisp / elem,
             name, ": input plane ", s.h, " x ", s.w, " is too big");
  MLCC_CHECK(s.oh <= kMaxDisp && s.oh * s.ow <= kMaxDisp / (4 * kBlock), name,
             ": output plane ", s.oh, " x ", s.ow, " is too big");
  MLCC_CHECK(!s.blockedInput || rowSlots(s) * kBlock * 4 * roundUp(s.w, 16) <=
                                     kMaxScratchBytes,
             name, ": NCHW16c input rows of ", s.w, " are too long");
  return Status::success();
}

namespace {

/// 16 lanes of 32-bit values: index vectors and weight vectors.
using Lanes = std::array<uint32_t, kF32Lanes>;

/// The taps of an output index with its nonzero weights first, in the
/// reference's order (it skips zero weights); nearest's one tap alone.
ResizeTap normalized(ResizeTap t, ResizeMode mode) {
  ResizeTap r;
  r.index[0] = t.index[0];
  if (mode == ResizeMode::Nearest)
    return r;
  r.weight[0] = 0;
  int n = 0;
  for (int k = 0; k < kMaxResizeTaps; ++k)
    if (t.weight[k] != 0) {
      r.index[n] = t.index[k];
      r.weight[n++] = t.weight[k];
    }
  return r;
}

/// The taps of a normalized ResizeTap: its first always (of weight 0 when
/// exclude_outside left it none, as a zero row).
int tapCount(const ResizeTap &t) {
  int n = 1;
  while (n < kMaxResizeTaps && t.weight[n] != 0)
    ++n;
  return n;
}

/// How one output row gets its source row: kCopyRow, the input row itself
/// (weight 1), or n = 1 to 4, w0 * row[y0] + ... + w[n-1] * row[y[n-1]].
constexpr int kCopyRow = 0;
constexpr int kRowKinds = kMaxResizeTaps + 1;

int rowKind(const ResizeTap &t) {
  int n = tapCount(t);
  return n == 1 && t.weight[0] == 1.0 ? kCopyRow : n;
}

/// One tap of the 2x column pattern: output column 2i + p reads source
/// column clamp(i + shift) with `weight`.
struct DoublingTerm {
  int shift = 0;
  double weight = 1.0;
  bool operator==(const DoublingTerm &o) const {
    return shift == o.shift && weight == o.weight;
  }
};

/// The taps of an axis that doubles its length as one pattern per output
/// parity (the reference's taps in order, zero weights dropped), or false.
bool doublingPattern(const std::vector<ResizeTap> &taps, int64_t inLen,
                     std::vector<DoublingTerm> pattern[2]) {
  if (inLen < 1 || static_cast<int64_t>(taps.size()) != 2 * inLen)
    return false;
  auto tapsOf = [&](int64_t o) {
    std::vector<std::pair<int64_t, double>> r;
    ResizeTap t = normalized(taps[o], ResizeMode::Linear);
    for (int k = 0; k < kMaxResizeTaps; ++k)
      if (t.weight[k] != 0)
        r.push_back({t.index[k], t.weight[k]});
    return r;
  };
  // The shifts from a column whose neighbours are inside the row.
  const int64_t probe = inLen >= 3 ? 1 : 0;
  for (int p = 0; p < 2; ++p) {
    for (auto [index, weight] : tapsOf(2 * probe + p))
      pattern[p].push_back({static_cast<int>(index - probe), weight});
    if (pattern[p].empty())
      return false;
    for (const DoublingTerm &t : pattern[p])
      if (t.shift < -1 || t.shift > 1)
        return false;
  }
  for (int64_t i = 0; i < inLen; ++i)
    for (int p = 0; p < 2; ++p) {
      auto got = tapsOf(2 * i + p);
      if (got.size() != pattern[p].size())
        return false;
      for (size_t k = 0; k < got.size(); ++k) {
        int64_t want =
            std::min(std::max<int64_t>(i + pattern[p][k].shift, 0), inLen - 1);
        if (got[k].first != want || got[k].second != pattern[p][k].weight)
          return false;
      }
    }
  return true;
}

/// How one output vector of the column pass reads its source row(s).
struct ColumnVector {
  /// Its lanes read 1, 2 or 3 consecutive vectors of the row from `base`
  /// (the window), or, 0, gather.
  int windows = 1;
  int64_t ox0 = 0;
  int lanes = 0;
  int64_t base = 0;
  int count = 0;                  // window elements inside the row
  int taps = 1;                     // the most taps of a lane
  int index[kMaxResizeTaps] = {};   // slots in the index table, per tap
  int weight[kMaxResizeTaps] = {};  // slots in the weight table, per tap
  uint32_t highLanes[kMaxResizeTaps] = {}; // per tap, lanes in the third
                                           // vector
  uint32_t tapLanes[kMaxResizeTaps] = {};  // per tap, the lanes with it
  bool single = false;   // the result is tap 0 (weight 1)
  bool identity = false; // tap 0 is the window itself
};

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

class ResizeKernel : public JitGenerator {
public:
  ResizeKernel(std::vector<uint8_t> &buffer, const ResizeSpec &spec)
      : JitGenerator(buffer), spec_(spec), mode_(spec.coords.mode),
        rowPitch_(roundUp(spec.w, 16)) {}

  Status generate();

private:
  const ResizeSpec &spec_;
  const ResizeMode mode_;
  const int64_t rowPitch_; // floats between scratch rows (NCHW16c)
  std::vector<ResizeTap> rows_, cols_;
  std::vector<ColumnVector> vectors_;
  // The 2x column pattern, when the columns have it (else empty).
  std::vector<DoublingTerm> doubling_[2];
  // Index slots of the 2x pass: the interleaves of the even and odd
  // outputs, the left neighbours of the first vector, the right ones of
  // the last (clamped).
  int interleaveSlots_[2] = {0, 0}, leftEdgeSlot_ = 0, rightEdgeSlot_ = 0;
  std::vector<Lanes> indexTable_, weightTable_;
  std::map<Lanes, int> indexSlots_, weightSlots_;
  std::map<int, Xbyak::Zmm> cachedIndex_; // slot -> register

  Xbyak::Label columnPass_[kRowKinds], transposeRow_, indexData_, weightData_;
  // What the column pass last put in k2, k3, k4 (-1: unknown).
  int64_t maskState_[3] = {-1, -1, -1};

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx,
                     regUnits_ = r8, regOut_ = r10, regImages_ = rbx,
                     regChannels_ = rdi, regSlot_ = r9, regScratch_ = r12;
  // The input rows of an output row, and their weights.
  const Xbyak::Reg64 regRows_[kMaxResizeTaps] = {r11, rax, r13, r14};
  const Xbyak::Zmm rowWeights_[kMaxResizeTaps] = {zmm18, zmm19, zmm28, zmm29};
  const Xbyak::Reg32 regBits_ = ecx;
  const Xbyak::Zmm windows_[3] = {zmm0, zmm3, zmm7};
  const Xbyak::Zmm tap0_ = zmm1, tap1_ = zmm2, result_ = zmm4, rowB_ = zmm8;
  const Xbyak::Opmask kOutTail_ = k1, kFurther_ = k2, kWindow_ = k3, kHigh_ = k4,
                      kGather_ = k5;

  int slotOf(std::map<Lanes, int> &slots, std::vector<Lanes> &table,
             const Lanes &v) {
    auto [it, inserted] = slots.try_emplace(v, static_cast<int>(table.size()));
    if (inserted)
      table.push_back(v);
    return it->second;
  }
  void planColumns();
  void cacheIndexVectors();
  /// k = bits, unless the column pass set it so already (state slot i).
  void setMask(const Xbyak::Opmask &k, int i, uint32_t bits) {
    if (maskState_[i] == bits)
      return;
    mov(regBits_, bits);
    kmovw(k, regBits_);
    maskState_[i] = bits;
  }
  Xbyak::Zmm indexVector(int slot, const Xbyak::Zmm &scratch);
  Xbyak::Address weightVector(int slot) {
    return ptr[rip + weightData_ + kZmmBytes * slot];
  }
  void loadWindow(int kind, const Xbyak::Zmm &dst, int64_t first, int count);
  void gather(int kind, const Xbyak::Zmm &dst, const Xbyak::Zmm &index);
  void tap(int kind, const ColumnVector &v, int k, const Xbyak::Zmm &dst);
  void emitColumnPass(int kind);
  void planDoubling();
  Xbyak::Address weightOf(double w);
  void emitDoublingPass(int kind);
  void emitTransposeRow();
  /// Loads the row weights of `t` unless rowWeights_ hold them (or, of
  /// two rows, hold them swapped: then swaps the taps of `t`).
  void loadRowWeights(ResizeTap &t, double held[kMaxResizeTaps]);
  void plainPlane();
  void blockedUnit(int64_t channels);
};

void ResizeKernel::planColumns() {
  const int64_t w = spec_.w;
  for (int64_t ox0 = 0; ox0 < spec_.ow; ox0 += kF32Lanes) {
    ColumnVector v;
    v.ox0 = ox0;
    v.lanes = static_cast<int>(std::min<int64_t>(kF32Lanes, spec_.ow - ox0));
    ResizeTap t[kF32Lanes];
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    v.single = true;
    for (int j = 0; j < v.lanes; ++j) {
      t[j] = normalized(cols_[ox0 + j], mode_);
      const int n = tapCount(t[j]);
      for (int k = 0; k < n; ++k) {
        v.tapLanes[k] |= 1u << j;
        lo = std::min(lo, t[j].index[k]);
        hi = std::max(hi, t[j].index[k]);
      }
      v.taps = std::max(v.taps, n);
      v.single &= n == 1 && t[j].weight[0] == 1.0;
    }
    // Lanes past the row's end read lane 0's taps and are not stored.
    for (int j = v.lanes; j < kF32Lanes; ++j)
      t[j] = t[0];
    const int64_t span = hi - lo + 1;
    v.windows = span <= 16 ? 1 : span <= 32 ? 2 : span <= 48 ? 3 : 0;
    if (v.windows) {
      v.base = std::min(lo, std::max<int64_t>(0, w - 16 * v.windows));
      v.count = static_cast<int>(std::min<int64_t>(16 * v.windows, w - v.base));
    }
    v.identity = v.windows == 1;
    for (int k = 0; k < v.taps; ++k) {
      Lanes index, weight;
      for (int j = 0; j < kF32Lanes; ++j) {
        bool used = k == 0 || (v.tapLanes[k] >> j & 1);
        int64_t i = (used ? t[j].index[k] : t[j].index[0]) - v.base;
        index[j] = static_cast<uint32_t>(i);
        weight[j] = floatBits(
            used && j < v.lanes ? static_cast<float>(t[j].weight[k]) : 0.0f);
        if (v.windows == 3 && i >= 32)
          v.highLanes[k] |= 1u << j;
        if (k == 0 && j < v.lanes)
          v.identity &= i == j;
      }
      v.index[k] = slotOf(indexSlots_, indexTable_, index);
      v.weight[k] = slotOf(weightSlots_, weightTable_, weight);
    }
    vectors_.push_back(v);
  }
}

/// The most used index vectors go to registers the rest of the kernel
/// leaves alone, loaded once.
void ResizeKernel::cacheIndexVectors() {
  std::vector<int> regs;
  if (!spec_.blockedInput)
    for (int r = 9; r <= 17; ++r)
      regs.push_back(r);
  for (int r = 20; r <= 31; ++r)
    if (mode_ != ResizeMode::Cubic ||
        (r != rowWeights_[2].getIdx() && r != rowWeights_[3].getIdx()))
      regs.push_back(r);
  std::map<int, int> uses;
  if (!doubling_[0].empty())
    for (int slot : {interleaveSlots_[0], interleaveSlots_[1], leftEdgeSlot_,
                     rightEdgeSlot_})
      ++uses[slot];
  for (const ColumnVector &v : vectors_) {
    if (!v.identity)
      ++uses[v.index[0]];
    for (int k = 1; k < v.taps; ++k)
      ++uses[v.index[k]];
  }
  std::vector<std::pair<int, int>> byUse; // (-uses, slot)
  for (auto [slot, n] : uses)
    byUse.push_back({-n, slot});
  std::sort(byUse.begin(), byUse.end());
  for (size_t i = 0; i < byUse.size() && i < regs.size(); ++i) {
    Xbyak::Zmm reg(regs[i]);
    vmovups(reg, ptr[rip + indexData_ + kZmmBytes * byUse[i].second]);
    cachedIndex_.emplace(byUse[i].second, reg);
  }
}

Xbyak::Zmm ResizeKernel::indexVector(int slot, const Xbyak::Zmm &scratch) {
  if (auto it = cachedIndex_.find(slot); it != cachedIndex_.end())
    return it->second;
  vmovups(scratch, ptr[rip + indexData_ + kZmmBytes * slot]);
  return scratch;
}

/// dst = the source row's `count` (<= 16) elements from `first`, zeros
/// after them: the input row at regRows_[0] (kind kCopyRow), or the sum
/// of the `kind` rows at regRows_ times rowWeights_. Never reads past the
/// row.
void ResizeKernel::loadWindow(int kind, const Xbyak::Zmm &dst, int64_t first,
                              int count) {
  const int d = static_cast<int>(4 * first);
  const bool full = count >= kF32Lanes;
  if (!full)
    setMask(kWindow_, 1, (1u << count) - 1);
  if (kind == kCopyRow) {
    if (full)
      vmovups(dst, ptr[regRows_[0] + d]);
    else
      vmovups(dst | kWindow_ | T_z, ptr[regRows_[0] + d]);
    return;
  }
  // A masked memory operand never faults on the lanes it leaves alone.
  if (full)
    vmulps(dst, rowWeights_[0], ptr[regRows_[0] + d]);
  else
    vmulps(dst | kWindow_ | T_z, rowWeights_[0], ptr[regRows_[0] + d]);
  for (int k = 1; k < kind; ++k) {
    if (full)
      vfmadd231ps(dst, rowWeights_[k], ptr[regRows_[k] + d]);
    else
      vfmadd231ps(dst | kWindow_, rowWeights_[k], ptr[regRows_[k] + d]);
  }
}

/// dst = the source row's elements at `index` (as loadWindow combines
/// the input rows).
void ResizeKernel::gather(int kind, const Xbyak::Zmm &dst,
                          const Xbyak::Zmm &index) {
  // The gather clears its mask as it goes.
  kxnorw(kGather_, kGather_, kGather_);
  vgatherdps(dst | kGather_, ptr[regRows_[0] + index * 4]);
  if (kind == kCopyRow)
    return;
  vmulps(dst, dst, rowWeights_[0]);
  for (int k = 1; k < kind; ++k) {
    kxnorw(kGather_, kGather_, kGather_);
    vgatherdps(rowB_ | kGather_, ptr[regRows_[k] + index * 4]);
    vfmadd231ps(dst, rowWeights_[k], rowB_);
  }
}

/// dst = the source elements of tap k, lane by lane, from the window.
void ResizeKernel::tap(int kind, const ColumnVector &v, int k,
                       const Xbyak::Zmm &dst) {
  Xbyak::Zmm index = indexVector(v.index[k], k ? zmm6 : zmm5);
  if (v.windows == 0) {
    gather(kind, dst, index);
    return;
  }
  if (v.windows == 1) {
    vpermps(dst, index, windows_[0]);
    return;
  }
  vmovaps(dst, windows_[0]);
  vpermt2ps(dst, index, windows_[1]);
  if (v.highLanes[k]) {
    // vpermps reads the index's low 4 bits: 32 + i is element i.
    setMask(kHigh_, 2, v.highLanes[k]);
    vpermps(dst | kHigh_, index, windows_[2]);
  }
}

/// One output row, [regOut_], from the source row that `kind` makes of
/// the input rows at regRows_.
void ResizeKernel::emitColumnPass(int kind) {
  L(columnPass_[kind]);
  std::fill(std::begin(maskState_), std::end(maskState_), -1);
  for (const ColumnVector &v : vectors_) {
    Xbyak::Zmm result = tap0_;
    if (kind == kCopyRow && v.windows == 1 && v.single && !v.identity &&
        v.count >= kF32Lanes) {
      // Nearest's common case: the window straight from memory.
      vpermps(tap0_, indexVector(v.index[0], zmm5),
              ptr[regRows_[0] + static_cast<int>(4 * v.base)]);
    } else {
      for (int r = 0; r < v.windows; ++r)
        loadWindow(kind, windows_[r], v.base + 16 * r,
                   std::min(16, v.count - 16 * r));
      if (v.identity)
        result = windows_[0];
      else
        tap(kind, v, 0, tap0_);
    }
    if (!v.single) {
      vmulps(result_, result, weightVector(v.weight[0]));
      for (int k = 1; k < v.taps; ++k) {
        tap(kind, v, k, tap1_);
        // A lane without tap k must not add 0 * x (x may be inf); lanes
        // past the row's end are not stored.
        uint32_t stored = (1u << v.lanes) - 1;
        if ((v.tapLanes[k] & stored) == stored) {
          vfmadd231ps(result_, tap1_, weightVector(v.weight[k]));
        } else {
          setMask(kFurther_, 0, v.tapLanes[k]);
          vfmadd231ps(result_ | kFurther_, tap1_, weightVector(v.weight[k]));
        }
      }
      result = result_;
    }
    Xbyak::Address out = ptr[regOut_ + static_cast<int>(4 * v.ox0)];
    if (v.lanes == kF32Lanes)
      vmovups(out, result);
    else
      vmovups(out | kOutTail_, result);
  }
  ret();
}

/// The index vectors of the 2x pass (doubling_ holds its pattern).
void ResizeKernel::planDoubling() {
  Lanes lo, hi, left, right;
  const int last = static_cast<int>((spec_.w - 1) % kF32Lanes);
  for (int j = 0; j < kF32Lanes; ++j) {
    // Output lane j of a pair of vectors is even (odd) output j / 2.
    lo[j] = static_cast<uint32_t>(j / 2 + (j % 2) * kF32Lanes);
    hi[j] = lo[j] + kF32Lanes / 2;
    left[j] = static_cast<uint32_t>(std::max(j - 1, 0));
    right[j] = static_cast<uint32_t>(std::min(j + 1, last));
  }
  interleaveSlots_[0] = slotOf(indexSlots_, indexTable_, lo);
  interleaveSlots_[1] = slotOf(indexSlots_, indexTable_, hi);
  leftEdgeSlot_ = slotOf(indexSlots_, indexTable_, left);
  rightEdgeSlot_ = slotOf(indexSlots_, indexTable_, right);
}

Xbyak::Address ResizeKernel::weightOf(double w) {
  Lanes v;
  v.fill(floatBits(static_cast<float>(w)));
  return weightVector(slotOf(weightSlots_, weightTable_, v));
}

/// The 2x column pass: one output row, [regOut_], from the source row
/// that `kind` makes of the input rows at regRows_, 16 source columns (32
/// outputs) at a time.
void ResizeKernel::emitDoublingPass(int kind) {
  using Xbyak::Zmm;
  L(columnPass_[kind]);
  std::fill(std::begin(maskState_), std::end(maskState_), -1);
  const int64_t w = spec_.w;
  // The row's tail, its one partial window, is in kWindow_ (generate()).
  if (w % kF32Lanes)
    maskState_[1] = (1u << (w % kF32Lanes)) - 1;
  // The source vectors before, at and after the current one rotate
  // through windows_; its neighbours are zmm1 (left) and zmm2 (right).
  int prev = 0, cur = 1, next = 2;
  const Zmm shifted[3] = {zmm1, Zmm(), zmm2}; // by shift + 1
  bool uses[3] = {false, false, false};
  for (const auto &terms : doubling_)
    for (const DoublingTerm &t : terms)
      uses[t.shift + 1] = true;
  // A product both parities add to (half_pixel's 0.75 * x[i]).
  std::optional<DoublingTerm> shared;
  for (const DoublingTerm &t : doubling_[0])
    if (doubling_[0].size() == 2 && doubling_[1].size() == 2 &&
        std::find(doubling_[1].begin(), doubling_[1].end(), t) !=
            doubling_[1].end())
      shared = t;
  // When the parities' other taps are neighbours with one weight (again
  // half_pixel's: 0.25), the neighbours are taken of the source vectors
  // times that weight (zmm13-zmm15, made once each) and each parity is one
  // add, off the FMA pipes (the same result as a FMA where that product
  // is exact, as for a power of two).
  const Zmm scaled[3] = {zmm13, zmm14, zmm15};
  std::optional<double> neighbourWeight;
  if (shared && shared->shift == 0) {
    const DoublingTerm &even = doubling_[0][doubling_[0][0] == *shared],
                       &odd = doubling_[1][doubling_[1][0] == *shared];
    if (even.shift != 0 && odd.shift != 0 && even.weight == odd.weight)
      neighbourWeight = even.weight;
  }
  const Zmm *neighbours = neighbourWeight ? scaled : windows_;
  auto makeSource = [&](int r, int64_t first) {
    loadWindow(kind, windows_[r], first,
               static_cast<int>(std::min<int64_t>(kF32Lanes, w - first)));
    if (neighbourWeight)
      vmulps(scaled[r], windows_[r], weightOf(*neighbourWeight));
  };
  makeSource(cur, 0);
  for (int64_t c0 = 0; c0 < w; c0 += kF32Lanes) {
    const int count = static_cast<int>(std::min<int64_t>(kF32Lanes, w - c0));
    const bool last = c0 + kF32Lanes >= w;
    if (!last)
      makeSource(next, c0 + kF32Lanes);
    if (uses[0]) {
      if (c0 == 0)
        vpermps(zmm1, indexVector(leftEdgeSlot_, zmm5), neighbours[cur]);
      else
        valignd(zmm1, neighbours[cur], neighbours[prev], kF32Lanes - 1);
    }
    if (uses[2]) {
      if (last)
        vpermps(zmm2, indexVector(rightEdgeSlot_, zmm6), neighbours[cur]);
      else
        valignd(zmm2, neighbours[next], neighbours[cur], 1);
    }
    auto source = [&](int shift) {
      return shift == 0 ? windows_[cur] : shifted[shift + 1];
    };
    // The even and odd outputs, each in the reference's order (or the
    // shared product first).
    Zmm parity[2];
    if (shared)
      vmulps(zmm4, source(shared->shift), weightOf(shared->weight));
    for (int p = 0; p < 2; ++p) {
      const std::vector<DoublingTerm> &terms = doubling_[p];
      const Zmm dst = p ? zmm6 : zmm5;
      if (shared) {
        const DoublingTerm &other = terms[0] == *shared ? terms[1] : terms[0];
        if (neighbourWeight) {
          vaddps(dst, zmm4, shifted[other.shift + 1]);
          parity[p] = dst;
          continue;
        }
        vmovaps(dst, zmm4);
        vfmadd231ps(dst, source(other.shift), weightOf(other.weight));
      } else if (terms.size() == 1 && terms[0].weight == 1.0) {
        parity[p] = source(terms[0].shift);
        continue;
      } else {
        vmulps(dst, source(terms[0].shift), weightOf(terms[0].weight));
        if (terms.size() == 2)
          vfmadd231ps(dst, source(terms[1].shift), weightOf(terms[1].weight));
      }
      parity[p] = dst;
    }
    // Interleaved: the high half (if stored) first, into zmm8, then the
    // low half, into the even outputs when they are a temporary.
    const int lanes = 2 * count;
    Zmm out[2] = {zmm4, zmm8};
    for (int h = lanes > kF32Lanes ? 1 : 0; h >= 0; --h) {
      Zmm index = indexVector(interleaveSlots_[h], out[h]);
      if (h == 0 && parity[0].getIdx() != windows_[cur].getIdx()) {
        vpermt2ps(parity[0], index, parity[1]);
        out[0] = parity[0];
        continue;
      }
      if (index.getIdx() != out[h].getIdx())
        vmovaps(out[h], index);
      vpermi2ps(out[h], parity[0], parity[1]);
    }
    for (int h = 0; h < 2 && kF32Lanes * h < lanes; ++h) {
      Xbyak::Address a =
          ptr[regOut_ + static_cast<int>(4 * (2 * c0 + kF32Lanes * h))];
      if (lanes - kF32Lanes * h >= kF32Lanes)
        vmovups(a, out[h]);
      else
        vmovups(a | kOutTail_, out[h]);
    }
    std::swap(prev, cur); // cur, next, prev <- next, prev, cur
    std::swap(cur, next);
  }
  ret();
}

/// NCHW16c: the input row at regRows_[0] as 16 channel rows (pitch
/// rowPitch_) at regSlot_, 16 pixels transposed at a time.
void ResizeKernel::emitTransposeRow() {
  L(transposeRow_);
  for (int64_t x0 = 0; x0 < spec_.w; x0 += kF32Lanes) {
    std::array<int, 16> regs;
    for (int p = 0; p < 16; ++p)
      regs[p] = p;
    int spare = 16;
    int pixels = static_cast<int>(std::min<int64_t>(kF32Lanes, spec_.w - x0));
    for (int p = 0; p < pixels; ++p)
      vmovups(Xbyak::Zmm(regs[p]),
              ptr[regRows_[0] + static_cast<int>(kZmmBytes * (x0 + p))]);
    // Lanes of pixels past the row's end are never read.
    transpose16x16(regs, spare);
    for (int c = 0; c < kBlock; ++c)
      vmovups(ptr[regSlot_ + static_cast<int>(4 * (c * rowPitch_ + x0))],
              Xbyak::Zmm(regs[c]));
  }
  ret();
}

void ResizeKernel::loadRowWeights(ResizeTap &t, double held[kMaxResizeTaps]) {
  const int kind = rowKind(t);
  // Weights held the other way round serve as well with the rows swapped
  // (the reference sums in double: the order is within its tolerance).
  if (kind == 2 && t.weight[0] == held[1] && t.weight[1] == held[0]) {
    std::swap(t.index[0], t.index[1]);
    std::swap(t.weight[0], t.weight[1]);
    return;
  }
  for (int k = 0; k < kind; ++k) {
    if (t.weight[k] == held[k])
      continue;
    loadCst(rowWeights_[k], static_cast<float>(t.weight[k]));
    held[k] = t.weight[k];
  }
}

/// One NCHW plane: each output row from its input rows.
void ResizeKernel::plainPlane() {
  const int64_t rowBytes = 4 * spec_.w, outRowBytes = 4 * spec_.ow;
  // The row weights in rowWeights_ (none at the plane's start).
  double held[kMaxResizeTaps] = {NAN, NAN, NAN, NAN};
  for (int64_t oy = 0; oy < spec_.oh; ++oy) {
    ResizeTap t = normalized(rows_[oy], mode_);
    const int kind = rowKind(t);
    loadRowWeights(t, held);
    for (int k = 0; k < std::max(kind, 1); ++k)
      lea(regRows_[k], ptr[regSrc_ + static_cast<int>(t.index[k] * rowBytes)]);
    lea(regOut_, ptr[regDst_ + static_cast<int>(oy * outRowBytes)]);
    call(columnPass_[kind]);
  }
}

/// One NCHW16c channel block (of `channels` real channels): the input
/// rows an output row reads are transposed into the slots (unless they
/// are there already), then each channel's output row is made from them.
void ResizeKernel::blockedUnit(int64_t channels) {
  const int64_t rowBytes = kZmmBytes * spec_.w, outRowBytes = 4 * spec_.ow,
                planeBytes = 4 * spec_.oh * spec_.ow,
                slotBytes = 4 * kBlock * rowPitch_;
  const int slotCount = rowSlots(spec_);
  // The input row in each slot (-1: none).
  std::array<int64_t, kMaxResizeTaps> slots;
  slots.fill(-1);
  double held[kMaxResizeTaps] = {NAN, NAN, NAN, NAN};
  auto slotOf = [&](int64_t y) {
    return static_cast<int>(std::find(slots.begin(), slots.end(), y) -
                            slots.begin());
  };
  for (int64_t oy = 0; oy < spec_.oh; ++oy) {
    ResizeTap t = normalized(rows_[oy], mode_);
    const int kind = rowKind(t), taps = std::max(kind, 1);
    auto needed = [&](int64_t y) {
      return std::find(t.index, t.index + taps, y) != t.index + taps;
    };
    for (int k = 0; k < taps; ++k) {
      int64_t y = t.index[k];
      if (slotOf(y) < slotCount)
        continue;
      // Into the slot of the lowest (earliest; an empty slot first) row
      // this output row does not read: rows are read in increasing order.
      int s = -1;
      for (int i = 0; i < slotCount; ++i)
        if (!needed(slots[i]) && (s < 0 || slots[i] < slots[s]))
          s = i;
      lea(regRows_[0], ptr[regSrc_ + static_cast<int>(y * rowBytes)]);
      lea(regSlot_, ptr[regScratch_ + static_cast<int>(s * slotBytes)]);
      call(transposeRow_);
      slots[s] = y;
    }
    loadRowWeights(t, held);
    for (int k = 0; k < taps; ++k)
      lea(regRows_[k], ptr[regScratch_ +
                           static_cast<int>(slotOf(t.index[k]) * slotBytes)]);
    lea(regOut_, ptr[regDst_ + static_cast<int>(oy * outRowBytes)]);
    Xbyak::Label loop;
    if (channels > 1) {
      mov(regChannels_, channels);
      L(loop);
    }
    call(columnPass_[kind]);
    if (channels > 1) {
      for (int k = 0; k < taps; ++k)
        add(regRows_[k], static_cast<int>(4 * rowPitch_));
      addImm(regOut_, planeBytes, rcx);
      dec(regChannels_);
      jnz(loop, T_NEAR);
    }
  }
}

Status ResizeKernel::generate() {
  rows_ = resizeAxisTaps(spec_.coords, spec_.scales[0], spec_.h, spec_.oh);
  cols_ = resizeAxisTaps(spec_.coords, spec_.scales[1], spec_.w, spec_.ow);
  if (mode_ == ResizeMode::Linear &&
      doublingPattern(cols_, spec_.w, doubling_)) {
    planDoubling();
  } else {
    doubling_[0].clear();
    doubling_[1].clear();
    planColumns();
  }
  const bool blocked = spec_.blockedInput;
  const int64_t units = blocked ? spec_.n : spec_.n * spec_.c;
  bool rowKinds[kRowKinds] = {};
  for (const ResizeTap &t : rows_)
    rowKinds[rowKind(normalized(t, mode_))] = true;

  preamble({rbx, rbp, r12, r13, r14});
  if (units > 0 && spec_.c > 0 && spec_.oh > 0 && spec_.ow > 0) {
    if (blocked) {
      mov(rbp, rsp);
      sub(rsp, static_cast<int>(rowSlots(spec_) * kBlock * 4 * rowPitch_));
      and_(rsp, -kZmmBytes);
      mov(regScratch_, rsp);
    }
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_resize_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_resize_args, dst))]);
    if (spec_.ow % kF32Lanes) {
      mov(regBits_, (1u << (spec_.ow % kF32Lanes)) - 1);
      kmovw(kOutTail_, regBits_);
    }
    if (!doubling_[0].empty() && spec_.w % kF32Lanes) {
      mov(regBits_, (1u << (spec_.w % kF32Lanes)) - 1);
      kmovw(kWindow_, regBits_);
    }
    cacheIndexVectors();
    const int64_t planeBytes = 4 * spec_.oh * spec_.ow;
    Xbyak::Label loop;
    if (!blocked) {
      mov(regUnits_, units);
      L(loop);
      plainPlane();
      addImm(regSrc_, 4 * spec_.h * spec_.w, rcx);
      addImm(regDst_, planeBytes, rcx);
      dec(regUnits_);
      jnz(loop, T_NEAR);
    } else {
      const int64_t full = spec_.c / kBlock, rest = spec_.c % kBlock;
      const int64_t blockBytes = kZmmBytes * spec_.h * spec_.w;
      mov(regImages_, units);
      L(loop);
      Xbyak::Label blocks;
      if (full > 0) {
        mov(regUnits_, full);
        L(blocks);
        blockedUnit(kBlock);
        addImm(regSrc_, blockBytes, rcx);
        addImm(regDst_, kBlock * planeBytes, rcx);
        dec(regUnits_);
        jnz(blocks, T_NEAR);
      }
      if (rest > 0) {
        blockedUnit(rest);
        addImm(regSrc_, blockBytes, rcx);
        addImm(regDst_, rest * planeBytes, rcx);
      }
      dec(regImages_);
      jnz(loop, T_NEAR);
      mov(rsp, rbp);
    }
  }
  postamble();
  // Subroutines after the constant pool: they use none of it.
  for (int kind = 0; kind < kRowKinds; ++kind)
    if (rowKinds[kind]) {
      if (doubling_[0].empty())
        emitColumnPass(kind);
      else
        emitDoublingPass(kind);
    }
  if (blocked)
    emitTransposeRow();
  alignCode(kZmmBytes, /*withNops=*/false);
  L(indexData_);
  for (const Lanes &v : indexTable_)
    for (uint32_t x : v)
      dd(x);
  L(weightData_);
  for (const Lanes &v : weightTable_)
    for (uint32_t x : v)
      dd(x);
  return Status::success();
}

} // namespace

Status generateResize(const ResizeSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validateResize(spec));
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    ResizeKernel kernel(buffer, spec);
    MLCC_RETURN_IF_ERROR(kernel.generate());
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
