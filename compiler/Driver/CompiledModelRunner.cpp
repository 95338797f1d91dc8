//===- CompiledModelRunner.cpp - Compile for a target and run here --------===//

#include "mlcc/Driver/CompiledModelRunner.h"

#include "Targets.h"

#include "llvm/Support/Error.h"

#include <cstring>

namespace mlcc {

using ref::Status;
using ref::Tensor;

Status compileForTarget(llvm::ArrayRef<mlir::ModuleOp> modules,
                        const std::string &target,
                        const lowering::CompileModelOptions &options,
                        lowering::CompiledModel &out) {
  llvm::Expected<std::unique_ptr<lowering::Target>> backend =
      lowering::createTarget(target, options.target);
  if (!backend)
    return Status::error(llvm::toString(backend.takeError()));
  std::vector<std::string> errors;
  if (succeeded(
          lowering::compileModel(modules, **backend, options, out, errors)))
    return Status::success();
  std::string message;
  for (const std::string &e : errors)
    message += (message.empty() ? "" : "\n") + e;
  return Status::error(message);
}

template <typename T> static T *alignUp(T *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  uintptr_t aligned = (address + MLCC_ARENA_ALIGNMENT - 1) /
                      MLCC_ARENA_ALIGNMENT * MLCC_ARENA_ALIGNMENT;
  return p + (aligned - address) / sizeof(T);
}

Status CompiledModelRunner::load(const lowering::CompiledModel &compiled,
                                 mlcc_threadpool *pool,
                                 std::unique_ptr<CompiledModelRunner> &out,
                                 void (*profileHook)(int32_t)) {
  if (compiled.hostTriple != lowering::kLinuxHostTriple)
    return Status::error("the object is for ", compiled.hostTriple,
                         "; this process cannot run it (--target metal: "
                         "link it into an app on that host, or run the same "
                         "kernels' SPIR-V here with --target vulkan)");
  auto model = lowering::InProcessModel::load(
      compiled.object, compiled.interface.name, profileHook);
  if (!model)
    return Status::error("cannot load the compiled model: ",
                         llvm::toString(model.takeError()));
  std::unique_ptr<CompiledModelRunner> runner(new CompiledModelRunner());
  runner->model = std::move(*model);
  runner->pool = pool;
  mlcc_status status;
  if (compiled.interface.externalWeights) {
    // The weights file's image, 64-byte aligned, as an application that
    // maps the file would hand it over.
    const std::string &file = compiled.weightsFile;
    runner->weightsImage.assign(file.size() + MLCC_ARENA_ALIGNMENT, 0);
    char *image = alignUp(runner->weightsImage.data());
    std::memcpy(image, file.data(), file.size());
    runner->weights = image + sizeof(mlcc_weights_header);
    status = mlcc_model_create_from_memory(runner->descriptor(), image,
                                           file.size(), pool, &runner->ctx);
  } else {
    status = mlcc_model_create(runner->descriptor(), pool, &runner->ctx);
  }
  if (status != MLCC_OK)
    return Status::error(mlcc_last_error_message());
  out = std::move(runner);
  return Status::success();
}

Status CompiledModelRunner::compileAndLoad(
    mlir::ModuleOp module, const std::string &target,
    const lowering::CompileModelOptions &options, mlcc_threadpool *pool,
    std::unique_ptr<CompiledModelRunner> &out) {
  lowering::CompiledModel compiled;
  MLCC_RETURN_IF_ERROR(compileForTarget(module, target, options, compiled));
  return load(compiled, pool, out);
}

CompiledModelRunner::~CompiledModelRunner() { mlcc_model_destroy(ctx); }

static mlcc_tensor describe(const Tensor &t, std::vector<int64_t> &dims) {
  dims.assign(t.shape().begin(), t.shape().end());
  mlcc_tensor d;
  d.data = const_cast<void *>(t.raw());
  d.dims = dims.empty() ? nullptr : dims.data();
  d.rank = static_cast<int32_t>(dims.size());
  d.dtype = static_cast<mlcc_dtype>(t.dtype());
  return d;
}

// Whether dim `d` of tensor `i` (inputs, then outputs) is a range's: the
// batch's dim 0 or a range of lengths' axis.
static bool rangeDim(const mlcc_model_desc *desc, uint32_t i, int64_t d) {
  return (desc->range && desc->range->mapped[i] && d == 0) ||
         (desc->padded && desc->padded->axes[i] == d);
}

// Whether `dims` (a descriptor's, -1 for any) admit `shape` of tensor `i`,
// the ranges' dims left out.
static bool dimsAdmit(const mlcc_model_desc *desc, uint32_t i,
                      const int64_t *dims, const ref::Shape &shape) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (!rangeDim(desc, i, d) && dims[d] != -1 && dims[d] != shape[d])
      return false;
  return true;
}

