//===- ModelAPI.cpp - The model's C API, defined in its object ------------===//

#include "ModelAPI.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"

using namespace llvm;

namespace mlcc::lowering {

namespace {

/// runtime/include/mlcc/model.h's MLCC_MODEL_ABI_VERSION.
constexpr uint32_t kModelABIVersion = 8;

// The values of runtime/include/mlcc/tensor.h's mlcc_dtype.
int32_t dtypeCode(const std::string &name) {
  static const char *const names[] = {"undefined", "f32", "f64", "f16", "bf16",
                                      "i8",        "u8",  "i16", "u16", "i32",
                                      "u32",       "i64", "u64", "bool"};
  for (int32_t i = 0; i < 14; ++i)
    if (name == names[i])
      return i;
  return 0;
}

class APIWriter {
public:
  APIWriter(Module &m, const ModelInterface &iface)
      : m(m), iface(iface), ctx(m.getContext()), ptr(PointerType::get(ctx, 0)),
        i32(Type::getInt32Ty(ctx)), i64(Type::getInt64Ty(ctx)),
        prefix("mlcc_" + iface.name + "_") {}

  void write(ArrayRef<HostEntry> entries, const DeviceProgramSymbols *device);

private:
  Constant *string(const std::string &s, const Twine &name);
  Constant *int64Array(const std::vector<uint64_t> &values, const Twine &name);
  Constant *tensorTable(const std::vector<InterfaceTensor> &tensors,
                        StringRef kind);
  Function *defineInvoke(StringRef entry, const Twine &name);
  Constant *variantTable(ArrayRef<HostEntry> entries);
  Constant *deviceProgram(const DeviceProgramSymbols &device);
  Constant *range(const InterfaceRange &r);
  Constant *padded(const InterfacePaddedDim &p);
  Constant *blob(const std::string &symbol);
  Function *exported(StringRef suffix, Type *result, ArrayRef<Type *> params);
  FunctionCallee runtime(StringRef name, Type *result,
                         ArrayRef<Type *> params);

  Module &m;
  const ModelInterface &iface;
  LLVMContext &ctx;
  PointerType *ptr;
  IntegerType *i32, *i64;
  std::string prefix;
};

Constant *APIWriter::string(const std::string &s, const Twine &name) {
  Constant *init = ConstantDataArray::getString(ctx, s);
  auto *gv = new GlobalVariable(m, init->getType(), true,
                                GlobalValue::PrivateLinkage, init, name);
  gv->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  return gv;
}

// An int64_t array in the object; null for no values.
Constant *APIWriter::int64Array(const std::vector<uint64_t> &values,
                                const Twine &name) {
  if (values.empty())
    return ConstantPointerNull::get(ptr);
  Constant *init = ConstantDataArray::get(ctx, values);
  return new GlobalVariable(m, init->getType(), true,
                            GlobalValue::PrivateLinkage, init, name);
}

// mlcc_model_tensor_desc[]: {name, dims, rank, dtype, max_dims}.
Constant *APIWriter::tensorTable(const std::vector<InterfaceTensor> &tensors,
                                 StringRef kind) {
  StructType *descType = StructType::get(ctx, {ptr, ptr, i32, i32, ptr});
  std::vector<Constant *> entries;
  for (auto [i, t] : llvm::enumerate(tensors)) {
    std::string base = prefix + kind.str() + std::to_string(i);
    std::vector<uint64_t> dims, maxDims;
    bool bounded = false;
    for (const InterfaceDim &d : t.dims) {
      dims.push_back(static_cast<uint64_t>(d.size));
      maxDims.push_back(static_cast<uint64_t>(d.bound >= 0 ? d.bound : d.size));
      bounded |= d.bound >= 0;
    }
    entries.push_back(ConstantStruct::get(
        descType,
        {string(t.name, base + "_name"), int64Array(dims, base + "_dims"),
         ConstantInt::get(i32, t.dims.size()),
         ConstantInt::get(i32, dtypeCode(t.dtype)),
         bounded ? int64Array(maxDims, base + "_max_dims")
                 : ConstantPointerNull::get(ptr)}));
  }
  if (entries.empty())
    return ConstantPointerNull::get(ptr);
  ArrayType *arrayType = ArrayType::get(descType, entries.size());
  return new GlobalVariable(m, arrayType, true, GlobalValue::PrivateLinkage,
                            ConstantArray::get(arrayType, entries),
                            prefix + kind + "s");
}

// i32 invoke(ptr arena, ptr weights, ptr inputs, ptr outputs, ptr pool): the
// descriptor's entry; unpacks the pointer arrays into the entry's arguments.
Function *APIWriter::defineInvoke(StringRef entryName, const Twine &name) {
  Function *entry = m.getFunction(entryName);
  // Only the descriptor and the API functions leave the object.
  entry->setLinkage(GlobalValue::InternalLinkage);
  auto *type = FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr}, false);
  Function *f = Function::Create(type, GlobalValue::InternalLinkage, name, m);
  IRBuilder<> b(BasicBlock::Create(ctx, "", f));
  std::vector<Value *> args{f->getArg(0), f->getArg(1)};
  auto load = [&](Value *array, size_t i) {
    Value *slot = b.CreateConstInBoundsGEP1_64(ptr, array, i);
    return b.CreateLoad(ptr, slot);
  };
  for (size_t i = 0; i < iface.inputs.size(); ++i)
    args.push_back(load(f->getArg(2), i));
  for (size_t i = 0; i < iface.outputs.size(); ++i)
    args.push_back(load(f->getArg(3), i));
  args.push_back(f->getArg(4));
  b.CreateRet(b.CreateCall(entry, args));
  return f;
}

