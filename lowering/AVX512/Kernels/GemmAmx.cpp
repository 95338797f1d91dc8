//===- GemmAmx.cpp - AMX int8 and bf16 GEMM kernels -----------------------===//
//
// Int8GemmSpec::amx: the products of GemmInt8.h on AMX tiles. C is cut into
// blocks of 32 rows x 32 columns, four int32 (f32) tiles of 16 x 16; each
// 64-byte step of k loads two A tiles (16 rows of A each, lda apart) and two
// B tiles (the packed panels as they are: 16 groups of k, 64 bytes a row)
// and issues four tile products. The block then goes through a 4 KiB stack
// scratch into zmm registers, 8 rows at a time, where the VNNI kernel's
// code adds the K tail (what is left past the last whole step: vpdpbusd or
// vdpbf16ps, reading A's last bytes through a GPR), then its epilogue and
// stores. Tail rows (M not a multiple of 32) run under a second tile
// configuration whose tiles have fewer rows, so no tile load reads past
// A's last row; ldtilecfg zeroes every tile, so it is loaded only between
// blocks.
//
// Tiles: C(r, p) = tmm(2r + p), A(r) = tmm(4 + r), B(p) = tmm(6 + p), for
// row tile r and column panel p of the block.
//
// Registers: those of GemmInt8.cpp, and rbp = bytes between rows of A,
// r13 = 64 (the stride of B tiles and of the scratch) while tiles are
// loaded and stored (r13 is then free for the K tail's bytes).
//
//===----------------------------------------------------------------------===//

#include "GemmInt8Kernel.h"

#include "KernelABI.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

namespace mlcc::avx512 {

namespace int8gemm {

namespace {

constexpr int kTileRows = 16;
constexpr int kTileBytes = 64;    // of a tile row
constexpr int kBlockRowTiles = 2; // of A and C in a block
constexpr int kBlockPanels = 2;   // of B and C in a block
constexpr int kEpilogueRows = 8;  // rows of C in zmm at a time
constexpr int kScratchTileBytes = kTileRows * kTileBytes;
constexpr int kScratchBytes = kBlockRowTiles * kBlockPanels * kScratchTileBytes;

/// Elements of k per 64-byte tile step.
int64_t stepK(bool bf16) { return kTileBytes / aElementBytes(bf16); }

/// ldtilecfg's 64 bytes (palette 1) for a block of `rows[0]` and `rows[1]`
/// rows in its two row tiles (0: that tile is unused).
std::array<uint8_t, 64> tileConfig(const int rows[kBlockRowTiles]) {
  std::array<uint8_t, 64> cfg{};
  cfg[0] = 1;
  auto set = [&](int tile, int tileRows) {
    if (tileRows == 0)
      return;
    cfg[16 + 2 * tile] = kTileBytes; // colsb, little-endian 16 bits
    cfg[48 + tile] = static_cast<uint8_t>(tileRows);
  };
  for (int r = 0; r < kBlockRowTiles; ++r) {
    for (int p = 0; p < kBlockPanels; ++p)
      set(2 * r + p, rows[r]);
    set(4 + r, rows[r]);
  }
  for (int p = 0; p < kBlockPanels; ++p)
    set(6 + p, kTileRows);
  return cfg;
}

class AmxGemmKernel : public Int8GemmKernel {
public:
  AmxGemmKernel(std::vector<uint8_t> &buffer, const Int8GemmSpec &spec,
                int64_t lda, int64_t ldc)
      : Int8GemmKernel(buffer, spec, lda, ldc, kEpilogueRows, kBlockPanels),
        steps_(spec.k / stepK(spec.bf16)), tailK_(spec.k % stepK(spec.bf16)) {}

  void generate();

private:
  const int64_t steps_, tailK_;
  const Xbyak::Reg64 regAStride_ = rbp;
  const Xbyak::Reg64 regTileStride_ = r13;
  Xbyak::Label fullConfig_, tailConfig_;

  static Xbyak::Tmm cTile(int r, int p) { return Xbyak::Tmm(2 * r + p); }
  static Xbyak::Tmm aTile(int r) { return Xbyak::Tmm(4 + r); }
  static Xbyak::Tmm bTile(int p) { return Xbyak::Tmm(6 + p); }
  static int scratchOffset(int row, int panel) {
    return ((row / kTileRows) * kBlockPanels + panel) * kScratchTileBytes +
           (row % kTileRows) * kTileBytes;
  }

