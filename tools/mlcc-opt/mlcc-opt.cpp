//===- mlcc-opt.cpp - MlirOptMain with the graph dialect and passes -------===//

#include "mlcc/Driver/Driver.h"
#include "mlcc/Pipelines/Pipelines.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlcc::registerDialects(registry);
  mlcc::registerPassesAndPipelines();
  mlir::registerCSEPass();
  mlir::registerCanonicalizerPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mlcc optimizer driver\n", registry));
}
