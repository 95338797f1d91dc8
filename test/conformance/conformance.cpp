//===- conformance.cpp - ONNX node-test conformance runner ----------------===//
//
// Runs every test folder (model.onnx + test_data_set_*/) under the given
// roots on a target and compares with the expected outputs. Each test runs in
// a child process, so a crash or hang in one test is a failure of that test,
// not of the run.
//
// The checked-in list of expected passes makes this a regression test: an
// expected pass that fails fails the run; a newly passing test is reported
// (add it to the list with --update).
//
//===----------------------------------------------------------------------===//

#include "mlcc/Driver/CompiledModelRunner.h"
#include "mlcc/Driver/Driver.h"
#include "mlcc/Reference/Executor.h"

#include "CpuTarget.h"
#include "mlcc/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace mlcc;

namespace {

struct Options {
  std::vector<std::string> roots;
  std::string expectedFile;
  std::string exclusionsFile;
  std::string filter;
  std::string target = "ref";
  bool portableOnly = false;
  /// --vulkan-no-float64: vulkan kernels as metal's (f32 for f64); with
  /// --demoted-only, only the tests that have such kernels run (the rest
  /// are the same kernels as without the option) and the rest are skipped.
  bool vulkanNoFloat64 = false;
  bool demotedOnly = false;
  /// A fault put into every device kernel (--inject-device-fault offset:
  /// buffers bound one element off; barriers: no barrier): the runs that
  /// prove the vulkan tests can fail.
  lowering::DeviceFault deviceFault = lowering::DeviceFault::None;
  /// Compile for the target (its device code assembled where the target
  /// does that: ptxas for cuda) without running: for a GPU this machine
  /// does not have.
  bool compileOnly = false;
  /// With --compile-only: each test's device kernels in their text form
  /// (--emit device-asm) go to DIR/<test>.txt, for checks of their own.
  std::string deviceAsmDir;
  /// avx512: the --cpu objects are compiled for (the run is skipped, exit
  /// 77, on a machine without its features).
  std::string cpu;
  /// Only the tests of the expected list run (a suite of a few ops).
  bool expectedOnly = false;
  /// A test passes only when one of its kernels' symbols contains one of
  /// these comma-separated texts ("_int8": the ops ran on the int8
  /// kernels, not the portable lowering).
  std::string requireKernel;
  bool update = false;
  bool verbose = false;
  int timeoutSeconds = 120;
  Tolerance tol{1e-3, 1e-5};
};

bool isDir(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.')
        out.push_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Lines of "name" or "pattern  reason"; '#' starts a comment.
std::vector<std::pair<std::string, std::string>>
readList(const std::string &path) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream is(line);
    std::string name, reason;
    if (!(is >> name))
      continue;
    std::getline(is, reason);
    out.emplace_back(name, reason);
  }
  return out;
}

/// Glob with a trailing '*' only (test_sequence_*); exact otherwise.
bool matches(const std::string &pattern, const std::string &name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.compare(0, pattern.size() - 1, pattern, 0,
                        pattern.size() - 1) == 0;
  return pattern == name;
}

/// runTest's answer for a test that --demoted-only leaves out.
const char kSkipped[] = "skipped";

/// Whether a kernel symbol of `object` contains one of the comma-separated
/// texts of `names`.
bool hasKernel(const lowering::CompiledModel &object,
               const std::string &names) {
  std::istringstream list(names);
  std::string name;
  while (std::getline(list, name, ','))
    for (const std::string &k : object.kernelSymbols)
      if (!name.empty() && k.find(name) != std::string::npos)
        return true;
  return false;
}

