/*===- KernelABI.h - Argument structs of generated kernels -------*- C -*-===*\
|*                                                                            *|
|* The contract between the kernels that lowering/<Target> generates and the  *|
|* code that calls them (the host schedule written into the model object, the *|
|* runtime, the tests). Plain C so that runtime/ (C11) and the compiler (C++) *|
|* include the same definitions; the generators read field offsets from here  *|
|* with offsetof, so a field moved here moves in the generated code too.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/*
 * Calling convention of every CPU kernel
 * --------------------------------------
 *
 *   void kernel(const <family>_args *args);
 *
 * - One pointer argument (rdi under the System V x86-64 ABI) to a struct of
 *   this file, read-only to the kernel. Pointers in it are not owned by the
 *   kernel; they must stay valid for the call. No return value: a kernel
 *   cannot fail at run time, everything that can fail is checked when it is
 *   generated.
 * - Shapes, strides, element counts and constants are baked into the code
 *   at compile time: a kernel serves exactly the shapes it was generated for.
 * - Position independent: the code holds no absolute address. Constants live
 *   in the kernel's own bytes, after its last instruction, and are reached
 *   RIP-relative; branches are relative. The bytes can be copied anywhere
 *   (an object file section, an mmap'd page) and run there unchanged.
 * - Registers: a kernel may clobber the caller-saved registers of the SysV
 *   ABI (rax, rcx, rdx, rsi, rdi, r8-r11, all vector and opmask registers);
 *   it saves and restores any callee-saved one it uses (rbx, rbp, r12-r15),
 *   leaves rsp as it found it and does not change MXCSR. It ends with
 *   vzeroupper before ret, so SSE code in the caller pays no transition
 *   penalty.
 * - Memory: a kernel reads and writes only the elements its shapes name.
 *   Vector tails are masked, never read past the end. Output buffers may be
 *   the same as an input (in place) but must not partially overlap one.
 * - Thread safety: kernels keep no state; concurrent calls with disjoint
 *   outputs are safe.
 */

#ifndef MLCC_LOWERING_COMMON_KERNELABI_H
#define MLCC_LOWERING_COMMON_KERNELABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*\
|* Elementwise chains (lowering/AVX512/Kernels/Eltwise.h)                     *|
\*===----------------------------------------------------------------------===*/

/** Inputs an elementwise kernel can read: the chain's input and the second
 *  operands of its binary ops. */
#define MLCC_ELTWISE_MAX_SRC 4

/** Arguments of a generated elementwise chain: dst[i] = f(src[0][i], ...)
 *  for i < n. src[0] is the chain's input; src[1..] are second operands,
 *  either arrays of n elements or single elements broadcast to all lanes, as
 *  the kernel's spec says. Unused entries are ignored (may be NULL). */
typedef struct mlcc_eltwise_args {
  const void *src[MLCC_ELTWISE_MAX_SRC];
  void *dst;
  /** Element count. Kernels generated for a static count have it baked in
   *  and do not read it; the caller still sets it, so a debugger or a check
   *  sees the size the call was meant for. */
  int64_t n;
} mlcc_eltwise_args;

typedef void (*mlcc_eltwise_kernel_fn)(const mlcc_eltwise_args *args);

/* The generated code reads these offsets; pin them so that a change in
 * layout is seen at compile time rather than as wrong results. */
