//===- FuzzRuntimeRun.cpp - libFuzzer target: the runtime's run checks ----===//
//
// The runtime promises that a call it lets through hands the model's code
// buffers as large as the shapes it was compiled for, and that every other
// call returns a status. This target builds a model descriptor from the
// input (as the compiler writes them: static dims, variants, a range, a
// range of lengths, outputs whose extents come from the data), tensors for
// a call (the descriptor's shapes mutated, or anything), each buffer
// allocated to exactly its dims' size, and calls create, run, run_pointers
// and run_with_arena. The model's "code" reads every input byte, writes every
// output byte and the whole arena of the shape it was compiled for, so
// AddressSanitizer reports any call that got through with a buffer too
// small.
//
//===----------------------------------------------------------------------===//

#include "mlcc/model.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace {

constexpr int64_t kMaxBufferBytes = 1 << 20;

// The descriptor under test and what its parts point to.
struct FuzzModel {
  std::deque<std::vector<int64_t>> dimArrays;
  std::vector<mlcc_model_tensor_desc> inputs, outputs;
  std::vector<mlcc_model_variant> variants;
  std::vector<uint8_t> mapped;
  mlcc_model_range range{};
  std::vector<int8_t> axes;
  mlcc_model_padded_dim padded{};
  mlcc_model_desc desc{};
  FuzzedDataProvider *data = nullptr; // the bounded outputs' extents
};

FuzzModel *current = nullptr;

int64_t pickDim(FuzzedDataProvider &fdp, bool allowDynamic) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
  case 0:
    return allowDynamic ? -1 : 1;
  case 1:
    return fdp.ConsumeIntegral<int64_t>(); // negative, huge
  default:
    return fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  }
}

uint64_t byteSize(const int64_t *dims, int32_t rank, int32_t dtype) {
  uint64_t bytes = mlcc_dtype_size(static_cast<mlcc_dtype>(dtype));
  for (int32_t i = 0; i < rank; ++i)
    bytes *= static_cast<uint64_t>(dims[i]);
  return bytes;
}

// What compiled code does with its buffers: reads every input byte, writes
// every output byte and the arena, for the shapes it was compiled for
// (`dims`: inputs' then outputs', rank values each).
int32_t touch(void *arena, uint64_t arenaBytes, const int64_t *dims,
              const void *const *inputs, void *const *outputs) {
  const mlcc_model_desc &desc = current->desc;
  volatile uint8_t sum = 0;
  for (uint32_t i = 0; i < desc.num_inputs; ++i) {
    uint64_t n = byteSize(dims, desc.inputs[i].rank, desc.inputs[i].dtype);
    const uint8_t *p = static_cast<const uint8_t *>(inputs[i]);
    for (uint64_t b = 0; b < n; ++b)
      sum += p[b];
    dims += desc.inputs[i].rank;
  }
  // A bounded output: the data decides its extents, at most max_dims.
  std::vector<int64_t> actual;
  for (uint32_t i = 0; i < desc.num_outputs; ++i) {
    const mlcc_model_tensor_desc &t = desc.outputs[i];
    std::vector<int64_t> shape(dims, dims + t.rank);
    if (t.max_dims)
      for (int32_t d = 0; d < t.rank; ++d)
        shape[d] =
            current->data->ConsumeIntegralInRange<int64_t>(0, t.max_dims[d]);
    // (A tensor without elements may have no data.)
    if (uint64_t n = byteSize(shape.data(), t.rank, t.dtype))
      std::memset(outputs[i], 0x5a, n);
    actual.insert(actual.end(), shape.begin(), shape.end());
    dims += t.rank;
  }
  if (arenaBytes)
    std::memset(arena, 0xa5, arenaBytes);
  bool bounded = false;
  for (uint32_t i = 0; i < desc.num_outputs; ++i)
    bounded |= desc.outputs[i].max_dims != nullptr;
  if (bounded && !actual.empty())
    std::memcpy(static_cast<char *>(arena) + desc.output_dims_offset,
                actual.data(), actual.size() * sizeof(int64_t));
  return MLCC_OK;
}