/// Runs one test in this process. Returns "" on pass, kSkipped, else the
/// reason.
std::string runTest(const std::string &dir, const std::string &name,
                    const Options &opts) {
  mlir::MLIRContext ctx;
  std::vector<std::string> errors;
  auto module = loadModel(ctx, dir + "/model.onnx", ImportOptions(), errors);
  if (!module)
    return "import: " + (errors.empty() ? std::string("failed") : errors[0]);
  mlir::PassManager pm(&ctx);
  buildSimplifyPipeline(pm, PipelineOptions());
  if (failed(runPasses(*module, pm, errors)))
    return "pipeline: " + (errors.empty() ? std::string("failed") : errors[0]);
  mlir::func::FuncOp func = mainFunction(*module);
  ref::Executor executor(func);
  std::unique_ptr<CompiledModelRunner> compiled;
  if (opts.target != "ref") {
    lowering::CompileModelOptions options;
    options.name = "conformance";
    options.targetKernels = !opts.portableOnly;
    options.deviceFault = opts.deviceFault;
    options.target.vulkanNoFloat64 = opts.vulkanNoFloat64;
    options.target.cpu = opts.cpu;
    if (opts.compileOnly) {
      lowering::CompiledModel object;
      options.keepDeviceAssembly = !opts.deviceAsmDir.empty();
      ref::Status s = compileForTarget(*module, opts.target, options, object);
      if (s.failed())
        return "compile: " + s.message();
      if (options.keepDeviceAssembly) {
        std::ofstream out(opts.deviceAsmDir + "/" + name + ".txt");
        out << object.deviceAssembly;
        if (!out)
          return "cannot write the kernels to " + opts.deviceAsmDir;
      }
      return "";
    }
    lowering::CompiledModel object;
    ref::Status s = compileForTarget(*module, opts.target, options, object);
    if (s.failed())
      return "compile: " + s.message();
    if (opts.demotedOnly && object.demotedKernels == 0)
      return kSkipped;
    if (!opts.requireKernel.empty() && !hasKernel(object, opts.requireKernel))
      return "no kernel named *" + opts.requireKernel + "* (" +
             std::to_string(object.kernelSymbols.size()) + " kernels)";
    s = CompiledModelRunner::load(object, nullptr, compiled);
    if (s.failed())
      return "load: " + s.message();
  }
  int sets = 0;
  for (const std::string &entry : listDir(dir)) {
    if (entry.rfind("test_data_set_", 0) != 0)
      continue;
    std::string data = dir + "/" + entry;
    std::vector<ref::Tensor> inputs, outputs, expected;
    ref::Status s = readInputs(func, data, inputs);
    if (s.ok())
      s = readExpectedOutputs(func, data, expected);
    if (s.failed())
      return "data: " + s.message();
    s = compiled ? compiled->run(inputs, outputs)
                 : executor.run(inputs, outputs);
    if (s.failed())
      return "run: " + s.message();
    for (size_t i = 0; i < outputs.size(); ++i) {
      Comparison c = compareTensors(outputs[i], expected[i], opts.tol);
      if (!c.ok) {
        std::ostringstream os;
        os << entry << " output " << i << ": ";
        if (!c.problem.empty())
          os << c.problem;
        else
          os << c.mismatches << " elements differ, max abs error "
             << c.maxAbsError << ", max rel error " << c.maxRelError;
        return os.str();
      }
    }
    ++sets;
  }
  return sets ? "" : "no test_data_set_* folders";
}

