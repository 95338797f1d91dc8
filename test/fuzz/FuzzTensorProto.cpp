//===- FuzzTensorProto.cpp - libFuzzer target: test-data tensor files -----===//
//
// `mlcc run --data DIR` and `--calibrate DIR` read input_N.pb files: a
// serialized TensorProto, converted to a host tensor (raw or typed data,
// every dtype, external data refused outside the data's folder). Any bytes
// must give a tensor whose byte size its dims say, or an error.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlcc/Import/TensorProto.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > mlcc::fuzz::kMaxInputBytes)
    return -1;
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  mlcc::ref::Tensor tensor;
  mlcc::ref::Status status = mlcc::onnxio::tensorFromProto(
      proto, mlcc::fuzz::emptyDirectory(), tensor);
  if (!status.ok())
    return 0;
  // The tensor read must be whole: touch every byte its shape claims (ASan
  // reports a buffer shorter than its dims).
  size_t bytes = static_cast<size_t>(tensor.byteSize());
  volatile uint8_t sum = 0;
  const uint8_t *p = static_cast<const uint8_t *>(tensor.raw());
  for (size_t i = 0; i < bytes; ++i)
    sum += p[i];
  // Writing it back and reading that again must give the same bytes.
  onnx::TensorProto again;
  mlcc::onnxio::tensorToProto(tensor, "t", again);
  mlcc::ref::Tensor back;
  if (!mlcc::onnxio::tensorFromProto(again, mlcc::fuzz::emptyDirectory(), back)
           .ok() ||
      back.byteSize() != tensor.byteSize() ||
      (bytes && std::memcmp(back.raw(), tensor.raw(), bytes) != 0)) {
    std::fprintf(stderr, "tensor did not survive a write and a read\n");
    std::abort();
  }
  return 0;
}
