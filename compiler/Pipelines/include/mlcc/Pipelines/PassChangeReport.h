//===- PassChangeReport.h - What each pass changed, in op counts -*- C++ -*-===//
//
// `mlcc compile --stats`: after every pass of the pipeline, one line with the
// number of ops before and after, and for each op kind whose count changed,
// by how much ("graph.fused_conv +53, graph.conv -53, graph.relu -49"), so a
// fusion shows up as the ops it created and the ones it removed.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_PIPELINES_PASSCHANGEREPORT_H
#define MLCC_PIPELINES_PASSCHANGEREPORT_H

#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace mlcc {

/// Reports to `os` as the passes run. The counts are of the operation each
/// pass runs on (a function for the graph passes), nested ops included.
/// The pass manager's context must run single-threaded, so that lines of
/// passes over different functions do not interleave.
std::unique_ptr<mlir::PassInstrumentation>
createPassChangeReport(llvm::raw_ostream &os);

} // namespace mlcc

#endif // MLCC_PIPELINES_PASSCHANGEREPORT_H
