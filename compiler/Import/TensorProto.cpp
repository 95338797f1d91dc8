//===- TensorProto.cpp - ONNX TensorProto <-> host tensors ----------------===//

#include "mlcc/Import/TensorProto.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mlcc::onnxio {

using ref::DType;
using ref::Status;
using ref::Tensor;

ref::DType dtypeFromOnnx(int t) { return ref::dtypeFromOnnxEnum(t); }

int dtypeToOnnx(ref::DType t) {
  return static_cast<int>(ref::dtypeToOnnxEnum(t));
}

namespace {

/// An external_data offset or length: decimal digits, at most 18 of them
/// (so that offset + length cannot overflow).
bool parseByteCount(const std::string &text, int64_t &out) {
  if (text.empty() || text.size() > 18)
    return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

/// Whether `path` resolves (symbolic links followed) to a file inside the
/// folder `baseDir`.
bool resolvesInside(const std::string &baseDir, const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::canonical(baseDir.empty() ? "." : baseDir, ec);
  if (ec)
    return false;
  fs::path file = fs::canonical(path, ec);
  if (ec)
    return true; // a missing file: the open below says so
  auto [d, f] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  return d == dir.end() && f != file.end();
}

Status readExternalData(const onnx::TensorProto &proto,
                        const std::string &baseDir, std::string &bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : proto.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if ((kv.key() == "offset" || kv.key() == "length") &&
               !parseByteCount(kv.value(),
                               kv.key() == "offset" ? offset : length)) {
      return Status::error("tensor '", proto.name(), "': external data ",
                           kv.key(), " '", kv.value(), "' is not a byte count");
    }
  }
  if (location.empty())
    return Status::error("tensor '", proto.name(),
                         "' has external data without a location");
  std::string path = baseDir.empty() ? location : baseDir + "/" + location;
  if (location.find("..") != std::string::npos || location[0] == '/' ||
      !resolvesInside(baseDir, path))
    return Status::error("tensor '", proto.name(), "': external data path '",
                         location, "' must stay inside the model's folder");
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path, ec) || !in)
    return Status::error("tensor '", proto.name(),
                         "': cannot open external data file '", path, "'");
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  if (length < 0)
    length = size - offset;
  if (size < 0 || length < 0 || offset + length > size)
    return Status::error("tensor '", proto.name(), "': external data range [",
                         offset, ", ", offset + length, ") exceeds file '",
                         path, "' of ", size, " bytes");
  bytes.resize(length);
  in.seekg(offset);
  in.read(bytes.data(), length);
  return Status::success();
}

// How many values the typed field that `dtype` is stored in holds.
int64_t typedValueCount(const onnx::TensorProto &proto, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return proto.float_data_size();
  case DType::F64:
    return proto.double_data_size();
  case DType::I64:
    return proto.int64_data_size();
  case DType::U32:
  case DType::U64:
    return proto.uint64_data_size();
  default: // half types (as bit patterns), the other integers and bool
    return proto.int32_data_size();
  }
}

} // namespace