Function *APIWriter::exported(StringRef suffix, Type *result,
                              ArrayRef<Type *> params) {
  auto *type = FunctionType::get(result, params, false);
  return Function::Create(type, GlobalValue::ExternalLinkage, prefix + suffix,
                          m);
}

FunctionCallee APIWriter::runtime(StringRef name, Type *result,
                                  ArrayRef<Type *> params) {
  return m.getOrInsertFunction(name,
                               FunctionType::get(result, params, false));
}

// mlcc_model_variant[]: each entry's dims (inputs then outputs), arena and
// invoke function.
Constant *APIWriter::variantTable(ArrayRef<HostEntry> entries) {
  StructType *variantType = StructType::get(ctx, {ptr, i64, ptr});
  std::vector<Constant *> variants;
  for (auto [k, e] : llvm::enumerate(entries)) {
    std::vector<uint64_t> dims;
    for (const auto *tensors : {&e.interface.inputs, &e.interface.outputs})
      for (const InterfaceTensor &t : *tensors)
        for (const InterfaceDim &d : t.dims)
          dims.push_back(static_cast<uint64_t>(d.size));
    Constant *dimsPtr =
        int64Array(dims, prefix + "variant" + Twine(k) + "_dims");
    variants.push_back(ConstantStruct::get(
        variantType,
        {dimsPtr, ConstantInt::get(i64, e.interface.arenaBytes),
         defineInvoke(e.symbol, prefix + "invoke" + Twine(k))}));
  }
  auto *arrayType = ArrayType::get(variantType, variants.size());
  return new GlobalVariable(m, arrayType, true, GlobalValue::PrivateLinkage,
                            ConstantArray::get(arrayType, variants),
                            prefix + "variants");
}

// mlcc_model_range: {name, min, max, mapped (a byte per input, then per
// output)}.
Constant *APIWriter::range(const InterfaceRange &r) {
  std::vector<uint8_t> mapped(r.mapped.begin(), r.mapped.end());
  Constant *flags = ConstantDataArray::get(ctx, mapped);
  auto *flagsVar =
      new GlobalVariable(m, flags->getType(), true, GlobalValue::PrivateLinkage,
                         flags, prefix + "range_mapped");
  StructType *rangeType = StructType::get(ctx, {ptr, i64, i64, ptr});
  Constant *init =
      ConstantStruct::get(rangeType, {string(r.name, prefix + "range_name"),
                                      ConstantInt::get(i64, r.min),
                                      ConstantInt::get(i64, r.max), flagsVar});
  return new GlobalVariable(m, rangeType, true, GlobalValue::PrivateLinkage,
                            init, prefix + "range");
}

// mlcc_model_padded_dim: {name, min, max, axes (an int8 per input, then
// per output), mask_input}.
Constant *APIWriter::padded(const InterfacePaddedDim &p) {
  std::vector<uint8_t> axes;
  for (int64_t a : p.axes)
    axes.push_back(static_cast<uint8_t>(static_cast<int8_t>(a)));
  Constant *data = ConstantDataArray::get(ctx, axes);
  auto *axesVar =
      new GlobalVariable(m, data->getType(), true, GlobalValue::PrivateLinkage,
                         data, prefix + "padded_axes");
  StructType *paddedType = StructType::get(ctx, {ptr, i64, i64, ptr, i32});
  Constant *init = ConstantStruct::get(
      paddedType,
      {string(p.name, prefix + "padded_name"), ConstantInt::get(i64, p.min),
       ConstantInt::get(i64, p.max), axesVar,
       ConstantInt::get(i32, static_cast<uint64_t>(p.maskInput), true)});
  return new GlobalVariable(m, paddedType, true, GlobalValue::PrivateLinkage,
                            init, prefix + "padded");
}

