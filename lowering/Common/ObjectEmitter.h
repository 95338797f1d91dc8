//===- ObjectEmitter.h - host IR and blobs -> one object --------*- C++ -*-===//
//
// The last step of an AOT compile: one relocatable object (ELF x86-64, or
// Mach-O arm64/x86-64 for an Apple host) holding
// the host schedule (LLVM IR compiled here), the generated kernels (machine
// code bytes from Xbyak) and the read-only data (weights), written in-process
// without an external assembler or linker.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_OBJECTEMITTER_H
#define MLCC_LOWERING_COMMON_OBJECTEMITTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class raw_pwrite_stream;
} // namespace llvm

namespace mlcc {

/// Who can see a symbol once the object is linked.
enum class SymbolScope {
  /// STB_GLOBAL, default visibility: the app (or another DSO) can call it.
  Exported,
  /// STB_GLOBAL, STV_HIDDEN: shared by the objects of one link, not exported
  /// from a shared library.
  Hidden,
  /// STB_LOCAL: only this object sees it (the host code still can).
  Local,
};

/// A complete function in machine code: position-independent x86-64 that
/// follows the SysV ABI (Xbyak output). The bytes are copied as they are, so
/// they must not need relocations: constants live inside the blob and are
/// reached RIP-relative.
struct KernelBlob {
  std::string name;
  /// Not owned; must stay alive until the emit call returns.
  llvm::ArrayRef<uint8_t> bytes;
  uint64_t alignment = 64;
  SymbolScope scope = SymbolScope::Exported;
};

/// Read-only bytes, usually a weight tensor. Zero-sized blobs are allowed (a
/// tensor with a zero dimension still gets its symbol).
struct DataBlob {
  std::string name;
  /// Not owned; must stay alive until the emit call returns.
  llvm::ArrayRef<uint8_t> bytes;
  uint64_t alignment = 64;
  SymbolScope scope = SymbolScope::Exported;
};

struct ObjectEmitterOptions {
  /// The host: x86_64-pc-linux-gnu (ELF), or an Apple triple
  /// (arm64-apple-macosx11.0.0, x86_64-apple-macosx11.0.0) for Mach-O.
  std::string triple = "x86_64-pc-linux-gnu";
  /// Where the kernels go; flagged "ax". ".text" is allowed too.
  std::string kernelSection = ".text.mlcc_kernels";
  /// Where the data blobs go; must be ".rodata" or start with ".rodata.", so
  /// LLVM keeps it read-only. Mach-O: always __TEXT,__const.
  std::string dataSection = ".rodata";
  /// The host schedule only moves pointers and calls kernels: it needs no
  /// AVX-512, and baseline x86-64 lets the same host code run anywhere.
  std::string hostCpu = "x86-64";
  std::string hostFeatures;
  llvm::CodeGenOptLevel optLevel = llvm::CodeGenOptLevel::Default;
  /// Run LLVM's -O2 pipeline on the host module before codegen (the
  /// portable lowerings' loops want the vectoriser).
  bool optimizeHost = false;
};

/// Compiles `host` (plain LLVM IR: the schedule, calling the kernels and
/// reading the data by name through external declarations) for
/// options.triple, PIC, and writes one relocatable object to `os`; for ELF:
/// Kernels become STT_FUNC symbols and data STT_OBJECT symbols, both with
/// their exact .size; the object has a .note.GNU-stack section. The same
/// inputs give a byte-identical object.
///
/// Names must be C identifiers ([A-Za-z_][A-Za-z0-9_]*), unique across
/// kernels, data and the functions and variables `host` defines. A host
/// declaration of a data name is replaced by the data's definition.
///
/// `host` is consumed: its triple and data layout are overwritten and the
/// data is added to it. The data bytes are copied into its LLVMContext and
/// stay there until that context is destroyed, so give each compile its own
/// context. Never aborts: bad input or an LLVM diagnostic gives an Error.
llvm::Error emitObject(std::unique_ptr<llvm::Module> host,
                       llvm::ArrayRef<KernelBlob> kernels,
                       llvm::ArrayRef<DataBlob> data,
                       llvm::raw_pwrite_stream &os,
                       const ObjectEmitterOptions &options = {});

/// emitObject into the file at `path`, replaced only once the whole object is
/// written: on failure `path` is left as it was.
llvm::Error emitObjectFile(std::unique_ptr<llvm::Module> host,
                           llvm::ArrayRef<KernelBlob> kernels,
                           llvm::ArrayRef<DataBlob> data, llvm::StringRef path,
                           const ObjectEmitterOptions &options = {});

} // namespace mlcc

#endif // MLCC_LOWERING_COMMON_OBJECTEMITTER_H
