//===- HeaderWriter.h - The C header of a compiled model --------*- C++ -*-===//
//
// Every compiled model comes with one C11 header, like a small library's:
// an opaque context, create/run/destroy, a run over caller memory, and
// constants for each input's and output's name, dtype, shape and byte size.
// The header only declares; the definitions are in the model's object.
// The text depends only on the ModelInterface, so it is golden-tested.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_HEADERWRITER_H
#define MLCC_LOWERING_COMMON_HEADERWRITER_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlcc {

/// One dimension of a model input or output.
struct InterfaceDim {
  /// The extent, or -1 when it is only known at run time.
  int64_t size = -1;
  /// The ONNX dim_param of a dynamic dim ("batch"), shown in comments; may
  /// be empty.
  std::string symbol;
  /// For an output dim whose extent the run computes from the data (size
  /// -1): the most it can be, which the caller's buffer must hold; -1
  /// otherwise.
  int64_t bound = -1;
};

/// One input or output tensor of a model.
struct InterfaceTensor {
  /// The ONNX name: any non-empty string (it is escaped in the header).
  std::string name;
  /// The element type as mlcc_dtype_string() names it: "f32", "i64", ...
  std::string dtype;
  std::vector<InterfaceDim> dims;
};

/// A dim compiled as a range of extents that the model maps over (`mlcc
/// compile --dim batch=1..64`): dim 0 of the mapped inputs and outputs.
struct InterfaceRange {
  std::string name;
  int64_t min = 1, max = 1;
  /// Per input, then per output: whether its dim 0 is this dim.
  std::vector<bool> mapped;
};

/// A dim compiled as a range of lengths (`mlcc compile --dim seq=1..512`):
/// the variants are its buckets, each running any length up to it (see
/// mlcc_model_padded_dim in runtime/include/mlcc/model.h).
struct InterfacePaddedDim {
  std::string name;
  int64_t min = 1, max = 1;
  /// Per input, then per output: the axis that holds the dim, or -1.
  std::vector<int64_t> axes;
  /// --trim-padding: the input whose zeros mark padding, or -1.
  int32_t maskInput = -1;
};

/// What a compiled model looks like from the outside.
struct ModelInterface {
  /// A C identifier: the header uses the prefixes mlcc_<name>_ and
  /// MLCC_<NAME>_.
  std::string name;
  std::vector<InterfaceTensor> inputs;
  std::vector<InterfaceTensor> outputs;
  /// Activation arena bytes; only emitted when every shape is static.
  uint64_t arenaBytes = 0;
  /// Where in the arena a run leaves every output's dims (int64_t each,
  /// outputs in order), when some output has run-time extents.
  uint64_t outputDimsOffset = 0;
  /// The weights live in a side file that create() reads, of weightsBytes
  /// data bytes (after its 64-byte header).
  bool externalWeights = false;
  uint64_t weightsBytes = 0;
  /// The file's fingerprint, which the object's descriptor also holds (not
  /// in the header: it is checked at create time).
  uint64_t weightsFingerprint = 0;
  /// For a model compiled for several shapes: each one's dynamic dims
  /// ("batch=8"), in the order the runtime tries them.
  std::vector<std::string> variants;
  /// With a range dim: it, and the variants are its chunk sizes.
  std::optional<InterfaceRange> range;
  /// With a range of lengths: it, and the variants are its buckets.
  std::optional<InterfacePaddedDim> padded;
  /// What the object's code needs of the CPU (MLCC_CPU_* bits) and the
  /// --cpu it was compiled for; 0 and "" when nothing is checked.
  uint64_t cpuFeatures = 0;
  std::string cpuName;
};

/// Checks `m` and, when it is valid, writes its header into `header` and
/// returns true. Otherwise returns false with a sentence in `error` (a bad
/// model name, an empty or duplicate tensor name, an unsupported dtype, a
/// dim below -1 or a byte size that overflows) and leaves `header` empty.
bool tryWriteModelHeader(const ModelInterface &m, std::string &header,
                         std::string &error);

/// The header of `m`, which the caller has already validated; an invalid
/// interface gives "" (never an abort).
std::string writeModelHeader(const ModelInterface &m);

/// Bytes of an element of `dtype` (as mlcc_dtype_string() names it: "f32");
/// 0 for a name that is none.
uint64_t dtypeByteSize(const std::string &dtype);

/// `s` as the inside of a C string literal: quotes, backslashes, '?'
/// (trigraphs), control and non-ASCII bytes escaped (octal, 3 digits).
std::string escapeCString(const std::string &s);

} // namespace mlcc

#endif // MLCC_LOWERING_COMMON_HEADERWRITER_H
