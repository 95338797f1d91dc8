//===- HeaderWriter.cpp - The C header an app includes for a model --------===//
//
// Emits the model header as plain text. Tensors are named by index in macros
// (MLCC_M_INPUT_0_NAME) since ONNX names can be any string; only run_static's
// parameters use sanitized names, made unique so the prototype compiles.
//
//===----------------------------------------------------------------------===//

#include "HeaderWriter.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace mlcc {
namespace {

struct DTypeInfo {
  const char *name; // mlcc_dtype_string()
  const char *enumerator;
  const char *cType; // the element type of run_static's pointers
  uint64_t size;
};

// The mlcc_dtype values of runtime/include/mlcc/tensor.h, less UNDEFINED.
// bool is uint8_t, not _Bool/bool, so the prototype means the same in C and
// C++ (one byte, 0 or 1).
const DTypeInfo kDTypes[] = {
    {"f32", "MLCC_DTYPE_F32", "float", 4},
    {"f64", "MLCC_DTYPE_F64", "double", 8},
    {"f16", "MLCC_DTYPE_F16", "uint16_t", 2},
    {"bf16", "MLCC_DTYPE_BF16", "uint16_t", 2},
    {"i8", "MLCC_DTYPE_I8", "int8_t", 1},
    {"u8", "MLCC_DTYPE_U8", "uint8_t", 1},
    {"i16", "MLCC_DTYPE_I16", "int16_t", 2},
    {"u16", "MLCC_DTYPE_U16", "uint16_t", 2},
    {"i32", "MLCC_DTYPE_I32", "int32_t", 4},
    {"u32", "MLCC_DTYPE_U32", "uint32_t", 4},
    {"i64", "MLCC_DTYPE_I64", "int64_t", 8},
    {"u64", "MLCC_DTYPE_U64", "uint64_t", 8},
    {"bool", "MLCC_DTYPE_BOOL", "uint8_t", 1},
};

const DTypeInfo *lookupDType(const std::string &name) {
  for (const DTypeInfo &d : kDTypes)
    if (name == d.name)
      return &d;
  return nullptr;
}

// C11 and C++17 keywords (and the names the prototypes use themselves),
// which a sanitized tensor name must not become.
const std::set<std::string> &reservedWords() {
  static const std::set<std::string> words = {
      "alignas",      "alignof",  "and",           "and_eq",
      "asm",          "auto",     "bitand",        "bitor",
      "bool",         "break",    "case",          "catch",
      "char",         "char16_t", "char32_t",      "class",
      "compl",        "const",    "const_cast",    "constexpr",
      "continue",     "decltype", "default",       "delete",
      "do",           "double",   "dynamic_cast",  "else",
      "enum",         "explicit", "export",        "extern",
      "false",        "float",    "for",           "friend",
      "goto",         "if",       "inline",        "int",
      "long",         "mutable",  "namespace",     "new",
      "noexcept",     "not",      "not_eq",        "nullptr",
      "operator",     "or",       "or_eq",         "private",
      "protected",    "public",   "register",      "reinterpret_cast",
      "restrict",     "return",   "short",         "signed",
      "sizeof",       "static",   "static_assert", "static_cast",
      "struct",       "switch",   "template",      "this",
      "thread_local", "throw",    "true",          "try",
      "typedef",      "typeid",   "typename",      "union",
      "unsigned",     "using",    "virtual",       "void",
      "volatile",     "wchar_t",  "while",         "xor",
      "xor_eq",       "ctx",      "NULL",          "EOF",
      "errno",        "assert",   "offsetof",      "complex",
      "imaginary"};
  return words;
}

bool isCIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_') ||
        static_cast<unsigned char>(c) >= 0x80)
      return false;
  return true;
}