#ifdef __cplusplus
static_assert(offsetof(mlcc_eltwise_args, dst) == 32, "eltwise ABI");
static_assert(offsetof(mlcc_eltwise_args, n) == 40, "eltwise ABI");
#else
_Static_assert(offsetof(mlcc_eltwise_args, dst) == 32, "eltwise ABI");
_Static_assert(offsetof(mlcc_eltwise_args, n) == 40, "eltwise ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* F32 matrix multiplication (lowering/AVX512/Kernels/Gemm.h)                 *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated gemm: c = epilogue(a * B + bias + residual),
 *  M x N, with B packed at compile time (packB in Gemm.h describes the
 *  layout). Shapes and leading dimensions are baked into the code. bias (N
 *  elements) and residual (laid out like c, same leading dimension) are
 *  read only by kernels generated with them; they may be NULL otherwise.
 *  m is read only by kernels generated with a run-time M (GemmSpec::
 *  runTimeM): the rows of this call, at most the M they were generated
 *  for (more are clamped to it); k and n likewise with a run-time K or N,
 *  B staying packed for the K and N generated for. */
typedef struct mlcc_gemm_args {
  const float *a;
  const float *packed_b;
  const float *bias;
  float *c;
  const float *residual;
  int64_t m;
  int64_t k;
  int64_t n;
} mlcc_gemm_args;

typedef void (*mlcc_gemm_kernel_fn)(const mlcc_gemm_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_gemm_args, packed_b) == 8, "gemm ABI");
static_assert(offsetof(mlcc_gemm_args, bias) == 16, "gemm ABI");
static_assert(offsetof(mlcc_gemm_args, c) == 24, "gemm ABI");
static_assert(offsetof(mlcc_gemm_args, residual) == 32, "gemm ABI");
static_assert(offsetof(mlcc_gemm_args, m) == 40, "gemm ABI");
static_assert(offsetof(mlcc_gemm_args, k) == 48, "gemm ABI");
static_assert(offsetof(mlcc_gemm_args, n) == 56, "gemm ABI");
#else
_Static_assert(offsetof(mlcc_gemm_args, packed_b) == 8, "gemm ABI");
_Static_assert(offsetof(mlcc_gemm_args, bias) == 16, "gemm ABI");
_Static_assert(offsetof(mlcc_gemm_args, c) == 24, "gemm ABI");
_Static_assert(offsetof(mlcc_gemm_args, residual) == 32, "gemm ABI");
_Static_assert(offsetof(mlcc_gemm_args, m) == 40, "gemm ABI");
_Static_assert(offsetof(mlcc_gemm_args, k) == 48, "gemm ABI");
_Static_assert(offsetof(mlcc_gemm_args, n) == 56, "gemm ABI");
#endif

/** The sums of A's blocks of a one-level Strassen GEMM (lowering/AVX512/
 *  Kernels/Strassen.h): rows rows of a (m x k blocks, the bottom ones m
 *  rows down) into S1 to S4 from s, each block m * k floats apart. */
typedef struct mlcc_strassen_sums_args {
  const float *a;
  float *s;
  int64_t rows;
} mlcc_strassen_sums_args;

typedef void (*mlcc_strassen_sums_kernel_fn)(
    const mlcc_strassen_sums_args *args);

/** dst = act(sum of +-terms[i] + bias) over a block of C (Strassen.h). */
typedef struct mlcc_strassen_combine_args {
  float *dst;
  const float *bias;
  const float *terms[4];
} mlcc_strassen_combine_args;

typedef void (*mlcc_strassen_combine_kernel_fn)(
    const mlcc_strassen_combine_args *args);

/** Arguments of a generated int8 GEMM kernel (lowering/AVX512/Kernels/
 *  GemmInt8.h): a is M x K u8 or s8, packed_b and column_data come from
 *  mlcc_int8_pack_b (mlcc/int8_pack.h), c is M x N int32, f32, u8 or s8 as
 *  the kernel was generated; residual (f32, laid out like c) is read only by
 *  kernels made with one, output_zero (its low 32 bits, the u8/s8 output's
 *  zero point) only by kernels made with outputZeroArgument, m only by
 *  kernels made with a run-time M (Int8GemmSpec::runTimeM): the rows of
 *  this call, at most the M they were generated for (more are clamped to
 *  it). */
typedef struct mlcc_int8_gemm_args {
  const void *a;
  const int8_t *packed_b;
  const void *column_data;
  void *c;
  const float *residual;
  int64_t output_zero;
  int64_t m;
} mlcc_int8_gemm_args;

typedef void (*mlcc_int8_gemm_kernel_fn)(const mlcc_int8_gemm_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_int8_gemm_args, packed_b) == 8, "int8 gemm ABI");
static_assert(offsetof(mlcc_int8_gemm_args, column_data) == 16,
              "int8 gemm ABI");
static_assert(offsetof(mlcc_int8_gemm_args, c) == 24, "int8 gemm ABI");
static_assert(offsetof(mlcc_int8_gemm_args, residual) == 32, "int8 gemm ABI");
static_assert(offsetof(mlcc_int8_gemm_args, output_zero) == 40,
              "int8 gemm ABI");
