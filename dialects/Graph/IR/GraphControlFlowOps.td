//===- GraphControlFlowOps.td - if / for / while --------------*- tablegen -*-===//
//
// Control flow stays in the graph as region ops (MPSGraph's if / for / while),
// so backends compile it into real branches and loops.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_GRAPH_CONTROL_FLOW_OPS
#define MLCC_GRAPH_CONTROL_FLOW_OPS

include "GraphBase.td"

// graph.yield
def Graph_YieldOp : Graph_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["IfOp", "ForOp", "WhileOp"]>]> {
  let summary = "Ends a region of graph.if, graph.for or graph.while";
  let description = [{
    Passes the region's results to the parent op.

    Example:
    ```mlir
    graph.yield %a, %b : tensor<4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

// graph.condition
def Graph_ConditionOp : Graph_Op<"condition", [Pure, Terminator,
    HasParent<"WhileOp">]> {
  let summary = "Ends the condition region of graph.while";
  let description = [{
    `cond` (a bool scalar tensor) decides whether the body runs again; `args`
    are passed to the body, or become the loop's results when `cond` is false.

    Example:
    ```mlir
    graph.condition %more, %x : tensor<i1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$cond, Variadic<AnyTensor>:$args);
  let assemblyFormat = "$cond (`,` $args^)? `:` type($cond) (`,` type($args)^)? attr-dict";
}

// graph.if
def Graph_IfOp : Graph_Op<"if", [RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "Runs one of two regions on a bool scalar";
  let description = [{
    Each region ends with `graph.yield` of values matching the results; the
    regions may use values defined outside (outer-scope captures, as in ONNX
    subgraphs). Only the taken branch runs.

    Example:
    ```mlir
    %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
      graph.yield %a : tensor<4xf32>
    } else {
      graph.yield %b : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$cond);
  let results = (outs Variadic<AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$thenRegion, SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $cond `:` type($cond) (`->` `(` type($results)^ `)`)? $thenRegion `else` $elseRegion attr-dict
  }];
  let hasVerifier = 1;
}

// graph.for
def Graph_ForOp : Graph_Op<"for", [RecursiveMemoryEffects]> {
  let summary = "Counted loop with loop-carried values and stacked outputs";
  let description = [{
    Runs the body `trip_count` times (an i64 scalar tensor). The body block's
    arguments are the iteration number (tensor<i64>) and the loop-carried
    values; it yields the next carried values followed by `num_scan_outputs`
    per-iteration values, which the loop stacks along a new leading axis.
    Results: the final carried values, then the stacked outputs (ONNX Loop's
    v_final and scan_outputs).

    Example:
    ```mlir
    %sum = graph.for %n : tensor<i64> iter_args(%zero : tensor<f32>) -> (tensor<f32>) {
    ^bb0(%i: tensor<i64>, %acc: tensor<f32>):
      %next = graph.add %acc, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
      graph.yield %next : tensor<f32>
    }
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$trip_count, Variadic<AnyTensor>:$init,
                   DefaultValuedAttr<I64Attr, "0">:$num_scan_outputs);
  let results = (outs Variadic<AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $trip_count `:` type($trip_count) (`iter_args` `(` $init^ `:` type($init) `)`)?
    (`->` `(` type($results)^ `)`)? $body attr-dict
  }];
  let hasVerifier = 1;
}

// graph.while
def Graph_WhileOp : Graph_Op<"while", [RecursiveMemoryEffects]> {
  let summary = "Loop whose predicate is computed by the graph";
  let description = [{
    Like `scf.while` and MPSGraph's while: the `cond` region receives the
    carried values and ends with `graph.condition %pred, %args...`; when the
    predicate is true, `args` enter the `body` region, which yields the next
    carried values followed by `num_scan_outputs` per-iteration values
    (stacked along a new leading axis). When it is false the loop ends;
    results are the condition's `args`, then the stacked outputs.

    Example:
    ```mlir
    %x = graph.while iter_args(%x0 : tensor<4xf32>) -> (tensor<4xf32>) cond {
    ^bb0(%a: tensor<4xf32>):
      ...
      graph.condition %more, %a : tensor<i1>, tensor<4xf32>
    } do {
    ^bb0(%a: tensor<4xf32>):
      ...
      graph.yield %next : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$init,
                   DefaultValuedAttr<I64Attr, "0">:$num_scan_outputs);
  let results = (outs Variadic<AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$condRegion, SizedRegion<1>:$bodyRegion);
  let assemblyFormat = [{
    (`iter_args` `(` $init^ `:` type($init) `)`)? (`->` `(` type($results)^ `)`)?
    `cond` $condRegion `do` $bodyRegion attr-dict
  }];
  let hasVerifier = 1;
}

#endif // MLCC_GRAPH_CONTROL_FLOW_OPS
