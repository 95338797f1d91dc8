//===- ObjectEmitter.cpp - host IR and blobs -> one object ----------------===//
//
// One LLVM codegen run writes the whole object, so the host code, kernels and
// data share one symbol table and the host's references to them resolve
// inside the object, with no `ld -r` afterwards:
//  - Kernels go in as module-level inline asm (`.p2align`, `.globl`, `.type
//    @function`, `.ascii "..."`, `.size`): the only way through LLVM IR to
//    get an STT_FUNC symbol with an exact size over raw bytes. The asm text is
//    parsed, about 0.1-0.3 s per MB of code here; kernels are KBs each.
//  - Data goes in as constant [N x i8] globals with an explicit section: the
//    AsmPrinter emits each with one emitBytes call, so weights cost copies,
//    not a parse (100 MB: about 1 s here, the time of three fresh 100 MB
//    copies on this VM). It also emits .type @object and .size for them.
//  - An Apple host (Mach-O, arm64 or x86-64) takes the same host IR and
//    data; its data goes to __TEXT,__const. Machine-code kernels are ELF
//    x86-64 only: only the avx512 target makes them.
//
//===----------------------------------------------------------------------===//

#include "ObjectEmitter.h"

#include "llvm-c/Target.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace llvm;

namespace mlcc {
namespace {

// Page size: enough for any vector or cache-line use, and it keeps a typo
// from padding the object by gigabytes.
constexpr uint64_t kMaxAlignment = 4096;

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(),
                           "object emitter: " + message);
}

// Only the hosts objects are written for (x86-64, and arm64 for Apple):
// registering every target would cost startup time for nothing.
void initializeHostTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
  });
}

// "x86-64", "arm64": the architectures as the messages name them.
std::string archName(const Triple &triple) {
  return triple.getArch() == Triple::x86_64 ? "x86-64" : "arm64";
}

// The formats and architectures the host code may be compiled for.
Error checkTriple(const Triple &triple) {
  bool elfX86 = triple.isOSBinFormatELF() && triple.getArch() == Triple::x86_64;
  bool appleHost = triple.isOSDarwin() && (triple.getArch() == Triple::x86_64 ||
                                           triple.getArch() == Triple::aarch64);
  if (!elfX86 && !appleHost)
    return makeError("triple '" + triple.str() +
                     "' is not a host objects are written for "
                     "(x86_64 ELF, or arm64/x86_64 Apple)");
  return Error::success();
}

// C identifiers: they are what the generated header declares, and they need
// no quoting in the asm we write.
bool isValidSymbolName(StringRef name) {
  if (name.empty() || isDigit(name.front()))
    return false;
  return llvm::all_of(name, [](char c) { return isAlnum(c) || c == '_'; });
}

bool isValidSectionName(StringRef name) {
  return name.size() > 1 && name.front() == '.' &&
         llvm::all_of(
             name, [](char c) { return isAlnum(c) || c == '_' || c == '.'; });
}

Error checkAlignment(StringRef what, StringRef name, uint64_t alignment) {
  if (!isPowerOf2_64(alignment) || alignment > kMaxAlignment)
    return makeError(what + " '" + name + "' has alignment " +
                     Twine(alignment) +
                     "; it must be a power of two <= " + Twine(kMaxAlignment));
  return Error::success();
}