static_assert(offsetof(mlcc_int8_gemm_args, m) == 48, "int8 gemm ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* 2-D and global pooling (lowering/AVX512/Kernels/Pool.h)                    *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated pooling kernel: src is the [N, C, H, W] f32
 *  input, dst the [N, C, OH, OW] output (1 x 1 for the global pools); every
 *  dim is baked into the code. */
typedef struct mlcc_pool_args {
  const float *src;
  float *dst;
} mlcc_pool_args;

typedef void (*mlcc_pool_kernel_fn)(const mlcc_pool_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_pool_args, dst) == 8, "pool ABI");
#else
_Static_assert(offsetof(mlcc_pool_args, dst) == 8, "pool ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* Winograd transforms (lowering/AVX512/Kernels/Winograd.h)                   *|
\*===----------------------------------------------------------------------===*/

/** The input transform reads src (X, NCHW16c) and writes dst (V); the
 *  output transform reads src (M), bias and residual (when generated with
 *  them) and writes dst (Y, NCHW16c). */
typedef struct mlcc_winograd_args {
  const float *src;
  float *dst;
  const float *bias;
  const float *residual;
} mlcc_winograd_args;

typedef void (*mlcc_winograd_kernel_fn)(const mlcc_winograd_args *args);

/*===----------------------------------------------------------------------===*\
|* Per-channel affine maps over NCHW16c (lowering/AVX512/Kernels/            *|
|* ChannelAffine.h)                                                           *|
\*===----------------------------------------------------------------------===*/

/** dst = act(src * scale[c] + shift[c]) over [N, ceil(C/16), H, W, 16]:
 *  scale and shift hold ceil(C/16) * 16 floats (the padding lanes' too). */
typedef struct mlcc_channel_affine_args {
  const float *src;
  const float *scale;
  const float *shift;
  float *dst;
} mlcc_channel_affine_args;

typedef void (*mlcc_channel_affine_kernel_fn)(
    const mlcc_channel_affine_args *args);

/*===----------------------------------------------------------------------===*\
|* Softmax, log_softmax and layer_norm (lowering/AVX512/Kernels/              *|
|* Normalization.h)                                                           *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated softmax or log_softmax over the last axis: src
 *  and dst are [rows, cols] f32, both dims baked into the code; dst may be
 *  src. A kernel generated with run-time rows (or cols) reads this call's
 *  from rows (cols), at most the spec's (more are clamped); its rows stay
 *  the spec's cols apart. */
typedef struct mlcc_softmax_args {
  const float *src;
  float *dst;
  int64_t rows;
  int64_t cols;
} mlcc_softmax_args;

typedef void (*mlcc_softmax_kernel_fn)(const mlcc_softmax_args *args);

/** Arguments of a generated layer_norm over the last axis of the [rows,
 *  cols] f32 src: dst = (src - mean) / sqrt(var + epsilon) * gamma + beta,
 *  with gamma and beta [cols]; dims and epsilon are baked into the code.
 *  A skip_layer_norm kernel normalises src + skip ([rows, cols]); the
 *  others ignore skip. */
typedef struct mlcc_layer_norm_args {
  const float *src;
  const float *gamma;
  const float *beta;
  float *dst;
  const float *skip;
  /** Read only by a kernel generated with run-time rows, as softmax's. */
  int64_t rows;
} mlcc_layer_norm_args;

typedef void (*mlcc_layer_norm_kernel_fn)(const mlcc_layer_norm_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_softmax_args, dst) == 8, "softmax ABI");
static_assert(offsetof(mlcc_layer_norm_args, gamma) == 8, "layer_norm ABI");
static_assert(offsetof(mlcc_layer_norm_args, beta) == 16, "layer_norm ABI");
static_assert(offsetof(mlcc_layer_norm_args, dst) == 24, "layer_norm ABI");
static_assert(offsetof(mlcc_softmax_args, rows) == 16, "softmax ABI");
static_assert(offsetof(mlcc_softmax_args, cols) == 24, "softmax ABI");
static_assert(offsetof(mlcc_layer_norm_args, rows) == 40, "layer_norm ABI");
#else
_Static_assert(offsetof(mlcc_softmax_args, dst) == 8, "softmax ABI");
_Static_assert(offsetof(mlcc_layer_norm_args, gamma) == 8, "layer_norm ABI");
_Static_assert(offsetof(mlcc_layer_norm_args, beta) == 16, "layer_norm ABI");
_Static_assert(offsetof(mlcc_layer_norm_args, dst) == 24, "layer_norm ABI");
_Static_assert(offsetof(mlcc_softmax_args, rows) == 16, "softmax ABI");
_Static_assert(offsetof(mlcc_softmax_args, cols) == 24, "softmax ABI");
_Static_assert(offsetof(mlcc_layer_norm_args, rows) == 40, "layer_norm ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* F32 reductions (lowering/AVX512/Kernels/Reduce.h)                          *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated reduction: src is the [outer, r, inner] f32
 *  input, dst the [outer, inner] output; every dim is baked into the code.
 *  r is read only by kernels generated with a run-time r (ReduceSpec::
 *  runTimeR): the rows reduced in each slice, at most the r they were
 *  generated for (more are clamped to it), the slices staying that r
 *  apart. */
typedef struct mlcc_reduce_args {
  const float *src;
  float *dst;
  int64_t r;
} mlcc_reduce_args;

typedef void (*mlcc_reduce_kernel_fn)(const mlcc_reduce_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_reduce_args, dst) == 8, "reduce ABI");
static_assert(offsetof(mlcc_reduce_args, r) == 16, "reduce ABI");
#else
_Static_assert(offsetof(mlcc_reduce_args, dst) == 8, "reduce ABI");
_Static_assert(offsetof(mlcc_reduce_args, r) == 16, "reduce ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* F32 direct 2-D convolution (lowering/AVX512/Kernels/Conv.h)                *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated conv: dst = epilogue(conv(src, weights) +
 *  bias + residual), src, dst and residual in the channel-blocked NCHW16c
 *  layout, weights packed at compile time (packConvWeights in Conv.h
 *  describes both layouts); every dim is baked into the code. bias (OC
 *  elements) and residual (dst's size and layout) are read only by kernels
 *  generated with them; they may be NULL otherwise. */
typedef struct mlcc_conv_args {
  const float *src;
  const float *weights;
  const float *bias;
  float *dst;
  const float *residual;
} mlcc_conv_args;

typedef void (*mlcc_conv_kernel_fn)(const mlcc_conv_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_conv_args, weights) == 8, "conv ABI");
static_assert(offsetof(mlcc_conv_args, bias) == 16, "conv ABI");
static_assert(offsetof(mlcc_conv_args, dst) == 24, "conv ABI");
static_assert(offsetof(mlcc_conv_args, residual) == 32, "conv ABI");
#else
_Static_assert(offsetof(mlcc_conv_args, weights) == 8, "conv ABI");
_Static_assert(offsetof(mlcc_conv_args, bias) == 16, "conv ABI");
_Static_assert(offsetof(mlcc_conv_args, dst) == 24, "conv ABI");
_Static_assert(offsetof(mlcc_conv_args, residual) == 32, "conv ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* F32 stencils, graph.stencil (lowering/AVX512/Kernels/Stencil.h)            *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated stencil: src is the f32 input, dst the output
 *  (f32, or i64 window indices for argmin/argmax); the shapes and the
 *  weights are baked into the code. */
typedef struct mlcc_stencil_args {
  const float *src;
  void *dst;
} mlcc_stencil_args;

typedef void (*mlcc_stencil_kernel_fn)(const mlcc_stencil_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_stencil_args, dst) == 8, "stencil ABI");
#else
_Static_assert(offsetof(mlcc_stencil_args, dst) == 8, "stencil ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* Row gathers, graph.gather and graph.gather_nd                              *|
|* (lowering/AVX512/Kernels/Gather.h)                                         *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated gather: copies the rows of data that the index
 *  tuples in indices (int32 or int64, as the kernel was generated for)
 *  select into dst. Indices are clamped into range, never read past data;
 *  shapes and row sizes are baked into the code. */
typedef struct mlcc_gather_args {
  const void *data;
  const void *indices;
  void *dst;
} mlcc_gather_args;

typedef void (*mlcc_gather_kernel_fn)(const mlcc_gather_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_gather_args, indices) == 8, "gather ABI");
static_assert(offsetof(mlcc_gather_args, dst) == 16, "gather ABI");
#else
_Static_assert(offsetof(mlcc_gather_args, indices) == 8, "gather ABI");
_Static_assert(offsetof(mlcc_gather_args, dst) == 16, "gather ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* Time steps of LSTM, GRU and RNN cells (lowering/AVX512/Kernels/            *|
|* Recurrent.h)                                                               *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated recurrent step: h = cell(h_prev, xw, c) with R
 *  packed at compile time. h_prev and h are [batch, hidden] (distinct), xw
 *  the step's input projection [batch, stride] in the interleaved gate
 *  layout of Recurrent.h, c the LSTM's cell state [batch, hidden], updated
 *  in place, bias the GRU's Rbh (NULL for the others); sizes are baked into
 *  the code. */
