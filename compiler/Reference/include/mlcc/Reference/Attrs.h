//===- Attrs.h - Op attributes as plain values ------------------*- C++ -*-===//
//
// The attributes of one op, converted once from the MLIR op (or written by a
// unit test). Getters take the ONNX default, so kernels state the defaults of
// the spec in one place.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_ATTRS_H
#define MLCC_REFERENCE_ATTRS_H

#include "mlcc/Reference/Tensor.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace mlcc::ref {

using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>,
                 std::vector<float>, std::vector<std::string>, Tensor>;

class Attrs {
public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init)
      : values_(init) {}

  void set(const std::string &name, AttrValue value) {
    values_[name] = std::move(value);
  }
  bool has(const std::string &name) const { return values_.count(name) != 0; }

  int64_t getInt(const std::string &name, int64_t dflt = 0) const;
  float getFloat(const std::string &name, float dflt = 0.0f) const;
  std::string getString(const std::string &name,
                        const std::string &dflt = "") const;
  std::vector<int64_t> getInts(const std::string &name,
                               std::vector<int64_t> dflt = {}) const;
  std::vector<float> getFloats(const std::string &name,
                               std::vector<float> dflt = {}) const;
  std::vector<std::string> getStrings(const std::string &name) const;
  /// Absent (default) Tensor when the attribute is not set.
  Tensor getTensor(const std::string &name) const;

  const std::map<std::string, AttrValue> &all() const { return values_; }

private:
  std::map<std::string, AttrValue> values_;
};

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_ATTRS_H
