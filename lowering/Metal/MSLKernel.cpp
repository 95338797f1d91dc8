//===- MSLKernel.cpp - One kernel's SPIR-V -> Metal Shading Language ------===//
//
// SPIRV-Cross's C API, one module per kernel (a module shared by several
// kernels would make each declare every other's threadgroup arrays, since
// SPIR-V 1.3 entry points do not list the Workgroup variables they use).
// Bindings are pinned: descriptor set 0, binding i is [[buffer(i)]], the
// order of the kernel's arguments (binding 0 the parameter words), so the
// runtime binds launches as it does on Vulkan.
//
//===----------------------------------------------------------------------===//

#include "MetalTarget.h"

#include "mlir/IR/Diagnostics.h"

#include <spirv_cross/spirv_cross_c.h>

using namespace mlir;

namespace mlcc::metal {
namespace {

// Metal allows 31 buffer arguments per kernel.
constexpr unsigned kMaxBufferArguments = 31;

// Owns a SPIRV-Cross context and collects its error messages.
class CrossContext {
public:
  CrossContext() {
    if (spvc_context_create(&ctx) == SPVC_SUCCESS)
      spvc_context_set_error_callback(ctx, &collect, this);
  }
  ~CrossContext() {
    if (ctx)
      spvc_context_destroy(ctx);
  }
  spvc_context get() const { return ctx; }
  const std::string &errors() const { return messages; }

private:
  static void collect(void *self, const char *message) {
    std::string &messages = static_cast<CrossContext *>(self)->messages;
    messages += (messages.empty() ? "" : "; ") + std::string(message);
  }
  spvc_context ctx = nullptr;
  std::string messages;
};

} // namespace

LogicalResult translateToMSL(Location kernel, llvm::ArrayRef<uint8_t> spirv,
                             const std::string &entryPoint,
                             unsigned numBindings, bool ios, std::string &msl) {
  if (numBindings > kMaxBufferArguments)
    return emitError(kernel)
           << "kernel " << entryPoint << " binds " << numBindings
           << " buffers; Metal allows " << kMaxBufferArguments << " per kernel";
  CrossContext cross;
  if (!cross.get())
    return emitError(kernel) << "cannot create a SPIRV-Cross context";
  auto fail = [&](const char *step) {
    return emitError(kernel) << "SPIRV-Cross cannot " << step << " kernel "
                             << entryPoint << ": " << cross.errors();
  };
  spvc_parsed_ir ir = nullptr;
  spvc_compiler compiler = nullptr;
  spvc_compiler_options options = nullptr;
  if (spvc_context_parse_spirv(
          cross.get(), reinterpret_cast<const SpvId *>(spirv.data()),
          spirv.size() / sizeof(SpvId), &ir) != SPVC_SUCCESS)
    return fail("parse");
  if (spvc_context_create_compiler(cross.get(), SPVC_BACKEND_MSL, ir,
                                   SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &compiler) != SPVC_SUCCESS ||
      spvc_compiler_create_compiler_options(compiler, &options) != SPVC_SUCCESS)
    return fail("set up a compiler for");
  spvc_compiler_options_set_uint(
      options, SPVC_COMPILER_OPTION_MSL_VERSION,
      SPVC_MAKE_MSL_VERSION(kMslMajor, kMslMinor, 0));
  spvc_compiler_options_set_uint(options, SPVC_COMPILER_OPTION_MSL_PLATFORM,
                                 ios ? SPVC_MSL_PLATFORM_IOS
                                     : SPVC_MSL_PLATFORM_MACOS);
  if (spvc_compiler_install_compiler_options(compiler, options) != SPVC_SUCCESS)
    return fail("take the options for");
  for (unsigned i = 0; i < numBindings; ++i) {
    spvc_msl_resource_binding binding;
    spvc_msl_resource_binding_init(&binding);
    binding.stage = SpvExecutionModelGLCompute;
    binding.desc_set = 0;
    binding.binding = i;
    binding.msl_buffer = i;
    if (spvc_compiler_msl_add_resource_binding(compiler, &binding) !=
        SPVC_SUCCESS)
      return fail("bind the buffers of");
  }
  const char *source = nullptr;
  if (spvc_compiler_compile(compiler, &source) != SPVC_SUCCESS)
    return fail("translate");
  // MSL reserves some names (main, and its own functions'); the runtime
  // looks the kernel up by its own name.
  const char *cleansed = spvc_compiler_get_cleansed_entry_point_name(
      compiler, entryPoint.c_str(), SpvExecutionModelGLCompute);
  if (!cleansed || entryPoint != cleansed)
    return emitError(kernel) << "SPIRV-Cross renames kernel " << entryPoint
                             << " to " << (cleansed ? cleansed : "nothing");
  msl = source;
  return success();
}

} // namespace mlcc::metal