typedef struct mlcc_rnn_step_args {
  const float *h_prev;
  const float *xw;
  const float *packed_r;
  const float *bias;
  float *c;
  float *h;
} mlcc_rnn_step_args;

typedef void (*mlcc_rnn_step_kernel_fn)(const mlcc_rnn_step_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_rnn_step_args, xw) == 8, "rnn step ABI");
static_assert(offsetof(mlcc_rnn_step_args, packed_r) == 16, "rnn step ABI");
static_assert(offsetof(mlcc_rnn_step_args, bias) == 24, "rnn step ABI");
static_assert(offsetof(mlcc_rnn_step_args, c) == 32, "rnn step ABI");
static_assert(offsetof(mlcc_rnn_step_args, h) == 40, "rnn step ABI");
#else
_Static_assert(offsetof(mlcc_rnn_step_args, xw) == 8, "rnn step ABI");
_Static_assert(offsetof(mlcc_rnn_step_args, packed_r) == 16, "rnn step ABI");
_Static_assert(offsetof(mlcc_rnn_step_args, bias) == 24, "rnn step ABI");
_Static_assert(offsetof(mlcc_rnn_step_args, c) == 32, "rnn step ABI");
_Static_assert(offsetof(mlcc_rnn_step_args, h) == 40, "rnn step ABI");
#endif

