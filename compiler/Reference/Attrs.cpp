//===- Attrs.cpp - Op attributes as plain values --------------------------===//

#include "mlcc/Reference/Attrs.h"

namespace mlcc::ref {

int64_t Attrs::getInt(const std::string &name, int64_t dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return *v;
  if (auto *f = std::get_if<float>(&it->second))
    return static_cast<int64_t>(*f);
  return dflt;
}

float Attrs::getFloat(const std::string &name, float dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *v = std::get_if<float>(&it->second))
    return *v;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return static_cast<float>(*i);
  return dflt;
}

std::string Attrs::getString(const std::string &name,
                             const std::string &dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *v = std::get_if<std::string>(&it->second))
    return *v;
  return dflt;
}

std::vector<int64_t> Attrs::getInts(const std::string &name,
                                    std::vector<int64_t> dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second))
    return *v;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return {*i};
  return dflt;
}

std::vector<float> Attrs::getFloats(const std::string &name,
                                    std::vector<float> dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *v = std::get_if<std::vector<float>>(&it->second))
    return *v;
  return dflt;
}

std::vector<std::string> Attrs::getStrings(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return {};
  if (auto *v = std::get_if<std::vector<std::string>>(&it->second))
    return *v;
  return {};
}

Tensor Attrs::getTensor(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return Tensor();
  if (auto *v = std::get_if<Tensor>(&it->second))
    return *v;
  return Tensor();
}

} // namespace mlcc::ref