// Names must be unique across kernels and data, and must not be defined by
// the host; the host may only declare them (kernels as functions, data as
// variables) to refer to them.
Error checkInputs(Module &host, ArrayRef<KernelBlob> kernels,
                  ArrayRef<DataBlob> data, const ObjectEmitterOptions &options,
                  const Triple &triple) {
  if (!triple.isOSBinFormatELF()) {
    if (!kernels.empty())
      return makeError("machine-code kernels go into ELF x86-64 objects "
                       "only, not for '" +
                       triple.str() + "'");
  } else if (!isValidSectionName(options.kernelSection) ||
             !StringRef(options.kernelSection).starts_with(".text"))
    return makeError("kernel section '" + options.kernelSection +
                     "' must be .text or .text.<name>");
  StringRef dataSection = options.dataSection;
  if (!triple.isOSBinFormatELF()) {
    if (dataSection != ".rodata")
      return makeError("data section '" + dataSection +
                       "' is an ELF section; Mach-O data goes to "
                       "__TEXT,__const");
  } else if (!isValidSectionName(dataSection) ||
             !(dataSection == ".rodata" || dataSection.starts_with(".rodata.")))
    return makeError("data section '" + dataSection +
                     "' must be .rodata or .rodata.<name>");

  StringSet<> seen;
  auto checkName = [&](StringRef what, StringRef name) -> Error {
    if (!isValidSymbolName(name))
      return makeError(what + " name '" + name +
                       "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
    if (!seen.insert(name).second)
      return makeError("symbol '" + name + "' is given more than once");
    if (GlobalValue *gv = host.getNamedValue(name))
      if (!gv->isDeclaration())
        return makeError(what + " '" + name +
                         "' is already defined by the host module");
    return Error::success();
  };

  for (const KernelBlob &kernel : kernels) {
    if (Error err = checkName("kernel", kernel.name))
      return err;
    if (Error err = checkAlignment("kernel", kernel.name, kernel.alignment))
      return err;
    if (kernel.bytes.empty())
      return makeError("kernel '" + kernel.name + "' has no code");
    GlobalValue *gv = host.getNamedValue(kernel.name);
    if (gv && !isa<Function>(gv))
      return makeError("kernel '" + kernel.name +
                       "' is declared as a variable in the host module; "
                       "declare it as a function");
  }
  for (const DataBlob &blob : data) {
    if (Error err = checkName("data", blob.name))
      return err;
    if (Error err = checkAlignment("data", blob.name, blob.alignment))
      return err;
    GlobalValue *gv = host.getNamedValue(blob.name);
    if (gv && !isa<GlobalVariable>(gv))
      return makeError("data '" + blob.name +
                       "' is declared as a function in the host module; "
                       "declare it as a global variable");
    if (gv && gv->getAddressSpace() != 0)
      return makeError("data '" + blob.name +
                       "' is declared in address space " +
                       Twine(gv->getAddressSpace()) + "; use 0");
  }
  return Error::success();
}

void setScope(GlobalValue &gv, SymbolScope scope) {
  switch (scope) {
  case SymbolScope::Exported:
    gv.setVisibility(GlobalValue::DefaultVisibility);
    break;
  case SymbolScope::Hidden:
    gv.setVisibility(GlobalValue::HiddenVisibility);
    gv.setDSOLocal(true);
    break;
  case SymbolScope::Local:
    // An IR declaration cannot be internal; dso_local tells codegen the
    // definition is in this object, so it uses no PLT or GOT.
    if (gv.isDeclaration())
      gv.setDSOLocal(true);
    else
      gv.setLinkage(GlobalValue::InternalLinkage);
    break;
  }
}

// `.ascii` strings, printable bytes as they are and the rest as three-digit
// octal escapes: the parser reads a string token in one go, where `.byte`
// lists cost an expression per byte (measured 5x slower).
void appendEscapedBytes(raw_ostream &os, ArrayRef<uint8_t> bytes) {
  constexpr size_t kBytesPerLine = 64;
  for (size_t i = 0; i < bytes.size(); i += kBytesPerLine) {
    os << "\t.ascii \"";
    for (uint8_t byte :
         bytes.slice(i, std::min(kBytesPerLine, bytes.size() - i))) {
      if (byte >= 0x20 && byte < 0x7f && byte != '"' && byte != '\\') {
        os << char(byte);
        continue;
      }
      char escape[4] = {'\\', char('0' + (byte >> 6)),
                        char('0' + ((byte >> 3) & 7)), char('0' + (byte & 7))};
      os.write(escape, sizeof(escape));
    }
    os << "\"\n";
  }
}

void appendKernelAsm(std::string &asmText, const KernelBlob &kernel,
                     StringRef section) {
  raw_string_ostream os(asmText);
  os << "\t.pushsection " << section << ",\"ax\",@progbits\n";
  os << "\t.p2align " << Log2_64(kernel.alignment) << "\n";
  if (kernel.scope != SymbolScope::Local)
    os << "\t.globl " << kernel.name << "\n";
  if (kernel.scope == SymbolScope::Hidden)
    os << "\t.hidden " << kernel.name << "\n";
  os << "\t.type " << kernel.name << ",@function\n";
  os << kernel.name << ":\n";
  appendEscapedBytes(os, kernel.bytes);
  os << "\t.size " << kernel.name << ", .-" << kernel.name << "\n";
  os << "\t.popsection\n";
}

void addData(Module &host, const DataBlob &blob, StringRef section) {
  LLVMContext &ctx = host.getContext();
  StringRef raw(reinterpret_cast<const char *>(blob.bytes.data()),
                blob.bytes.size());
  Constant *init =
      ConstantDataArray::getRaw(raw, blob.bytes.size(), Type::getInt8Ty(ctx));
  auto *gv = new GlobalVariable(host, init->getType(), /*isConstant=*/true,
                                GlobalValue::ExternalLinkage, init, "");
  // The explicit section also keeps an all-zero blob out of .bss.
  gv->setSection(section);
  gv->setAlignment(Align(blob.alignment));
  if (GlobalVariable *decl = host.getGlobalVariable(blob.name, true)) {
    decl->replaceAllUsesWith(gv);
    gv->takeName(decl);
    decl->eraseFromParent();
  } else {
    gv->setName(blob.name);
  }
  setScope(*gv, blob.scope);
}

// LLVM reports inline asm and MC errors through the context; the default
// handler prints and exits, so collect them instead.
struct CollectingHandler : DiagnosticHandler {
  std::string errors;
  bool handleDiagnostics(const DiagnosticInfo &info) override {
    if (info.getSeverity() != DS_Error)
      return false;
    raw_string_ostream os(errors);
    if (!errors.empty())
      os << "; ";
    DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    return true;
  }
};

class ScopedHandler {
public:
  explicit ScopedHandler(LLVMContext &ctx)
      : ctx(ctx), saved(ctx.getDiagnosticHandler()) {
    auto handler = std::make_unique<CollectingHandler>();
    collected = handler.get();
    ctx.setDiagnosticHandler(std::move(handler));
  }
  ~ScopedHandler() { ctx.setDiagnosticHandler(std::move(saved)); }
  const std::string &errors() const { return collected->errors; }

private:
  LLVMContext &ctx;
  std::unique_ptr<DiagnosticHandler> saved;
  CollectingHandler *collected;
};

// Before kernels and data are added: the optimiser has nothing to do with
// inline asm or weight bytes.
void optimize(Module &host, TargetMachine &machine) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb(&machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
  mpm.run(host, mam);
}

} // namespace

