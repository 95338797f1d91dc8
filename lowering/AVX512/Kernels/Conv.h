//===- Conv.h - AVX-512 f32 direct 2-D and 3-D convolution kernels *- C++ -*-===//
//
// Generates f32 kernels for Y = epilogue(conv(X, W) + bias + Z), 2-D or 3-D,
// with every shape, stride, pad and dilation known when the kernel is
// generated (group = 1, or depthwise: group == C == OC). X and Y are channel
// blocked, the weight is packed once by the compiler; the reorders below
// convert to and from plain NCHW.
//
// Blocked activation layout NCHW16c
// ---------------------------------
// Channels are split into blocks of 16 (C padded up to a multiple of 16):
//
//   x16c[(((n * CB + cb) * H + h) * W + w) * 16 + c % 16] = x[n][c][h][w]
//
// with CB = ceil(C / 16). A 3-D conv's tensors [N, C, D, H, W] are NCDHW16c,
// the same with D x H rows per channel block (h above runs over d * H + h).
// The kernel writes Y's padding lanes (past C) as 0,
// so a blocked output feeds the next conv directly. A dense conv never reads
// X's padding lanes; a depthwise one reads them into Y's padding lanes only
// (then zeroed), so they may hold anything.
//
// Packed weight layout OIhw16i16o
// -------------------------------
//   packed[((((ob * ICB + ib) * KH + kh) * KW + kw) * 16 + i) * 16 + o]
//       = w[16 ob + o][16 ib + i][kh][kw]     (0 past OC or C)
//
// so one zmm holds the 16 output channels of one input channel at one tap.
// packed.size() == OCB * ICB * KH * KW * 256 floats. A 3-D weight has its
// depth taps between the output and the input channel blocks,
//   packed[(((((ob * KD + kd) * ICB + ib) * KH + kh) * KW + kw) * 16 + i) * 16
//          + o] = w[16 ob + o][16 ib + i][kd][kh][kw],
// so that one depth tap's weights for every input block are contiguous.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_conv_args *args);
// bias (OC elements) is read only by kernels generated with one, the
// residual Z (NCHW16c, Y's shape) only by kernels generated with one.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_CONV_H
#define MLCC_LOWERING_AVX512_KERNELS_CONV_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

/// Channels of one block of the NCHW16c layout.
constexpr int64_t kConvBlock = 16;

struct ConvSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "conv";
  /// Input [N, C, H, W], output channels OC.
  int64_t n = 1, c = 1, h = 1, w = 1, oc = 1;
  int64_t kernel[2] = {1, 1};
  int64_t strides[2] = {1, 1};
  int64_t dilations[2] = {1, 1};
  /// ONNX order: top, left, bottom, right.
  int64_t pads[4] = {0, 0, 0, 0};
  /// A 3-D conv ([N, C, D, H, W]; the fields above are its height and
  /// width): the input's depth, the kernel's, its stride, dilation and pads
  /// (front, back). The defaults are a 2-D conv.
  int64_t d = 1;
  int64_t depthKernel = 1, depthStride = 1, depthDilation = 1;
  int64_t depthPads[2] = {0, 0};
  /// 1, or C == OC for a depthwise conv (weights from
  /// packDepthwiseConvWeights).
  int64_t group = 1;
  /// C = OC = 16 whose low and high 8 channels are separate convs (a chunk
  /// of a grouped conv with 8, 4 or 2 channels a group in and out, its
  /// weights block diagonal as packGroupedConvWeights packs them): each
  /// half of the block runs on ymm halves, no FMAs on the zeros between the
  /// halves.
  bool pairedGroups = false;
  /// X in plain NCHW instead of NCHW16c (group 1 only): for a stem conv on
  /// a model input with few channels, whose blocks would be mostly padding.
  bool plainInput = false;
  /// Add args->bias[oc] before the epilogue.
  bool bias = false;
  /// Then add args->residual, a blocked tensor like Y (graph.fused_conv's
  /// Z), before the epilogue ops.
  bool residual = false;
  /// Elementwise ops on every output (constant operands only), as GemmSpec.
  std::vector<EltwiseOp> epilogue;
  /// Output rows [first, end) of each output plane to compute; {0, 0}: all.
  /// The tensors keep the whole conv's shape and the rows outside are not
  /// written, so kernels for bands of rows split a conv over threads while
  /// each keeps every channel block's reuse of an input load.
  int64_t rowBand[2] = {0, 0};
  /// Where output pixel (y, x) lands in Y (2-D only): at row
  /// y * dstStrides[0] + dstOffsets[0] and column x * dstStrides[1] +
  /// dstOffsets[1] of planes dstFrame[0] x dstFrame[1]. {0, 0}: Y is the
  /// conv's own output. A transposed conv runs as one conv per output phase,
  /// each writing its lattice of the whole output.
  int64_t dstFrame[2] = {0, 0};
  int64_t dstStrides[2] = {1, 1};
  int64_t dstOffsets[2] = {0, 0};
  /// Rows between the channel-block planes of X and of Y (2-D, X blocked,
  /// Y not a lattice), when those tensors hold more rows than the conv reads
  /// (X: its h) or writes (Y: its output rows): the conv then runs on the
  /// first rows of each plane, and a caller moves the bases to run it on a
  /// band of a taller tensor or to write a few rows into a scratch
  /// (ExpandDepthwiseBands.cpp). 0: the conv's own rows.
  int64_t srcPlaneRows = 0;
  int64_t dstPlaneRows = 0;
  /// The weights of the output channels after this kernel's follow its own
  /// in memory, and the caller runs them next on the same thread (a chunk
  /// of a conv split over threads): its groups prefetch them as the
  /// whole-conv kernel's groups prefetch the next group's.
  bool nextWeightsFollow = false;
  /// Output pixels per microkernel call, 1 to 28 (14 when two channel
  /// blocks are computed together); 0 picks. Tests set it to reach tails.
  int blockWidth = 0;
};

