//===- ExecutableBuffer.h - Run generated code in tests ---------*- C++ -*-===//
//
// The compiler only writes kernel bytes; the tests map them to run them
// with ExecutableBuffer (ExecutableCode.h, also what `mlcc bench --peak`
// runs its kernels with). GuardedArray places data
// so that its last element ends right at an inaccessible page: a kernel
// that reads or writes one element too many faults instead of passing.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TEST_UNIT_LOWERING_EXECUTABLEBUFFER_H
#define MLCC_TEST_UNIT_LOWERING_EXECUTABLEBUFFER_H

#include "ExecutableCode.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace mlcc::test {

using avx512::ExecutableBuffer;
using avx512::pageSize;
using avx512::roundUpToPage;

/// `n` elements of T whose end touches a PROT_NONE page.
template <typename T> class GuardedArray {
public:
  explicit GuardedArray(size_t n) : n_(n) {
    size_t bytes = roundUpToPage(n * sizeof(T));
    size_ = bytes + pageSize();
    void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return;
    base_ = static_cast<uint8_t *>(p);
    if (mprotect(base_ + bytes, pageSize(), PROT_NONE) != 0)
      return;
    data_ = reinterpret_cast<T *>(base_ + bytes) - n;
  }
  GuardedArray(const std::vector<T> &values) : GuardedArray(values.size()) {
    if (data_ && !values.empty())
      std::memcpy(data_, values.data(), values.size() * sizeof(T));
  }
  ~GuardedArray() {
    if (base_)
      munmap(base_, size_);
  }
  GuardedArray(const GuardedArray &) = delete;
  GuardedArray &operator=(const GuardedArray &) = delete;

  bool ok() const { return data_ != nullptr; }
  T *data() { return data_; }
  std::vector<T> values() const { return std::vector<T>(data_, data_ + n_); }

private:
  uint8_t *base_ = nullptr;
  T *data_ = nullptr;
  size_t n_ = 0;
  size_t size_ = 0;
};

} // namespace mlcc::test

#endif // MLCC_TEST_UNIT_LOWERING_EXECUTABLEBUFFER_H