// A data blob the object emitter defines.
Constant *APIWriter::blob(const std::string &symbol) {
  if (GlobalVariable *gv = m.getGlobalVariable(symbol, true))
    return gv;
  return new GlobalVariable(m, Type::getInt8Ty(ctx), true,
                            GlobalValue::ExternalLinkage, nullptr, symbol);
}

// mlcc_device_program: {api, num_kernels, kernels, weights, weights_bytes},
// each kernel {name, code, code_bytes, num_buffers, workgroup_size[3]}.
Constant *APIWriter::deviceProgram(const DeviceProgramSymbols &device) {
  StructType *kernelType =
      StructType::get(ctx, {ptr, ptr, i64, i32, i32, i32, i32});
  std::vector<Constant *> kernels;
  for (const DeviceProgramSymbols::Kernel &k : device.kernels)
    kernels.push_back(ConstantStruct::get(
        kernelType, {string(k.name, prefix + k.name + "_name"),
                     blob(k.codeSymbol), ConstantInt::get(i64, k.codeBytes),
                     ConstantInt::get(i32, k.numBuffers),
                     ConstantInt::get(i32, k.workgroupSize[0]),
                     ConstantInt::get(i32, k.workgroupSize[1]),
                     ConstantInt::get(i32, k.workgroupSize[2])}));
  Constant *table = ConstantPointerNull::get(ptr);
  if (!kernels.empty()) {
    auto *arrayType = ArrayType::get(kernelType, kernels.size());
    table = new GlobalVariable(m, arrayType, true, GlobalValue::PrivateLinkage,
                               ConstantArray::get(arrayType, kernels),
                               prefix + "kernels");
  }
  StructType *programType = StructType::get(ctx, {i32, i32, ptr, ptr, i64});
  Constant *program = ConstantStruct::get(
      programType, {ConstantInt::get(i32, device.api),
                    ConstantInt::get(i32, device.kernels.size()), table,
                    device.weightsSymbol.empty()
                        ? static_cast<Constant *>(ConstantPointerNull::get(ptr))
                        : blob(device.weightsSymbol),
                    ConstantInt::get(i64, device.weightsBytes)});
  return new GlobalVariable(m, programType, true, GlobalValue::PrivateLinkage,
                            program, prefix + "device_program");
}