std::string upper(const std::string &s) {
  std::string r = s;
  for (char &c : r)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

// A tensor name as an identifier: runs of other characters become one '_',
// no leading/trailing '_' (which could make reserved names), "t_" before a
// digit or an empty result, '_' after a keyword.
std::string sanitize(const std::string &name) {
  std::string r;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    bool ok = u < 0x80 && (std::isalnum(u) || c == '_');
    char out = ok ? c : '_';
    if (out == '_' && (r.empty() || r.back() == '_'))
      continue;
    r += out;
  }
  while (!r.empty() && r.back() == '_')
    r.pop_back();
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0])))
    r = "t_" + r;
  if (reservedWords().count(r))
    r += "_";
  return r;
}

bool isStatic(const InterfaceTensor &t) {
  for (const InterfaceDim &d : t.dims)
    if (d.size < 0)
      return false;
  return true;
}

// The shape for comments: [1, 3, 224, 224], dynamic dims as "batch" or ?.
std::string shapeText(const InterfaceTensor &t) {
  std::string s = "[";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i)
      s += ", ";
    const InterfaceDim &d = t.dims[i];
    if (d.size >= 0)
      s += std::to_string(d.size);
    else if (d.bound >= 0)
      s += "<=" + std::to_string(d.bound);
    else if (d.symbol.empty())
      s += "?";
    else
      s += "\"" + escapeCString(d.symbol) + "\"";
  }
  return s + "]";
}

bool byteSize(const InterfaceTensor &t, uint64_t elemSize, uint64_t &out) {
  uint64_t n = elemSize;
  for (const InterfaceDim &d : t.dims) {
    uint64_t e = static_cast<uint64_t>(d.size);
    if (e != 0 && n > UINT64_MAX / e)
      return false;
    n *= e;
  }
  out = n;
  return true;
}

bool validate(const ModelInterface &m, std::string &error) {
  if (!isCIdentifier(m.name)) {
    error = "model name '" + m.name + "' is not a C identifier";
    return false;
  }
  std::set<std::string> seen;
  for (int io = 0; io < 2; ++io) {
    const std::vector<InterfaceTensor> &ts = io ? m.outputs : m.inputs;
    const char *kind = io ? "output" : "input";
    for (size_t i = 0; i < ts.size(); ++i) {
      const InterfaceTensor &t = ts[i];
      std::string label = std::string(kind) + " " + std::to_string(i);
      if (t.name.empty()) {
        error = label + " has an empty name";
        return false;
      }
      label += " '" + t.name + "'";
      if (!seen.insert(t.name).second) {
        error = label + ": duplicate tensor name";
        return false;
      }
      const DTypeInfo *d = lookupDType(t.dtype);
      if (!d) {
        error = label + ": unsupported dtype '" + t.dtype + "'";
        return false;
      }
      if (t.dims.size() > INT32_MAX) {
        error = label + ": too many dims";
        return false;
      }
      for (const InterfaceDim &dim : t.dims)
        if (dim.size < -1) {
          error = label + ": dim " + std::to_string(dim.size) +
                  " (expected >= 0, or -1 for dynamic)";
          return false;
        }
      uint64_t bytes;
      if (isStatic(t) && !byteSize(t, d->size, bytes)) {
        error = label + ": byte size overflows";
        return false;
      }
    }
  }
  if (const std::optional<InterfaceRange> &r = m.range) {
    if (r->min < 1 || r->max < r->min ||
        r->mapped.size() != m.inputs.size() + m.outputs.size()) {
      error = "the range of dim '" + r->name + "' is malformed";
      return false;
    }
  }
  if (const std::optional<InterfacePaddedDim> &p = m.padded) {
    if (p->min < 1 || p->max < p->min ||
        p->axes.size() != m.inputs.size() + m.outputs.size() ||
        p->maskInput < -1 ||
        p->maskInput >= static_cast<int64_t>(m.inputs.size())) {
      error = "the range of lengths of dim '" + p->name + "' is malformed";
      return false;
    }
  }
  return true;
}

