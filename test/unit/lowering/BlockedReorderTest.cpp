//===- BlockedReorderTest.cpp - NCHW <-> NCHW16c reorder kernels --------===//
//
// Against the reference reorders of Conv.h: planes of fewer than 16 pixels,
// of whole chunks and with a last short chunk; channels of one partial
// block, whole blocks and a partial last one; batches. To the blocked
// layout the padding lanes must come out 0 (the destination starts NaN);
// back, the plain tensor must be the original bit for bit, and the guard
// pages catch a read or write past either buffer.
//
//===----------------------------------------------------------------------===//

#include "BlockedReorder.h"
#include "Conv.h"
#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include <catch2/catch.hpp>

#include <limits>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

void check(int64_t n, int64_t c, int64_t pixels) {
  INFO("N=" << n << " C=" << c << " pixels=" << pixels);
  BlockedReorderSpec spec;
  spec.n = n;
  spec.c = c;
  spec.pixels = pixels;
  ExecutableBuffer to(generateCode(generateBlockedReorder, spec));
  spec.toBlocked = false;
  ExecutableBuffer from(generateCode(generateBlockedReorder, spec));
  REQUIRE((to.ok() && from.ok()));

  std::vector<float> x = randomValues(n * c * pixels, 31);
  std::vector<float> want(static_cast<size_t>(blockedSize(n, c, 1, pixels)));
  reorderNCHWtoNCHW16c(x.data(), n, c, 1, pixels, want.data());
  GuardedArray<float> plain(x);
  GuardedArray<float> blocked(
      std::vector<float>(want.size(), std::numeric_limits<float>::quiet_NaN()));
  GuardedArray<float> back(std::vector<float>(x.size(), -7.0f));
  REQUIRE((plain.ok() && blocked.ok() && back.ok()));

  mlcc_pool_args args = {plain.data(), blocked.data()};
  to.function<mlcc_pool_kernel_fn>()(&args);
  std::vector<float> got = blocked.values();
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(got[i] == want[i]) && bad++ < 5)
      FAIL_CHECK("blocked[" << i << "] = " << got[i] << ", want " << want[i]);
  CHECK(bad == 0);

  args = {blocked.data(), back.data()};
  from.function<mlcc_pool_kernel_fn>()(&args);
  CHECK(back.values() == x);
}

} // namespace

TEST_CASE("blocked reorder: planes, channel tails, batches",
          "[lowering][avx512][reorder]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t pixels : {1, 5, 16, 33, 48 * 48})
    for (int64_t c : {3, 16, 40}) {
      check(1, c, pixels);
      check(2, c, pixels);
    }
}

TEST_CASE("blocked reorder: bad specs are errors",
          "[lowering][avx512][reorder]") {
  std::vector<uint8_t> code = {1};
  BlockedReorderSpec spec;
  spec.name = "reorder_x";
  spec.c = 0;
  ref::Status s = generateBlockedReorder(spec, code);
  CHECK_FALSE(s.ok());
  CHECK(code.empty());
  CHECK(s.message().find("reorder_x") != std::string::npos);
}
