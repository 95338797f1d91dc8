//===- TensorProto.h - ONNX TensorProto <-> host tensors --------*- C++ -*-===//
//
// Reading and writing ONNX TensorProto: initializers, Constant values and the
// model-zoo test data files (input_N.pb / output_N.pb). MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_IMPORT_TENSORPROTO_H
#define MLCC_IMPORT_TENSORPROTO_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace mlcc::onnxio {

/// Maps ONNX's TensorProto.DataType to ours; Undefined when unsupported
/// (string, complex).
ref::DType dtypeFromOnnx(int onnxType);
int dtypeToOnnx(ref::DType dtype);

/// Converts a TensorProto, reading external data relative to `baseDir`.
ref::Status tensorFromProto(const onnx::TensorProto &proto,
                            const std::string &baseDir, ref::Tensor &out);
void tensorToProto(const ref::Tensor &tensor, const std::string &name,
                   onnx::TensorProto &proto);

/// Reads a serialized TensorProto file; the error names the file.
ref::Status readTensorFile(const std::string &path, ref::Tensor &out,
                           std::string *name = nullptr);
ref::Status writeTensorFile(const std::string &path, const ref::Tensor &tensor,
                            const std::string &name);

} // namespace mlcc::onnxio

#endif // MLCC_IMPORT_TENSORPROTO_H