void emitTensor(std::ostringstream &os, const std::string &pfx,
                const std::string &fnPfx, const char *kind, size_t i,
                const InterfaceTensor &t) {
  const DTypeInfo &d = *lookupDType(t.dtype);
  std::string upKind = upper(kind);
  std::string mac = pfx + upKind + "_" + std::to_string(i) + "_";
  os << "// " << kind << " " << i << ": \"" << escapeCString(t.name) << "\", "
     << d.name << " " << shapeText(t) << "\n";
  os << "#define " << mac << "NAME \"" << escapeCString(t.name) << "\"\n";
  os << "#define " << mac << "DTYPE " << d.enumerator << "\n";
  os << "#define " << mac << "RANK " << t.dims.size() << "\n";
  if (!t.dims.empty()) {
    os << "static const int64_t " << fnPfx << kind << "_" << i << "_dims["
       << t.dims.size() << "] = {";
    for (size_t k = 0; k < t.dims.size(); ++k)
      os << (k ? ", " : "") << t.dims[k].size;
    os << "};\n";
  }
  uint64_t bytes;
  if (isStatic(t) && byteSize(t, d.size, bytes))
    os << "#define " << mac << "BYTES " << bytes << "u\n";
  // Extents that come from the data: the most they can be, which the
  // caller's buffer (and its dims) must hold; run() writes the actual ones.
  if (std::any_of(t.dims.begin(), t.dims.end(),
                  [](const InterfaceDim &d) { return d.bound >= 0; })) {
    InterfaceTensor bound = t;
    os << "static const int64_t " << fnPfx << kind << "_" << i << "_max_dims["
       << t.dims.size() << "] = {";
    for (size_t k = 0; k < t.dims.size(); ++k) {
      InterfaceDim &dim = bound.dims[k];
      dim.size = dim.bound >= 0 ? dim.bound : dim.size;
      os << (k ? ", " : "") << dim.size;
    }
    os << "};\n";
    if (byteSize(bound, d.size, bytes))
      os << "#define " << mac << "MAX_BYTES " << bytes << "u\n";
  }
  os << "\n";
}

} // namespace

std::string escapeCString(const std::string &s) {
  static const char *kOctal = "01234567";
  std::string r;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      r += "\\\"";
      continue;
    case '\\':
      r += "\\\\";
      continue;
    case '?': // "??/" would be a trigraph in C11
      r += "\\?";
      continue;
    case '\n':
      r += "\\n";
      continue;
    case '\t':
      r += "\\t";
      continue;
    default:
      break;
    }
    if (u >= 0x20 && u < 0x7f) {
      r += c;
      continue;
    }
    // Always three octal digits: a following digit can't extend the escape.
    r += '\\';
    r += kOctal[(u >> 6) & 7];
    r += kOctal[(u >> 3) & 7];
    r += kOctal[u & 7];
  }
  return r;
}

uint64_t dtypeByteSize(const std::string &dtype) {
  const DTypeInfo *d = lookupDType(dtype);
  return d ? d->size : 0;
}

