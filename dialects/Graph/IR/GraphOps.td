//===- GraphOps.td - all graph dialect ops --------------------*- tablegen -*-===//

#ifndef MLCC_GRAPH_OPS
#define MLCC_GRAPH_OPS

include "GraphBase.td"
include "GraphCoreOps.td"
include "GraphControlFlowOps.td"
include "GraphOnnxOps.td"
include "GraphFusedOps.td"

#endif // MLCC_GRAPH_OPS