Error emitObject(std::unique_ptr<Module> host, ArrayRef<KernelBlob> kernels,
                 ArrayRef<DataBlob> data, raw_pwrite_stream &os,
                 const ObjectEmitterOptions &options) {
  if (!host)
    return makeError("no host module");
  Triple triple(Triple::normalize(options.triple));
  if (Error err = checkTriple(triple))
    return err;
  if (Error err = checkInputs(*host, kernels, data, options, triple))
    return err;

  initializeHostTargets();
  std::string lookupError;
  const Target *target =
      TargetRegistry::lookupTarget(triple.str(), lookupError);
  if (!target)
    return makeError("no target for '" + triple.str() + "': " + lookupError);
  // LLVM only warns on stderr about an unknown CPU and then ignores it.
  std::unique_ptr<MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple.str(), "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(options.hostCpu))
    return makeError("'" + options.hostCpu + "' is not a known " +
                     archName(triple) + " CPU");
  std::unique_ptr<TargetMachine> machine(target->createTargetMachine(
      triple.str(), options.hostCpu, options.hostFeatures, TargetOptions(),
      Reloc::PIC_, std::nullopt, options.optLevel));
  if (!machine)
    return makeError("cannot create a target machine for CPU '" +
                     options.hostCpu + "'");
  host->setTargetTriple(triple.str());
  host->setDataLayout(machine->createDataLayout());

  // Verify before codegen: codegen asserts (or crashes) on broken IR.
  std::string verifyMessage;
  raw_string_ostream verifyStream(verifyMessage);
  if (verifyModule(*host, &verifyStream))
    return makeError("invalid host module: " + verifyMessage);

  if (options.optimizeHost)
    optimize(*host, *machine);

  std::string asmText;
  for (const KernelBlob &kernel : kernels) {
    appendKernelAsm(asmText, kernel, options.kernelSection);
    if (Function *decl = host->getFunction(kernel.name))
      setScope(*decl, kernel.scope);
  }
  if (!asmText.empty())
    host->appendModuleInlineAsm(asmText);
  std::string dataSection =
      triple.isOSBinFormatMachO() ? "__TEXT,__const" : options.dataSection;
  for (const DataBlob &blob : data)
    addData(*host, blob, dataSection);

  ScopedHandler handler(host->getContext());
  legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   CodeGenFileType::ObjectFile))
    return makeError("the " + archName(triple) +
                     " target cannot emit object files");
  passes.run(*host);
  if (!handler.errors().empty())
    return makeError(handler.errors());
  return Error::success();
}

// Written to a temporary file beside `path` and renamed over it at the end,
// so a build never sees half an object, and nothing is left after a failure.
Error emitObjectFile(std::unique_ptr<Module> host, ArrayRef<KernelBlob> kernels,
                     ArrayRef<DataBlob> data, StringRef path,
                     const ObjectEmitterOptions &options) {
  int fd = -1;
  SmallString<256> tempPath;
  if (std::error_code ec =
          sys::fs::createUniqueFile(path + "-%%%%%%%%.tmp", fd, tempPath))
    return makeError("cannot create a file beside '" + path +
                     "': " + ec.message());
  Error err = Error::success();
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    err = emitObject(std::move(host), kernels, data, os, options);
    os.close();
    // A stream left in error would abort in its destructor.
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      if (!err)
        err = makeError("cannot write '" + tempPath + "': " + ec.message());
    }
  }
  if (!err)
    if (std::error_code ec = sys::fs::rename(tempPath, path))
      err = makeError("cannot rename '" + tempPath + "' to '" + path +
                      "': " + ec.message());
  if (err)
    sys::fs::remove(tempPath);
  return err;
}

} // namespace mlcc