  void product(const Xbyak::Tmm &c, const Xbyak::Tmm &a, const Xbyak::Tmm &b);
  void columnBlocks(int64_t count, int panels, bool masked, int fullRows,
                    int tailRows);
  void block(int rows, int panels, bool masked);
  void tileSteps(int rowTiles, int panels);
  void finishRows(int rows, int panels, bool masked);
};

void AmxGemmKernel::product(const Xbyak::Tmm &c, const Xbyak::Tmm &a,
                            const Xbyak::Tmm &b) {
  if (spec_.bf16)
    tdpbf16ps(c, a, b);
  else if (spec_.signedA)
    tdpbssd(c, a, b);
  else
    tdpbusd(c, a, b);
}

void AmxGemmKernel::tileSteps(int rowTiles, int panels) {
  for (int r = 0; r < rowTiles; ++r)
    for (int p = 0; p < panels; ++p)
      tilezero(cTile(r, p));
  mov(regTileStride_, kTileBytes);
  if (steps_ > 0) {
    mov(regAK_, regARow_);
    mov(regBK_, regBCol_);
    Xbyak::Label loop;
    if (steps_ > 1) {
      mov(regKIter_, steps_);
      alignCode(32, /*withNops=*/true);
      L(loop);
    }
    for (int p = 0; p < panels; ++p)
      tileloadd(bTile(p),
                ptr[regBK_ + regTileStride_ +
                    static_cast<int>(p * groups_ * kPanelGroupBytes)]);
    for (int r = 0; r < rowTiles; ++r) {
      tileloadd(aTile(r),
                ptr[regAK_ + regAStride_ +
                    static_cast<int>(r * kTileRows * lda_ * aBytes_)]);
      for (int p = 0; p < panels; ++p)
        product(cTile(r, p), aTile(r), bTile(p));
    }
    if (steps_ > 1) {
      add(regAK_, kTileBytes);
      add(regBK_, kTileRows * kPanelGroupBytes);
      dec(regKIter_);
      jnz(loop, T_NEAR);
    }
  }
  for (int r = 0; r < rowTiles; ++r)
    for (int p = 0; p < panels; ++p)
      tilestored(ptr[rsp + regTileStride_ + scratchOffset(r * kTileRows, p)],
                 cTile(r, p));
}

void AmxGemmKernel::finishRows(int rows, int panels, bool masked) {
  const int cBytes = outputBytes(spec_.output);
  const int64_t tailGroups = tailK_ / perGroup_;
  const int tailBytes = static_cast<int>(tailK_ % perGroup_) * aBytes_;
  for (int first = 0; first < rows; first += kEpilogueRows) {
    const int count = std::min(kEpilogueRows, rows - first);
    for (int i = 0; i < count; ++i)
      for (int p = 0; p < panels; ++p)
        vmovdqa32(acc(i, p, panels), ptr[rsp + scratchOffset(first + i, p)]);
    if (tailK_ > 0) {
      lea(regAK_, ptr[regARow_ + static_cast<int>(first * lda_ * aBytes_ +
                                                  steps_ * kTileBytes)]);
      lea(regBK_, ptr[regBCol_ +
                      static_cast<int>(steps_ * kTileRows * kPanelGroupBytes)]);
      for (int64_t g = 0; g < tailGroups; ++g)
        groupStep(count, panels, g, 0);
      if (tailBytes)
        groupStep(count, panels, tailGroups, tailBytes);
    }
    const int cOffset = static_cast<int>(first * ldc_ * cBytes);
    if (cOffset)
      add(regCRow_, cOffset);
    epilogue(count, panels, masked);
    store(count, panels, masked);
    if (cOffset)
      sub(regCRow_, cOffset);
  }
}

void AmxGemmKernel::block(int rows, int panels, bool masked) {
  const int rowTiles = rows > kTileRows ? 2 : 1;
  tileSteps(rowTiles, panels);
  finishRows(rows, panels, masked);
}

void AmxGemmKernel::columnBlocks(int64_t count, int panels, bool masked,
                                 int fullRows, int tailRows) {
  if (count == 0)
    return;
  const int blockRows = kBlockRowTiles * kTileRows;
  const int cBytes = outputBytes(spec_.output);
  const int64_t fullBlocks = spec_.m / blockRows;
  Xbyak::Label columns, rowLoop;
  if (count > 1) {
    mov(regColIter_, count);
    L(columns);
  }
  mov(regARow_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_int8_gemm_args, a))]);
  mov(regCRow_, regCCol_);
  if (fullBlocks > 0) {
    if (fullRows && tailRows)
      ldtilecfg(ptr[rip + fullConfig_]);
    if (fullBlocks > 1) {
      mov(regRowIter_, fullBlocks);
      L(rowLoop);
    }
    block(blockRows, panels, masked);
    if (fullBlocks > 1 || tailRows) {
      add(regARow_, static_cast<int>(blockRows * lda_ * aBytes_));
      add(regCRow_, static_cast<int>(blockRows * ldc_ * cBytes));
    }
    if (fullBlocks > 1) {
      dec(regRowIter_);
      jnz(rowLoop, T_NEAR);
    }
  }
  if (tailRows) {
    if (fullRows)
      ldtilecfg(ptr[rip + tailConfig_]);
    block(tailRows, panels, masked);
  }
  add(regBCol_, static_cast<int>(panels * groups_ * kPanelGroupBytes));
  add(regCCol_, static_cast<int>(panels * columnBlockBytes(cBytes)));
  add(regColData_, static_cast<int>(panels * kInt8ColumnDataBytes));
  if (count > 1) {
    dec(regColIter_);
    jnz(columns, T_NEAR);
  }
}