void APIWriter::write(ArrayRef<HostEntry> entries,
                      const DeviceProgramSymbols *device) {
  // mlcc_model_desc: see runtime/include/mlcc/model.h. One entry is the
  // descriptor's; several, or the chunks of a range, are its variants.
  bool variants = entries.size() > 1 || iface.range || iface.padded;
  StructType *descType =
      StructType::get(ctx, {i32, i32, i32, i32, ptr, ptr, ptr, i64, ptr, i64,
                            i64, ptr, i64, ptr, i64, ptr, ptr, ptr});
  Constant *desc = ConstantStruct::get(
      descType,
      {ConstantInt::get(i32, kModelABIVersion),
       ConstantInt::get(i32, iface.inputs.size()),
       ConstantInt::get(i32, iface.outputs.size()),
       ConstantInt::get(i32, variants ? entries.size() : 0),
       string(iface.name, prefix + "name"), tensorTable(iface.inputs, "input"),
       tensorTable(iface.outputs, "output"),
       ConstantInt::get(i64, iface.arenaBytes),
       variants ? static_cast<Constant *>(ConstantPointerNull::get(ptr))
                : defineInvoke(entries.front().symbol, prefix + "invoke"),
       ConstantInt::get(i64, iface.externalWeights ? iface.weightsBytes : 0),
       ConstantInt::get(i64,
                        iface.externalWeights ? iface.weightsFingerprint : 0),
       variants ? variantTable(entries)
                : static_cast<Constant *>(ConstantPointerNull::get(ptr)),
       ConstantInt::get(i64, iface.outputDimsOffset),
       device ? deviceProgram(*device)
              : static_cast<Constant *>(ConstantPointerNull::get(ptr)),
       ConstantInt::get(i64, iface.cpuFeatures),
       iface.cpuName.empty()
           ? static_cast<Constant *>(ConstantPointerNull::get(ptr))
           : string(iface.cpuName, prefix + "cpu_name"),
       iface.range ? range(*iface.range)
                   : static_cast<Constant *>(ConstantPointerNull::get(ptr)),
       iface.padded ? padded(*iface.padded)
                    : static_cast<Constant *>(ConstantPointerNull::get(ptr))});
  auto *descVar =
      new GlobalVariable(m, descType, true, GlobalValue::ExternalLinkage, desc,
                         modelDescriptorSymbol(iface));
  descVar->setAlignment(Align(8));

  Type *voidTy = Type::getVoidTy(ctx);
  auto forward = [&](Function *f, FunctionCallee callee) {
    IRBuilder<> b(BasicBlock::Create(ctx, "", f));
    std::vector<Value *> args{descVar};
    for (Argument &a : f->args())
      args.push_back(&a);
    Value *r = b.CreateCall(callee, args);
    if (f->getReturnType()->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(r);
  };
  if (iface.externalWeights) {
    // create(pool, path, out) -> mlcc_model_create_from_file(desc, path,
    // pool, out); create_from_memory(pool, image, size, out) likewise.
    auto reorder = [&](Function *f, FunctionCallee callee, unsigned n) {
      IRBuilder<> b(BasicBlock::Create(ctx, "", f));
      std::vector<Value *> args{descVar};
      for (unsigned i = 1; i < n; ++i)
        args.push_back(f->getArg(i));
      args.push_back(f->getArg(0));
      args.push_back(f->getArg(n));
      b.CreateRet(b.CreateCall(callee, args));
    };
    reorder(exported("create", i32, {ptr, ptr, ptr}),
            runtime("mlcc_model_create_from_file", i32, {ptr, ptr, ptr, ptr}),
            2);
    reorder(exported("create_from_memory", i32, {ptr, ptr, i64, ptr}),
            runtime("mlcc_model_create_from_memory", i32,
                    {ptr, ptr, i64, ptr, ptr}),
            3);
  } else {
    forward(exported("create", i32, {ptr, ptr}),
            runtime("mlcc_model_create", i32, {ptr, ptr, ptr}));
    forward(exported("run_with_arena", i32, {ptr, i64, ptr, ptr}),
            runtime("mlcc_model_run_with_arena", i32,
                    {ptr, ptr, i64, ptr, ptr}));
  }
  forward(exported("run", i32, {ptr, ptr, ptr}),
          runtime("mlcc_model_run", i32, {ptr, ptr, ptr, ptr}));
  {
    Function *f = exported("destroy", voidTy, {ptr});
    IRBuilder<> b(BasicBlock::Create(ctx, "", f));
    b.CreateCall(runtime("mlcc_model_destroy", voidTy, {ptr}), {f->getArg(0)});
    b.CreateRetVoid();
  }

  // run_static(ctx, in..., out...): the pointers into two arrays; only for
  // static shapes, as the header declares it.
  if (variants || iface.outputDimsOffset != 0)
    return;
  size_t numIn = iface.inputs.size(), numOut = iface.outputs.size();
  std::vector<Type *> params(1 + numIn + numOut, ptr);
  Function *f = exported("run_static", i32, params);
  IRBuilder<> b(BasicBlock::Create(ctx, "", f));
  auto array = [&](size_t first, size_t count) -> Value * {
    if (count == 0)
      return ConstantPointerNull::get(ptr);
    Value *a = b.CreateAlloca(ptr, ConstantInt::get(i64, count));
    for (size_t i = 0; i < count; ++i)
      b.CreateStore(f->getArg(first + i),
                    b.CreateConstInBoundsGEP1_64(ptr, a, i));
    return a;
  };
  Value *ins = array(1, numIn);
  Value *outs = array(1 + numIn, numOut);
  b.CreateRet(b.CreateCall(
      runtime("mlcc_model_run_pointers", i32, {ptr, ptr, ptr, ptr}),
      {descVar, f->getArg(0), ins, outs}));
}

} // namespace

std::string modelDescriptorSymbol(const ModelInterface &iface) {
  return "mlcc_" + iface.name + "_model";
}

void addModelAPI(Module &m, const ModelInterface &iface,
                 ArrayRef<HostEntry> entries,
                 const DeviceProgramSymbols *device) {
  APIWriter(m, iface).write(entries, device);
}

} // namespace mlcc::lowering