Status tensorFromProto(const onnx::TensorProto &proto,
                       const std::string &baseDir, Tensor &out) {
  DType dtype = dtypeFromOnnx(proto.data_type());
  if (dtype == DType::Undefined)
    return Status::error("tensor '", proto.name(), "' has unsupported type ",
                         onnx::TensorProto::DataType_Name(
                             static_cast<onnx::TensorProto::DataType>(
                                 proto.data_type())));
  ref::Shape shape(proto.dims().begin(), proto.dims().end());
  // Check the size before allocating: a corrupt or non-tensor file can
  // claim absurd dims.
  constexpr int64_t kMaxBytes = int64_t(1) << 36;
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return Status::error("tensor '", proto.name(), "' has negative dim ", d);
    if (d && count > kMaxBytes / d)
      return Status::error("tensor '", proto.name(), "' of shape ",
                           ref::shapeToString(shape), " is too large");
    count *= d;
  }
  if (count > kMaxBytes / static_cast<int64_t>(ref::dtypeSize(dtype)))
    return Status::error("tensor '", proto.name(), "' of shape ",
                         ref::shapeToString(shape), " is too large");
  // Whatever holds the values is measured against the dims before the
  // tensor is allocated: 20 bytes of file may claim gigabytes of dims.
  int64_t expectedBytes = count * static_cast<int64_t>(ref::dtypeSize(dtype));
  std::string external;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    // Read (at most its file's size) and then measured.
    MLCC_RETURN_IF_ERROR(readExternalData(proto, baseDir, external));
    if (static_cast<int64_t>(external.size()) != expectedBytes)
      return Status::error("tensor '", proto.name(), "' of shape ",
                           ref::shapeToString(shape), " has ", external.size(),
                           " bytes of external data, expected ", expectedBytes);
  } else if (proto.has_raw_data()) {
    if (static_cast<int64_t>(proto.raw_data().size()) != expectedBytes)
      return Status::error("tensor '", proto.name(), "' of shape ",
                           ref::shapeToString(shape), " has ",
                           proto.raw_data().size(), " raw bytes, expected ",
                           expectedBytes);
  } else if (int64_t have = typedValueCount(proto, dtype); have != count) {
    return Status::error("tensor '", proto.name(), "' of shape ",
                         ref::shapeToString(shape), " holds ", have,
                         " values, expected ", count);
  }
  Tensor t;
  if (!Tensor::allocate(dtype, shape, t))
    return Status::error("tensor '", proto.name(), "' of shape ",
                         ref::shapeToString(shape), ": out of memory (",
                         expectedBytes, " bytes)");
  int64_t n = t.numel();

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::memcpy(t.raw(), external.data(), t.byteSize());
  } else if (proto.has_raw_data()) {
    std::memcpy(t.raw(), proto.raw_data().data(), t.byteSize());
  } else {
    switch (dtype) {
    case DType::F32:
      std::copy(proto.float_data().begin(), proto.float_data().end(),
                t.data<float>());
      break;
    case DType::F64:
      std::copy(proto.double_data().begin(), proto.double_data().end(),
                t.data<double>());
      break;
    case DType::I64:
      std::copy(proto.int64_data().begin(), proto.int64_data().end(),
                t.data<int64_t>());
      break;
    case DType::U32:
    case DType::U64:
      for (int64_t i = 0; i < n; ++i)
        t.setInt(i, static_cast<int64_t>(proto.uint64_data(i)));
      break;
    case DType::F16:
    case DType::BF16:
      // Half types travel as their bit patterns in int32_data.
      for (int64_t i = 0; i < n; ++i)
        t.data<uint16_t>()[i] = static_cast<uint16_t>(proto.int32_data(i));
      break;
    default: // the remaining integer types and bool use int32_data
      for (int64_t i = 0; i < n; ++i)
        t.setInt(i, proto.int32_data(i));
      break;
    }
  }
  out = t;
  return Status::success();
}

void tensorToProto(const Tensor &tensor, const std::string &name,
                   onnx::TensorProto &proto) {
  proto.Clear();
  proto.set_name(name);
  proto.set_data_type(dtypeToOnnx(tensor.dtype()));
  for (int64_t d : tensor.shape())
    proto.add_dims(d);
  proto.set_raw_data(std::string(static_cast<const char *>(tensor.raw()),
                                 tensor.byteSize()));
}

Status readTensorFile(const std::string &path, Tensor &out,
                      std::string *name) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot open tensor file '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(buffer.str()))
    return Status::error("'", path, "' is not a valid ONNX TensorProto file");
  if (name)
    *name = proto.name();
  std::string dir = path.substr(0, path.find_last_of('/'));
  Status s = tensorFromProto(proto, dir, out);
  if (s.failed())
    return Status::error(path, ": ", s.message());
  return Status::success();
}

Status writeTensorFile(const std::string &path, const Tensor &tensor,
                       const std::string &name) {
  onnx::TensorProto proto;
  tensorToProto(tensor, name, proto);
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return Status::error("cannot serialize tensor '", name, "'");
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out || !out.write(bytes.data(), bytes.size()))
      return Status::error("cannot write '", tmp, "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::error("cannot rename '", tmp, "' to '", path, "'");
  return Status::success();
}

} // namespace mlcc::onnxio