bool tryWriteModelHeader(const ModelInterface &m, std::string &header,
                         std::string &error) {
  header.clear();
  error.clear();
  if (!validate(m, error))
    return false;

  const std::string fn = "mlcc_" + m.name + "_";
  const std::string mac = "MLCC_" + upper(m.name) + "_";
  const std::string ctx = fn + "context";
  const std::string guard = "MLCC_MODEL_" + upper(m.name) + "_H";
  bool allStatic = true;
  for (const InterfaceTensor &t : m.inputs)
    allStatic &= isStatic(t);
  for (const InterfaceTensor &t : m.outputs)
    allStatic &= isStatic(t);

  std::ostringstream os;
  os << "// Generated by mlcc for model '" << m.name
     << "'. Do not edit.\n"
        "//\n"
        "// Use:\n"
        "//   "
     << ctx << " *ctx;\n"
     << "//   if (" << fn << "create(pool, "
     << (m.externalWeights ? "weights_path, " : "") << "&ctx) != MLCC_OK)\n"
     << "//     puts(mlcc_last_error_message());\n"
        "//   "
     << fn
     << "run(ctx, inputs, outputs);  // mlcc_tensor arrays, in order\n"
        "//   "
     << fn
     << "destroy(ctx);\n"
        "//\n"
        "// Inputs and outputs are numbered in ONNX order. For each, "
     << mac
     << "INPUT_<i>_*\n"
        "// (and OUTPUT_<i>_*) give the ONNX NAME, the DTYPE, the RANK and,\n"
        "// when every dim is known, the BYTES; "
     << fn
     << "input_<i>_dims[]\n"
        "// holds the dims, -1 where a dim is given at run time (rank-0\n"
        "// tensors have no dims array).\n"
        "//\n"
        "// Every function returns a status and never aborts: a NULL pointer, "
        "a\n"
        "// wrong dtype, rank or dim, or too small an arena is an error code, "
        "and\n"
        "// mlcc_last_error_message() says what was wrong. A context runs one\n"
        "// call at a time; use one context per thread.\n\n";

  os << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  os << "#include <mlcc/runtime.h>\n\n#include <stddef.h>\n#include "
        "<stdint.h>\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";

  os << "#define " << mac << "NUM_INPUTS " << m.inputs.size() << "\n";
  os << "#define " << mac << "NUM_OUTPUTS " << m.outputs.size() << "\n";
  if (allStatic)
    os << "// Bytes of the activation arena of " << fn
       << "run_with_arena (at least).\n#define " << mac << "ARENA_BYTES "
       << m.arenaBytes << "u\n";
  if (const std::optional<InterfaceRange> &r = m.range) {
    std::string dim = upper(sanitize(r->name));
    os << "// \"" << escapeCString(r->name) << "\" (dim 0 of the tensors "
       << "that have it) may be\n// any value from " << r->min << " to "
       << r->max << ": a run takes its items in chunks of the\n// "
       << "variants' sizes below, largest first; outside the range is an "
       << "error.\n";
    os << "#define " << mac << dim << "_MIN " << r->min << "\n";
    os << "#define " << mac << dim << "_MAX " << r->max << "\n";
  }
  if (const std::optional<InterfacePaddedDim> &p = m.padded) {
    std::string dim = upper(sanitize(p->name));
    os << "// \"" << escapeCString(p->name) << "\" (a dim of the tensors "
       << "that have it, named so below) may\n// be any value from " << p->min
       << " to " << p->max << ": a run takes the smallest variant below that "
       << "holds it,\n// padded there; outside the range is an error. The "
       << "arena holds the padded\n// copies.\n";
    if (p->maskInput >= 0)
      os << "// --trim-padding \"" << escapeCString(m.inputs[p->maskInput].name)
         << "\": each item runs at the length up to its mask's last\n// "
         << "nonzero; the outputs' positions past it are 0.\n";
    os << "#define " << mac << dim << "_MIN " << p->min << "\n";
    os << "#define " << mac << dim << "_MAX " << p->max << "\n";
  }
  if (!m.variants.empty()) {
    os << (m.range && m.padded
               ? "// Compiled for these shapes (the chunks of the range, "
                 "each in the buckets\n// of the range of lengths):\n"
           : m.range  ? "// Compiled for these shapes (the chunks of the "
                        "range):\n"
           : m.padded ? "// Compiled for these shapes (the buckets of the "
                        "range of lengths):\n"
                      : "// Compiled for these shapes (in this order; the "
                        "inputs' dims choose one,\n// any other shape is an "
                        "error):\n");
    for (const std::string &v : m.variants)
      os << "//   " << v << "\n";
    os << "#define " << mac << "NUM_VARIANTS " << m.variants.size() << "\n";
  }
  if (m.externalWeights)
    os << "// Data bytes of the weights file (after its 64-byte header).\n"
          "#define "
       << mac << "WEIGHTS_BYTES " << m.weightsBytes << "u\n";
  os << "\n";
  for (size_t i = 0; i < m.inputs.size(); ++i)
    emitTensor(os, mac, fn, "input", i, m.inputs[i]);
  for (size_t i = 0; i < m.outputs.size(); ++i)
    emitTensor(os, mac, fn, "output", i, m.outputs[i]);

  os << "// The weights, the arena and the thread pool of one model "
        "instance.\n";
  os << "typedef struct " << ctx << " " << ctx << ";\n\n";

  os << "// Makes a context in *out (NULL on failure); free it with " << fn
     << "destroy.\n"
        "// `pool` may be NULL (runs on the calling thread); it is borrowed "
        "and\n"
        "// must outlive the context.\n";
  if (m.externalWeights)
    os << "// `weights_path` names the weights file mlcc wrote with the "
          "object\n"
          "// (--weights external); it is read now, and a file of another "
          "model\n"
          "// or another compile is refused.\n";
  os << "mlcc_status " << fn << "create(mlcc_threadpool *pool, ";
  if (m.externalWeights)
    os << "const char *weights_path,\n    ";
  os << ctx << " **out);\n\n";
  if (m.externalWeights)
    os << "// As " << fn
       << "create with the weights file's whole image (64-byte\n"
          "// header, then "
       << mac
       << "WEIGHTS_BYTES of data) already in memory, 64-byte\n"
          "// aligned; it is borrowed and must outlive the context.\n"
          "mlcc_status "
       << fn
       << "create_from_memory(mlcc_threadpool *pool, const void *image,\n"
          "    size_t image_size, "
       << ctx << " **out);\n\n";

  os << "// Frees the context. NULL is a no-op.\n";
  os << "void " << fn << "destroy(" << ctx << " *ctx);\n\n";

  os << "// Runs the model: inputs[" << mac << "NUM_INPUTS] and outputs[" << mac
     << "NUM_OUTPUTS]\n"
        "// in order. Every descriptor's dtype, rank and dims are checked";
  bool runTimeExtents = false;
  for (const InterfaceTensor &t : m.outputs)
    for (const InterfaceDim &d : t.dims)
      runTimeExtents |= d.bound >= 0;
  if (allStatic)
    os << ".\n";
  else if (runTimeExtents)
    os << "; an\n// output with max_dims has dims whose extents come from "
          "the data: give it a\n// buffer and dims of at least max_dims; "
          "run writes the actual dims and\n// the dense tensor of that "
          "shape.\n";
  else
    os << "; the\n// dynamic dims (-1) are taken from the inputs, and the "
          "outputs' must match.\n";
  os << "// The caller owns the output buffers.\n";
  os << "mlcc_status " << fn << "run(" << ctx
     << " *ctx, const mlcc_tensor *inputs,\n    mlcc_tensor *outputs);\n\n";

  // Only when the arena size is a constant and no side file is needed:
  // otherwise a caller could not size the arena or pass the weights.
  if (allStatic && !m.externalWeights) {
    os << "// Runs the model without a context, single-threaded, using "
          "`arena`\n"
          "// (64-byte aligned, at least "
       << mac << "ARENA_BYTES) for the activations.\n// Checks as in " << fn
       << "run.\n";
    os << "mlcc_status " << fn
       << "run_with_arena(void *arena, size_t arena_size,\n"
          "    const mlcc_tensor *inputs, mlcc_tensor *outputs);\n\n";
  }

  if (allStatic) {
    std::set<std::string> used;
    auto unique = [&](const std::string &name) {
      std::string base = sanitize(name), r = base;
      for (int k = 1; !used.insert(r).second; ++k)
        r = base + "_" + std::to_string(k);
      return r;
    };
    os << "// As " << fn
       << "run, with the data of each input and output in order\n"
          "// (ONNX names sanitized); the shapes are the constants above.\n";
    os << "mlcc_status " << fn << "run_static(" << ctx << " *ctx";
    for (const InterfaceTensor &t : m.inputs)
      os << ",\n    const " << lookupDType(t.dtype)->cType << " *"
         << unique(t.name);
    for (const InterfaceTensor &t : m.outputs)
      os << ",\n    " << lookupDType(t.dtype)->cType << " *" << unique(t.name);
    os << ");\n\n";
  }

  os << "#ifdef __cplusplus\n} // extern \"C\"\n#endif\n\n";
  os << "#endif // " << guard << "\n";
  header = os.str();
  return true;
}

std::string writeModelHeader(const ModelInterface &m) {
  std::string header, error;
  if (!tryWriteModelHeader(m, header, error))
    return std::string();
  return header;
}

} // namespace mlcc