/*===----------------------------------------------------------------------===*\
|* Nearest and bilinear resize, graph.resize and graph.upsample               *|
|* (lowering/AVX512/Kernels/Resize.h)                                         *|
\*===----------------------------------------------------------------------===*/

/** Arguments of a generated resize: src is the f32 [N, C, H, W] input (or
 *  [N, ceil(C/16), H, W, 16], as the kernel was generated for), dst the
 *  [N, C, OH, OW] output; shapes, source indices and weights are baked
 *  into the code. */
typedef struct mlcc_resize_args {
  const float *src;
  float *dst;
} mlcc_resize_args;

typedef void (*mlcc_resize_kernel_fn)(const mlcc_resize_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_resize_args, dst) == 8, "resize ABI");
#else
_Static_assert(offsetof(mlcc_resize_args, dst) == 8, "resize ABI");
#endif

/** graph.transpose of 4-byte elements: src the input, dst the transposed
 *  output; shapes and the permutation are baked into the code. */
typedef struct mlcc_transpose_args {
  const void *src;
  void *dst;
} mlcc_transpose_args;

typedef void (*mlcc_transpose_kernel_fn)(const mlcc_transpose_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_transpose_args, dst) == 8, "transpose ABI");
#else
_Static_assert(offsetof(mlcc_transpose_args, dst) == 8, "transpose ABI");
#endif

/** graph.grid_sample: src the [N, C, H, W] input, grid its [N, Ho, Wo, 2]
 *  sampling points (x, y in [-1, 1]), dst the [N, C, Ho, Wo] output;
 *  shapes and modes are baked into the code. */
typedef struct mlcc_grid_sample_args {
  const float *src;
  const float *grid;
  float *dst;
} mlcc_grid_sample_args;

typedef void (*mlcc_grid_sample_kernel_fn)(const mlcc_grid_sample_args *args);

#ifdef __cplusplus
static_assert(offsetof(mlcc_grid_sample_args, dst) == 16, "grid_sample ABI");
#else
_Static_assert(offsetof(mlcc_grid_sample_args, dst) == 16, "grid_sample ABI");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MLCC_LOWERING_COMMON_KERNELABI_H */