/// The output's spatial size; fails for a window larger than the padded
/// input.
Status convOutputSize(const ConvSpec &spec, int64_t &oh, int64_t &ow);
/// The output's depth (1 for a 2-D conv), 0 for a depth window larger than
/// the padded input.
int64_t convOutputDepth(const ConvSpec &spec);

/// Bytes in Y of one output channel block of one image (an output plane,
/// or a frame's, times the depth) and between consecutive output rows; 0
/// for a spec without an output.
int64_t convDstBlockBytes(const ConvSpec &spec);
int64_t convDstRowBytes(const ConvSpec &spec);

/// The kernel rows [first, second) whose taps of output row y land inside
/// the input (an empty pair when none do): rows with equal ranges share code.
std::pair<int64_t, int64_t> convRowTaps(const ConvSpec &spec, int64_t y);

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent). N = 0 gives a kernel that writes nothing. Fails, naming
/// spec.name, for non-positive sizes, strides or dilations, negative pads,
/// a group that is neither 1 nor depthwise, an empty output, tensors over 2 GiB
/// and unsupported epilogue ops.
Status generateConv(const ConvSpec &spec, std::vector<uint8_t> &code);

/// Packs w [OC, C, KD, KH, KW] into the layout above; `packed` is resized.
void packConv3dWeights(const float *w, int64_t oc, int64_t c, int64_t kd,
                       int64_t kh, int64_t kw, std::vector<float> &packed);
/// Packs w [OC, C, KH, KW].
inline void packConvWeights(const float *w, int64_t oc, int64_t c, int64_t kh,
                            int64_t kw, std::vector<float> &packed) {
  packConv3dWeights(w, oc, c, 1, kh, kw, packed);
}

/// Packs a depthwise weight w [C, 1, KD, KH, KW] into
///   packed[(((cb * KD + kd) * KH + kh) * KW + kw) * 16 + c % 16]
///       = w[16 cb + c][0][kd][kh][kw]
/// (0 past C); `packed` is resized.
void packDepthwiseConv3dWeights(const float *w, int64_t c, int64_t kd,
                                int64_t kh, int64_t kw,
                                std::vector<float> &packed);
/// Packs a depthwise w [C, 1, KH, KW].
inline void packDepthwiseConvWeights(const float *w, int64_t c, int64_t kh,
                                     int64_t kw, std::vector<float> &packed) {
  packDepthwiseConv3dWeights(w, c, 1, kh, kw, packed);
}

/// A grouped conv (1 < group, not depthwise) runs as dense kernels over
/// chunks of `groupsPerChunk` consecutive groups: a chunk's input and output
/// channels are whole NCHW16c blocks, and its weight is the dense
/// [k OC/G, k C/G] one with zeros off the groups' diagonal. k is the least
/// count for which both channel counts are multiples of 16 (at most the
/// group count; a last chunk may hold fewer groups); the kernel does k times
/// the conv's FLOPs. 0 when k is above `maxGroupsPerChunk`.
int64_t groupedConvChunk(int64_t c, int64_t oc, int64_t group,
                         int64_t maxGroupsPerChunk);

/// Packs w [OC, C / group, KH, KW] as consecutive chunks of groupsPerChunk
/// groups (the last may hold fewer), each packed by packConvWeights from its
/// block-diagonal dense weight; `packed` is resized.
void packGroupedConvWeights(const float *w, int64_t oc, int64_t c, int64_t kh,
                            int64_t kw, int64_t group, int64_t groupsPerChunk,
                            std::vector<float> &packed);

inline int64_t convBlocks(int64_t c) {
  return (c + kConvBlock - 1) / kConvBlock;
}
inline bool isDepthwiseConv(const ConvSpec &spec) {
  return spec.group > 1 && spec.group == spec.c && spec.oc == spec.c;
}
/// Output channel blocks the kernel keeps in registers together (a group):
/// two, each input value it loads feeding both; one for depthwise or a
/// single block.
inline int convGroupBlocks(const ConvSpec &spec) {
  return convBlocks(spec.oc) >= 2 && !isDepthwiseConv(spec) ? 2 : 1;
}
/// Floats packConvWeights() writes.
inline int64_t packedConvWeightsSize(int64_t oc, int64_t c, int64_t kh,
                                     int64_t kw) {
  return convBlocks(oc) * convBlocks(c) * kh * kw * kConvBlock * kConvBlock;
}
inline int64_t packedDepthwiseConvWeightsSize(int64_t c, int64_t kh,
                                              int64_t kw) {
  return convBlocks(c) * kh * kw * kConvBlock;
}
/// Floats of an [N, C, H, W] tensor in NCHW16c.
inline int64_t blockedSize(int64_t n, int64_t c, int64_t h, int64_t w) {
  return n * convBlocks(c) * h * w * kConvBlock;
}

/// x [N, C, H, W] to NCHW16c in `dst` (blockedSize() floats, padding lanes
/// set to 0).
void reorderNCHWtoNCHW16c(const float *src, int64_t n, int64_t c, int64_t h,
                          int64_t w, float *dst);
/// NCHW16c back to [N, C, H, W] (padding lanes dropped).
void reorderNCHW16cToNCHW(const float *src, int64_t n, int64_t c, int64_t h,
                          int64_t w, float *dst);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_CONV_H
