//===- CudaToolkit.cpp - libdevice and ptxas from the CUDA toolkit --------===//
//
// The compiler never needs the toolkit: without it the PTX is the whole
// product. With it, math functions link against libdevice (as clang and
// nvcc do) and every kernel is assembled by ptxas at compile time, which
// both ships cubins (no JIT at create time) and proves the PTX valid.
//
//===----------------------------------------------------------------------===//

#include "CudaTarget.h"
#include "ExternalTool.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>

namespace mlcc::cuda {
namespace {

bool hasLibdevice(llvm::StringRef root) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::is_regular_file(path);
}

std::string findPtxas(llvm::StringRef root) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "bin", "ptxas");
  if (!root.empty() && llvm::sys::fs::can_execute(path))
    return path.str().str();
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  return "";
}

} // namespace

llvm::Expected<CudaToolkit> findCudaToolkit(llvm::StringRef given) {
  CudaToolkit toolkit;
  if (given == "none")
    return toolkit;
  if (!given.empty()) {
    if (!hasLibdevice(given))
      return llvm::createStringError(
          "--cuda-path: '%s' has no nvvm/libdevice/libdevice.10.bc",
          given.str().c_str());
    toolkit.root = given.str();
  } else {
    const char *env[] = {std::getenv("CUDA_PATH"), std::getenv("CUDA_HOME")};
    std::vector<std::string> candidates;
    for (const char *e : env)
      if (e && *e)
        candidates.push_back(e);
    candidates.push_back("/usr/local/cuda");
    candidates.push_back("/usr/lib/cuda");
    for (const std::string &c : candidates)
      if (hasLibdevice(c)) {
        toolkit.root = c;
        break;
      }
  }
  toolkit.ptxas = findPtxas(toolkit.root);
  return toolkit;
}

namespace {

llvm::Expected<Assembled> runPtxas(llvm::StringRef ptxas, llvm::StringRef ptx,
                                   unsigned arch) {
  lowering::TempFile input, output;
  if (llvm::Error err = input.create("kernel", "ptx", "ptxas"))
    return std::move(err);
  if (llvm::Error err = output.create("kernel", "cubin", "ptxas"))
    return std::move(err);
  if (llvm::Error err = lowering::writeFile(input.path(), ptx))
    return std::move(err);
  std::string archFlag = "-arch=sm_" + std::to_string(arch);
  lowering::ToolRun run = lowering::runTool(
      {ptxas, archFlag, "-O3", "-v", input.path(), "-o", output.path()});
  const std::string &messages = run.output;
  if (run.exitCode != 0)
    return llvm::createStringError("ptxas %s failed%s%s: %s", archFlag.c_str(),
                                   run.launchError.empty() ? "" : ": ",
                                   run.launchError.c_str(), messages.c_str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> cubin =
      llvm::MemoryBuffer::getFile(output.path());
  if (!cubin)
    return llvm::createStringError(cubin.getError(), "ptxas wrote no cubin");
  Assembled out;
  out.cubin.assign((*cubin)->getBufferStart(), (*cubin)->getBufferEnd());
  // "ptxas info    : Used 40 registers, used 0 barriers, 356 bytes cmem[0]"
  // and "... 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(messages).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    // "ptxas info : Used 40 registers, ..." and, on a line of its own,
    // "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads".
    llvm::StringRef info = line.trim();
    size_t used = info.find(": Used ");
    if (used != llvm::StringRef::npos)
      info = info.substr(used + 2);
    else if (!info.contains("spill"))
      continue;
    out.resources += (out.resources.empty() ? "" : "; ") + info.str();
    llvm::SmallVector<llvm::StringRef> spill;
    llvm::Regex spills("([0-9]+) bytes spill stores");
    if (spills.match(info, &spill) && spill[1] != "0")
      out.spills = true;
  }
  return out;
}

bool writeAtomically(llvm::StringRef path, llvm::StringRef bytes) {
  llvm::SmallString<256> temp;
  if (llvm::sys::fs::createUniqueFile(path + ".%%%%%%", temp))
    return false;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec)
      return false;
    os << bytes;
  }
  return !llvm::sys::fs::rename(temp, path);
}

} // namespace

// With MLCC_PTXAS_CACHE naming a folder, what ptxas made of the same PTX
// for the same architecture is kept there and reused (the tests assemble
// the same kernels on every run; like ccache, nothing else changes).
llvm::Expected<Assembled> assemblePtx(llvm::StringRef ptxas,
                                      llvm::StringRef ptx, unsigned arch) {
  const char *cacheDir = std::getenv("MLCC_PTXAS_CACHE");
  if (!cacheDir || !*cacheDir)
    return runPtxas(ptxas, ptx, arch);
  std::string key =
      ptxas.str() + '\0' + std::to_string(arch) + '\0' + ptx.str();
  llvm::SmallString<256> base(cacheDir);
  llvm::sys::path::append(base, llvm::utohexstr(llvm::xxh3_64bits(key)));
  std::string cubinPath = (base + ".cubin").str();
  std::string reportPath = (base + ".report").str();
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath);
  auto report = llvm::MemoryBuffer::getFile(reportPath);
  if (cubin && report) {
    Assembled out;
    out.cubin.assign((*cubin)->getBufferStart(), (*cubin)->getBufferEnd());
    llvm::StringRef text = (*report)->getBuffer();
    out.spills = text.consume_front("spills\n");
    out.resources = text.str();
    return out;
  }
  llvm::Expected<Assembled> out = runPtxas(ptxas, ptx, arch);
  if (out && !llvm::sys::fs::create_directories(cacheDir)) {
    llvm::StringRef bytes(reinterpret_cast<const char *>(out->cubin.data()),
                          out->cubin.size());
    // The report last: a cubin without one is not an entry.
    if (writeAtomically(cubinPath, bytes))
      writeAtomically(reportPath,
                      (out->spills ? "spills\n" : "") + out->resources);
  }
  return out;
}

} // namespace mlcc::cuda
