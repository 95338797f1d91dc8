//===- ShapeVariants.h - The shapes one object is compiled for ---*- C++ -*-===//
//
// `--dim batch=1,8` compiles a variant of the model per value, and a range
// (`--dim batch=1..64,8`, RangeDim.h) a variant per chunk. What `mlcc
// compile`, `run` and `bench` share: the model loaded at each of those
// shapes, and for a range the proof that the model maps over its dim.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TOOLS_MLCC_SHAPEVARIANTS_H
#define MLCC_TOOLS_MLCC_SHAPEVARIANTS_H

#include "RangeDim.h"

namespace mlcc::cli {

struct ShapeVariants {
  /// One module per shape, in the order of the --dim values.
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  /// The range dims (at most one of a batch and one of lengths), as the
  /// --dim gave them and as the object describes them.
  std::vector<DimRange> ranges;
  std::optional<InterfaceRange> interfaceRange;
  std::optional<InterfacePaddedDim> interfacePadded;

  std::vector<mlir::ModuleOp> views() const;
};

/// Whether some --dim gives several values or a range: the model is then
/// compiled into one object for all of them.
bool hasSeveralShapes(const std::vector<std::string> &dims);

/// Loads the model at every shape `model.dims` asks for and proves a range.
/// With `stats`, the first variant reports its pass changes and a range
/// what it maps. False after printing an error.
bool loadShapeVariants(mlir::MLIRContext &ctx, const ModelOptions &model,
                       bool stats, ShapeVariants &out);

} // namespace mlcc::cli

#endif // MLCC_TOOLS_MLCC_SHAPEVARIANTS_H
