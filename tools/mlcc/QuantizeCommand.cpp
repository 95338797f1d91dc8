//===- QuantizeCommand.cpp - mlcc quantize --------------------------------===//
//
// Calibrates the model as `compile --quantize int8` does and writes the
// decision as a QDQ ONNX model (mlcc/Driver/QdqModel.h). The graph is
// calibrated with its layers as the file has them: the fusions and the
// batch-norm folding are left out, so each quantised op is an ONNX node.
// With per-channel weight scales, quantising a conv's own weight gives the
// integers of quantising it with the batch norm folded in, so the QDQ model
// computes what the compiled one does (up to f32 rounding).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mlcc/Driver/Calibration.h"
#include "mlcc/Driver/QdqModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <cstdio>

namespace mlcc::cli {

int runQuantize(const QuantizeOptions &options) {
  if (!llvm::StringRef(options.model.model).ends_with(".onnx")) {
    printErrors({"mlcc quantize reads an ONNX model (.onnx), not '" +
                 options.model.model + "'"});
    return 1;
  }
  ModelOptions model = options.model;
  model.quantize = "int8";
  for (const char *pass :
       {"mlcc-fuse-layer-norm", "mlcc-fuse-gelu", "mlcc-fuse-embed-layer-norm",
        "mlcc-fuse-skip-layer-norm", "mlcc-fold-batch-norm",
        "mlcc-conv-to-stencil", "mlcc-fuse-conv-epilogue", "mlcc-fuse-fc",
        "mlcc-fuse-attention"})
    model.disabledPasses.push_back(pass);
  mlir::MLIRContext ctx;
  graph::QuantizationReport report;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadAndSimplify(ctx, model, &report);
  if (!module)
    return 1;
  std::vector<std::string> skipped;
  if (ref::Status s =
          writeQdqModel(model.model, report, options.output, skipped);
      s.failed()) {
    printErrors({s.message()});
    return 1;
  }
  std::printf("wrote %s: %zu layers in QDQ form (u8 activations, s8 weights "
              "per output channel)\n",
              options.output.c_str(), report.layers.size() - skipped.size());
  std::printf("kept in f32: %zu layers\n", report.kept.size() + skipped.size());
  for (const std::string &line : report.kept)
    std::printf("  %s\n", line.c_str());
  for (const std::string &line : skipped)
    std::printf("  %s\n", line.c_str());
  return 0;
}

} // namespace mlcc::cli