// The dims of output `o` for `inputs`: the descriptor's, or with variants
// those of the variant the inputs choose, the ranges' dims being the
// inputs'. Inputs that no variant takes leave -1s, made 0 here: the
// runtime's check of the inputs then says what was compiled.
static std::vector<int64_t> outputDims(const mlcc_model_desc *desc,
                                       const std::vector<Tensor> &inputs,
                                       uint32_t o) {
  const mlcc_model_tensor_desc &out = desc->outputs[o];
  const int64_t *dims = out.max_dims ? out.max_dims : out.dims;
  std::vector<int64_t> result(dims, dims + out.rank);
  for (uint32_t v = 0; v < desc->num_variants; ++v) {
    const int64_t *variant = desc->variants[v].dims;
    bool chosen = true;
    for (uint32_t i = 0; i < desc->num_inputs && chosen; ++i) {
      chosen = inputs[i].shape().size() ==
                   static_cast<size_t>(desc->inputs[i].rank) &&
               dimsAdmit(desc, i, variant, inputs[i].shape());
      variant += desc->inputs[i].rank;
    }
    if (!chosen)
      continue;
    for (uint32_t j = 0; j < o; ++j)
      variant += desc->outputs[j].rank;
    result.assign(variant, variant + out.rank);
    break;
  }
  // A range's dim is the inputs' (the first input that has it).
  for (size_t d = 0; d < result.size(); ++d)
    for (uint32_t i = 0; i < desc->num_inputs; ++i) {
      const ref::Shape &shape = inputs[i].shape();
      bool mapped = desc->range && d == 0 &&
                    desc->range->mapped[desc->num_inputs + o] &&
                    desc->range->mapped[i] && !shape.empty();
      bool padded =
          desc->padded &&
          desc->padded->axes[desc->num_inputs + o] == static_cast<int64_t>(d) &&
          desc->padded->axes[i] >= 0 &&
          desc->padded->axes[i] < static_cast<int64_t>(shape.size());
      if (mapped || padded) {
        result[d] = shape[mapped ? 0 : desc->padded->axes[i]];
        break;
      }
    }
  for (int64_t &d : result)
    d = std::max<int64_t>(d, 0);
  return result;
}

Status CompiledModelRunner::run(const std::vector<Tensor> &inputs,
                                std::vector<Tensor> &outputs) {
  const mlcc_model_desc *desc = descriptor();
  if (inputs.size() != desc->num_inputs)
    return Status::error("the model has ", desc->num_inputs, " inputs, got ",
                         inputs.size());
  outputs.clear();
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    // An output whose extents come from the data: a buffer of the bound.
    std::vector<int64_t> dims = outputDims(desc, inputs, i);
    outputs.emplace_back(static_cast<ref::DType>(desc->outputs[i].dtype),
                         ref::Shape(dims.begin(), dims.end()));
    if (poisonArena)
      std::memset(outputs.back().raw(), 0xff, outputs.back().byteSize());
  }
  std::vector<std::vector<int64_t>> dims(inputs.size() + outputs.size());
  std::vector<mlcc_tensor> in, out;
  for (size_t i = 0; i < inputs.size(); ++i)
    in.push_back(describe(inputs[i], dims[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    out.push_back(describe(outputs[i], dims[inputs.size() + i]));
  mlcc_status status;
  // A device model's arena is the device's (zero-filled at create time).
  // The entry of a model with variants is the runtime's to choose: it runs
  // in the context's arena (not poisoned) with a pool or external weights.
  bool ownEntry = desc->num_variants == 0 || !(pool || weights);
  if (poisonArena && !desc->device && ownEntry) {
    poisonedArena.assign(desc->arena_bytes + MLCC_ARENA_ALIGNMENT, 0xff);
    void *aligned = alignUp(poisonedArena.data());
    if (pool || weights) {
      // The entry itself, so that the poisoned arena is used with the
      // pool or the weights (run_with_arena is single-threaded and for
      // weights in the object, by contract).
      std::vector<const void *> inPtrs;
      std::vector<void *> outPtrs;
      for (const mlcc_tensor &t : in)
        inPtrs.push_back(t.data);
      for (const mlcc_tensor &t : out)
        outPtrs.push_back(t.data);
      status = static_cast<mlcc_status>(
          desc->entry(aligned, weights, inPtrs.data(), outPtrs.data(), pool));
      if (status == MLCC_OK)
        mlcc_model_output_dims(desc, aligned, out.data());
    } else {
      status = mlcc_model_run_with_arena(desc, aligned, desc->arena_bytes,
                                         in.data(), out.data());
    }
  } else {
    status = mlcc_model_run(desc, ctx, in.data(), out.data());
  }
  if (status != MLCC_OK)
    return Status::error(mlcc_last_error_message());
  // The dense tensors of the actual extents, at the start of the buffers.
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    if (!desc->outputs[i].max_dims)
      continue;
    ref::Tensor actual(outputs[i].dtype(),
                       ref::Shape(out[i].dims, out[i].dims + out[i].rank));
    std::memcpy(actual.raw(), outputs[i].raw(), actual.byteSize());
    outputs[i] = std::move(actual);
  }
  return Status::success();
}

} // namespace mlcc
