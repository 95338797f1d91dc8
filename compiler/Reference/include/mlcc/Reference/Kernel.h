//===- Kernel.h - Reference kernels and their shape helpers -----*- C++ -*-===//
//
// Each graph op has one KernelDef: a shape helper and a plain C++ run
// function. The shape helper is the single place an op's output types are
// computed: the reference executor calls it with concrete shapes, the shape
// inference pass with shapes that may hold kDynamic, and later backends use
// it to plan buffers.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNEL_H
#define MLCC_REFERENCE_KERNEL_H

#include "mlcc/Reference/Attrs.h"
#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace mlcc::ref {

/// What is known of one value at shape-inference time. `dtype` is Undefined
/// for an absent optional input. `value` is set when the value is a known
/// constant (always, for the reference executor), so helpers can read shape
/// operands such as Reshape's target shape.
struct ValueInfo {
  DType dtype = DType::Undefined;
  Shape shape; // may hold kDynamic in shape inference
  const Tensor *value = nullptr;

  bool present() const { return dtype != DType::Undefined; }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// Computes the output types. `outputs` arrives sized to the op's result
/// count; leave an entry's dtype Undefined for an output that is not
/// produced. Set a dimension to kDynamic when it cannot be known, e.g. when
/// it depends on input data that is not constant.
using ShapeFn = Status (*)(const Attrs &attrs,
                           const std::vector<ValueInfo> &inputs,
                           std::vector<ValueInfo> &outputs);

/// Computes the outputs. `inputs` hold absent Tensors for omitted optional
/// inputs; `outputs` arrives sized to the result count, each absent, and the
/// kernel assigns every produced output.
using RunFn = Status (*)(const Attrs &attrs, const std::vector<Tensor> &inputs,
                         std::vector<Tensor> &outputs);

struct KernelDef {
  ShapeFn inferShapes = nullptr;
  RunFn run = nullptr;
};

/// Kernels by graph-dialect mnemonic without the "graph." prefix ("conv",
/// "batch_norm"); see dialects/Graph/IR/GraphOnnxOpTable.inc.
class KernelRegistry {
public:
  static const KernelRegistry &get();
  const KernelDef *find(const std::string &mnemonic) const;
  void add(const std::string &mnemonic, KernelDef def) {
    kernels_[mnemonic] = def;
  }
  std::vector<std::string> names() const;

private:
  std::unordered_map<std::string, KernelDef> kernels_;
};

/// Whether a value of `shape` (kDynamic dims aside) and `dtype` can be
/// counted: no negative dim, and its elements and bytes fit in int64. The
/// message says which, with the shape ("shape [4294967296x4294967296] of
/// f32: its byte size overflows int64").
Status checkShapeFits(const Shape &shape, DType dtype);

/// inferShapes, then checkShapeFits on every result, so that no shape a
/// model's attributes or constants make up reaches the compiler or the
/// executor as a wrapped-around size ("result #0: shape ...").
Status inferShapesChecked(ShapeFn inferShapes, const Attrs &attrs,
                          const std::vector<ValueInfo> &inputs,
                          std::vector<ValueInfo> &outputs);

/// Runs the shape helper on the inputs' concrete shapes, then allocates the
/// outputs. The common first step of a RunFn.
Status allocateOutputs(ShapeFn inferShapes, const Attrs &attrs,
                       const std::vector<Tensor> &inputs,
                       std::vector<Tensor> &outputs);

// Registration, one function per kernel family (Kernels/<Family>.cpp).
// Explicit calls rather than static initialisers: a static library drops
// unreferenced objects.
void registerElementwiseKernels(KernelRegistry &r);
void registerReductionKernels(KernelRegistry &r);
void registerShapeKernels(KernelRegistry &r);     // reshape, concat, slice...
void registerIndexingKernels(KernelRegistry &r);  // gather, scatter, topk...
void registerNNKernels(KernelRegistry &r);        // conv, pool, norm, softmax
void registerMatmulKernels(KernelRegistry &r);    // matmul, gemm, einsum
void registerRecurrentKernels(KernelRegistry &r); // lstm, gru, rnn
void registerMiscKernels(KernelRegistry &r);      // everything else
void registerStencilKernels(KernelRegistry &r);   // graph.stencil
void registerFcKernels(KernelRegistry &r);        // graph.fc
void registerFusedConvKernels(KernelRegistry &r); // graph.fused_conv
void registerGeluKernels(KernelRegistry &r);      // graph.gelu
void registerAttentionKernels(KernelRegistry &r); // graph.attention
void registerEmbedLayerNormKernels(KernelRegistry &r); // graph.embed_layer_norm
void registerSkipLayerNormKernels(KernelRegistry &r);  // graph.skip_layer_norm

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_KERNEL_H