// The entry of a static model: the descriptor's own dims.
int32_t staticEntry(void *arena, const void *, const void *const *inputs,
                    void *const *outputs, mlcc_threadpool *) {
  std::vector<int64_t> dims;
  for (const auto &t : current->inputs)
    dims.insert(dims.end(), t.dims, t.dims + t.rank);
  for (const auto &t : current->outputs)
    dims.insert(dims.end(), t.dims, t.dims + t.rank);
  return touch(arena, current->desc.arena_bytes, dims.data(), inputs, outputs);
}

template <int V>
int32_t variantEntry(void *arena, const void *, const void *const *inputs,
                     void *const *outputs, mlcc_threadpool *) {
  const mlcc_model_variant &v = current->variants[V];
  return touch(arena, v.arena_bytes, v.dims, inputs, outputs);
}

constexpr mlcc_model_entry_fn kVariantEntries[] = {
    variantEntry<0>, variantEntry<1>, variantEntry<2>, variantEntry<3>};

const char *const kNames[] = {"a", "b", "c", "d", "e"};

mlcc_model_tensor_desc makeTensorDesc(FuzzModel &m, FuzzedDataProvider &fdp,
                                      uint32_t index, bool output,
                                      bool dynamic) {
  mlcc_model_tensor_desc t{};
  t.name = kNames[index % 5];
  t.rank = fdp.ConsumeIntegralInRange<int32_t>(-1, 4);
  t.dtype = fdp.ConsumeIntegralInRange<int32_t>(0, 14);
  std::vector<int64_t> &dims = m.dimArrays.emplace_back();
  for (int32_t d = 0; d < t.rank; ++d)
    dims.push_back(pickDim(fdp, dynamic));
  t.dims = t.rank > 0 ? dims.data() : nullptr;
  if (output && t.rank > 0 && fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
    std::vector<int64_t> &max = m.dimArrays.emplace_back();
    for (int32_t d = 0; d < t.rank; ++d) {
      if (fdp.ConsumeBool())
        dims[d] = -1;
      max.push_back(dims[d] >= 0 ? dims[d] : pickDim(fdp, false));
    }
    t.max_dims = max.data();
  }
  return t;
}

// The dims a variant (or a call) gives a tensor: its descriptor's where
// they are static, small values where they are not, sometimes anything.
void appendShapeLike(std::vector<int64_t> &out, const mlcc_model_tensor_desc &t,
                     FuzzedDataProvider &fdp) {
  for (int32_t d = 0; d < t.rank; ++d) {
    int64_t given = t.dims[d];
    if (t.max_dims && given < 0)
      given = t.max_dims[d];
    if (given < 0 || fdp.ConsumeIntegralInRange<int>(0, 15) == 0)
      given = pickDim(fdp, false);
    out.push_back(given);
  }
}

