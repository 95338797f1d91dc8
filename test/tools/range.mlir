// graph.range with a run-time limit (lowering/Common/Portable/
// DataMovementGenerators.cpp), as the ONNX window functions use it: shape
// inference gives the range the static length of the declared output that
// the elementwise ops after it lead to (10 floats, 4 integers), the points
// are one scf.parallel, and start, limit and delta read at run time must
// give that length, counted as the reference does (ceil((limit - start) /
// delta) in double, a ceiling division in int64), or the run fails with the
// node's message.
// RUN: mlcc compile %s --target avx512 --emit host-mlir | FileCheck %s --check-prefix=HOST
// HOST-LABEL: func.func private @mlcc_range_entry
// HOST: math.ceil
// HOST: func.call @mlcc_model_fail
// HOST: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c10{{.*}})
// HOST: arith.ceildivsi
// HOST: func.call @mlcc_model_fail
// HOST: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4{{.*}})

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np, onnx.numpy_helper as h, os; cases = {'ok': (9.5, 0, -3), 'long': (10.5, 0, -3), 'short': (9.5, 2, -3), 'zero': (9.5, 0, 0)}; [[open('%t/%%s/input_%%d.pb' %% (d, i), 'wb').write(h.from_array(np.asarray(v, t)).SerializeToString()) for i, (v, t) in enumerate(zip(c, ['f4', 'i8', 'i8']))] for d, c in cases.items() if not os.makedirs('%t/' + d)]"
// RUN: mlcc run %s --target avx512 --data %t/ok | FileCheck %s
// CHECK: output 'points': f32 [10]: 0 2 4 6 8 10 12 14 ...
// CHECK: output 'steps': i64 [4]: -10 -7 -4 -1
// RUN: mlcc run %s --target ref --data %t/ok --save %t/ok
// RUN: mlcc run %s --target avx512 --data %t/ok --check | FileCheck %s --check-prefix=SAME
// SAME: check passed
// RUN: not mlcc run %s --target avx512 --data %t/long 2>&1 | FileCheck %s --check-prefix=LONG
// LONG: (graph.range): start, limit and delta do not give the 10 elements the model was compiled for
// RUN: not mlcc run %s --target avx512 --data %t/short 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: (graph.range): start, limit and delta do not give the 4 elements the model was compiled for
// RUN: not mlcc run %s --target avx512 --data %t/zero 2>&1 | FileCheck %s --check-prefix=SHORT
func.func @range(%limit: tensor<f32> {graph.name = "limit"},
                 %stop: tensor<i64> {graph.name = "stop"},
                 %step: tensor<i64> {graph.name = "step"})
    -> (tensor<10xf32> {graph.name = "points"},
        tensor<4xi64> {graph.name = "steps"}) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %r = graph.range %zero, %limit, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %m = graph.mul %r, %two : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %y = graph.cast %m {to = 1 : i64} : (tensor<?xf32>) -> tensor<10xf32>
  %ten = graph.constant dense<10> : tensor<i64>
  %ri = graph.range %ten, %stop, %step : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %n = graph.neg %ri : (tensor<?xi64>) -> tensor<?xi64>
  %z = graph.cast %n {to = 7 : i64} : (tensor<?xi64>) -> tensor<4xi64>
  return %y, %z : tensor<10xf32>, tensor<4xi64>
}