void AmxGemmKernel::generate() {
  preamble({rbx, rbp, r12, r13, r14, r15});
  if (spec_.m == 0 || spec_.n == 0) {
    postamble();
    return;
  }
  // A 64-byte aligned scratch below the saved registers; the old rsp is
  // kept just past it.
  mov(rax, rsp);
  sub(rsp, kScratchBytes + 64);
  and_(rsp, -64);
  mov(ptr[rsp + kScratchBytes], rax);
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
  mov(regAStride_, lda_ * aBytes_);
  const int64_t panelsN = (spec_.n + kInt8Panel - 1) / kInt8Panel;
  const int rem = static_cast<int>(spec_.n % kInt8Panel);
  if (rem) {
    mov(eax, (1u << rem) - 1);
    kmovw(kTail_, eax);
  }
  // The two tile configurations: whole blocks and the last rows. With only
  // one of them, it is loaded once here.
  const int blockRows = kBlockRowTiles * kTileRows;
  const int fullRows = spec_.m >= blockRows ? blockRows : 0;
  const int tailRows = static_cast<int>(spec_.m % blockRows);
  if (!(fullRows && tailRows))
    ldtilecfg(ptr[rip + (fullRows ? fullConfig_ : tailConfig_)]);
  int64_t fullBlocks = panelsN / kBlockPanels;
  int tailPanels = static_cast<int>(panelsN % kBlockPanels);
  if (rem && tailPanels == 0) {
    --fullBlocks;
    tailPanels = kBlockPanels;
  }
  columnBlocks(fullBlocks, kBlockPanels, /*masked=*/false, fullRows, tailRows);
  if (tailPanels)
    columnBlocks(1, tailPanels, /*masked=*/rem != 0, fullRows, tailRows);
  tilerelease();
  mov(rsp, ptr[rsp + kScratchBytes]);
  postamble();
  // The configurations, after the code and its constants.
  auto emitConfig = [&](Xbyak::Label &label, int rows) {
    int tileRows[kBlockRowTiles] = {std::min(rows, kTileRows),
                                    std::max(rows - kTileRows, 0)};
    alignCode(64, /*withNops=*/false);
    L(label);
    for (uint8_t byte : tileConfig(tileRows))
      db(byte);
  };
  if (fullRows)
    emitConfig(fullConfig_, fullRows);
  if (tailRows)
    emitConfig(tailConfig_, tailRows);
}

} // namespace

Status generateAmxGemm(const Int8GemmSpec &spec, int64_t lda, int64_t ldc,
                       std::vector<uint8_t> &code) {
  MLCC_CHECK(!spec.rowSums && !spec.aBlockStride, spec.name,
             ": an AMX gemm reads dense rows of A and has no row sums");
  int temps = 1;
  for (const EltwiseOp &op : spec.epilogue)
    temps = std::max(temps, EltwiseInjector::tempsNeeded(op));
  MLCC_CHECK(kEpilogueRows * kBlockPanels + temps <= kNumZmm, spec.name,
             ": the epilogue needs more than ", kNumZmm, " zmm registers");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    AmxGemmKernel kernel(buffer, spec, lda, ldc);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace int8gemm

void amxCompensation(PackedInt8B &packed, int64_t k, int64_t n) {
  // The tiles multiply a, not a + 128: their part of K lacks 128 times its
  // column sums of B', which the compensation adds back.
  using namespace int8gemm;
  const int64_t groups = groupsOf(k, /*bf16=*/false);
  const int64_t tileGroups = k / stepK(false) * kTileRows;
  const int64_t panels = (n + kInt8Panel - 1) / kInt8Panel;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t j = 0; j < kInt8Panel; ++j) {
      int32_t sum = 0;
      for (int64_t g = 0; g < tileGroups; ++g)
        for (int64_t t = 0; t < kGroupBytes; ++t)
          sum += packed.panels[static_cast<size_t>(
              ((p * groups + g) * kInt8Panel + j) * kGroupBytes + t)];
      uint8_t *comp = packed.columnData.data() + p * kInt8ColumnDataBytes +
                      j * sizeof(int32_t);
      int32_t value;
      std::memcpy(&value, comp, sizeof(value));
      value += 128 * sum;
      std::memcpy(comp, &value, sizeof(value));
    }
}

} // namespace mlcc::avx512
