//===- RecurrentActivations.h - The activations of LSTM/GRU/RNN -*- C++ -*-===//
//
// The `activations`, `activation_alpha` and `activation_beta` attributes of
// the ONNX recurrent ops, read one way for the reference kernel and every
// lowering: which function each (direction, slot) applies, with which
// parameters. Header-only and MLIR-free, like TypeSets.h.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_RECURRENTACTIVATIONS_H
#define MLCC_REFERENCE_RECURRENTACTIVATIONS_H

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::ref::rnn {

enum class Cell { Rnn, Gru, Lstm };

/// Activations per direction: RNN f; GRU f, g; LSTM f, g, h.
inline size_t activationCount(Cell k) {
  return k == Cell::Lstm ? 3 : k == Cell::Gru ? 2 : 1;
}

struct Activation {
  enum Kind {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  } kind = Tanh;
  double alpha = 0, beta = 0;

  bool operator==(const Activation &o) const {
    return kind == o.kind && alpha == o.alpha && beta == o.beta;
  }

  /// The function in double, as the reference computes it.
  double operator()(double x) const {
    switch (kind) {
    case Relu:
      return x > 0 ? x : 0;
    case Tanh:
      return std::tanh(x);
    case Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Affine:
      return alpha * x + beta;
    case LeakyRelu:
      return x >= 0 ? x : alpha * x;
    case ThresholdedRelu:
      return x >= alpha ? x : 0;
    case ScaledTanh:
      return alpha * std::tanh(beta * x);
    case HardSigmoid:
      return std::min(std::max(alpha * x + beta, 0.0), 1.0);
    case Elu:
      return x >= 0 ? x : alpha * (std::exp(x) - 1);
    case Softsign:
      return x / (1 + std::fabs(x));
    case Softplus:
      return std::log1p(std::exp(x));
    }
    return x;
  }
};

/// One Activation per (direction, slot) from the attributes' values (names
/// in any case; empty lists when absent). The alpha and beta lists are
/// consumed in order by the functions that take such a parameter (as
/// onnxruntime does); the others use the default of the ONNX op of the same
/// name. Without names, the ONNX defaults; one set of names for a
/// bidirectional cell serves both directions. Returns the error's text, or
/// an empty string.
inline std::string parseActivations(Cell kind, std::vector<std::string> names,
                                    const std::vector<double> &alphas,
                                    const std::vector<double> &betas,
                                    int64_t numDirs,
                                    std::vector<Activation> &out) {
  size_t perDir = activationCount(kind);
  if (names.empty()) {
    std::vector<std::string> dflt =
        kind == Cell::Lstm ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
        : kind == Cell::Gru ? std::vector<std::string>{"sigmoid", "tanh"}
                            : std::vector<std::string>{"tanh"};
    for (int64_t d = 0; d < numDirs; ++d)
      names.insert(names.end(), dflt.begin(), dflt.end());
  } else if (names.size() == perDir && numDirs == 2) {
    std::vector<std::string> copy = names;
    names.insert(names.end(), copy.begin(), copy.end());
  }
  if (names.size() != perDir * static_cast<size_t>(numDirs))
    return "activations has " + std::to_string(names.size()) +
           " entries, expected " + std::to_string(perDir * numDirs);
  // Name, kind, whether alpha / beta are taken, and their defaults.
  struct Spec {
    const char *name;
    Activation::Kind kind;
    bool usesAlpha, usesBeta;
    double alpha, beta;
  };
  static const Spec specs[] = {
      {"relu", Activation::Relu, false, false, 0, 0},
      {"tanh", Activation::Tanh, false, false, 0, 0},
      {"sigmoid", Activation::Sigmoid, false, false, 0, 0},
      {"affine", Activation::Affine, true, true, 1.0, 0.0},
      {"leakyrelu", Activation::LeakyRelu, true, false, 0.01, 0},
      {"thresholdedrelu", Activation::ThresholdedRelu, true, false, 1.0, 0},
      {"scaledtanh", Activation::ScaledTanh, true, true, 1.0, 1.0},
      {"hardsigmoid", Activation::HardSigmoid, true, true, 0.2, 0.5},
      {"elu", Activation::Elu, true, false, 1.0, 0},
      {"softsign", Activation::Softsign, false, false, 0, 0},
      {"softplus", Activation::Softplus, false, false, 0, 0},
  };
  size_t ai = 0, bi = 0;
  out.clear();
  for (const std::string &name : names) {
    std::string n = name;
    for (char &c : n)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const Spec *spec = nullptr;
    for (const Spec &s : specs)
      if (n == s.name)
        spec = &s;
    if (!spec)
      return "unknown activation function '" + name + "'";
    Activation a;
    a.kind = spec->kind;
    a.alpha =
        spec->usesAlpha && ai < alphas.size() ? alphas[ai++] : spec->alpha;
    a.beta = spec->usesBeta && bi < betas.size() ? betas[bi++] : spec->beta;
    out.push_back(a);
  }
  return "";
}

} // namespace mlcc::ref::rnn

#endif // MLCC_REFERENCE_RECURRENTACTIVATIONS_H