void buildModel(FuzzModel &m, FuzzedDataProvider &fdp) {
  uint32_t numInputs = fdp.ConsumeIntegralInRange<uint32_t>(0, 3);
  uint32_t numOutputs = fdp.ConsumeIntegralInRange<uint32_t>(0, 2);
  uint32_t numVariants = fdp.ConsumeIntegralInRange<uint32_t>(0, 4);
  bool dynamic = numVariants > 0;
  for (uint32_t i = 0; i < numInputs; ++i)
    m.inputs.push_back(makeTensorDesc(m, fdp, i, false, dynamic));
  for (uint32_t i = 0; i < numOutputs; ++i)
    m.outputs.push_back(makeTensorDesc(m, fdp, numInputs + i, true, dynamic));
  mlcc_model_desc &d = m.desc;
  d.abi_version = fdp.ConsumeIntegralInRange<int>(0, 31) == 0
                      ? fdp.ConsumeIntegral<uint32_t>()
                      : MLCC_MODEL_ABI_VERSION;
  d.num_inputs = numInputs;
  d.num_outputs = numOutputs;
  d.num_variants = numVariants;
  d.name = "fuzz";
  d.inputs = m.inputs.data();
  d.outputs = m.outputs.data();
  d.arena_bytes = fdp.ConsumeIntegralInRange<uint64_t>(0, 4096);
  d.entry = numVariants ? nullptr : staticEntry;
  // The bounded outputs' dims go after the arena's other uses, as the
  // compiler places them.
  uint64_t outputRanks = 0;
  bool bounded = false;
  for (const auto &t : m.outputs) {
    outputRanks += t.rank > 0 ? t.rank : 0;
    bounded |= t.max_dims != nullptr;
  }
  if (bounded) {
    d.output_dims_offset = (d.arena_bytes + 7) / 8 * 8;
    d.arena_bytes = d.output_dims_offset + outputRanks * sizeof(int64_t);
    // Sometimes not where the compiler puts them: must be refused.
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0)
      d.output_dims_offset += fdp.ConsumeIntegralInRange<uint64_t>(1, 64);
  }
  for (uint32_t v = 0; v < numVariants; ++v) {
    std::vector<int64_t> &dims = m.dimArrays.emplace_back();
    for (const auto &t : m.inputs)
      if (t.rank > 0)
        appendShapeLike(dims, t, fdp);
    for (const auto &t : m.outputs)
      if (t.rank > 0)
        appendShapeLike(dims, t, fdp);
    mlcc_model_variant variant{};
    variant.dims = dims.data();
    variant.arena_bytes =
        fdp.ConsumeIntegralInRange<uint64_t>(0, d.arena_bytes + 1);
    variant.entry = kVariantEntries[v];
    m.variants.push_back(variant);
  }
  d.variants = numVariants ? m.variants.data() : nullptr;
  if (dynamic && fdp.ConsumeBool()) {
    for (uint32_t i = 0; i < numInputs + numOutputs; ++i)
      m.mapped.push_back(fdp.ConsumeBool());
    m.range.name = "batch";
    m.range.min = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
    m.range.max = fdp.ConsumeIntegralInRange<int64_t>(0, 9);
    m.range.mapped = m.mapped.data();
    d.range = &m.range;
  }
  if (dynamic && fdp.ConsumeBool()) {
    for (uint32_t i = 0; i < numInputs + numOutputs; ++i)
      m.axes.push_back(fdp.ConsumeIntegralInRange<int8_t>(-1, 4));
    m.padded.name = "seq";
    m.padded.min = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
    m.padded.max = fdp.ConsumeIntegralInRange<int64_t>(0, 9);
    m.padded.axes = m.axes.data();
    m.padded.mask_input = fdp.ConsumeIntegralInRange<int32_t>(-2, 3);
    // Room for staging buffers, or not: too small must be refused.
    d.arena_bytes += fdp.ConsumeIntegralInRange<uint64_t>(0, 4096);
    d.padded = &m.padded;
  }
}