/// Runs one test in a child process with a time limit.
std::string runIsolated(const std::string &dir, const std::string &name,
                        const Options &opts) {
  int fds[2];
  if (pipe(fds) != 0)
    return "cannot create a pipe";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(opts.timeoutSeconds);
    std::string r = runTest(dir, name, opts);
    if (write(fds[1], r.data(), r.size()) < 0)
      _exit(3);
    _exit(r.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string reason;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    reason.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return std::string("crashed: ") + strsignal(WTERMSIG(status));
  if (WEXITSTATUS(status) == 0)
    return "";
  return reason.empty() ? "failed" : reason;
}

int usage() {
  std::fprintf(stderr,
               "usage: mlcc-conformance --expected FILE --exclusions FILE "
               "[--filter PREFIX] [--target ref|avx512|vulkan|cuda|metal] "
               "[--portable-only] [--vulkan-no-float64 [--demoted-only]] "
               "[--compile-only [--device-asm-dir DIR]] "
               "[--inject-device-fault offset|barriers] [--cpu NAME] "
               "[--expected-only] [--require-kernel TEXT[,TEXT...]] "
               "[--update] [-v] "
               "ROOT...\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--expected" && i + 1 < argc)
      opts.expectedFile = argv[++i];
    else if (a == "--exclusions" && i + 1 < argc)
      opts.exclusionsFile = argv[++i];
    else if (a == "--filter" && i + 1 < argc)
      opts.filter = argv[++i];
    else if (a == "--target" && i + 1 < argc)
      opts.target = argv[++i];
    else if (a == "--compile-only")
      opts.compileOnly = true;
    else if (a == "--device-asm-dir" && i + 1 < argc)
      opts.deviceAsmDir = argv[++i];
    else if (a == "--portable-only")
      opts.portableOnly = true;
    else if (a == "--vulkan-no-float64")
      opts.vulkanNoFloat64 = true;
    else if (a == "--demoted-only")
      opts.demotedOnly = true;
    else if (a == "--inject-device-fault" && i + 1 < argc) {
      std::string fault = argv[++i];
      if (fault == "offset")
        opts.deviceFault = lowering::DeviceFault::ElementOffset;
      else if (fault == "barriers")
        opts.deviceFault = lowering::DeviceFault::NoBarriers;
      else
        return usage();
    } else if (a == "--cpu" && i + 1 < argc)
      opts.cpu = argv[++i];
    else if (a == "--expected-only")
      opts.expectedOnly = true;
    else if (a == "--require-kernel" && i + 1 < argc)
      opts.requireKernel = argv[++i];
    else if (a == "--update")
      opts.update = true;
    else if (a == "-v")
      opts.verbose = true;
    else if (!a.empty() && a[0] == '-')
      return usage();
    else
      opts.roots.push_back(a);
  }
  if (opts.roots.empty() || opts.expectedFile.empty() ||
      opts.exclusionsFile.empty() ||
      (!opts.deviceAsmDir.empty() && !opts.compileOnly))
    return usage();

  if (!opts.cpu.empty()) {
    llvm::Expected<lowering::CpuTarget> cpu = lowering::resolveCpu(opts.cpu);
    if (!cpu) {
      std::fprintf(stderr, "mlcc-conformance: %s\n",
                   llvm::toString(cpu.takeError()).c_str());
      return 2;
    }
    if (mlcc_cpu_require(cpu->features, opts.cpu.c_str()) != MLCC_OK) {
      std::printf("conformance: skipped: %s\n", mlcc_last_error_message());
      return 77;
    }
  }
  auto exclusions = readList(opts.exclusionsFile);
  std::set<std::string> expected;
  for (auto &[name, _] : readList(opts.expectedFile))
    expected.insert(name);

  int passed = 0, failed = 0, excluded = 0, skipped = 0;
  std::vector<std::string> regressions, newPasses, passing;
  for (const std::string &root : opts.roots) {
    for (const std::string &name : listDir(root)) {
      std::string dir = root + "/" + name;
      if (!isDir(dir) || (!opts.filter.empty() && name.rfind(opts.filter, 0)) ||
          (opts.expectedOnly && !expected.count(name)))
        continue;
      bool skip = false;
      for (auto &[pattern, reason] : exclusions)
        skip |= matches(pattern, name);
      if (skip) {
        ++excluded;
        continue;
      }
      std::string reason = runIsolated(dir, name, opts);
      if (reason == kSkipped) {
        ++skipped;
        continue;
      }
      bool ok = reason.empty();
      ok ? ++passed : ++failed;
      if (ok)
        passing.push_back(name);
      if (ok && !expected.count(name))
        newPasses.push_back(name);
      if (!ok && expected.count(name))
        regressions.push_back(name + ": " + reason);
      if (opts.verbose || (!ok && expected.count(name)))
        std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(),
                    ok ? "" : ": ", reason.c_str());
    }
  }
  if (opts.expectedOnly)
    for (const std::string &name : expected)
      if (!std::count(passing.begin(), passing.end(), name) &&
          !std::any_of(regressions.begin(), regressions.end(),
                       [&](const std::string &r) {
                         return r.rfind(name + ": ", 0) == 0;
                       }))
        regressions.push_back(name + ": not found under the roots");
  std::sort(passing.begin(), passing.end());
  if (opts.update) {
    std::ofstream out(opts.expectedFile);
    out << "# Tests expected to pass (mlcc-conformance --update writes this)\n";
    for (const std::string &n : passing)
      out << n << "\n";
  }
  for (const std::string &n : newPasses)
    std::printf("NEW PASS %s (add it to %s)\n", n.c_str(),
                opts.expectedFile.c_str());
  for (const std::string &r : regressions)
    std::printf("REGRESSION %s\n", r.c_str());
  int total = passed + failed;
  std::printf("conformance: %d of %d inference tests pass (%.1f%%), %d "
              "excluded, %zu regressions, %zu new passes\n",
              passed, total, total ? 100.0 * passed / total : 0.0, excluded,
              regressions.size(), newPasses.size());
  if (opts.demotedOnly)
    std::printf("conformance: %d tests skipped: no kernel of theirs computes "
                "in f64\n",
                skipped);
  return regressions.empty() ? 0 : 1;
}