// A call's tensors; false when their buffers would be too large to have.
bool buildTensors(const std::vector<mlcc_model_tensor_desc> &descs,
                  FuzzedDataProvider &fdp,
                  std::deque<std::vector<int64_t>> &dims,
                  std::vector<std::vector<uint8_t> *> &buffers,
                  std::vector<mlcc_tensor> &out) {
  for (const auto &t : descs) {
    mlcc_tensor tensor{};
    tensor.rank = t.rank;
    tensor.dtype = static_cast<mlcc_dtype>(t.dtype);
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
      tensor.rank = fdp.ConsumeIntegralInRange<int32_t>(-1, 5);
      tensor.dtype =
          static_cast<mlcc_dtype>(fdp.ConsumeIntegralInRange<int>(0, 15));
    }
    std::vector<int64_t> &shape = dims.emplace_back();
    if (tensor.rank == t.rank && t.rank > 0)
      appendShapeLike(shape, t, fdp);
    else
      for (int32_t d = 0; d < tensor.rank; ++d)
        shape.push_back(pickDim(fdp, false));
    tensor.dims = tensor.rank > 0 ? shape.data() : nullptr;
    // The buffer the dims say, exactly (none for a malformed descriptor,
    // which must be refused before its data is looked at).
    uint64_t bytes = mlcc_dtype_size(tensor.dtype);
    bool valid = tensor.rank >= 0 && bytes > 0;
    for (int32_t d = 0; valid && d < tensor.rank; ++d) {
      valid = shape[d] >= 0 &&
              (shape[d] == 0 || bytes <= uint64_t(kMaxBufferBytes) / shape[d]);
      bytes = valid ? bytes * shape[d] : 0;
    }
    if (!valid && tensor.rank >= 0) {
      bool negative = false;
      for (int32_t d = 0; d < tensor.rank; ++d)
        negative |= shape[d] < 0;
      if (!negative && mlcc_dtype_size(tensor.dtype) > 0)
        return false; // a real buffer this size cannot be had here
    }
    if (valid && bytes > 0 && fdp.ConsumeIntegralInRange<int>(0, 31) != 0) {
      buffers.push_back(new std::vector<uint8_t>(bytes));
      tensor.data = buffers.back()->data();
    }
    out.push_back(tensor);
  }
  return true;
}

bool hasDescriptorShape(const mlcc_tensor &t, const mlcc_model_tensor_desc &d) {
  return t.rank == d.rank && t.dtype == d.dtype &&
         (t.rank <= 0 ||
          std::memcmp(t.dims, d.dims, t.rank * sizeof(int64_t)) == 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  FuzzModel model;
  model.data = &fdp;
  current = &model;
  buildModel(model, fdp);
  const mlcc_model_desc *desc = &model.desc;

  std::deque<std::vector<int64_t>> dims;
  std::vector<std::vector<uint8_t> *> buffers;
  std::vector<mlcc_tensor> inputs, outputs;
  bool haveBuffers = buildTensors(model.inputs, fdp, dims, buffers, inputs) &&
                     buildTensors(model.outputs, fdp, dims, buffers, outputs);
  mlcc_model_context *ctx = nullptr;
  if (mlcc_model_create(desc, nullptr, &ctx) == MLCC_OK) {
    if (haveBuffers)
      mlcc_model_run(desc, ctx, inputs.data(), outputs.data());
    std::vector<const void *> in;
    std::vector<void *> out;
    for (const auto &t : inputs)
      in.push_back(t.data);
    for (const auto &t : outputs)
      out.push_back(t.data);
    // Raw pointers carry no shapes: only a call whose buffers are the
    // descriptor's own sizes is fair, as the header's contract says.
    bool descriptorShapes = haveBuffers;
    for (size_t i = 0; i < inputs.size(); ++i)
      descriptorShapes &= hasDescriptorShape(inputs[i], model.inputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i)
      descriptorShapes &= hasDescriptorShape(outputs[i], model.outputs[i]);
    if (descriptorShapes)
      mlcc_model_run_pointers(desc, ctx, in.data(), out.data());
    mlcc_model_destroy(ctx);
  }
  if (haveBuffers && desc->arena_bytes <= uint64_t(kMaxBufferBytes)) {
    // Exactly arenaSize bytes, so that ASan sees a run past them.
    size_t arenaSize =
        fdp.ConsumeIntegralInRange<size_t>(0, desc->arena_bytes + 64);
    void *arena = nullptr;
    if (posix_memalign(&arena, 64, arenaSize ? arenaSize : 1) != 0)
      std::abort();
    mlcc_model_run_with_arena(desc, arena, arenaSize, inputs.data(),
                              outputs.data());
    std::free(arena);
  }
  for (auto *b : buffers)
    delete b;
  current = nullptr;
  return 0;
}
